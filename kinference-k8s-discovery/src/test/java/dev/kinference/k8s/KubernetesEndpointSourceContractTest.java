package dev.kinference.k8s;

import static dev.kinference.k8s.K8sObjects.NS;
import static dev.kinference.k8s.K8sObjects.PODS;
import static dev.kinference.k8s.K8sObjects.SLICES;
import static dev.kinference.k8s.K8sObjects.at;
import static dev.kinference.k8s.K8sObjects.pod;
import static dev.kinference.k8s.K8sObjects.slice;

import dev.kinference.endpoint.EndpointSource;
import dev.kinference.testkit.EndpointSourceContract;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The test kit's EndpointSource contract, against the mock API server. */
class KubernetesEndpointSourceContractTest extends EndpointSourceContract {

  private static ApiServerFixture api;

  @BeforeAll
  static void startServer() throws Exception {
    api = new ApiServerFixture();
    api.create(PODS, pod("vllm-a", "192.0.2.1", true, "qwen3"));
    api.create(PODS, pod("vllm-b", "192.0.2.2", true, "qwen3"));
    api.create(SLICES, slice("vllm-1", "vllm", Map.of("192.0.2.1", at("vllm-a", true, false),
        "192.0.2.2", at("vllm-b", true, false))));
  }

  @AfterAll
  static void stopServer() throws Exception {
    api.close();
  }

  @Override
  protected EndpointSource createSource() {
    return KubernetesEndpointSource.builder().config(api.config()).namespace(NS).service("vllm").build();
  }
}
