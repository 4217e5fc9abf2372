package dev.kinference.policy.config;

import dev.kinference.policy.classify.Complexity;
import dev.kinference.policy.classify.PersonalDataKind;
import dev.kinference.policy.model.FallbackRef;
import dev.kinference.policy.model.InferencePolicy;
import dev.kinference.policy.model.ObjectMeta;
import dev.kinference.request.TrafficClass;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Binds an {@code InferencePolicy}'s spec: its rules (match, action, stop) and personal-data settings, rejecting
 * rules that can never match or do nothing. Not thread-safe; one per document.
 */
final class PolicyBinder {

  private final Binding b;

  PolicyBinder(Binding b) {
    this.b = b;
  }

  InferencePolicy policy(ObjectMeta meta, Fields spec) {
    Long order = spec.integer("order", Integer.MIN_VALUE, Integer.MAX_VALUE);
    List<InferencePolicy.Rule> rules = spec.list("rules", this::rule);
    if (!spec.has("rules") && !spec.has("personalData")) {
      spec.missing("rules", "a list of {name, match, action}");
    }
    Map<String, Integer> names = new HashMap<>();
    for (int i = 0; i < rules.size(); i++) {
      Integer first = names.putIfAbsent(rules.get(i).name(), i);
      if (first != null) {
        String p = spec.child("rules") + "[" + i + "].name";
        b.error(b.positions.getOrDefault(p, spec.pos), p, "rule name '" + rules.get(i).name() + "' is used by rule "
            + first + " too; names must be unique within a policy");
      }
    }
    InferencePolicy.PersonalDataSettings personalDataSettings = null;
    Fields personalData = spec.obj("personalData");
    if (personalData != null) {
      InferencePolicy.UnknownContent unknownContent = personalData.enumValue("unknownContent",
          InferencePolicy.UnknownContent.class,
          InferencePolicy.UnknownContent::yamlName);
      if (!personalData.has("unknownContent")) {
        personalData.missing("unknownContent", "local or inspect-only");
      }
      personalData.done();
      personalDataSettings = new InferencePolicy.PersonalDataSettings(unknownContent);
    }
    spec.done();
    return new InferencePolicy(meta, new InferencePolicy.Spec(order == null ? 0 : order.intValue(), rules,
        personalDataSettings));
  }

  private InferencePolicy.@Nullable Rule rule(YNode node, String path) {
    Fields o = b.obj(node, path);
    if (o == null) {
      return null;
    }
    String name = o.requiredStr("name", "a name for traces, unique within the policy");
    InferencePolicy.Match match = InferencePolicy.Match.ANY;
    Fields m = o.obj("match");
    if (m != null) {
      match = match(m);
    }
    InferencePolicy.Action action = null;
    Fields a = o.requiredObj("action");
    if (a != null) {
      action = action(a);
    }
    Boolean stop = o.bool("stop");
    o.done();
    return action == null ? null : new InferencePolicy.Rule(name, match, action, stop != null && stop);
  }

  private InferencePolicy.Match match(Fields m) {
    List<String> tenants = m.strList("tenants");
    List<String> models = m.strList("models");
    InferencePolicy.Range promptTokens = range(m, "promptTokens");
    InferencePolicy.Range maxTokens = range(m, "maxTokens");
    InferencePolicy.Range priority = range(m, "priority");
    TrafficClass trafficClass = m.enumValue("trafficClass", TrafficClass.class,
        c -> c.name().toLowerCase(Locale.ROOT));
    Boolean personalData = m.bool("personalData");
    List<PersonalDataKind> kinds = m.enumList("personalDataKinds", PersonalDataKind.class,
        PersonalDataKind::yamlName);
    if (Boolean.FALSE.equals(personalData) && !kinds.isEmpty()) {
      b.error(m.pos("personalDataKinds"), m.child("personalDataKinds"),
          "contradicts personalData: false; this rule can never match");
    }
    List<Complexity> complexity = m.enumList("complexity", Complexity.class, Complexity::yamlName);
    List<String> topics = m.strList("topics");
    InferencePolicy.PoolCondition pool = null;
    Fields p = m.obj("pool");
    if (p != null) {
      String name = p.str("name");
      Boolean saturated = p.bool("saturated");
      InferencePolicy.Range queue = range(p, "queueDepth");
      InferencePolicy.Range kv = range(p, "kvUtilization");
      InferencePolicy.Range ttft = range(p, "predictedTtftMs");
      if (saturated == null && queue == null && kv == null && ttft == null && p.errorsBefore == b.errors) {
        b.error(p.pos, p.path, "a pool condition needs saturated, queueDepth, kvUtilization or predictedTtftMs");
      }
      p.done();
      pool = new InferencePolicy.PoolCondition(name, saturated, queue, kv, ttft);
    }
    m.done();
    return new InferencePolicy.Match(tenants, models, promptTokens, maxTokens, priority, trafficClass, personalData,
        kinds, complexity, topics, pool);
  }

