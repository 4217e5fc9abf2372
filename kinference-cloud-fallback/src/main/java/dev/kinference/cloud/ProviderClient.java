package dev.kinference.cloud;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.cloud.translate.ApiErrors;
import dev.kinference.cloud.translate.SseParser;
import dev.kinference.cloud.translate.StreamTranslator;
import dev.kinference.cloud.translate.Translation;
import dev.kinference.cloud.translate.UnsupportedTranslationException;
import dev.kinference.cloud.translate.Usages;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.request.ApiFormat;
import dev.kinference.routing.Usage;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Flow;
import java.util.function.Consumer;

/**
 * Calls external providers over {@code java.net.http} for a program that embeds the router without the gateway:
 * the request goes out in the provider's format and the answer comes back in the caller's, streamed or not, with
 * its usage and cost. (The gateway uses {@link ExternalProviders#prepare} with its own streaming and timeouts.)
 *
 * <p>Thread-safe; share one per process.
 */
public final class ProviderClient {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final ExternalProviders providers;
  private final HttpClient http;

  private ProviderClient(ExternalProviders providers, HttpClient http) {
    this.providers = Objects.requireNonNull(providers, "providers");
    this.http = Objects.requireNonNull(http, "http");
  }

  private static String utf8(byte[] bytes) {
    return new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
  }

  /** A client over {@code http}. */
  public static ProviderClient create(ExternalProviders providers, HttpClient http) {
    return new ProviderClient(providers, http);
  }

  /** A client with its own {@link HttpClient} (HTTP/2 where the provider offers it, redirects not followed). */
  public static ProviderClient create(ExternalProviders providers) {
    return new ProviderClient(providers, HttpClient.newBuilder().connectTimeout(java.time.Duration.ofSeconds(10))
        .build());
  }

  /**
   * Sends a non-streaming request in {@code clientFormat} to an external endpoint.
   *
   * @return the answer in {@code clientFormat}; fails with {@link ProviderUnavailableException} or
   *     {@link UnsupportedTranslationException} (wrapped in a {@link CompletionException}) before sending
   */
  public CompletableFuture<ProviderResponse> send(Endpoint endpoint, ApiFormat clientFormat, ObjectNode body) {
    ProviderRequest req;
    try {
      ObjectNode copy = body.deepCopy();
      copy.put("stream", false);
      req = providers.prepare(endpoint, clientFormat, copy);
    } catch (ProviderUnavailableException | UnsupportedTranslationException e) {
      return CompletableFuture.failedFuture(e);
    }
    ProviderRequest r = req;
    return http.sendAsync(r.httpRequest(), HttpResponse.BodyHandlers.ofByteArray()).thenApply(resp -> {
      byte[] bytes = resp.body();
      if (resp.statusCode() / 100 != 2) {
        return new ProviderResponse(resp.statusCode(),
            utf8(ApiErrors.body(clientFormat, resp.statusCode(), ApiErrors.messageOf(bytes), null)), Usage.UNKNOWN, 0);
      }
      ObjectNode parsed;
      try {
        parsed = (ObjectNode) MAPPER.readTree(bytes);
      } catch (IOException | ClassCastException e) {
        return new ProviderResponse(502, utf8(ApiErrors.body(clientFormat, 502,
            "provider " + r.provider().name() + " sent a body that is not a JSON object", null)), Usage.UNKNOWN, 0);
      }
      Usage usage = Usages.ofResponse(r.upstreamFormat(), parsed);
      Usage u = usage == null ? Usage.UNKNOWN : usage;
      ObjectNode translated = Translation.response(parsed, r.upstreamFormat(), clientFormat);
      try {
        return new ProviderResponse(resp.statusCode(), MAPPER.writeValueAsString(translated), u,
            r.model().prices().cost(u));
      } catch (IOException e) {
        throw new CompletionException(e);
      }
    });
  }

  /**
   * Sends a streaming request in {@code clientFormat} and passes each event, in {@code clientFormat}, to
   * {@code events} as it arrives (on the HTTP client's thread). Completes when the stream ends, with an empty body
   * and the usage the stream reported; a provider error before the stream is returned in the response as in
   * {@link #send}.
   */
  public CompletableFuture<ProviderResponse> stream(Endpoint endpoint, ApiFormat clientFormat, ObjectNode body,
      Consumer<byte[]> events) {
    ProviderRequest req;
    try {
      ObjectNode copy = body.deepCopy();
      copy.put("stream", true);
      req = providers.prepare(endpoint, clientFormat, copy);
    } catch (ProviderUnavailableException | UnsupportedTranslationException e) {
      return CompletableFuture.failedFuture(e);
    }
    ProviderRequest r = req;
    StreamTranslator translator = Translation.stream(r.upstreamFormat(), clientFormat,
        Translation.wantsStreamUsage(body), endpoint.model());
    SseParser parser = new SseParser(16 * 1024 * 1024, (e, raw) -> {
      if (e != null) {
        translator.onEvent(e, raw, events);
      }
    });
    return http.sendAsync(r.httpRequest(), info -> {
      if (info.statusCode() / 100 != 2) {
        return HttpResponse.BodySubscribers.mapping(HttpResponse.BodySubscribers.ofByteArray(),
            bytes -> new ProviderResponse(info.statusCode(),
                utf8(ApiErrors.body(clientFormat, info.statusCode(), ApiErrors.messageOf(bytes), null)), Usage.UNKNOWN,
                0));
      }
      return HttpResponse.BodySubscribers.fromSubscriber(new Flow.Subscriber<List<ByteBuffer>>() {
        @Override
        public void onSubscribe(Flow.Subscription s) {
          s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(List<ByteBuffer> item) {
          item.forEach(parser::feed);
        }

        @Override
        public void onError(Throwable t) {
          // reported through the response future
        }

        @Override
        public void onComplete() {
          parser.finish();
        }
      }, s -> {
        if (!translator.complete()) {
          events.accept(ApiErrors.streamEvent(clientFormat, 502,
              "provider " + r.provider().name() + " ended the stream early"));
        }
        Usage u = translator.usage();
        return new ProviderResponse(info.statusCode(), "", u, r.model().prices().cost(u));
      });
    }).thenApply(HttpResponse::body);
  }
}
