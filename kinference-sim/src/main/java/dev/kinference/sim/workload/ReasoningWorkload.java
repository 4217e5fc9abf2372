package dev.kinference.sim.workload;

import dev.kinference.request.InferenceRequest;
import java.util.Locale;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * A reasoning model's traffic: short prompts that share nothing ({@code promptTokens} on average, uniform within
 * +-50%) and long answers, lognormal with mean {@code meanOutputTokens} (sigma 0.6, so a tenth of them run past
 * twice the mean), cut to {@code maxOutputTokens}. Decode, not prefill, fills the servers: KV memory held by long
 * generations decides where a request can start. Not thread-safe.
 */
public final class ReasoningWorkload implements Workload {

  private static final double SIGMA = 0.6;

  private final String model;
  private final int promptTokens;
  private final int meanOutputTokens;
  private final int maxOutputTokens;
  private final long seed;

  /**
   * @throws IllegalArgumentException if a length is below 2 (prompts) or 1 (outputs), or the cap is below the mean
   */
  public ReasoningWorkload(String model, int promptTokens, int meanOutputTokens, int maxOutputTokens, long seed) {
    this.model = Objects.requireNonNull(model, "model");
    if (promptTokens < 2 || meanOutputTokens < 1 || maxOutputTokens < meanOutputTokens) {
      throw new IllegalArgumentException("invalid reasoning parameters: prompts " + promptTokens + ", outputs "
          + meanOutputTokens + " on average, at most " + maxOutputTokens);
    }
    this.promptTokens = promptTokens;
    this.meanOutputTokens = meanOutputTokens;
    this.maxOutputTokens = maxOutputTokens;
    this.seed = seed;
  }

  @Override
  public String name() {
    return "reasoning";
  }

  @Override
  public String describe() {
    return String.format(Locale.ROOT, "%d-token prompts (+-50%%), lognormal outputs of %d tokens on average (at most "
        + "%d), nothing shared", promptTokens, meanOutputTokens, maxOutputTokens);
  }

  @Override
  public Session newSession(RandomGenerator random, long number) {
    int half = promptTokens / 2;
    int length = promptTokens - half + random.nextInt(2 * half + 1);
    // lognormal with the given mean: mu = ln(mean) - sigma^2 / 2
    double mu = Math.log(meanOutputTokens) - SIGMA * SIGMA / 2;
    long drawn = Math.round(Math.exp(mu + SIGMA * random.nextGaussian()));
    int output = (int) Math.max(1, Math.min(maxOutputTokens, drawn));
    InferenceRequest request = InferenceRequest.builder(model).maxTokens(output)
        .user(Prompts.text(seed * 0x9E3779B97F4A7C15L + number, Math.max(1, length - 3))).build();
    ClientRequest r = new ClientRequest("reasoning-" + number, request, Prompts.tokens(request),
        Prompts.routingText(request), output, null, "reasoning", null, null);
    return new SharedPrefixWorkload.SingleRequestSession(r);
  }
}
