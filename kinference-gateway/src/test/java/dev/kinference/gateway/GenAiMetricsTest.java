package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code /metrics} against the OpenTelemetry GenAI semantic conventions (docs/gen-ai/gen-ai-metrics.md): each metric
 * under the name OpenTelemetry's Prometheus exporter gives it, with the attributes the conventions require and the
 * bucket boundaries they recommend; plus the router's view per endpoint, the routing-decision latency, build info,
 * and the duration of pooling requests. Real simulated vLLM servers behind the gateway, real HTTP.
 */
class GenAiMetricsTest {

  /** Prometheus name: the required labels, and the recommended bucket boundaries (the conventions' text). */
  record Convention(String name, List<String> requiredLabels, List<Double> buckets) {}

  static final List<Double> DURATION = List.of(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24,
      20.48, 40.96, 81.92);
  static final List<String> REQUIRED = List.of("gen_ai_operation_name", "gen_ai_provider_name",
      "gen_ai_request_model", "gen_ai_response_model");

  static final List<Convention> CONVENTIONS = List.of(
      new Convention("gen_ai_client_operation_duration_seconds", REQUIRED, DURATION),
      new Convention("gen_ai_client_token_usage", concat(REQUIRED, "gen_ai_token_type"), List.of(1.0, 4.0, 16.0,
          64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0, 16777216.0, 67108864.0)),
      new Convention("gen_ai_server_request_duration_seconds", REQUIRED, DURATION),
      new Convention("gen_ai_server_time_to_first_token_seconds", REQUIRED, List.of(0.001, 0.005, 0.01, 0.02, 0.04,
          0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)),
      new Convention("gen_ai_server_time_per_output_token_seconds", REQUIRED, List.of(0.01, 0.025, 0.05, 0.075, 0.1,
          0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5)));

  static Harness h;

