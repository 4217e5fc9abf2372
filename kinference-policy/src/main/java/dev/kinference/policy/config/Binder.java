package dev.kinference.policy.config;

import dev.kinference.endpoint.Saturation;
import dev.kinference.policy.classify.BuiltinPersonalDataDetector;
import dev.kinference.policy.classify.Complexity;
import dev.kinference.policy.classify.PersonalData;
import dev.kinference.policy.classify.PersonalDataKind;
import dev.kinference.policy.model.ExternalProvider;
import dev.kinference.policy.model.FallbackRef;
import dev.kinference.policy.model.InferencePolicy;
import dev.kinference.policy.model.InferencePool;
import dev.kinference.policy.model.ModelAlias;
import dev.kinference.policy.model.ObjectMeta;
import dev.kinference.policy.model.Price;
import dev.kinference.policy.model.Resource;
import dev.kinference.policy.limits.CalendarPeriod;
import dev.kinference.policy.model.Tenant;
import dev.kinference.plugin.Parameter;
import dev.kinference.plugin.Parameters;
import dev.kinference.plugin.PluginSet;
import dev.kinference.plugin.Plugins;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.request.TrafficClass;
import dev.kinference.routing.RoutingProfile;
import dev.kinference.routing.Scorer;
import java.math.BigInteger;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Binds one document to a {@link Resource}, reporting every structural problem (unknown fields with suggestions,
 * wrong types, missing required fields, values out of range, limits that can never admit a request, keys written
 * inline) and recording the position of each field for later cross-resource checks. Not thread-safe; one binder
 * per document.
 */
final class Binder {

  static final Set<String> KINDS = Set.of(InferencePool.KIND, ModelAlias.KIND, ExternalProvider.KIND, Tenant.KIND,
      InferencePolicy.KIND);
  private static final Pattern DNS_NAME =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern HEX64 = Pattern.compile("[0-9a-fA-F]{64}");
  private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
  /** Metadata fields a Kubernetes API server adds; ignored. */
  private static final Set<String> SERVER_METADATA = Set.of("uid", "resourceVersion", "generation",
      "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "ownerReferences",
      "finalizers", "generateName", "selfLink");
  private static final Set<String> INLINE_KEY_FIELDS = Set.of("value", "key", "apiKey", "secret", "token");
  private static final BuiltinPersonalDataDetector SECRETS = new BuiltinPersonalDataDetector();

  private final Problems problems;
  private final Map<String, YNode.Pos> positions = new HashMap<>();
  private int errors;

  private Binder(Problems problems) {
    this.problems = problems;
  }

  /** A bound document: the resource (null when it has errors) and the positions of its fields. */
  record Bound(@Nullable Resource resource, @Nullable String kind, @Nullable String name,
      Map<String, YNode.Pos> positions, YNode.Pos start) {}

  static Bound bind(YNode root, YNode.Pos start, Problems problems) {
    Binder b = new Binder(problems);
    int before = problems.list().size();
    Resource r = null;
    String kind = null;
    String name = null;
    Obj top = b.obj(root, "");
    if (top != null) {
      String apiVersion = top.str("apiVersion");
      if (apiVersion == null) {
        top.missing("apiVersion", "write apiVersion: " + Resource.API_VERSION);
      } else if (!apiVersion.equals(Resource.API_VERSION)) {
        b.error(top.pos("apiVersion"), "apiVersion", "unsupported apiVersion '" + apiVersion + "'; this version "
            + "reads " + Resource.API_VERSION);
      }
      kind = top.str("kind");
      ObjectMeta meta = b.metadata(top);
      name = meta == null ? null : meta.name();
      top.ignore("status");
      if (kind == null) {
        top.missing("kind", "one of " + String.join(", ", new java.util.TreeSet<>(KINDS)));
        top.ignore("spec");
      } else if (!KINDS.contains(kind)) {
        b.error(top.pos("kind"), "kind", "unknown kind '" + kind + "'" + suggest(kind, KINDS) + "; known kinds: "
            + String.join(", ", new java.util.TreeSet<>(KINDS)));
        top.ignore("spec");
      } else {
        Obj spec = top.requiredObj("spec");
        if (spec != null && meta != null) {
          r = switch (kind) {
            case InferencePool.KIND -> b.pool(meta, spec);
            case ModelAlias.KIND -> b.alias(meta, spec);
            case ExternalProvider.KIND -> b.provider(meta, spec);
            case Tenant.KIND -> b.tenant(meta, spec);
            case InferencePolicy.KIND -> b.policy(meta, spec);
            default -> null;
          };
        } else if (spec != null) {
          spec.ignoreAll();
        }
      }
      top.done();
    }
    // secrets anywhere, unless the field was already reported as a key written inline
    Set<YNode.Pos> reported = new HashSet<>();
    for (Problem p : problems.list().subList(before, problems.list().size())) {
      reported.add(new YNode.Pos(p.line(), p.column()));
    }
    b.scanSecrets(root, "", new HashSet<>(), reported);
    boolean failed = b.errors > 0 || problems.list().subList(before, problems.list().size()).stream()
        .anyMatch(Problem::isError);
    return new Bound(failed ? null : r, kind, name, Map.copyOf(b.positions), start);
  }

  // ---- resources ------------------------------------------------------------------------------------------------

  private @Nullable ObjectMeta metadata(Obj top) {
    Obj m = top.requiredObj("metadata");
    if (m == null) {
      return null;
    }
    String name = m.str("name");
    if (name == null) {
      m.missing("name", "every resource needs a name");
    } else if (name.length() > 253 || !DNS_NAME.matcher(name).matches()) {
      error(m.pos("name"), m.child("name"), "invalid name '" + name + "': use lower-case letters, digits, '-' and "
          + "'.', starting and ending with a letter or digit (at most 253 characters)");
    }
    String ns = m.str("namespace");
    Map<String, String> labels = m.strMap("labels");
    Map<String, String> annotations = m.strMap("annotations");
    SERVER_METADATA.forEach(m::ignore);
    m.done();
    return name == null ? null : new ObjectMeta(name, ns, labels, annotations);
  }

