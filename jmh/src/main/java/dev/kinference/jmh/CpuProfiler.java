package dev.kinference.jmh;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * How much CPU the benchmark actually got, for a machine shared with other work: {@code cpu.cores} is the CPU time
 * the benchmark JVM used per wall-clock second of each iteration (at most the number of cores), and
 * {@code load.avg1} the one-minute load average at the iteration's end (Linux). Dividing a throughput score by
 * {@code cpu.cores} gives what the code does per core-second it ran; a latency percentile has no such correction,
 * so quote it with the load. Use with {@code -prof dev.kinference.jmh.CpuProfiler}.
 */
public final class CpuProfiler implements InternalProfiler {

  private long cpuStart;
  private long wallStart;

  @Override
  public String getDescription() {
    return "CPU cores the benchmark JVM got during each iteration, and the load average";
  }

  @Override
  public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
    cpuStart = processCpuNanos();
    wallStart = System.nanoTime();
  }

  @Override
  @SuppressWarnings("rawtypes") // JMH's InternalProfiler declares the raw Result type
  public Collection<? extends Result> afterIteration(BenchmarkParams benchmarkParams,
      IterationParams iterationParams, IterationResult result) {
    long cpu = processCpuNanos() - cpuStart;
    long wall = System.nanoTime() - wallStart;
    List<Result> out = new ArrayList<>();
    if (cpu >= 0 && wall > 0) {
      out.add(new ScalarResult("cpu.cores", cpu / (double) wall, "cores", AggregationPolicy.AVG));
    }
    double load = loadAverage();
    if (load >= 0) {
      out.add(new ScalarResult("load.avg1", load, "runnable", AggregationPolicy.AVG));
    }
    return out;
  }

  private static long processCpuNanos() {
    if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
      return os.getProcessCpuTime();
    }
    return -1;
  }

  private static double loadAverage() {
    try {
      String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return Double.parseDouble(fields[0]);
    } catch (IOException | RuntimeException e) {
      return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }
  }
}
