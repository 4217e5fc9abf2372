package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.SseException;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.kinference.sim.server.SimulatedServer;
import java.util.Iterator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Failures after the first byte, and clients that leave: real streams from simulated servers. */
class StreamFailureTest {

  static ChatCompletionCreateParams longAnswer() {
    return ChatCompletionCreateParams.builder().model(Harness.MODEL).addUserMessage("Tell me a long story.")
        .maxCompletionTokens(4000).build();
  }

  static Harness slowServer() {
    // Real-time decoding (no speed-up): a 4000-token answer takes far longer than any test.
    return Harness.builder().servers(1).eachServer(s -> s.timeScale(1).defaultOutputTokens(4000)).start();
  }

  static double running(SimulatedServer s) {
    Matcher m = Pattern.compile("(?m)^vllm:num_requests_running\\{[^}]*} ([0-9.]+)").matcher(s.metrics());
    double total = 0;
    while (m.find()) {
      total += Double.parseDouble(m.group(1));
    }
    return total;
  }

  static void awaitTrue(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting until " + what);
      }
      Thread.sleep(20);
    }
  }

  @Test
  void aServerThatDiesMidStreamEndsTheStreamWithAnOpenAiErrorEvent() throws Exception {
    try (Harness h = slowServer()) {
      SimulatedServer sim = h.sims.server(0);
      int[] received = {0};
      assertThatThrownBy(() -> {
        try (StreamResponse<ChatCompletionChunk> s = h.openai().chat().completions().createStreaming(longAnswer())) {
          Iterator<ChatCompletionChunk> it = s.stream().iterator();
          while (it.hasNext()) {
            it.next();
            if (++received[0] == 3) {
              sim.kill(SimulatedServer.KillMode.ENGINE_DEAD);
            }
          }
        }
      }).isInstanceOf(SseException.class).hasMessageContaining("failed mid-stream")
          // the failure's kind, not the HTTP client's connection state (Jetty's EOFException message dumps it)
          .hasMessageNotContaining("@");
      assertThat(received[0]).isGreaterThanOrEqualTo(3);
      assertThat(h.metric("kinference_gateway_errors_total{tenant=\"anonymous\",model=\"" + Harness.MODEL
          + "\",endpoint=\"" + sim.name() + "\",error_type=\"mid_stream\"}")).isEqualTo(1);
      assertThat(h.fleet.get(sim.name()).failedCount()).isEqualTo(1);
    }
  }

  @Test
  void aClientThatDisconnectsCancelsTheUpstreamRequest() throws Exception {
    try (Harness h = slowServer()) {
      SimulatedServer sim = h.sims.server(0);
      OpenAIClient client = h.openai();
      try (StreamResponse<ChatCompletionChunk> s = client.chat().completions().createStreaming(longAnswer())) {
        Iterator<ChatCompletionChunk> it = s.stream().iterator();
        for (int i = 0; i < 3; i++) {
          it.next();
        }
        assertThat(running(sim)).isEqualTo(1);
      } // the client closes the stream after three chunks of four thousand...
      client.close(); // ...and goes away (OkHttp keeps an abandoned connection until its pool is closed)
      awaitTrue(() -> running(sim) == 0, "the server stops generating");
      awaitTrue(() -> h.gateway.activeRequests() == 0, "the gateway forgets the request");
      assertThat(h.metric("kinference_gateway_errors_total{tenant=\"anonymous\",model=\"" + Harness.MODEL
          + "\",endpoint=\"" + sim.name() + "\",error_type=\"client_disconnect\"}")).isEqualTo(1);
      assertThat(h.fleet.get(sim.name()).inFlight()).isZero();
    }
  }
}
