package dev.kinference.endpoint;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.prompt.PrefixKeys;
import org.junit.jupiter.api.Test;

class PromptsAwaitingFirstTokenTest {

  /** Blocks of 2,048 tokens: two make the shortest prefix credited. */
  private static PrefixKeys keys(long... keys) {
    return keysOfSize(2048, keys);
  }

  private static PrefixKeys keysOfSize(int blockSize, long... keys) {
    return PrefixKeys.ofKeys(keys, blockSize, keys.length * blockSize);
  }

  @Test
  void findsTheLongestLeadingRunAnyHeldPromptShares() {
    PromptsAwaitingFirstToken held = new PromptsAwaitingFirstToken();
    Object first = new Object();
    Object second = new Object();
    held.add(first, keys(1, 2, 3, 4));
    held.add(second, keys(1, 2, 9));

    assertThat(held.longestSharedPrefix(keys(1, 2, 3, 7, 8))).isEqualTo(3);
    assertThat(held.longestSharedPrefix(keys(1, 2, 3, 4, 5, 6))).as("longer than any held").isEqualTo(4);
    assertThat(held.longestSharedPrefix(keys(5, 2, 3))).as("chained keys: a different first block").isZero();
    assertThat(held.longestSharedPrefix(keysOfSize(4096, 1, 2, 3))).as("another block size").isZero();
    assertThat(held.longestSharedPrefix(keys(1, 5))).as("one block, shorter than credited").isZero();
  }

  @Test
  void forgetsAPromptOnceRemovedAndIgnoresARepeatedRemoval() {
    PromptsAwaitingFirstToken held = new PromptsAwaitingFirstToken();
    Object dispatch = new Object();
    held.add(dispatch, keys(1, 2, 3));
    held.remove(dispatch);
    held.remove(dispatch);
    held.remove(new Object());

    assertThat(held.size()).isZero();
    assertThat(held.longestSharedPrefix(keys(1, 2, 3))).isZero();
  }

  @Test
  void twoDispatchesOfTheSamePromptAreHeldUntilBothAreRemoved() {
    PromptsAwaitingFirstToken held = new PromptsAwaitingFirstToken();
    Object first = new Object();
    Object second = new Object();
    held.add(first, keys(1, 2));
    held.add(second, keys(1, 2));
    held.remove(first);
    assertThat(held.longestSharedPrefix(keys(1, 2))).isEqualTo(2);
    held.remove(second);
    assertThat(held.longestSharedPrefix(keys(1, 2))).isZero();
  }

  @Test
  void aSharedPrefixShorterThanTheShortestCreditedCountsForNothing() {
    PromptsAwaitingFirstToken held = new PromptsAwaitingFirstToken();
    held.add(new Object(), keysOfSize(16, 1, 2, 3));
    assertThat(held.longestSharedPrefix(keysOfSize(16, 1, 2, 3))).isZero();
    held.add(new Object(), keys(1, 2, 3));
    assertThat(held.longestSharedPrefix(keys(1, 9))).as("1 block of 2,048 tokens").isZero();
    assertThat(held.longestSharedPrefix(keys(1, 2, 9))).as("2 blocks, 4,096 tokens").isEqualTo(2);
  }

  @Test
  void aCallerThatNeverReportsItsDecisionsCannotGrowTheSetWithoutBound() {
    PromptsAwaitingFirstToken held = new PromptsAwaitingFirstToken();
    for (int i = 0; i < 3 * PromptsAwaitingFirstToken.MAX_HELD; i++) {
      held.add(new Object(), keys(i, i + 1));
    }
    assertThat(held.size()).isBetween(1, PromptsAwaitingFirstToken.MAX_HELD);
    held.add(new Object(), keys(7, 8));
    assertThat(held.longestSharedPrefix(keys(7, 8))).as("the newest is kept").isEqualTo(2);
  }

  @Test
  void aLookupCountsWhatTheIndexFoundOrTheLongerSharedPrefix() {
    PromptsAwaitingFirstToken held = new PromptsAwaitingFirstToken();
    held.add(new Object(), keys(1, 2, 3));
    assertThat(held.credited(0, keys(1, 2, 3, 4))).isEqualTo(3);
    assertThat(held.credited(4, keys(1, 2, 3, 4))).as("the whole prompt found already").isEqualTo(4);
    assertThat(held.credited(1, keys(9, 2))).as("nothing shared: what was found").isEqualTo(1);
  }
}
