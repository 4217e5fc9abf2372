package dev.kinference.sim.workload;

import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What a trace in the Mooncake format holds (one read from a file or synthesized here), for comparing with a trace
 * release's published figures. Immutable.
 *
 * @param requests requests
 * @param seconds from the first to the last timestamp
 * @param meanInput mean input tokens
 * @param meanOutput mean output tokens
 * @param reusedShare share of input tokens in blocks an earlier request carried as a prefix (infinite cache)
 */
public record TraceStatistics(int requests, double seconds, double meanInput, double meanOutput, double reusedShare) {

  /** The statistics of {@code entries}. */
  public static TraceStatistics of(List<MooncakeTrace.Entry> entries) {
    Set<Long> seen = new HashSet<>();
    long input = 0;
    long output = 0;
    long reused = 0;
    for (MooncakeTrace.Entry e : entries) {
      long[] ids = e.hashIds();
      int hit = 0;
      while (hit < ids.length && seen.contains(ids[hit])) {
        hit++;
      }
      for (long id : ids) {
        seen.add(id);
      }
      input += e.inputLength();
      output += e.outputLength();
      reused += Math.min(e.inputLength(), (long) hit * MooncakeTrace.TRACE_BLOCK_TOKENS);
    }
    int n = Math.max(1, entries.size());
    double seconds = entries.isEmpty() ? 0
        : (entries.get(entries.size() - 1).timestampMs() - entries.get(0).timestampMs()) / 1000.0;
    return new TraceStatistics(entries.size(), seconds, (double) input / n, (double) output / n,
        input == 0 ? 0 : (double) reused / input);
  }

  @Override
  public String toString() {
    return String.format(Locale.ROOT, "%,d requests over %.0f s, mean %.0f in / %.0f out tokens, %.1f%% of input "
        + "tokens in reused prefix blocks", requests, seconds, meanInput, meanOutput, 100 * reusedShare);
  }
}
