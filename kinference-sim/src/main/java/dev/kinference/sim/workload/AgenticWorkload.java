package dev.kinference.sim.workload;

import dev.kinference.request.InferenceRequest;
import dev.kinference.sim.engine.RequestOutcome;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * Coding-agent sessions (after inference-perf's code-generation entry): every session starts with the agent's shared
 * system prompt and its own context (repository files, the task) of lognormal size, then runs {@code minTurns} to
 * {@code maxTurns} turns. Each turn sends the whole context; the model's answer (a tool call) is scripted, a tool
 * runs for an exponential time, and the next turn's prompt is the previous prompt, the answer exactly as the server
 * generated and cached it, and the tool's output: the prefix grows turn by turn.
 *
 * <p>Subagents: on a turn of a top-level session, with the shape's fork chance, the agent forks a subagent that
 * starts from the parent's context at that moment (prompt and answer) plus its task, under its own session id, and
 * runs turns of its own (it forks no further). A fork waits for the next session the load generator starts: in a
 * closed loop the next free client takes it, in an open loop the next arrival. So a subagent is always a session of
 * the sweep, and at most {@value #MAX_PENDING_FORKS} wait (older ones are dropped, as their parents' caches are
 * long gone).
 *
 * <p>Prompts are token ids (the simulator's servers take {@code prompt_token_ids}), drawn from the seed: the k-th
 * top-level session is the same for every router of a run, whatever the order of completions. Not thread-safe.
 */
public final class AgenticWorkload implements Workload {

  /** Forks waiting for a session slot, at most. */
  static final int MAX_PENDING_FORKS = 256;

  private static final int TOKEN_RANGE = 1 << 30;

  private final String model;
  private final AgenticShape shape;
  private final long seed;
  private final int[] systemPrompt;
  private final ArrayDeque<Fork> forks = new ArrayDeque<>();
  private long topLevelSessions;

  /** A subagent waiting to start: the parent's context at the fork and where it came from. */
  @SuppressWarnings("ArrayRecordComponent") // handed over once, never mutated
  private record Fork(int[] context, String sessionId, long forkSeed) {}

  public AgenticWorkload(String model, AgenticShape shape, long seed) {
    this.model = Objects.requireNonNull(model, "model");
    this.shape = Objects.requireNonNull(shape, "shape");
    this.seed = seed;
    this.systemPrompt = randomTokens(new SplittableRandom(seed * 0x9E3779B97F4A7C15L + 17),
        shape.systemPromptTokens());
  }

  @Override
  public String name() {
    return "agentic";
  }

  @Override
  public String describe() {
    return String.format(Locale.ROOT, "coding-agent sessions: %d-token shared system prompt, lognormal contexts of %d "
        + "tokens on average, %d-%d turns of %d-token answers and %d-token tool outputs, tool latency %.1f s, "
        + "subagents forked on %d%% of turns (up to %d turns), sessions up to %d tokens", shape.systemPromptTokens(),
        shape.meanContextTokens(), shape.minTurns(), shape.maxTurns(), shape.answerTokens(), shape.toolOutputTokens(),
        shape.toolLatency().toNanos() / 1e9, shape.forkPercent(), shape.subagentMaxTurns(),
        shape.maxContextTokens());
  }

  /** The shape this workload draws from. */
  public AgenticShape shape() {
    return shape;
  }

  /** Subagents forked and not yet started. */
  public int pendingForks() {
    return forks.size();
  }

  @Override
  public Session newSession(RandomGenerator random, long number) {
    Fork fork = forks.pollFirst();
    if (fork != null) {
      SplittableRandom r = new SplittableRandom(fork.forkSeed());
      int task = clamp(exponential(r, shape.toolOutputTokens() / 2.0), 32, 4 * shape.toolOutputTokens());
      int[] context = concat(fork.context(), randomTokens(r, task));
      int turns = shape.minTurns() + r.nextInt(shape.subagentMaxTurns() - shape.minTurns() + 1);
      return new AgentSession(fork.sessionId(), context, turns, false, r);
    }
    long index = topLevelSessions++;
    SplittableRandom r = new SplittableRandom(seed * 0x2545F4914F6CDD1DL + index * 0x9E3779B97F4A7C15L);
    int room = shape.maxContextTokens() / 2 - shape.systemPromptTokens();
    int own = clamp(lognormal(r, shape.meanContextTokens()), 256, Math.max(256, room));
    int[] context = concat(systemPrompt, randomTokens(r, own));
    int turns = shape.minTurns() + r.nextInt(shape.maxTurns() - shape.minTurns() + 1);
    return new AgentSession("agent-" + index, context, turns, true, r);
  }

  private final class AgentSession implements Session {
    private final String id;
    private final int turns;
    private final boolean mayFork;
    private final SplittableRandom random;
    private int[] context;
    private int turn;
    private int forked;

    AgentSession(String id, int[] context, int turns, boolean mayFork, SplittableRandom random) {
      this.id = id;
      this.context = context;
      this.turns = turns;
      this.mayFork = mayFork;
      this.random = random;
    }

    @Override
    public @Nullable ClientRequest nextRequest() {
      if (turn >= turns) {
        return null;
      }
      int answerLength = clamp(exponential(random, shape.answerTokens()), 16, 8 * shape.answerTokens());
      if (context.length + answerLength > shape.maxContextTokens()) {
        return null; // the agent would compact its context here; the session ends instead
      }
      int[] answer = randomTokens(random, answerLength);
      answer[answerLength - 1] = Prompts.END_OF_TURN;
      int[] prompt = context;
      InferenceRequest request = InferenceRequest.builder(model).promptTokenIds(prompt).maxTokens(answerLength)
          .sessionId(id).build();
      ClientRequest r = new ClientRequest(id + "-t" + turn, request, prompt, Prompts.tokenText(prompt), answerLength,
          answer, "agentic", null, id);
      int[] answered = concat(prompt, answer);
      if (mayFork && random.nextInt(100) < shape.forkPercent()) {
        if (forks.size() >= MAX_PENDING_FORKS) {
          forks.pollFirst();
        }
        forks.addLast(new Fork(answered, id + "-sub" + forked++, random.nextLong()));
      }
      int toolOutput = clamp(exponential(random, shape.toolOutputTokens()), 32, 8 * shape.toolOutputTokens());
      context = concat(answered, randomTokens(random, toolOutput));
      turn++;
      return r;
    }

    @Override
    public long thinkTimeNanos(RequestOutcome outcome) {
      return (long) exponential(random, (double) shape.toolLatency().toNanos());
    }
  }

  private static int[] randomTokens(SplittableRandom r, int n) {
    int[] out = new int[n];
    for (int i = 0; i < n; i++) {
      out[i] = r.nextInt(TOKEN_RANGE);
    }
    return out;
  }

  private static int[] concat(int[] a, int[] b) {
    int[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  /** Lognormal with the given mean: mu = ln(mean) - sigma^2 / 2. */
  private static int lognormal(SplittableRandom r, int mean) {
    double sigma = AgenticShape.CONTEXT_SIGMA;
    double mu = Math.log(mean) - sigma * sigma / 2;
    return (int) Math.min(Integer.MAX_VALUE, Math.round(Math.exp(mu + sigma * r.nextGaussian())));
  }

  private static double exponential(SplittableRandom r, double mean) {
    return -Math.log(1 - r.nextDouble()) * mean;
  }

  private static int clamp(double v, int lo, int hi) {
    return (int) Math.max(lo, Math.min(hi, v));
  }
}
