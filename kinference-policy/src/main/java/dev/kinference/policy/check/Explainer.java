package dev.kinference.policy.check;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.policy.PolicyVerdict;
import dev.kinference.policy.classify.PersonalData;
import dev.kinference.policy.classify.PromptClass;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.engine.YamlPolicyEngine;
import dev.kinference.policy.model.InferencePool;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.RoutingDecision;
import dev.kinference.routing.RoutingException;
import dev.kinference.routing.Router;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * {@code kinference check --explain}: which rules a request fires and where it would go, over a fleet made of the
 * configuration's own pools and providers. Static endpoints are used as declared; a pool with a selector gets one
 * placeholder member ({@code <pool>/selector}). Every member is idle with fresh metrics, except the members of the
 * pools named as saturated, which report a long queue and a full KV cache. The routing step is {@link
 * Router#preview}, which changes nothing; the routing profile it scores with (the pool's {@code spec.routing}, else
 * the default) is shown with every parameter. Stateless; thread-safe.
 */
public final class Explainer {

  private Explainer() {}

  /** The fleet {@link #explain} routes over. */
  public static List<Endpoint> fleetOf(PolicyConfig config) {
    List<Endpoint> endpoints = new ArrayList<>(config.staticEndpoints());
    for (InferencePool p : config.pools()) {
      if (p.spec().selector() != null) {
        endpoints.add(new Endpoint(p.name() + "/selector", URI.create("http://" + p.name() + ".selector.invalid"),
            p.spec().model(), Map.of(InferencePool.POOL_LABEL, p.name())));
      }
    }
    endpoints.addAll(config.providerEndpoints());
    return endpoints;
  }

  /**
   * A human-readable account: the request's facts, every rule that fired, the verdict, and the endpoint the router
   * would choose with its alternates and fallbacks.
   *
   * @param saturatedPools names of pools to show as saturated
   */
  public static String explain(PolicyConfig config, InferenceRequest request, Set<String> saturatedPools) {
    long now = System.nanoTime();
    Fleet fleet = Fleet.of(fleetOf(config));
    for (EndpointState s : fleet.endpoints()) {
      if (s.endpoint().isExternal()) {
        continue;
      }
      String pool = s.endpoint().label(InferencePool.POOL_LABEL);
      boolean saturated = pool != null && saturatedPools.contains(pool);
      s.updateMetrics(saturated ? EndpointMetrics.of(1000, 64, 0.99, now) : EndpointMetrics.of(0, 0, 0.05, now));
    }
    YamlPolicyEngine engine = YamlPolicyEngine.builder().config(config).ticker(() -> now).random(new Random(1))
        .build();
    YamlPolicyEngine.Explanation e = engine.explain(request, fleet.snapshot());
    StringBuilder sb = new StringBuilder();
    sb.append("request: model ").append(request.model()).append(", tenant ")
        .append(request.tenant() == null ? "(none)" : request.tenant()).append(", ")
        .append(request.trafficClass().name().toLowerCase(java.util.Locale.ROOT)).append(", priority ")
        .append(request.priority()).append(", max_tokens ").append(request.maxTokens() < 0 ? "(none)"
            : request.maxTokens()).append('\n');
    sb.append("facts: ~").append(e.promptTokens()).append(" prompt tokens");
    PersonalData pd = e.personalData();
    sb.append(", personal data: ").append(pd == null || !pd.found() ? "none" : pd.describe());
    if (pd != null && pd.found()) {
      // where, never what: kind, detector, field path and offset
      sb.append(" (").append(String.join(", ", pd.findings().stream().map(f -> f.describe()).toList()));
      if (pd.occurrences() > pd.findings().size()) {
        sb.append(pd.findings().isEmpty() ? "" : ", ").append(pd.occurrences() - pd.findings().size())
            .append(" more");
      }
      sb.append(')');
    }
    PromptClass pc = e.promptClass();
    if (pc != null) {
      sb.append(", complexity: ").append(pc.complexity().yamlName()).append(" (").append(pc.reason())
          .append("), topics: ").append(String.join(", ", new java.util.TreeSet<>(pc.topics())));
    }
    sb.append('\n');
    if (!saturatedPools.isEmpty()) {
      sb.append("saturated pools (assumed): ").append(String.join(", ", new java.util.TreeSet<>(saturatedPools)))
          .append('\n');
    }
    sb.append("trace:\n");
    for (String t : e.verdict().trace()) {
      sb.append("  ").append(t).append('\n');
    }
    switch (e.verdict()) {
      case PolicyVerdict.Reject r -> {
        sb.append("verdict: reject ").append(r.httpStatus()).append(": ").append(r.reason());
        if (r.retryAfter() != null) {
          sb.append(" (Retry-After ").append(Math.max(1, r.retryAfter().toSeconds())).append(" s)");
        }
        sb.append('\n');
      }
      case PolicyVerdict.Proceed p -> {
        sb.append("verdict: proceed as model ").append(p.request().model()).append(", priority ")
            .append(p.request().priority());
        if (p.candidates() != null) {
          sb.append(", candidates: ").append(p.candidates());
        }
        if (!p.fallbackEndpointIds().isEmpty()) {
          sb.append(", fallbacks: ").append(String.join(" > ", p.fallbackEndpointIds()));
          if (p.preferFallbacks()) {
            sb.append(" (preferred: local capacity saturated)");
          }
        }
        sb.append('\n');
        // a fresh engine with the same seed picks the same weighted targets as the explanation above
        YamlPolicyEngine same = YamlPolicyEngine.builder().config(config).ticker(() -> now).random(new Random(1))
            .build();
        Router.Builder rb = Router.builder().fleet(fleet).policyEngine(same).ticker(() -> now).random(new Random(1));
        config.routingProfiles().forEach(rb::profile);
        try (Router router = rb.build()) {
          String model = p.request().model();
          sb.append("profile: ").append(router.profile(model).describe())
              .append(config.routingProfiles().containsKey(model) ? " (the pool's, for model " + model + ")"
                  : " (the default)").append('\n');
          RoutingDecision d = router.preview(request);
          sb.append("route: ").append(d.endpoint().id()).append(" (").append(d.endpoint().uri()).append(", model ")
              .append(d.endpoint().model()).append(d.endpoint().isExternal() ? ", external" : "").append(")\n");
          if (!d.alternates().isEmpty()) {
            sb.append("then: ").append(String.join(", ", d.alternates().stream().map(Endpoint::id).toList()))
                .append('\n');
          }
          for (String n : d.notes()) {
            sb.append("note: ").append(n).append('\n');
          }
        } catch (RoutingException ex) {
          sb.append("route: none: ").append(ex.getMessage()).append('\n');
        }
      }
    }
    return sb.toString();
  }
}
