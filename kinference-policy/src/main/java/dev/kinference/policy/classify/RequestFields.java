package dev.kinference.policy.classify;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.request.ContentPart;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.Message;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Every part of a request that could leave the building, as text with its field path, and the parts that cannot be
 * inspected. A request parsed from JSON is walked generically: every string value of its body, wherever it is
 * (message text and {@code name}s, tool calls and results, {@code user}, {@code metadata}, tool and function
 * definitions, Anthropic {@code system} and {@code document} blocks, image and file URLs, {@code prompt}), except
 * the pure protocol fields {@value #PROTOCOL_DESCRIPTION}. Object keys other than plain names (letters, a few
 * digits, underscores, dashes) are scanned too, and named in paths by position only ({@code metadata.<key#0>}), so
 * a path never repeats personal data. The path is the JSON path, such as {@code
 * messages[2].content[0].image_url.url}, {@code metadata.customer_email} or {@code tools[0].function.description}.
 *
 * <p>URLs are scanned percent-decoded ({@code jane.doe%40example.com}). A {@code data:} URL or a base64 source is
 * scanned decoded when its media type is text ({@code text/*}, JSON, XML); otherwise (images, audio, PDF, other
 * binary data), as well as {@code input_audio} and file ids, it is <em>uninspectable</em> and reported to {@link
 * Visitor#uninspectable}.
 *
 * <p>A request built in code without a body is walked through its messages, tool definitions and prompt, with paths
 * in the same style. Stateless; time linear in the body's size.
 */
public final class RequestFields {

  static final String PROTOCOL_DESCRIPTION = "model, role, type, stream, detail, media_type, format";

  /** Keys whose string values are protocol, never content. */
  private static final Set<String> PROTOCOL = Set.of("model", "role", "type", "stream", "detail", "media_type",
      "format");

  /** Texts longer than this are scanned in their first this many characters only (a guard, 16 MiB of text). */
  private static final int MAX_DECODED = 16 << 20;

  private RequestFields() {}

  /** Receives the fields of a request in order. */
  public interface Visitor {

    /** A field's text (decoded for URLs and text data URLs). */
    void text(String path, String text);

    /** A part whose content cannot be inspected, such as {@code image (image/png, base64)}. */
    default void uninspectable(String path, String what) {}
  }

  /** A part that could not be inspected. */
  public record Uninspectable(String path, String what) {

    /** {@code uninspectable image (image/png) at messages[0].content[1].image_url.url}. */
    public String describe() {
      return "uninspectable " + what + " at " + path;
    }
  }

  /** Visits every field of {@code request}. */
  public static void walk(InferenceRequest request, Visitor visitor) {
    ObjectNode body = request.body();
    if (body != null) {
      StringBuilder path = new StringBuilder(64);
      walkObject(body, path, visitor);
    } else {
      walkModel(request, visitor);
    }
  }

  /** The parts of {@code request} that cannot be inspected, in order. */
  public static List<Uninspectable> uninspectable(InferenceRequest request) {
    List<Uninspectable> out = new ArrayList<>(0);
    walk(request, new Visitor() {
      @Override
      public void text(String path, String text) {}

      @Override
      public void uninspectable(String path, String what) {
        out.add(new Uninspectable(path, what));
      }
    });
    return out;
  }

  // ---- JSON bodies ------------------------------------------------------------------------------------------------

  private static void walkObject(JsonNode node, StringBuilder path, Visitor v) {
    int mark = path.length();
    // An Anthropic source ({type: base64|text|url|file, media_type, data|url|file_id}) or an OpenAI input_audio.
    JsonNode data = node.get("data");
    if (data != null && data.isTextual()) {
      String mediaType = text(node.get("media_type"));
      String format = text(node.get("format"));
      String type = text(node.get("type"));
      appendKey(path, "data", mark);
      String p = path.toString();
      path.setLength(mark);
      if ("text".equals(type) || (mediaType != null && isText(mediaType))) {
        String s = data.asText();
        v.text(p, "base64".equals(type) ? decodeBase64(s) : s);
      } else if (mediaType != null || format != null || "base64".equals(type)) {
        v.uninspectable(p, kindOf(mediaType != null ? mediaType : format != null ? "audio/" + format
            : "application/octet-stream") + " (" + (mediaType != null ? mediaType : format != null ? "audio/"
            + format : "base64") + ")");
      } else {
        walkString(data.asText(), p, v);
      }
    }
    int index = -1;
    for (Map.Entry<String, JsonNode> e : node.properties()) {
      index++;
      String key = e.getKey();
      JsonNode value = e.getValue();
      if ("data".equals(key) && value.isTextual()) {
        continue; // above
      }
      if (value.isTextual() && PROTOCOL.contains(key)) {
        continue;
      }
      if (isPlainKey(key)) {
        appendKey(path, key, mark);
      } else {
        // a key the client made up (metadata keyed by e-mail address, say) leaves too; the path names it by
        // position, never by its text
        appendKey(path, "<key#" + index + ">", mark);
        v.text(path.toString(), key);
      }
      if (value.isTextual() && "file_id".equals(key)) {
        v.uninspectable(path.toString(), "file (uploaded file id)");
      } else {
        walkNode(value, path, v);
      }
      path.setLength(mark);
    }
  }

  private static void walkNode(JsonNode value, StringBuilder path, Visitor v) {
    if (value.isTextual()) {
      walkString(value.asText(), path.toString(), v);
    } else if (value.isObject()) {
      walkObject(value, path, v);
    } else if (value.isArray()) {
      int mark = path.length();
      for (int i = 0; i < value.size(); i++) {
        path.append('[').append(i).append(']');
        walkNode(value.get(i), path, v);
        path.setLength(mark);
      }
    }
    // numbers, booleans and nulls carry nothing
  }

  /**
   * Letters, digits (fewer than six), underscores and dashes, at most 64: a protocol or schema name, fit for a path
   * and not worth a scan.
   */
  private static boolean isPlainKey(String key) {
    if (key.length() > 64) {
      return false;
    }
    int digits = 0;
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c >= '0' && c <= '9') {
        digits++;
      } else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-')) {
        return false;
      }
    }
    return digits < 6;
  }

  private static void appendKey(StringBuilder path, String key, int mark) {
    path.setLength(mark);
    if (mark > 0) {
      path.append('.');
    }
    path.append(key);
  }

  private static @Nullable String text(@Nullable JsonNode n) {
    return n != null && n.isTextual() ? n.asText() : null;
  }

  // ---- strings: plain text, URLs, data URLs -----------------------------------------------------------------------

  /** One string value: text, a URL (scanned percent-decoded) or a data URL (decoded text, or uninspectable). */
  static void walkString(String s, String path, Visitor v) {
    if (s.isEmpty()) {
      return;
    }
    if (s.regionMatches(true, 0, "data:", 0, 5)) {
      int comma = s.indexOf(',');
      if (comma > 0) {
        String header = s.substring(5, comma);
        boolean base64 = header.toLowerCase(Locale.ROOT).endsWith(";base64");
        int semi = header.indexOf(';');
        String mediaType = (semi >= 0 ? header.substring(0, semi) : header).trim().toLowerCase(Locale.ROOT);
        if (mediaType.isEmpty()) {
          mediaType = "text/plain";
        }
        if (isText(mediaType)) {
          String payload = s.substring(comma + 1);
          v.text(path, base64 ? decodeBase64(payload) : percentDecode(payload));
        } else {
          v.uninspectable(path, kindOf(mediaType) + " (" + mediaType + (base64 ? ", base64" : "") + ")");
        }
        return;
      }
    }
    if (isUrl(s) && (s.indexOf('%') >= 0 || s.indexOf('+') >= 0)) {
      v.text(path, percentDecode(s));
      return;
    }
    v.text(path, s);
  }

  private static boolean isUrl(String s) {
    return s.regionMatches(true, 0, "http://", 0, 7) || s.regionMatches(true, 0, "https://", 0, 8)
        || s.regionMatches(true, 0, "ftp://", 0, 6) || s.regionMatches(true, 0, "gs://", 0, 5)
        || s.regionMatches(true, 0, "s3://", 0, 5);
  }

  static boolean isText(String mediaType) {
    String m = mediaType.toLowerCase(Locale.ROOT);
    return m.startsWith("text/") || m.equals("application/json") || m.endsWith("+json") || m.endsWith("+xml")
        || m.equals("application/xml") || m.equals("application/x-www-form-urlencoded")
        || m.equals("application/yaml") || m.equals("application/x-yaml") || m.equals("application/csv");
  }

  private static String kindOf(String mediaType) {
    String m = mediaType.toLowerCase(Locale.ROOT);
    if (m.startsWith("image/")) {
      return "image";
    }
    if (m.startsWith("audio/")) {
      return "audio";
    }
    if (m.startsWith("video/")) {
      return "video";
    }
    return m.equals("application/pdf") ? "document" : "binary data";
  }

  /** Percent-decoding (and {@code +} as a space), lenient: malformed escapes are kept as written. */
  static String percentDecode(String s) {
    int n = Math.min(s.length(), MAX_DECODED);
    byte[] out = new byte[n];
    int len = 0;
    boolean changed = false;
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c == '%' && i + 2 < n && hex(s.charAt(i + 1)) >= 0 && hex(s.charAt(i + 2)) >= 0) {
        out[len++] = (byte) (hex(s.charAt(i + 1)) * 16 + hex(s.charAt(i + 2)));
        i += 2;
        changed = true;
      } else if (c == '+') {
        out[len++] = ' ';
        changed = true;
      } else if (c < 0x80) {
        out[len++] = (byte) c;
      } else {
        return changed ? mixedDecode(s) : s; // non-ASCII: decode escapes only, keep the rest as is
      }
    }
    return changed ? new String(out, 0, len, StandardCharsets.UTF_8) : s;
  }

  private static String mixedDecode(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%' && i + 2 < s.length() && hex(s.charAt(i + 1)) >= 0 && hex(s.charAt(i + 2)) >= 0) {
        sb.append((char) (hex(s.charAt(i + 1)) * 16 + hex(s.charAt(i + 2))));
        i += 2;
      } else {
        sb.append(c == '+' ? ' ' : c);
      }
    }
    return sb.toString();
  }

  private static int hex(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10
        : -1;
  }

  /** Base64 (standard or URL-safe, with or without padding or line breaks) as UTF-8 text; the input when not base64. */
  static String decodeBase64(String s) {
    String clean = s.length() > MAX_DECODED ? s.substring(0, MAX_DECODED) : s;
    try {
      return new String(Base64.getMimeDecoder().decode(clean.replace('-', '+').replace('_', '/')),
          StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return s;
    }
  }

  // ---- requests built in code -------------------------------------------------------------------------------------

  private static void walkModel(InferenceRequest request, Visitor v) {
    List<Message> messages = request.messages();
    for (int i = 0; i < messages.size(); i++) {
      List<ContentPart> parts = messages.get(i).content();
      for (int j = 0; j < parts.size(); j++) {
        walkPart(parts.get(j), "messages[" + i + "].content[" + j + "]", v);
      }
    }
    List<String> tools = request.toolsJson();
    for (int i = 0; i < tools.size(); i++) {
      v.text("tools[" + i + "]", tools.get(i));
    }
    String prompt = request.prompt();
    if (prompt != null) {
      v.text("prompt", prompt);
    }
  }

  private static void walkPart(ContentPart p, String path, Visitor v) {
    switch (p) {
      case ContentPart.Text t -> v.text(path + ".text", t.text());
      case ContentPart.ToolUse u -> {
        v.text(path + ".name", u.name());
        v.text(path + ".input", u.inputJson());
      }
      case ContentPart.ToolResult r -> {
        for (int k = 0; k < r.content().size(); k++) {
          walkPart(r.content().get(k), path + ".content[" + k + "]", v);
        }
      }
      case ContentPart.Other o -> v.text(path, o.json());
      case ContentPart.Image i -> {
        String src = i.source();
        if (src.regionMatches(true, 0, "data:", 0, 5) || isUrl(src)) {
          walkString(src, path + ".url", v);
        } else {
          v.uninspectable(path, "image (inline data)");
        }
      }
    }
  }
}
