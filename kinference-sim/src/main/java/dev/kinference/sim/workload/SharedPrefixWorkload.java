package dev.kinference.sim.workload;

import dev.kinference.request.InferenceRequest;
import java.util.Locale;
import java.util.Objects;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * inference-perf's {@code shared_prefix} data: {@code groups} system prompts of {@code systemPromptTokens} tokens,
 * each with {@code promptsPerGroup} users asking their own question of {@code questionTokens} tokens, answered in
 * {@code outputTokens} tokens. Each session is one request for a (group, user) prompt drawn uniformly, so a prompt
 * may be asked again. Not thread-safe.
 */
public final class SharedPrefixWorkload implements Workload {

  private final String model;
  private final SharedPrefixShape shape;
  private final @Nullable String tenant;
  private final String name;
  private final long seed;
  private final Prompt[] prompts;

  @SuppressWarnings("ArrayRecordComponent") // private, never mutated
  private record Prompt(InferenceRequest request, int[] tokens, String text) {}

  public SharedPrefixWorkload(String model, int groups, int promptsPerGroup, int systemPromptTokens,
      int questionTokens, int outputTokens, @Nullable String tenant, long seed) {
    this(model, new SharedPrefixShape(groups, promptsPerGroup, systemPromptTokens, questionTokens, outputTokens),
        tenant, seed);
  }

  public SharedPrefixWorkload(String model, SharedPrefixShape shape, @Nullable String tenant, long seed) {
    this.model = Objects.requireNonNull(model, "model");
    this.shape = Objects.requireNonNull(shape, "shape");
    this.tenant = tenant;
    this.name = tenant == null ? "shared-prefix" : "shared-prefix/" + tenant;
    this.seed = seed;
    this.prompts = new Prompt[shape.groups() * shape.promptsPerGroup()];
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String describe() {
    return String.format(Locale.ROOT, "%d groups x %d users, %d-token system prompt + %d-token question, %d output",
        shape.groups(), shape.promptsPerGroup(), shape.systemPromptTokens(), shape.questionTokens(),
        shape.outputTokens());
  }

  @Override
  public Session newSession(RandomGenerator random, long number) {
    int g = random.nextInt(shape.groups());
    int p = random.nextInt(shape.promptsPerGroup());
    Prompt prompt = prompt(g, p);
    String id = name + "-" + number;
    ClientRequest request = new ClientRequest(id, prompt.request, prompt.tokens, prompt.text, shape.outputTokens(),
        null,
        name, tenant, null);
    return new SingleRequestSession(request);
  }

  private Prompt prompt(int group, int user) {
    int index = group * shape.promptsPerGroup() + user;
    Prompt p = prompts[index];
    if (p == null) {
      InferenceRequest.Builder b = InferenceRequest.builder(model).maxTokens(shape.outputTokens()).tenant(tenant);
      if (shape.systemPromptTokens() > 0) {
        b.system(Prompts.text(seed * 1_000_003L + group, shape.systemPromptTokens()));
      }
      b.user(Prompts.text(seed * 7_000_003L + index * 31L + 17, shape.questionTokens()));
      InferenceRequest request = b.build();
      p = new Prompt(request, Prompts.tokens(request), Prompts.routingText(request));
      prompts[index] = p;
    }
    return p;
  }

  /** A session of one request. */
  static final class SingleRequestSession implements Session {
    private @Nullable ClientRequest request;

    SingleRequestSession(ClientRequest request) {
      this.request = request;
    }

    @Override
    public @Nullable ClientRequest nextRequest() {
      ClientRequest r = request;
      request = null;
      return r;
    }
  }
}
