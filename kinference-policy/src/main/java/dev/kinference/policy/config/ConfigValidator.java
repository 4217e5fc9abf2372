package dev.kinference.policy.config;

import dev.kinference.policy.model.ExternalProvider;
import dev.kinference.policy.model.FallbackRef;
import dev.kinference.policy.model.InferencePolicy;
import dev.kinference.policy.model.InferencePolicy.Action;
import dev.kinference.policy.model.InferencePolicy.Match;
import dev.kinference.policy.model.InferencePolicy.PoolCondition;
import dev.kinference.policy.model.InferencePool;
import dev.kinference.policy.model.ModelAlias;
import dev.kinference.policy.model.Resource;
import dev.kinference.policy.model.Tenant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * The checks that need every resource: duplicate names, references that do not resolve, alias and fallback cycles,
 * tenants' keys and headers that identify two tenants, and rules shadowed by earlier rules. References to a
 * resource that exists but has errors of its own are not reported again. Which rule covers which is
 * {@link RuleCoverage}'s. Not thread-safe; one per build.
 */
final class ConfigValidator {

  private final List<Parsed> docs;
  private final List<Problem> out;
  private final Map<String, Parsed> byKindName = new LinkedHashMap<>();
  /** kind/name of documents that exist but did not bind. */
  private final Set<String> broken = new HashSet<>();
  private final Map<String, Parsed> aliasByModel = new HashMap<>();
  private final Set<String> poolModels = new HashSet<>();

  ConfigValidator(List<Parsed> docs, List<Problem> out) {
    this.docs = docs;
    this.out = out;
  }

  /** Runs every check; returns the resources of the documents without errors, in order. */
  List<Resource> validate() {
    List<Resource> ok = new ArrayList<>();
    for (Parsed d : docs) {
      if (d.kind() == null || d.name() == null) {
        continue;
      }
      String key = d.kind() + "/" + d.name();
      Parsed first = byKindName.putIfAbsent(key, d);
      if (first != null) {
        error(d, "metadata.name", "another " + d.kind() + " is named '" + d.name() + "' (" + where(first, "")
            + "); names must be unique per kind");
        continue;
      }
      if (!d.ok()) {
        broken.add(key);
      }
    }
    for (Parsed d : byKindName.values()) {
      if (d.resource() instanceof InferencePool p) {
        poolModels.add(p.spec().model());
      }
    }
    Map<String, Parsed> endpointIds = new HashMap<>();
    for (Parsed d : byKindName.values()) {
      Resource r = d.resource();
      if (r == null) {
        continue;
      }
      ok.add(r);
      switch (r) {
        case ModelAlias a -> {
          Parsed other = aliasByModel.putIfAbsent(a.publicModel(), d);
          if (other != null) {
            error(d, "spec.model", "ModelAlias " + Objects.requireNonNull(other.name()) + " (" + where(other, "")
                + ") already maps the public model '" + a.publicModel() + "'");
          }
        }
        case InferencePool p -> {
          for (int i = 0; i < p.spec().endpoints().size(); i++) {
            String id = PoolBinder.endpointId(p.spec().endpoints().get(i));
            Parsed other = id == null ? null : endpointIds.putIfAbsent(id, d);
            if (other != null && other != d) {
              error(d, "spec.endpoints[" + i + "]", "endpoint id '" + id + "' is also a member of pool "
                  + other.name() + "; give it an explicit id");
            }
          }
        }
        default -> { }
      }
    }
    for (Parsed d : byKindName.values()) {
      switch (d.resource()) {
        case ModelAlias a -> checkAlias(d, a);
        case Tenant t -> checkTenant(d, t);
        case null, default -> { }
      }
    }
    checkRoutingProfiles();
    checkCycles();
    checkTenantIdentities();
    checkPolicies();
    return ok;
  }

  // ---- routing profiles -------------------------------------------------------------------------------------------

  /**
   * The router scores a request by its model, so pools serving one model must agree on their routing profile: a
   * profile on one would silently apply to the other's endpoints too.
   */
  private void checkRoutingProfiles() {
    Map<String, Parsed> firstByModel = new HashMap<>();
    for (Parsed d : byKindName.values()) {
      if (!(d.resource() instanceof InferencePool p)) {
        continue;
      }
      Parsed first = firstByModel.putIfAbsent(p.spec().model(), d);
      if (first == null || !(first.resource() instanceof InferencePool q)) {
        continue;
      }
      if (!Objects.equals(p.spec().routing(), q.spec().routing())) {
        error(d, p.spec().routing() != null ? "spec.routing" : "spec.model", "pools " + q.name() + " ("
            + where(first, "") + ") and " + p.name() + " both serve model '" + p.spec().model() + "' with different "
            + "routing profiles; a profile applies to every endpoint serving its model: give both the same one, or "
            + "neither");
      }
    }
  }

