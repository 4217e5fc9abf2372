package dev.kinference.testkit;

import dev.kinference.cache.ApproximateCacheIndex;
import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.HybridCacheIndex;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointSource;
import dev.kinference.endpoint.StaticEndpointSource;
import dev.kinference.routing.InFlightScorer;
import dev.kinference.routing.KvUtilizationScorer;
import dev.kinference.routing.NewPrefixHeadroomScorer;
import dev.kinference.routing.PredictedTtftScorer;
import dev.kinference.routing.PrefixOverlapScorer;
import dev.kinference.routing.PrefixHomeScorer;
import dev.kinference.routing.PrefixUnderSaturationScorer;
import dev.kinference.routing.QueueDepthScorer;
import dev.kinference.routing.Scorer;
import dev.kinference.routing.SessionAffinityScorer;
import dev.kinference.routing.SessionResidencyScorer;
import dev.kinference.routing.TtftOverflowScorer;
import org.junit.jupiter.api.Nested;

/** Every built-in plugin passes the compatibility kit. */
class BuiltInsPassTheKitTest {

  @Nested
  class PredictedTtft extends ScorerContract {
    @Override
    protected Scorer createScorer() {
      return new PredictedTtftScorer();
    }
  }

  @Nested
  class TtftOverflow extends ScorerContract {
    @Override
    protected Scorer createScorer() {
      return new TtftOverflowScorer();
    }
  }

  @Nested
  class PrefixOverlap extends ScorerContract {
    @Override
    protected Scorer createScorer() {
      return new PrefixOverlapScorer();
    }
  }

  @Nested
  class PrefixHome extends ScorerContract {
    @Override
    protected Scorer createScorer() {
      return new PrefixHomeScorer();
    }
  }

  @Nested
  class NewPrefixHeadroom extends ScorerContract {
    @Override
    protected Scorer createScorer() {
      return new NewPrefixHeadroomScorer();
    }
  }

  @Nested
  class PrefixUnderSaturation extends ScorerContract {
    @Override
    protected Scorer createScorer() {
      return new PrefixUnderSaturationScorer();
    }
  }

  @Nested
  class QueueDepth extends ScorerContract {
    @Override
    protected Scorer createScorer() {
      return new QueueDepthScorer();
    }
  }

  @Nested
  class QueueDepthTrustingTheScrape extends ScorerContract {
    @Override
    protected Scorer createScorer() {
      return new QueueDepthScorer(0.25);
    }
  }

  @Nested
  class KvUtilization extends ScorerContract {
    @Override
    protected Scorer createScorer() {
      return new KvUtilizationScorer();
    }
  }

  @Nested
  class KvHeadroomAboveAKnee extends ScorerContract {
    @Override
    protected Scorer createScorer() {
      return new KvUtilizationScorer(0.5);
    }
  }

  @Nested
  class InFlight extends ScorerContract {
    @Override
    protected Scorer createScorer() {
      return new InFlightScorer();
    }
  }

  @Nested
  class SessionAffinity extends ScorerContract {
    @Override
    protected Scorer createScorer() {
      return new SessionAffinityScorer();
    }
  }

  @Nested
  class SessionResidency extends ScorerContract {
    @Override
    protected Scorer createScorer() {
      return new SessionResidencyScorer();
    }
  }

  @Nested
  class Precise extends CacheIndexContract {
    @Override
    protected CacheIndex createIndex() {
      return new PreciseCacheIndex();
    }
  }

  @Nested
  class Hybrid extends CacheIndexContract {
    @Override
    protected CacheIndex createIndex() {
      return HybridCacheIndex.wrap(new PreciseCacheIndex());
    }
  }

  @Nested
  class Approximate extends CacheIndexContract {
    @Override
    protected CacheIndex createIndex() {
      return new ApproximateCacheIndex();
    }
  }

  @Nested
  class Static extends EndpointSourceContract {
    @Override
    protected EndpointSource createSource() {
      return StaticEndpointSource.of(Endpoint.of("a", "http://127.0.0.1:8000", "m"),
          Endpoint.of("b", "http://127.0.0.1:8001", "m"));
    }
  }
}