  @BeforeAll
  static void start() throws Exception {
    h = Harness.builder().servers(2).start();
    HttpResponse<String> streamed = h.post("/v1/chat/completions", "{\"model\":\"" + Harness.MODEL
        + "\",\"stream\":true,\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}]}");
    assertThat(streamed.statusCode()).as(streamed.body()).isEqualTo(200);
    HttpResponse<String> whole = h.post("/v1/completions", "{\"model\":\"" + Harness.MODEL
        + "\",\"max_tokens\":8,\"prompt\":\"once upon a time\"}");
    assertThat(whole.statusCode()).as(whole.body()).isEqualTo(200);
    HttpResponse<String> unknown = h.post("/v1/chat/completions",
        "{\"model\":\"no-such-model\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
    assertThat(unknown.statusCode()).isEqualTo(404);
    HttpResponse<String> embeddings = h.post("/v1/embeddings",
        "{\"model\":\"" + Harness.MODEL + "\",\"input\":\"some text\"}");
    assertThat(embeddings.statusCode()).as(embeddings.body()).isEqualTo(200);
    Harness.awaitEveryRequestRecorded(h.gateway);
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void everyGenAiMetricHasItsNameTypeRequiredAttributesAndRecommendedBuckets() {
    String text = h.gateway.scrapeMetrics();
    for (Convention c : CONVENTIONS) {
      assertThat(text).as(c.name()).contains("# TYPE " + c.name() + " histogram\n");
      List<Map<String, String>> series = series(text, c.name() + "_count");
      assertThat(series).as(c.name() + " has samples").isNotEmpty();
      for (Map<String, String> labels : series) {
        assertThat(labels.keySet()).as(c.name() + " labels").containsAll(c.requiredLabels());
        for (String required : c.requiredLabels()) {
          // a request that reached no model has no response model (an empty label is an absent one)
          boolean mayBeAbsent = required.equals("gen_ai_response_model") && !labels.getOrDefault("error_type", "")
              .isEmpty();
          if (!mayBeAbsent) {
            assertThat(labels.get(required)).as(c.name() + " " + required + " in " + labels).isNotEmpty();
          }
        }
      }
      assertThat(bounds(text, c.name())).as(c.name() + " buckets").isEqualTo(c.buckets());
    }
  }

  @Test
  void attributeValuesFollowTheConventions() {
    String text = h.gateway.scrapeMetrics();
    List<Map<String, String>> durations = series(text, "gen_ai_server_request_duration_seconds_count");
    assertThat(durations).extracting(l -> l.get("gen_ai_operation_name"))
        .contains("chat", "text_completion", "embeddings");
    assertThat(durations).filteredOn(l -> "chat".equals(l.get("gen_ai_operation_name"))
            && Harness.MODEL.equals(l.get("gen_ai_request_model")))
        .allSatisfy(l -> {
          assertThat(l.get("gen_ai_provider_name")).isEqualTo("vllm");
          assertThat(l.get("gen_ai_response_model")).isEqualTo(Harness.MODEL);
          assertThat(l.get("error_type")).as("no error.type on success").isEmpty();
        });
    assertThat(durations).as("error.type on the refused request")
        .anySatisfy(l -> {
          assertThat(l.get("gen_ai_request_model")).isEqualTo("no-such-model");
          assertThat(l.get("error_type")).isEqualTo("unknown_model");
          assertThat(l.get("gen_ai_provider_name")).isEqualTo(GenAiNames.NO_PROVIDER);
        });
    assertThat(series(text, "gen_ai_client_token_usage_count")).extracting(l -> l.get("gen_ai_token_type"))
        .containsOnly("input", "output");
    assertThat(series(text, "gen_ai_client_operation_duration_seconds_count"))
        .allSatisfy(l -> assertThat(l.get("server_address")).isEqualTo("127.0.0.1"));
  }

  @Test
  void routerViewRoutingLatencyAndBuildInfo() {
    String text = h.gateway.scrapeMetrics();
    for (String gauge : List.of("kinference_gateway_endpoint_waiting", "kinference_gateway_endpoint_running",
        "kinference_gateway_endpoint_kv_cache_usage_ratio", "kinference_gateway_endpoint_health")) {
      assertThat(series(text, gauge)).as(gauge + ": one series per endpoint").hasSize(2);
    }
    assertThat(series(text, "kinference_gateway_endpoint_health"))
        .extracting(l -> l.get("state")).containsOnly("healthy");
    assertThat(text).contains("# TYPE kinference_gateway_endpoint_indexed_blocks gauge");
    assertThat(series(text, "kinference_gateway_endpoint_pending_prefill_tokens"))
        .as("own and the peers' per endpoint").hasSize(4).extracting(l -> l.get("source")).containsOnly("own", "peers");
    assertThat(series(text, "kinference_gateway_routing_duration_seconds_count"))
        .extracting(l -> l.get("outcome")).contains("routed", "refused");
    assertThat(series(text, "kinference_build_info")).singleElement()
        .satisfies(l -> assertThat(l).containsKeys("version", "java_version"));
  }

  private static List<String> concat(List<String> a, String b) {
    List<String> all = new ArrayList<>(a);
    all.add(b);
    return all;
  }

  private static final Pattern SAMPLE = Pattern.compile("^([a-z_]+)(?:\\{(.*)})? (\\S+)$", Pattern.MULTILINE);
  private static final Pattern LABEL = Pattern.compile("([a-z_]+)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  /** The label sets of every sample named {@code name}. */
  static List<Map<String, String>> series(String text, String name) {
    List<Map<String, String>> out = new ArrayList<>();
    Matcher m = SAMPLE.matcher(text);
    while (m.find()) {
      if (m.group(1).equals(name)) {
        out.add(labels(m.group(2)));
      }
    }
    return out;
  }

  private static Map<String, String> labels(String text) {
    Map<String, String> out = new java.util.LinkedHashMap<>();
    if (text != null) {
      Matcher l = LABEL.matcher(text);
      while (l.find()) {
        out.put(l.group(1), l.group(2));
      }
    }
    return out;
  }

  /** The finite {@code le} boundaries of a histogram, in order, from its first series. */
  static List<Double> bounds(String text, String name) {
    Set<Double> out = new LinkedHashSet<>();
    for (Map<String, String> l : series(text, name + "_bucket")) {
      String le = l.get("le");
      if (!"+Inf".equals(le)) {
        out.add(Double.parseDouble(le));
      }
    }
    List<Double> sorted = new ArrayList<>(out);
    sorted.sort(null);
    return sorted;
  }
}
