package dev.kinference.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.request.InferenceRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class PrefixRendezvousScorerTest {

  private static final long NOW = 10_000_000_000L;
  private static final int REPEAT = 400;

  /** One replica of several behind a Service: its own fleet state and approximate index. */
  private static Router replica(int replicas, long seed) {
    List<Endpoint> endpoints = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      endpoints.add(Endpoint.of("vllm-" + i, "http://127.0.0.1:" + (8000 + i), "m"));
    }
    Router r = Router.builder().ticker(() -> NOW).random(new SplittableRandom(seed)).endpoints(endpoints)
        .routerReplicas(replicas).build();
    for (var e : r.fleet().endpoints()) {
      e.updateMetrics(EndpointMetrics.of(0, 0, 0.1, NOW));
    }
    return r;
  }

  private static InferenceRequest turn(String session, int turn) {
    return InferenceRequest.builder("m").system("you help with code").user("turn " + turn + " of " + session)
        .sessionId(session).build();
  }

  @Test
  void replicasThatNeverSawEachOthersDecisionsSendAConversationToTheSameServer() {
    Router[] replicas = {replica(3, 1), replica(3, 2), replica(3, 3)};
    for (int s = 0; s < 20; s++) {
      String session = "conversation-" + s;
      String first = replicas[0].route(turn(session, 0)).endpoint().id();
      for (int k = 1; k < replicas.length; k++) {
        assertThat(replicas[k].route(turn(session, k)).endpoint().id()).as("%s on replica %d", session, k)
            .isEqualTo(first);
      }
    }
  }

  @Test
  void aLongPromptCachedNowhereGoesToItsFirstBlocksHomeOnEveryReplica() {
    PrefixRendezvousScorer scorer = new PrefixRendezvousScorer(100);
    assertThat(scorer.parameters().asMap()).containsEntry("minColdPromptTokens", 100L);
    assertThat(new PrefixRendezvousScorer().parameters().asMap()).containsEntry("minColdPromptTokens", 4096L);
    Router[] replicas = {replica(3, 1), replica(3, 2), replica(3, 3)};
    for (int g = 0; g < 5; g++) {
      // about 5,600 tokens: above the default 4,096
      String shared = ("group " + g + ": a long shared system prompt for one group of requests. ").repeat(REPEAT);
      String home = replicas[0].route(InferenceRequest.builder("m").system(shared).user("q0").build()).endpoint()
          .id();
      for (int k = 1; k < replicas.length; k++) {
        assertThat(replicas[k].route(InferenceRequest.builder("m").system(shared).user("q" + k).build()).endpoint()
            .id()).as("group %d on replica %d", g, k).isEqualTo(home);
      }
    }
  }

  @Test
  void conversationsSpreadOverTheServers() {
    Router r = replica(3, 1);
    java.util.Set<String> used = new java.util.HashSet<>();
    for (int s = 0; s < 60; s++) {
      used.add(r.preview(turn("c" + s, 0)).endpoint().id());
    }
    assertThat(used).hasSizeGreaterThanOrEqualTo(5);
  }

  @Test
  void theDefaultProfileAddsItOnlyForApproximateReplicas() {
    assertThat(RoutingProfile.defaults(false, 3).types()).contains("prefix-rendezvous");
    assertThat(RoutingProfile.defaults(false, 1).types()).doesNotContain("prefix-rendezvous");
    assertThat(RoutingProfile.defaults(true, 3).types()).doesNotContain("prefix-rendezvous");
    assertThat(replica(3, 1).profile().types()).contains("prefix-rendezvous");
    assertThat(Router.builder().cacheIndex(new PreciseCacheIndex()).routerReplicas(3).build().profile().types())
        .doesNotContain("prefix-rendezvous");
    assertThatThrownBy(() -> Router.builder().routerReplicas(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RoutingProfile.defaults(false, 0)).isInstanceOf(IllegalArgumentException.class);
  }
}
