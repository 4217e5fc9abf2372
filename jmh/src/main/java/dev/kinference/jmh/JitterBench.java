package dev.kinference.jmh;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The machine's own latency tail: a chain of dependent xorshift steps with no memory traffic and no allocation, timed
 * like the routing benchmarks. Whatever its p99 shows beyond its p50 is not the code's but the machine's (the
 * hypervisor or kernel taking the CPU away), and bounds the p99 of every benchmark of similar length.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
@State(Scope.Thread)
public class JitterBench {

  /** Dependent xorshift steps per operation: about 0.5, 5 and 25 microseconds here. */
  @Param({"300", "3000", "15000"})
  public int work = 3000;

  private long state = 1;

  @Benchmark
  public long spin() {
    long x = state;
    for (int i = 0; i < work; i++) {
      // Each step depends on the last and has no closed form, so the compiler cannot shorten the chain.
      x ^= x << 13;
      x ^= x >>> 7;
      x ^= x << 17;
    }
    state = x;
    return x;
  }
}
