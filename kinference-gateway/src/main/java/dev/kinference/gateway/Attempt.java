package dev.kinference.gateway;

import dev.kinference.cloud.translate.SseParser;
import dev.kinference.cloud.translate.StreamTranslator;
import dev.kinference.cloud.translate.Translation;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.RoutingDecision;
import io.opentelemetry.api.trace.Span;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.Invocable.InvocationType;
import org.jspecify.annotations.Nullable;

/**
 * One try at one upstream endpoint: sends the request through the endpoint's HTTP client and hands what comes back
 * to its {@link Exchange} ({@link Dispatch} for failures, {@link Relay} for answers). Callbacks run on the clients'
 * threads; an attempt that is no longer its exchange's current one is ignored there.
 */
final class Attempt implements Flow.Subscriber<List<ByteBuffer>> {
  static final int MAX_UPSTREAM_BODY = 64 * 1024 * 1024;
  static final int MAX_ERROR_BODY = 64 * 1024;

  private final Exchange x;
  /** This attempt's client span (invalid when tracing is off). */
  final Span span;
  private final AtomicBoolean ended = new AtomicBoolean();
  final RoutingDecision decision;
  final Upstreams.Prepared prepared;
  final long sentNanos = System.nanoTime();
  final @Nullable StreamTranslator translator;
  final @Nullable SseParser parser;
  final List<byte[]> out = new ArrayList<>();
  final List<byte[]> preamble = new ArrayList<>();
  volatile long lastActivityNanos = sentNanos;
  volatile Flow.@Nullable Subscription subscription;
  volatile @Nullable CompletableFuture<?> future;
  volatile org.eclipse.jetty.client.@Nullable Request localRequest;
  volatile Content.@Nullable Source localStream;
  volatile boolean localStreamEnded;
  /** Non-blocking (it parses and hands bytes to asynchronous writes), so Jetty may run it without a thread hop. */
  private final Runnable readLocalStreamTask = Invocable.from(InvocationType.NON_BLOCKING, this::readLocalStream);
  volatile boolean cancelled;
  boolean sawFirstToken;

  Attempt(Exchange x, RoutingDecision decision, Upstreams.Prepared prepared, Span span) {
    this.x = x;
    this.span = span;
    this.decision = decision;
    this.prepared = prepared;
    InferenceRequest r = x.req();
    if (r.stream()) {
      StreamTranslator t = Translation.stream(prepared.upstreamFormat(), x.format,
          r.body() != null && Translation.wantsStreamUsage(r.body()), r.model());
      this.translator = t;
      this.parser = new SseParser(16 * 1024 * 1024, (e, raw) -> {
        if (e != null) {
          t.onEvent(e, raw, out::add);
        } else if (x.committed || t.sawContent()) { // the parser runs under the exchange's lock
          out.add(raw); // keep-alive comments pass through once streaming
        }
      });
    } else {
      this.translator = null;
      this.parser = null;
    }
  }

  Endpoint endpoint() {
    return decision.endpoint();
  }

  /**
   * The attempt is over (its answer went out, it failed, or it was abandoned): its
   * {@code gen_ai.client.operation.duration} and its span, once.
   */
  void end(@Nullable String errorType) {
    if (!ended.compareAndSet(false, true)) {
      return;
    }
    x.g.recorder.recordAttempt(GenAiNames.operation(x.format), endpoint(), decision.request().model(),
        (System.nanoTime() - sentNanos) * 1e-9, errorType);
    GatewayTracing.end(span, errorType);
  }

  void send() {
    switch (prepared.call()) {
      case Upstreams.LocalCall local -> sendLocal(local.request());
      case Upstreams.ProviderCall provider -> sendToProvider(provider);
    }
  }

  private void sendToProvider(Upstreams.ProviderCall call) {
    CompletableFuture<HttpResponse<Void>> f = call.client().sendAsync(call.request(), this::onHeaders);
    future = f;
    CompletableFuture<?> unused = f.whenComplete((r, err) -> {
      if (err != null) {
        x.dispatch.failed(this, Dispatch.unwrap(err));
      }
    });
  }

