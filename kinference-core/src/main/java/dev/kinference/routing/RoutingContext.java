package dev.kinference.routing;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.OffloadTier;
import dev.kinference.endpoint.Saturation;
import dev.kinference.prompt.TokenizedPrompt;
import dev.kinference.request.InferenceRequest;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * What scorers see of one routing decision: the request, its candidates, and per candidate the cached prefix and
 * the predicted time to first token. The router computes these once and every scorer shares them.
 *
 * <p>Not thread-safe, and reused by the router for the next decision on the same thread: use it only during the
 * {@link Scorer} call it is passed to.
 */
public final class RoutingContext {

  private InferenceRequest request;
  private TokenizedPrompt prompt;
  private EndpointState[] candidates = new EndpointState[16];
  private int count;
  private int[] matchedBlocks = new int[16];
  private int[] blockSizes = new int[16];
  private int[] cachedTokens = new int[16];
  private int[] offloadedTokens = new int[16];
  private int[] offloadedBlocks = new int[16];
  private double[] reloadSeconds = new double[16];
  private double[] predictedTtft = new double[16];
  private long nowNanos;
  private RandomGenerator random;
  private Saturation saturation = Saturation.DEFAULT;
  /** The share of this decision's candidates that are saturated; negative until first asked. */
  private double saturatedShare = -1;

  RoutingContext(InferenceRequest placeholderRequest, TokenizedPrompt placeholderPrompt, RandomGenerator random) {
    this.request = placeholderRequest;
    this.prompt = placeholderPrompt;
    this.random = random;
  }

  /** A context for testing scorers outside a router. */
  public static RoutingContext forTesting(InferenceRequest request, TokenizedPrompt prompt, EndpointState[] endpoints,
      int[] matchedBlocks, int[] blockSizes, double[] predictedTtftSeconds, long nowNanos, RandomGenerator random) {
    RoutingContext c = new RoutingContext(request, prompt, random);
    c.reset(request, prompt, nowNanos, random, Saturation.DEFAULT);
    c.ensureCapacity(endpoints.length);
    for (int i = 0; i < endpoints.length; i++) {
      c.candidates[i] = endpoints[i];
      c.blockSizes[i] = blockSizes[i];
      c.setMatched(i, matchedBlocks[i]);
      c.predictedTtft[i] = predictedTtftSeconds[i];
    }
    c.setCount(endpoints.length);
    return c;
  }

  void reset(InferenceRequest newRequest, TokenizedPrompt newPrompt, long now, RandomGenerator rnd,
      Saturation newSaturation) {
    this.request = newRequest;
    this.prompt = newPrompt;
    this.nowNanos = now;
    this.random = rnd;
    this.saturation = newSaturation;
    this.count = 0;
    this.saturatedShare = -1;
  }

  /** Ends a decision: the context keeps nothing of it, nor of the router that made it. */
  void release(InferenceRequest placeholderRequest, TokenizedPrompt placeholderPrompt) {
    reset(placeholderRequest, placeholderPrompt, 0, ThreadLocalRandom.current(), Saturation.DEFAULT);
    Arrays.fill(candidates, null);
  }

  void ensureCapacity(int n) {
    if (candidates.length < n) {
      int cap = Math.max(n, candidates.length * 2);
      candidates = Arrays.copyOf(candidates, cap);
      matchedBlocks = Arrays.copyOf(matchedBlocks, cap);
      blockSizes = Arrays.copyOf(blockSizes, cap);
      cachedTokens = Arrays.copyOf(cachedTokens, cap);
      offloadedTokens = Arrays.copyOf(offloadedTokens, cap);
      offloadedBlocks = Arrays.copyOf(offloadedBlocks, cap);
      reloadSeconds = Arrays.copyOf(reloadSeconds, cap);
      predictedTtft = Arrays.copyOf(predictedTtft, cap);
    }
  }

  EndpointState[] candidateArray() {
    return candidates;
  }

  int[] matchedArray() {
    return matchedBlocks;
  }

  void setCount(int n) {
    this.count = n;
    this.saturatedShare = -1;
  }

  void setBlockSize(int i, int blockSize) {
    blockSizes[i] = blockSize;
  }

