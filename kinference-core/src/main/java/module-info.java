/**
 * Kinference core: the request model, prefix keys, cache indexes, endpoint state, and the {@link
 * dev.kinference.routing.Router}. Plugins are found with {@link java.util.ServiceLoader}; see {@link
 * dev.kinference.plugin}.
 */
module dev.kinference.core {
  requires transitive com.fasterxml.jackson.databind;
  requires static transitive org.jspecify;
  requires org.slf4j;
  requires com.github.benmanes.caffeine;

  exports dev.kinference.request;
  exports dev.kinference.prompt;
  exports dev.kinference.cache;
  exports dev.kinference.endpoint;
  exports dev.kinference.routing;
  exports dev.kinference.policy;
  exports dev.kinference.plugin;

  uses dev.kinference.routing.Scorer;
  uses dev.kinference.routing.Filter;
  uses dev.kinference.routing.Picker;
  uses dev.kinference.cache.CacheIndex;
  uses dev.kinference.prompt.Tokenizer;
  uses dev.kinference.endpoint.EndpointSource;
  uses dev.kinference.policy.PolicyEngine;

  provides dev.kinference.routing.Scorer with
      dev.kinference.routing.PredictedTtftScorer,
      dev.kinference.routing.PrefixOverlapScorer,
      dev.kinference.routing.PrefixUnderSaturationScorer,
      dev.kinference.routing.PrefixHomeScorer,
      dev.kinference.routing.QueueDepthScorer,
      dev.kinference.routing.KvUtilizationScorer,
      dev.kinference.routing.InFlightScorer,
      dev.kinference.routing.NewPrefixHeadroomScorer,
      dev.kinference.routing.SessionAffinityScorer,
      dev.kinference.routing.PrefixRendezvousScorer,
      dev.kinference.routing.SessionResidencyScorer,
      dev.kinference.routing.TtftOverflowScorer;
  provides dev.kinference.routing.Filter with
      dev.kinference.routing.HealthyFilter,
      dev.kinference.routing.FreshMetricsFilter;
  provides dev.kinference.routing.Picker with
      dev.kinference.routing.MaxScorePicker,
      dev.kinference.routing.SoftmaxPicker;
  provides dev.kinference.cache.CacheIndex with
      dev.kinference.cache.ApproximateCacheIndex,
      dev.kinference.cache.PreciseCacheIndex;
  provides dev.kinference.prompt.Tokenizer with
      dev.kinference.prompt.ApproximateTokenizer;
}
