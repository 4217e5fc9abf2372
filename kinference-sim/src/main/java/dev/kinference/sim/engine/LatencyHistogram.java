package dev.kinference.sim.engine;

import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * A snapshot of one of vLLM's latency histograms, with vLLM's bucket bounds.
 *
 * @param upperBounds the finite bucket bounds in seconds, ascending (the Prometheus {@code le} values)
 * @param bucketCounts observations per bucket, not cumulative; one more entry than the bounds, the last for
 *     {@code +Inf}
 * @param sumSeconds the sum of the observations
 * @param count the number of observations
 */
@SuppressWarnings("ArrayRecordComponent") // immutable snapshot: arrays are copied in and out
public record LatencyHistogram(double[] upperBounds, long[] bucketCounts, double sumSeconds, long count) {

  /** {@code vllm:time_to_first_token_seconds}. */
  static final double[] TTFT_BOUNDS = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5,
      5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
  /** {@code vllm:inter_token_latency_seconds} (and the older {@code time_per_output_token_seconds}). */
  static final double[] ITL_BOUNDS = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0,
      7.5, 10.0, 20.0, 40.0, 80.0};
  /** {@code vllm:e2e_request_latency_seconds}. */
  static final double[] E2E_BOUNDS = {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
      60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};

  public LatencyHistogram {
    upperBounds = upperBounds.clone();
    bucketCounts = bucketCounts.clone();
    if (bucketCounts.length != upperBounds.length + 1) {
      throw new IllegalArgumentException("need one count per bound plus +Inf");
    }
  }

  @Override
  public double[] upperBounds() {
    return upperBounds.clone();
  }

  @Override
  public long[] bucketCounts() {
    return bucketCounts.clone();
  }

  /** Observations at or below {@code upperBounds[i]} (or all of them for {@code i == upperBounds.length}). */
  public long cumulativeCount(int i) {
    long n = 0;
    for (int k = 0; k <= i && k < bucketCounts.length; k++) {
      n += bucketCounts[k];
    }
    return n;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LatencyHistogram h && Arrays.equals(upperBounds, h.upperBounds)
        && Arrays.equals(bucketCounts, h.bucketCounts) && sumSeconds == h.sumSeconds && count == h.count;
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bucketCounts) * 31 + Long.hashCode(count);
  }

  @Override
  public String toString() {
    return "LatencyHistogram[count=" + count + ", sum=" + sumSeconds + "s]";
  }

  /**
   * The mutable accumulator behind a snapshot; not thread-safe. A fleet of a thousand servers is scraped 20,000
   * times a simulated second, mostly idle ones: a snapshot is reused until something is recorded, and the bucket of
   * the previous observation is tried before a search (successive inter-token gaps mostly share one).
   */
  static final class Accumulator {
    private final double[] bounds;
    private final long[] counts;
    private double sum;
    private long count;
    private int lastBucket;
    private @Nullable LatencyHistogram snapshot;

    Accumulator(double[] bounds) {
      this.bounds = bounds;
      this.counts = new long[bounds.length + 1];
    }

    void record(double seconds) {
      int bucket = lastBucket;
      // Prometheus buckets: bucket i holds (bounds[i - 1], bounds[i]]; the last one everything above.
      if (!((bucket == 0 || seconds > bounds[bucket - 1]) && (bucket == bounds.length || seconds <= bounds[bucket]))) {
        int i = Arrays.binarySearch(bounds, seconds);
        bucket = i >= 0 ? i : -i - 1;
        lastBucket = bucket;
      }
      counts[bucket]++;
      sum += seconds;
      count++;
      snapshot = null;
    }

    LatencyHistogram snapshot() {
      LatencyHistogram s = snapshot;
      if (s == null) {
        s = new LatencyHistogram(bounds, counts, sum, count);
        snapshot = s;
      }
      return s;
    }
  }
}
