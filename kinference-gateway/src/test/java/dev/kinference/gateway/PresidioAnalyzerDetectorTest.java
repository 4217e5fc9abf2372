package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.endpoint.Fleet;
import dev.kinference.policy.PolicyVerdict;
import dev.kinference.policy.check.Explainer;
import dev.kinference.policy.classify.BuiltinPersonalDataDetector;
import dev.kinference.policy.classify.DetectorFailures;
import dev.kinference.policy.classify.PersonalData;
import dev.kinference.policy.classify.PersonalDataDetector;
import dev.kinference.policy.classify.PersonalDataDetectorException;
import dev.kinference.policy.classify.PersonalDataDetectors;
import dev.kinference.policy.classify.PersonalDataFinding;
import dev.kinference.policy.classify.PersonalDataKind;
import dev.kinference.policy.classify.PresidioAnalyzerDetector;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.policy.engine.YamlPolicyEngine;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.RequestParser;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link PresidioAnalyzerDetector} against a fake Presidio analyzer on loopback: mapped entities are found in their
 * fields, composed with the builtin detector; a slow or failing analyzer makes the request personal within the
 * timeout, counted in {@code kinference_personal_data_detector_failures_total}.
 */
class PresidioAnalyzerDetectorTest {

  static final String EMAIL = "jane.doe@example.com";
  static FakePresidio presidio;

  static final String CONFIG = """
      apiVersion: kinference.dev/v1alpha1
      kind: InferencePool
      metadata: {name: local}
      spec:
        model: m
        endpoints: [{id: l1, url: "http://127.0.0.1:9"}]
      ---
      apiVersion: kinference.dev/v1alpha1
      kind: ExternalProvider
      metadata: {name: cloud}
      spec:
        api: openai
        baseUrl: "http://127.0.0.1:9/v1"
        apiKey: {env: NONE}
        models: [{name: big, price: {input: 1, output: 1}}]
      ---
      apiVersion: kinference.dev/v1alpha1
      kind: ModelAlias
      metadata: {name: chat}
      spec:
        targets: [{pool: local}]
        fallback: [{provider: cloud, model: big}]
      """;

  @BeforeAll
  static void start() throws Exception {
    presidio = new FakePresidio(Map.of(
        EMAIL, new FakePresidio.Entity("EMAIL_ADDRESS", 1.0),
        "CUST-4242", new FakePresidio.Entity("CUSTOMER_ID", 0.85),
        "555 0100", new FakePresidio.Entity("PHONE_NUMBER", 0.3),
        "Jane Doe", new FakePresidio.Entity("UNMAPPED_THING", 0.9)));
  }

  @AfterAll
  static void stop() {
    presidio.close();
  }

  @BeforeEach
  void healthy() {
    presidio.delayMillis.set(0);
    presidio.status.set(0);
  }

  static PresidioAnalyzerDetector detector(Duration timeout) {
    return detector(timeout, presidio.baseUrl());
  }

  static PresidioAnalyzerDetector detector(Duration timeout, String url) {
    return PresidioAnalyzerDetector.builder(URI.create(url)).timeout(timeout)
        .entity("CUSTOMER_ID", PersonalDataKind.NATIONAL_ID).build();
  }

  static InferenceRequest request() throws Exception {
    return RequestParser.defaults().parse(ApiFormat.OPENAI_CHAT, """
        {"model": "chat", "metadata": {"customer": "%s", "ticket": "T-1"},
         "messages": [{"role": "user", "content": "🙂 Jane Doe (CUST-4242, 555 0100) asks about her refund."}]}
        """.formatted(EMAIL));
  }

  @Test
  void mappedEntitiesAreFoundInTheirFieldsAndUnitedWithTheBuiltinDetectors() throws Exception {
    PersonalData p = detector(Duration.ofSeconds(2)).detect(request());
    assertThat(p.kinds()).containsExactlyInAnyOrder(PersonalDataKind.EMAIL, PersonalDataKind.NATIONAL_ID);
    assertThat(p.findings()).extracting(PersonalDataFinding::describe).containsExactlyInAnyOrder(
        "email by presidio at metadata.customer+0", "national-id by presidio at messages[0].content+13");
    assertThat(presidio.received.get(presidio.received.size() - 1).path("language").asText()).isEqualTo("en");

    PersonalDataDetector both = PersonalDataDetectors.of(List.of(new BuiltinPersonalDataDetector(),
        detector(Duration.ofSeconds(2))));
    assertThat(both.name()).isEqualTo("builtin+presidio");
    PersonalData united = both.detect(request());
    assertThat(united.kinds()).contains(PersonalDataKind.EMAIL, PersonalDataKind.NATIONAL_ID);
    assertThat(united.findings()).extracting(PersonalDataFinding::detector).contains("builtin", "presidio");
    assertThat(both.detect("nothing here")).isEqualTo(PersonalData.NONE);
  }

