package dev.kinference.sim.workload;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Synthetic Mooncake-format conversation traces with the three properties of the public Mooncake
 * {@code conversation_trace.jsonl} that {@link LongConversationTrace} lacks: heavy-tailed prompt lengths (first prompts
 * lognormal, so the trace's inputs spread from about 1K to 85K tokens), one 512-token block that opens every request
 * (hash id 0, a system prompt every server soon holds), and requests that arrive in bursts: the public trace's
 * timestamps are whole seconds, and its requests fall on only 1,180 of its 3,537 seconds, about 10 at each (up to 28;
 * 10,851 of its 12,030 gaps are zero). Here each request waits for the next burst instant, instants whole seconds
 * apart by a uniform gap of at least 1 s and at most twice the mean (3 s, as in the public trace).
 * Most conversations are short: each turn is followed by another with a fixed probability (0.39 gives the public
 * trace's 61% of requests that start a conversation). A later turn's prompt is the previous prompt, its answer and a
 * new message, repeating the previous prompt's full blocks.
 *
 * <p>Run {@code java -cp kinference.jar dev.kinference.sim.workload.BurstyConversationTrace OUT [REQUESTS [SECONDS
 * [SEED [BURST_GAP_SECONDS]]]]} to write one; a gap of 0 removes the bursts (millisecond timestamps) and keeps the
 * rest. Stateless and thread-safe.
 */
public final class BurstyConversationTrace {

  /** The hash id of the block that opens every request. */
  public static final long SHARED_FIRST_BLOCK = 0;

  /**
   * The trace's shape.
   *
   * @param requests requests in the trace (about: conversation starts are a Poisson process)
   * @param durationSeconds span over which requests are sent
   * @param firstPromptMedian median prompt of a conversation's first turn, in tokens
   * @param firstPromptSigma the lognormal sigma of a first prompt's length
   * @param continueProbability the chance that a turn is followed by another
   * @param messageTokens mean new message of a later turn (exponential)
   * @param outputTokens mean answer (exponential)
   * @param thinkSeconds mean time between a turn and the next (exponential)
   * @param burstGapSeconds mean time between burst instants (0: no bursts, each request at its own millisecond)
   * @param maxInputTokens longest prompt written (a replay cuts longer ones to the servers' context itself)
   */
  public record Shape(int requests, double durationSeconds, int firstPromptMedian, double firstPromptSigma,
      double continueProbability, int messageTokens, int outputTokens, double thinkSeconds, double burstGapSeconds,
      int maxInputTokens) {

    public Shape {
      if (requests < 1 || !(durationSeconds > 0) || firstPromptMedian < 1 || !(firstPromptSigma >= 0)
          || !(continueProbability >= 0) || continueProbability >= 1 || messageTokens < 1 || outputTokens < 1
          || !(thinkSeconds >= 0) || !(burstGapSeconds >= 0) || maxInputTokens < 2 * MooncakeTrace.TRACE_BLOCK_TOKENS) {
        throw new IllegalArgumentException(String.format(Locale.ROOT, "invalid bursty conversation trace shape: "
            + "requests %d, duration %s s, first prompt median %d sigma %s, continue probability %s (must be in "
            + "[0, 1)), message %d, output %d, think %s s, burst gap %s s, max input %d (at least %d)", requests,
            durationSeconds, firstPromptMedian, firstPromptSigma, continueProbability, messageTokens, outputTokens,
            thinkSeconds, burstGapSeconds, maxInputTokens, 2 * MooncakeTrace.TRACE_BLOCK_TOKENS));
      }
    }

    /**
     * The public conversation trace's shape: 12,031 requests in an hour, first prompts of median 5,300 tokens
     * (lognormal sigma 1.22, as the public trace's first turns: p10 905, p50 5,264, p90 25,561, p99 89,869), 61% of
     * requests new, 2,500-token messages, 343-token answers, 90 s think time, bursts every 3 s on average, prompts up to
     * 131,072 tokens.
     */
    public static Shape mooncakeConversations() {
      return new Shape(12_031, 3600, 5_300, 1.22, 0.39, 2_500, 343, 90, 3, 131_072);
    }

    /** The same shape with {@code fraction} of the requests over {@code fraction} of the time (the same rate). */
    public Shape scaled(double requestsFraction, double timeFraction) {
      return new Shape(Math.max(1, (int) Math.round(requests * requestsFraction)), durationSeconds * timeFraction,
          firstPromptMedian, firstPromptSigma, continueProbability, messageTokens, outputTokens, thinkSeconds,
          burstGapSeconds, maxInputTokens);
    }

    /** The same shape with bursts {@code seconds} apart on average (0: none). */
    public Shape withBurstGap(double seconds) {
      return new Shape(requests, durationSeconds, firstPromptMedian, firstPromptSigma, continueProbability,
          messageTokens, outputTokens, thinkSeconds, seconds, maxInputTokens);
    }
  }

  private BurstyConversationTrace() {}

  /** The trace's entries, sorted by timestamp. */
  public static List<MooncakeTrace.Entry> synthesize(Shape shape, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    int block = MooncakeTrace.TRACE_BLOCK_TOKENS;
    long nextId = SHARED_FIRST_BLOCK + 1;
    double meanTurns = 1 / (1 - shape.continueProbability());
    double conversationRate = shape.requests() / meanTurns / shape.durationSeconds();
    // start well before the window so it opens in steady state; keep only the turns sent within [0, duration)
    double warm = 20 * shape.thinkSeconds() * meanTurns;
    List<MooncakeTrace.Entry> out = new ArrayList<>();
    double start = -warm;
    while (true) {
      start += exponential(r, 1 / conversationRate);
      if (start >= shape.durationSeconds()) {
        break;
      }
      long[] ids = {SHARED_FIRST_BLOCK};
      int input = 0;
      int previousOutput = 0;
      double t = start;
      for (int turn = 0; turn == 0 || r.nextDouble() < shape.continueProbability(); turn++) {
        int previousInput = input;
        if (turn == 0) {
          double lognormal = shape.firstPromptMedian() * Math.exp(shape.firstPromptSigma() * gaussian(r));
          input = (int) Math.min(shape.maxInputTokens(), Math.max(block + 16, lognormal));
        } else {
          input = (int) Math.min(shape.maxInputTokens(), (long) input + previousOutput
              + Math.max(16, (long) exponential(r, shape.messageTokens())));
        }
        int blocks = (input + block - 1) / block;
        int kept = Math.max(1, Math.min(previousInput / block, blocks));
        long[] next = Arrays.copyOf(ids, blocks);
        for (int b = kept; b < blocks; b++) {
          next[b] = nextId++;
        }
        ids = next;
        int output = (int) Math.max(1, Math.min(4_000, exponential(r, shape.outputTokens())));
        previousOutput = output;
        if (t >= 0 && t < shape.durationSeconds()) {
          out.add(new MooncakeTrace.Entry((long) (t * 1000), input, output, ids));
        }
        t += exponential(r, shape.thinkSeconds());
      }
    }
    out.sort(Comparator.comparingLong(MooncakeTrace.Entry::timestampMs));
    return shape.burstGapSeconds() > 0 ? inBursts(out, shape.burstGapSeconds(), r) : out;
  }

  /** {@code sorted} with each request moved to the next burst instant (whole seconds, gaps uniform in 1 to twice the mean). */
  private static List<MooncakeTrace.Entry> inBursts(List<MooncakeTrace.Entry> sorted, double gapSeconds,
      SplittableRandom r) {
    List<MooncakeTrace.Entry> out = new ArrayList<>(sorted.size());
    long instant = 0;
    for (MooncakeTrace.Entry e : sorted) {
      while (instant < e.timestampMs()) {
        instant += 1000 * Math.max(1, Math.round(gapSeconds * 2 * r.nextDouble()));
      }
      out.add(new MooncakeTrace.Entry(instant, e.inputLength(), e.outputLength(), e.hashIds()));
    }
    return out;
  }

  /** {@code java ... BurstyConversationTrace OUT [REQUESTS [SECONDS [SEED [BURST_GAP_SECONDS]]]]}: writes a trace. */
  public static void main(String[] args) throws IOException {
    TraceWriterMain.run("BurstyConversationTrace", "OUT.jsonl [REQUESTS [SECONDS [SEED [BURST_GAP_SECONDS]]]]", 5,
        args, a -> {
          Shape full = Shape.mooncakeConversations();
          Shape shape = full.scaled(TraceWriterMain.intArg(a, 1, full.requests()) / (double) full.requests(),
              TraceWriterMain.doubleArg(a, 2, full.durationSeconds()) / full.durationSeconds());
          if (a.length > 4) {
            shape = shape.withBurstGap(Double.parseDouble(a[4]));
          }
          return synthesize(shape, TraceWriterMain.longArg(a, 3, 1));
        }, entries -> {
          int[] in = entries.stream().mapToInt(MooncakeTrace.Entry::inputLength).sorted().toArray();
          return String.format(Locale.ROOT, "%d requests, input p10 %d p50 %d p90 %d p99 %d mean %.0f, output mean %.0f",
              entries.size(), percentile(in, 0.10), percentile(in, 0.50), percentile(in, 0.90), percentile(in, 0.99),
              Arrays.stream(in).average().orElse(0),
              entries.stream().mapToInt(MooncakeTrace.Entry::outputLength).average().orElse(0));
        });
  }

  /** The {@code q}-quantile of sorted {@code values} (nearest rank). */
  static int percentile(int[] values, double q) {
    return values[Math.min(values.length - 1, (int) (q * values.length))];
  }

  private static double exponential(SplittableRandom r, double mean) {
    return -Math.log(1 - r.nextDouble()) * mean;
  }

  /** A standard normal draw (Box-Muller). */
  private static double gaussian(SplittableRandom r) {
    return Math.sqrt(-2 * Math.log(1 - r.nextDouble())) * Math.cos(2 * Math.PI * r.nextDouble());
  }
}
