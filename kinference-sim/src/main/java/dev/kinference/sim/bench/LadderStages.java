package dev.kinference.sim.bench;

import dev.kinference.sim.fleet.CompletedRequest;
import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;

/**
 * Per-stage figures of a {@link dev.kinference.sim.workload.LoadPattern.Ladder} run, computed as inference-perf's
 * {@code per_stage} report computes them ({@code reportgen/base.py}, {@code summarize_requests}): a stage's requests are
 * those it sent, its output rate is their output tokens (finished requests only) over the time from its first send to
 * its last end. Runs of other seeds add up: tokens and spans add, so the rate stays per second of stage time. A
 * request the router turned away is a failed request there: counted in the stage's requests and span, in no TTFT.
 *
 * <p>Filled on the run's thread, then read; not thread-safe.
 */
final class LadderStages {

  private static final long HIGHEST_MICROS = 24L * 3600 * 1_000_000;

  private static final class Stage {
    final Histogram ttft = new Histogram(HIGHEST_MICROS, 3);
    long requests;
    long outputTokens;
    long firstSend = Long.MAX_VALUE;
    long lastEnd = Long.MIN_VALUE;
    /** Spans of other seeds' runs of this stage, absorbed. */
    long absorbedSpanNanos;

    long spanNanos() {
      return absorbedSpanNanos + (requests == 0 ? 0 : Math.max(0, lastEnd - firstSend));
    }
  }

  /**
   * inference-perf's client ({@code openai_client.py}) opens an aiohttp session without a timeout of its own, so
   * aiohttp's default total of 5 minutes applies: a request not done by then fails, and its summary leaves failed
   * requests out of TTFT.
   */
  static final long CLIENT_TIMEOUT_NANOS = 300_000_000_000L;

  private final List<Long> starts = new ArrayList<>();
  /**
   * TTFTs of the requests that finished within {@link #CLIENT_TIMEOUT_NANOS}, every stage pooled; made when the first
   * stage starts, so a run of another load (most runs) holds no histogram here.
   */
  private @Nullable Histogram ttftWithinTimeout;
  private long timedOut;
  private final List<Stage> stages = new ArrayList<>();

  void onStageStart(int stage, long nanos) {
    if (stage != starts.size()) {
      throw new IllegalStateException("stage " + stage + " started after " + starts.size() + " stages");
    }
    starts.add(nanos);
    stages.add(new Stage());
    withinTimeout();
  }

  void onRequest(CompletedRequest r) {
    int index = stageOf(r.sentNanos());
    if (index < 0) {
      return;
    }
    Stage s = stages.get(index);
    s.requests++;
    s.firstSend = Math.min(s.firstSend, r.sentNanos());
    if (r.rejected()) {
      s.lastEnd = Math.max(s.lastEnd, r.finishNanos());
      return;
    }
    s.ttft.recordValue(Math.min(HIGHEST_MICROS, Math.max(0, r.ttftOrWaitNanos() / 1000)));
    if (r.finished() && r.outcome() != null) {
      s.outputTokens += r.outcome().completionTokens();
    }
    if (r.finished() && r.e2eNanos() <= CLIENT_TIMEOUT_NANOS) {
      withinTimeout().recordValue(Math.min(HIGHEST_MICROS, Math.max(0, r.ttftNanos() / 1000)));
    } else {
      timedOut++;
    }
    s.lastEnd = Math.max(s.lastEnd, r.finished() ? r.finishNanos() : r.observedUntilNanos());
  }

  /** The last stage that started at or before {@code sentNanos}, or -1. */
  private int stageOf(long sentNanos) {
    int found = -1;
    for (int i = 0; i < starts.size() && starts.get(i) <= sentNanos; i++) {
      found = i;
    }
    return found;
  }

  private Histogram withinTimeout() {
    Histogram h = ttftWithinTimeout;
    if (h == null) {
      h = new Histogram(HIGHEST_MICROS, 3);
      ttftWithinTimeout = h;
    }
    return h;
  }

  void absorb(LadderStages other) {
    if (other.ttftWithinTimeout != null) {
      withinTimeout().add(other.ttftWithinTimeout);
    }
    timedOut += other.timedOut;
    for (int i = 0; i < other.stages.size(); i++) {
      Stage theirs = other.stages.get(i);
      if (i == stages.size()) {
        starts.add(other.starts.get(i));
        stages.add(new Stage());
      }
      Stage mine = stages.get(i);
      mine.ttft.add(theirs.ttft);
      mine.absorbedSpanNanos += theirs.spanNanos();
      mine.requests += theirs.requests;
      mine.outputTokens += theirs.outputTokens;
    }
  }

  /**
   * The pooled TTFT percentile of the requests that finished within inference-perf's client timeout (5 minutes), the
   * others left out as its summary leaves failed requests out; a lower bound on the timeout's effect, since the
   * simulated servers kept serving the requests a real client would have abandoned.
   */
  double ttftWithinTimeoutSeconds(double percentile) {
    Histogram h = ttftWithinTimeout;
    return h == null || h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1e6;
  }

  /** Requests that did not finish within the client timeout (over every seed). */
  long timedOut() {
    return timedOut;
  }

  /** The stages that started. */
  int count() {
    return stages.size();
  }

  /** Requests stage {@code i} sent (over every seed). */
  long requests(int i) {
    return stages.get(i).requests;
  }

  /** Stage {@code i}'s output tokens per second of its span (first send to last end). */
  double outputTokensPerSecond(int i) {
    Stage s = stages.get(i);
    long span = s.spanNanos();
    return span == 0 ? 0 : s.outputTokens / (span / 1e9);
  }

  /** Stage {@code i}'s span in seconds (added over seeds). */
  double spanSeconds(int i) {
    return stages.get(i).spanNanos() / 1e9;
  }

  /** Stage {@code i}'s TTFT percentile in seconds, unstarted requests counted at their wait (NaN if it sent none). */
  double ttftSeconds(int i, double percentile) {
    Histogram h = stages.get(i).ttft;
    return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1e6;
  }

  /**
   * The mean of the stages' output rates from stage {@code from} on: llm-d's summary row (its 8,730 tokens/s for the
   * precise scheduler is the mean of its 16 per-stage rates after the warm-up).
   */
  double meanOutputTokensPerSecond(int from) {
    double sum = 0;
    int n = 0;
    for (int i = from; i < stages.size(); i++) {
      sum += outputTokensPerSecond(i);
      n++;
    }
    return n == 0 ? Double.NaN : sum / n;
  }
}
