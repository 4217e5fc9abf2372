package dev.kinference.sim.workload;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Synthetic Mooncake-format traces shaped like the public Mooncake FAST'25 {@code toolagent_trace.jsonl}: 23,608
 * requests over an hour with 8,596 input and 182 output tokens on average, in 512-token hash-id blocks (the figures
 * of the trace release's README). Tool-and-agent traffic is modelled as tasks of a few agents: each agent's prompt
 * (its instructions and tool definitions) opens all of its tasks, agents are picked by a Zipf law (so a few prefixes
 * are touched thousands of times), and a task runs steps whose prompts each repeat the previous step's prompt, its
 * answer and a tool's output (equal leading hash ids), after an exponential tool time.
 *
 * <p>Run {@code java -cp kinference.jar dev.kinference.sim.workload.ToolAgentTrace OUT [REQUESTS [SECONDS [SEED]]]}
 * to write one and print its statistics. Stateless and thread-safe.
 */
public final class ToolAgentTrace {

  /** Requests of the public tool-and-agent trace. */
  public static final int PUBLISHED_REQUESTS = 23_608;
  /** Mean input tokens of the public tool-and-agent trace. */
  public static final int PUBLISHED_MEAN_INPUT = 8_596;
  /** Mean output tokens of the public tool-and-agent trace. */
  public static final int PUBLISHED_MEAN_OUTPUT = 182;

  /**
   * The trace's shape.
   *
   * @param requests requests in the trace, about
   * @param durationSeconds span over which the requests fall
   * @param agents agents, each with its own prompt opening all its tasks
   * @param agentPromptTokens mean agent prompt (each between half and one and a half times it)
   * @param zipfExponent popularity of the agents: agent {@code i} is picked with weight {@code 1 / (i + 1)^s}
   * @param minSteps fewest steps of a task
   * @param maxSteps most steps of a task
   * @param taskTokens mean task input of a task's first step (exponential)
   * @param toolOutputTokens mean tool output appended each later step (exponential)
   * @param outputTokens mean answer (exponential)
   * @param toolSeconds mean time between a step and the next (exponential)
   * @param maxInputTokens longest prompt (a server's context)
   */
  public record Shape(int requests, double durationSeconds, int agents, int agentPromptTokens, double zipfExponent,
      int minSteps, int maxSteps, int taskTokens, int toolOutputTokens, int outputTokens, double toolSeconds,
      int maxInputTokens) {

    public Shape {
      if (requests < 1 || !(durationSeconds > 0) || agents < 1 || agentPromptTokens < 1 || zipfExponent < 0
          || minSteps < 1 || maxSteps < minSteps || taskTokens < 1 || toolOutputTokens < 1 || outputTokens < 1
          || toolSeconds < 0 || maxInputTokens < 1024) {
        throw new IllegalArgumentException(String.format(Locale.ROOT, "invalid tool-agent trace shape: requests %d, "
            + "duration %s s, %d agents of %d tokens (zipf %s), steps %d-%d, task %d, tool output %d, output %d, "
            + "tool time %s s, max input %d", requests, durationSeconds, agents, agentPromptTokens, zipfExponent,
            minSteps, maxSteps, taskTokens, toolOutputTokens, outputTokens, toolSeconds, maxInputTokens));
      }
    }

    /** The public trace's shape: 23,608 requests in an hour, ~8.6K in, ~182 out. */
    public static Shape mooncakeToolAgent() {
      return new Shape(PUBLISHED_REQUESTS, 3600, 32, 2_000, 1.2, 1, 4, 5_300, 1_200, PUBLISHED_MEAN_OUTPUT, 6,
          32_000);
    }

    /** The same shape with {@code requestsFraction} of the requests over {@code timeFraction} of the time. */
    public Shape scaled(double requestsFraction, double timeFraction) {
      return new Shape(Math.max(1, (int) Math.round(requests * requestsFraction)), durationSeconds * timeFraction,
          agents, agentPromptTokens, zipfExponent, minSteps, maxSteps, taskTokens, toolOutputTokens, outputTokens,
          toolSeconds, maxInputTokens);
    }
  }

  private ToolAgentTrace() {}

  /** The trace's entries, sorted by timestamp: about {@code shape.requests()} of them (a Poisson count). */
  public static List<MooncakeTrace.Entry> synthesize(Shape shape, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    int block = MooncakeTrace.TRACE_BLOCK_TOKENS;
    long nextId = 0;
    long[][] agentBlocks = new long[shape.agents()][];
    double[] cumulative = new double[shape.agents()];
    double total = 0;
    for (int a = 0; a < agentBlocks.length; a++) {
      int tokens = (int) (shape.agentPromptTokens() * (0.5 + r.nextDouble()));
      agentBlocks[a] = new long[Math.max(1, tokens / block)];
      for (int i = 0; i < agentBlocks[a].length; i++) {
        agentBlocks[a][i] = nextId++;
      }
      total += 1 / Math.pow(a + 1, shape.zipfExponent());
      cumulative[a] = total;
    }
    double meanSteps = (shape.minSteps() + shape.maxSteps()) / 2.0;
    double taskRate = shape.requests() / meanSteps / shape.durationSeconds();
    // tasks start from before the window so that it opens in steady state; only steps inside it are kept
    double start = -shape.maxSteps() * shape.toolSeconds() * 3;
    List<MooncakeTrace.Entry> out = new ArrayList<>();
    while (true) {
      start += exponential(r, 1 / taskRate);
      if (start >= shape.durationSeconds()) {
        break;
      }
      int pick = Arrays.binarySearch(cumulative, r.nextDouble() * total);
      long[] agent = agentBlocks[Math.min(agentBlocks.length - 1, pick < 0 ? -pick - 1 : pick)];
      int steps = shape.minSteps() + r.nextInt(shape.maxSteps() - shape.minSteps() + 1);
      long[] ids = new long[0];
      int input = 0;
      int previousOutput = 0;
      double t = start;
      for (int step = 0; step < steps; step++) {
        int previousInput = input;
        int kept;
        if (step == 0) {
          input = Math.min(shape.maxInputTokens(), agent.length * block
              + clamp(exponential(r, shape.taskTokens()), 16, 16 * shape.taskTokens()));
          kept = Math.min(agent.length, ceilDiv(input, block));
        } else {
          int added = previousOutput + clamp(exponential(r, shape.toolOutputTokens()), 16,
              16 * shape.toolOutputTokens());
          if (input + added > shape.maxInputTokens()) {
            break; // the agent would compact its context here; the task ends instead
          }
          input += added;
          kept = Math.min(previousInput / block, ceilDiv(input, block));
        }
        long[] next = Arrays.copyOf(step == 0 ? agent : ids, ceilDiv(input, block));
        for (int b = kept; b < next.length; b++) {
          next[b] = nextId++;
        }
        ids = next;
        int output = clamp(exponential(r, shape.outputTokens()), 4, 16 * shape.outputTokens());
        previousOutput = output;
        if (t >= 0 && t < shape.durationSeconds()) {
          out.add(new MooncakeTrace.Entry((long) (t * 1000), input, output, ids));
        }
        t += exponential(r, shape.toolSeconds());
      }
    }
    out.sort(Comparator.comparingLong(MooncakeTrace.Entry::timestampMs));
    return out;
  }

  /** {@code java ... ToolAgentTrace OUT [REQUESTS [SECONDS [SEED]]]}: writes a trace of the public shape. */
  public static void main(String[] args) throws IOException {
    TraceWriterMain.run("ToolAgentTrace", "OUT.jsonl [REQUESTS [SECONDS [SEED]]]", 4, args, a -> {
      Shape full = Shape.mooncakeToolAgent();
      Shape shape = full.scaled(TraceWriterMain.intArg(a, 1, full.requests()) / (double) full.requests(),
          TraceWriterMain.doubleArg(a, 2, full.durationSeconds()) / full.durationSeconds());
      return synthesize(shape, TraceWriterMain.longArg(a, 3, 1));
    }, entries -> TraceStatistics.of(entries).toString());
  }

  private static double exponential(SplittableRandom r, double mean) {
    return -Math.log(1 - r.nextDouble()) * mean;
  }

  private static int clamp(double v, int lo, int hi) {
    return (int) Math.max(lo, Math.min(hi, v));
  }

  private static int ceilDiv(int a, int b) {
    return (a + b - 1) / b;
  }
}
