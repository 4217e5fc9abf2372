package dev.kinference.vllm.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.kinference.prompt.TokenizationException;
import dev.kinference.prompt.Tokenizer;
import dev.kinference.request.InferenceRequest;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Objects;
import java.util.concurrent.CompletionException;
import org.jspecify.annotations.Nullable;

/**
 * Tokenizes through a vLLM server, which applies its own chat template and tokenizer, so the ids are the server's
 * by construction. Two endpoints: {@link Endpoint#TOKENIZE} ({@code POST /tokenize} with {@code messages} or
 * {@code prompt}, every vLLM version) and {@link Endpoint#RENDER} ({@code POST /v1/chat/completions/render} and
 * {@code /v1/completions/render}, newer vLLM and its GPU-less {@code vllm launch render} server).
 *
 * <p>Results are cached by conversation: a key is a digest of the model, the tools, the template arguments and the
 * messages, so a request seen before (a retry, the policy engine and the router both asking, the same system prompt
 * and question from many users) costs no call, and concurrent identical requests share one call. Each new turn of a
 * chat is one call: the server must render the new turn anyway.
 *
 * <p>A server that fails or answers something unexpected raises {@link TokenizationException} (the router then falls
 * back to its approximate tokenizer); nothing wrong is cached. Thread-safe.
 */
public final class RemoteTokenizer implements Tokenizer {

  /** Which vLLM endpoint to ask. */
  public enum Endpoint {
    /** {@code POST /tokenize}: answers {@code {count, max_model_len, tokens}}. */
    TOKENIZE,
    /** {@code POST /v1/chat/completions/render} (and {@code /v1/completions/render}): answers {@code {token_ids}}. */
    RENDER
  }

  private final String name;
  private final URI base;
  private final @Nullable String model;
  private final Endpoint endpoint;
  private final Duration timeout;
  private final HttpClient client;
  private final Cache<String, int[]> cache;

  private RemoteTokenizer(Builder b) {
    this.name = b.name;
    this.base = b.base;
    this.model = b.model;
    this.endpoint = b.endpoint;
    this.timeout = b.timeout;
    HttpClient c = b.client;
    this.client = c != null ? c : HttpClient.newBuilder().connectTimeout(b.timeout)
        .version(HttpClient.Version.HTTP_1_1).build();
    this.cache = Caffeine.newBuilder().maximumWeight(b.cacheTokens)
        .weigher((String k, int[] v) -> v.length + 16).build();
  }

  /** A tokenizer asking the vLLM server at {@code baseUri} (such as {@code http://10.0.0.7:8000}). */
  public static Builder builder(URI baseUri) {
    return new Builder(baseUri);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public int[] tokenize(InferenceRequest request) throws TokenizationException {
    int[] given = request.promptTokenIds();
    if (given != null) {
      return given;
    }
    String modelName = model != null ? model : request.model();
    ObjectNode body;
    String path;
    String prompt = request.prompt();
    if (prompt != null) {
      body = ChatRequests.JSON.createObjectNode().put("model", modelName).put("prompt", prompt);
      if (endpoint == Endpoint.TOKENIZE) {
        body.put("add_special_tokens", true);
        path = "/tokenize";
      } else {
        body.put("max_tokens", 1);
        path = "/v1/completions/render";
      }
    } else {
      body = ChatRequests.of(request).toRequestBody(modelName);
      if (request.lora() != null && model == null) {
        body.put("model", request.lora());
      }
      if (endpoint == Endpoint.RENDER) {
        body.put("max_tokens", 1);
      }
      path = endpoint == Endpoint.TOKENIZE ? "/tokenize" : "/v1/chat/completions/render";
    }
    String json = body.toString();
    String key = path + ":" + digest(json);
    try {
      return cache.get(key, k -> {
        try {
          return call(path, json);
        } catch (TokenizationException e) {
          throw new CompletionException(e);
        }
      }).clone();
    } catch (CompletionException e) {
      if (e.getCause() instanceof TokenizationException t) {
        throw t;
      }
      throw e;
    }
  }

  private int[] call(String path, String json) throws TokenizationException {
    URI uri = base.resolve(path);
    HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8)).build();
    HttpResponse<String> response;
    try {
      response = client.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new TokenizationException("tokenizing through " + uri + " failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TokenizationException("interrupted while tokenizing through " + uri, e);
    }
    if (response.statusCode() != 200) {
      String text = response.body();
      throw new TokenizationException(uri + " answered HTTP " + response.statusCode() + ": "
          + (text.length() > 300 ? text.substring(0, 300) + "..." : text));
    }
    JsonNode answer;
    try {
      answer = ChatRequests.JSON.readTree(response.body());
    } catch (IOException e) {
      throw new TokenizationException(uri + " answered invalid JSON", e);
    }
    JsonNode ids = answer.has("tokens") ? answer.get("tokens") : answer.get("token_ids");
    if (ids == null && answer.path("prompt_token_ids").isArray()) {
      ids = answer.get("prompt_token_ids");
    }
    if (ids == null || !ids.isArray()) {
      throw new TokenizationException(uri + " answered without token ids (expected 'tokens' or 'token_ids')");
    }
    int[] out = new int[ids.size()];
    for (int i = 0; i < out.length; i++) {
      JsonNode id = ids.get(i);
      if (!id.canConvertToInt() || !id.isIntegralNumber()) {
        throw new TokenizationException(uri + " answered a token id that is not an integer: " + id);
      }
      out[i] = id.intValue();
    }
    return out;
  }

  private static String digest(String s) {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(d.digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is always available", e);
    }
  }

  /** Builds a {@link RemoteTokenizer}; not thread-safe. */
  public static final class Builder {
    private final URI base;
    private @Nullable String model;
    private Endpoint endpoint = Endpoint.TOKENIZE;
    private Duration timeout = Duration.ofSeconds(2);
    private @Nullable HttpClient client;
    private long cacheTokens = 4L << 20;
    private String name = "vllm-remote";

    private Builder(URI base) {
      this.base = Objects.requireNonNull(base, "base");
      if (base.getScheme() == null || base.getHost() == null) {
        throw new IllegalArgumentException("not an http(s) base URI: " + base);
      }
    }

    /** The model name to send; by default the request's (or its LoRA adapter's). */
    public Builder model(@Nullable String model) {
      this.model = model;
      return this;
    }

    public Builder endpoint(Endpoint endpoint) {
      this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
      return this;
    }

    /** Timeout of each call; default 2 s. */
    public Builder timeout(Duration timeout) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("timeout must be positive: " + timeout);
      }
      this.timeout = timeout;
      return this;
    }

    public Builder httpClient(HttpClient client) {
      this.client = Objects.requireNonNull(client, "client");
      return this;
    }

    /** Token ids kept in the cache (about 4 bytes each plus a small overhead per entry); default 4 Mi. */
    public Builder cacheTokens(long tokens) {
      if (tokens < 0) {
        throw new IllegalArgumentException("cacheTokens must not be negative: " + tokens);
      }
      this.cacheTokens = tokens;
      return this;
    }

    public Builder name(String name) {
      if (name.isBlank()) {
        throw new IllegalArgumentException("name must not be blank");
      }
      this.name = name;
      return this;
    }

    public RemoteTokenizer build() {
      return new RemoteTokenizer(this);
    }
  }
}
