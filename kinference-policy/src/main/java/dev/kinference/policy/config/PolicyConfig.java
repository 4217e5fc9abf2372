package dev.kinference.policy.config;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.policy.model.ExternalProvider;
import dev.kinference.policy.model.InferencePolicy;
import dev.kinference.policy.model.InferencePool;
import dev.kinference.policy.model.ModelAlias;
import dev.kinference.policy.model.Resource;
import dev.kinference.policy.model.Tenant;
import dev.kinference.routing.RoutingProfile;
import java.net.URI;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * A validated, immutable policy configuration with its lookups. Obtain one from {@link PolicyLoader}; every
 * reference in it resolves and it has no alias or fallback cycle. Thread-safe.
 */
public final class PolicyConfig {

  /** Policies are evaluated by ascending {@code spec.order}, then by name. */
  public static final Comparator<InferencePolicy> EVALUATION_ORDER =
      Comparator.comparingInt((InferencePolicy p) -> p.spec().order()).thenComparing(InferencePolicy::name);

  /** No resources: every request proceeds unchanged, no caller is authenticated. */
  public static final PolicyConfig EMPTY = new PolicyConfig(List.of(), List.of());

  private final List<Resource> resources;
  private final List<String> sources;
  private final Map<String, InferencePool> pools = new TreeMap<>();
  private final Map<String, ModelAlias> aliasesByName = new TreeMap<>();
  private final Map<String, ModelAlias> aliasesByModel = new TreeMap<>();
  private final Map<String, ExternalProvider> providers = new TreeMap<>();
  private final Map<String, Tenant> tenants = new TreeMap<>();
  private final Map<String, KeyOwner> tenantsByKeyHash = new HashMap<>();
  private final List<Tenant> headerTenants = new ArrayList<>();
  private final List<InferencePolicy> policies = new ArrayList<>();
  private final List<RuleRef> rules = new ArrayList<>();
  private final Map<String, List<InferencePool>> poolsByModel = new TreeMap<>();

  /** A tenant and the key that identified it. */
  public record KeyOwner(Tenant tenant, Tenant.ApiKey key) {}

  /**
   * A rule in global evaluation order.
   *
   * @param policy the policy holding the rule
   * @param rule the rule
   * @param index the rule's position in its policy
   */
  public record RuleRef(InferencePolicy policy, InferencePolicy.Rule rule, int index) {
    /** {@code policy/rule}, as traces name it. */
    public String id() {
      return policy.name() + "/" + rule.name();
    }
  }

  PolicyConfig(List<Resource> resources, List<String> sources) {
    this.resources = List.copyOf(resources);
    this.sources = List.copyOf(sources);
    for (Resource r : resources) {
      switch (r) {
        case InferencePool p -> {
          pools.put(p.name(), p);
          poolsByModel.computeIfAbsent(p.spec().model(), k -> new ArrayList<>()).add(p);
        }
        case ModelAlias a -> {
          aliasesByName.put(a.name(), a);
          aliasesByModel.put(a.publicModel(), a);
        }
        case ExternalProvider p -> providers.put(p.name(), p);
        case Tenant t -> {
          tenants.put(t.name(), t);
          for (Tenant.ApiKey k : t.spec().apiKeys()) {
            tenantsByKeyHash.put(k.sha256(), new KeyOwner(t, k));
          }
          if (t.spec().header() != null) {
            headerTenants.add(t);
          }
        }
        case InferencePolicy p -> policies.add(p);
      }
    }
    poolsByModel.replaceAll((k, v) -> {
      v.sort(Comparator.comparing(InferencePool::name));
      return List.copyOf(v);
    });
    headerTenants.sort(Comparator.comparing(Tenant::name));
    policies.sort(EVALUATION_ORDER);
    for (InferencePolicy p : policies) {
      for (int i = 0; i < p.spec().rules().size(); i++) {
        rules.add(new RuleRef(p, p.spec().rules().get(i), i));
      }
    }
  }

  /** Every resource, in the order read. */
  public List<Resource> resources() {
    return resources;
  }

  /** The sources the resources were read from. */
  public List<String> sources() {
    return sources;
  }

  public List<InferencePool> pools() {
    return List.copyOf(pools.values());
  }

  public @Nullable InferencePool pool(String name) {
    return pools.get(name);
  }

  /** Pools whose served model is {@code servedModel}, by name. */
  public List<InferencePool> poolsServing(String servedModel) {
    return poolsByModel.getOrDefault(servedModel, List.of());
  }

  public List<ModelAlias> aliases() {
    return List.copyOf(aliasesByName.values());
  }

