package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Regression: errors raised inside Jetty before the gateway's handler runs (431, request-smuggling 400s, a garbage
 * request line) came back as Jetty's HTML page. Now each is an error object of the API called.
 */
class JettyErrorsTest {

  static Harness h;

  @BeforeAll
  static void start() {
    h = Harness.builder().servers(1).start();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  static String exchange(String raw) throws Exception {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), h.gateway.uri().getPort())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(raw.getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      InputStream in = s.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  static JsonNode jsonBody(String response) throws Exception {
    int at = response.indexOf("\r\n\r\n");
    assertThat(at).as(response).isPositive();
    assertThat(response.substring(0, at).toLowerCase(java.util.Locale.ROOT)).contains("content-type: application/json");
    return new ObjectMapper().readTree(response.substring(at + 4));
  }

  @Test
  void aGarbageRequestLineGetsAnOpenAiErrorObject() throws Exception {
    String r = exchange("BLAH\r\n\r\n");
    assertThat(r).startsWith("HTTP/1.1 400");
    assertThat(jsonBody(r).path("error").path("message").asText()).isNotEmpty();
  }

  @Test
  void headersTooLargeGet431AsAnErrorObject() throws Exception {
    String r = exchange("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(64 * 1024)
        + "\r\n\r\n");
    assertThat(r).startsWith("HTTP/1.1 431");
    assertThat(jsonBody(r).path("error").path("message").asText()).isNotEmpty();
  }

  @Test
  void aSmugglingAttemptGets400AsAnErrorObject() throws Exception {
    String smuggle = String.join("\r\n", "POST /v1/chat/completions HTTP/1.1", "Host: x", "Content-Length: 5",
        "Transfer-Encoding: chunked", "", "0", "", "");
    String r = exchange(smuggle);
    assertThat(r).startsWith("HTTP/1.1 400");
    assertThat(jsonBody(r).path("error").path("message").asText()).isNotEmpty();
  }
}
