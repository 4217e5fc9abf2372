package dev.kinference.sim.bench;

import dev.kinference.sim.engine.EngineConfig;
import dev.kinference.sim.engine.SimEngine;
import dev.kinference.sim.fleet.VirtualFleet;
import dev.kinference.sim.workload.AgenticShape;
import dev.kinference.sim.workload.MooncakeTrace;
import dev.kinference.sim.workload.TraceStatistics;
import java.util.Locale;

/**
 * How many servers a trace needs, estimated before replaying it: the GPU time its prompts and answers take on one
 * server, per second of trace. Prompts count only what no router could serve from a cache (each trace block the
 * first time any request carries it, as a prefix, plus every prompt's unshared tail), so the estimate is a lower
 * bound; answers count as decode steps of a batch as large as the server's KV memory holds at the trace's mean
 * context. A fleet below the estimate saturates under every router, and a replay on it compares routers only by how
 * they fail. Stateless.
 *
 * @param prefillSecondsPerSecond GPU seconds of prefill per second of trace, with perfect cache reuse
 * @param decodeSecondsPerSecond GPU seconds of decode per second of trace
 */
public record FleetSizing(double prefillSecondsPerSecond, double decodeSecondsPerSecond) {

  /** Servers kept busy all the time by the trace (fractional). */
  public double busyServers() {
    return prefillSecondsPerSecond + decodeSecondsPerSecond;
  }

  /** Servers to replay the trace with: the busy servers with a quarter to spare, at least one. */
  public int recommendedServers() {
    return Math.max(1, (int) Math.ceil(busyServers() * 1.25));
  }

  /** A warning for a fleet of {@code servers}, or empty if it is large enough. */
  public String warningFor(int servers) {
    if (servers >= recommendedServers()) {
      return "";
    }
    return String.format(Locale.ROOT, "warning: this trace keeps about %.1f servers busy (%.1f prefilling with "
        + "perfect cache reuse, %.1f decoding) and %d are simulated: every router will saturate and the comparison "
        + "shows only how they fail. Replay it on --servers %d or more, or slow it down with --speedup.",
        busyServers(), prefillSecondsPerSecond, decodeSecondsPerSecond, servers, recommendedServers());
  }

  /**
   * How many agentic sessions a fleet holds in KV memory at once, for the bench to print before an agentic run: a
   * session keeps its whole context cached between turns (the tool runs meanwhile), so a concurrency above this
   * recomputes contexts of 50K tokens and more whichever router is used.
   */
  public static String agenticNote(AgenticShape shape, VirtualFleet.Settings fleet) {
    EngineConfig config = fleet.engine().toBuilder().build().config();
    double meanTurns = (shape.minTurns() + shape.maxTurns()) / 2.0;
    double session = Math.min(config.maxModelLen(), shape.systemPromptTokens() + shape.meanContextTokens()
        + meanTurns / 2 * (shape.answerTokens() + shape.toolOutputTokens()));
    long capacity = config.kvCapacityTokens();
    double held = fleet.servers() * capacity / session;
    return String.format(Locale.ROOT, "agentic: a session holds about %,.0f tokens (contexts cut at max_model_len "
        + "%,d); %d servers of %,d KV tokens each hold about %.0f sessions at once. Concurrency above that recomputes "
        + "contexts under every router: to serve more, add servers (--servers) or larger GPUs (--gpu H100 or H200).",
        session, config.maxModelLen(), fleet.servers(), capacity, held)
        + (config.maxModelLen() < 2 * (shape.systemPromptTokens() + shape.meanContextTokens())
            ? String.format(Locale.ROOT, "%nwarning: max_model_len %,d is below twice the mean context: contexts are "
                + "cut to half of it and sessions end early. Use a model with a longer context (--model "
                + "Qwen3.5-27B-FP8, Llama-3.1-8B or Llama-3.1-70B).", config.maxModelLen())
            : "");
  }

  /** Estimates the load of {@code trace} on servers configured as {@code engine}. */
  public static FleetSizing of(MooncakeTrace trace, SimEngine engine, double speedup) {
    // prefill counts what an infinite cache would not hold; decode runs at the batch the mean context allows
    TraceStatistics stats = TraceStatistics.of(trace.entries());
    double seconds = Math.max(1e-3, trace.durationNanos() / 1e9 / speedup);
    EngineConfig config = engine.config();
    double uncachedTokens = stats.meanInput() * stats.requests() * (1 - stats.reusedShare());
    double outputTokens = stats.meanOutput() * stats.requests();
    double prefillRate = 1_000_000 / OracleRouter.prefillSeconds(engine, 1_000_000, 0);
    double meanContext = Math.max(1, stats.meanInput() + stats.meanOutput() / 2);
    int batch = (int) Math.max(1, Math.min(config.maxNumSeqs(), config.kvCapacityTokens() / meanContext));
    double decodeRate = batch / engine.costModel().decodeStepSeconds(batch, meanContext);
    return new FleetSizing(uncachedTokens / seconds / prefillRate, outputTokens / seconds / decodeRate);
  }
}
