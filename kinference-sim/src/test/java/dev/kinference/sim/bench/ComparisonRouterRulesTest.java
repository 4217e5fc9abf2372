package dev.kinference.sim.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.sim.fleet.FleetRouter;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** The comparison routers' decision rules on small hand-built fleets: given loads and prefix scores, who is picked. */
class ComparisonRouterRulesTest {

  static Stream<Arguments> stickyCases() {
    return Stream.of(
        // prefix scores, in-flight tokens, this request's uncached tokens, expected server
        Arguments.of("nothing cached: fewest tokens in flight", new double[] {0, 0, 0}, new long[] {9_000, 1_000, 5_000},
            new long[] {12_000, 12_000, 12_000}, 1),
        Arguments.of("one server at 0.8 keeps the request though busier", new double[] {0.8, 0, 0},
            new long[] {100_000, 0, 0}, new long[] {2_400, 12_000, 12_000}, 0),
        Arguments.of("0.79 is not sticky: load decides", new double[] {0.79, 0, 0}, new long[] {100_000, 0, 0},
            new long[] {2_520, 12_000, 12_000}, 1),
        Arguments.of("among sticky servers the less loaded", new double[] {0.95, 0.9, 0}, new long[] {50_000, 20_000, 0},
            new long[] {600, 1_200, 12_000}, 1),
        // 18 s at 15,928 tokens/s is 286,704 tokens: a sticky server this far behind loses its stickiness
        Arguments.of("sticky server more than 18 s behind: all servers compete", new double[] {0.9, 0, 0},
            new long[] {300_000, 10_000, 20_000}, new long[] {1_200, 12_000, 12_000}, 1),
        Arguments.of("sticky server 17 s behind: it keeps the request", new double[] {0.9, 0, 0},
            new long[] {280_000, 10_000, 20_000}, new long[] {1_200, 12_000, 12_000}, 0));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stickyCases")
  void llmdStickyKeepsCacheHoldersUntilTheyFallEighteenSecondsBehind(String why, double[] prefix, long[] inFlight,
      long[] uncached, int expected) {
    assertThat(LlmdStickyRouter.pick(prefix, inFlight, uncached, new SplittableRandom(1))).isEqualTo(expected);
  }

  @Test
  void llmdStickyBreaksTiesAtRandom() {
    int[] picked = new int[3];
    SplittableRandom random = new SplittableRandom(5);
    for (int i = 0; i < 300; i++) {
      picked[LlmdStickyRouter.pick(new double[3], new long[3], new long[] {10, 10, 10}, random)]++;
    }
    for (int n : picked) {
      assertThat(n).isBetween(70, 130);
    }
  }

  @Test
  void llmdStickySendsAConversationBackToTheServerItWentToAndCountsItsPrefillUntilTheFirstToken() {
    LlmdStickyRouter r = new LlmdStickyRouter(1);
    r.start(new FakeView(4));
    String history = "a long conversation so far ".repeat(120);
    FleetRouter.Decision first = r.route(FakeView.request("t1", history), 0);
    // while the first turn prefills, its server counts its tokens: a new conversation goes elsewhere
    FleetRouter.Decision other = r.route(FakeView.request("o", "something unrelated ".repeat(120)), 0);
    assertThat(other.server()).isNotEqualTo(first.server());
    first.onFirstToken(1);
    other.onFirstToken(1);
    FleetRouter.Decision next = r.route(FakeView.request("t2", history + "and the next question"), 2);
    assertThat(next.server()).isEqualTo(first.server());
  }

  static Stream<Arguments> llmdWeightedCases() {
    return Stream.of(
        // prefix, waiting, kv usage per server; expected server
        Arguments.of("equal load: the prefix wins", new double[] {0.9, 0}, new int[] {0, 0},
            new double[] {0.5, 0.5}, 0),
        Arguments.of("one waiting request outweighs a 0.9 prefix when the holder's cache is fuller",
            new double[] {0.9, 0}, new int[] {1, 0}, new double[] {0.9, 0.3}, 1),
        Arguments.of("one waiting request alone does not", new double[] {0.9, 0}, new int[] {1, 0},
            new double[] {0.5, 0.5}, 0),
        Arguments.of("nothing cached: shortest queue, then emptiest cache", new double[] {0, 0, 0},
            new int[] {2, 0, 0}, new double[] {0.1, 0.6, 0.2}, 2));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("llmdWeightedCases")
  void llmdWeightedProfileAddsThreePrefixTwoQueueTwoKv(String why, double[] prefix, int[] waiting, double[] kv,
      int expected) {
    int minQ = Integer.MAX_VALUE;
    int maxQ = Integer.MIN_VALUE;
    for (int w : waiting) {
      minQ = Math.min(minQ, w);
      maxQ = Math.max(maxQ, w);
    }
    int best = 0;
    for (int i = 1; i < prefix.length; i++) {
      if (LlmdRouter.score(prefix[i], waiting[i], minQ, maxQ, kv[i])
          > LlmdRouter.score(prefix[best], waiting[best], minQ, maxQ, kv[best])) {
        best = i;
      }
    }
    assertThat(best).isEqualTo(expected);
  }

  static Stream<Arguments> dynamoCases() {
    return Stream.of(
        // active prefill blocks, overlap blocks, decode blocks per worker (prompt of 10 blocks); expected worker
        // Dynamo's documented example: costs 8 + 10 = 18, 5 + 5 = 10, 2 + 9 = 11
        Arguments.of("the documented example: the middle worker", new double[] {0, 0, 0}, new int[] {2, 5, 8},
            new int[] {10, 5, 9}, 1),
        Arguments.of("a queue of prefill outweighs the overlap", new double[] {20, 0}, new int[] {8, 0},
            new int[] {10, 10}, 1),
        Arguments.of("overlap credit is capped at the prefill: full hit vs idle", new double[] {0, 0},
            new int[] {10, 0}, new int[] {12, 2}, 0));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("dynamoCases")
  void dynamoPicksTheLowestPrefillPlusDecodeCost(String why, double[] prefill, int[] overlap, int[] decode,
      int expected) {
    int best = 0;
    for (int i = 1; i < prefill.length; i++) {
      if (DynamoKvRouter.cost(prefill[i], 10, overlap[i], 0, 0, decode[i])
          < DynamoKvRouter.cost(prefill[best], 10, overlap[best], 0, 0, decode[best])) {
        best = i;
      }
    }
    assertThat(best).isEqualTo(expected);
  }

  @Test
  void dynamoCreditsHostAndDiskTiersAtThreeQuartersAndAQuarter() {
    assertThat(DynamoKvRouter.cost(0, 10, 4, 0, 0, 0)).isEqualTo(6);
    assertThat(DynamoKvRouter.cost(0, 10, 0, 4, 0, 0)).isEqualTo(7);
    assertThat(DynamoKvRouter.cost(0, 10, 0, 0, 4, 0)).isEqualTo(9);
  }

  @Test
  void llmdApproximateIndexHashesSixtyFourTokenBlocksAndForgetsTheLeastRecentlyUsed() {
    LlmdApproxPrefixIndex index = new LlmdApproxPrefixIndex(2, "m");
    int[] tokens = new int[64 * 3 + 10];
    for (int i = 0; i < tokens.length; i++) {
      tokens[i] = i;
    }
    long[] blocks = index.blocks(tokens);
    assertThat(blocks).hasSize(3);
    index.capacity(0, 4);
    index.record(0, blocks);
    assertThat(index.match(blocks)).containsExactly(3, 0);
    int[] other = tokens.clone();
    other[0] = -1;
    index.record(0, index.blocks(other));
    // capacity 4: the three new blocks pushed two of the first prompt's out, oldest first
    assertThat(index.match(blocks)[0]).isZero();
  }
}
