package dev.kinference.sim.workload;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Synthetic Mooncake-format traces of long multi-turn conversations, shaped like the public Mooncake
 * {@code conversation_trace.jsonl} (12,031 requests over an hour, about 12K input and 343 output tokens on average):
 * conversations start at Poisson times; each turn's prompt is the previous turn's prompt, its answer and a new user
 * message, so it repeats the previous prompt's full 512-token blocks (equal hash ids) and adds new ones; turns
 * follow each other after an exponential think time. Some conversations open with one of a few shared documents
 * (equal leading hash ids across conversations).
 *
 * <p>Run {@code java -cp kinference.jar dev.kinference.sim.workload.LongConversationTrace OUT REQUESTS SECONDS SEED}
 * to write one. Stateless and thread-safe.
 */
public final class LongConversationTrace {

  /**
   * The trace's shape.
   *
   * @param requests requests in the trace
   * @param durationSeconds span over which conversations start
   * @param minTurns fewest turns of a conversation
   * @param maxTurns most turns of a conversation
   * @param firstPromptTokens mean prompt of a conversation's first turn
   * @param messageTokens mean user message added each later turn
   * @param outputTokens mean answer
   * @param thinkSeconds mean time between a turn and the next
   * @param sharedDocuments shared opening documents (0 for none)
   * @param documentTokens mean length of a shared document (each between half and one and a half times it)
   * @param sharedShare share of conversations that open with a shared document
   * @param maxInputTokens longest prompt (a server's context)
   */
  public record Shape(int requests, double durationSeconds, int minTurns, int maxTurns, int firstPromptTokens,
      int messageTokens, int outputTokens, double thinkSeconds, int sharedDocuments, int documentTokens,
      double sharedShare, int maxInputTokens) {

    public Shape {
      if (requests < 1 || durationSeconds <= 0 || minTurns < 1 || maxTurns < minTurns || firstPromptTokens < 1
          || messageTokens < 1 || outputTokens < 1 || thinkSeconds < 0 || sharedDocuments < 0 || documentTokens < 1
          || sharedShare < 0
          || sharedShare > 1 || maxInputTokens < 1) {
        throw new IllegalArgumentException(String.format(Locale.ROOT, "invalid conversation trace shape: requests %d, "
            + "duration %s s, turns %d-%d, first prompt %d, message %d, output %d, think %s s, documents %d of %d, "
            + "share %s, max input %d", requests, durationSeconds, minTurns, maxTurns, firstPromptTokens,
            messageTokens, outputTokens, thinkSeconds, sharedDocuments, documentTokens, sharedShare, maxInputTokens));
      }
    }

    /** The public conversation trace's shape: 12,031 requests in an hour, ~12K in, ~343 out. */
    public static Shape mooncakeConversations() {
      return new Shape(12_031, 3600, 2, 10, 9_000, 800, 343, 90, 8, 2_500, 0.25, 32_000);
    }

    /** The same shape with {@code fraction} of the requests over {@code fraction} of the time (the same rate). */
    public Shape scaled(double requestsFraction, double timeFraction) {
      return new Shape(Math.max(1, (int) Math.round(requests * requestsFraction)), durationSeconds * timeFraction,
          minTurns, maxTurns, firstPromptTokens, messageTokens, outputTokens, thinkSeconds, sharedDocuments,
          documentTokens, sharedShare, maxInputTokens);
    }

    /** The same shape with {@code documents} shared documents of {@code tokens} opening {@code share} of them. */
    public Shape withSharedDocuments(int documents, int tokens, double share) {
      return new Shape(requests, durationSeconds, minTurns, maxTurns, firstPromptTokens, messageTokens,
          outputTokens, thinkSeconds, documents, tokens, share, maxInputTokens);
    }
  }

  private LongConversationTrace() {}

