package dev.kinference.examples.customscorer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.Router;
import dev.kinference.routing.Scorer;
import dev.kinference.testkit.ScorerContract;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class ZoneAffinityScorerTest extends ScorerContract {

  @Override
  protected Scorer createScorer() {
    return new ZoneAffinityScorer();
  }

  @Test
  void theRouterFindsItByNameOnTheClassPath() {
    Router router = Router.builder()
        .endpoints(List.of(
            Endpoint.of("us-0", "http://127.0.0.1:8000", "m").withLabel("zone", "us"),
            Endpoint.of("eu-0", "http://127.0.0.1:8001", "m").withLabel("zone", "eu")))
        .scorer("predicted-ttft", 1.0)
        .scorer("zone-affinity", 0.5)
        .build();
    for (int i = 0; i < 20; i++) {
      var d = router.route(InferenceRequest.builder("m").user("q" + i).header("X-Zone", "eu").build());
      assertThat(d.endpoint().id()).isEqualTo("eu-0");
      d.reportFinished(dev.kinference.routing.Usage.UNKNOWN);
    }
  }

  @Test
  void theRouterFindsItByNameOnTheModulePath() throws Exception {
    // Everything the two modules need, as modules: this module's classes, core and its dependencies.
    String modulePath = Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(p -> p.contains("custom-scorer" + File.separator + "target" + File.separator + "classes")
            || p.contains("kinference-core") || p.contains("jackson") || p.contains("slf4j-api")
            || p.contains("caffeine") || p.contains("jspecify") || p.contains("error_prone_annotations"))
        .collect(Collectors.joining(File.pathSeparator));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java, "--module-path", modulePath, "-m",
        "dev.kinference.examples.customscorer/dev.kinference.examples.customscorer.ModulePathCheck"));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.exitValue()).as(output).isZero();
    assertThat(output).contains("module=dev.kinference.examples.customscorer")
        .contains("scorers=predicted-ttft,zone-affinity")
        .contains("chosen=eu-0");
  }
}
