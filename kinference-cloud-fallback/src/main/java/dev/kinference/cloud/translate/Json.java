package dev.kinference.cloud.translate;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** The shared JSON mapper and small helpers. Thread-safe. */
final class Json {

  static final ObjectMapper MAPPER = JsonMapper.builder().build();
  static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private Json() {}

  static ObjectNode object() {
    return NODES.objectNode();
  }

  static ArrayNode array() {
    return NODES.arrayNode();
  }

  /** Parses an object, or returns null if the text is not a JSON object. */
  static @Nullable ObjectNode parseObject(String text) {
    try {
      JsonNode n = MAPPER.readTree(text);
      return n instanceof ObjectNode o ? o : null;
    } catch (JsonProcessingException e) {
      return null;
    }
  }

  /** Parses an object, or returns null if the bytes are not a JSON object. */
  static @Nullable ObjectNode parseObject(byte[] bytes) {
    try {
      JsonNode n = MAPPER.readTree(bytes);
      return n instanceof ObjectNode o ? o : null;
    } catch (IOException e) {
      return null;
    }
  }

  static String write(JsonNode node) {
    try {
      return MAPPER.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a JSON tree always serialises", e);
    }
  }

  static byte[] bytes(JsonNode node) {
    return write(node).getBytes(StandardCharsets.UTF_8);
  }

  /** The text of a field, or null when absent, null or not a string. */
  static @Nullable String text(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v != null && v.isTextual() ? v.asText() : null;
  }

  /** The fields of {@code in} whose value is not null, in order: in every API a null field is as good as absent. */
  static List<Map.Entry<String, JsonNode>> presentFields(ObjectNode in) {
    List<Map.Entry<String, JsonNode>> out = new ArrayList<>(in.size());
    for (Map.Entry<String, JsonNode> f : in.properties()) {
      if (!f.getValue().isNull()) {
        out.add(f);
      }
    }
    return out;
  }

  static boolean present(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v != null && !v.isNull();
  }

  static int intValue(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v != null && v.canConvertToInt() ? v.intValue() : 0;
  }
}
