package dev.kinference.gateway;

import dev.kinference.policy.engine.Governance;
import dev.kinference.sim.server.SimulatedServer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Policy YAML the gateway tests share: a pool over some servers, a tenant with an API key; each a document. */
final class TestPolicies {

  private TestPolicies() {}

  /** Endpoint ids to URLs of simulated servers, in order. */
  static Map<String, String> endpoints(List<SimulatedServer> sims) {
    Map<String, String> out = new LinkedHashMap<>();
    for (SimulatedServer s : sims) {
      out.put(s.name(), s.baseUri().toString());
    }
    return out;
  }

  /** An InferencePool named {@code local} serving {@code model}; {@code specLines} are added to its spec as written. */
  static String pool(String model, Map<String, String> endpoints, String... specLines) {
    StringBuilder sb = new StringBuilder("---\napiVersion: kinference.dev/v1alpha1\nkind: InferencePool\n")
        .append("metadata: {name: local}\nspec:\n  model: ").append(model).append('\n');
    for (String line : specLines) {
      sb.append("  ").append(line).append('\n');
    }
    sb.append("  endpoints:\n");
    endpoints.forEach((id, url) -> sb.append("    - id: ").append(id).append("\n      url: ").append(url)
        .append('\n'));
    return sb.toString();
  }

  /** A Tenant whose API key is {@code key}, allowed every model; {@code specLines} are added to its spec. */
  static String tenant(String name, String key, String... specLines) {
    StringBuilder sb = new StringBuilder("---\napiVersion: kinference.dev/v1alpha1\nkind: Tenant\nmetadata: {name: ")
        .append(name).append("}\nspec:\n  apiKeys: [{name: k, sha256: ").append(Governance.sha256Hex(key))
        .append("}]\n  models: [\"*\"]\n");
    for (String line : specLines) {
      sb.append("  ").append(line).append('\n');
    }
    return sb.toString();
  }
}