  /** The trace's entries, sorted by timestamp: about {@code shape.requests()} of them (a Poisson count). */
  public static List<MooncakeTrace.Entry> synthesize(Shape shape, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    int block = MooncakeTrace.TRACE_BLOCK_TOKENS;
    long nextId = 0;
    long[][] documents = new long[shape.sharedDocuments()][];
    for (int d = 0; d < documents.length; d++) {
      int tokens = (int) (shape.documentTokens() * (0.5 + r.nextDouble()));
      documents[d] = new long[Math.max(1, tokens / block)];
      for (int i = 0; i < documents[d].length; i++) {
        documents[d][i] = nextId++;
      }
    }
    double meanTurns = (shape.minTurns() + shape.maxTurns()) / 2.0;
    double conversationRate = shape.requests() / meanTurns / shape.durationSeconds();
    // Conversations start from well before the window so that it opens in steady state, as a window cut from a
    // running service does; only the turns sent within [0, duration) are kept.
    double warm = shape.maxTurns() * shape.thinkSeconds() * 3;
    List<MooncakeTrace.Entry> out = new ArrayList<>();
    double start = -warm;
    while (true) {
      start += exponential(r, 1 / conversationRate);
      if (start >= shape.durationSeconds()) {
        break;
      }
      int turns = shape.minTurns() + r.nextInt(shape.maxTurns() - shape.minTurns() + 1);
      long[] ids = new long[0];
      int input = 0;
      int previousOutput = 0;
      double t = start;
      long[] document = documents.length > 0 && r.nextDouble() < shape.sharedShare()
          ? documents[r.nextInt(documents.length)] : null;
      for (int turn = 0; turn < turns; turn++) {
        int previousInput = input;
        if (turn == 0) {
          input = clamp((int) exponentialAround(r, shape.firstPromptTokens()), 256, shape.maxInputTokens());
          if (document != null) {
            input = Math.min(shape.maxInputTokens(), Math.max(input, document.length * block + clamp(
                (int) exponential(r, shape.messageTokens()), 16, 8_000)));
          }
        } else {
          input = Math.min(shape.maxInputTokens(),
              input + previousOutput + clamp((int) exponential(r, shape.messageTokens()), 16, 8_000));
        }
        int blocks = (input + block - 1) / block;
        int kept = turn == 0 ? 0 : Math.min(previousInput / block, blocks);
        long[] next = Arrays.copyOf(ids, blocks);
        if (turn == 0 && document != null) {
          kept = Math.min(document.length, blocks);
          System.arraycopy(document, 0, next, 0, kept);
        }
        for (int b = kept; b < blocks; b++) {
          next[b] = nextId++;
        }
        ids = next;
        int output = clamp((int) exponential(r, shape.outputTokens()), 8, 4_000);
        previousOutput = output;
        if (t >= 0 && t < shape.durationSeconds()) {
          out.add(new MooncakeTrace.Entry((long) (t * 1000), input, output, ids));
        }
        t += exponential(r, shape.thinkSeconds());
      }
    }
    out.sort(Comparator.comparingLong(MooncakeTrace.Entry::timestampMs));
    return out;
  }

  /**
   * {@code java ... LongConversationTrace OUT [REQUESTS [SECONDS [SEED [DOCUMENTS DOCUMENT_TOKENS SHARE]]]]}: writes a
   * trace of the public shape, optionally with other shared documents.
   */
  public static void main(String[] args) throws IOException {
    TraceWriterMain.run("LongConversationTrace", "OUT.jsonl [REQUESTS [SECONDS [SEED [DOCUMENTS TOKENS SHARE]]]]", 7,
        args, a -> {
          Shape full = Shape.mooncakeConversations();
          Shape shape = full.scaled(TraceWriterMain.intArg(a, 1, full.requests()) / (double) full.requests(),
              TraceWriterMain.doubleArg(a, 2, full.durationSeconds()) / full.durationSeconds());
          if (a.length > 6) {
            shape = shape.withSharedDocuments(Integer.parseInt(a[4]), Integer.parseInt(a[5]), Double.parseDouble(a[6]));
          }
          return synthesize(shape, TraceWriterMain.longArg(a, 3, 1));
        }, entries -> String.format(Locale.ROOT, "%d requests over %.0f s, mean %.0f in / %.0f out tokens",
            entries.size(),
            (entries.get(entries.size() - 1).timestampMs() - entries.get(0).timestampMs()) / 1000.0,
            entries.stream().mapToInt(MooncakeTrace.Entry::inputLength).average().orElse(0),
            entries.stream().mapToInt(MooncakeTrace.Entry::outputLength).average().orElse(0)));
  }

  private static double exponential(SplittableRandom r, double mean) {
    return -Math.log(1 - r.nextDouble()) * mean;
  }

  /** A spread-out draw around {@code mean}: half fixed, half exponential. */
  private static double exponentialAround(SplittableRandom r, double mean) {
    return mean / 2 + exponential(r, mean / 2);
  }

  private static int clamp(int v, int lo, int hi) {
    return Math.max(lo, Math.min(hi, v));
  }
}
