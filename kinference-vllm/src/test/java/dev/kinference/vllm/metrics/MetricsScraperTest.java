package dev.kinference.vllm.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.endpoint.Health;
import dev.kinference.vllm.VllmLabels;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Against a real HTTP server on loopback. */
class MetricsScraperTest {

  static final String MODEL = "Qwen/Qwen3-8B";

  final Fleet fleet = Fleet.create();
  TestVllmHttpServer server;
  MetricsScraper scraper;

  @AfterEach
  void close() {
    if (scraper != null) {
      scraper.close();
    }
    if (server != null) {
      server.close();
    }
  }

  static String page(int waiting, int running, double kv) {
    return """
        # HELP vllm:num_requests_running Number of requests in model execution batches.
        # TYPE vllm:num_requests_running gauge
        vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-8B"} %d.0
        # TYPE vllm:num_requests_waiting gauge
        vllm:num_requests_waiting{engine="0",model_name="Qwen/Qwen3-8B"} %d.0
        # TYPE vllm:kv_cache_usage_perc gauge
        vllm:kv_cache_usage_perc{engine="0",model_name="Qwen/Qwen3-8B"} %s
        # TYPE vllm:cache_config_info gauge
        vllm:cache_config_info{block_size="32",engine="0",num_gpu_blocks="1000"} 1.0
        """.formatted(running, waiting, kv);
  }

  MetricsScraper scraper() {
    return MetricsScraper.builder()
        .interval(Duration.ofMillis(10))
        .unhealthyAfter(Duration.ofMillis(300))
        .healthInterval(Duration.ofMillis(30))
        .timeout(Duration.ofMillis(500))
        .build();
  }

  /** Starts a server answering {@code metricsPage} and a scraper of it; returns the endpoint's state. */
  EndpointState scrapeOneServer(String metricsPage) throws Exception {
    server = new TestVllmHttpServer();
    server.metrics = metricsPage;
    fleet.setEndpoints(List.of(Endpoint.of("vllm-0", server.uri(), MODEL)));
    scraper = scraper().attach(fleet);
    return fleet.get("vllm-0");
  }

