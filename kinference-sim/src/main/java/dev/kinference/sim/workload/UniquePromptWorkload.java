package dev.kinference.sim.workload;

import dev.kinference.request.InferenceRequest;
import java.util.Locale;
import java.util.Objects;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * Prompts that share nothing: each of {@code promptTokens} tokens on average (uniform within +-50%), answered in
 * {@code outputTokens} tokens. Not thread-safe.
 */
public final class UniquePromptWorkload implements Workload {

  private final String model;
  private final int promptTokens;
  private final int outputTokens;
  private final @Nullable String tenant;
  private final String name;
  private final long seed;

  public UniquePromptWorkload(String model, int promptTokens, int outputTokens, @Nullable String tenant,
      long seed) {
    this.model = Objects.requireNonNull(model, "model");
    if (promptTokens < 2 || outputTokens < 1) {
      throw new IllegalArgumentException("invalid unique-prompt parameters");
    }
    this.promptTokens = promptTokens;
    this.outputTokens = outputTokens;
    this.tenant = tenant;
    this.name = tenant == null ? "unique" : "unique/" + tenant;
    this.seed = seed;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String describe() {
    return String.format(Locale.ROOT, "%d-token prompts (+-50%%), %d output, nothing shared", promptTokens,
        outputTokens);
  }

  @Override
  public Session newSession(RandomGenerator random, long number) {
    int half = promptTokens / 2;
    int length = promptTokens - half + random.nextInt(2 * half + 1);
    InferenceRequest request = InferenceRequest.builder(model).maxTokens(outputTokens).tenant(tenant)
        .user(Prompts.text(seed * 0x9E3779B97F4A7C15L + number, Math.max(1, length - 3))).build();
    ClientRequest r = new ClientRequest(name + "-" + number, request, Prompts.tokens(request),
        Prompts.routingText(request), outputTokens, null, name, tenant, null);
    return new SharedPrefixWorkload.SingleRequestSession(r);
  }
}
