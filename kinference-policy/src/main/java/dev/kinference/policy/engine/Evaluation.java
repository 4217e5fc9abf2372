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
 * One request's evaluation, in the order documented in the module README ("Evaluation order"). Classification and
 * pool states are computed on first use. Not thread-safe; used by one thread for one request.
 */
final class Evaluation {

  static final Duration DEFAULT_SATURATION_RETRY = Duration.ofSeconds(5);
  static final Duration DEFAULT_ADMISSION_RETRY = Duration.ofSeconds(30);

  private final YamlPolicyEngine engine;
  private final PolicyConfig config;
  private final InferenceRequest request;
  private final Fleet.Snapshot fleet;
  private final long nowNanos;
  private final boolean explaining;
  final List<String> trace = new ArrayList<>();

  // facts, computed on first use
  private int promptTokens = -1;
  private @Nullable PersonalData personalData;
  /** Why the request counts as personal without a finding (a detector failed, uninspectable content), or null. */
  private @Nullable String personalBecause;
  private boolean uninspectableChecked;
  private @Nullable PromptClass promptClass;
  private final Map<String, PoolState> poolStates = new HashMap<>();

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

  Evaluation(YamlPolicyEngine engine, PolicyConfig config, InferenceRequest request, Fleet.Snapshot fleet,
      long nowNanos, boolean explaining) {
    this.engine = engine;
    this.config = config;
    this.request = request;
    this.fleet = fleet;
    this.nowNanos = nowNanos;
    this.explaining = explaining;
  }

  // ---- facts ----------------------------------------------------------------------------------------------------

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

  @Nullable Target target() {
    return target;
  }

  private PoolState state(List<InferencePool> pools) {
    String key = pools.stream().map(InferencePool::name).collect(Collectors.joining(","));
    return poolStates.computeIfAbsent(key, k -> PoolState.of(pools, fleet.all(), engine.saturation(),
        engine.ttftModel(), promptTokens(), nowNanos));
  }

  // ---- evaluation -------------------------------------------------------------------------------------------------