  static void await(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }
  }

  @Test
  void fillsTheEndpointStateAndFollowsChanges() throws Exception {
    server = new TestVllmHttpServer();
    server.metrics = page(2, 3, 0.25);
    fleet.setEndpoints(List.of(Endpoint.of("vllm-0", server.uri(), MODEL)));
    EndpointState state = fleet.get("vllm-0");
    scraper = scraper().attach(fleet);

    await("first scrape", () -> state.metrics() != null);
    EndpointMetrics m = state.metrics();
    assertThat(m.waiting()).isEqualTo(2);
    assertThat(m.running()).isEqualTo(3);
    assertThat(m.kvUsage()).isEqualTo(0.25);
    assertThat(m.blockSize()).isEqualTo(32);
    assertThat(m.numGpuBlocks()).isEqualTo(1000);
    assertThat(state.blockSize(16)).isEqualTo(32);
    assertThat(state.health()).isEqualTo(Health.HEALTHY);

    server.metrics = page(9, 1, 0.9);
    await("new metrics", () -> state.metrics().waiting() == 9);
    assertThat(state.metrics().kvUsage()).isEqualTo(0.9);
    long before = state.metrics().scrapedAtNanos();
    await("fresh scrape", () -> state.metrics().scrapedAtNanos() > before);
  }

  @Test
  void aServerThatStopsAnsweringGoesStaleThenUnhealthyAndRecoversByItself() throws Exception {
    server = new TestVllmHttpServer();
    server.metrics = page(0, 1, 0.1);
    fleet.setEndpoints(List.of(Endpoint.of("vllm-0", server.uri(), MODEL)));
    EndpointState state = fleet.get("vllm-0");
    scraper = scraper().attach(fleet);
    await("first scrape", () -> state.metrics() != null);

    server.stop();
    long lastGood = state.metrics().scrapedAtNanos();
    await("unhealthy", () -> state.health() == Health.UNHEALTHY);
    // A check that reaches Jetty while it stops is answered 500, which marks the endpoint unhealthy at once.
    assertThat(state.healthReason()).containsAnyOf("metrics request failed", "health answered HTTP 500");
    // The metrics stayed as last scraped: stale, which the router's freshness filter sees.
    assertThat(state.metrics().scrapedAtNanos()).isEqualTo(lastGood);
    // The health check can mark it unhealthy before a scrape of the stopped server has failed: wait for one.
    await("a failed scrape", () -> scraper.stats().values().iterator().next().failures() > 0);
    assertThat(state.metrics().scrapedAtNanos()).isEqualTo(lastGood);

    server.restart();
    await("healthy again", () -> state.health() == Health.HEALTHY);
    assertThat(state.metrics().scrapedAtNanos()).isGreaterThan(lastGood);
    assertThat(state.healthReason()).isEmpty();
  }

  @Test
  void health503MarksTheEndpointUnhealthyEvenWhileMetricsAnswer() throws Exception {
    server = new TestVllmHttpServer();
    server.metrics = page(0, 1, 0.1);
    fleet.setEndpoints(List.of(Endpoint.of("vllm-0", server.uri(), MODEL)));
    EndpointState state = fleet.get("vllm-0");
    scraper = scraper().attach(fleet);
    await("first scrape", () -> state.metrics() != null);

    server.healthStatus = 503;
    await("unhealthy", () -> state.health() == Health.UNHEALTHY);
    assertThat(state.healthReason()).isEqualTo("health answered HTTP 503");

    server.healthStatus = 200;
    await("healthy again", () -> state.health() == Health.HEALTHY);
  }

  @Test
  void aPageThatIsNotVllmMetricsCountsAsAFailedScrape() throws Exception {
    EndpointState state = scrapeOneServer("<html>not metrics</html>");

    await("unhealthy", () -> state.health() == Health.UNHEALTHY);
    assertThat(state.metrics()).isNull();
    assertThat(state.healthReason()).contains("does not parse");
  }

  @Test
  void aPageLargerThanTheLimitCountsAsAFailedScrape() throws Exception {
    EndpointState state = scrapeOneServer(page(1, 1, 0.1) + "# padding\n".repeat(MetricsScraper.MAX_PAGE_BYTES / 10 + 1));

    await("unhealthy", () -> state.health() == Health.UNHEALTHY);
    assertThat(state.metrics()).isNull();
    assertThat(state.healthReason()).contains("larger than " + MetricsScraper.MAX_PAGE_BYTES + " bytes");
  }

  @Test
  void scrapesAndHealthChecksOfAServerReuseOneConnection() throws Exception {
    scrapeOneServer(page(1, 1, 0.1));

    await("20 scrapes and 2 health checks", () -> server.metricsRequests.get() >= 20 && server.healthRequests.get() >= 2);
    // A request that fails (a timeout on a loaded machine) abandons its connection; every other one reuses it.
    MetricsScraper.TargetStats stats = scraper.stats().values().iterator().next();
    assertThat(server.connectionsOpened.get())
        .as("connections opened for %s", stats)
        .isLessThanOrEqualTo(1 + (int) (stats.failures() + stats.healthFailures()));
    assertThat(stats.failures() + stats.healthFailures()).as("failed requests").isLessThan(stats.scrapes() / 2);
  }

  @Test
  void closeEndsTheScrapingThreads() throws Exception {
    scrapeOneServer(page(1, 1, 0.1));
    await("a scrape", () -> server.metricsRequests.get() > 0);

    scraper.close();
    await("no scraping thread", () -> Thread.getAllStackTraces().keySet().stream()
        .noneMatch(t -> t.getName().startsWith("kinference-metrics ") && t.getName().endsWith(
            server.uri().substring("http://".length()))));
    int settled = server.metricsRequests.get();
    Thread.sleep(100);
    assertThat(server.metricsRequests.get()).isEqualTo(settled);
  }

  @Test
  void eachRankGetsItsServersPreemptionCounterFromVllmsRealPageAndFollowsItsRise() throws Exception {
    server = new TestVllmHttpServer();
    String real = VllmMetricsTest.page("vllm-metrics-dp2.txt");
    server.metrics = real;
    fleet.setEndpoints(List.of(
        Endpoint.of("vllm-0#0", server.uri(), MODEL).withLabel(VllmLabels.DATA_PARALLEL_RANK, "0"),
        Endpoint.of("vllm-0#1", server.uri(), MODEL).withLabel(VllmLabels.DATA_PARALLEL_RANK, "1")));
    EndpointState rank0 = fleet.get("vllm-0#0");
    EndpointState rank1 = fleet.get("vllm-0#1");
    scraper = scraper().attach(fleet);

    await("both scraped", () -> rank0.metrics() != null && rank1.metrics() != null);
    assertThat(rank0.metrics().preemptions()).isZero();
    assertThat(rank1.metrics().preemptions()).isEqualTo(2.0);

    server.metrics = real.replace("vllm:num_preemptions_total{engine=\"1\",model_name=\"Qwen/Qwen3-8B\"} 2.0",
        "vllm:num_preemptions_total{engine=\"1\",model_name=\"Qwen/Qwen3-8B\"} 7.0");
    await("the counter's rise", () -> rank1.metrics().preemptions() == 7.0);
    assertThat(rank0.metrics().preemptions()).isZero();
  }

  @Test
  void aServerWithoutThePreemptionCounterLeavesItUnknown() throws Exception {
    EndpointState state = scrapeOneServer(page(0, 1, 0.1));
    await("first scrape", () -> state.metrics() != null);
    assertThat(state.metrics().preemptions()).isNaN();
  }

  @Test
  void dataParallelRanksShareOneScrapeAndEndpointsThatLeaveAreNoLongerScraped() throws Exception {
    server = new TestVllmHttpServer();
    server.metrics = page(1, 2, 0.5) + """
        vllm:num_requests_running{engine="1",model_name="Qwen/Qwen3-8B"} 7.0
        vllm:num_requests_waiting{engine="1",model_name="Qwen/Qwen3-8B"} 6.0
        """;
    fleet.setEndpoints(List.of(
        Endpoint.of("vllm-0#0", server.uri(), MODEL).withLabel(VllmLabels.DATA_PARALLEL_RANK, "0"),
        Endpoint.of("vllm-0#1", server.uri(), MODEL).withLabel(VllmLabels.DATA_PARALLEL_RANK, "1")));
    EndpointState rank0 = fleet.get("vllm-0#0");
    EndpointState rank1 = fleet.get("vllm-0#1");
    scraper = scraper().attach(fleet);

    await("both scraped", () -> rank0.metrics() != null && rank1.metrics() != null);
    assertThat(rank0.metrics().running()).isEqualTo(2);
    assertThat(rank1.metrics().running()).isEqualTo(7);
    assertThat(rank1.metrics().waiting()).isEqualTo(6);
    assertThat(scraper.stats()).hasSize(1);

    fleet.setEndpoints(List.of());
    assertThat(scraper.stats()).isEmpty();
    int settled = server.metricsRequests.get() + 1;
    Thread.sleep(100);
    assertThat(server.metricsRequests.get()).isLessThanOrEqualTo(settled);
  }
}