  /**
   * Records {@code matched} cached GPU blocks for candidate i and derives its cached tokens: those blocks, then the
   * blocks after them its offload tier holds (if it has one), which it loads instead of prefilling.
   */
  void setMatched(int i, int matched) {
    matchedBlocks[i] = matched;
    // vLLM always computes the last prompt token itself, so a full hit still leaves one token to prefill.
    int limit = Math.max(0, prompt.tokenCount() - 1);
    int onGpu = Math.min(matched * blockSizes[i], limit);
    OffloadTier tier = candidates[i].offloadTier();
    int offloaded = 0;
    int more = 0;
    if (tier != null && onGpu < limit) {
      more = tier.blocksAfter(prompt.keys(blockSizes[i]), matched);
      offloaded = Math.min((matched + more) * blockSizes[i], limit) - onGpu;
    }
    offloadedBlocks[i] = more;
    cachedTokens[i] = Math.max(0, onGpu + offloaded);
    offloadedTokens[i] = offloaded;
    reloadSeconds[i] = offloaded > 0 ? Objects.requireNonNull(tier).reloadSeconds(offloaded) : 0;
  }

  /** Records the TTFT model's prediction for candidate i, to which the reload of its offloaded prefix is added. */
  void setPredictedTtft(int i, double seconds) {
    predictedTtft[i] = seconds + reloadSeconds[i];
  }

  public InferenceRequest request() {
    return request;
  }

  public TokenizedPrompt prompt() {
    return prompt;
  }

  public int promptTokens() {
    return prompt.tokenCount();
  }

  public int candidateCount() {
    return count;
  }

  public EndpointState candidate(int i) {
    return candidates[i];
  }

  /** Leading prompt blocks candidate i holds. */
  public int matchedBlocks(int i) {
    return matchedBlocks[i];
  }

  /** Full prompt blocks at candidate i's block size. */
  public int promptBlocks(int i) {
    return prompt.tokenCount() / blockSizes[i];
  }

  public int blockSize(int i) {
    return blockSizes[i];
  }

  /** Prompt tokens candidate i would serve from its prefix cache: its GPU blocks and its offload tier's. */
  public int cachedTokens(int i) {
    return cachedTokens[i];
  }

  /** Prompt blocks after its GPU hit ({@link #matchedBlocks}) that candidate i's offload tier holds in a row. */
  public int offloadedBlocks(int i) {
    return offloadedBlocks[i];
  }

  /** Of {@link #cachedTokens}, those candidate i would load from its offload tier (CPU memory) first. */
  public int offloadedTokens(int i) {
    return offloadedTokens[i];
  }

  /** Prompt tokens candidate i would have to prefill. */
  public int uncachedTokens(int i) {
    return prompt.tokenCount() - cachedTokens[i];
  }

  /**
   * The {@link TtftModel}'s prediction for candidate i, in seconds, plus the time to load its offloaded prefix
   * ({@link #offloadedTokens}) from its offload tier: a tier hit costs its reload, not its recomputation.
   */
  public double predictedTtftSeconds(int i) {
    return predictedTtft[i];
  }

  /** The router's clock, {@link System#nanoTime()} unless a virtual clock was configured. */
  public long nowNanos() {
    return nowNanos;
  }

  public RandomGenerator random() {
    return random;
  }

  /** The router's saturation thresholds. */
  public Saturation saturation() {
    return saturation;
  }

  /**
   * Whether there is a candidate and every candidate is saturated by {@link #saturation()} now: computed once per
   * decision, for the scorers that weigh differently once the fleet has no idle capacity left.
   */
  public boolean everyCandidateSaturated() {
    return saturatedShare() == 1.0;
  }

  /**
   * The share of the candidates saturated by {@link #saturation()} now, in [0, 1] (0 without candidates): computed
   * once per decision, for the scorers that weigh more the less idle capacity the fleet has left.
   */
  public double saturatedShare() {
    if (saturatedShare < 0) {
      int saturated = 0;
      for (int i = 0; i < count; i++) {
        if (saturation.isSaturated(candidates[i], nowNanos)) {
          saturated++;
        }
      }
      saturatedShare = count == 0 ? 0.0 : (double) saturated / count;
    }
    return saturatedShare;
  }
}
