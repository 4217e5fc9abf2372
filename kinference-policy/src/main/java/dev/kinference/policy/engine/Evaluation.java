package dev.kinference.policy.engine;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.endpoint.Health;
import dev.kinference.policy.PolicyVerdict;
import dev.kinference.policy.classify.PersonalData;
import dev.kinference.policy.classify.DetectorFailures;
import dev.kinference.policy.classify.PersonalDataDetector;
import dev.kinference.policy.classify.PersonalDataDetectorException;
import dev.kinference.policy.classify.PersonalDataFinding;
import dev.kinference.policy.classify.RequestFields;
import dev.kinference.policy.classify.PromptClass;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.model.ExternalProvider;
import dev.kinference.policy.model.FallbackRef;
import dev.kinference.policy.model.InferencePolicy;
import dev.kinference.policy.model.InferencePolicy.Action;
import dev.kinference.policy.model.InferencePolicy.Match;
import dev.kinference.policy.model.InferencePool;
import dev.kinference.policy.model.ModelAlias;
import dev.kinference.policy.model.Tenant;
import dev.kinference.prompt.TokenizationException;
import dev.kinference.request.InferenceRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;


/**
 * One request's evaluation, in the order documented in the module README ("Evaluation order"): access, the model's
 * target, each matching rule's action, then the verdict (local-only, fallbacks, admission and saturation, the
 * rewritten request). What it knows about the request is in {@link RequestFacts}, where names lead in
 * {@link TargetResolver}. Not thread-safe; used by one thread for one request.
 */
final class Evaluation {

  static final Duration DEFAULT_SATURATION_RETRY = Duration.ofSeconds(5);
  static final Duration DEFAULT_ADMISSION_RETRY = Duration.ofSeconds(30);

  private final PolicyConfig config;
  private final InferenceRequest request;
  private final Fleet.Snapshot fleet;
  private final YamlPolicyEngine engine;
  private final boolean explaining;
  final List<String> trace = new ArrayList<>();
  final RequestFacts facts;
  private final TargetResolver targets;

  // the decision being built
  private @Nullable Tenant tenant;
  private @Nullable Target target;
  /** The alias the target was picked from, to pick again among local targets; null for pools. */
  private @Nullable ModelAlias originAlias;
  private @Nullable String routedBy;
  private @Nullable String servedModel;
  private @Nullable String servedModelBy;
  private List<FallbackRef> fallback = List.of();
  private @Nullable String fallbackBy;
  private @Nullable String requireLocalBy;
  private InferencePolicy.@Nullable OnSaturation onSaturation;
  private @Nullable String onSaturationBy;
  private @Nullable Duration saturationRetryAfter;
  private InferencePolicy.@Nullable AdmitBelow admitBelow;
  private @Nullable String admitBy;
  private @Nullable Duration admitRetryAfter;
  private @Nullable Integer priority;
  private @Nullable String priorityBy;
  // the verdict's candidates, set by admit
  private @Nullable Predicate<EndpointState> candidates;
  private boolean preferFallbacks;

  Evaluation(YamlPolicyEngine engine, PolicyConfig config, InferenceRequest request, Fleet.Snapshot fleet,
      long nowNanos, boolean explaining) {
    this.engine = engine;
    this.config = config;
    this.request = request;
    this.fleet = fleet;
    this.explaining = explaining;
    this.facts = new RequestFacts(engine, config, request, fleet, nowNanos, trace);
    this.targets = new TargetResolver(engine, config, request, fleet);
  }

  @Nullable Target target() {
    return target;
  }

  // ---- evaluation -------------------------------------------------------------------------------------------------

  PolicyVerdict run() {
    if (explaining) {
      facts.promptTokens();
      facts.personalData();
      facts.promptClass();
    }
    PolicyVerdict.Reject denied = access();
    if (denied != null) {
      return denied;
    }
    Target initial = targets.resolve(request.model(), false, "model " + request.model());
    if (initial == null) {
      return reject(404, "model '" + request.model() + "' does not exist" + knownModels(), null, "builtin/model");
    }
    target = initial;
    trace.add("builtin/model: " + initial.via());
    ModelAlias alias = config.aliasFor(request.model());
    if (alias != null) {
      fallback = alias.spec().fallback();
      originAlias = alias;
    }

    for (PolicyConfig.RuleRef ref : engine.rules(config)) {
      InferencePolicy.Rule rule = ref.rule();
      if (!matches(rule.match())) {
        continue;
      }
      PolicyVerdict.Reject r = apply(ref.id(), rule.action());
      if (r != null) {
        return r;
      }
      if (rule.stop()) {
        trace.add(ref.id() + ": stop");
        break;
      }
    }
    return finish();
  }

