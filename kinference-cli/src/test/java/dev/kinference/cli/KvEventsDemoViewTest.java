package dev.kinference.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.routing.Router;
import dev.kinference.sim.demo.Demo;
import dev.kinference.sim.demo.RouterView;
import dev.kinference.sim.engine.GpuSpec;
import dev.kinference.sim.engine.ModelSpec;
import dev.kinference.sim.server.SimulatedFleet;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo's default router view end to end, in miniature: the precise index fed over ZeroMQ by the simulated
 * servers' KV events, and their load scraped from {@code /metrics}.
 */
class KvEventsDemoViewTest {

  @Test
  void theDefaultDemoRoutesWithTheServersKvEventsAndMetrics(@TempDir Path dir) throws IOException {
    List<Router> routers = new ArrayList<>();
    RouterView precise = new KvEventsDemoView();
    RouterView watched = new RouterView() {
      @Override
      public String routerName() {
        return precise.routerName();
      }

      @Override
      public Router.Builder configure(Router.Builder builder) {
        return precise.configure(builder);
      }

      @Override
      public Closeable connect(Router router, SimulatedFleet fleet) {
        routers.add(router);
        return precise.connect(router, fleet);
      }

      @Override
      public String describe() {
        return precise.describe();
      }
    };
    Demo.Options options = Demo.Options.builder().servers(2).gpu(GpuSpec.H100).model(ModelSpec.QWEN3_8B)
        .timeScale(10).concurrency(4).warmup(Duration.ofSeconds(2)).measure(Duration.ofSeconds(8))
        .workload(4, 2, 512, 64, 16).reportDir(dir).view(watched).build();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    Demo.Result result = Demo.of(options).run(new PrintStream(bytes, true, StandardCharsets.UTF_8));

    assertThat(result.ours().router()).isEqualTo("kinference-precise");
    assertThat(result.ours().finished()).isPositive();
    assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("kinference-precise", "Report: ");
    assertThat(Files.readString(result.report())).contains(precise.describe());
    Router router = routers.getFirst();
    assertThat(router.cacheIndex().isPrecise()).isTrue();
    assertThat(router.cacheIndex().entryCount()).as("blocks learned from the servers' KV events").isPositive();
    assertThat(router.fleet().snapshot().all()).hasSize(2)
        .allSatisfy(e -> assertThat(e.metrics()).as("scraped /metrics of " + e.id()).isNotNull());
  }
}
