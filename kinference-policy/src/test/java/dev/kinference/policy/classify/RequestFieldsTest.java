package dev.kinference.policy.classify;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.request.ApiFormat;
import dev.kinference.request.ContentPart;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.Message;
import dev.kinference.request.RequestParser;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RequestFieldsTest {

  static Map<String, String> fields(InferenceRequest r, List<String> uninspectable) {
    Map<String, String> out = new LinkedHashMap<>();
    RequestFields.walk(r, new RequestFields.Visitor() {
      @Override
      public void text(String path, String text) {
        out.put(path, text);
      }

      @Override
      public void uninspectable(String path, String what) {
        uninspectable.add(what + " at " + path);
      }
    });
    return out;
  }

  @Test
  void everyStringOfTheBodyWithItsPathProtocolFieldsSkippedUrlsDecoded() throws Exception {
    InferenceRequest r = RequestParser.defaults().parse(ApiFormat.OPENAI_CHAT, """
        {"model": "m", "stream": false, "temperature": 0.2, "user": "u1", "metadata": {"a": "b", "n": 3},
         "messages": [
           {"role": "system", "content": "sys"},
           {"role": "user", "name": "bob", "content": [
             {"type": "text", "text": "hi"},
             {"type": "image_url", "image_url": {"url": "https://x.test/p?mail=a%40b.example&q=one+two", "detail": "low"}},
             {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}},
             {"type": "input_audio", "input_audio": {"data": "UklGR", "format": "mp3"}},
             {"type": "file", "file": {"file_id": "file-1"}},
             {"type": "file", "file": {"filename": "n.txt", "file_data": "data:text/plain,call%20me%20at%20home"}}]}],
         "tools": [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}]}
        """);
    List<String> opaque = new ArrayList<>();
    Map<String, String> f = fields(r, opaque);
    assertThat(f).containsExactly(
        Map.entry("user", "u1"),
        Map.entry("metadata.a", "b"),
        Map.entry("messages[0].content", "sys"),
        Map.entry("messages[1].name", "bob"),
        Map.entry("messages[1].content[0].text", "hi"),
        Map.entry("messages[1].content[1].image_url.url", "https://x.test/p?mail=a@b.example&q=one two"),
        Map.entry("messages[1].content[5].file.filename", "n.txt"),
        Map.entry("messages[1].content[5].file.file_data", "call me at home"),
        Map.entry("tools[0].function.name", "f"),
        Map.entry("tools[0].function.description", "d"));
    assertThat(opaque).containsExactly(
        "image (image/jpeg, base64) at messages[1].content[2].image_url.url",
        "audio (audio/mp3) at messages[1].content[3].input_audio.data",
        "file (uploaded file id) at messages[1].content[4].file.file_id");
    assertThat(RequestFields.uninspectable(r)).hasSize(3);
  }

  @Test
  void anthropicSystemBlocksDocumentsAndImages() throws Exception {
    InferenceRequest r = RequestParser.defaults().parse(ApiFormat.ANTHROPIC_MESSAGES, """
        {"model": "m", "max_tokens": 5, "system": [{"type": "text", "text": "s"}],
         "messages": [{"role": "user", "content": [
           {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "doc"}},
           {"type": "document", "source": {"type": "base64", "media_type": "text/csv", "data": "YSxi"}},
           {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}},
           {"type": "image", "source": {"type": "url", "url": "https://x.test/a%2Bb.png"}}]}]}
        """);
    List<String> opaque = new ArrayList<>();
    assertThat(fields(r, opaque)).containsExactly(
        Map.entry("system[0].text", "s"),
        Map.entry("messages[0].content[0].source.data", "doc"),
        Map.entry("messages[0].content[1].source.data", "a,b"),
        Map.entry("messages[0].content[3].source.url", "https://x.test/a+b.png"));
    assertThat(opaque).containsExactly("image (image/png) at messages[0].content[2].source.data");
  }

  @Test
  void aRequestBuiltInCodeIsWalkedThroughItsModel() {
    InferenceRequest r = InferenceRequest.builder("m").system("s").user("u")
        .message(new Message("assistant", List.of(new ContentPart.ToolUse("c1", "f", "{\"x\":1}"))))
        .message(new Message("user", List.of(new ContentPart.Image("sha256:abc"),
            new ContentPart.Image("https://x.test/a%40b"))))
        .tool("{\"name\":\"t\"}").build();
    List<String> opaque = new ArrayList<>();
    assertThat(fields(r, opaque)).containsExactly(
        Map.entry("messages[0].content[0].text", "s"),
        Map.entry("messages[1].content[0].text", "u"),
        Map.entry("messages[2].content[0].name", "f"),
        Map.entry("messages[2].content[0].input", "{\"x\":1}"),
        Map.entry("messages[3].content[1].url", "https://x.test/a@b"),
        Map.entry("tools[0]", "{\"name\":\"t\"}"));
    assertThat(opaque).containsExactly("image (inline data) at messages[3].content[0]");
  }
}