  private InferencePool pool(ObjectMeta meta, Obj spec) {
    String model = spec.requiredStr("model", "the served model name, such as Qwen/Qwen3-8B");
    List<InferencePool.StaticEndpoint> endpoints = spec.list("endpoints", this::staticEndpoint);
    InferencePool.LabelSelector selector = null;
    Obj sel = spec.obj("selector");
    if (sel != null) {
      Map<String, String> match = sel.strMap("matchLabels");
      if (match.isEmpty()) {
        error(sel.pos, sel.path, "matchLabels must name at least one label");
      }
      sel.done();
      selector = new InferencePool.LabelSelector(match);
    }
    if (spec.has("endpoints") && spec.has("selector")) {
      error(spec.pos("selector"), spec.child("selector"), "give either endpoints or a selector, not both");
    } else if (!spec.has("selector") && (!spec.has("endpoints")
        || (spec.peek("endpoints") instanceof YNode.YList l && l.items().isEmpty()))) {
      error(spec.pos, spec.path, "a pool needs endpoints (a static list) or a selector (resolved by discovery)");
    }
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < endpoints.size(); i++) {
      String id = endpointId(endpoints.get(i));
      if (id != null && !ids.add(id)) {
        String p = spec.child("endpoints") + "[" + i + "]";
        error(positions.getOrDefault(p, spec.pos), p, "duplicate endpoint id '" + id + "'");
      }
    }
    Long blockSize = spec.integer("blockSize", 1, 4096);
    InferencePool.Capacity capacity = null;
    Obj cap = spec.obj("capacity");
    if (cap != null) {
      Long maxConc = cap.integer("maxConcurrentRequests", 0, Integer.MAX_VALUE);
      if (maxConc != null && maxConc == 0) {
        error(cap.pos("maxConcurrentRequests"), cap.child("maxConcurrentRequests"),
            "0 concurrent requests per endpoint can never admit a request");
      }
      Long replicas = cap.integer("replicas", 0, 100_000);
      cap.done();
      capacity = new InferencePool.Capacity(toInt(maxConc), toInt(replicas));
    }
    InferencePool.SaturationThresholds saturation = null;
    Obj sat = spec.obj("saturation");
    if (sat != null) {
      Long maxWaiting = sat.integer("maxWaiting", 0, Integer.MAX_VALUE);
      Double maxKv = sat.number("maxKvUtilization", 0, 1);
      if (maxKv != null && maxKv == 0) {
        error(sat.pos("maxKvUtilization"), sat.child("maxKvUtilization"), "must be above 0 (a fraction in (0, 1])");
      }
      sat.done();
      saturation = new InferencePool.SaturationThresholds(
          maxWaiting == null ? Saturation.DEFAULT.maxWaiting() : maxWaiting.intValue(),
          maxKv == null ? Saturation.DEFAULT.maxKvUsage() : maxKv);
    }
    Price price = price(spec, "price");
    InferencePool.Routing routing = null;
    Obj r = spec.obj("routing");
    if (r != null) {
      Obj p = r.requiredObj("profile");
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
   * type declares, in range; every parameter written out in the result (defaults included). Null when it has errors.
   */
  private @Nullable RoutingProfile routingProfile(Obj p) {
    int before = errors;
    List<RoutingProfile.WeightedScorer> scorers = p.list("scorers", this::weightedScorer);
    if (!p.has("scorers")) {
      p.missing("scorers", "a list of {type, weight, parameters}, such as - {type: prefix-overlap, weight: 1}");
    } else if (p.peek("scorers") instanceof YNode.YList l && l.items().isEmpty()) {
      error(p.pos("scorers"), p.child("scorers"), "a profile needs at least one scorer; known: "
          + String.join(", ", KnownScorers.SET.names()));
    }
    p.done();
    Set<String> types = new HashSet<>();
    for (int i = 0; i < scorers.size(); i++) {
      if (!types.add(scorers.get(i).type())) {
        String at = p.child("scorers") + "[" + i + "]";
        error(positions.getOrDefault(at, p.pos), at, "scorer '" + scorers.get(i).type()
            + "' appears twice in the profile; give each type once");
      }
    }
    if (errors > before || scorers.isEmpty()) {
      return null;
    }
    return new RoutingProfile(scorers).resolve(KnownScorers.SET);
  }

  private RoutingProfile.@Nullable WeightedScorer weightedScorer(YNode node, String path) {
    Obj o = obj(node, path);
    if (o == null) {
      return null;
    }
    int before = errors;
    List<String> known = KnownScorers.SET.names();
    String type = o.requiredStr("type", "one of " + String.join(", ", known));
    Scorer factory = null;
    if (o.has("type") && !type.isBlank()) {
      factory = KnownScorers.SET.find(type).orElse(null);
      if (factory == null) {
        error(o.pos("type"), o.child("type"), "unknown scorer type '" + type + "'" + suggest(type, known)
            + "; known: " + String.join(", ", known));
      }
    }
    Double weight = o.number("weight", 0, 1e6);
    if (weight != null && weight == 0) {
      error(o.pos("weight"), o.child("weight"), "must be above 0 (leave the scorer out to not use it)");
    }
    Map<String, Object> parameters = new LinkedHashMap<>();
    Obj params = o.obj("parameters");
    if (params != null) {
      params.ignoreAll();
      if (factory != null) {
        parameters(factory, params, parameters);
      }
    }
    o.done();
    if (errors > before || factory == null) {
      return null;
    }
    return new RoutingProfile.WeightedScorer(type, weight == null ? 1.0 : weight, parameters);
  }

  /** Reads a scorer's parameters by its declaration: the kind says how a value is read, the core checks range. */
  private void parameters(Scorer factory, Obj params, Map<String, Object> out) {
    Map<String, Parameter> declared = new LinkedHashMap<>();
    factory.declaredParameters().forEach(d -> declared.put(d.name(), d));
    String allowed = declared.isEmpty() ? "scorer " + factory.name() + " takes no parameters"
        : factory.name() + " takes " + String.join(", ", declared.keySet());
    for (YNode.Entry e : params.map.entries().values()) {
      String at = params.child(e.key());
      positions.put(at, e.value().pos());
      Parameter d = declared.get(e.key());
      if (d == null) {
        error(e.keyPos(), at, "unknown parameter '" + e.key() + "'" + suggest(e.key(), declared.keySet()) + "; "
            + allowed);
        continue;
      }
      Object value = parameterValue(d, e.value());
      if (value == null) {
        error(e.value().pos(), at, "expected " + d.range() + ", got " + YNode.describe(e.value()));
        continue;
      }
      for (Parameters.Problem problem : Parameters.problems(List.of(d), Map.of(d.name(), value))) {
        error(e.value().pos(), at, problem.message());
      }
      out.put(d.name(), value);
    }
  }

  private static @Nullable Object parameterValue(Parameter d, YNode node) {
    if (!(node instanceof YNode.YScalar s) || s.value() == null) {
      return null;
    }
    return switch (d.kind()) {
      case NUMBER -> s.type() == YNode.Type.INT ? (Object) toDouble(parseInt(s.value()))
          : s.type() == YNode.Type.FLOAT ? (Object) parseFloat(s.value()) : null;
      case INTEGER -> {
        BigInteger v = s.type() == YNode.Type.INT ? parseInt(s.value()) : null;
        yield v == null || v.bitLength() > 62 ? null : (Object) v.longValue();
      }
      case DURATION -> s.type() == YNode.Type.STRING ? Durations.parse(s.value()) : null;
    };
  }

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
    Obj o = obj(node, path);
    if (o == null) {
      return null;
    }
    String id = o.str("id");
    String url = o.requiredStr("url", "such as http://10.0.0.7:8000");
    if (o.has("url")) {
      checkUrl(o, "url", url, false);
    }
    Map<String, String> labels = o.strMap("labels");
    o.done();
    return new InferencePool.StaticEndpoint(id, url, labels);
  }