  // ---- references -------------------------------------------------------------------------------------------------

  private void checkAlias(Parsed d, ModelAlias a) {
    if (poolModels.contains(a.publicModel())) {
      warn(d, "spec.model", "a pool serves a model named '" + a.publicModel() + "' too; requests for it use this "
          + "alias");
    }
    for (int i = 0; i < a.spec().targets().size(); i++) {
      ModelAlias.Target t = a.spec().targets().get(i);
      String path = "spec.targets[" + i + "]";
      if (t.pool() != null) {
        ref(d, path + ".pool", InferencePool.KIND, t.pool());
      } else if (t.provider() != null) {
        providerModel(d, path, t.provider(), t.model());
      } else if (t.alias() != null) {
        ref(d, path + ".alias", ModelAlias.KIND, t.alias());
      }
    }
    checkFallbacks(d, "spec.fallback", a.spec().fallback());
  }

  private void checkFallbacks(Parsed d, String path, @Nullable List<FallbackRef> refs) {
    if (refs == null) {
      return;
    }
    for (int i = 0; i < refs.size(); i++) {
      FallbackRef f = refs.get(i);
      String p = path + "[" + i + "]";
      if (f.alias() != null) {
        ref(d, p + ".alias", ModelAlias.KIND, f.alias());
      } else if (f.provider() != null) {
        providerModel(d, p, f.provider(), f.model());
      }
    }
  }

  private void providerModel(Parsed d, String path, String provider, @Nullable String model) {
    if (!ref(d, path + ".provider", ExternalProvider.KIND, provider)) {
      return;
    }
    Parsed doc = byKindName.get(ExternalProvider.KIND + "/" + provider);
    if (doc != null && doc.resource() instanceof ExternalProvider p && model != null && !p.offers(model)) {
      List<String> offered = p.spec().models().stream().map(ExternalProvider.Model::name).toList();
      error(d, path + ".model", "provider " + provider + " offers no model '" + model + "'"
          + Suggestions.suggest(model, offered) + "; it offers " + String.join(", ", offered));
    }
  }

  /** Reports a missing reference; returns whether the referenced resource exists and is valid. */
  private boolean ref(Parsed d, String path, String kind, String name) {
    String key = kind + "/" + name;
    if (broken.contains(key)) {
      return false;
    }
    Parsed target = byKindName.get(key);
    if (target == null) {
      List<String> names = byKindName.values().stream().filter(p -> kind.equals(p.kind()))
          .map(p -> Objects.requireNonNull(p.name())).toList();
      error(d, path, "no " + kind + " named '" + name + "'" + Suggestions.suggest(name, names)
          + (names.isEmpty() ? "" : "; known: " + String.join(", ", names)));
      return false;
    }
    return target.ok();
  }

  /** Checks a requested model name (alias public name or pool model); wildcards are not checked. */
  private void modelRef(Parsed d, String path, String model) {
    if (model.equals("*") || model.contains("*") || aliasByModel.containsKey(model) || poolModels.contains(model)) {
      return;
    }
    for (Parsed p : byKindName.values()) {
      if (!p.ok() && (ModelAlias.KIND.equals(p.kind()) || InferencePool.KIND.equals(p.kind()))) {
        return; // may be the broken one; do not cascade
      }
    }
    TreeSet<String> known = new TreeSet<>(aliasByModel.keySet());
    known.addAll(poolModels);
    error(d, path, "no model '" + model + "': neither a ModelAlias's public model nor a pool's served model"
        + Suggestions.suggest(model, known) + (known.isEmpty() ? "" : "; known: " + String.join(", ", known)));
  }

  private void checkTenant(Parsed d, Tenant t) {
    List<String> models = t.spec().models();
    for (int i = 0; i < models.size(); i++) {
      modelRef(d, "spec.models[" + i + "]", models.get(i));
    }
    for (String m : t.spec().modelLimits().keySet()) {
      modelRef(d, "spec.modelLimits." + m, m);
      if (!t.allows(m) && !m.contains("*")) {
        warn(d, "spec.modelLimits." + m, "the tenant may not use '" + m + "' (not in spec.models); this limit "
            + "never applies");
      }
    }
    Tenant.Budget b = t.spec().budget();
    if (b != null) {
      for (String m : b.prices().keySet()) {
        if (!m.equals("*")) {
          modelRef(d, "spec.budget.prices." + m, m);
        }
      }
      checkBudgetCurrency(d, t, b);
    }
  }

