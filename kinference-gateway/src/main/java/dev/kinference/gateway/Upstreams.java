package dev.kinference.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.cloud.ExternalProvider;
import dev.kinference.cloud.ExternalProviders;
import dev.kinference.cloud.ProviderRequest;
import dev.kinference.cloud.ProviderUnavailableException;
import dev.kinference.cloud.translate.Translation;
import dev.kinference.cloud.translate.UnsupportedTranslationException;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP clients to the upstreams and the request for each: local servers get the client's body as it came
 * (re-serialised only when the model was rewritten or a stream's usage must be requested), external providers
 * get {@link ExternalProviders#prepare}'s translated request. Local servers are reached over HTTP/1.1 with one
 * shared client; each external provider has its own client (HTTP/2 where offered, the provider's connect
 * timeout). Thread-safe.
 */
final class Upstreams implements AutoCloseable {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** A request ready to send. */
  record Prepared(HttpClient client, HttpRequest request, ApiFormat upstreamFormat, Duration firstTokenTimeout,
      Duration idleTimeout, Duration requestTimeout, @Nullable ExternalProvider provider) {}

  private final HttpClient local;
  private volatile ExternalProviders providers;
  private final Map<String, HttpClient> external = new ConcurrentHashMap<>();
  private final Duration firstTokenTimeout;
  private final Duration idleTimeout;
  private final Duration requestTimeout;
  private final Executor executor;
  private final Map<URI, Map<ApiFormat, URI>> localUris = new ConcurrentHashMap<>();

  Upstreams(ExternalProviders providers, Duration connectTimeout, Duration firstTokenTimeout, Duration idleTimeout,
      Duration requestTimeout, Executor executor) {
    this.providers = providers;
    this.requestTimeout = requestTimeout;
    this.firstTokenTimeout = firstTokenTimeout;
    this.idleTimeout = idleTimeout;
    this.executor = executor;
    this.local = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(connectTimeout)
        .followRedirects(HttpClient.Redirect.NEVER).executor(executor).build();
  }

  ExternalProviders providers() {
    return providers;
  }

  /** Replaces the providers (a configuration reload); clients of providers that stay are kept. */
  void providers(ExternalProviders next) {
    this.providers = next;
    external.keySet().retainAll(next.providers().keySet());
  }

  Prepared prepare(Endpoint endpoint, InferenceRequest request, byte[] body)
      throws ProviderUnavailableException, UnsupportedTranslationException {
    if (endpoint.isExternal()) {
      ObjectNode parsed = request.body();
      if (parsed == null) {
        throw new UnsupportedTranslationException(request.format(), request.format(), "", "no JSON body");
      }
      if (request.maxTokens() > 0 && !parsed.hasNonNull("max_tokens") && !parsed.hasNonNull("max_completion_tokens")) {
        ObjectNode copy = parsed.deepCopy();
        copy.put("max_tokens", request.maxTokens());
        parsed = copy;
      }
      ProviderRequest pr = providers.prepare(endpoint, request.format(), parsed);
      ExternalProvider p = pr.provider();
      HttpClient client = external.computeIfAbsent(p.name(), n -> HttpClient.newBuilder()
          .connectTimeout(p.connectTimeout()).followRedirects(HttpClient.Redirect.NEVER).executor(executor)
          .build());
      return new Prepared(client, pr.httpRequest(), pr.upstreamFormat(), p.firstTokenTimeout(), p.idleTimeout(),
          p.requestTimeout(), p);
    }
    ApiFormat format = request.format();
    byte[] out = body;
    ObjectNode parsed = request.body();
    boolean stream = request.stream();
    if (parsed != null) {
      // The server knows its model by the endpoint's served name (an alias or policy rewrite may differ).
      String model = endpoint.model();
      boolean rename = !model.equals(parsed.path("model").asText());
      boolean askUsage = stream && format != ApiFormat.ANTHROPIC_MESSAGES && !Translation.wantsStreamUsage(parsed);
      boolean imposeMax = request.maxTokens() > 0 && !parsed.hasNonNull("max_tokens")
          && !parsed.hasNonNull("max_completion_tokens");
      if (rename || askUsage || imposeMax) {
        ObjectNode changed = Translation.request(parsed, format, format, model, 1);
        if (imposeMax) {
          changed.put("max_tokens", request.maxTokens());
        }
        try {
          out = MAPPER.writeValueAsBytes(changed);
        } catch (JsonProcessingException e) {
          throw new IllegalStateException("a JSON tree always serialises", e);
        }
      }
    }
    URI uri = localUri(endpoint.uri(), format);
    HttpRequest.Builder rb = HttpRequest.newBuilder(uri)
        .POST(HttpRequest.BodyPublishers.ofByteArray(out))
        .header("Content-Type", "application/json");
    if (stream) {
      rb.header("Accept", "text/event-stream");
    }
    String requestId = request.header("x-request-id");
    if (requestId != null) {
      rb.header("X-Request-Id", requestId);
    }
    return new Prepared(local, rb.build(), format, firstTokenTimeout, idleTimeout, requestTimeout, null);
  }

  private URI localUri(URI base, ApiFormat format) {
    Map<ApiFormat, URI> byFormat = localUris.computeIfAbsent(base, b -> {
      Map<ApiFormat, URI> all = new java.util.EnumMap<>(ApiFormat.class);
      String s = b.toString();
      String root = s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
      for (ApiFormat f : ApiFormat.values()) {
        all.put(f, URI.create(root + f.path()));
      }
      return all;
    });
    return java.util.Objects.requireNonNull(byFormat.get(format));
  }

  @Override
  public void close() {
    // shutdownNow: close() would wait for every open stream to finish
    local.shutdownNow();
    external.values().forEach(HttpClient::shutdownNow);
  }
}
