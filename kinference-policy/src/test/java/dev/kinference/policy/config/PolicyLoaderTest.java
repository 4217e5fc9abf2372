package dev.kinference.policy.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.policy.model.ExternalProvider;
import dev.kinference.policy.model.InferencePolicy;
import dev.kinference.policy.model.InferencePool;
import dev.kinference.policy.model.ModelAlias;
import dev.kinference.policy.model.Tenant;
import dev.kinference.request.TrafficClass;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PolicyLoaderTest {

  /** The example configuration shipped in examples/policies, relative to this module. */
  static final Path EXAMPLES = Path.of("..", "examples", "policies");

  @Test
  void theExampleConfigurationIsValidWithoutWarnings() {
    LoadResult r = PolicyLoader.load(EXAMPLES);
    assertThat(r.problems()).as(r.report()).isEmpty();
    PolicyConfig c = r.orThrow();
    assertThat(c.pools()).extracting(InferencePool::name).containsExactly("large", "small");
    assertThat(c.tenants()).extracting(Tenant::name).containsExactly("analytics", "search", "support-bot");
    assertThat(c.providers()).extracting(ExternalProvider::name).containsExactly("openai");
    assertThat(c.aliases()).extracting(ModelAlias::publicModel).containsExactly("chat", "chat-small");
    assertThat(c.rules()).extracting(PolicyConfig.RuleRef::id).contains("default/personal-data-queues-locally",
        "default/batch-tier", "default/search-bursts-to-cloud");
    assertThat(c.sources()).hasSize(5);
  }

  /** Issue 21: the example on one machine (pools on simulated servers, the other files linked) is as clean. */
  @Test
  void theLocalExampleConfigurationIsValidWithoutWarnings() {
    LoadResult r = PolicyLoader.load(EXAMPLES.resolveSibling("policies-local"));
    assertThat(r.problems()).as(r.report()).isEmpty();
    PolicyConfig c = r.orThrow();
    assertThat(c.sources()).hasSize(5);
    assertThat(c.endpoints()).filteredOn(e -> !e.isExternal()).extracting(Endpoint::id).containsExactlyInAnyOrder(
        "127.0.0.1:18101", "127.0.0.1:18102", "127.0.0.1:18103", "127.0.0.1:18111", "127.0.0.1:18112");
    assertThat(c.tenantByKeyHash(dev.kinference.policy.engine.Governance.sha256Hex("demo-search-prod"))).isNotNull();
  }

  @Test
  void bindsEveryFieldOfTheExample() {
    PolicyConfig c = PolicyLoader.load(EXAMPLES).orThrow();
    InferencePool small = c.pool("small");
    assertThat(small).isNotNull();
    assertThat(small.spec().endpoints()).hasSize(3);
    assertThat(small.spec().capacity().maxConcurrentRequests()).isEqualTo(64);
    assertThat(small.spec().price().cachedInput()).isEqualTo(0.01);
    InferencePool large = c.pool("large");
    assertThat(large.spec().selector().matchLabels()).containsEntry("app", "vllm-qwen3-32b");
    assertThat(large.spec().saturation().maxKvUtilization()).isEqualTo(0.85);
    ExternalProvider openai = c.provider("openai");
    assertThat(openai.spec().api()).isEqualTo(ExternalProvider.Api.OPENAI);
    assertThat(openai.spec().apiKey().env()).isEqualTo("OPENAI_API_KEY");
    assertThat(openai.spec().timeouts().request()).isEqualTo(Duration.ofMinutes(10));
    assertThat(openai.priceOf("gpt-4o").output()).isEqualTo(10.0);
    Tenant analytics = c.tenant("analytics");
    assertThat(analytics.spec().limits().defaultMaxTokens()).isEqualTo(2048);
    assertThat(analytics.spec().budget().period()).isEqualTo(dev.kinference.policy.limits.CalendarPeriod.DAY);
    assertThat(analytics.spec().budget().prices()).containsKeys("chat", "*");
    assertThat(c.tenant("search").spec().modelLimits().get("chat").concurrentRequests()).isEqualTo(32);
    assertThat(c.tenant("support-bot").spec().header().name()).isEqualTo("x-kinference-tenant");
    assertThat(analytics.spec().traffic()).isEqualTo(new Tenant.Traffic(TrafficClass.BATCH,
        Set.of(TrafficClass.BATCH, TrafficClass.INTERACTIVE), 0, 0));
    assertThat(c.tenant("search").spec().traffic()).isEqualTo(new Tenant.Traffic(TrafficClass.INTERACTIVE,
        Set.of(TrafficClass.INTERACTIVE, TrafficClass.BATCH), 0, 5));
    assertThat(c.tenant("support-bot").spec().traffic()).isEqualTo(Tenant.Traffic.DEFAULT);
    InferencePolicy.Rule batch = c.rules().stream().map(PolicyConfig.RuleRef::rule)
        .filter(r -> r.name().equals("batch-tier")).findFirst().orElseThrow();
    assertThat(batch.action().admitBelow().queueDepth()).isEqualTo(2);
    assertThat(batch.action().retryAfter()).isEqualTo(Duration.ofSeconds(60));
    assertThat(c.tenantByKeyHash("e013266d74e196e56aab168ca58bbc26cf0f86856c50a9c1f78ca00f2d3076d8").key().name())
        .isEqualTo("search-prod");
  }

  @Test
  void staticAndProviderEndpointsAreLabelled() {
    PolicyConfig c = PolicyLoader.load(EXAMPLES).orThrow();
    assertThat(c.staticEndpoints()).extracting(Endpoint::id)
        .containsExactly("10.0.0.10:8000", "10.0.0.11:8000", "10.0.0.12:8000");
    assertThat(c.staticEndpoints()).allSatisfy(e -> {
      assertThat(e.label(InferencePool.POOL_LABEL)).isEqualTo("small");
      assertThat(e.model()).isEqualTo("Qwen/Qwen3-8B");
    });
    assertThat(c.staticEndpoints().get(2).label("zone")).isEqualTo("b");
    assertThat(c.providerEndpoints()).extracting(Endpoint::id)
        .containsExactly("external:openai/gpt-4o-mini", "external:openai/gpt-4o");
    assertThat(c.providerEndpoints()).allSatisfy(e -> {
      assertThat(e.isExternal()).isTrue();
      assertThat(e.label(ExternalProvider.PROVIDER_LABEL)).isEqualTo("openai");
      assertThat(e.uri().toString()).isEqualTo("https://api.openai.com/v1");
    });
  }

  @Test
  void aKubernetesCustomResourceIsCheckedOnItsOwnAndThenWithTheOthers() {
    Map<String, Object> alias = Map.of(
        "apiVersion", "kinference.dev/v1alpha1",
        "kind", "ModelAlias",
        "metadata", Map.of("name", "chat", "uid", "1234", "resourceVersion", "77", "generation", 3),
        "spec", Map.of("targets", List.of(Map.of("pool", "small", "weight", 2))),
        "status", Map.of("observedGeneration", 3));
    Parsed parsed = PolicyLoader.parse(alias, "k8s:default/chat");
    assertThat(parsed.problems()).isEmpty();
    assertThat(parsed.resource()).isInstanceOf(ModelAlias.class);

    Map<String, Object> pool = Map.of(
        "apiVersion", "kinference.dev/v1alpha1", "kind", "InferencePool", "metadata", Map.of("name", "smal"),
        "spec", Map.of("model", "m", "selector", Map.of("matchLabels", Map.of("app", "m")), "blockSize", "16"));
    List<Problem> own = PolicyLoader.validate(pool, "k8s:default/smal");
    assertThat(own).extracting(Problem::toString)
        .containsExactly("k8s:default/smal: error: spec.blockSize: expected an integer, got string '16'");

    LoadResult all = PolicyLoader.build(List.of(parsed, PolicyLoader.parse(Map.of(
        "apiVersion", "kinference.dev/v1alpha1", "kind", "InferencePool", "metadata", Map.of("name", "smal"),
        "spec", Map.of("model", "m", "selector", Map.of("matchLabels", Map.of("app", "m")))), "k8s:default/smal")));
    assertThat(all.problems()).extracting(Problem::toString).containsExactly(
        "k8s:default/chat: error: spec.targets[0].pool: no InferencePool named 'small' (did you mean 'smal'?); "
            + "known: smal");
  }

  @Test
  void jsonTextIsYamlToo() {
    String json = """
        {"apiVersion": "kinference.dev/v1alpha1", "kind": "InferencePool", "metadata": {"name": "p"},
         "spec": {"model": "m", "endpoints": [{"url": "http://127.0.0.1:8000"}], "blockSize": 32}}""";
    PolicyConfig c = PolicyLoader.load(json, "pool.json").orThrow();
    assertThat(c.pool("p").spec().blockSize()).isEqualTo(32);
  }

  @Test
  void crossFileReferencesAreReportedInTheRightFile(@TempDir Path dir) throws IOException {
    Files.writeString(dir.resolve("a.yaml"), """
        apiVersion: kinference.dev/v1alpha1
        kind: ModelAlias
        metadata: {name: chat}
        spec:
          targets:
            - pool: missing
        """);
    Files.writeString(dir.resolve("b.yml"), """
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePool
        metadata: {name: present}
        spec: {model: m, endpoints: [{url: "http://10.0.0.1:8000"}]}
        """);
    Files.createDirectories(dir.resolve("..data"));
    Files.writeString(dir.resolve("..data/ignored.yaml"), "not: [valid");
    Files.writeString(dir.resolve("notes.txt"), "not: [valid");
    LoadResult r = PolicyLoader.load(dir);
    assertThat(r.sources()).containsExactly(dir.resolve("a.yaml").toString(), dir.resolve("b.yml").toString());
    assertThat(r.problems()).extracting(Problem::toString).containsExactly(dir.resolve("a.yaml")
        + ":6:13: error: spec.targets[0].pool: no InferencePool named 'missing'; known: present");
  }

  @Test
  void missingPathsEmptyDirectoriesAndNonUtf8FilesAreProblems(@TempDir Path dir) throws IOException {
    Path empty = Files.createDirectory(dir.resolve("empty"));
    Path binary = Files.write(dir.resolve("bin.yaml"), new byte[] {(byte) 0xff, (byte) 0xfe, 0x00, 0x41});
    LoadResult r = PolicyLoader.load(dir.resolve("nope"), empty, binary);
    assertThat(r.problems()).extracting(Problem::message)
        .containsExactlyInAnyOrder("no such file or directory", "no .yaml or .yml files in this directory",
            "not UTF-8 text");
    assertThat(r.config()).isNull();
  }

  @Test
  void orThrowListsTheErrors() {
    LoadResult r = PolicyLoader.load("kind: Nope", "x.yaml");
    assertThatThrownBy(r::orThrow).isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("x.yaml:1:7: error: kind: unknown kind 'Nope'")
        .satisfies(e -> assertThat(((InvalidConfigException) e).problems()).isNotEmpty());
  }

  @Test
  void emptyDocumentsAreSkipped() {
    LoadResult r = PolicyLoader.load("---\n# nothing\n---\n", "empty.yaml");
    assertThat(r.problems()).isEmpty();
    assertThat(r.orThrow().resources()).isEmpty();
  }

  private static Tenant.Traffic traffic(String yaml) {
    String doc = """
        apiVersion: kinference.dev/v1alpha1
        kind: Tenant
        metadata: {name: t}
        spec:
          header: {name: x-tenant, value: t}
          models: ["*"]
        """ + yaml.indent(2);
    LoadResult r = PolicyLoader.load(doc, "tenant.yaml");
    assertThat(r.problems()).as(r.report()).isEmpty();
    return r.orThrow().tenant("t").spec().traffic();
  }

  @Test
  void aTenantsTrafficDefaultsToInteractiveAtPriorityZero() {
    assertThat(traffic("")).isEqualTo(Tenant.Traffic.DEFAULT);
    assertThat(traffic("traffic: {}\n")).isEqualTo(Tenant.Traffic.DEFAULT);
    Tenant.Traffic batch = traffic("traffic: {defaultClass: batch}\n");
    assertThat(batch.defaultClass()).isEqualTo(TrafficClass.BATCH);
    assertThat(batch.allowedClasses()).containsExactly(TrafficClass.BATCH);
    assertThat(batch.priority()).isZero();
    assertThat(batch.maxPriority()).isZero();
    Tenant.Traffic raised = traffic("traffic: {priority: 3}\n");
    assertThat(raised.maxPriority()).as("maxPriority defaults to priority").isEqualTo(3);
    assertThat(raised.allowedClasses()).containsExactly(TrafficClass.INTERACTIVE, TrafficClass.BATCH);
  }

  @Test
  void bindsEveryTrafficField() {
    Tenant.Traffic t = traffic("""
        traffic:
          defaultClass: Batch
          allowedClasses: [interactive]
          priority: -5
          maxPriority: 1000
        """);
    assertThat(t).isEqualTo(new Tenant.Traffic(TrafficClass.BATCH, Set.of(TrafficClass.INTERACTIVE), -5, 1000));
    assertThat(t.allowedClasses()).as("batch is always allowed").contains(TrafficClass.BATCH);
    assertThat(traffic("traffic: {priority: -1000, maxPriority: -1000, allowedClasses: [batch, interactive]}\n"))
        .isEqualTo(new Tenant.Traffic(TrafficClass.INTERACTIVE, Set.of(), -1000, -1000));
  }

  @Test
  void durationsInEveryForm() {
    assertThat(Binder.parseDuration("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(Binder.parseDuration("1h30m")).isEqualTo(Duration.ofMinutes(90));
    assertThat(Binder.parseDuration("2d")).isEqualTo(Duration.ofDays(2));
    assertThat(Binder.parseDuration("1.5s")).isEqualTo(Duration.ofMillis(1500));
    assertThat(Binder.parseDuration("PT30S")).isEqualTo(Duration.ofSeconds(30));
    assertThat(Binder.parseDuration("30")).isNull();
    assertThat(Binder.parseDuration("10 s")).isNull();
    assertThat(Binder.parseDuration("")).isNull();
  }
}