  /**
   * One currency per price table: a budget is charged at its own prices, else at the pools' and providers' prices,
   * which are in {@value #PRICE_CURRENCY}. A budget in another currency must price every model it would otherwise
   * take from them.
   */
  private void checkBudgetCurrency(Parsed d, Tenant t, Tenant.Budget b) {
    if (b.currency().equals(PRICE_CURRENCY) || b.prices().containsKey("*")) {
      return;
    }
    TreeSet<String> borrowed = new TreeSet<>();
    for (Parsed p : byKindName.values()) {
      String model = null;
      boolean priced = false;
      if (p.resource() instanceof ModelAlias a) {
        model = a.publicModel();
        for (ModelAlias.Target target : a.spec().targets()) {
          priced |= target.pool() != null && resource(InferencePool.KIND, target.pool()) instanceof InferencePool pool
              && pool.spec().price() != null;
          priced |= target.provider() != null && target.model() != null
              && resource(ExternalProvider.KIND, target.provider()) instanceof ExternalProvider provider
              && provider.priceOf(target.model()) != null;
        }
      } else if (p.resource() instanceof InferencePool pool && !aliasByModel.containsKey(pool.spec().model())) {
        model = pool.spec().model();
        priced = pool.spec().price() != null;
      }
      if (model != null && priced && t.allows(model) && !b.prices().containsKey(model)) {
        borrowed.add(model);
      }
    }
    if (!borrowed.isEmpty()) {
      error(d, "spec.budget.currency", "the budget is in "
          + b.currency() + " but has no price for " + String.join(", ", borrowed) + ", which would be charged at "
          + "pool or provider prices, in " + PRICE_CURRENCY + ": a budget's prices are in one currency; give "
          + "spec.budget.prices for them (or \"*\") in " + b.currency());
    }
  }

  private @Nullable Resource resource(String kind, String name) {
    Parsed p = byKindName.get(kind + "/" + name);
    return p == null ? null : p.resource();
  }

  /** The currency of pools' and providers' prices (the gateway's price tables). */
  static final String PRICE_CURRENCY = "USD";

  private void checkTenantIdentities() {
    Map<String, Parsed> keys = new HashMap<>();
    Map<String, Parsed> headers = new HashMap<>();
    for (Parsed d : byKindName.values()) {
      if (!(d.resource() instanceof Tenant t)) {
        continue;
      }
      for (int i = 0; i < t.spec().apiKeys().size(); i++) {
        Parsed other = keys.putIfAbsent(t.spec().apiKeys().get(i).sha256(), d);
        if (other != null && other != d) {
          error(d, "spec.apiKeys[" + i + "]", "tenant " + other.name() + " has the same key; a key identifies "
              + "one tenant");
        }
      }
      Tenant.HeaderMatch h = t.spec().header();
      if (h != null) {
        String k = h.name().toLowerCase(java.util.Locale.ROOT) + "=" + h.value();
        Parsed other = headers.putIfAbsent(k, d);
        if (other != null) {
          error(d, "spec.header", "tenant " + other.name() + " is recognised by the same header and value");
        }
      }
    }
  }

  // ---- cycles -----------------------------------------------------------------------------------------------------

  private void checkCycles() {
    Map<String, List<String[]>> edges = new LinkedHashMap<>();
    for (Parsed d : byKindName.values()) {
      if (!(d.resource() instanceof ModelAlias a)) {
        continue;
      }
      List<String[]> e = new ArrayList<>();
      for (int i = 0; i < a.spec().targets().size(); i++) {
        String to = a.spec().targets().get(i).alias();
        if (to != null) {
          e.add(new String[] {to, "target", "spec.targets[" + i + "].alias"});
        }
      }
      for (int i = 0; i < a.spec().fallback().size(); i++) {
        String to = a.spec().fallback().get(i).alias();
        if (to != null) {
          e.add(new String[] {to, "fallback", "spec.fallback[" + i + "].alias"});
        }
      }
      edges.put(a.name(), e);
    }
    Set<String> done = new HashSet<>();
    Set<String> reported = new HashSet<>();
    for (String start : edges.keySet()) {
      dfs(start, edges, new ArrayList<>(), new ArrayList<>(), done, reported);
    }
  }