  /** Tenant and model permission; null when allowed. */
  PolicyVerdict.@Nullable Reject access() {
    if (config.tenants().isEmpty()) {
      return null;
    }
    String name = request.tenant();
    if (name == null) {
      return reject(401, "no tenant: authenticate with an API key (Authorization: Bearer or x-api-key) or the "
          + "tenant header", null, "builtin/tenant");
    }
    Tenant t = config.tenant(name);
    if (t == null) {
      return reject(403, "unknown tenant '" + name + "'", null, "builtin/tenant");
    }
    tenant = t;
    trace.add("builtin/tenant: " + t.name());
    if (!t.allows(request.model())) {
      return reject(403, "tenant '" + t.name() + "' may not use model '" + request.model() + "'; allowed: "
          + String.join(", ", t.spec().models()), null, "builtin/tenant");
    }
    return null;
  }

  private String knownModels() {
    List<String> known = config.publicModels();
    Tenant t = tenant;
    if (t != null && !t.spec().models().contains("*")) {
      known = t.spec().models();
    }
    return known.isEmpty() ? "" : "; known models: " + String.join(", ", known);
  }

  // ---- matching -----------------------------------------------------------------------------------------------


  boolean matches(Match m) {
    if (!m.tenants().isEmpty() && (request.tenant() == null || !m.tenants().contains(request.tenant()))) {
      return false;
    }
    if (!m.models().isEmpty() && m.models().stream().noneMatch(p -> InferencePolicy.globMatches(p, request.model()))) {
      return false;
    }
    if (m.trafficClass() != null && m.trafficClass() != request.trafficClass()) {
      return false;
    }
    if (m.priority() != null && !m.priority().contains(request.priority())) {
      return false;
    }
    if (m.maxTokens() != null && !m.maxTokens().contains(request.maxTokens())) {
      return false;
    }
    if (m.promptTokens() != null && !m.promptTokens().contains(facts.promptTokens())) {
      return false;
    }
    if (m.personalData() != null && m.personalData() != facts.personal()) {
      return false;
    }
    if (!m.personalDataKinds().isEmpty()
        && m.personalDataKinds().stream().noneMatch(k -> facts.personalData().kinds().contains(k))) {
      return false;
    }
    if (!m.complexity().isEmpty() && !m.complexity().contains(facts.promptClass().complexity())) {
      return false;
    }
    if (!m.topics().isEmpty() && m.topics().stream().noneMatch(t -> facts.promptClass().topics().contains(t))) {
      return false;
    }
    InferencePolicy.PoolCondition pc = m.pool();
    if (pc != null) {
      List<InferencePool> pools;
      if (pc.name() != null) {
        InferencePool p = config.pool(pc.name());
        if (p == null) {
          return false;
        }
        pools = List.of(p);
      } else if (target instanceof Target.Pools tp) {
        pools = tp.pools();
      } else {
        return false; // the current target is not a pool: its state is unknown
      }
      return facts.poolState(pools).satisfies(pc);
    }
    return true;
  }


  // ---- actions ------------------------------------------------------------------------------------------------

  /** Applies a matching rule's action: a reject ends the evaluation; each other effect is taken by the first rule. */
  private PolicyVerdict.@Nullable Reject apply(String id, Action a) {
    InferencePolicy.Reject rj = a.reject();
    if (rj != null) {
      return reject(rj.status(), rj.message(), a.retryAfter(), id + ": reject");
    }
    List<String> did = new ArrayList<>();
    List<String> ignored = new ArrayList<>();
    InferencePolicy.Route route = a.route();
    if (route != null) {
      route(id, route, did, ignored);
    }
    if (a.rewriteModel() != null) {
      if (servedModelBy != null) {
        ignored.add("rewriteModel (set by " + servedModelBy + ")");
      } else {
        servedModel = a.rewriteModel();
        servedModelBy = id;
        did.add("rewriteModel " + a.rewriteModel());
      }
    }
    if (a.fallback() != null) {
      if (fallbackBy != null) {
        ignored.add("fallback (set by " + fallbackBy + ")");
      } else {
        fallback = a.fallback();
        fallbackBy = id;
        did.add("fallback " + a.fallback().stream().map(FallbackRef::toString).collect(Collectors.joining(" > ")));
      }
    }
    localAndSaturation(id, a, did, ignored);
    if (a.setPriority() != null) {
      if (priorityBy != null) {
        ignored.add("setPriority (set by " + priorityBy + ")");
      } else {
        priority = a.setPriority();
        priorityBy = id;
        did.add("setPriority " + a.setPriority());
      }
    }
    trace.add(id + ": " + (did.isEmpty() ? "no effect" : String.join("; ", did))
        + (ignored.isEmpty() ? "" : " [ignored: " + String.join("; ", ignored) + "]"));
    return null;
  }

