package dev.kinference.sim.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.request.InferenceRequest;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The wire formats, byte for byte where vLLM's are fixed, with a plain HTTP client. */
class SimulatedServerHttpTest {

  static final String MODEL = "Qwen/Qwen3-8B";
  static final ObjectMapper JSON = new ObjectMapper();
  static SimulatedServer server;
  static final HttpClient HTTP = HttpClient.newHttpClient();

  @BeforeAll
  static void start() {
    server = SimulatedServer.builder(MODEL).defaultOutputTokens(8).timeScale(4).start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  static HttpResponse<String> post(SimulatedServer s, String path, String body) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(s.baseUri() + path))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static HttpResponse<String> get(SimulatedServer s, String path) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(s.baseUri() + path)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static String chat(boolean stream, String extra) {
    return "{\"model\":\"" + MODEL + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello there\"}],"
        + "\"stream\":" + stream + extra + "}";
  }

  @Test
  void healthModelsAndVersion() throws Exception {
    assertThat(get(server, "/health").statusCode()).isEqualTo(200);
    JsonNode models = JSON.readTree(get(server, "/v1/models").body());
    assertThat(models.get("object").asText()).isEqualTo("list");
    JsonNode card = models.get("data").get(0);
    assertThat(card.get("id").asText()).isEqualTo(MODEL);
    assertThat(card.get("object").asText()).isEqualTo("model");
    assertThat(card.get("owned_by").asText()).isEqualTo("vllm");
    assertThat(card.get("root").asText()).isEqualTo(MODEL);
    assertThat(card.get("max_model_len").asInt()).isEqualTo(server.maxModelLen());
    assertThat(JSON.readTree(get(server, "/version").body()).has("version")).isTrue();
  }

  @Test
  void nonStreamingChatHasVllmsFields() throws Exception {
    HttpResponse<String> r = post(server, "/v1/chat/completions", chat(false, ""));
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
    JsonNode n = JSON.readTree(r.body());
    List<String> fields = new ArrayList<>();
    n.fieldNames().forEachRemaining(fields::add);
    assertThat(fields).containsExactly("id", "object", "created", "model", "choices", "service_tier",
        "system_fingerprint", "usage", "prompt_logprobs", "kv_transfer_params");
    assertThat(n.get("object").asText()).isEqualTo("chat.completion");
    JsonNode usage = n.get("usage");
    List<String> usageFields = new ArrayList<>();
    usage.fieldNames().forEachRemaining(usageFields::add);
    assertThat(usageFields).containsExactly("prompt_tokens", "total_tokens", "completion_tokens",
        "prompt_tokens_details");
    assertThat(usage.get("prompt_tokens_details").get("cached_tokens").isInt()).isTrue();
  }