  /** The alias named {@code name} ({@code metadata.name}). */
  public @Nullable ModelAlias alias(String name) {
    return aliasesByName.get(name);
  }

  /** The alias whose public model is {@code publicModel}. */
  public @Nullable ModelAlias aliasFor(String publicModel) {
    return aliasesByModel.get(publicModel);
  }

  public List<ExternalProvider> providers() {
    return List.copyOf(providers.values());
  }

  public @Nullable ExternalProvider provider(String name) {
    return providers.get(name);
  }

  public List<Tenant> tenants() {
    return List.copyOf(tenants.values());
  }

  public @Nullable Tenant tenant(String name) {
    return tenants.get(name);
  }

  /** The tenant owning the key with this lower-case hex SHA-256, or null. */
  public @Nullable KeyOwner tenantByKeyHash(String sha256) {
    return tenantsByKeyHash.get(sha256);
  }

  /** Tenants recognised by a header, by name. */
  public List<Tenant> headerTenants() {
    return List.copyOf(headerTenants);
  }

  /** Policies in evaluation order. */
  public List<InferencePolicy> policies() {
    return List.copyOf(policies);
  }

  /** Every rule in evaluation order. */
  public List<RuleRef> rules() {
    return List.copyOf(rules);
  }

  /**
   * The routing profile of each model whose pools set one ({@code spec.routing.profile}), every parameter written
   * out; pools serving one model share their profile (the loader checks it).
   */
  public Map<String, RoutingProfile> routingProfiles() {
    Map<String, RoutingProfile> out = new TreeMap<>();
    for (InferencePool p : pools.values()) {
      if (p.spec().routing() != null) {
        out.put(p.spec().model(), Objects.requireNonNull(p.spec().routing()).profile());
      }
    }
    return java.util.Collections.unmodifiableMap(out);
  }

  /** The model names clients may request: alias public names and pools' served models. */
  public List<String> publicModels() {
    TreeSet<String> all = new TreeSet<>(aliasesByModel.keySet());
    all.addAll(poolsByModel.keySet());
    return List.copyOf(all);
  }

  /** Whether a requested model name is known (an alias's public name or a pool's served model). */
  public boolean knowsModel(String model) {
    return aliasesByModel.containsKey(model) || poolsByModel.containsKey(model);
  }

  /**
   * The static members of every pool, labelled {@value InferencePool#POOL_LABEL} with the pool's name and serving
   * its model. Pools with a selector contribute nothing here; discovery supplies them.
   */
  public List<Endpoint> staticEndpoints() {
    List<Endpoint> out = new ArrayList<>();
    for (InferencePool p : pools.values()) {
      for (InferencePool.StaticEndpoint se : p.spec().endpoints()) {
        Map<String, String> labels = new LinkedHashMap<>(se.labels());
        labels.put(InferencePool.POOL_LABEL, p.name());
        out.add(new Endpoint(Objects.requireNonNull(PoolBinder.endpointId(se)), URI.create(se.url()), p.spec().model(),
            labels));
      }
    }
    return out;
  }

  /**
   * One external endpoint per provider model: id {@code external:<provider>/<model>} ({@link
   * ExternalProvider#endpointId}), the provider's base URL, the model, and labels {@code kinference.dev/external=true}
   * and {@value ExternalProvider#PROVIDER_LABEL}.
   */
  public List<Endpoint> providerEndpoints() {
    List<Endpoint> out = new ArrayList<>();
    for (ExternalProvider p : providers.values()) {
      for (ExternalProvider.Model m : p.spec().models()) {
        out.add(new Endpoint(ExternalProvider.endpointId(p.name(), m.name()), p.spec().baseUrl(), m.name(),
            Map.of(Endpoint.EXTERNAL_LABEL, "true", ExternalProvider.PROVIDER_LABEL, p.name(),
                "kinference.dev/api", p.spec().api().yamlName())));
      }
    }
    return out;
  }

  /** {@link #staticEndpoints()} then {@link #providerEndpoints()}: a fleet for a configuration without discovery. */
  public List<Endpoint> endpoints() {
    List<Endpoint> all = new ArrayList<>(staticEndpoints());
    all.addAll(providerEndpoints());
    return all;
  }

  @Override
  public String toString() {
    return "PolicyConfig[" + pools.size() + " pools, " + aliasesByName.size() + " aliases, " + providers.size()
        + " providers, " + tenants.size() + " tenants, " + policies.size() + " policies (" + rules.size()
        + " rules)]";
  }
}
