package dev.kinference.endpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class EndpointStateTest {

  private final EndpointState state = EndpointState.detached(Endpoint.of("e0", "http://127.0.0.1:9000", "m"), 0);

  @Test
  void kvUsageIsTheScrapedShareClampedAndZeroWhenUnknown() {
    assertThat(state.kvUsage()).isZero();
    state.updateMetrics(EndpointMetrics.of(0, 0, 0.4, 1));
    assertThat(state.kvUsage()).isEqualTo(0.4);
    state.updateMetrics(EndpointMetrics.of(0, 0, 1.3, 2));
    assertThat(state.kvUsage()).isEqualTo(1.0);
    state.updateMetrics(EndpointMetrics.of(0, 0, -0.2, 3));
    assertThat(state.kvUsage()).isZero();
    state.updateMetrics(EndpointMetrics.of(0, 0, Double.NaN, 4));
    assertThat(state.kvUsage()).isZero();
  }

  @Test
  void theQueueLengthCountsEverySendSinceTheScrapeInFullAndTheWeightedOneAPart() {
    state.onDispatched(100);
    assertThat(state.estimatedWaiting()).isEqualTo(1);
    assertThat(state.estimatedWaiting(0.25)).isEqualTo(0.25);

    state.updateMetrics(EndpointMetrics.of(3, 1, 0.2, 1));
    long generation = state.onDispatched(100);
    state.onDispatched(100);
    assertThat(state.estimatedWaiting()).isEqualTo(5);
    assertThat(state.estimatedWaiting(0.25)).isEqualTo(3.5);

    state.onFirstToken(100, generation);
    assertThat(state.estimatedWaiting()).isEqualTo(4);
    assertThat(state.estimatedWaiting(1)).isEqualTo(4.0);
  }

  @Test
  void whatOtherRouterReplicasSharedOfTheirPendingPrefillCountsBesideTheOwnAccount() {
    state.onDispatched(1000);
    state.updatePeerPendingPrefillTokens(3000);
    assertThat(state.estimatedPendingPrefillTokens()).isEqualTo(4000);

    // the scraped queue (one request of about 1,000 tokens) holds no request in its prefill: the shared account wins
    state.updateMetrics(EndpointMetrics.of(1, 2, 0.2, 1));
    assertThat(state.estimatedPendingPrefillTokens()).isEqualTo(4000);

    state.updatePeerPendingPrefillTokens(0);
    assertThat(state.estimatedPendingPrefillTokens()).isEqualTo(1000);
  }

  @Test
  void aNegativePeerAccountIsRejectedAndTheLastOneKept() {
    state.updatePeerPendingPrefillTokens(500);
    assertThatThrownBy(() -> state.updatePeerPendingPrefillTokens(-1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not be negative: -1");
    assertThat(state.peerPendingPrefillTokens()).isEqualTo(500);
    assertThat(state.estimatedPendingPrefillTokens()).isEqualTo(500);
  }
}