  private void route(String id, InferencePolicy.Route route, List<String> did, List<String> ignored) {
    if (routedBy != null) {
      ignored.add("route (set by " + routedBy + ")");
      return;
    }
    Target t = route.alias() != null ? targets.routeAlias(route.alias()) : targets.routePool(route.pool());
    if (t == null) {
      ignored.add("route " + route + " (no target)");
      return;
    }
    target = t;
    originAlias = route.alias() != null ? config.alias(route.alias()) : null;
    routedBy = id;
    did.add("route " + t.via());
    ModelAlias al = route.alias() == null ? null : config.alias(route.alias());
    if (al != null && fallbackBy == null) {
      fallback = al.spec().fallback();
    }
  }

  /** {@code requireLocal}, {@code onSaturation} and {@code admitBelow}, with the {@code retryAfter} each may use. */
  private void localAndSaturation(String id, Action a, List<String> did, List<String> ignored) {
    if (Boolean.TRUE.equals(a.requireLocal())) {
      if (requireLocalBy == null) {
        requireLocalBy = id;
      }
      did.add("requireLocal");
      if (a.onSaturation() == InferencePolicy.OnSaturation.REJECT && saturationRetryAfter == null) {
        saturationRetryAfter = a.retryAfter();
      }
    }
    if (a.onSaturation() != null) {
      if (onSaturationBy != null) {
        ignored.add("onSaturation (set by " + onSaturationBy + ")");
      } else {
        onSaturation = a.onSaturation();
        onSaturationBy = id;
        if (saturationRetryAfter == null) {
          saturationRetryAfter = a.retryAfter();
        }
        did.add("onSaturation " + a.onSaturation().yamlName());
      }
    }
    if (a.admitBelow() != null) {
      if (admitBy != null) {
        ignored.add("admitBelow (set by " + admitBy + ")");
      } else {
        admitBelow = a.admitBelow();
        admitBy = id;
        admitRetryAfter = a.retryAfter();
        did.add("admitBelow " + describe(a.admitBelow()));
      }
    }
  }

  // ---- the verdict ----------------------------------------------------------------------------------------------

  private PolicyVerdict finish() {
    Target t = java.util.Objects.requireNonNull(target);
    // 1. Requests that must stay local: personal data, or a requireLocal rule.
    String localReason = localReason(t);
    if (localReason != null) {
      if (!fallback.isEmpty()) {
        trace.add("builtin/local-only: fallbacks dropped ("
            + fallback.stream().map(FallbackRef::toString).collect(Collectors.joining(", ")) + ")");
        fallback = List.of();
      }
      if (t.isExternal()) {
        ModelAlias origin = originAlias;
        Target local = origin == null ? null : targets.pick(origin, true, "", new HashSet<>());
        if (local == null || local.isExternal()) {
          return reject(403, "model '" + request.model() + "' is served here only by an external provider, and "
              + localReason, null, "builtin/local-only");
        }
        trace.add("builtin/local-only: " + local.via() + " instead of " + t.via());
        t = local;
        target = local;
      }
    }

    // 2. Fallbacks to endpoint ids.
    List<String> fallbackIds = targets.fallbackIds(fallback, t);

    // 3. Load-gated admission (batch tiers), then saturation of the target pools: overflow, queue, or refuse.
    if (t instanceof Target.Pools tp) {
      PolicyVerdict.Reject refused = admit(tp, fallbackIds, localReason);
      if (refused != null) {
        return refused;
      }
    } else if (t instanceof Target.Provider tp) {
      candidates = new Target.EndpointIds(Set.of(tp.endpointId()));
      fallbackIds.remove(tp.endpointId());
      if (admitBelow != null) {
        trace.add("builtin/admission: ignored, the target is an external provider");
      }
    }

    // 4. The rewritten request.
    String model = servedModel != null ? servedModel : t.servedModel();
    int newPriority = priority != null ? priority : request.priority();
    InferenceRequest out = request;
    if (!model.equals(request.model()) || newPriority != request.priority()) {
      out = request.toBuilder().model(model).priority(newPriority).build();
    }
    return new PolicyVerdict.Proceed(out, candidates, fallbackIds, preferFallbacks, trace);
  }

