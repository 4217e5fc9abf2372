package dev.kinference.sim.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.io.StringWriter;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class LongConversationTraceTest {

  @Test
  void theSyntheticTraceHasThePublicConversationTracesShape() {
    LongConversationTrace.Shape shape = LongConversationTrace.Shape.mooncakeConversations().scaled(0.25, 0.25);
    List<MooncakeTrace.Entry> entries = LongConversationTrace.synthesize(shape, 3);
    assertThat(entries.size()).isBetween(2_800, 3_200);
    assertThat(entries.get(entries.size() - 1).timestampMs()).isLessThan(900_000);
    double in = entries.stream().mapToInt(MooncakeTrace.Entry::inputLength).average().orElseThrow();
    double out = entries.stream().mapToInt(MooncakeTrace.Entry::outputLength).average().orElseThrow();
    assertThat(in).isBetween(10_000.0, 14_000.0);
    assertThat(out).isBetween(300.0, 390.0);
    // most requests continue a conversation: their leading hash ids were seen in an earlier request
    java.util.Set<Long> seen = new java.util.HashSet<>();
    long continuing = 0;
    for (MooncakeTrace.Entry e : entries) {
      long[] ids = e.hashIds();
      if (ids.length > 0 && seen.contains(ids[0])) {
        continuing++;
      }
      Arrays.stream(ids).forEach(seen::add);
    }
    assertThat(continuing).isGreaterThan(entries.size() / 2);
  }

  @Test
  void itIsReproducibleAndReadsBackAsAMooncakeTrace() throws Exception {
    LongConversationTrace.Shape shape = LongConversationTrace.Shape.mooncakeConversations().scaled(0.01, 0.01);
    List<MooncakeTrace.Entry> entries = LongConversationTrace.synthesize(shape, 9);
    assertThat(LongConversationTrace.synthesize(shape, 9)).isEqualTo(entries);
    StringWriter w = new StringWriter();
    MooncakeTrace.write(entries, w);
    MooncakeTrace read = MooncakeTrace.read(new StringReader(w.toString()), "m", 32_000, "test");
    assertThat(read.entries()).isEqualTo(entries);
  }

  @Test
  void anImpossibleShapeIsRefusedWithItsValues() {
    assertThatThrownBy(() -> new LongConversationTrace.Shape(10, 60, 5, 2, 1000, 100, 100, 1, 0, 1, 0, 32_000))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("turns 5-2");
  }
}