  private @Nullable URI checkUrl(Obj o, String key, String url, boolean external) {
    try {
      URI u = new URI(url);
      if (!"http".equals(u.getScheme()) && !"https".equals(u.getScheme())) {
        error(o.pos(key), o.child(key), "'" + url + "' is not an http or https URL");
        return null;
      }
      if (u.getHost() == null) {
        error(o.pos(key), o.child(key), "'" + url + "' has no host");
        return null;
      }
      if (u.getUserInfo() != null) {
        error(o.pos(key), o.child(key), "credentials written inline in the URL; use apiKey.env or apiKey.file");
        return null;
      }
      if (external && "http".equals(u.getScheme()) && !isLocalHost(u.getHost())) {
        warn(o.pos(key), o.child(key), "prompts and the API key would travel in clear text over http");
      }
      return u;
    } catch (URISyntaxException e) {
      error(o.pos(key), o.child(key), "invalid URL '" + url + "': " + e.getReason());
      return null;
    }
  }

  private static boolean isLocalHost(String host) {
    return host.equals("localhost") || host.equals("127.0.0.1") || host.equals("[::1]") || host.equals("::1");
  }

  private ModelAlias alias(ObjectMeta meta, Obj spec) {
    String model = spec.str("model");
    List<ModelAlias.Target> targets = spec.list("targets", this::aliasTarget);
    if (!spec.has("targets")) {
      spec.missing("targets", "at least one target: {pool: NAME} or {provider: NAME, model: MODEL}");
    } else if (targets.isEmpty() && errors == 0) {
      error(spec.pos("targets"), spec.child("targets"), "at least one target is needed");
    } else if (!targets.isEmpty() && targets.stream().mapToInt(ModelAlias.Target::weight).sum() == 0) {
      error(spec.pos("targets"), spec.child("targets"),
          "every target has weight 0: the alias can never be served");
    }
    List<FallbackRef> fallback = spec.list("fallback", this::fallbackRef);
    spec.done();
    return new ModelAlias(meta, new ModelAlias.Spec(model == null ? meta.name() : model, targets, fallback));
  }

  private ModelAlias.@Nullable Target aliasTarget(YNode node, String path) {
    Obj o = obj(node, path);
    if (o == null) {
      return null;
    }
    String pool = o.str("pool");
    String provider = o.str("provider");
    String alias = o.str("alias");
    String model = o.str("model");
    Long weight = o.integer("weight", 0, 1_000_000);
    int kinds = (pool != null ? 1 : 0) + (provider != null ? 1 : 0) + (alias != null ? 1 : 0);
    if (kinds != 1 && o.errorsBefore == errors) {
      error(o.pos, o.path, kinds == 0 ? "a target needs one of pool, provider or alias"
          : "a target names exactly one of pool, provider or alias");
    }
    if (provider != null && model == null) {
      o.missing("model", "the provider's model name");
    }
    if (alias != null && model != null) {
      error(o.pos("model"), o.child("model"), "an alias target takes its model from the alias; remove model");
    }
    o.done();
    return new ModelAlias.Target(pool, provider, alias, model, weight == null ? 1 : weight.intValue());
  }

  private @Nullable FallbackRef fallbackRef(YNode node, String path) {
    Obj o = obj(node, path);
    if (o == null) {
      return null;
    }
    String provider = o.str("provider");
    String model = o.str("model");
    String alias = o.str("alias");
    if (alias != null && (provider != null || model != null)) {
      error(o.pos, o.path, "a fallback is either {provider, model} or {alias}, not both");
    } else if (alias == null && (provider == null || model == null)) {
      error(o.pos, o.path, "a fallback needs provider and model (or alias)");
    }
    o.done();
    return new FallbackRef(provider, model, alias);
  }

  private ExternalProvider provider(ObjectMeta meta, Obj spec) {
    ExternalProvider.Api api = spec.enumValue("api", ExternalProvider.Api.class, ExternalProvider.Api::yamlName);
    if (!spec.has("api")) {
      spec.missing("api", "openai or anthropic");
    }
    String baseUrl = spec.requiredStr("baseUrl", "such as https://api.openai.com/v1");
    URI base = spec.has("baseUrl") ? checkUrl(spec, "baseUrl", baseUrl, true) : null;
    ExternalProvider.SecretRef key = secretRef(spec);
    List<ExternalProvider.Model> models = spec.list("models", this::providerModel);
    if (!spec.has("models")) {
      spec.missing("models", "the models offered, such as [{name: gpt-4o-mini}]");
    } else if (models.isEmpty() && spec.peek("models") instanceof YNode.YList l && l.items().isEmpty()) {
      error(spec.pos("models"), spec.child("models"), "no models: the provider could serve nothing; list the models "
          + "it offers, such as [{name: gpt-4o-mini}], or remove the provider");
    }
    Set<String> names = new HashSet<>();
    for (int i = 0; i < models.size(); i++) {
      if (!names.add(models.get(i).name())) {
        String p = spec.child("models") + "[" + i + "]";
        error(positions.getOrDefault(p, spec.pos), p, "model '" + models.get(i).name() + "' is listed twice");
      }
    }
    Price price = price(spec, "price");
    ExternalProvider.Timeouts timeouts = ExternalProvider.Timeouts.DEFAULT;
    Obj t = spec.obj("timeouts");
    if (t != null) {
      Duration connect = positiveTimeout(t, "connect");
      Duration first = positiveTimeout(t, "firstToken");
      Duration request = positiveTimeout(t, "request");
      t.done();
      timeouts = new ExternalProvider.Timeouts(connect != null ? connect : timeouts.connect(),
          first != null ? first : timeouts.firstToken(), request != null ? request : timeouts.request());
    }
    spec.done();
    return new ExternalProvider(meta, new ExternalProvider.Spec(api == null ? ExternalProvider.Api.OPENAI : api,
        base == null ? URI.create("https://invalid.invalid") : base, key == null
            ? new ExternalProvider.SecretRef("INVALID", null) : key, models, price, timeouts));
  }

  private @Nullable Duration positiveTimeout(Obj t, String key) {
    Duration d = t.duration(key);
    if (d != null && d.isZero()) {
      error(t.pos(key), t.child(key), "a timeout of 0 would fail every request to this provider; give a positive "
          + "duration such as 30s, or remove it for the default");
      return null;
    }
    return d;
  }