  private InferencePolicy.@Nullable Range range(Fields parent, String key) {
    Fields o = parent.obj(key);
    if (o == null) {
      return null;
    }
    Double min = o.number("min", -1e18, 1e18);
    Double max = o.number("max", -1e18, 1e18);
    if (min == null && max == null && o.errorsBefore == b.errors) {
      b.error(o.pos, o.path, "a range needs min, max or both (inclusive)");
    }
    InferencePolicy.Range r = new InferencePolicy.Range(min, max);
    if (r.isEmpty()) {
      b.error(o.pos, o.path, "min " + Scalars.fmt(Objects.requireNonNull(min)) + " is above max "
          + Scalars.fmt(Objects.requireNonNull(max)) + ": the range matches nothing");
    }
    o.done();
    return r;
  }

  private InferencePolicy.Action action(Fields a) {
    InferencePolicy.Route route = null;
    Fields r = a.obj("route");
    if (r != null) {
      String alias = r.str("alias");
      String pool = r.str("pool");
      if ((alias == null) == (pool == null) && r.errorsBefore == b.errors) {
        b.error(r.pos, r.path, "route names exactly one of alias or pool");
      }
      r.done();
      route = new InferencePolicy.Route(alias, pool);
    }
    String rewrite = a.str("rewriteModel");
    InferencePolicy.Reject reject = null;
    Fields rj = a.obj("reject");
    if (rj != null) {
      Long status = rj.integer("status", 400, 599);
      String message = rj.requiredStr("message", "shown to the caller");
      rj.done();
      reject = new InferencePolicy.Reject(status == null ? 403 : status.intValue(), message);
    }
    List<FallbackRef> fallback = a.has("fallback") ? a.list("fallback", b::fallbackRef) : null;
    Boolean requireLocal = a.bool("requireLocal");
    InferencePolicy.OnSaturation onSaturation = a.enumValue("onSaturation", InferencePolicy.OnSaturation.class,
        InferencePolicy.OnSaturation::yamlName);
    InferencePolicy.AdmitBelow admitBelow = null;
    Fields ab = a.obj("admitBelow");
    if (ab != null) {
      Long queue = ab.integer("queueDepth", 0, Integer.MAX_VALUE);
      Double kv = ab.number("kvUtilization", 0, 1);
      Double ttft = ab.number("predictedTtftMs", 0, 1e9);
      if (queue == null && kv == null && ttft == null && ab.errorsBefore == b.errors) {
        b.error(ab.pos, ab.path, "admitBelow needs queueDepth, kvUtilization or predictedTtftMs");
      }
      for (String k : List.of("queueDepth", "kvUtilization", "predictedTtftMs")) {
        YNode v = ab.peek(k);
        if (v instanceof YNode.YScalar s && (s.type() == YNode.Type.INT || s.type() == YNode.Type.FLOAT)
            && Scalars.parseDouble(s.value()) == 0) {
          b.error(v.pos(), ab.child(k), "nothing is below 0: this threshold can never admit a request");
        }
      }
      ab.done();
      admitBelow = new InferencePolicy.AdmitBelow(Scalars.toInt(queue), kv, ttft);
    }
    Long priority = a.integer("setPriority", Integer.MIN_VALUE, Integer.MAX_VALUE);
    Duration retryAfter = a.duration("retryAfter");
    boolean effects = route != null || rewrite != null || fallback != null || requireLocal != null
        || onSaturation != null || admitBelow != null || priority != null;
    if (reject != null && effects) {
      b.error(a.pos("reject"), a.child("reject"), "reject stands alone: a rejected request is not routed, so "
          + "remove the other actions (only retryAfter may accompany reject)");
    } else if (reject == null && !effects && a.errorsBefore == b.errors) {
      b.error(a.pos, a.path, "the action does nothing; give route, rewriteModel, reject, fallback, requireLocal, "
          + "onSaturation, admitBelow or setPriority");
    }
    if (Boolean.TRUE.equals(requireLocal) && fallback != null && !fallback.isEmpty()) {
      b.error(a.pos("fallback"), a.child("fallback"), "contradicts requireLocal: true (fallbacks are external)");
    }
    if (Boolean.FALSE.equals(requireLocal)) {
      b.warn(a.pos("requireLocal"), a.child("requireLocal"),
          "requireLocal: false has no effect: it cannot undo another rule's requireLocal");
    }
    a.done();
    return new InferencePolicy.Action(route, rewrite, reject, fallback, requireLocal, onSaturation, admitBelow,
        Scalars.toInt(priority), retryAfter);
  }
}
