package dev.kinference.sim.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.io.StringWriter;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ToolAgentTraceTest {

  /** Two lines as the public toolagent trace writes them (the README's sample, 512-token blocks). */
  private static final String TOOLAGENT_LINES = """
      {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 2353, 2354]}
      {"timestamp": 30535, "input_length": 6472, "output_length": 26, "hash_ids": [46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 2366]}
      """;

  @Test
  void aQuarterOfTheTraceHasThePublishedMeansAndRate() {
    ToolAgentTrace.Shape shape = ToolAgentTrace.Shape.mooncakeToolAgent().scaled(0.25, 0.25);
    List<MooncakeTrace.Entry> entries = ToolAgentTrace.synthesize(shape, 3);
    TraceStatistics stats = TraceStatistics.of(entries);
    // 23,608 requests an hour: a quarter of both is 5,902 requests in 900 s
    assertThat(stats.requests()).isBetween(5_300, 6_500);
    assertThat(stats.seconds()).isBetween(890.0, 900.0);
    assertThat(stats.meanInput()).isBetween(0.9 * 8_596, 1.1 * 8_596);
    assertThat(stats.meanOutput()).isBetween(0.9 * 182, 1.1 * 182);
    assertThat(stats.reusedShare()).as("leading blocks repeated by later requests").isBetween(0.5, 0.75);
    for (MooncakeTrace.Entry e : entries) {
      assertThat(e.hashIds()).as("one hash id per 512-token block").hasSize((e.inputLength() + 511) / 512);
      assertThat(e.inputLength()).isLessThanOrEqualTo(32_000);
    }
  }

  @Test
  void theSameSeedWritesTheSameTraceAndBadShapesAreRefused() {
    ToolAgentTrace.Shape shape = ToolAgentTrace.Shape.mooncakeToolAgent().scaled(0.01, 0.01);
    assertThat(ToolAgentTrace.synthesize(shape, 9)).isEqualTo(ToolAgentTrace.synthesize(shape, 9));
    assertThatThrownBy(() -> new ToolAgentTrace.Shape(10, 60, 4, 1000, 1.2, 5, 2, 100, 100, 100, 1, 32_000))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("steps 5-2");
  }

  @Test
  void toolAgentLinesParseAndEqualHashIdsBecomeEqualPrefixesOf512Tokens() throws Exception {
    MooncakeTrace trace = MooncakeTrace.read(new StringReader(TOOLAGENT_LINES), "m", 0, "toolagent");
    assertThat(trace.entries()).hasSize(2);
    assertThat(trace.entries().get(0)).isEqualTo(new MooncakeTrace.Entry(27482, 6955, 52,
        new long[] {46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 2353, 2354}));
    assertThat(trace.durationNanos()).isEqualTo((30535 - 27482) * 1_000_000L);
    SplittableRandom random = new SplittableRandom(1);
    int[] first = Objects.requireNonNull(Objects.requireNonNull(trace.nextTimedSession(random)).session()
        .nextRequest()).promptTokens();
    int[] second = Objects.requireNonNull(Objects.requireNonNull(trace.nextTimedSession(random)).session()
        .nextRequest()).promptTokens();
    assertThat(first).hasSize(6955);
    assertThat(second).hasSize(6472);
    int shared = 12 * MooncakeTrace.TRACE_BLOCK_TOKENS;
    assertThat(Arrays.equals(first, 0, shared, second, 0, shared)).as("12 equal hash ids: 6,144 equal tokens")
        .isTrue();
    assertThat(Arrays.equals(first, shared, shared + 16, second, shared, shared + 16)).isFalse();
  }

  @Test
  void aGeneratedTraceRoundTripsThroughTheFileFormat() throws Exception {
    List<MooncakeTrace.Entry> entries = ToolAgentTrace.synthesize(
        ToolAgentTrace.Shape.mooncakeToolAgent().scaled(0.005, 0.005), 4);
    StringWriter out = new StringWriter();
    MooncakeTrace.write(entries, out);
    assertThat(MooncakeTrace.read(new StringReader(out.toString()), "m", 0, "generated").entries())
        .isEqualTo(entries);
  }

  @Test
  void aToolAgentLineWithoutHashIdsIsRefusedNamingItsLine() {
    String bad = TOOLAGENT_LINES + "{\"timestamp\": 31000, \"input_length\": 900, \"output_length\": 10}\n";
    assertThatThrownBy(() -> MooncakeTrace.read(new StringReader(bad), "m", 0, "toolagent"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("toolagent line 3")
        .hasMessageContaining("hash_ids");
  }
}