  @Test
  void streamIsDataChunksThenUsageThenDone() throws Exception {
    HttpResponse<String> r = post(server, "/v1/chat/completions",
        chat(true, ",\"stream_options\":{\"include_usage\":true}"));
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("content-type").orElseThrow()).startsWith("text/event-stream");
    String body = r.body();
    assertThat(body).endsWith("data: [DONE]\n\n");
    String[] events = body.split("\n\n");
    for (String e : events) {
      assertThat(e).startsWith("data: ");
    }
    assertThat(events[0]).matches("data: \\{\"id\":\"chatcmpl-[0-9a-f]{32}\",\"object\":\"chat.completion.chunk\","
        + "\"created\":\\d+,\"model\":\"Qwen/Qwen3-8B\",\"choices\":\\[\\{\"index\":0,\"delta\":\\{\"role\":"
        + "\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}");
    JsonNode usageChunk = JSON.readTree(events[events.length - 2].substring(6));
    assertThat(usageChunk.get("choices")).isEmpty();
    assertThat(usageChunk.get("usage").get("completion_tokens").asInt()).isEqualTo(8);
    JsonNode lastToken = JSON.readTree(events[events.length - 3].substring(6));
    assertThat(lastToken.get("choices").get(0).get("finish_reason").asText()).isEqualTo("stop");
    assertThat(lastToken.get("choices").get(0).has("stop_reason")).isTrue();
  }

  @Test
  void anthropicStreamNamesEachEvent() throws Exception {
    HttpResponse<String> r = post(server, "/v1/messages", "{\"model\":\"" + MODEL + "\",\"max_tokens\":3,"
        + "\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
    assertThat(r.statusCode()).isEqualTo(200);
    List<String> types = new ArrayList<>();
    for (String e : r.body().split("\n\n")) {
      String[] lines = e.split("\n");
      assertThat(lines[0]).startsWith("event: ");
      assertThat(lines[1]).startsWith("data: ");
      String type = lines[0].substring(7);
      assertThat(JSON.readTree(lines[1].substring(6)).get("type").asText()).isEqualTo(type);
      types.add(type);
    }
    // one delta per token, unless tokens queued up while the writer was busy (vLLM merges them the same way)
    List<String> distinct = new ArrayList<>();
    for (String t : types) {
      if (distinct.isEmpty() || !distinct.get(distinct.size() - 1).equals(t)) {
        distinct.add(t);
      }
    }
    assertThat(distinct).containsExactly("message_start", "content_block_start", "content_block_delta",
        "content_block_stop", "message_delta", "message_stop");
    StringBuilder text = new StringBuilder();
    for (String e : r.body().split("\n\n")) {
      JsonNode data = JSON.readTree(e.split("\n")[1].substring(6));
      if (data.get("type").asText().equals("content_block_delta")) {
        text.append(data.get("delta").get("text").asText());
      }
    }
    assertThat(text.toString().trim().split(" ")).hasSize(3);
    assertThat(r.body()).contains("\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"input_tokens\":");
  }

  @Test
  void tokenizeUsesTheApproximateTokenizerOnTheParsedRequest() throws Exception {
    JsonNode prompt = JSON.readTree(post(server, "/tokenize", "{\"prompt\":\"The quick brown fox\"}").body());
    assertThat(prompt.get("count").asInt()).isEqualTo(new ApproximateTokenizer().count("The quick brown fox"));
    assertThat(prompt.get("max_model_len").asInt()).isEqualTo(server.maxModelLen());
    JsonNode messages = JSON.readTree(post(server, "/tokenize",
        "{\"model\":\"" + MODEL + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello there\"}]}").body());
    int[] expected = new ApproximateTokenizer().tokenize(InferenceRequest.builder(MODEL).user("Hello there").build());
    assertThat(messages.get("count").asInt()).isEqualTo(expected.length);
    assertThat(messages.get("tokens").get(0).asInt()).isEqualTo(expected[0]);
  }

  @Test
  void poolingEndpointsAnswerInVllmsFormat() throws Exception {
    JsonNode emb = JSON.readTree(post(server, "/v1/embeddings",
        "{\"model\":\"" + MODEL + "\",\"input\":[\"a b c\",\"d e\"],\"dimensions\":4}").body());
    assertThat(emb.get("object").asText()).isEqualTo("list");
    assertThat(emb.get("data")).hasSize(2);
    assertThat(emb.get("data").get(1).get("index").asInt()).isEqualTo(1);
    assertThat(emb.get("data").get(0).get("embedding")).hasSize(4);
    assertThat(emb.get("usage").get("prompt_tokens").asInt()).isPositive()
        .isEqualTo(emb.get("usage").get("total_tokens").asInt());
    JsonNode b64 = JSON.readTree(post(server, "/v1/embeddings",
        "{\"input\":\"a b c\",\"dimensions\":4,\"encoding_format\":\"base64\"}").body());
    assertThat(java.util.Base64.getDecoder().decode(b64.get("data").get(0).get("embedding").asText())).hasSize(16);

    JsonNode rerank = JSON.readTree(post(server, "/rerank",
        "{\"query\":\"red fox\",\"documents\":[\"a blue whale\",\"the red fox\"]}").body());
    assertThat(rerank.get("results").get(0).get("index").asInt()).isEqualTo(1);
    assertThat(rerank.get("results").get(0).get("document").get("text").asText()).isEqualTo("the red fox");
    assertThat(rerank.get("usage").get("total_tokens").asInt()).isPositive();

    JsonNode score = JSON.readTree(post(server, "/score", "{\"text_1\":\"red fox\",\"text_2\":\"the red fox\"}")
        .body());
    assertThat(score.get("data").get(0).get("object").asText()).isEqualTo("score");
    assertThat(score.get("data").get(0).get("score").asDouble()).isGreaterThan(0.9);

    JsonNode detok = JSON.readTree(post(server, "/detokenize", "{\"tokens\":[1,2,3]}").body());
    assertThat(detok.get("prompt").asText()).isNotEmpty();
    assertThat(post(server, "/v1/embeddings", "{\"model\":\"other\",\"input\":\"x\"}").statusCode()).isEqualTo(404);
    assertThat(post(server, "/v1/rerank", "{\"query\":\"x\"}").statusCode()).isEqualTo(400);
  }

  @Test
  void badRequestsGetVllmErrors() throws Exception {
    HttpResponse<String> malformed = post(server, "/v1/chat/completions", "{not json");
    assertThat(malformed.statusCode()).isEqualTo(400);
    JsonNode error = JSON.readTree(malformed.body()).get("error");
    assertThat(error.get("type").asText()).isEqualTo("BadRequestError");
    assertThat(error.get("code").asInt()).isEqualTo(400);
    assertThat(error.get("message").asText()).contains("JSON");

    HttpResponse<String> unknown = post(server, "/v1/chat/completions",
        chat(false, "").replace(MODEL, "gpt-nothing"));
    assertThat(unknown.statusCode()).isEqualTo(404);
    assertThat(JSON.readTree(unknown.body()).get("error").get("message").asText())
        .isEqualTo("The model `gpt-nothing` does not exist.");

    HttpResponse<String> noMessages = post(server, "/v1/chat/completions", "{\"model\":\"" + MODEL + "\"}");
    assertThat(noMessages.statusCode()).isEqualTo(400);
    assertThat(noMessages.body()).contains("messages");

    HttpResponse<String> anthropicNoMax = post(server, "/v1/messages",
        "{\"model\":\"" + MODEL + "\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
    assertThat(anthropicNoMax.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(anthropicNoMax.body()).get("type").asText()).isEqualTo("error");

    assertThat(get(server, "/v1/chat/completions").statusCode()).isEqualTo(405);
    assertThat(get(server, "/nowhere").statusCode()).isEqualTo(404);
  }

  @Test
  void oversizedBodiesAreRejectedWith413() throws Exception {
    String huge = "{\"model\":\"" + MODEL + "\",\"prompt\":\"" + "a".repeat(33 << 20) + "\"}";
    // With Expect: 100-continue the server answers 413 from the declared length before any of the body is sent.
    // Without it the answer races the upload, and a client still sending when the server closes the connection
    // may see the close instead of the 413 (regression: this test failed with "header parser received no bytes").
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(server.baseUri() + "/v1/completions"))
        .expectContinue(true).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(huge)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(413);
  }

  /** Parses the text exposition format strictly enough to catch malformed output. */
  static Map<String, Double> parseMetrics(String text) {
    Pattern sample = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)})? (\\S+)");
    Pattern label = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"(,|$)");
    Map<String, Double> out = new HashMap<>();
    Map<String, String> types = new HashMap<>();
    for (String line : text.split("\n")) {
      if (line.startsWith("# HELP ")) {
        continue;
      }
      if (line.startsWith("# TYPE ")) {
        String[] p = line.split(" ");
        assertThat(p).hasSize(4);
        assertThat(p[3]).isIn("gauge", "counter", "histogram");
        types.put(p[2], p[3]);
        continue;
      }
      Matcher m = sample.matcher(line);
      assertThat(m.matches()).as(line).isTrue();
      String name = m.group(1);
      String family = types.containsKey(name) ? name : name.replaceAll("_(bucket|count|sum)$", "");
      assertThat(types).as("TYPE before " + name).containsKey(family);
      if (types.get(family).equals("counter")) {
        assertThat(name).endsWith("_total");
      }
      String labels = m.group(3) == null ? "" : m.group(3);
      List<String> names = new ArrayList<>();
      Matcher lm = label.matcher(labels);
      int end = 0;
      while (lm.find()) {
        assertThat(lm.start()).isEqualTo(end);
        names.add(lm.group(1));
        end = lm.end();
      }
      assertThat(end).as(line).isEqualTo(labels.length());
      assertThat(names).as("labels sorted in " + line).isSorted();
      double v = m.group(4).equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(m.group(4));
      out.put(name + (labels.isEmpty() ? "" : "{" + labels + "}"), v);
    }
    return out;
  }

  @Test
  void metricsUseVllmNamesAndParse() throws Exception {
    post(server, "/v1/chat/completions", chat(false, ""));
    HttpResponse<String> r = get(server, "/metrics");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("content-type").orElseThrow()).startsWith("text/plain; version=0.0.4");
    Map<String, Double> m = parseMetrics(r.body());
    String base = "engine=\"0\",model_name=\"" + MODEL + "\"";
    assertThat(m).containsKeys("vllm:num_requests_running{" + base + "}", "vllm:num_requests_waiting{" + base + "}",
        "vllm:kv_cache_usage_perc{" + base + "}", "vllm:prefix_cache_queries_total{" + base + "}",
        "vllm:prefix_cache_hits_total{" + base + "}", "vllm:prefix_cache_queries_created{" + base + "}",
        "vllm:time_to_first_token_seconds_count{" + base + "}",
        "vllm:inter_token_latency_seconds_sum{" + base + "}",
        "vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"+Inf\",model_name=\"" + MODEL + "\"}");
    assertThat(m.get("vllm:prefix_cache_queries_total{" + base + "}")).isPositive();
    assertThat(m.get("vllm:time_to_first_token_seconds_count{" + base + "}")).isGreaterThanOrEqualTo(1);
    assertThat(m.get("vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"+Inf\",model_name=\"" + MODEL
        + "\"}")).isEqualTo(m.get("vllm:e2e_request_latency_seconds_count{" + base + "}"));
    String config = m.keySet().stream().filter(k -> k.startsWith("vllm:cache_config_info")).findFirst()
        .orElseThrow();
    assertThat(config).contains("block_size=\"16\"").contains("num_gpu_blocks=\"" + server.numGpuBlocks() + "\"")
        .contains("engine=\"0\"");
    // cumulative buckets never decrease
    double previous = 0;
    for (double le : VllmMetricsBuckets.TTFT) {
      double v = m.get("vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"" + PrometheusTextWriter.goFloat(le)
          + "\",model_name=\"" + MODEL + "\"}");
      assertThat(v).isGreaterThanOrEqualTo(previous);
      previous = v;
    }
  }

  /** vLLM's TTFT buckets, to walk the histogram. */
  static final class VllmMetricsBuckets {
    static final double[] TTFT = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
        7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
  }

  @Test
  void killedServerAnswers503UntilRestarted() throws Exception {
    try (SimulatedServer s = SimulatedServer.builder(MODEL).defaultOutputTokens(2).timeScale(4).start()) {
      assertThat(post(s, "/v1/chat/completions", chat(false, "")).statusCode()).isEqualTo(200);
      s.kill();
      assertThat(s.isAlive()).isFalse();
      assertThat(get(s, "/health").statusCode()).isEqualTo(503);
      HttpResponse<String> r = post(s, "/v1/chat/completions", chat(false, ""));
      assertThat(r.statusCode()).isEqualTo(503);
      assertThat(get(s, "/metrics").statusCode()).isEqualTo(200);
      s.restart();
      assertThat(get(s, "/health").statusCode()).isEqualTo(200);
      assertThat(post(s, "/v1/chat/completions", chat(false, "")).statusCode()).isEqualTo(200);
      // a restarted process counts from zero
      assertThat(parseMetrics(get(s, "/metrics").body())
          .get("vllm:request_success_total{engine=\"0\",finished_reason=\"stop\",model_name=\"" + MODEL + "\"}"))
          .isEqualTo(1.0);
    }
  }

  @Test
  void unreachableServerRefusesConnectionsAndComesBackOnTheSamePort() throws Exception {
    try (SimulatedServer s = SimulatedServer.builder(MODEL).defaultOutputTokens(2).timeScale(4).start()) {
      URI before = s.baseUri();
      s.kill(SimulatedServer.KillMode.UNREACHABLE);
      assertThatThrownBy(() -> get(s, "/health")).isInstanceOf(ConnectException.class);
      s.restart();
      assertThat(s.baseUri()).isEqualTo(before);
      assertThat(get(s, "/health").statusCode()).isEqualTo(200);
      assertThat(post(s, "/v1/chat/completions", chat(false, "")).statusCode()).isEqualTo(200);
    }
  }

  @Test
  void inFlightStreamsAreCutWhenTheEngineDies() throws Exception {
    try (SimulatedServer s = SimulatedServer.builder(MODEL).defaultOutputTokens(2000).start()) {
      HttpRequest req = HttpRequest.newBuilder(URI.create(s.baseUri() + "/v1/chat/completions"))
          .POST(HttpRequest.BodyPublishers.ofString(chat(true, ""))).build();
      var future = HTTP.sendAsync(req, HttpResponse.BodyHandlers.ofString());
      Thread.sleep(300);
      s.kill();
      assertThatThrownBy(future::join).hasCauseInstanceOf(IOException.class);
    }
  }

  static boolean eventually(java.util.concurrent.Callable<Boolean> condition) throws Exception {
    long deadline = System.nanoTime() + 15_000_000_000L;
    while (System.nanoTime() < deadline) {
      if (condition.call()) {
        return true;
      }
      Thread.sleep(50);
    }
    return false;
  }

  @Test
  void loraAdaptersOfRunningRequestsShowInLoraRequestsInfo() throws Exception {
    try (SimulatedServer s = SimulatedServer.builder(MODEL).loraAdapter("sql-lora").maxLoras(4).start()) {
      var pending = HTTP.sendAsync(HttpRequest.newBuilder(URI.create(s.baseUri() + "/v1/chat/completions"))
          .POST(HttpRequest.BodyPublishers.ofString(chat(false, ",\"max_tokens\":300").replace(MODEL, "sql-lora")))
          .build(), HttpResponse.BodyHandlers.ofString());
      assertThat(eventually(() -> get(s, "/metrics").body().contains(
          "vllm:lora_requests_info{max_lora=\"4\",running_lora_adapters=\"sql-lora\",waiting_lora_adapters=\"\"}")))
          .isTrue();
      s.kill();
      assertThat(pending.join().statusCode()).isEqualTo(500);
    }
  }

  @Test
  void aClientThatGoesAwayAbortsItsRequest() throws Exception {
    try (SimulatedServer s = SimulatedServer.builder(MODEL).timeScale(4).start()) {
      HttpResponse<java.io.InputStream> r = HTTP.send(HttpRequest.newBuilder(
          URI.create(s.baseUri() + "/v1/chat/completions"))
          .POST(HttpRequest.BodyPublishers.ofString(chat(true, ",\"max_tokens\":2000"))).build(),
          HttpResponse.BodyHandlers.ofInputStream());
      assertThat(r.body().read(new byte[64])).isPositive();
      r.body().close();
      String abort = "vllm:request_success_total{engine=\"0\",finished_reason=\"abort\",model_name=\"" + MODEL + "\"}";
      assertThat(eventually(() -> Double.valueOf(1.0).equals(parseMetrics(get(s, "/metrics").body()).get(abort))))
          .isTrue();
      assertThat(parseMetrics(get(s, "/metrics").body()).get("vllm:num_requests_running{engine=\"0\",model_name=\""
          + MODEL + "\"}")).isZero();
    }
  }

  @Test
  void instantResponseAnswersWithoutAnEngine() throws Exception {
    try (SimulatedServer s = SimulatedServer.builder(MODEL).instantResponse(true).defaultOutputTokens(50).start()) {
      assertThat(s.kvEventsEndpoint()).isNull();
      HttpResponse<String> r = post(s, "/v1/chat/completions", chat(true, ""));
      assertThat(r.body().split("\n\n")).hasSize(1 + 50 + 1); // role, one chunk per token, [DONE]
      JsonNode n = JSON.readTree(post(s, "/v1/completions",
          "{\"model\":\"" + MODEL + "\",\"prompt\":\"x\",\"max_tokens\":7}").body());
      assertThat(n.get("usage").get("completion_tokens").asInt()).isEqualTo(7);
    }
  }
}