  private ExternalProvider.@Nullable SecretRef secretRef(Obj spec) {
    YNode n = spec.get("apiKey");
    if (n == null) {
      spec.missing("apiKey", "where the key comes from: {env: VARIABLE} or {file: /path/to/key}");
      return null;
    }
    if (n instanceof YNode.YScalar) {
      error(n.pos(), spec.child("apiKey"), "API key written inline: never put keys in a configuration; use "
          + "apiKey: {env: VARIABLE} or apiKey: {file: /path/to/key}");
      return null;
    }
    Obj o = obj(n, spec.child("apiKey"));
    if (o == null) {
      return null;
    }
    for (String inline : INLINE_KEY_FIELDS) {
      if (o.has(inline)) {
        error(o.keyPos(inline), o.child(inline), "API key written inline: never put keys in a configuration; "
            + "use env: VARIABLE or file: /path/to/key");
        o.ignore(inline);
      }
    }
    String env = o.str("env");
    String file = o.str("file");
    if (env != null && !ENV_NAME.matcher(env).matches()) {
      error(o.pos("env"), o.child("env"), "'" + env + "' is not an environment variable name");
    }
    if (env != null && file != null) {
      error(o.pos, o.path, "give either env or file, not both");
    } else if (env == null && file == null && o.errorsBefore == errors) {
      error(o.pos, o.path, "apiKey needs env: VARIABLE or file: /path/to/key");
    }
    o.done();
    return new ExternalProvider.SecretRef(env, file);
  }

  private ExternalProvider.@Nullable Model providerModel(YNode node, String path) {
    Obj o = obj(node, path);
    if (o == null) {
      return null;
    }
    String name = o.requiredStr("name", "the provider's model name");
    Price price = price(o, "price");
    o.done();
    return new ExternalProvider.Model(name, price);
  }

  private @Nullable Price price(Obj parent, String key) {
    Obj o = parent.obj(key);
    if (o == null) {
      return null;
    }
    Double input = o.number("input", 0, 1e9);
    Double cached = o.number("cachedInput", 0, 1e9);
    Double output = o.number("output", 0, 1e9);
    if (input == null && output == null && cached == null && o.errorsBefore == errors) {
      error(o.pos, o.path, "a price needs input and output (per million tokens)");
    }
    o.done();
    return new Price(input == null ? 0 : input, cached, output == null ? 0 : output);
  }