  /**
   * Sends through the Jetty client. Every failure, before or after the headers, reaches the completion listener;
   * the body readers only stop on one.
   */
  private void sendLocal(org.eclipse.jetty.client.Request r) {
    localRequest = r;
    x.trace.inject(span, (name, value) -> r.headers(h -> h.put(name, value)));
    r.onResponseContentSource(this::onLocalResponse);
    r.send(result -> {
      if (!result.isFailed()) {
        return;
      }
      if (localStream != null) {
        // A failure after the headers of a stream: Jetty may report it here before the body reader sees it.
        localStreamEnded = true;
        x.relay.streamEnd(this, result.getFailure());
      } else {
        x.dispatch.failed(this, result.getFailure());
      }
    });
    if (cancelled) {
      CompletableFuture<Boolean> unused = r.abort(new CancellationException("cancelled by the gateway"));
    }
  }

  private void onLocalResponse(org.eclipse.jetty.client.Response response, Content.Source source) {
    int status = response.getStatus();
    if (status / 100 != 2) {
      String retryAfter = response.getHeaders().get(HttpHeader.RETRY_AFTER);
      new UpstreamBodies.LocalBody(source, MAX_ERROR_BODY,
          bytes -> x.dispatch.upstreamStatus(this, status, bytes, retryAfter)).run();
    } else if (translator != null) {
      localStream = source;
      readLocalStream();
    } else {
      new UpstreamBodies.LocalBody(source, MAX_UPSTREAM_BODY, bytes -> x.relay.fullBody(this, bytes)).run();
    }
  }

  /**
   * Hands what the local server streamed so far to {@link Relay#streamData}, which asks for more
   * ({@link #requestMore}) once it has been written to the client: the client's pace is the upstream's.
   */
  private void readLocalStream() {
    Content.Source source = java.util.Objects.requireNonNull(localStream);
    while (true) {
      Content.Chunk chunk = source.read();
      if (chunk == null) {
        source.demand(readLocalStreamTask);
        return;
      }
      if (Content.Chunk.isFailure(chunk)) {
        localStreamEnded = true;
        x.relay.streamEnd(this, chunk.getFailure());
        return;
      }
      boolean last = chunk.isLast();
      localStreamEnded = last;
      ByteBuffer bytes = chunk.getByteBuffer();
      if (bytes.hasRemaining()) {
        try {
          x.relay.streamData(this, List.of(bytes));
        } finally {
          chunk.release();
        }
        if (last) {
          x.relay.streamEnd(this, null);
        }
        return;
      }
      chunk.release();
      if (last) {
        x.relay.streamEnd(this, null);
        return;
      }
    }
  }

  private HttpResponse.BodySubscriber<Void> onHeaders(HttpResponse.ResponseInfo info) {
    int status = info.statusCode();
    if (status / 100 != 2) {
      String retryAfter = info.headers().firstValue("retry-after").orElse(null);
      return new UpstreamBodies.Collector(MAX_ERROR_BODY,
          bytes -> x.dispatch.upstreamStatus(this, status, bytes, retryAfter));
    }
    if (translator != null) {
      return HttpResponse.BodySubscribers.fromSubscriber(this);
    }
    return new UpstreamBodies.Collector(MAX_UPSTREAM_BODY, bytes -> x.relay.fullBody(this, bytes));
  }

  void cancel() {
    cancelled = true;
    org.eclipse.jetty.client.Request r = localRequest;
    if (r != null) {
      CompletableFuture<Boolean> unused = r.abort(new CancellationException("cancelled by the gateway"));
    }
    Flow.Subscription s = subscription;
    if (s != null) {
      s.cancel();
    }
    CompletableFuture<?> f = future;
    if (f != null) {
      f.cancel(true);
    }
  }

  @Override
  public void onSubscribe(Flow.Subscription s) {
    subscription = s;
    if (cancelled) {
      s.cancel();
    } else {
      s.request(1);
    }
  }

  @Override
  public void onNext(List<ByteBuffer> item) {
    x.relay.streamData(this, item);
  }

  @Override
  public void onError(Throwable t) {
    x.relay.streamEnd(this, t);
  }

  @Override
  public void onComplete() {
    x.relay.streamEnd(this, null);
  }

  void requestMore() {
    Content.Source local = localStream;
    if (local != null) {
      if (!cancelled && !localStreamEnded) {
        local.demand(readLocalStreamTask);
      }
      return;
    }
    Flow.Subscription s = subscription;
    if (s != null && !cancelled) {
      s.request(1);
    }
  }
}
