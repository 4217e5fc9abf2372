package dev.kinference.sim.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.request.InferenceRequest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * vLLM's pooling and tokenizer endpoints, answered at once without the engine: {@code /v1/embeddings},
 * {@code /v1/rerank} and {@code /rerank}, {@code /v1/score} and {@code /score}, {@code /detokenize}. Embeddings are
 * deterministic pseudo-random unit vectors of the text; relevance is the share of the query's words in the document.
 */
final class SimPooling {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  static final Set<String> PATHS =
      Set.of("/v1/embeddings", "/v1/rerank", "/rerank", "/v2/rerank", "/v1/score", "/score", "/detokenize");

  static final class BadRequest extends Exception {
    private static final long serialVersionUID = 1L;

    BadRequest(String message) {
      super(message, null, false, false);
    }
  }

  private final SimulatedServer server;

  SimPooling(SimulatedServer server) {
    this.server = server;
  }

  /** The answer's JSON body (status 200). */
  byte[] answer(String path, ObjectNode body) throws BadRequest {
    return switch (path) {
      case "/v1/embeddings" -> embeddings(body);
      case "/v1/score", "/score" -> score(body);
      case "/detokenize" -> detokenize(body);
      default -> rerank(body);
    };
  }

  private int tokens(String text) {
    if (text.isEmpty()) {
      return 0;
    }
    return server.tokenize(InferenceRequest.builder(server.modelName()).prompt(text).build()).length;
  }