  private Tenant tenant(ObjectMeta meta, Obj spec) {
    YNode keysNode = spec.peek("apiKeys");
    List<Tenant.ApiKey> keys = keysNode instanceof YNode.YScalar s && s.type() != YNode.Type.NULL
        ? inlineKeys(spec) : spec.list("apiKeys", this::apiKey);
    Tenant.HeaderMatch header = null;
    Obj h = spec.obj("header");
    if (h != null) {
      String name = h.requiredStr("name", "the header's name, such as x-tenant");
      String value = h.requiredStr("value", "the value identifying this tenant");
      if (h.has("name") && !HEADER_NAME.matcher(name).matches()) {
        error(h.pos("name"), h.child("name"), "'" + name + "' is not a valid header name");
      }
      h.done();
      header = new Tenant.HeaderMatch(name, value);
    }
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < keys.size(); i++) {
      if (!seen.add(keys.get(i).sha256())) {
        String p = spec.child("apiKeys") + "[" + i + "]";
        error(positions.getOrDefault(p, spec.pos), p, "the same key is listed twice");
      }
    }
    List<String> models = spec.strList("models");
    if (!spec.has("models")) {
      spec.missing("models", "the public model names the tenant may use, or [\"*\"] for all");
    } else if (models.isEmpty()) {
      error(spec.pos("models"), spec.child("models"), "no models: this tenant can never be admitted");
    }
    Tenant.RateLimits limits = null;
    Obj l = spec.obj("limits");
    if (l != null) {
      limits = rateLimits(l);
    }
    Map<String, Tenant.RateLimits> modelLimits = spec.map("modelLimits", (n, p) -> {
      Obj o = obj(n, p);
      return o == null ? null : rateLimits(o);
    });
    if (limits != null) {
      for (var e : modelLimits.entrySet()) {
        String p = spec.child("modelLimits") + "." + e.getKey();
        warnLooser(p, e.getValue(), limits);
      }
    }
    checkReservable(spec, limits, modelLimits);
    Tenant.Budget budget = null;
    Obj b = spec.obj("budget");
    if (b != null) {
      CalendarPeriod period = b.enumValue("period", CalendarPeriod.class, CalendarPeriod::yamlName);
      if (!b.has("period")) {
        b.missing("period", "hour, day, week or month");
      }
      Double limit = b.number("limit", 0, 1e15);
      if (!b.has("limit")) {
        b.missing("limit", "the most the tenant may spend per period");
      } else if (limit != null && limit == 0) {
        error(b.pos("limit"), b.child("limit"), "a budget of 0 can never admit a request");
      }
      String currency = b.str("currency");
      if (currency != null && !isCurrency(currency)) {
        error(b.pos("currency"), b.child("currency"), "'" + YNode.abbreviate(currency) + "' is not an ISO 4217 "
            + "currency code" + suggestCurrency(currency) + "; write a code such as USD, EUR or GBP");
        currency = null;
      }
      String budgetCurrency = currency == null ? "USD" : currency;
      boolean currencyOk = currency != null || !b.has("currency");
      Map<String, Price> prices = b.map("prices", (n, p) -> {
        Obj o = obj(n, p);
        if (o == null) {
          return null;
        }
        Double in = o.number("input", 0, 1e9);
        Double cached = o.number("cachedInput", 0, 1e9);
        Double out = o.number("output", 0, 1e9);
        String c = o.str("currency");
        if (c != null && !isCurrency(c)) {
          error(o.pos("currency"), o.child("currency"), "'" + YNode.abbreviate(c) + "' is not an ISO 4217 currency "
              + "code" + suggestCurrency(c) + "; write a code such as USD, EUR or GBP");
        } else if (c != null && currencyOk && !c.equals(budgetCurrency)) {
          error(o.pos("currency"), o.child("currency"), "this price is in " + c + " but the budget is in "
              + budgetCurrency + (b.has("currency") ? "" : " (the default)") + ": a budget's prices are in one "
              + "currency, its own; convert the price or set the budget's currency");
        }
        o.done();
        return new Price(in == null ? 0 : in, cached, out == null ? 0 : out);
      });
      b.done();
      budget = new Tenant.Budget(period == null ? CalendarPeriod.MONTH : period, limit == null ? 0 : limit,
          currency == null ? "USD" : currency, prices);
    }
    Tenant.Traffic traffic = Tenant.Traffic.DEFAULT;
    Obj t = spec.obj("traffic");
    if (t != null) {
      traffic = traffic(t);
    }
    if (keys.isEmpty() && header == null && !spec.has("apiKeys")) {
      warn(spec.pos, spec.path, "no apiKeys and no header: callers can only be mapped to this tenant by code");
    }
    spec.done();
    return new Tenant(meta, new Tenant.Spec(keys, header, models, limits, modelLimits, budget, traffic));
  }

  private Tenant.Traffic traffic(Obj t) {
    TrafficClass defaultClass = t.enumValue("defaultClass", TrafficClass.class, Binder::className);
    List<TrafficClass> allowed = t.enumList("allowedClasses", TrafficClass.class, Binder::className);
    Long priority = t.integer("priority", Tenant.Traffic.MIN_PRIORITY, Tenant.Traffic.MAX_PRIORITY);
    Long maxPriority = t.integer("maxPriority", Tenant.Traffic.MIN_PRIORITY, Tenant.Traffic.MAX_PRIORITY);
    TrafficClass def = defaultClass == null ? TrafficClass.INTERACTIVE : defaultClass;
    if (t.has("allowedClasses") && t.errorsBefore == errors && !allowed.contains(def)
        && def != TrafficClass.BATCH) {
      error(t.pos("allowedClasses"), t.child("allowedClasses"), (t.has("defaultClass") ? "does not include "
          + "defaultClass " + className(def) : "does not include " + className(def) + ", the defaultClass when none "
          + "is given") + ": add it, or set defaultClass: batch");
    }
    int p = priority == null ? 0 : priority.intValue();
    int max = maxPriority == null ? p : maxPriority.intValue();
    if (max < p) {
      error(t.pos("maxPriority"), t.child("maxPriority"), "maxPriority " + max + " is below priority " + p
          + (t.has("priority") ? "" : " (the default)") + ": it must be at least the priority of a request that "
          + "does not ask for one");
      max = p;
    }
    t.done();
    return new Tenant.Traffic(def, Set.copyOf(allowed), p, max);
  }

  /** Whether {@code code} is an ISO 4217 currency code known to {@link java.util.Currency}, upper-case. */
  static boolean isCurrency(String code) {
    if (code.length() != 3 || !code.equals(code.toUpperCase(Locale.ROOT))) {
      return false;
    }
    try {
      java.util.Currency.getInstance(code);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static String suggestCurrency(String wrong) {
    String upper = wrong.strip().toUpperCase(Locale.ROOT);
    return !upper.equals(wrong) && isCurrency(upper) ? " (did you mean '" + upper + "'?)" : "";
  }

  private static String className(TrafficClass c) {
    return c.name().toLowerCase(Locale.ROOT);
  }

  private List<Tenant.ApiKey> inlineKeys(Obj spec) {
    YNode n = spec.get("apiKeys");
    error(n == null ? spec.pos : n.pos(), spec.child("apiKeys"), "API keys written inline: store each key's "
        + "SHA-256 instead, as apiKeys: [{sha256: ...}] (printf %s \"$KEY\" | sha256sum)");
    return List.of();
  }

  private Tenant.@Nullable ApiKey apiKey(YNode node, String path) {
    if (node instanceof YNode.YScalar s) {
      String v = s.value() == null ? "" : s.value();
      error(node.pos(), path, HEX64.matcher(v).matches()
          ? "write the hash as {sha256: " + v.toLowerCase(Locale.ROOT) + "}"
          : "API key written inline: store its SHA-256 instead, as {sha256: ...} (printf %s \"$KEY\" | sha256sum)");
      return null;
    }
    Obj o = obj(node, path);
    if (o == null) {
      return null;
    }
    for (String inline : INLINE_KEY_FIELDS) {
      if (o.has(inline)) {
        error(o.keyPos(inline), o.child(inline), "API key written inline: store its SHA-256 instead, as "
            + "sha256: ... (printf %s \"$KEY\" | sha256sum)");
        o.ignore(inline);
      }
    }
    String hash = o.str("sha256");
    if (hash == null && o.errorsBefore == errors) {
      o.missing("sha256", "the lower-case hex SHA-256 of the key");
    } else if (hash != null && !HEX64.matcher(hash).matches()) {
      error(o.pos("sha256"), o.child("sha256"), "not a SHA-256 hex digest (64 hex digits); if this is the key "
          + "itself, it must not be written here: printf %s \"$KEY\" | sha256sum");
      hash = null;
    }
    String name = o.str("name");
    o.done();
    return hash == null ? null : new Tenant.ApiKey(hash.toLowerCase(Locale.ROOT), name);
  }

  private Tenant.RateLimits rateLimits(Obj l) {
    Long rpm = l.integer("requestsPerMinute", 0, Long.MAX_VALUE / 4);
    Long tpm = l.integer("tokensPerMinute", 0, Long.MAX_VALUE / 4);
    Long conc = l.integer("concurrentRequests", 0, Integer.MAX_VALUE);
    Long defMax = l.integer("defaultMaxTokens", 1, 10_000_000);
    for (String k : List.of("requestsPerMinute", "tokensPerMinute", "concurrentRequests")) {
      YNode v = l.peek(k);
      if (v instanceof YNode.YScalar s && s.type() == YNode.Type.INT && "0".equals(s.value())) {
        error(v.pos(), l.child(k), "a limit of 0 can never admit a request; remove the limit or the model");
      }
    }
    l.done();
    return new Tenant.RateLimits(rpm, tpm, toInt(conc), toInt(defMax));
  }

  /**
   * A request without max_tokens reserves the model limit's defaultMaxTokens, else the tenant limits', else
   * {@value Tenant#DEFAULT_MAX_TOKENS} (as {@code Governance.reserve} does): a tokensPerMinute it does not fit under
   * can never admit such a request.
   */
  private void checkReservable(Obj spec, Tenant.@Nullable RateLimits limits,
      Map<String, Tenant.RateLimits> modelLimits) {
    Integer tenantDefault = limits == null ? null : limits.defaultMaxTokens();
    String limitsPath = spec.child("limits");
    if (limits != null) {
      int reserved = tenantDefault == null ? Tenant.DEFAULT_MAX_TOKENS : tenantDefault;
      tooFewTokens(limitsPath, limits.tokensPerMinute(), reserved, tenantDefault != null ? limitsPath : null, null);
    }
    for (var e : modelLimits.entrySet()) {
      String p = spec.child("modelLimits") + "." + e.getKey();
      Integer own = e.getValue().defaultMaxTokens();
      int reserved = own != null ? own : tenantDefault != null ? tenantDefault : Tenant.DEFAULT_MAX_TOKENS;
      String from = own != null ? p : tenantDefault != null ? limitsPath : null;
      tooFewTokens(p, e.getValue().tokensPerMinute(), reserved, from, null);
      if (own != null && limits != null && (tenantDefault == null || own > tenantDefault)) {
        // the tenant's own tokensPerMinute applies to this model's requests too
        tooFewTokens(limitsPath, limits.tokensPerMinute(), own, p, e.getKey());
      }
    }
  }

  private void tooFewTokens(String path, @Nullable Long tpm, int reserved, @Nullable String defaultFrom,
      @Nullable String model) {
    if (tpm == null || tpm <= 0 || tpm > reserved) {
      return;
    }
    String p = path + ".tokensPerMinute";
    error(positions.getOrDefault(p, YNode.Pos.UNKNOWN), p, "tokensPerMinute " + tpm + " is not more than the "
        + reserved + " output tokens reserved for a request " + (model == null ? "" : "for " + model + " ")
        + "without max_tokens (" + (defaultFrom == null ? "defaultMaxTokens, when none is set" : defaultFrom
        + ".defaultMaxTokens") + "): such requests can never be admitted");
  }

  private void warnLooser(String path, Tenant.RateLimits model, Tenant.RateLimits tenant) {
    if (looser(model.requestsPerMinute(), tenant.requestsPerMinute())
        || looser(model.tokensPerMinute(), tenant.tokensPerMinute())
        || looser(model.concurrentRequests() == null ? null : model.concurrentRequests().longValue(),
            tenant.concurrentRequests() == null ? null : tenant.concurrentRequests().longValue())) {
      warn(positions.getOrDefault(path, YNode.Pos.UNKNOWN), path,
          "a per-model limit above the tenant's own limit has no effect; the tenant's limit applies");
    }
  }

  private static boolean looser(@Nullable Long model, @Nullable Long tenant) {
    return model != null && tenant != null && model > tenant;
  }

  private InferencePolicy policy(ObjectMeta meta, Obj spec) {
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
        error(positions.getOrDefault(p, spec.pos), p, "rule name '" + rules.get(i).name() + "' is used by rule "
            + first + " too; names must be unique within a policy");
      }
    }
    InferencePolicy.PersonalDataSettings personalDataSettings = null;
    Obj personalData = spec.obj("personalData");
    if (personalData != null) {
      InferencePolicy.UnknownContent unknownContent = personalData.enumValue("unknownContent", InferencePolicy.UnknownContent.class,
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
    Obj o = obj(node, path);
    if (o == null) {
      return null;
    }
    String name = o.requiredStr("name", "a name for traces, unique within the policy");
    InferencePolicy.Match match = InferencePolicy.Match.ANY;
    Obj m = o.obj("match");
    if (m != null) {
      match = match(m);
    }
    InferencePolicy.Action action = null;
    Obj a = o.requiredObj("action");
    if (a != null) {
      action = action(a);
    }
    Boolean stop = o.bool("stop");
    o.done();
    return action == null ? null : new InferencePolicy.Rule(name, match, action, stop != null && stop);
  }

  private InferencePolicy.Match match(Obj m) {
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
      error(m.pos("personalDataKinds"), m.child("personalDataKinds"),
          "contradicts personalData: false; this rule can never match");
    }
    List<Complexity> complexity = m.enumList("complexity", Complexity.class, Complexity::yamlName);
    List<String> topics = m.strList("topics");
    InferencePolicy.PoolCondition pool = null;
    Obj p = m.obj("pool");
    if (p != null) {
      String name = p.str("name");
      Boolean saturated = p.bool("saturated");
      InferencePolicy.Range queue = range(p, "queueDepth");
      InferencePolicy.Range kv = range(p, "kvUtilization");
      InferencePolicy.Range ttft = range(p, "predictedTtftMs");
      if (saturated == null && queue == null && kv == null && ttft == null && p.errorsBefore == errors) {
        error(p.pos, p.path, "a pool condition needs saturated, queueDepth, kvUtilization or predictedTtftMs");
      }
      p.done();
      pool = new InferencePolicy.PoolCondition(name, saturated, queue, kv, ttft);
    }
    m.done();
    return new InferencePolicy.Match(tenants, models, promptTokens, maxTokens, priority, trafficClass, personalData,
        kinds, complexity, topics, pool);
  }

  private InferencePolicy.@Nullable Range range(Obj parent, String key) {
    Obj o = parent.obj(key);
    if (o == null) {
      return null;
    }
    Double min = o.number("min", -1e18, 1e18);
    Double max = o.number("max", -1e18, 1e18);
    if (min == null && max == null && o.errorsBefore == errors) {
      error(o.pos, o.path, "a range needs min, max or both (inclusive)");
    }
    InferencePolicy.Range r = new InferencePolicy.Range(min, max);
    if (r.isEmpty()) {
      error(o.pos, o.path, "min " + fmt(Objects.requireNonNull(min)) + " is above max "
          + fmt(Objects.requireNonNull(max)) + ": the range matches nothing");
    }
    o.done();
    return r;
  }

  private InferencePolicy.Action action(Obj a) {
    InferencePolicy.Route route = null;
    Obj r = a.obj("route");
    if (r != null) {
      String alias = r.str("alias");
      String pool = r.str("pool");
      if ((alias == null) == (pool == null) && r.errorsBefore == errors) {
        error(r.pos, r.path, "route names exactly one of alias or pool");
      }
      r.done();
      route = new InferencePolicy.Route(alias, pool);
    }
    String rewrite = a.str("rewriteModel");
    InferencePolicy.Reject reject = null;
    Obj rj = a.obj("reject");
    if (rj != null) {
      Long status = rj.integer("status", 400, 599);
      String message = rj.requiredStr("message", "shown to the caller");
      rj.done();
      reject = new InferencePolicy.Reject(status == null ? 403 : status.intValue(), message);
    }
    List<FallbackRef> fallback = a.has("fallback") ? a.list("fallback", this::fallbackRef) : null;
    Boolean requireLocal = a.bool("requireLocal");
    InferencePolicy.OnSaturation onSaturation = a.enumValue("onSaturation", InferencePolicy.OnSaturation.class,
        InferencePolicy.OnSaturation::yamlName);
    InferencePolicy.AdmitBelow admitBelow = null;
    Obj ab = a.obj("admitBelow");
    if (ab != null) {
      Long queue = ab.integer("queueDepth", 0, Integer.MAX_VALUE);
      Double kv = ab.number("kvUtilization", 0, 1);
      Double ttft = ab.number("predictedTtftMs", 0, 1e9);
      if (queue == null && kv == null && ttft == null && ab.errorsBefore == errors) {
        error(ab.pos, ab.path, "admitBelow needs queueDepth, kvUtilization or predictedTtftMs");
      }
      for (String k : List.of("queueDepth", "kvUtilization", "predictedTtftMs")) {
        YNode v = ab.peek(k);
        if (v instanceof YNode.YScalar s && (s.type() == YNode.Type.INT || s.type() == YNode.Type.FLOAT)
            && parseDouble(s.value()) == 0) {
          error(v.pos(), ab.child(k), "nothing is below 0: this threshold can never admit a request");
        }
      }
      ab.done();
      admitBelow = new InferencePolicy.AdmitBelow(toInt(queue), kv, ttft);
    }
    Long priority = a.integer("setPriority", Integer.MIN_VALUE, Integer.MAX_VALUE);
    Duration retryAfter = a.duration("retryAfter");
    boolean effects = route != null || rewrite != null || fallback != null || requireLocal != null
        || onSaturation != null || admitBelow != null || priority != null;
    if (reject != null && effects) {
      error(a.pos("reject"), a.child("reject"), "reject stands alone: a rejected request is not routed, so "
          + "remove the other actions (only retryAfter may accompany reject)");
    } else if (reject == null && !effects && a.errorsBefore == errors) {
      error(a.pos, a.path, "the action does nothing; give route, rewriteModel, reject, fallback, requireLocal, "
          + "onSaturation, admitBelow or setPriority");
    }
    if (Boolean.TRUE.equals(requireLocal) && fallback != null && !fallback.isEmpty()) {
      error(a.pos("fallback"), a.child("fallback"), "contradicts requireLocal: true (fallbacks are external)");
    }
    if (Boolean.FALSE.equals(requireLocal)) {
      warn(a.pos("requireLocal"), a.child("requireLocal"),
          "requireLocal: false has no effect: it cannot undo another rule's requireLocal");
    }
    a.done();
    return new InferencePolicy.Action(route, rewrite, reject, fallback, requireLocal, onSaturation, admitBelow,
        toInt(priority), retryAfter);
  }

  // ---- secrets anywhere -------------------------------------------------------------------------------------------

  private void scanSecrets(YNode n, String path, Set<YNode> seen, Set<YNode.Pos> reported) {
    if (!seen.add(n)) {
      return;
    }
    switch (n) {
      case YNode.YScalar s -> {
        if (s.type() == YNode.Type.STRING && s.value() != null && s.value().length() >= 15) {
          PersonalData found = SECRETS.detect(s.value());
          boolean already = s.pos().line() > 0 && reported.contains(s.pos());
          if (found.kinds().contains(PersonalDataKind.SECRET) && !already) {
            error(s.pos(), path, "this looks like a secret (API key or token) written inline; never put keys in a "
                + "configuration: reference them with apiKey.env or apiKey.file, and store tenants' keys as sha256");
          }
        }
      }
      case YNode.YMap m -> {
        for (YNode.Entry e : m.entries().values()) {
          scanSecrets(e.value(), path.isEmpty() ? e.key() : path + "." + e.key(), seen, reported);
        }
      }
      case YNode.YList l -> {
        for (int i = 0; i < l.items().size(); i++) {
          scanSecrets(l.items().get(i), path + "[" + i + "]", seen, reported);
        }
      }
    }
  }

  // ---- helpers ------------------------------------------------------------------------------------------------

  private void error(YNode.Pos pos, String path, String message) {
    errors++;
    problems.error(pos, path, message);
  }

  private void warn(YNode.Pos pos, String path, String message) {
    problems.warn(pos, path, message);
  }

  private @Nullable Obj obj(YNode n, String path) {
    positions.putIfAbsent(path, n.pos());
    if (n instanceof YNode.YMap m) {
      return new Obj(m, path);
    }
    error(n.pos(), path, "expected a mapping, got " + YNode.describe(n));
    return null;
  }

  private static @Nullable Integer toInt(@Nullable Long v) {
    return v == null ? null : (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, v));
  }

  private static double parseDouble(@Nullable String v) {
    if (v == null) {
      return Double.NaN;
    }
    try {
      return Double.parseDouble(v);
    } catch (NumberFormatException e) {
      return Double.NaN;
    }
  }

  /** See {@link Durations#parse}. */
  static @Nullable Duration parseDuration(String text) {
    return Durations.parse(text);
  }

  static String suggest(String wrong, Iterable<String> known) {
    String best = null;
    int bestDist = Integer.MAX_VALUE;
    for (String k : known) {
      int d = distance(wrong.toLowerCase(Locale.ROOT), k.toLowerCase(Locale.ROOT));
      if (d < bestDist) {
        bestDist = d;
        best = k;
      }
    }
    return best != null && bestDist <= Math.max(2, wrong.length() / 3) ? " (did you mean '" + best + "'?)" : "";
  }

  private static int distance(String a, String b) {
    if (Math.abs(a.length() - b.length()) > 8 || a.length() > 64 || b.length() > 64) {
      return Integer.MAX_VALUE;
    }
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }

  /** A mapping being read: every key read or ignored is known; {@link #done} reports the others. */
  private final class Obj {
    final YNode.YMap map;
    final String path;
    final YNode.Pos pos;
    final List<String> known = new ArrayList<>();
    final int errorsBefore;

    Obj(YNode.YMap map, String path) {
      this.map = map;
      this.path = path;
      this.pos = map.pos();
      this.errorsBefore = errors;
    }

    String child(String key) {
      return path.isEmpty() ? key : path + "." + key;
    }

    boolean has(String key) {
      YNode.Entry e = map.entries().get(key);
      return e != null && !(e.value() instanceof YNode.YScalar s && s.type() == YNode.Type.NULL);
    }

    YNode.Pos pos(String key) {
      YNode.Entry e = map.entries().get(key);
      return e == null ? pos : e.value().pos();
    }

    YNode.Pos keyPos(String key) {
      YNode.Entry e = map.entries().get(key);
      return e == null ? pos : e.keyPos();
    }

    void ignore(String key) {
      known.add(key);
    }

    void ignoreAll() {
      known.addAll(map.entries().keySet());
    }

    /** The value, or null when absent or null; marks the key known and records its position. */
    @Nullable YNode get(String key) {
      known.add(key);
      YNode.Entry e = map.entries().get(key);
      if (e == null) {
        return null;
      }
      positions.put(child(key), e.value().pos());
      if (e.value() instanceof YNode.YScalar s && s.type() == YNode.Type.NULL) {
        return null;
      }
      return e.value();
    }

    /** The value without marking the key. */
    @Nullable YNode peek(String key) {
      YNode.Entry e = map.entries().get(key);
      return e == null ? null : e.value();
    }

    void missing(String key, String hint) {
      error(pos, child(key), "required field missing" + (hint.isEmpty() ? "" : ": " + hint));
    }

    @Nullable String str(String key) {
      YNode n = get(key);
      return n == null ? null : string(n, child(key));
    }

    String requiredStr(String key, String hint) {
      String v = str(key);
      if (v == null) {
        if (!map.entries().containsKey(key) || !has(key)) {
          missing(key, hint);
        }
        return "";
      }
      if (v.isBlank()) {
        error(pos(key), child(key), "must not be blank");
      }
      return v;
    }

    @Nullable Obj obj(String key) {
      YNode n = get(key);
      return n == null ? null : Binder.this.obj(n, child(key));
    }

    @Nullable Obj requiredObj(String key) {
      YNode n = get(key);
      if (n == null) {
        missing(key, "");
        return null;
      }
      return Binder.this.obj(n, child(key));
    }

    @Nullable Long integer(String key, long min, long max) {
      YNode n = get(key);
      if (n == null) {
        return null;
      }
      if (!(n instanceof YNode.YScalar s) || s.type() != YNode.Type.INT || s.value() == null) {
        error(n.pos(), child(key), "expected an integer, got " + YNode.describe(n));
        return null;
      }
      BigInteger v = parseInt(s.value());
      if (v == null) {
        error(n.pos(), child(key), "expected an integer, got " + YNode.describe(n));
        return null;
      }
      if (v.compareTo(BigInteger.valueOf(max)) > 0) {
        error(n.pos(), child(key), "out of range: " + v + " is too large; must be " + bounds(min, max));
        return null;
      }
      if (v.compareTo(BigInteger.valueOf(min)) < 0) {
        error(n.pos(), child(key), "out of range: " + v + " is too small; must be " + bounds(min, max));
        return null;
      }
      return v.longValue();
    }

    @Nullable Double number(String key, double min, double max) {
      YNode n = get(key);
      if (n == null) {
        return null;
      }
      if (!(n instanceof YNode.YScalar s) || (s.type() != YNode.Type.INT && s.type() != YNode.Type.FLOAT) || s.value() == null) {
        error(n.pos(), child(key), "expected a number, got " + YNode.describe(n));
        return null;
      }
      double v = s.type() == YNode.Type.INT ? toDouble(parseInt(s.value())) : parseFloat(s.value());
      if (Double.isNaN(v) || Double.isInfinite(v)) {
        error(n.pos(), child(key), "expected a finite number, got " + s.value());
        return null;
      }
      if (v < min || v > max) {
        error(n.pos(), child(key), "must be between " + fmt(min) + " and " + fmt(max) + ", got " + s.value());
        return null;
      }
      return v;
    }

    @Nullable Boolean bool(String key) {
      YNode n = get(key);
      if (n == null) {
        return null;
      }
      if (!(n instanceof YNode.YScalar s) || s.type() != YNode.Type.BOOL || s.value() == null) {
        error(n.pos(), child(key), "expected true or false, got " + YNode.describe(n));
        return null;
      }
      return s.value().equalsIgnoreCase("true");
    }

    @Nullable Duration duration(String key) {
      YNode n = get(key);
      if (n == null) {
        return null;
      }
      if (!(n instanceof YNode.YScalar s) || s.type() != YNode.Type.STRING || s.value() == null) {
        error(n.pos(), child(key), "expected a duration such as 500ms, 30s, 5m or 1h, got " + YNode.describe(n));
        return null;
      }
      Duration d = parseDuration(s.value());
      if (d == null || d.isNegative()) {
        error(n.pos(), child(key), "invalid duration '" + YNode.abbreviate(s.value())
            + "': write it like 500ms, 30s, 5m, 1h or PT30S");
        return null;
      }
      return d;
    }

    <E extends Enum<E>> @Nullable E enumValue(String key, Class<E> type,
        java.util.function.Function<E, String> yamlName) {
      YNode n = get(key);
      return n == null ? null : Binder.this.enumValue(n, child(key), type, yamlName);
    }

    <E extends Enum<E>> List<E> enumList(String key, Class<E> type, java.util.function.Function<E, String> yamlName) {
      return list(key, (n, p) -> Binder.this.enumValue(n, p, type, yamlName));
    }

    List<String> strList(String key) {
      return list(key, (n, p) -> {
        String s = string(n, p);
        if (s != null && s.isBlank()) {
          error(n.pos(), p, "must not be blank");
          return null;
        }
        return s;
      });
    }

    Map<String, String> strMap(String key) {
      Map<String, String> m = map(key, Binder.this::string);
      return m;
    }

    <T> List<T> list(String key, BiFunction<YNode, String, @Nullable T> item) {
      YNode n = get(key);
      if (n == null) {
        return List.of();
      }
      if (!(n instanceof YNode.YList l)) {
        error(n.pos(), child(key), "expected a list, got " + YNode.describe(n));
        return List.of();
      }
      List<T> out = new ArrayList<>(l.items().size());
      for (int i = 0; i < l.items().size(); i++) {
        YNode c = l.items().get(i);
        String p = child(key) + "[" + i + "]";
        positions.put(p, c.pos());
        if (c instanceof YNode.YScalar s && s.type() == YNode.Type.NULL) {
          error(c.pos(), p, "empty list entry");
          continue;
        }
        T v = item.apply(c, p);
        if (v != null) {
          out.add(v);
        }
      }
      return out;
    }

    <T> Map<String, T> map(String key, BiFunction<YNode, String, @Nullable T> value) {
      YNode n = get(key);
      if (n == null) {
        return Map.of();
      }
      if (!(n instanceof YNode.YMap m)) {
        error(n.pos(), child(key), "expected a mapping, got " + YNode.describe(n));
        return Map.of();
      }
      Map<String, T> out = new LinkedHashMap<>();
      for (YNode.Entry e : m.entries().values()) {
        String p = child(key) + "." + e.key();
        positions.put(p, e.value().pos());
        T v = value.apply(e.value(), p);
        if (v != null) {
          out.put(e.key(), v);
        }
      }
      return out;
    }

    void done() {
      for (YNode.Entry e : map.entries().values()) {
        if (!known.contains(e.key())) {
          error(e.keyPos(), child(e.key()), "unknown field" + suggest(e.key(), known));
        }
      }
    }
  }

  private @Nullable String string(YNode n, String path) {
    if (n instanceof YNode.YScalar s && s.value() != null) {
      if (s.type() == YNode.Type.STRING) {
        return s.value();
      }
      error(n.pos(), path, "expected a string, got " + YNode.describe(n) + " (quote it: \"" + s.value() + "\")");
      return null;
    }
    error(n.pos(), path, "expected a string, got " + YNode.describe(n));
    return null;
  }

  private <E extends Enum<E>> @Nullable E enumValue(YNode n, String path, Class<E> type,
      java.util.function.Function<E, String> yamlName) {
    String s = string(n, path);
    if (s == null) {
      return null;
    }
    List<String> names = new ArrayList<>();
    for (E e : type.getEnumConstants()) {
      String name = yamlName.apply(e);
      if (name.equalsIgnoreCase(s)) {
        return e;
      }
      names.add(name);
    }
    error(n.pos(), path, "'" + s + "' is not one of " + String.join(", ", names) + suggest(s, names));
    return null;
  }

  private static @Nullable BigInteger parseInt(String v) {
    try {
      String s = v.replace("_", "");
      boolean neg = s.startsWith("-");
      if (s.startsWith("-") || s.startsWith("+")) {
        s = s.substring(1);
      }
      BigInteger r;
      if (s.startsWith("0x")) {
        r = new BigInteger(s.substring(2), 16);
      } else if (s.startsWith("0o")) {
        r = new BigInteger(s.substring(2), 8);
      } else {
        r = new BigInteger(s);
      }
      return neg ? r.negate() : r;
    } catch (NumberFormatException | ArithmeticException e) {
      return null;
    }
  }

  private static double toDouble(@Nullable BigInteger v) {
    return v == null ? Double.NaN : v.doubleValue();
  }

  private static double parseFloat(String v) {
    String s = v.toLowerCase(Locale.ROOT);
    if (s.endsWith(".inf") || s.endsWith(".nan")) {
      return Double.NaN;
    }
    return parseDouble(s);
  }

  private static String bounds(long min, long max) {
    if (max >= Long.MAX_VALUE / 4) {
      return "at least " + min;
    }
    return "between " + min + " and " + max;
  }

  private static String fmt(double d) {
    return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
  }
}
