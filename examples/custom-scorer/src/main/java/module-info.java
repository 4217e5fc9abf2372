/** Example: a scorer in its own jar, provided to the router through ServiceLoader. */
module dev.kinference.examples.customscorer {
  requires dev.kinference.core;

  provides dev.kinference.routing.Scorer with dev.kinference.examples.customscorer.ZoneAffinityScorer;
}