  private byte[] embeddings(ObjectNode body) throws BadRequest {
    JsonNode input = body.get("input");
    List<String> texts = new ArrayList<>();
    List<Integer> counts = new ArrayList<>();
    if (input == null || input.isNull()) {
      throw new BadRequest("'input' is required");
    } else if (input.isTextual()) {
      texts.add(input.asText());
    } else if (input.isArray() && !input.isEmpty() && input.get(0).isIntegralNumber()) {
      texts.add(input.toString());
      counts.add(input.size());
    } else if (input.isArray()) {
      for (JsonNode i : input) {
        if (i.isTextual()) {
          texts.add(i.asText());
        } else if (i.isArray()) {
          texts.add(i.toString());
          counts.add(i.size());
        } else {
          throw new BadRequest("'input' must be a string, strings, or token ids");
        }
      }
    } else {
      throw new BadRequest("'input' must be a string, strings, or token ids");
    }
    int dims = body.path("dimensions").asInt(16);
    boolean base64 = "base64".equals(body.path("encoding_format").asText("float"));
    ObjectNode out = MAPPER.createObjectNode();
    out.put("id", "embd-" + hex());
    out.put("object", "list");
    out.put("created", System.currentTimeMillis() / 1000);
    out.put("model", body.path("model").asText(server.modelName()));
    ArrayNode data = out.putArray("data");
    int total = 0;
    for (int i = 0; i < texts.size(); i++) {
      String t = texts.get(i);
      total += counts.size() == texts.size() ? counts.get(i) : tokens(t);
      float[] v = vector(t, dims);
      ObjectNode d = data.addObject();
      d.put("index", i);
      d.put("object", "embedding");
      if (base64) {
        ByteBuffer buf = ByteBuffer.allocate(4 * dims).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : v) {
          buf.putFloat(f);
        }
        d.put("embedding", Base64.getEncoder().encodeToString(buf.array()));
      } else {
        ArrayNode e = d.putArray("embedding");
        for (float f : v) {
          e.add(f);
        }
      }
    }
    ObjectNode usage = out.putObject("usage");
    usage.put("prompt_tokens", total);
    usage.put("total_tokens", total);
    usage.putNull("completion_tokens");
    usage.putNull("prompt_tokens_details");
    return bytes(out);
  }

  private byte[] rerank(ObjectNode body) throws BadRequest {
    String query = text(body.get("query"), "query");
    JsonNode docs = body.get("documents");
    if (docs == null || !docs.isArray()) {
      throw new BadRequest("'documents' must be an array");
    }
    List<String> texts = new ArrayList<>();
    for (JsonNode d : docs) {
      texts.add(d.isTextual() ? d.asText() : text(d.get("text"), "documents[].text"));
    }
    int total = 0;
    List<ObjectNode> results = new ArrayList<>();
    for (int i = 0; i < texts.size(); i++) {
      total += tokens(query) + tokens(texts.get(i));
      ObjectNode r = MAPPER.createObjectNode();
      r.put("index", i);
      r.putObject("document").put("text", texts.get(i));
      r.put("relevance_score", relevance(query, texts.get(i)));
      results.add(r);
    }
    results.sort((a, b) -> Double.compare(b.get("relevance_score").asDouble(), a.get("relevance_score").asDouble()));
    int topN = body.path("top_n").asInt(results.size());
    ObjectNode out = MAPPER.createObjectNode();
    out.put("id", "rerank-" + hex());
    out.put("model", body.path("model").asText(server.modelName()));
    out.putObject("usage").put("total_tokens", total);
    ArrayNode arr = out.putArray("results");
    results.stream().limit(Math.max(0, Math.min(topN, results.size()))).forEach(arr::add);
    return bytes(out);
  }

  private byte[] score(ObjectNode body) throws BadRequest {
    List<String> first = texts(body.get("text_1"), "text_1");
    List<String> second = texts(body.get("text_2"), "text_2");
    if (first.size() != 1 && first.size() != second.size()) {
      throw new BadRequest("text_1 must be one text or as many as text_2");
    }
    ObjectNode out = MAPPER.createObjectNode();
    out.put("id", "score-" + hex());
    out.put("object", "list");
    out.put("created", System.currentTimeMillis() / 1000);
    out.put("model", body.path("model").asText(server.modelName()));
    ArrayNode data = out.putArray("data");
    int total = 0;
    for (int i = 0; i < second.size(); i++) {
      String a = first.size() == 1 ? first.get(0) : first.get(i);
      total += tokens(a) + tokens(second.get(i));
      ObjectNode d = data.addObject();
      d.put("index", i);
      d.put("object", "score");
      d.put("score", relevance(a, second.get(i)));
    }
    ObjectNode usage = out.putObject("usage");
    usage.put("prompt_tokens", total);
    usage.put("total_tokens", total);
    usage.put("completion_tokens", 0);
    return bytes(out);
  }

  private byte[] detokenize(ObjectNode body) throws BadRequest {
    JsonNode ids = body.get("tokens");
    if (ids == null || !ids.isArray()) {
      throw new BadRequest("'tokens' must be an array of token ids");
    }
    StringBuilder sb = new StringBuilder();
    for (JsonNode id : ids) {
      if (!id.isIntegralNumber()) {
        throw new BadRequest("'tokens' must be an array of token ids");
      }
      sb.append(sb.length() == 0 ? "" : " ").append("t").append(id.asLong());
    }
    ObjectNode out = MAPPER.createObjectNode();
    out.put("prompt", sb.toString());
    return bytes(out);
  }

  private static String text(JsonNode n, String field) throws BadRequest {
    if (n == null || !n.isTextual()) {
      throw new BadRequest("'" + field + "' must be a string");
    }
    return n.asText();
  }

  private static List<String> texts(JsonNode n, String field) throws BadRequest {
    List<String> out = new ArrayList<>();
    if (n != null && n.isArray()) {
      for (JsonNode t : n) {
        out.add(text(t, field + "[]"));
      }
    } else {
      out.add(text(n, field));
    }
    return out;
  }

  /** The share of the query's words found in the document, nudged by a hash so that ties are rare. */
  static double relevance(String query, String document) {
    Set<String> q = words(query);
    Set<String> d = words(document);
    if (q.isEmpty()) {
      return 0;
    }
    long hit = q.stream().filter(d::contains).count();
    double jitter = Math.floorMod((query + "\u0000" + document).hashCode(), 1000) / 100_000.0;
    return Math.min(1.0, (double) hit / q.size() * 0.99 + jitter);
  }

  private static Set<String> words(String s) {
    Set<String> out = new HashSet<>();
    for (String w : s.toLowerCase(Locale.ROOT).split("[^\\p{L}\\p{N}]+")) {
      if (!w.isEmpty()) {
        out.add(w);
      }
    }
    return out;
  }

  static float[] vector(String text, int dims) {
    long seed = text.hashCode() * 0x9E3779B97F4A7C15L;
    float[] v = new float[Math.max(1, dims)];
    double norm = 0;
    for (int i = 0; i < v.length; i++) {
      seed ^= seed << 13;
      seed ^= seed >>> 7;
      seed ^= seed << 17;
      v[i] = (float) ((seed >>> 11) * 0x1.0p-53 * 2 - 1);
      norm += v[i] * (double) v[i];
    }
    double n = Math.sqrt(norm);
    for (int i = 0; i < v.length; i++) {
      v[i] = (float) (v[i] / n);
    }
    return v;
  }

  private static byte[] bytes(ObjectNode out) {
    try {
      return MAPPER.writeValueAsBytes(out);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String hex() {
    return Long.toHexString(ThreadLocalRandom.current().nextLong());
  }
}
