package dev.kinference.sim.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link NextEventHeap} picks what the scan over every server it replaced picked, ties to the lower index. */
class NextEventHeapTest {

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3, 17, 1024})
  void choosesTheServerAScanInIndexOrderWouldChoose(int servers) {
    SplittableRandom r = new SplittableRandom(servers);
    NextEventHeap heap = new NextEventHeap(servers);
    long[] next = new long[servers];
    Arrays.fill(next, Long.MAX_VALUE);
    for (int op = 0; op < 20_000; op++) {
      int server = r.nextInt(servers);
      // few distinct times, so ties are common; idle servers (MAX_VALUE) too
      long t = r.nextInt(10) == 0 ? Long.MAX_VALUE : r.nextInt(50);
      next[server] = t;
      heap.update(server, t);
      int expected = -1;
      long earliest = Long.MAX_VALUE;
      for (int i = 0; i < servers; i++) {
        if (next[i] < earliest) {
          earliest = next[i];
          expected = i;
        }
      }
      assertThat(heap.firstTime()).isEqualTo(earliest);
      if (expected >= 0) {
        assertThat(heap.first()).isEqualTo(expected);
      }
    }
  }
}
