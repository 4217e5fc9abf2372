package dev.kinference.sim.bench;

import dev.kinference.sim.fleet.CompletedRequest;
import dev.kinference.sim.fleet.RunObserver;
import dev.kinference.sim.fleet.VirtualFleet;
import dev.kinference.sim.workload.ClientRequest;
import dev.kinference.sim.workload.LoadPattern;
import java.util.Arrays;
import java.util.Objects;
import org.HdrHistogram.Histogram;

/**
 * The measurements of one run (one router, one workload, one load point): latency distributions as HdrHistograms
 * (microseconds, three significant digits), goodput against the SLO, prefix-cache hits, and load spread.
 *
 * <p>The TTFT distribution counts every measured request: one that got no first token before the run ended counts
 * with the time it waited (censored at the run's end, so a lower bound), never left out; {@link #started()} and
 * {@link #finished()} say how many got a first token and how many finished. A request the router turned away
 * (admission control's HTTP 429) is counted in {@link #requests()} and {@link #rejected()} and nowhere else, as
 * inference-perf leaves a failed request out of its latencies.
 *
 * <p>Filled by the run as a {@link RunObserver}, then read; not thread-safe.
 */
public final class RunResult implements RunObserver {

  private static final long HIGHEST_MICROS = 24L * 3600 * 1_000_000;
  private static final int MAX_TIMELINE_SECONDS = 24 * 3600;

  private final String router;
  private final String workload;
  private final LoadPattern load;
  private final Slo slo;
  // sized by the largest value recorded (values are capped at HIGHEST_MICROS), not by the cap: the same buckets and
  // percentiles as a histogram sized for a day, at about half its memory for second-scale latencies
  private final Histogram ttft = latencyHistogram();
  private final Histogram itl = latencyHistogram();
  private final Histogram e2e = latencyHistogram();
  private long requests;
  private long rejected;
  private long started;
  private long finished;
  private long metSlo;
  private long promptTokens;
  private long cachedTokens;
  private long outputTokens;
  private long preemptions;
  private int repeats = 1;
  private double measureSeconds;
  private long[] servedPerServer = new long[0];
  private long[] finishedPerSecond = new long[0];
  private long[] metSloPerSecond = new long[0];
  private VirtualFleet.RunStats stats;
  private final LadderStages ladderStages = new LadderStages();

  public RunResult(String router, String workload, LoadPattern load, Slo slo, double measureSeconds) {
    this.router = Objects.requireNonNull(router, "router");
    this.workload = Objects.requireNonNull(workload, "workload");
    this.load = Objects.requireNonNull(load, "load");
    this.slo = Objects.requireNonNull(slo, "slo");
    this.measureSeconds = measureSeconds;
    this.stats = new VirtualFleet.RunStats(router, load, 0, 0, 0, 0, new long[0], java.util.List.of());
  }

  private static Histogram latencyHistogram() {
    return new Histogram(3); // auto-resizing
  }

  @Override
  public void onStageStart(int stage, long nanos) {
    ladderStages.onStageStart(stage, nanos);
  }

  @Override
  public void onRequest(CompletedRequest r) {
    ladderStages.onRequest(r);
    requests++;
    if (r.rejected()) {
      rejected++;
      return;
    }
    if (servedPerServer.length <= r.server()) {
      servedPerServer = Arrays.copyOf(servedPerServer, r.server() + 1);
    }
    servedPerServer[r.server()]++;
    if (r.started()) {
      started++;
    }
    ttft.recordValue(Math.min(HIGHEST_MICROS, Math.max(0, r.ttftOrWaitNanos() / 1000)));
    if (r.finished() && r.outcome() != null) {
      finished++;
      e2e.recordValue(Math.min(HIGHEST_MICROS, Math.max(0, r.e2eNanos() / 1000)));
      promptTokens += r.outcome().promptTokens();
      cachedTokens += r.outcome().cachedTokens();
      outputTokens += r.outcome().completionTokens();
      preemptions += r.outcome().preemptions();
    }
    boolean met = slo.isMetBy(r);
    if (met) {
      metSlo++;
    }
    if (r.finished()) {
      int second = (int) Math.min(MAX_TIMELINE_SECONDS, Math.max(0, r.finishNanos() / 1_000_000_000L));
      if (finishedPerSecond.length <= second) {
        finishedPerSecond = Arrays.copyOf(finishedPerSecond, Math.max(second + 1, 2 * finishedPerSecond.length));
        metSloPerSecond = Arrays.copyOf(metSloPerSecond, finishedPerSecond.length);
      }
      finishedPerSecond[second]++;
      if (met) {
        metSloPerSecond[second]++;
      }
    }
  }

