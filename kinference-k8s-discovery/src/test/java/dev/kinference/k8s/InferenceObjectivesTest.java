package dev.kinference.k8s;

import static dev.kinference.k8s.K8sObjects.NS;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** InferenceObjectives ({@code inference.networking.x-k8s.io/v1alpha2}) of one pool on the mock API server. */
class InferenceObjectivesTest {

  static final String OBJECTIVES = "/apis/inference.networking.x-k8s.io/v1alpha2/namespaces/" + NS
      + "/inferenceobjectives";

  private ApiServerFixture api;
  private InferenceObjectives objectives;

  @BeforeEach
  void startServer() throws Exception {
    api = new ApiServerFixture();
    ObjectNode crd = InferencePoolSourceTest.crd();
    ((ObjectNode) crd.get("metadata")).put("name", "inferenceobjectives.inference.networking.x-k8s.io");
    ObjectNode spec = (ObjectNode) crd.get("spec");
    spec.put("group", "inference.networking.x-k8s.io");
    spec.putObject("names").put("kind", "InferenceObjective").put("plural", "inferenceobjectives")
        .put("singular", "inferenceobjective").put("listKind", "InferenceObjectiveList");
    ((ObjectNode) spec.get("versions").get(0)).put("name", "v1alpha2");
    api.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  }

  @AfterEach
  void stop() throws Exception {
    if (objectives != null) {
      objectives.close();
    }
    api.close();
  }

  static ObjectNode objective(String name, String pool, Integer priority) {
    ObjectNode o = EndpointMapper.JSON.createObjectNode();
    o.put("apiVersion", "inference.networking.x-k8s.io/v1alpha2");
    o.put("kind", "InferenceObjective");
    o.putObject("metadata").put("name", name).put("namespace", NS);
    ObjectNode spec = o.putObject("spec");
    if (priority != null) {
      spec.put("priority", priority);
    }
    spec.putObject("poolRef").put("group", "inference.networking.k8s.io").put("kind", "InferencePool")
        .put("name", pool);
    return o;
  }

  private void await(Supplier<Boolean> condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.get()) {
      assertThat(System.nanoTime()).as("%s; priorities %s", what, objectives.priorities()).isLessThan(deadline);
      Thread.sleep(10);
    }
  }

  @Test
  void theObjectivesOfThePoolGiveTheirPriorities() throws Exception {
    api.create(OBJECTIVES, objective("chat", "qwen3", 10));
    api.create(OBJECTIVES, objective("other-pool", "llama", 50));
    api.create(OBJECTIVES, objective("no-priority", "qwen3", null));
    objectives = new InferenceObjectives(NS, "qwen3", api::config,
        new ClusterConnection.Options(Duration.ofMinutes(2), Duration.ofSeconds(10), Duration.ofSeconds(60)));
    objectives.start();
    await(() -> objectives.priorities().equals(Map.of("chat", 10)), "chat only");
    assertThat(objectives.priority("chat")).isEqualTo(10);
    assertThat(objectives.priority("other-pool")).isNull();
    assertThat(objectives.priority("no-priority")).isNull();

    api.create(OBJECTIVES, objective("batch", "qwen3", -5));
    await(() -> Integer.valueOf(-5).equals(objectives.priority("batch")), "batch added");
    api.replace(OBJECTIVES, objective("chat", "qwen3", 20));
    await(() -> Integer.valueOf(20).equals(objectives.priority("chat")), "chat raised");
    api.delete(OBJECTIVES, "chat");
    await(() -> objectives.priority("chat") == null, "chat deleted");
    assertThat(objectives.apply("batch")).isEqualTo(-5);
  }
}
