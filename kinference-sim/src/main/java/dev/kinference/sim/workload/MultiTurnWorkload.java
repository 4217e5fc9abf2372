package dev.kinference.sim.workload;

import dev.kinference.request.InferenceRequest;
import dev.kinference.request.Message;
import dev.kinference.sim.engine.RequestOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * Chat conversations whose history grows: each starts with one of {@code systemPrompts} system prompts of
 * {@code systemPromptTokens} tokens (an application's instructions, shared by its conversations), then
 * {@code minTurns} to {@code maxTurns} turns of a user message of about {@code userTokens} tokens answered in
 * {@code answerTokens} tokens, the user thinking for an exponentially distributed time (mean {@code thinkTime})
 * between an answer and the next message. Every request carries the whole conversation and its session id; the
 * answers are scripted, so the next turn's prompt begins with exactly the tokens the server generated and cached.
 * Not thread-safe.
 */
public final class MultiTurnWorkload implements Workload {

  private final String model;
  private final MultiTurnShape shape;
  private final @Nullable String tenant;
  private final String name;
  private final long seed;
  private final String[] systemTexts;

  public MultiTurnWorkload(String model, int systemPrompts, int systemPromptTokens, int minTurns, int maxTurns,
      int userTokens, int answerTokens, java.time.Duration thinkTime, @Nullable String tenant, long seed) {
    this(model, new MultiTurnShape(systemPrompts, systemPromptTokens, minTurns, maxTurns, userTokens, answerTokens,
        thinkTime), tenant, seed);
  }

  public MultiTurnWorkload(String model, MultiTurnShape shape, @Nullable String tenant, long seed) {
    this.model = Objects.requireNonNull(model, "model");
    this.shape = Objects.requireNonNull(shape, "shape");
    this.tenant = tenant;
    this.name = tenant == null ? "multi-turn" : "multi-turn/" + tenant;
    this.seed = seed;
    this.systemTexts = new String[shape.systemPrompts()];
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String describe() {
    return String.format(Locale.ROOT, "%d-%d turns of %d-token messages and %d-token answers, %d system prompts of "
        + "%d tokens, think time %.1f s", shape.minTurns(), shape.maxTurns(), shape.userTokens(),
        shape.answerTokens(), shape.systemPrompts(), shape.systemPromptTokens(), shape.thinkTime().toNanos() / 1e9);
  }

  @Override
  public Session newSession(RandomGenerator random, long number) {
    int app = random.nextInt(shape.systemPrompts());
    if (systemTexts[app] == null) {
      systemTexts[app] = Prompts.text(seed * 31 + app * 1_000_033L, shape.systemPromptTokens());
    }
    int turns = shape.minTurns() + random.nextInt(shape.maxTurns() - shape.minTurns() + 1);
    String system = shape.systemPromptTokens() > 0 ? systemTexts[app] : null;
    return new Conversation(name + "-" + number, system, turns, random,
        seed ^ (number * 0x9E3779B97F4A7C15L));
  }

  private final class Conversation implements Session {
    private final String id;
    private final List<Message> history = new ArrayList<>();
    private final int turns;
    private final RandomGenerator random;
    private final long textSeed;
    private int turn;

    Conversation(String id, @Nullable String system, int turns, RandomGenerator random, long textSeed) {
      this.id = id;
      this.turns = turns;
      this.random = random;
      this.textSeed = textSeed;
      if (system != null) {
        history.add(Message.text("system", system));
      }
    }

    @Override
    public @Nullable ClientRequest nextRequest() {
      if (turn >= turns) {
        return null;
      }
      int length = Math.max(1, shape.userTokens() / 2 + random.nextInt(shape.userTokens() + 1));
      history.add(Message.text("user", Prompts.text(textSeed + 2L * turn, length)));
      String answer = Prompts.text(textSeed + 2L * turn + 1, Math.max(1, shape.answerTokens() - 1));
      InferenceRequest request = InferenceRequest.builder(model).messages(history).maxTokens(shape.answerTokens())
          .tenant(tenant).sessionId(id).build();
      int[] scripted = Prompts.answerTokens(answer);
      ClientRequest r = new ClientRequest(id + "-t" + turn, request, Prompts.tokens(request),
          Prompts.routingText(request), shape.answerTokens(), scripted, name, tenant, id);
      history.add(Message.text("assistant", answer));
      turn++;
      return r;
    }

    @Override
    public long thinkTimeNanos(RequestOutcome outcome) {
      if (shape.thinkTime().isZero()) {
        return 0;
      }
      return (long) (-Math.log(1 - random.nextDouble()) * shape.thinkTime().toNanos());
    }
  }
}
