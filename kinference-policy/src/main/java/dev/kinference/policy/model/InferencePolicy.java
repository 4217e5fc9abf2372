package dev.kinference.policy.model;

import dev.kinference.policy.classify.Complexity;
import dev.kinference.policy.classify.PersonalDataKind;
import dev.kinference.request.TrafficClass;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Ordered rules, each a match and an action. Policies are evaluated in ascending {@link Spec#order()}, then by name;
 * rules in the order written. The evaluation order and conflict rules are documented in the module README
 * ({@code kinference-policy/README.md}, "Evaluation order"), and implemented by
 * {@link dev.kinference.policy.engine.YamlPolicyEngine}.
 */
public record InferencePolicy(ObjectMeta metadata, Spec spec) implements Resource {

  public static final String KIND = "InferencePolicy";

  public InferencePolicy {
    Objects.requireNonNull(metadata, "metadata");
    Objects.requireNonNull(spec, "spec");
  }

  @Override
  public String kind() {
    return KIND;
  }

  /** Whether {@code value} matches {@code pattern}, in which {@code *} stands for any run of characters. */
  public static boolean globMatches(String pattern, String value) {
    int p = 0;
    int v = 0;
    int star = -1;
    int mark = 0;
    while (v < value.length()) {
      if (p < pattern.length() && pattern.charAt(p) != '*' && pattern.charAt(p) == value.charAt(v)) {
        p++;
        v++;
      } else if (p < pattern.length() && pattern.charAt(p) == '*') {
        star = p++;
        mark = v;
      } else if (star >= 0) {
        p = star + 1;
        v = ++mark;
      } else {
        return false;
      }
    }
    while (p < pattern.length() && pattern.charAt(p) == '*') {
      p++;
    }
    return p == pattern.length();
  }

  /**
   * @param order lower first (default 0); ties are broken by name
   * @param rules in evaluation order
   * @param personalData the {@code personalData} settings, or null when not set
   */
  public record Spec(int order, List<Rule> rules, @Nullable PersonalDataSettings personalData) {
    public Spec {
      rules = List.copyOf(rules);
    }

    /** Rules only; {@code personalData} not set. */
    public Spec(int order, List<Rule> rules) {
      this(order, rules, null);
    }
  }

  /**
   * A policy's {@code personalData} block.
   *
   * @param unknownContent what to do with content no detector can inspect, or null when not set
   */
  public record PersonalDataSettings(@Nullable UnknownContent unknownContent) {}

  /**
   * What {@code personalData.unknownContent} (a spec-level setting) does with content no detector can inspect:
   * binary data URLs and base64 sources (images, audio, PDF), {@code input_audio}, uploaded file ids. When any
   * policy says {@code local}, or none says anything, such a request is treated as personal data and stays local;
   * only when a policy says {@code inspect-only} and none says {@code local} does it go by its text alone.
   */
  public enum UnknownContent {
    /** Treat a request with uninspectable content as personal data (the default). */
    LOCAL,
    /** Judge a request by the content that can be inspected. */
    INSPECT_ONLY;

    public String yamlName() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  /**
   * @param name unique within the policy; traces name rules as {@code policy/rule}
   * @param match every condition given must hold; an empty match matches every request
   * @param action what to do with a matching request
   * @param stop whether to stop evaluating further rules (of every policy) after this one matched
   */
  public record Rule(String name, Match match, Action action, boolean stop) {
    public Rule {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(match, "match");
      Objects.requireNonNull(action, "action");
    }
  }

  /**
   * Conditions; each one given must hold, and a list condition holds when any of its entries does.
   *
   * @param tenants tenant names
   * @param models requested (public) model names; {@code *} matches any run of characters
   * @param promptTokens estimated input tokens
   * @param maxTokens requested output budget ({@code max_tokens}); a request without one has -1
   * @param priority the request's priority
   * @param trafficClass {@code interactive} or {@code batch}
   * @param personalData whether the prompt contains personal data (any kind)
   * @param personalDataKinds the prompt contains personal data of one of these kinds
   * @param complexity the prompt's complexity class
   * @param topics the prompt's topics (as the complexity classifier names them, such as {@code code})
   * @param pool the state of a pool
   */
  public record Match(List<String> tenants, List<String> models, @Nullable Range promptTokens,
      @Nullable Range maxTokens, @Nullable Range priority, @Nullable TrafficClass trafficClass,
      @Nullable Boolean personalData, List<PersonalDataKind> personalDataKinds, List<Complexity> complexity,
      List<String> topics, @Nullable PoolCondition pool) {

    /** Matches every request. */
    public static final Match ANY =
        new Match(List.of(), List.of(), null, null, null, null, null, List.of(), List.of(), List.of(), null);

    public Match {
      tenants = List.copyOf(tenants);
      models = List.copyOf(models);
      personalDataKinds = List.copyOf(personalDataKinds);
      complexity = List.copyOf(complexity);
      topics = List.copyOf(topics);
    }
  }

  /** An inclusive range; a null bound is open. */
  public record Range(@Nullable Double min, @Nullable Double max) {

    public boolean contains(double v) {
      return (min == null || v >= min) && (max == null || v <= max);
    }

    /** Whether every value in {@code other} is in this range. */
    public boolean covers(Range other) {
      boolean lowOk = min == null || (other.min != null && other.min >= min);
      boolean highOk = max == null || (other.max != null && other.max <= max);
      return lowOk && highOk;
    }

    /** Whether no value can be in this range. */
    public boolean isEmpty() {
      return min != null && max != null && min > max;
    }

    @Override
    public String toString() {
      return "[" + (min == null ? "" : fmt(min)) + ".." + (max == null ? "" : fmt(max)) + "]";
    }

    private static String fmt(double d) {
      return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
    }
  }

  /**
   * Conditions on a pool's state, measured on its members in the fleet snapshot: the pool's queue depth, KV
   * utilisation and predicted TTFT are those of its least loaded member (the one the router would prefer), and the
   * pool is saturated when every member is (or it has none).
   *
   * @param name the pool; null means the pool the request is currently headed to (after earlier rules' routes)
   * @param saturated whether the pool is saturated
   * @param queueDepth requests waiting
   * @param kvUtilization KV-cache usage, 0..1
   * @param predictedTtftMs predicted time to first token of this request, ignoring cache hits, in milliseconds
   */
  public record PoolCondition(@Nullable String name, @Nullable Boolean saturated, @Nullable Range queueDepth,
      @Nullable Range kvUtilization, @Nullable Range predictedTtftMs) {}

  /**
   * What a matching rule does. Several effects may be combined, except {@code reject}, which stands alone (with
   * {@code retryAfter}).
   *
   * @param route send the request to an alias or a pool
   * @param rewriteModel the served model name sent to the target (such as a LoRA adapter's name)
   * @param reject refuse the request
   * @param fallback providers (or aliases) to fall back to, in order, when local capacity is saturated or fails
   * @param requireLocal never send the request to an external provider
   * @param onSaturation what happens to a request that must stay local when its pool is saturated
   * @param admitBelow admit the request only to members below these load thresholds; refuse it otherwise
   * @param setPriority the request's new priority
   * @param retryAfter the {@code Retry-After} of a refusal this rule causes
   */
  public record Action(@Nullable Route route, @Nullable String rewriteModel, @Nullable Reject reject,
      @Nullable List<FallbackRef> fallback, @Nullable Boolean requireLocal, @Nullable OnSaturation onSaturation,
      @Nullable AdmitBelow admitBelow, @Nullable Integer setPriority, @Nullable Duration retryAfter) {

    public Action {
      fallback = fallback == null ? null : List.copyOf(fallback);
    }
  }

  /** Exactly one of an alias or a pool. */
  public record Route(@Nullable String alias, @Nullable String pool) {
    @Override
    public String toString() {
      return alias != null ? "alias " + alias : "pool " + pool;
    }
  }

  /**
   * @param status the HTTP status, 400..599 (default 403)
   * @param message shown to the caller
   */
  public record Reject(int status, String message) {
    public Reject {
      Objects.requireNonNull(message, "message");
    }
  }

  /**
   * Load thresholds; a member qualifies when it is below every threshold given.
   *
   * @param queueDepth fewer requests waiting than this
   * @param kvUtilization KV usage below this (0..1]
   * @param predictedTtftMs predicted TTFT below this many milliseconds
   */
  public record AdmitBelow(@Nullable Integer queueDepth, @Nullable Double kvUtilization,
      @Nullable Double predictedTtftMs) {}

  /** What to do with a request that must stay local when its pool is saturated. */
  public enum OnSaturation {
    /** Send it to the pool anyway; the servers queue it. */
    QUEUE,
    /** Refuse it with 503 and {@code Retry-After}. */
    REJECT;

    public String yamlName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }
}