  @Override
  public void onTokenGap(ClientRequest request, long gapNanos) {
    itl.recordValue(Math.min(HIGHEST_MICROS, Math.max(0, gapNanos / 1000)));
  }

  void setStats(VirtualFleet.RunStats stats) {
    this.stats = stats;
  }

  /**
   * Adds another run of the same router, workload and load (another seed): distributions and counts add up, the
   * measured time too, so rates stay per minute of measurement. Takes only {@code other}'s figures, so a merged
   * result is the same size whatever the number of seeds; {@link #stats()}'s per-server final metrics stay this
   * run's.
   */
  void absorb(RunResult other) {
    ladderStages.absorb(other.ladderStages);
    ttft.add(other.ttft);
    itl.add(other.itl);
    e2e.add(other.e2e);
    requests += other.requests;
    rejected += other.rejected;
    started += other.started;
    finished += other.finished;
    metSlo += other.metSlo;
    promptTokens += other.promptTokens;
    cachedTokens += other.cachedTokens;
    outputTokens += other.outputTokens;
    preemptions += other.preemptions;
    measureSeconds += other.measureSeconds;
    finishedPerSecond = addInto(finishedPerSecond, other.finishedPerSecond);
    metSloPerSecond = addInto(metSloPerSecond, other.metSloPerSecond);
    if (servedPerServer.length < other.servedPerServer.length) {
      servedPerServer = Arrays.copyOf(servedPerServer, other.servedPerServer.length);
    }
    for (int i = 0; i < other.servedPerServer.length; i++) {
      servedPerServer[i] += other.servedPerServer[i];
    }
    long[] dispatched = stats.dispatched();
    long[] more = other.stats.dispatched();
    long[] sum = Arrays.copyOf(dispatched, Math.max(dispatched.length, more.length));
    for (int i = 0; i < more.length; i++) {
      sum[i] += more[i];
    }
    // the servers' final metrics stay the first seed's: one entry per server, however many seeds are merged
    stats = new VirtualFleet.RunStats(stats.router(), stats.load(),
        stats.simulatedNanos() + other.stats.simulatedNanos(),
        stats.wallNanos() + other.stats.wallNanos(), stats.sent() + other.stats.sent(),
        stats.measured() + other.stats.measured(), sum, stats.finalMetrics());
    repeats += other.repeats;
  }

  private static long[] addInto(long[] into, long[] more) {
    long[] sum = into.length >= more.length ? into : Arrays.copyOf(into, more.length);
    for (int i = 0; i < more.length; i++) {
      sum[i] += more[i];
    }
    return sum;
  }

  /**
   * Measured requests that finished in each second of the run (index = second of virtual time, summed over merged
   * seeds), for a chart of requests over time.
   */
  public long[] finishedPerSecond() {
    return trimmed(finishedPerSecond);
  }

  /** Measured requests that finished within the SLO in each second of the run, as {@link #finishedPerSecond()}. */
  public long[] metSloPerSecond() {
    return Arrays.copyOf(metSloPerSecond, trimmed(finishedPerSecond).length);
  }

  private static long[] trimmed(long[] a) {
    int n = a.length;
    while (n > 0 && a[n - 1] == 0) {
      n--;
    }
    return Arrays.copyOf(a, n);
  }

  /** How many seeds were merged into this result. */
  public int repeats() {
    return repeats;
  }

  public String router() {
    return router;
  }

