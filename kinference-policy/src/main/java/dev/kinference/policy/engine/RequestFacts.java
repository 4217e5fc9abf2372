package dev.kinference.policy.engine;

import dev.kinference.endpoint.Fleet;
import dev.kinference.policy.classify.DetectorFailures;
import dev.kinference.policy.classify.PersonalData;
import dev.kinference.policy.classify.PersonalDataDetector;
import dev.kinference.policy.classify.PersonalDataDetectorException;
import dev.kinference.policy.classify.PersonalDataFinding;
import dev.kinference.policy.classify.PromptClass;
import dev.kinference.policy.classify.RequestFields;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.model.InferencePolicy;
import dev.kinference.policy.model.InferencePool;
import dev.kinference.prompt.TokenizationException;
import dev.kinference.request.InferenceRequest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * What an evaluation knows about one request, each fact computed on first use: its prompt tokens, personal data
 * (a failed detector or content no detector can inspect counts as personal, noted in the trace), prompt class and
 * the state of the pools it may go to. Not thread-safe; one per evaluation.
 */
final class RequestFacts {

  private final YamlPolicyEngine engine;
  private final PolicyConfig config;
  private final InferenceRequest request;
  private final Fleet.Snapshot fleet;
  private final long nowNanos;
  private final List<String> trace;

  private int promptTokens = -1;
  private @Nullable PersonalData personalData;
  /** Why the request counts as personal without a finding (a detector failed, uninspectable content), or null. */
  private @Nullable String personalBecause;
  private boolean uninspectableChecked;
  private @Nullable PromptClass promptClass;
  private final Map<String, PoolState> poolStates = new HashMap<>();

  RequestFacts(YamlPolicyEngine engine, PolicyConfig config, InferenceRequest request, Fleet.Snapshot fleet,
      long nowNanos, List<String> trace) {
    this.engine = engine;
    this.config = config;
    this.request = request;
    this.fleet = fleet;
    this.nowNanos = nowNanos;
    this.trace = trace;
  }

  int promptTokens() {
    if (promptTokens < 0) {
      int n;
      try {
        n = request.tokenize(engine.tokenizer()).tokenCount();
      } catch (TokenizationException | RuntimeException e) {
        n = (int) Math.min(Integer.MAX_VALUE, request.promptChars() / 4);
      }
      promptTokens = n;
    }
    return promptTokens;
  }

  PersonalData personalData() {
    PersonalData p = personalData;
    if (p == null) {
      PersonalDataDetector detector = engine.personalDataDetector();
      try {
        p = detector.detect(request);
      } catch (RuntimeException e) {
        // a detector that fails must not let personal data out: treat the request as personal, and count it
        String name = e instanceof PersonalDataDetectorException f ? f.detector() : detector.name();
        String reason = e instanceof PersonalDataDetectorException f ? f.reason() : "error";
        DetectorFailures.record(name, reason);
        String what = e instanceof PersonalDataDetectorException ? e.getMessage() : e.getClass().getSimpleName();
        personalBecause = "detector " + name + " failed (" + reason + ": " + what + "): treated as personal";
        trace.add("builtin/personal-data: " + personalBecause);
        p = PersonalData.NONE;
      }
      personalData = p;
    }
    return p;
  }

  /** Why the request counts as personal without a finding, or null; set by {@link #personal}. */
  @Nullable String personalBecause() {
    return personalBecause;
  }

  /**
   * Whether the request counts as personal data: a detector found some, a detector failed, or it has content no
   * detector can inspect while {@code personalData.unknownContent} is {@code local} (the default).
   */
  boolean personal() {
    if (personalData().found() || personalBecause != null) {
      return true;
    }
    if (!uninspectableChecked) {
      uninspectableChecked = true;
      if (unknownContent() == InferencePolicy.UnknownContent.LOCAL) {
        List<RequestFields.Uninspectable> u = RequestFields.uninspectable(request);
        if (!u.isEmpty()) {
          personalBecause = u.get(0).describe() + (u.size() > 1 ? " (and " + (u.size() - 1) + " more)" : "")
              + ": treated as personal (personalData.unknownContent: local)";
          trace.add("builtin/personal-data: " + personalBecause);
        }
      }
    }
    return personalBecause != null;
  }

  /** {@code local} when any policy says so or none says anything; {@code inspect-only} only when set. */
  InferencePolicy.UnknownContent unknownContent() {
    InferencePolicy.UnknownContent u = null;
    for (InferencePolicy p : config.policies()) {
      InferencePolicy.PersonalDataSettings pd = p.spec().personalData();
      InferencePolicy.UnknownContent c = pd == null ? null : pd.unknownContent();
      if (c == InferencePolicy.UnknownContent.LOCAL) {
        return c;
      }
      if (c != null) {
        u = c;
      }
    }
    return u != null ? u : InferencePolicy.UnknownContent.LOCAL;
  }

  /** Where the findings are, such as {@code email by builtin at metadata.customer+0}: never the values. */
  static String where(PersonalData pd) {
    List<PersonalDataFinding> f = pd.findings();
    if (f.isEmpty()) {
      return "";
    }
    int shown = Math.min(f.size(), 8);
    StringBuilder sb = new StringBuilder(" (");
    for (int i = 0; i < shown; i++) {
      sb.append(i == 0 ? "" : ", ").append(f.get(i).describe());
    }
    if (pd.occurrences() > shown) {
      sb.append(", ").append(pd.occurrences() - shown).append(" more");
    }
    return sb.append(')').toString();
  }

  PromptClass promptClass() {
    PromptClass c = promptClass;
    if (c == null) {
      try {
        c = engine.complexityClassifier().classify(request, promptTokens());
      } catch (RuntimeException e) {
        c = new PromptClass(dev.kinference.policy.classify.Complexity.MODERATE, Set.of(),
            "classifier failed: " + e);
      }
      promptClass = c;
    }
    return c;
  }

  @Nullable PersonalData personalDataIfKnown() {
    return personalData;
  }

  @Nullable PromptClass promptClassIfKnown() {
    return promptClass;
  }


  /** The state of {@code pools} together, computed once per evaluation. */
  PoolState poolState(List<InferencePool> pools) {
    String key = pools.stream().map(InferencePool::name).collect(Collectors.joining(","));
    return poolStates.computeIfAbsent(key, k -> PoolState.of(pools, fleet.all(), engine.saturation(),
        engine.ttftModel(), promptTokens(), nowNanos));
  }

  // ---- evaluation -------------------------------------------------------------------------------------------------
}
