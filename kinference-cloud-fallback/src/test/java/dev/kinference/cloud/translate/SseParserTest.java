package dev.kinference.cloud.translate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SseParserTest {

  @Test
  @SuppressWarnings("StringConcatToTextBlock") // the exact CR and LF bytes are the point
  void splitsEventsAcrossArbitraryChunkBoundariesAndKeepsTheExactBytes() {
    String stream = "event: message_start\ndata: {\"a\":1}\n\n: keep-alive\n\ndata: x\r\ndata: y\r\n\r\n"
        + "data: [DONE]\n\n";
    for (int chunk = 1; chunk <= stream.length(); chunk++) {
      List<SseEvent> events = new ArrayList<>();
      ByteArrayOutputStream raw = new ByteArrayOutputStream();
      SseParser p = new SseParser(1024, (e, bytes) -> {
        if (e != null) {
          events.add(e);
        }
        raw.writeBytes(bytes);
      });
      byte[] all = stream.getBytes(StandardCharsets.UTF_8);
      for (int i = 0; i < all.length; i += chunk) {
        p.feed(all, i, Math.min(chunk, all.length - i));
      }
      assertThat(events).containsExactly(new SseEvent("message_start", "{\"a\":1}"), SseEvent.data("x\ny"),
          SseEvent.data("[DONE]"));
      assertThat(raw.toString(StandardCharsets.UTF_8)).isEqualTo(stream);
      assertThat(events.get(2).isDone()).isTrue();
    }
  }

  @Test
  void finishDispatchesATruncatedLastEvent() {
    List<SseEvent> events = new ArrayList<>();
    SseParser p = SseParser.of(events::add);
    p.feed("data: {\"partial\":true}");
    assertThat(events).isEmpty();
    assertThat(p.pendingBytes()).isPositive();
    p.finish();
    assertThat(events).containsExactly(SseEvent.data("{\"partial\":true}"));
  }

  @Test
  void anEventLargerThanTheLimitIsAnErrorNotUnboundedMemory() {
    SseParser p = new SseParser(64, (e, raw) -> { });
    assertThatThrownBy(() -> p.feed("data: " + "x".repeat(100))).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("64 bytes");
  }

  @Test
  void toBytesRoundTripsMultiLineData() {
    SseEvent e = new SseEvent("error", "line1\nline2");
    List<SseEvent> events = new ArrayList<>();
    SseParser p = SseParser.of(events::add);
    byte[] b = e.toBytes();
    p.feed(b, 0, b.length);
    assertThat(events).containsExactly(e);
  }
}
