package dev.kinference.routing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.request.InferenceRequest;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The bug: {@code kinference bench --repeat} ran out of heap because every router a thread had routed with stayed
 * reachable from that thread (a per-router thread-local scratch whose scorers' clock led back to the router), and
 * with it each run's whole simulated fleet. A router must be collectable once its owner drops it, whatever its clock
 * refers to.
 */
class RouterRetentionTest {

  private static final String MODEL = "qwen3-8b";

  private static List<Endpoint> endpoints(int n) {
    List<Endpoint> list = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      list.add(Endpoint.of("e" + i, "http://127.0.0.1:" + (8000 + i), MODEL));
    }
    return list;
  }

  /**
   * A router whose clock refers back to it, as the simulator's does (the clock is the run, which holds the router),
   * after routing on this thread; only a weak reference to it is returned.
   */
  private static WeakReference<Router> routeOnceWithAClockThatReachesTheRouter() {
    AtomicReference<Router> owner = new AtomicReference<>();
    Router router = Router.builder().endpoints(endpoints(3)).random(new SplittableRandom(7))
        .ticker(() -> owner.get() == null ? 0 : 1_000_000_000L).build();
    owner.set(router);
    router.route(InferenceRequest.builder(MODEL).system("you are terse").user("hello").build())
        .reportFinished(new Usage(10, 0, 5));
    return new WeakReference<>(router);
  }

  private static boolean collectedAfterFullGcs(WeakReference<?> probe) {
    // a full collection clears every weakly reachable referent; a few tries cover a collector that defers the hint
    for (int i = 0; i < 10 && probe.get() != null; i++) {
      System.gc();
    }
    return probe.get() == null;
  }

  @Test
  void aDroppedRouterIsNotKeptAliveByTheThreadItRoutedOn() {
    List<WeakReference<Router>> probes = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      probes.add(routeOnceWithAClockThatReachesTheRouter());
    }

    assertThat(probes).allSatisfy(p -> assertThat(collectedAfterFullGcs(p)).as("router collected").isTrue());
  }

  @Test
  void aDecisionMadeWithinAnotherOnTheSameThreadGetsItsOwnWorkingState() {
    Router inner = Router.builder().endpoints(endpoints(2)).random(new SplittableRandom(3)).build();
    List<String> innerChoices = new ArrayList<>();
    Scorer routesWhileScoring = new Scorer() {
      @Override
      public String name() {
        return "routes-while-scoring";
      }

      @Override
      public void score(RoutingContext context, double[] scores) {
        innerChoices.add(inner.route(InferenceRequest.builder(MODEL).user("inner").build()).endpoint().id());
        for (int i = 0; i < context.candidateCount(); i++) {
          scores[i] = context.candidate(i).id().equals("e2") ? 1 : 0;
        }
      }
    };
    Router outer = Router.builder().endpoints(endpoints(3)).random(new SplittableRandom(5))
        .scorer(routesWhileScoring, 1).build();

    InferenceRequest request = InferenceRequest.builder(MODEL).user("outer").build();
    RoutingDecision d = outer.route(request);

    assertThat(d.endpoint().id()).isEqualTo("e2");
    assertThat(d.request()).isSameAs(request);
    assertThat(innerChoices).hasSize(1).allSatisfy(id -> assertThat(id).isIn("e0", "e1"));
  }
}