  public String workload() {
    return workload;
  }

  public LoadPattern load() {
    return load;
  }

  public Slo slo() {
    return slo;
  }

  /** TTFT distribution over every measured request, microseconds (a copy); unstarted ones count their wait. */
  public Histogram ttftMicros() {
    return ttft.copy();
  }

  /** Inter-token latency distribution, microseconds (a copy). */
  public Histogram itlMicros() {
    return itl.copy();
  }

  /** End-to-end latency distribution, microseconds (a copy). */
  public Histogram e2eMicros() {
    return e2e.copy();
  }

  /** Requests measured. */
  public long requests() {
    return requests;
  }

  /** Measured requests the router turned away (they are in no latency figure). */
  public long rejected() {
    return rejected;
  }

  /** Measured requests that got their first token within the run. */
  public long started() {
    return started;
  }

  /** Measured requests that finished within the run. */
  public long finished() {
    return finished;
  }

  /** Measured requests that met the SLO. */
  public long metSlo() {
    return metSlo;
  }

  /** A ladder run's per-stage figures (no stages for other loads). */
  LadderStages ladderStages() {
    return ladderStages;
  }

  /** TTFT percentile in seconds (NaN without data). */
  public double ttftSeconds(double percentile) {
    return ttft.getTotalCount() == 0 ? Double.NaN : ttft.getValueAtPercentile(percentile) / 1e6;
  }

  /** ITL percentile in seconds (NaN without data). */
  public double itlSeconds(double percentile) {
    return itl.getTotalCount() == 0 ? Double.NaN : itl.getValueAtPercentile(percentile) / 1e6;
  }

  /** E2E percentile in seconds (NaN without data). */
  public double e2eSeconds(double percentile) {
    return e2e.getTotalCount() == 0 ? Double.NaN : e2e.getValueAtPercentile(percentile) / 1e6;
  }

  /** Requests per minute that met the SLO. */
  public double goodputPerMinute() {
    return metSlo / (measureSeconds / 60);
  }

  /** Requests per minute that finished. */
  public double throughputPerMinute() {
    return finished / (measureSeconds / 60);
  }

  /** Output tokens per second. */
  public double outputTokensPerSecond() {
    return outputTokens / measureSeconds;
  }

  /** Prompt tokens served from the prefix cache, over all prompt tokens of finished requests. */
  public double prefixHitRate() {
    return promptTokens == 0 ? 0 : (double) cachedTokens / promptTokens;
  }

  public long promptTokens() {
    return promptTokens;
  }

  public long cachedTokens() {
    return cachedTokens;
  }

  public long preemptions() {
    return preemptions;
  }

  public double measureSeconds() {
    return measureSeconds;
  }

  /** Measured requests per server. */
  public long[] requestsPerServer() {
    return servedPerServer.clone();
  }

  /** Load spread: the busiest server's share of measured requests over the mean share (1 = perfectly even). */
  public double loadSpread() {
    int servers = Math.max(servedPerServer.length, stats.dispatched().length);
    if (requests == 0 || servers == 0) {
      return 1;
    }
    long max = Arrays.stream(servedPerServer).max().orElse(0);
    return max / ((double) requests / servers);
  }

  public VirtualFleet.RunStats stats() {
    return stats;
  }

  // Herding, for replicated routers (NAME@N) only; NaN otherwise. Repeats keep the first run's.
  private double herdingMeanShare = Double.NaN;
  private double herdingWorstShare = Double.NaN;

  void setHerding(double meanShare, double worstShare) {
    if (Double.isNaN(herdingMeanShare)) {
      herdingMeanShare = meanShare;
      herdingWorstShare = worstShare;
    }
  }

  /** The busiest server's mean share of each scrape interval's sends (see {@code Herding}); NaN if not counted. */
  public double herdingMeanShare() {
    return herdingMeanShare;
  }

  /** The busiest server's largest share of one scrape interval's sends; NaN if not counted. */
  public double herdingWorstShare() {
    return herdingWorstShare;
  }
}