  /** Why the request must stay in local pools (personal data, or a requireLocal rule), or null. */
  private @Nullable String localReason(Target t) {
    String localReason = null;
    // Whether the prompt holds personal data matters when it could leave, or when its pool is full (it then
    // queues or is refused); otherwise the detector is not run.
    boolean matters = t.isExternal() || !fallback.isEmpty()
        || (t instanceof Target.Pools tp && facts.poolState(tp.pools()).saturated());
    if (matters || explaining) {
      PersonalData pd = facts.personalData();
      if (pd.found()) {
        localReason = "the prompt contains personal data (" + pd.describe() + "), which never leaves local pools";
        trace.add("builtin/personal-data: found " + pd.describe() + RequestFacts.where(pd)
            + "; the request stays in local pools");
      } else if (facts.personal()) {
        localReason = "the request counts as personal data (" + facts.personalBecause() + "), which never leaves "
            + "local pools";
        trace.add("builtin/personal-data: the request stays in local pools");
      }
    }
    if (localReason == null && requireLocalBy != null) {
      localReason = "rule " + requireLocalBy + " requires local hardware";
    }
    return localReason;
  }

  /**
   * Admission to pools: with {@code admitBelow}, only the members below the threshold (429 when none is); else a
   * saturated pool overflows to the fallbacks, queues locally, or refuses (503) a local-only request whose rule
   * says so. Sets the candidates; returns the refusal or null.
   */
  private PolicyVerdict.@Nullable Reject admit(Target.Pools tp, List<String> fallbackIds,
      @Nullable String localReason) {
    PoolState st = facts.poolState(tp.pools());
    candidates = new Target.PoolMembers(tp.pools());
    InferencePolicy.AdmitBelow ab = admitBelow;
    if (ab != null) {
      Set<String> below = new LinkedHashSet<>();
      for (EndpointState s : PoolState.members(tp.pools(), fleet.all())) {
        if (s.health() == Health.HEALTHY && isBelow(ab, s, tp)) {
          below.add(s.id());
        }
      }
      if (below.isEmpty()) {
        Duration retry = admitRetryAfter != null ? admitRetryAfter : DEFAULT_ADMISSION_RETRY;
        return reject(429, "admitted only while pool " + tp.names() + " is below its load threshold ("
            + describe(ab) + "; now " + st.describe() + "); retry later", retry, "builtin/admission (" + admitBy
            + ")");
      }
      trace.add("builtin/admission: " + below.size() + " member(s) of pool " + tp.names() + " below "
          + describe(ab));
      candidates = new Target.EndpointIds(below);
    } else if (st.saturated()) {
      String pools = "pool " + tp.names() + " is " + (st.members() > 0 && st.healthy() == 0 ? "unreachable"
          : "saturated") + " (" + st.describe() + ")";
      if (!fallbackIds.isEmpty()) {
        preferFallbacks = true;
        trace.add("builtin/overflow: " + pools + "; overflow to " + String.join(", ", fallbackIds));
      } else if (localReason != null && onSaturation == InferencePolicy.OnSaturation.REJECT) {
        Duration retry = saturationRetryAfter != null ? saturationRetryAfter : DEFAULT_SATURATION_RETRY;
        return reject(503, pools + " and " + localReason + "; retry later", retry, "builtin/saturation");
      } else if (localReason != null) {
        trace.add("builtin/saturation: " + pools + "; queued locally because " + localReason);
      } else {
        trace.add("builtin/saturation: " + pools + "; no fallback, queued locally");
      }
    }
    return null;
  }

  private boolean isBelow(InferencePolicy.AdmitBelow ab, EndpointState s, Target.Pools tp) {
    if (ab.queueDepth() != null && s.estimatedWaiting() >= ab.queueDepth()) {
      return false;
    }
    if (ab.kvUtilization() != null && s.kvUsage() >= ab.kvUtilization()) {
      return false;
    }
    if (ab.predictedTtftMs() != null) {
      InferencePool p = PoolState.poolOf(tp.pools(), s);
      double ms = 1000 * engine.ttftModel().predictSeconds(s, facts.promptTokens(), s.blockSize(p.spec().blockSize()));
      return ms < ab.predictedTtftMs();
    }
    return true;
  }

  private PolicyVerdict.Reject reject(int status, String reason, @Nullable Duration retryAfter, String by) {
    trace.add(by + ": " + status + " " + reason);
    return new PolicyVerdict.Reject(status, reason, retryAfter, trace);
  }

  static String describe(InferencePolicy.AdmitBelow ab) {
    List<String> parts = new ArrayList<>();
    if (ab.queueDepth() != null) {
      parts.add("queue depth < " + ab.queueDepth());
    }
    if (ab.kvUtilization() != null) {
      parts.add("KV utilisation < " + Math.round(ab.kvUtilization() * 100) + "%");
    }
    if (ab.predictedTtftMs() != null) {
      parts.add("predicted TTFT < " + Math.round(ab.predictedTtftMs()) + " ms");
    }
    return String.join(", ", parts);
  }
}
