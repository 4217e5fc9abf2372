package dev.kinference.policy.engine;

import dev.kinference.endpoint.Fleet;
import dev.kinference.endpoint.Saturation;
import dev.kinference.plugin.Plugins;
import dev.kinference.policy.PolicyEngine;
import dev.kinference.policy.PolicyVerdict;
import dev.kinference.policy.classify.BuiltinComplexityClassifier;
import dev.kinference.policy.classify.ComplexityClassifier;
import dev.kinference.policy.classify.PersonalData;
import dev.kinference.policy.classify.PersonalDataDetector;
import dev.kinference.policy.classify.PersonalDataDetectors;
import dev.kinference.policy.classify.PromptClass;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.prompt.Tokenizer;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.TtftModel;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link PolicyEngine} of a YAML policy configuration, named {@code yaml}. For each request it checks the
 * tenant and model, resolves the model (alias or pool), runs the rules of every {@link
 * dev.kinference.policy.model.InferencePolicy} in order, applies the built-in guarantees (personal data never
 * leaves local pools; overflow to fallbacks when the target pool is saturated) and returns a verdict whose trace
 * names every rule that matched. The order and the conflict rules are documented in the module README, section
 * "Evaluation order".
 *
 * <p>The configuration is read from a supplier on every request (a fixed {@link PolicyConfig}, or a {@link
 * dev.kinference.policy.config.PolicyWatcher} that hot-reloads it), so one evaluation sees one configuration.
 *
 * <p>Thread-safe and lock-free; {@link #evaluate} never throws. Rate limits and budgets are not part of the
 * verdict: they need a reservation that is settled later, see {@link Governance#reserve}.
 */
public final class YamlPolicyEngine implements PolicyEngine {

  private static final Logger log = LoggerFactory.getLogger(YamlPolicyEngine.class);

  /** System property (or, upper-cased with underscores, environment variable) read by the no-argument constructor. */
  public static final String PATH_PROPERTY = "kinference.policy.path";

  private final Supplier<PolicyConfig> config;
  private final PersonalDataDetector personalDataDetector;
  private final ComplexityClassifier complexityClassifier;
  private final Tokenizer tokenizer;
  private final TtftModel ttftModel;
  private final Saturation saturation;
  private final LongSupplier ticker;
  private final @Nullable RandomGenerator random;
  private volatile @Nullable Rules rules;

  private record Rules(PolicyConfig config, List<PolicyConfig.RuleRef> list) {}

  /**
   * An engine for {@link java.util.ServiceLoader}: its configuration is loaded from the files or directories in
   * the system property {@value #PATH_PROPERTY} (or the environment variable {@code KINFERENCE_POLICY_PATH}),
   * separated by the path separator; without either it is empty and lets every request through unchanged.
   *
   * @throws dev.kinference.policy.config.InvalidConfigException if the configuration has errors
   */
  public YamlPolicyEngine() {
    this(new Builder().config(fromEnvironment()));
  }

  private YamlPolicyEngine(Builder b) {
    this.config = Objects.requireNonNull(b.config, "config");
    this.personalDataDetector = b.personalDataDetector != null ? b.personalDataDetector
        : PersonalDataDetectors.fromEnvironment();
    this.complexityClassifier = b.complexityClassifier != null ? b.complexityClassifier
        : Plugins.load(ComplexityClassifier.class).providers().stream().findFirst()
            .orElseGet(BuiltinComplexityClassifier::new);
    this.tokenizer = b.tokenizer;
    this.ttftModel = b.ttftModel;
    this.saturation = b.saturation;
    this.ticker = b.ticker;
    this.random = b.random;
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public String name() {
    return "yaml";
  }

  /** The configuration the next evaluation will use. */
  public PolicyConfig config() {
    return config.get();
  }

  @Override
  public PolicyVerdict evaluate(InferenceRequest request, Fleet.Snapshot fleet) {
    return evaluate(request, fleet, false).verdict();
  }

  /**
   * The verdict with the facts it was based on, every classifier run (for {@code kinference check --explain} and
   * for tests).
   */
  public Explanation explain(InferenceRequest request, Fleet.Snapshot fleet) {
    return evaluate(request, fleet, true);
  }

  /**
   * A verdict and the facts behind it.
   *
   * @param verdict the verdict
   * @param promptTokens the estimated input tokens, or -1 when not needed
   * @param personalData what the detector found, or null when it was not needed
   * @param promptClass the complexity classifier's judgement, or null when it was not needed
   */
  public record Explanation(PolicyVerdict verdict, int promptTokens, @Nullable PersonalData personalData,
      @Nullable PromptClass promptClass) {}

  private Explanation evaluate(InferenceRequest request, Fleet.Snapshot fleet, boolean explaining) {
    PolicyConfig cfg = config.get();
    Evaluation e = new Evaluation(this, cfg, request, fleet, ticker.getAsLong(), explaining);
    PolicyVerdict v;
    try {
      v = e.run();
    } catch (RuntimeException ex) {
      log.error("Policy evaluation failed for {}", request, ex);
      e.trace.add("builtin/error: " + ex);
      v = new PolicyVerdict.Reject(500, "policy evaluation failed: " + ex.getClass().getSimpleName(), null,
          e.trace);
    }
    return new Explanation(v, explaining ? e.facts.promptTokens() : -1, e.facts.personalDataIfKnown(),
        e.facts.promptClassIfKnown());
  }

  List<PolicyConfig.RuleRef> rules(PolicyConfig cfg) {
    Rules r = rules;
    if (r == null || r.config() != cfg) {
      r = new Rules(cfg, cfg.rules());
      rules = r;
    }
    return r.list();
  }

  Tokenizer tokenizer() {
    return tokenizer;
  }

  PersonalDataDetector personalDataDetector() {
    return personalDataDetector;
  }

  ComplexityClassifier complexityClassifier() {
    return complexityClassifier;
  }

  TtftModel ttftModel() {
    return ttftModel;
  }

  Saturation saturation() {
    return saturation;
  }

  RandomGenerator random() {
    RandomGenerator r = random;
    return r != null ? r : ThreadLocalRandom.current();
  }

  /** Estimated input tokens of {@code request} with this engine's tokenizer. */
  int estimateInputTokens(InferenceRequest request) {
    try {
      return request.tokenize(tokenizer).tokenCount();
    } catch (dev.kinference.prompt.TokenizationException | RuntimeException e) {
      return (int) Math.min(Integer.MAX_VALUE, request.promptChars() / 4 + 1);
    }
  }

  private static PolicyConfig fromEnvironment() {
    String paths = System.getProperty(PATH_PROPERTY);
    if (paths == null || paths.isBlank()) {
      paths = System.getenv("KINFERENCE_POLICY_PATH");
    }
    if (paths == null || paths.isBlank()) {
      return PolicyConfig.EMPTY;
    }
    List<Path> list = java.util.Arrays.stream(paths.split(java.io.File.pathSeparator))
        .filter(s -> !s.isBlank()).map(Path::of).toList();
    return PolicyLoader.load(list).orThrow();
  }

  /** Configures a {@link YamlPolicyEngine}; not thread-safe. */
  public static final class Builder {
    private @Nullable Supplier<PolicyConfig> config;
    private @Nullable PersonalDataDetector personalDataDetector;
    private @Nullable ComplexityClassifier complexityClassifier;
    private Tokenizer tokenizer = new ApproximateTokenizer();
    private TtftModel ttftModel = TtftModel.DEFAULT;
    private Saturation saturation = Saturation.DEFAULT;
    private LongSupplier ticker = System::nanoTime;
    private @Nullable RandomGenerator random;

    private Builder() {}

    /** A fixed configuration. */
    public Builder config(PolicyConfig config) {
      Objects.requireNonNull(config, "config");
      this.config = () -> config;
      return this;
    }

    /** A configuration read on every evaluation, such as a {@link dev.kinference.policy.config.PolicyWatcher}. */
    public Builder config(Supplier<PolicyConfig> source) {
      this.config = Objects.requireNonNull(source, "source");
      return this;
    }

    /**
     * The personal-data detector (use {@link PersonalDataDetectors#of} for several). Default: every detector found
     * ({@link PersonalDataDetectors#fromEnvironment}: those registered with ServiceLoader, {@code builtin} at least,
     * and a Presidio analyzer when {@code KINFERENCE_PRESIDIO_URL} is set), their findings united.
     */
    public Builder personalDataDetector(PersonalDataDetector detector) {
      this.personalDataDetector = Objects.requireNonNull(detector, "detector");
      return this;
    }

    /** The personal-data detector with this name, found by ServiceLoader. */
    public Builder personalDataDetector(String name) {
      return personalDataDetector(Plugins.load(PersonalDataDetector.class).require(name));
    }

    /** The complexity classifier. Default: the first found by ServiceLoader ({@code builtin}). */
    public Builder complexityClassifier(ComplexityClassifier classifier) {
      this.complexityClassifier = Objects.requireNonNull(classifier, "classifier");
      return this;
    }

    /** The complexity classifier with this name, found by ServiceLoader. */
    public Builder complexityClassifier(String name) {
      return complexityClassifier(Plugins.load(ComplexityClassifier.class).require(name));
    }

    /**
     * The tokenizer estimating input tokens (request size, rate limits). Default: {@link ApproximateTokenizer}; pass
     * the router's to share one tokenization per request.
     */
    public Builder tokenizer(Tokenizer tokenizer) {
      this.tokenizer = Objects.requireNonNull(tokenizer, "tokenizer");
      return this;
    }

    /** Predicts TTFT for pool conditions. Default {@link TtftModel#DEFAULT}; pass the router's. */
    public Builder ttftModel(TtftModel model) {
      this.ttftModel = Objects.requireNonNull(model, "model");
      return this;
    }

    /** Saturation thresholds of pools that set none. Default {@link Saturation#DEFAULT}. */
    public Builder saturation(Saturation saturation) {
      this.saturation = Objects.requireNonNull(saturation, "saturation");
      return this;
    }

    /** The clock for metrics staleness, in nanoseconds; must be the router's. Default {@link System#nanoTime}. */
    public Builder ticker(LongSupplier ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /** The random source for weighted alias targets of requests without a session id. */
    public Builder random(RandomGenerator random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    public YamlPolicyEngine build() {
      if (config == null) {
        throw new IllegalStateException("no configuration: call config(PolicyConfig) or config(Supplier)");
      }
      return new YamlPolicyEngine(this);
    }
  }
}
