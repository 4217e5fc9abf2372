package dev.kinference.sim.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BurstyConversationTraceTest {

  private static final List<MooncakeTrace.Entry> QUARTER_HOUR =
      BurstyConversationTrace.synthesize(BurstyConversationTrace.Shape.mooncakeConversations().scaled(0.25, 0.25), 3);

  @Test
  void promptLengthsHaveThePublicTracesSpread() {
    int[] in = QUARTER_HOUR.stream().mapToInt(MooncakeTrace.Entry::inputLength).sorted().toArray();
    // the public conversation trace: p10 964, p50 6,909, p90 27,367, p99 85,401, mean 12,035
    assertThat(BurstyConversationTrace.percentile(in, 0.10)).isBetween(700, 1_900);
    assertThat(BurstyConversationTrace.percentile(in, 0.50)).isBetween(5_500, 8_500);
    assertThat(BurstyConversationTrace.percentile(in, 0.90)).isBetween(22_000, 33_000);
    assertThat(BurstyConversationTrace.percentile(in, 0.99)).isBetween(65_000, 110_000);
    double out = QUARTER_HOUR.stream().mapToInt(MooncakeTrace.Entry::outputLength).average().orElseThrow();
    assertThat(out).isBetween(300.0, 390.0);
    assertThat(QUARTER_HOUR.size()).isBetween(2_700, 3_300);
  }

  @Test
  void everyRequestOpensWithTheSameBlockAndMostStartAConversation() {
    Set<Long> seen = new HashSet<>();
    int onlyFirstBlockSeen = 0;
    for (MooncakeTrace.Entry e : QUARTER_HOUR) {
      assertThat(e.hashIds()[0]).isEqualTo(BurstyConversationTrace.SHARED_FIRST_BLOCK);
      if (e.hashIds().length < 2 || !seen.contains(e.hashIds()[1])) {
        onlyFirstBlockSeen++;
      }
      for (long id : e.hashIds()) {
        seen.add(id);
      }
    }
    // the public trace: 61% of requests share only the first block with earlier ones
    assertThat((double) onlyFirstBlockSeen / QUARTER_HOUR.size()).isBetween(0.55, 0.70);
  }

  @Test
  void requestsArriveInBurstsOfAboutTenOnWholeSeconds() {
    Map<Long, Integer> perInstant = new HashMap<>();
    for (MooncakeTrace.Entry e : QUARTER_HOUR) {
      assertThat(e.timestampMs() % 1000).isZero();
      perInstant.merge(e.timestampMs(), 1, Integer::sum);
    }
    double mean = (double) QUARTER_HOUR.size() / perInstant.size();
    assertThat(mean).isBetween(8.0, 12.5);
    List<MooncakeTrace.Entry> unbursty = BurstyConversationTrace.synthesize(
        BurstyConversationTrace.Shape.mooncakeConversations().scaled(0.25, 0.25).withBurstGap(0), 3);
    assertThat(unbursty.stream().map(MooncakeTrace.Entry::timestampMs).distinct().count())
        .isGreaterThan(unbursty.size() * 9L / 10);
  }

  @Test
  void anImpossibleShapeIsRefusedWithItsValues() {
    assertThatThrownBy(() -> new BurstyConversationTrace.Shape(10, 60, 5_000, 1, 1.0, 100, 100, 1, 3, 131_072))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("continue probability 1.0");
    assertThatThrownBy(() -> BurstyConversationTrace.Shape.mooncakeConversations().withBurstGap(-1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("burst gap -1.0 s");
  }
}