  private void dfs(String node, Map<String, List<String[]>> edges, List<String> stack, List<String> via,
      Set<String> done, Set<String> reported) {
    int at = stack.indexOf(node);
    if (at >= 0) {
      List<String> cycle = stack.subList(at, stack.size());
      String canonical = new TreeSet<>(cycle).toString();
      if (reported.add(canonical)) {
        StringBuilder sb = new StringBuilder();
        for (int i = at; i < stack.size(); i++) {
          sb.append(stack.get(i)).append(" -(").append(via.get(i)).append(")-> ");
        }
        sb.append(node);
        String first = stack.get(at);
        Parsed d = byKindName.get(ModelAlias.KIND + "/" + first);
        String kind = cycle.size() == 1 ? "refers to itself" : "is part of a cycle";
        boolean viaFallback = via.subList(at, via.size()).contains("fallback");
        error(Objects.requireNonNull(d), via.size() > at ? pathOf(edges, stack, via, at) : "spec",
            "alias " + first + " " + kind + " (" + (viaFallback ? "alias or fallback cycle" : "alias cycle") + "): "
                + sb);
      }
      return;
    }
    if (done.contains(node) || !edges.containsKey(node)) {
      return;
    }
    stack.add(node);
    for (String[] e : edges.getOrDefault(node, List.of())) {
      via.add(e[1]);
      dfs(e[0], edges, stack, via, done, reported);
      via.remove(via.size() - 1);
    }
    stack.remove(stack.size() - 1);
    done.add(node);
  }

  private static String pathOf(Map<String, List<String[]>> edges, List<String> stack, List<String> via, int at) {
    String from = stack.get(at);
    String next = at + 1 < stack.size() ? stack.get(at + 1) : stack.get(at);
    for (String[] e : edges.getOrDefault(from, List.of())) {
      if (e[0].equals(next) && e[1].equals(via.get(at))) {
        return e[2];
      }
    }
    return "spec";
  }

  // ---- policies ---------------------------------------------------------------------------------------------------

  private record Located(Parsed doc, InferencePolicy policy, InferencePolicy.Rule rule, int index) {
    String path() {
      return "spec.rules[" + index + "]";
    }

    String id() {
      return policy.name() + "/" + rule.name();
    }
  }

  private void checkPolicies() {
    List<Located> all = new ArrayList<>();
    List<Parsed> policyDocs = byKindName.values().stream().filter(p -> p.resource() instanceof InferencePolicy)
        .sorted(Comparator.comparing(p -> (InferencePolicy) Objects.requireNonNull(p.resource()),
            PolicyConfig.EVALUATION_ORDER))
        .toList();
    for (Parsed d : policyDocs) {
      InferencePolicy p = (InferencePolicy) Objects.requireNonNull(d.resource());
      for (int i = 0; i < p.spec().rules().size(); i++) {
        Located l = new Located(d, p, p.spec().rules().get(i), i);
        checkRuleRefs(l);
        all.add(l);
      }
    }
    checkLocalOnlyRoutes(all);
    for (int b = 0; b < all.size(); b++) {
      Located later = all.get(b);
      for (int a = 0; a < b; a++) {
        Located earlier = all.get(a);
        String why = RuleCoverage.shadows(earlier.rule(), later.rule());
        if (why != null) {
          warn(later.doc(), later.path(), "rule " + later.id() + " never has an effect: rule " + earlier.id() + " ("
              + where(earlier.doc(), earlier.path()) + ") matches every request it matches and " + why);
          break;
        }
      }
    }
  }

  /**
   * A rule that requires local hardware for every request another rule routes to an alias with only external
   * targets: each of those requests is refused (the built-in local-only guarantee finds no local target). An error:
   * the route can never serve a request, so the configuration says two things that cannot both hold.
   */
  private void checkLocalOnlyRoutes(List<Located> all) {
    for (int q = 0; q < all.size(); q++) {
      Located route = all.get(q);
      InferencePolicy.Route r = route.rule().action().route();
      Match rm = route.rule().match();
      if (r == null || r.alias() == null || Boolean.TRUE.equals(route.rule().action().requireLocal())
          || Boolean.TRUE.equals(rm.personalData()) || !rm.personalDataKinds().isEmpty() // reported already
          || !isValid(ModelAlias.KIND, r.alias()) || !onlyExternal(r.alias(), new HashSet<>())) {
        continue;
      }
      for (int i = 0; i < all.size(); i++) {
        Located local = all.get(i);
        if (i == q || !Boolean.TRUE.equals(local.rule().action().requireLocal())
            || !RuleCoverage.covers(local.rule().match(), route.rule().match())
            || !reaches(all, Math.min(i, q), Math.max(i, q), route.rule().match())) {
          continue;
        }
        error(route.doc(), route.path() + ".action.route.alias", "every request rule " + route.id() + " routes to "
            + "alias " + r.alias() + " would be refused: rule " + local.id() + " (" + where(local.doc(), local.path())
            + ") requires local hardware for all of them, and every target of " + r.alias() + " is an external "
            + "provider; route them to a pool, or narrow rule " + local.id() + "'s match");
        break;
      }
    }
    for (int i = 0; i < all.size(); i++) {
      Located local = all.get(i);
      if (!Boolean.TRUE.equals(local.rule().action().requireLocal())
          || !RuleCoverage.covers(local.rule().match(), Match.ANY) || !reaches(all, 0, i, Match.ANY)) {
        continue;
      }
      for (Parsed d : byKindName.values()) {
        if (d.resource() instanceof ModelAlias a && onlyExternal(a.name(), new HashSet<>())) {
          warn(d, "spec.targets", "every request for model '" + a.publicModel() + "' would be refused: rule "
              + local.id() + " (" + where(local.doc(), local.path()) + ") requires local hardware for every "
              + "request, and every target of alias " + a.name() + " is an external provider");
        }
      }
      break;
    }
  }

