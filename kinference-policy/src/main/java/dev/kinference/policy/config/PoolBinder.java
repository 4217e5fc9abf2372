package dev.kinference.policy.config;

import dev.kinference.endpoint.Saturation;
import dev.kinference.plugin.Parameter;
import dev.kinference.plugin.Parameters;
import dev.kinference.plugin.PluginSet;
import dev.kinference.plugin.Plugins;
import dev.kinference.policy.model.InferencePool;
import dev.kinference.policy.model.ObjectMeta;
import dev.kinference.policy.model.Price;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.routing.RoutingProfile;
import dev.kinference.routing.Scorer;
import java.math.BigInteger;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Binds an {@code InferencePool}'s spec: endpoints or selector, block size, capacity, saturation, price and the
 * routing profile (each scorer's parameters read by its declaration). Defaults come from core's constants
 * ({@link BlockKeys#DEFAULT_BLOCK_SIZE}, {@link Saturation#DEFAULT}). Not thread-safe; one per document.
 */
final class PoolBinder {

  private final Binding b;

  PoolBinder(Binding b) {
    this.b = b;
  }

  InferencePool pool(ObjectMeta meta, Fields spec) {
    String model = spec.requiredStr("model", "the served model name, such as Qwen/Qwen3-8B");
    List<InferencePool.StaticEndpoint> endpoints = spec.list("endpoints", this::staticEndpoint);
    InferencePool.LabelSelector selector = null;
    Fields sel = spec.obj("selector");
    if (sel != null) {
      Map<String, String> match = sel.strMap("matchLabels");
      if (match.isEmpty()) {
        b.error(sel.pos, sel.path, "matchLabels must name at least one label");
      }
      sel.done();
      selector = new InferencePool.LabelSelector(match);
    }
    if (spec.has("endpoints") && spec.has("selector")) {
      b.error(spec.pos("selector"), spec.child("selector"), "give either endpoints or a selector, not both");
    } else if (!spec.has("selector") && (!spec.has("endpoints")
        || (spec.peek("endpoints") instanceof YNode.YList l && l.items().isEmpty()))) {
      b.error(spec.pos, spec.path, "a pool needs endpoints (a static list) or a selector (resolved by discovery)");
    }
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < endpoints.size(); i++) {
      String id = endpointId(endpoints.get(i));
      if (id != null && !ids.add(id)) {
        String p = spec.child("endpoints") + "[" + i + "]";
        b.error(b.positions.getOrDefault(p, spec.pos), p, "duplicate endpoint id '" + id + "'");
      }
    }
    Long blockSize = spec.integer("blockSize", 1, 4096);
    InferencePool.Capacity capacity = null;
    Fields cap = spec.obj("capacity");
    if (cap != null) {
      Long maxConc = cap.integer("maxConcurrentRequests", 0, Integer.MAX_VALUE);
      if (maxConc != null && maxConc == 0) {
        b.error(cap.pos("maxConcurrentRequests"), cap.child("maxConcurrentRequests"),
            "0 concurrent requests per endpoint can never admit a request");
      }
      Long replicas = cap.integer("replicas", 0, 100_000);
      cap.done();
      capacity = new InferencePool.Capacity(Scalars.toInt(maxConc), Scalars.toInt(replicas));
    }
    InferencePool.SaturationThresholds saturation = null;
    Fields sat = spec.obj("saturation");
    if (sat != null) {
      Long maxWaiting = sat.integer("maxWaiting", 0, Integer.MAX_VALUE);
      Double maxKv = sat.number("maxKvUtilization", 0, 1);
      if (maxKv != null && maxKv == 0) {
        b.error(sat.pos("maxKvUtilization"), sat.child("maxKvUtilization"), "must be above 0 (a fraction in (0, 1])");
      }
      sat.done();
      saturation = new InferencePool.SaturationThresholds(
          maxWaiting == null ? Saturation.DEFAULT.maxWaiting() : maxWaiting.intValue(),
          maxKv == null ? Saturation.DEFAULT.maxKvUsage() : maxKv);
    }
    Price price = b.price(spec, "price");
    InferencePool.Routing routing = null;
    Fields r = spec.obj("routing");
    if (r != null) {
      Fields p = r.requiredObj("profile");
      RoutingProfile profile = p == null ? null : routingProfile(p);
      r.done();
      routing = profile == null ? null : new InferencePool.Routing(profile);
    }
    spec.done();
    return new InferencePool(meta, new InferencePool.Spec(model, endpoints, selector,
        blockSize == null ? BlockKeys.DEFAULT_BLOCK_SIZE : blockSize.intValue(), capacity, saturation, price, routing));
  }

  /** The scorers a profile may name: the built-ins and any scorer jar on the class or module path. */
  private static final class KnownScorers {
    static final PluginSet<Scorer> SET = Plugins.load(Scorer.class);
  }

  /**
   * {@code routing.profile}: its scorers, each a known type with a positive weight (default 1) and parameters its
   * type declares, in range; every parameter written out in the result (defaults included). Null when it has b.errors.
   */
  private @Nullable RoutingProfile routingProfile(Fields p) {
    int before = b.errors;
    List<RoutingProfile.WeightedScorer> scorers = p.list("scorers", this::weightedScorer);
    if (!p.has("scorers")) {
      p.missing("scorers", "a list of {type, weight, parameters}, such as - {type: prefix-overlap, weight: 1}");
    } else if (p.peek("scorers") instanceof YNode.YList l && l.items().isEmpty()) {
      b.error(p.pos("scorers"), p.child("scorers"), "a profile needs at least one scorer; known: "
          + String.join(", ", KnownScorers.SET.names()));
    }
    p.done();
    Set<String> types = new HashSet<>();
    for (int i = 0; i < scorers.size(); i++) {
      if (!types.add(scorers.get(i).type())) {
        String at = p.child("scorers") + "[" + i + "]";
        b.error(b.positions.getOrDefault(at, p.pos), at, "scorer '" + scorers.get(i).type()
            + "' appears twice in the profile; give each type once");
      }
    }
    if (b.errors > before || scorers.isEmpty()) {
      return null;
    }
    return new RoutingProfile(scorers).resolve(KnownScorers.SET);
  }

  private RoutingProfile.@Nullable WeightedScorer weightedScorer(YNode node, String path) {
    Fields o = b.obj(node, path);
    if (o == null) {
      return null;
    }
    int before = b.errors;
    List<String> known = KnownScorers.SET.names();
    String type = o.requiredStr("type", "one of " + String.join(", ", known));
    Scorer factory = null;
    if (o.has("type") && !type.isBlank()) {
      factory = KnownScorers.SET.find(type).orElse(null);
      if (factory == null) {
        b.error(o.pos("type"), o.child("type"), "unknown scorer type '" + type + "'" + Suggestions.suggest(type, known)
            + "; known: " + String.join(", ", known));
      }
    }
    Double weight = o.number("weight", 0, 1e6);
    if (weight != null && weight == 0) {
      b.error(o.pos("weight"), o.child("weight"), "must be above 0 (leave the scorer out to not use it)");
    }
    Map<String, Object> parameters = new LinkedHashMap<>();
    Fields params = o.obj("parameters");
    if (params != null) {
      params.ignoreAll();
      if (factory != null) {
        parameters(factory, params, parameters);
      }
    }
    o.done();
    if (b.errors > before || factory == null) {
      return null;
    }
    return new RoutingProfile.WeightedScorer(type, weight == null ? 1.0 : weight, parameters);
  }

  /** Reads a scorer's parameters by its declaration: the kind says how a value is read, the core checks range. */
  private void parameters(Scorer factory, Fields params, Map<String, Object> out) {
    Map<String, Parameter> declared = new LinkedHashMap<>();
    factory.declaredParameters().forEach(d -> declared.put(d.name(), d));
    String allowed = declared.isEmpty() ? "scorer " + factory.name() + " takes no parameters"
        : factory.name() + " takes " + String.join(", ", declared.keySet());
    for (YNode.Entry e : params.map.entries().values()) {
      String at = params.child(e.key());
      b.positions.put(at, e.value().pos());
      Parameter d = declared.get(e.key());
      if (d == null) {
        b.error(e.keyPos(), at, "unknown parameter '" + e.key() + "'"
            + Suggestions.suggest(e.key(), declared.keySet()) + "; "
            + allowed);
        continue;
      }
      Object value = parameterValue(d, e.value());
      if (value == null) {
        b.error(e.value().pos(), at, "expected " + d.range() + ", got " + YNode.describe(e.value()));
        continue;
      }
      for (Parameters.Problem problem : Parameters.problems(List.of(d), Map.of(d.name(), value))) {
        b.error(e.value().pos(), at, problem.message());
      }
      out.put(d.name(), value);
    }
  }

  private static @Nullable Object parameterValue(Parameter d, YNode node) {
    if (!(node instanceof YNode.YScalar s) || s.value() == null) {
      return null;
    }
    return switch (d.kind()) {
      case NUMBER -> s.type() == YNode.Type.INT ? (Object) Scalars.toDouble(Scalars.parseInt(s.value()))
          : s.type() == YNode.Type.FLOAT ? (Object) Scalars.parseFloat(s.value()) : null;
      case INTEGER -> {
        BigInteger v = s.type() == YNode.Type.INT ? Scalars.parseInt(s.value()) : null;
        yield v == null || v.bitLength() > 62 ? null : (Object) v.longValue();
      }
      case DURATION -> s.type() == YNode.Type.STRING ? Durations.parse(s.value()) : null;
    };
  }

  /** A static endpoint's id: its own, or {@code host:port} of its URL; null when the URL has no host. */
  static @Nullable String endpointId(InferencePool.StaticEndpoint e) {
    if (e.id() != null) {
      return e.id();
    }
    try {
      URI u = new URI(e.url());
      if (u.getHost() == null) {
        return null;
      }
      int port = u.getPort() >= 0 ? u.getPort() : ("https".equals(u.getScheme()) ? 443 : 80);
      return u.getHost() + ":" + port;
    } catch (URISyntaxException ex) {
      return null;
    }
  }

  private InferencePool.@Nullable StaticEndpoint staticEndpoint(YNode node, String path) {
    Fields o = b.obj(node, path);
    if (o == null) {
      return null;
    }
    String id = o.str("id");
    String url = o.requiredStr("url", "such as http://10.0.0.7:8000");
    if (o.has("url")) {
      b.checkUrl(o, "url", url, false);
    }
    Map<String, String> labels = o.strMap("labels");
    o.done();
    return new InferencePool.StaticEndpoint(id, url, labels);
  }
}
