package dev.kinference.cache;

import static dev.kinference.cache.Fixtures.BLOCK;
import static dev.kinference.cache.Fixtures.keys;
import static dev.kinference.cache.Fixtures.match;
import static dev.kinference.cache.Fixtures.member;
import static dev.kinference.cache.Fixtures.tokens;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.request.PromptRetention;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ApproximateCacheIndexTest {

  private final AtomicLong clock = new AtomicLong(1_000_000_000L);

  private ApproximateCacheIndex index(int capacity, Duration ttl) {
    return ApproximateCacheIndex.builder().defaultCapacityBlocks(capacity).ttl(ttl).ticker(clock::get).build();
  }

  /** The index's only endpoint, after {@code prompt} was routed to it. */
  private static EndpointState soleEndpointRouted(ApproximateCacheIndex index, int[] prompt) {
    EndpointState e = Fixtures.soleEndpoint(index);
    index.onRouted(e, keys(prompt));
    return e;
  }

  @Test
  void remembersWhatWasRoutedWhere() {
    ApproximateCacheIndex index = index(1000, Duration.ofMinutes(2));
    Fleet fleet = Fixtures.fleet(index, 2);
    int[] prompt = tokens(1, 20 * BLOCK);
    index.onRouted(member(fleet, 0), keys(prompt));
    assertThat(match(index, prompt, member(fleet, 0))).isEqualTo(20);
    assertThat(match(index, prompt, member(fleet, 1))).isZero();
    assertThat(index.blockCount(member(fleet, 0))).isEqualTo(20);
  }

  @Test
  void capacityEvictsTheLeastRecentlyUsedBlocksAndKeepsPrefixesOverTails() {
    ApproximateCacheIndex index = index(30, Duration.ofMinutes(2));
    EndpointState e = Fixtures.soleEndpoint(index);
    int[] old = tokens(2, 20 * BLOCK);
    int[] recent = tokens(3, 20 * BLOCK);
    index.onRouted(e, keys(old));
    clock.addAndGet(1_000);
    index.onRouted(e, keys(recent));
    assertThat(index.blockCount(e)).isEqualTo(30);
    assertThat(match(index, recent, e)).isEqualTo(20);
    // the older prompt lost its tail first, so its first 10 blocks still match as a prefix
    assertThat(match(index, old, e)).isEqualTo(10);
  }

  @Test
  void touchingAPrefixProtectsItFromEviction() {
    ApproximateCacheIndex index = index(30, Duration.ofMinutes(2));
    EndpointState e = Fixtures.soleEndpoint(index);
    int[] a = tokens(4, 15 * BLOCK);
    int[] b = tokens(5, 15 * BLOCK);
    int[] c = tokens(6, 15 * BLOCK);
    index.onRouted(e, keys(a));
    index.onRouted(e, keys(b));
    index.onRouted(e, keys(a)); // a is now the most recent
    index.onRouted(e, keys(c)); // evicts b, the least recent
    assertThat(match(index, a, e)).isEqualTo(15);
    assertThat(match(index, b, e)).isZero();
    assertThat(match(index, c, e)).isEqualTo(15);
  }

  @Test
  void capacityFollowsTheServersNumGpuBlocks() {
    ApproximateCacheIndex index = index(1000, Duration.ofMinutes(2));
    EndpointState e = Fixtures.soleEndpoint(index);
    e.updateMetrics(new EndpointMetrics(0, 0, 0.1, 16, 12, Double.NaN, Double.NaN, Set.of(), Set.of(), -1,
        clock.get()));
    index.onRouted(e, keys(tokens(7, 40 * BLOCK)));
    assertThat(index.blockCount(e)).isEqualTo(12);
  }

  @Test
  void blocksUnusedForLongerThanTheTtlAreForgotten() {
    ApproximateCacheIndex index = index(1000, Duration.ofSeconds(10));
    int[] prompt = tokens(8, 8 * BLOCK);
    EndpointState e = soleEndpointRouted(index, prompt);
    clock.addAndGet(Duration.ofSeconds(9).toNanos());
    assertThat(match(index, prompt, e)).isEqualTo(8);
    clock.addAndGet(Duration.ofSeconds(2).toNanos());
    assertThat(match(index, prompt, e)).as("expired after 11 s unused").isZero();
    assertThat(index.blockCount(e)).isZero();
    assertThat(index.entryCount()).isZero();
  }

  @Test
  void useRenewsTheTtl() {
    ApproximateCacheIndex index = index(1000, Duration.ofSeconds(10));
    int[] prompt = tokens(9, 8 * BLOCK);
    EndpointState e = soleEndpointRouted(index, prompt);
    clock.addAndGet(Duration.ofSeconds(8).toNanos());
    index.onRouted(e, keys(prompt));
    clock.addAndGet(Duration.ofSeconds(8).toNanos());
    assertThat(match(index, prompt, e)).isEqualTo(8);
  }

  @Test
  void aClientsRetentionKeepsTheCoveredPrefixPastTheTtl() {
    ApproximateCacheIndex index = index(1000, Duration.ofSeconds(10));
    int[] prompt = tokens(21, 8 * BLOCK);
    EndpointState e = Fixtures.soleEndpoint(index);
    index.onRouted(e, keys(prompt), new PromptRetention(Duration.ofHours(1), 0.5));
    clock.addAndGet(Duration.ofSeconds(11).toNanos());
    assertThat(match(index, prompt, e)).as("the retained half outlives the 10 s ttl").isEqualTo(4);
    clock.addAndGet(Duration.ofMinutes(59).toNanos());
    assertThat(match(index, prompt, e)).as("still within the hour").isEqualTo(4);
    clock.addAndGet(Duration.ofMinutes(1).toNanos());
    assertThat(match(index, prompt, e)).as("forgotten once the hour and one ttl are over").isZero();
    assertThat(index.blockCount(e)).isZero();
  }

  @Test
  void retainedBlocksDoNotHoldBackTheExpiryOfOthers() {
    ApproximateCacheIndex index = index(1000, Duration.ofSeconds(10));
    int[] retained = tokens(22, 8 * BLOCK);
    int[] plain = tokens(23, 8 * BLOCK);
    EndpointState e = Fixtures.soleEndpoint(index);
    index.onRouted(e, keys(retained), new PromptRetention(Duration.ofHours(1), 1.0));
    clock.addAndGet(Duration.ofSeconds(1).toNanos());
    index.onRouted(e, keys(plain));
    clock.addAndGet(Duration.ofSeconds(12).toNanos());
    assertThat(match(index, plain, e)).isZero();
    assertThat(match(index, retained, e)).isEqualTo(8);
    assertThat(index.blockCount(e)).isEqualTo(8);
  }

  @Test
  void aLaterRequestWithoutTheHintDoesNotShortenTheRetention() {
    ApproximateCacheIndex index = index(1000, Duration.ofSeconds(10));
    int[] prompt = tokens(24, 8 * BLOCK);
    EndpointState e = Fixtures.soleEndpoint(index);
    index.onRouted(e, keys(prompt), new PromptRetention(Duration.ofHours(1), 1.0));
    index.onRouted(e, keys(prompt), null);
    clock.addAndGet(Duration.ofMinutes(30).toNanos());
    assertThat(match(index, prompt, e)).isEqualTo(8);
  }

  @Test
  void aRetentionShorterThanTheTtlChangesNothing() {
    ApproximateCacheIndex index = index(1000, Duration.ofSeconds(10));
    int[] prompt = tokens(25, 8 * BLOCK);
    EndpointState e = Fixtures.soleEndpoint(index);
    index.onRouted(e, keys(prompt), new PromptRetention(Duration.ofSeconds(5), 1.0));
    clock.addAndGet(Duration.ofSeconds(11).toNanos());
    assertThat(match(index, prompt, e)).isZero();
  }

  @Test
  void capacityStillEvictsRetainedBlocks() {
    ApproximateCacheIndex index = index(8, Duration.ofSeconds(10));
    int[] retained = tokens(26, 8 * BLOCK);
    int[] next = tokens(27, 8 * BLOCK);
    EndpointState e = Fixtures.soleEndpoint(index);
    index.onRouted(e, keys(retained), new PromptRetention(Duration.ofHours(1), 1.0));
    index.onRouted(e, keys(next));
    assertThat(match(index, retained, e)).as("vLLM evicts by recency alone; so does the index when full").isZero();
    assertThat(match(index, next, e)).isEqualTo(8);
  }

  @Test
  void blocksOfAnEndpointIdleForMonthsAreForgottenThoughTheirTicksWrapped() {
    ApproximateCacheIndex index = index(1000, Duration.ofSeconds(10));
    int[] prompt = tokens(11, 8 * BLOCK);
    EndpointState e = soleEndpointRouted(index, prompt);
    // 2^32 ticks of 2^20 ns later the 32-bit use times read the same again
    clock.addAndGet(1L << 52);
    assertThat(match(index, prompt, e)).isZero();
    assertThat(index.blockCount(e)).isZero();
  }

  @Test
  void aServerRestartClearsItsBlocks() {
    ApproximateCacheIndex index = index(1000, Duration.ofMinutes(2));
    int[] prompt = tokens(10, 8 * BLOCK);
    EndpointState e = soleEndpointRouted(index, prompt);
    index.onEvent(e, new KvEvent.AllBlocksCleared());
    assertThat(match(index, prompt, e)).isZero();
  }

  @Test
  void builderValidatesSettings() {
    assertThatThrownBy(() -> ApproximateCacheIndex.builder().ttl(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ApproximateCacheIndex.builder().ttl(Duration.ofDays(8)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 7 days");
    assertThatThrownBy(() -> ApproximateCacheIndex.builder().defaultCapacityBlocks(0))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