  /** Whether evaluation gets from rule {@code from} to rule {@code to} for every request matching {@code m}. */
  private static boolean reaches(List<Located> all, int from, int to, Match m) {
    for (int i = from; i < to; i++) {
      InferencePolicy.Rule rule = all.get(i).rule();
      if ((rule.stop() || rule.action().reject() != null) && RuleCoverage.covers(rule.match(), m)) {
        return false;
      }
    }
    return true;
  }

  private boolean isValid(String kind, String name) {
    Parsed p = byKindName.get(kind + "/" + name);
    return p != null && p.ok();
  }

  private void checkRuleRefs(Located l) {
    Match m = l.rule().match();
    Parsed d = l.doc();
    String p = l.path();
    for (int i = 0; i < m.tenants().size(); i++) {
      ref(d, p + ".match.tenants[" + i + "]", Tenant.KIND, m.tenants().get(i));
    }
    for (int i = 0; i < m.models().size(); i++) {
      modelRef(d, p + ".match.models[" + i + "]", m.models().get(i));
    }
    PoolCondition pc = m.pool();
    if (pc != null && pc.name() != null) {
      ref(d, p + ".match.pool.name", InferencePool.KIND, pc.name());
    }
    Action a = l.rule().action();
    InferencePolicy.Route route = a.route();
    if (route != null) {
      if (route.alias() != null && ref(d, p + ".action.route.alias", ModelAlias.KIND, route.alias())
          && onlyExternal(route.alias(), new HashSet<>())) {
        if (Boolean.TRUE.equals(a.requireLocal())) {
          error(d, p + ".action.route.alias", "alias " + route.alias() + " has only external targets, which "
              + "contradicts requireLocal: true");
        } else if (Boolean.TRUE.equals(m.personalData()) || !m.personalDataKinds().isEmpty()) {
          error(d, p + ".action.route.alias", "rule " + l.id() + " routes personal data to alias " + route.alias()
              + ", whose every target is an external provider: it would not leak, because personal data never "
              + "leaves local pools, but the gateway would refuse every request this rule matches (403); route "
              + "it to a pool or to an alias with a pool target");
        }
      }
      if (route.pool() != null) {
        ref(d, p + ".action.route.pool", InferencePool.KIND, route.pool());
      }
    }
    checkFallbacks(d, p + ".action.fallback", a.fallback());
  }

  private boolean onlyExternal(String alias, Set<String> seen) {
    Parsed d = byKindName.get(ModelAlias.KIND + "/" + alias);
    if (!seen.add(alias) || d == null || !(d.resource() instanceof ModelAlias a)) {
      return false;
    }
    for (ModelAlias.Target t : a.spec().targets()) {
      if (t.pool() != null || (t.alias() != null && !onlyExternal(t.alias(), seen))) {
        return false;
      }
    }
    return true;
  }

  // ---- output -----------------------------------------------------------------------------------------------------

  private void error(Parsed d, String path, String message) {
    YNode.Pos pos = d.at(path);
    out.add(new Problem(Problem.Severity.ERROR, d.source(), pos.line(), pos.column(), path, message));
  }

  private void warn(Parsed d, String path, String message) {
    YNode.Pos pos = d.at(path);
    out.add(new Problem(Problem.Severity.WARNING, d.source(), pos.line(), pos.column(), path, message));
  }

  private static String where(Parsed d, String path) {
    YNode.Pos pos = path.isEmpty() ? d.start : d.at(path);
    return pos.line() > 0 ? d.source() + ":" + pos.line() : d.source();
  }
}