  PolicyVerdict run() {
    if (explaining) {
      promptTokens();
      personalData();
      promptClass();
    }
    PolicyVerdict.Reject denied = access();
    if (denied != null) {
      return denied;
    }
    Target initial = resolve(request.model(), false, "model " + request.model());
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

  /**
   * Resolves a requested model name to a target: an alias (weighted pick), the pools serving it, or the fleet's
   * members serving it when the configuration does not know it. With {@code localOnly}, external targets are
   * skipped.
   */
  private @Nullable Target resolve(String model, boolean localOnly, String via) {
    ModelAlias alias = config.aliasFor(model);
    if (alias != null) {
      return pick(alias, localOnly, via, new HashSet<>());
    }
    List<InferencePool> pools = config.poolsServing(model);
    if (!pools.isEmpty()) {
      return new Target.Pools(pools, model, via + " -> pool " + pools.stream().map(InferencePool::name)
          .collect(Collectors.joining(", ")));
    }
    if (!fleet.serving(model).isEmpty() || (config.aliases().isEmpty() && config.pools().isEmpty())) {
      return new Target.FleetDefault(model, via + " -> fleet members serving it (not in the configuration)");
    }
    return null;
  }

  private @Nullable Target pick(ModelAlias alias, boolean localOnly, String via, Set<String> seen) {
    if (!seen.add(alias.name())) {
      return null;
    }
    List<ModelAlias.Target> options = new ArrayList<>();
    long total = 0;
    for (ModelAlias.Target t : alias.spec().targets()) {
      if (t.weight() <= 0 || (localOnly && !isLocal(t, new HashSet<>(seen)))) {
        continue;
      }
      options.add(t);
      total += t.weight();
    }
    if (options.isEmpty()) {
      return null;
    }
    long point = chooser(alias.name(), total);
    ModelAlias.Target chosen = options.get(options.size() - 1);
    for (ModelAlias.Target t : options) {
      point -= t.weight();
      if (point < 0) {
        chosen = t;
        break;
      }
    }
    String share = options.size() > 1 ? " (weight " + chosen.weight() + " of " + total + ")" : "";
    String here = (via.isEmpty() ? "" : via + " -> ") + "alias " + alias.name();
    if (chosen.pool() != null) {
      InferencePool p = config.pool(chosen.pool());
      if (p == null) {
        return null;
      }
      String served = chosen.model() != null ? chosen.model() : p.spec().model();
      return new Target.Pools(List.of(p), served, here + " -> pool " + p.name() + share);
    }
    if (chosen.provider() != null) {
      ExternalProvider p = config.provider(chosen.provider());
      if (p == null || chosen.model() == null) {
        return null;
      }
      return new Target.Provider(p, chosen.model(), here + " -> provider " + p.name() + "/" + chosen.model() + share);
    }
    ModelAlias next = chosen.alias() == null ? null : config.alias(chosen.alias());
    return next == null ? null : pick(next, localOnly, here + share, seen);
  }

  private boolean isLocal(ModelAlias.Target t, Set<String> seen) {
    if (t.pool() != null) {
      return true;
    }
    if (t.alias() == null) {
      return false;
    }
    ModelAlias a = config.alias(t.alias());
    if (a == null || !seen.add(a.name())) {
      return false;
    }
    for (ModelAlias.Target inner : a.spec().targets()) {
      if (inner.weight() > 0 && isLocal(inner, seen)) {
        return true;
      }
    }
    return false;
  }

  /** A point in [0, total): sticky per session when the request has a session id, else random. */
  private long chooser(String salt, long total) {
    String session = request.sessionId();
    if (session != null) {
      long h = (session + "\u0000" + salt).hashCode() * 0x9E3779B97F4A7C15L;
      return Math.floorMod(h ^ (h >>> 29), total);
    }
    return engine.random().nextLong(total);
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
    if (m.promptTokens() != null && !m.promptTokens().contains(promptTokens())) {
      return false;
    }
    if (m.personalData() != null && m.personalData() != personal()) {
      return false;
    }
    if (!m.personalDataKinds().isEmpty()
        && m.personalDataKinds().stream().noneMatch(k -> personalData().kinds().contains(k))) {
      return false;
    }
    if (!m.complexity().isEmpty() && !m.complexity().contains(promptClass().complexity())) {
      return false;
    }
    if (!m.topics().isEmpty() && m.topics().stream().noneMatch(t -> promptClass().topics().contains(t))) {
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
      return state(pools).satisfies(pc);
    }
    return true;
  }

  // ---- actions ------------------------------------------------------------------------------------------------

  private PolicyVerdict.@Nullable Reject apply(String id, Action a) {
    InferencePolicy.Reject rj = a.reject();
    if (rj != null) {
      return reject(rj.status(), rj.message(), a.retryAfter(), id + ": reject");
    }
    List<String> did = new ArrayList<>();
    List<String> ignored = new ArrayList<>();
    InferencePolicy.Route route = a.route();
    if (route != null) {
      if (routedBy != null) {
        ignored.add("route (set by " + routedBy + ")");
      } else {
        Target t = route.alias() != null ? routeAlias(route.alias()) : routePool(route.pool());
        if (t == null) {
          ignored.add("route " + route + " (no target)");
        } else {
          target = t;
          originAlias = route.alias() != null ? config.alias(route.alias()) : null;
          routedBy = id;
          did.add("route " + t.via());
          ModelAlias al = route.alias() == null ? null : config.alias(route.alias());
          if (al != null && fallbackBy == null) {
            fallback = al.spec().fallback();
          }
        }
      }
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

  private @Nullable Target routeAlias(String name) {
    ModelAlias a = config.alias(name);
    return a == null ? null : pick(a, false, "", new HashSet<>());
  }

  private @Nullable Target routePool(@Nullable String name) {
    InferencePool p = name == null ? null : config.pool(name);
    if (p == null) {
      return null;
    }
    return new Target.Pools(List.of(p), p.spec().model(), "pool " + p.name());
  }

  // ---- the verdict ----------------------------------------------------------------------------------------------

  private PolicyVerdict finish() {
    Target t = java.util.Objects.requireNonNull(target);
    // 1. Requests that must stay local: personal data, or a requireLocal rule.
    String localReason = null;
    // Whether the prompt holds personal data matters when it could leave, or when its pool is full (it then
    // queues or is refused); otherwise the detector is not run.
    boolean matters = t.isExternal() || !fallback.isEmpty()
        || (t instanceof Target.Pools tp && state(tp.pools()).saturated());
    if (matters || explaining) {
      PersonalData pd = personalData();
      if (pd.found()) {
        localReason = "the prompt contains personal data (" + pd.describe() + "), which never leaves local pools";
        trace.add("builtin/personal-data: found " + pd.describe() + where(pd) + "; the request stays in local pools");
      } else if (personal()) {
        localReason = "the request counts as personal data (" + personalBecause + "), which never leaves local pools";
        trace.add("builtin/personal-data: the request stays in local pools");
      }
    }
    if (localReason == null && requireLocalBy != null) {
      localReason = "rule " + requireLocalBy + " requires local hardware";
    }
    if (localReason != null) {
      if (!fallback.isEmpty()) {
        trace.add("builtin/local-only: fallbacks dropped ("
            + fallback.stream().map(FallbackRef::toString).collect(Collectors.joining(", ")) + ")");
        fallback = List.of();
      }
      if (t.isExternal()) {
        ModelAlias origin = originAlias;
        Target local = origin == null ? null : pick(origin, true, "", new HashSet<>());
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
    List<String> fallbackIds = resolveFallbacks(t);

    // 3. Load-gated admission (batch tiers), then saturation of the target pools: overflow, queue, or refuse.
    boolean preferFallbacks = false;
    Predicate<EndpointState> candidates = null;
    if (t instanceof Target.Pools tp) {
      PoolState st = state(tp.pools());
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

  private boolean isBelow(InferencePolicy.AdmitBelow ab, EndpointState s, Target.Pools tp) {
    if (ab.queueDepth() != null && s.estimatedWaiting() >= ab.queueDepth()) {
      return false;
    }
    if (ab.kvUtilization() != null && s.kvUsage() >= ab.kvUtilization()) {
      return false;
    }
    if (ab.predictedTtftMs() != null) {
      InferencePool p = PoolState.poolOf(tp.pools(), s);
      double ms = 1000 * engine.ttftModel().predictSeconds(s, promptTokens(), s.blockSize(p.spec().blockSize()));
      return ms < ab.predictedTtftMs();
    }
    return true;
  }

  private List<String> resolveFallbacks(Target t) {
    LinkedHashSet<String> ids = new LinkedHashSet<>();
    expand(fallback, ids, new HashSet<>());
    if (t instanceof Target.Pools tp) {
      for (EndpointState s : PoolState.members(tp.pools(), fleet.all())) {
        ids.remove(s.id());
      }
    }
    return new ArrayList<>(ids);
  }

  private void expand(List<FallbackRef> refs, Set<String> out, Set<String> seen) {
    for (FallbackRef f : refs) {
      if (f.provider() != null && f.model() != null) {
        out.add(ExternalProvider.endpointId(f.provider(), f.model()));
      } else if (f.alias() != null && seen.add(f.alias())) {
        ModelAlias a = config.alias(f.alias());
        if (a == null) {
          continue;
        }
        for (ModelAlias.Target t : a.spec().targets()) {
          if (t.provider() != null && t.model() != null) {
            out.add(ExternalProvider.endpointId(t.provider(), t.model()));
          } else if (t.pool() != null && config.pool(t.pool()) != null) {
            InferencePool p = java.util.Objects.requireNonNull(config.pool(t.pool()));
            for (EndpointState s : PoolState.members(List.of(p), fleet.all())) {
              if (s.health() == Health.HEALTHY) {
                out.add(s.id());
              }
            }
          } else if (t.alias() != null) {
            expand(List.of(FallbackRef.alias(t.alias())), out, seen);
          }
        }
        expand(a.spec().fallback(), out, seen);
      }
    }
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