  @Test
  void theEnvironmentConfiguresIt() {
    PresidioAnalyzerDetector d = PresidioAnalyzerDetector.fromEnvironment(Map.of(
        "KINFERENCE_PRESIDIO_URL", presidio.baseUrl(), "KINFERENCE_PRESIDIO_TIMEOUT", "250ms",
        "KINFERENCE_PRESIDIO_ENTITIES", "CUSTOMER_ID=national-id,PHONE_NUMBER=")::get);
    assertThat(d).isNotNull();
    assertThat(d.timeout()).isEqualTo(Duration.ofMillis(250));
    assertThat(d.entities()).containsEntry("CUSTOMER_ID", PersonalDataKind.NATIONAL_ID)
        .containsEntry("EMAIL_ADDRESS", PersonalDataKind.EMAIL).doesNotContainKey("PHONE_NUMBER");
    assertThat(PresidioAnalyzerDetector.fromEnvironment(Map.<String, String>of()::get)).isNull();
    assertThatThrownBy(() -> PresidioAnalyzerDetector.fromEnvironment(Map.of("KINFERENCE_PRESIDIO_URL",
        presidio.baseUrl(), "KINFERENCE_PRESIDIO_ENTITIES", "X=nonsense")::get))
        .hasMessageContaining("unknown kind 'nonsense'");
    assertThat(PersonalDataDetectors.discover(Map.of("KINFERENCE_PRESIDIO_URL", presidio.baseUrl())::get))
        .extracting(PersonalDataDetector::name).containsExactly("builtin", "presidio");
  }

  /** The verdict for a clean request while the analyzer misbehaves, and how long it took. */
  static PolicyVerdict.Proceed evaluateClean(Duration timeout) throws Exception {
    return evaluateClean(timeout, presidio.baseUrl());
  }

  static PolicyVerdict.Proceed evaluateClean(Duration timeout, String url) throws Exception {
    PolicyConfig config = PolicyLoader.load(CONFIG, "c.yaml").orThrow();
    YamlPolicyEngine engine = YamlPolicyEngine.builder().config(config)
        .personalDataDetector(PersonalDataDetectors.of(List.of(new BuiltinPersonalDataDetector(),
            detector(timeout, url)))).build();
    Fleet fleet = Fleet.of(Explainer.fleetOf(config));
    InferenceRequest clean = RequestParser.defaults().parse(ApiFormat.OPENAI_CHAT,
        "{\"model\":\"chat\",\"messages\":[{\"role\":\"user\",\"content\":\"What is the capital of France?\"}]}");
    PolicyVerdict v = engine.evaluate(clean, fleet.snapshot());
    assertThat(v).isInstanceOf(PolicyVerdict.Proceed.class);
    return (PolicyVerdict.Proceed) v;
  }

  @Test
  void aSlowAnalyzerMakesTheRequestPersonalWithinTheTimeoutAndIsCounted() throws Exception {
    PolicyVerdict.Proceed healthy = evaluateClean(Duration.ofSeconds(2));
    assertThat(healthy.fallbackEndpointIds()).containsExactly("external:cloud/big");

    presidio.delayMillis.set(3000);
    long before = DetectorFailures.count("presidio", "timeout");
    long t0 = System.nanoTime();
    PolicyVerdict.Proceed slow = evaluateClean(Duration.ofMillis(300));
    long tookMs = (System.nanoTime() - t0) / 1_000_000;
    assertThat(tookMs).as("answered within the timeout, not the analyzer's 3 s").isLessThan(1500);
    assertThat(slow.fallbackEndpointIds()).as("kept local").isEmpty();
    assertThat(slow.trace()).anyMatch(t -> t.contains("detector presidio failed (timeout")
        && t.contains("treated as personal"));
    assertThat(String.join("\n", slow.trace())).as("no internal address").doesNotContain(presidio.baseUrl());
    assertThat(DetectorFailures.count("presidio", "timeout")).isEqualTo(before + 1);
    assertThat(new GatewayMetrics(Fleet.of(List.of()), () -> 0, () -> 0).render())
        .contains("# TYPE kinference_personal_data_detector_failures_total counter")
        .contains("kinference_personal_data_detector_failures_total{detector=\"presidio\",reason=\"timeout\"} "
            + (before + 1));
  }

  @Test
  void anAnalyzerErrorMakesTheRequestPersonalAndIsCounted() throws Exception {
    presidio.status.set(500);
    long before = DetectorFailures.count("presidio", "status");
    PolicyVerdict.Proceed failed = evaluateClean(Duration.ofSeconds(2));
    assertThat(failed.fallbackEndpointIds()).isEmpty();
    assertThat(failed.trace()).anyMatch(t -> t.contains("detector presidio failed (status") && t.contains("500"));
    assertThat(DetectorFailures.count("presidio", "status")).isEqualTo(before + 1);
    assertThatThrownBy(() -> detector(Duration.ofSeconds(2)).detect("hello"))
        .isInstanceOf(PersonalDataDetectorException.class).hasMessageContaining("answered 500");

    String url = presidio.baseUrl();
    presidio.close();
    try {
      long down = DetectorFailures.count("presidio", "unavailable");
      assertThat(evaluateClean(Duration.ofSeconds(1), url).fallbackEndpointIds()).isEmpty();
      assertThat(DetectorFailures.count("presidio", "unavailable")).isGreaterThan(down);
    } finally {
      start();
    }
  }
}
