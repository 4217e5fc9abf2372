package dev.kinference.vllm.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.prompt.TokenizationException;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.RequestParser;
import dev.kinference.sim.server.SimulatedServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Against real HTTP servers on loopback: a recording stub and the simulator's vLLM server. */
class RemoteTokenizerTest {

  static final ObjectMapper JSON = new ObjectMapper();

  Server server;
  final List<JsonNode> bodies = new CopyOnWriteArrayList<>();
  final List<String> paths = new CopyOnWriteArrayList<>();
  final AtomicInteger calls = new AtomicInteger();
  volatile int status = 200;
  volatile String answer = "{\"count\": 3, \"max_model_len\": 4096, \"tokens\": [7, 8, 9]}";

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.stop();
    }
  }

  URI startStub() throws Exception {
    server = new Server();
    ServerConnector c = new ServerConnector(server);
    c.setHost("127.0.0.1");
    c.setPort(0);
    server.addConnector(c);
    server.setHandler(new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback) throws Exception {
        calls.incrementAndGet();
        paths.add(Request.getPathInContext(request));
        bodies.add(JSON.readTree(Content.Source.asString(request, StandardCharsets.UTF_8)));
        Thread.sleep(50); // let concurrent identical requests overlap
        response.setStatus(status);
        Content.Sink.write(response, true, answer, callback);
        return true;
      }
    });
    server.start();
    return URI.create("http://127.0.0.1:" + c.getLocalPort());
  }

  static InferenceRequest chat(String json) throws Exception {
    return RequestParser.defaults().parse(ApiFormat.OPENAI_CHAT, json.getBytes(StandardCharsets.UTF_8));
  }

  static final String CHAT = """
      {"model": "Qwen/Qwen3-8B", "chat_template_kwargs": {"enable_thinking": false},
       "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
       "messages": [{"role": "system", "content": "sys"},
                    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                    {"role": "assistant", "content": null, "tool_calls": [{"id": "1", "type": "function",
                      "function": {"name": "f", "arguments": "{\\"x\\": 1}"}}]},
                    {"role": "tool", "tool_call_id": "1", "content": "ok"}]}""";

  @Test
  void sendsTheConversationAsVllmExpectsAndCachesIt() throws Exception {
    URI base = startStub();
    RemoteTokenizer tokenizer = RemoteTokenizer.builder(base).build();

    assertThat(tokenizer.tokenize(chat(CHAT))).containsExactly(7, 8, 9);
    assertThat(paths).containsExactly("/tokenize");
    JsonNode body = bodies.get(0);
    assertThat(body.get("model").asText()).isEqualTo("Qwen/Qwen3-8B");
    assertThat(body.get("add_generation_prompt").asBoolean()).isTrue();
    assertThat(body.get("chat_template_kwargs").get("enable_thinking").asBoolean()).isFalse();
    assertThat(body.get("tools").get(0).get("function").get("name").asText()).isEqualTo("f");
    assertThat(body.get("messages").get(1).get("content").asText()).isEqualTo("a\nb");
    assertThat(body.get("messages").get(2).get("content").asText()).isEmpty();
    assertThat(body.get("messages").get(2).get("tool_calls").get(0).get("function").get("arguments").get("x")
        .asInt()).isEqualTo(1);

    // The same conversation again, and eight identical ones at once: no more calls.
    assertThat(tokenizer.tokenize(chat(CHAT))).containsExactly(7, 8, 9);
    InferenceRequest another = chat(CHAT.replace("\"sys\"", "\"other system prompt\""));
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<int[]>> results = new java.util.ArrayList<>();
      for (int i = 0; i < 8; i++) {
        results.add(pool.submit(() -> tokenizer.tokenize(another)));
      }
      for (Future<int[]> f : results) {
        assertThat(f.get()).containsExactly(7, 8, 9);
      }
    } finally {
      pool.shutdown();
    }
    assertThat(calls.get()).isEqualTo(2);
  }

  @Test
  void usesTheRenderEndpointsWhenAsked() throws Exception {
    URI base = startStub();
    answer = "{\"token_ids\": [1, 2], \"features\": null}";
    RemoteTokenizer tokenizer = RemoteTokenizer.builder(base).endpoint(RemoteTokenizer.Endpoint.RENDER).build();

    assertThat(tokenizer.tokenize(chat(CHAT))).containsExactly(1, 2);
    assertThat(tokenizer.tokenize(InferenceRequest.builder("m").prompt("hello").build())).containsExactly(1, 2);
    assertThat(paths).containsExactly("/v1/chat/completions/render", "/v1/completions/render");
    assertThat(bodies.get(1).get("prompt").asText()).isEqualTo("hello");
  }

  @Test
  void failuresAreReportedAndNotCached() throws Exception {
    URI base = startStub();
    RemoteTokenizer tokenizer = RemoteTokenizer.builder(base).timeout(Duration.ofSeconds(5)).build();
    InferenceRequest request = chat(CHAT);

    status = 500;
    answer = "{\"error\": \"boom\"}";
    assertThatThrownBy(() -> tokenizer.tokenize(request)).isInstanceOf(TokenizationException.class)
        .hasMessageContaining("HTTP 500").hasMessageContaining("boom");
    status = 200;
    answer = "not json";
    assertThatThrownBy(() -> tokenizer.tokenize(request)).hasMessageContaining("invalid JSON");
    answer = "{\"tokens\": [1, \"x\"]}";
    assertThatThrownBy(() -> tokenizer.tokenize(request)).hasMessageContaining("not an integer");
    answer = "{\"count\": 1}";
    assertThatThrownBy(() -> tokenizer.tokenize(request)).hasMessageContaining("without token ids");
    answer = "{\"tokens\": [4]}";
    assertThat(tokenizer.tokenize(request)).containsExactly(4);

    server.stop();
    RemoteTokenizer dead = RemoteTokenizer.builder(base).timeout(Duration.ofSeconds(5)).build();
    assertThatThrownBy(() -> dead.tokenize(request)).isInstanceOf(TokenizationException.class)
        .hasMessageContaining("failed");
  }

  @Test
  void matchesTheSimulatedServersOwnTokenizer() throws Exception {
    try (SimulatedServer sim = SimulatedServer.builder("sim-model").instantResponse(true).start()) {
      RemoteTokenizer tokenizer = RemoteTokenizer.builder(sim.baseUri()).build();
      InferenceRequest request = InferenceRequest.builder("sim-model").system("You are terse.")
          .user("What is a KV cache, in one sentence?").build();
      assertThat(tokenizer.tokenize(request)).containsExactly(new ApproximateTokenizer().tokenize(request));
    }
  }
}
