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
  private final int systemPrompts;
  private final int systemPromptTokens;
  private final int minTurns;
  private final int maxTurns;
  private final int userTokens;
  private final int answerTokens;
  private final long meanThinkNanos;
  private final @Nullable String tenant;
  private final String name;
  private final long seed;
  private final String[] systemTexts;

  public MultiTurnWorkload(String model, int systemPrompts, int systemPromptTokens, int minTurns, int maxTurns,
      int userTokens, int answerTokens, java.time.Duration thinkTime, @Nullable String tenant, long seed) {
    this.model = Objects.requireNonNull(model, "model");
    if (systemPrompts < 1 || systemPromptTokens < 0 || minTurns < 1 || maxTurns < minTurns || userTokens < 1
        || answerTokens < 1 || thinkTime.isNegative()) {
      throw new IllegalArgumentException("invalid multi-turn parameters");
    }
    this.systemPrompts = systemPrompts;
    this.systemPromptTokens = systemPromptTokens;
    this.minTurns = minTurns;
    this.maxTurns = maxTurns;
    this.userTokens = userTokens;
    this.answerTokens = answerTokens;
    this.meanThinkNanos = thinkTime.toNanos();
    this.tenant = tenant;
    this.name = tenant == null ? "multi-turn" : "multi-turn/" + tenant;
    this.seed = seed;
    this.systemTexts = new String[systemPrompts];
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String describe() {
    return String.format(Locale.ROOT, "%d-%d turns of %d-token messages and %d-token answers, %d system prompts of "
        + "%d tokens, think time %.1f s", minTurns, maxTurns, userTokens, answerTokens, systemPrompts,
        systemPromptTokens, meanThinkNanos / 1e9);
  }

  @Override
  public Session newSession(RandomGenerator random, long number) {
    int app = random.nextInt(systemPrompts);
    if (systemTexts[app] == null) {
      systemTexts[app] = Prompts.text(seed * 31 + app * 1_000_033L, systemPromptTokens);
    }
    int turns = minTurns + random.nextInt(maxTurns - minTurns + 1);
    return new Conversation(name + "-" + number, systemPromptTokens > 0 ? systemTexts[app] : null, turns, random,
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
      int length = Math.max(1, userTokens / 2 + random.nextInt(userTokens + 1));
      history.add(Message.text("user", Prompts.text(textSeed + 2L * turn, length)));
      String answer = Prompts.text(textSeed + 2L * turn + 1, Math.max(1, answerTokens - 1));
      InferenceRequest request = InferenceRequest.builder(model).messages(history).maxTokens(answerTokens)
          .tenant(tenant).sessionId(id).build();
      int[] scripted = Prompts.answerTokens(answer);
      ClientRequest r = new ClientRequest(id + "-t" + turn, request, Prompts.tokens(request),
          Prompts.routingText(request), answerTokens, scripted, name, tenant, id);
      history.add(Message.text("assistant", answer));
      turn++;
      return r;
    }

    @Override
    public long thinkTimeNanos(RequestOutcome outcome) {
      if (meanThinkNanos == 0) {
        return 0;
      }
      return (long) (-Math.log(1 - random.nextDouble()) * meanThinkNanos);
    }
  }
}
