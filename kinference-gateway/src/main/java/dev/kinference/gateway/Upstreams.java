package dev.kinference.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.cloud.CloudProvider;
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
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP clients to the upstreams and the request for each: local servers get the client's body as it came
 * (re-serialised only when the model was rewritten or a stream's usage must be requested), external providers
 * get {@link ExternalProviders#prepare}'s translated request. Local servers are reached over HTTP/1.1 with one
 * shared Jetty client, whose connections the gateway server's I/O threads carry ({@link UpstreamConnector}; the hot
 * path: see docs/PERFORMANCE.md for why not {@code java.net.http}); each
 * external provider has its own {@code java.net.http} client (HTTP/2 and TLS where offered, the provider's connect
 * timeout). Thread-safe.
 */
final class Upstreams implements AutoCloseable {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** A request ready to send. */
  record Prepared(Call call, ApiFormat upstreamFormat, Duration firstTokenTimeout, Duration idleTimeout,
      Duration requestTimeout, @Nullable CloudProvider provider) {}

  /** How a prepared request travels. */
  sealed interface Call permits LocalCall, ProviderCall {}

  /** To a local server, through the shared Jetty client; the request is built but not sent. */
  record LocalCall(Request request) implements Call {}

  /** To an external provider, through its {@code java.net.http} client. */
  record ProviderCall(HttpClient client, HttpRequest request) implements Call {}

  private final org.eclipse.jetty.client.HttpClient local;
  private volatile ExternalProviders providers;
  private final Map<String, HttpClient> external = new ConcurrentHashMap<>();
  private final Duration firstTokenTimeout;
  private final Duration idleTimeout;
  private final Duration requestTimeout;
  private final Executor executor;
  private final Map<URI, Map<ApiFormat, URI>> localUris = new ConcurrentHashMap<>();

  /**
   * @param executor where external providers' responses are handled
   * @param carrier the gateway server's selector manager, whose I/O threads carry the connections to local servers
   *     (see {@link UpstreamConnector})
   * @param blockingPlugins whether the end of an exchange may block (see {@link Gateway.Builder#blockingPlugins})
   */
  Upstreams(ExternalProviders providers, Duration connectTimeout, Duration firstTokenTimeout, Duration idleTimeout,
      Duration requestTimeout, Executor executor, SelectorManager carrier, boolean blockingPlugins) {
    this.providers = providers;
    this.requestTimeout = requestTimeout;
    this.firstTokenTimeout = firstTokenTimeout;
    this.idleTimeout = idleTimeout;
    this.executor = executor;
    QueuedThreadPool threads = new QueuedThreadPool(200, 2);
    threads.setName("kinference-upstream");
    threads.setDaemon(true);
    ClientConnector connector = new UpstreamConnector(carrier, blockingPlugins);
    connector.setExecutor(threads);
    connector.setConnectTimeout(connectTimeout);
    org.eclipse.jetty.client.HttpClient c =
        new org.eclipse.jetty.client.HttpClient(new HttpClientTransportOverHTTP(connector));
    c.setExecutor(threads);
    c.setFollowRedirects(false);
    c.setUserAgentField(null);
    // Bodies pass through byte for byte: no Accept-Encoding is added and nothing is decoded.
    c.getContentDecoderFactories().clear();
    // HTTP/1.1 carries one request per connection at a time, and a stream may wait minutes for its tokens, so the
    // number of connections is bounded by the requests the gateway admits, not here.
    c.setMaxConnectionsPerDestination(Integer.MAX_VALUE);
    c.setMaxRequestsQueuedPerDestination(Integer.MAX_VALUE);
    // Our own first-token and idle-stream timeouts govern a request; the client only retires unused connections.
    c.setIdleTimeout(Math.max(requestTimeout.toMillis(), Math.max(firstTokenTimeout.toMillis(),
        idleTimeout.toMillis())) + 5_000);
    try {
      c.start();
    } catch (Exception e) {
      throw new IllegalStateException("the HTTP client for local servers did not start: " + e, e);
    }
    this.local = c;
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
      String maxField = maxTokensField(request.format());
      if (request.maxTokens() > 0 && !parsed.hasNonNull(maxField) && !parsed.hasNonNull("max_completion_tokens")) {
        ObjectNode copy = parsed.deepCopy();
        copy.put(maxField, request.maxTokens());
        parsed = copy;
      }
      ProviderRequest pr = providers.prepare(endpoint, request.format(), parsed);
      CloudProvider p = pr.provider();
      HttpClient client = external.computeIfAbsent(p.name(), n -> HttpClient.newBuilder()
          .connectTimeout(p.connectTimeout()).followRedirects(HttpClient.Redirect.NEVER).executor(executor)
          .build());
      return new Prepared(new ProviderCall(client, pr.httpRequest()), pr.upstreamFormat(), p.firstTokenTimeout(),
          p.idleTimeout(), p.requestTimeout(), p);
    }
    ApiFormat format = request.format();
    byte[] out = body;
    ObjectNode parsed = request.body();
    boolean stream = request.stream();
    if (parsed != null) {
      // The server knows its model by the endpoint's served name (an alias or policy rewrite may differ).
      String model = endpoint.model();
      boolean rename = !model.equals(parsed.path("model").asText());
      // Responses streams end with their usage anyway (response.completed)
      boolean askUsage = stream && (format == ApiFormat.OPENAI_CHAT || format == ApiFormat.OPENAI_COMPLETIONS)
          && !Translation.wantsStreamUsage(parsed);
      String maxField = maxTokensField(format);
      boolean imposeMax = request.maxTokens() > 0 && !parsed.hasNonNull(maxField)
          && !parsed.hasNonNull("max_completion_tokens");
      // vLLM's priority scheduling reads the body's priority (lower first, the negative of ours): it must be the one
      // the tenant's clamp allowed
      int vllmPriority = request.priority() == Integer.MIN_VALUE ? Integer.MAX_VALUE : -request.priority();
      boolean reprioritize = parsed.has("priority") && parsed.path("priority").asInt() != vllmPriority;
      if (rename || askUsage || imposeMax || reprioritize) {
        ObjectNode changed = Translation.request(parsed, format, format, model, 1);
        if (imposeMax) {
          changed.put(maxField, request.maxTokens());
        }
        if (reprioritize) {
          changed.put("priority", vllmPriority);
        }
        try {
          out = MAPPER.writeValueAsBytes(changed);
        } catch (JsonProcessingException e) {
          throw new IllegalStateException("a JSON tree always serialises", e);
        }
      }
    }
    URI uri = localUri(endpoint.uri(), format);
    String requestId = request.header("x-request-id");
    Request r = local.newRequest(uri).method(HttpMethod.POST).body(new BytesRequestContent("application/json", out))
        .headers(h -> {
          if (stream) {
            h.put(HttpHeader.ACCEPT, "text/event-stream");
          }
          if (requestId != null) {
            h.put("X-Request-Id", requestId);
          }
        });
    return new Prepared(new LocalCall(r), format, firstTokenTimeout, idleTimeout, requestTimeout, null);
  }

  /** Where a format takes its output budget: the Responses API's {@code max_output_tokens}, else {@code max_tokens}. */
  private static String maxTokensField(ApiFormat format) {
    return format == ApiFormat.OPENAI_RESPONSES ? "max_output_tokens" : "max_tokens";
  }

  /** A POST of {@code body} to {@code path} on a local server, built but not sent, bounded by the request timeout. */
  Request localPost(URI base, String path, byte[] body, @Nullable String requestId) {
    String s = base.toString();
    String root = s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
    return local.newRequest(URI.create(root + path)).method(HttpMethod.POST)
        .body(new BytesRequestContent("application/json", body))
        .timeout(requestTimeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)
        .headers(h -> {
          if (requestId != null) {
            h.put("X-Request-Id", requestId);
          }
        });
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
    try {
      local.stop();
    } catch (Exception e) {
      // stopping aborts what is in flight; nothing more to do
    }
    // shutdownNow: close() would wait for every open stream to finish
    external.values().forEach(HttpClient::shutdownNow);
  }
}
