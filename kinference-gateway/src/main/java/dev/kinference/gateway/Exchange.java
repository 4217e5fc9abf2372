package dev.kinference.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.cloud.ProviderUnavailableException;
import dev.kinference.cloud.translate.ApiErrors;
import dev.kinference.cloud.translate.SseParser;
import dev.kinference.cloud.translate.StreamTranslator;
import dev.kinference.cloud.translate.Translation;
import dev.kinference.cloud.translate.UnsupportedTranslationException;
import dev.kinference.cloud.translate.Usages;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Health;
import dev.kinference.endpoint.Saturation;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.InvalidRequestException;
import dev.kinference.request.TrafficClass;
import dev.kinference.routing.RequestRejectedException;
import dev.kinference.routing.RoutingDecision;
import dev.kinference.routing.RoutingException;
import dev.kinference.routing.Usage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.Invocable.InvocationType;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One inference request through the gateway, from its body to its last byte; the steps are listed on
 * {@link Gateway}.
 *
 * <p>Concurrency: events arrive from the server thread that read the body, the HTTP client's threads (response,
 * body chunks), Jetty's write callbacks and the ticker (timeouts, queue). State changes happen under this
 * object's lock; writes to the client, sends and cancels of upstream requests happen outside it. At most one
 * write is outstanding: the next upstream chunk is requested only when the client has taken the previous one.
 * Each {@link Attempt} is one upstream try; callbacks of an attempt that is no longer current are ignored.
 */
final class Exchange implements AdmissionQueue.Waiter {

  private static final Logger accessLog = LoggerFactory.getLogger("dev.kinference.gateway.access");
  private static final Logger log = LoggerFactory.getLogger(Exchange.class);
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final HttpField SSE_TYPE = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "text/event-stream");
  private static final HttpField JSON_TYPE = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "application/json");
  private static final HttpField NO_CACHE = new PreEncodedHttpField(HttpHeader.CACHE_CONTROL, "no-cache");
  private static final int MAX_UPSTREAM_BODY = 64 * 1024 * 1024;
  private static final int MAX_ERROR_BODY = 64 * 1024;
  /** A request answered sooner keeps its connection's keep-alive: see {@link ClientDisconnect}. */
  private static final long WATCH_AFTER_NANOS = 300_000_000L;

  private final Gateway g;
  private final Request request;
  private final Response response;
  private final Callback callback;
  private final ApiFormat format;
  private final long arrivalNanos = System.nanoTime();
  private final java.util.concurrent.atomic.AtomicBoolean recorded = new java.util.concurrent.atomic.AtomicBoolean();

  private Caller caller = Caller.ANONYMOUS;
  private @Nullable InferenceRequest req;
  private byte[] body = new byte[0];
  private @Nullable Reservation reservation;

  // Guarded by this.
  private @Nullable Attempt attempt;
  private boolean committed;
  private boolean finished;
  private boolean writing;
  private byte @Nullable [] pendingEnd;
  private boolean queued;
  private long queuedAtNanos;
  private long deadlineNanos;
  private List<EndpointState> blockers = List.of();
  private int attempts;
  private int lastStatus = 502;
  private String lastError = "no upstream answered";
  private @Nullable Duration lastRetryAfter;
  private long firstByteNanos;
  private @Nullable ClientDisconnect disconnectWatch;

  Exchange(Gateway g, Request request, Response response, Callback callback, ApiFormat format) {
    this.g = g;
    this.request = request;
    this.response = response;
    this.callback = callback;
    this.format = format;
  }

  // ---- arrival ----

  /** Authenticates from the headers; false if the request was answered (401/403). */
  boolean authenticate() {
    try {
      caller = g.guard.authenticate(format, name -> request.getHeaders().get(name));
      return true;
    } catch (RequestRejectedException e) {
      respondError(e.httpStatus(), e.getMessage(), null, e.retryAfter().orElse(null), "auth");
      return false;
    }
  }

  /** The body arrived: parse, admit, route. */
  void start(byte[] bodyBytes) {
    g.active.add(this);
    request.addFailureListener(this::clientFailed);
    this.body = bodyBytes;
    InferenceRequest parsed;
    try {
      parsed = g.parser.parse(format, bodyBytes);
    } catch (InvalidRequestException e) {
      respondError(e.httpStatus(), e.getMessage(), e.field().isEmpty() ? null : e.field(), null, "client_error");
      return;
    }
    InferenceRequest.Builder b = parsed.toBuilder().tenant(caller.tenant());
    SessionHints.apply(name -> request.getHeaders().get(name), parsed, b, g.responseChains);
    // The tenant's traffic policy gives the class and priority; the headers (and a body's priority) only choose
    // within it, clamped. Policy rules (setPriority) apply later and are not clamped.
    var traffic = g.guard.traffic(caller);
    String priority = request.getHeaders().get("x-kinference-priority");
    var json = parsed.body();
    String priorityFrom = priority != null ? "x-kinference-priority"
        : json != null && json.hasNonNull("priority") ? "priority" : null;
    int askedPriority = parsed.priority();
    if (priority != null) {
      try {
        askedPriority = Integer.parseInt(priority.trim());
      } catch (NumberFormatException e) {
        respondError(400, "header x-kinference-priority must be an integer", null, null, "client_error");
        return;
      }
    }
    if (priorityFrom == null) {
      b.priority(traffic.priority());
    } else {
      int p = traffic.clampPriority(askedPriority);
      if (p != askedPriority) {
        g.metrics.clamps.priority(caller.tenantLabel(), priorityFrom, askedPriority, p);
      }
      b.priority(p);
    }
    String trafficClass = request.getHeaders().get("x-kinference-traffic-class");
    TrafficClass askedClass = null;
    if (trafficClass != null) {
      switch (trafficClass.trim().toLowerCase(Locale.ROOT)) {
        case "batch" -> askedClass = TrafficClass.BATCH;
        case "interactive" -> askedClass = TrafficClass.INTERACTIVE;
        default -> {
          respondError(400, "header x-kinference-traffic-class must be interactive or batch", null, null,
              "client_error");
          return;
        }
      }
    }
    TrafficClass servedClass = traffic.classFor(askedClass);
    if (askedClass != null && servedClass != askedClass) {
      g.metrics.clamps.trafficClass(caller.tenantLabel(), "x-kinference-traffic-class", askedClass, servedClass);
    }
    b.trafficClass(servedClass);
    String requestId = request.getHeaders().get("x-request-id");
    if (requestId != null) {
      b.header("x-request-id", requestId);
    }
    InferenceRequest r = b.build();
    this.req = r;
    try {
      Reservation admitted = g.guard.admit(caller, r);
      reservation = admitted;
      this.req = admitted.request();
    } catch (RequestRejectedException e) {
      if (e.httpStatus() == 429) {
        g.metrics.rateLimited.inc(caller.tenantLabel(), r.model());
      }
      respondError(e.httpStatus(), e.getMessage(), null, e.retryAfter().orElse(null),
          e.httpStatus() == 429 ? "rate_limited" : "rejected");
      return;
    }
    route();
  }

  private void release() {
    Reservation r = reservation;
    if (r != null) {
      r.release();
    }
  }

  private InferenceRequest req() {
    InferenceRequest r = req;
    if (r == null) {
      throw new IllegalStateException("request not parsed yet");
    }
    return r;
  }

  /** Routes the request, or queues it when every endpoint it may use is saturated. */
  private void route() {
    RoutingDecision d;
    try {
      d = g.responseChains.route(g.router, req());
    } catch (RoutingException e) {
      release();
      refuse(e);
      return;
    } catch (RuntimeException e) {
      release();
      log.warn("Routing failed for {}", req(), e);
      respondError(500, "routing failed: " + e, null, null, "internal");
      return;
    }
    List<EndpointState> saturated = allSaturated(d);
    if (saturated != null && g.queue.capacity() > 0) {
      d.reportFailed(); // released: the request is routed afresh when it leaves the queue
      enqueue(saturated);
      return;
    }
    dispatch(d, null);
  }

  /** Answers a routing refusal: its status, its reason and its {@code Retry-After} (1 s for a 503 without one). */
  private void refuse(RoutingException e) {
    Duration retry = e instanceof RequestRejectedException rr ? rr.retryAfter().orElse(null) : null;
    if (retry == null && e.httpStatus() == 503) {
      retry = Duration.ofSeconds(1);
    }
    if (e.httpStatus() == 429) {
      g.metrics.rateLimited.inc(caller.tenantLabel(), req().model());
    }
    respondError(e.httpStatus(), e.getMessage(), null, retry,
        e.httpStatus() == 404 ? "unknown_model" : e.httpStatus() == 503 ? "no_capacity" : "rejected");
  }

  /** The decision's endpoints if every one is local and saturated, else null. */
  private @Nullable List<EndpointState> allSaturated(RoutingDecision d) {
    Saturation sat = g.router.saturation();
    long now = g.router.nanoTime();
    EndpointState chosen = d.endpointState();
    if (chosen.endpoint().isExternal() || !sat.isSaturated(chosen, now)) {
      return null;
    }
    List<EndpointState> all = new ArrayList<>(4);
    all.add(chosen);
    for (Endpoint e : d.alternates()) {
      EndpointState s = g.router.fleet().get(e.id());
      if (s == null) {
        continue;
      }
      if (e.isExternal() || !sat.isSaturated(s, now)) {
        return null;
      }
      all.add(s);
    }
    return all;
  }

  // ---- the queue ----

  private void enqueue(List<EndpointState> saturated) {
    synchronized (this) {
      if (finished) {
        return;
      }
      blockers = saturated;
      queued = true;
      queuedAtNanos = System.nanoTime();
      deadlineNanos = queuedAtNanos + g.queueMaxWait.toNanos();
    }
    if (!g.queue.offer(this)) {
      synchronized (this) {
        queued = false;
      }
      g.metrics.queued.inc(caller.tenantLabel(), "full");
      release();
      respondError(429, "every endpoint for model '" + req().model() + "' is saturated and the gateway queue is full ("
          + g.queue.capacity() + " waiting)", null, Duration.ofSeconds(1), "no_capacity");
    }
  }

  @Override
  public String group() {
    return req().model();
  }

  @Override
  public String tenant() {
    return caller.tenantLabel();
  }

  @Override
  public int priority() {
    return req().priority();
  }

  @Override
  public TrafficClass trafficClass() {
    return req().trafficClass();
  }

  @Override
  public synchronized long deadlineNanos() {
    return deadlineNanos;
  }

  /** Whether an endpoint that blocked this request may have capacity now. */
  boolean mayHaveCapacity() {
    List<EndpointState> b;
    synchronized (this) {
      b = blockers;
    }
    Saturation sat = g.router.saturation();
    long now = g.router.nanoTime();
    for (EndpointState s : b) {
      if (!sat.isSaturated(s, now)) {
        return true;
      }
    }
    return b.isEmpty();
  }

  /** Taken off the queue: route afresh; false (stay queued) if still saturated. */
  boolean leaveQueue() {
    synchronized (this) {
      if (finished) {
        return true; // the client left; drop it
      }
    }
    RoutingDecision d;
    try {
      d = g.responseChains.route(g.router, req());
    } catch (RoutingException e) {
      synchronized (this) {
        queued = false;
      }
      release();
      refuse(e); // a policy refusal after the wait (the configuration may have changed) keeps its Retry-After
      return true;
    }
    List<EndpointState> saturated = allSaturated(d);
    if (saturated != null && System.nanoTime() - deadlineNanos() < 0) {
      d.reportFailed();
      synchronized (this) {
        blockers = saturated;
      }
      return false;
    }
    long waited;
    synchronized (this) {
      queued = false;
      waited = System.nanoTime() - queuedAtNanos;
    }
    g.metrics.queueWait.observe(waited * 1e-9, caller.tenantLabel());
    g.metrics.queued.inc(caller.tenantLabel(), "dispatched");
    dispatch(d, null);
    return true;
  }

  void queueTimedOut() {
    synchronized (this) {
      if (finished || !queued) {
        return;
      }
      queued = false;
    }
    g.metrics.queued.inc(caller.tenantLabel(), "timeout");
    g.metrics.queueWait.observe((System.nanoTime() - queuedAtNanos) * 1e-9, caller.tenantLabel());
    release();
    respondError(503, "no capacity for model '" + req().model() + "': every endpoint stayed saturated for "
        + g.queueMaxWait.toSeconds() + " s", null, Duration.ofSeconds(Math.max(1, g.queueMaxWait.toSeconds() / 4)),
        "no_capacity");
  }

  // ---- attempts ----

  /** One try at one upstream endpoint. */
  final class Attempt implements Flow.Subscriber<List<ByteBuffer>> {
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

    Attempt(RoutingDecision decision, Upstreams.Prepared prepared) {
      this.decision = decision;
      this.prepared = prepared;
      InferenceRequest r = req();
      if (r.stream()) {
        StreamTranslator t = Translation.stream(prepared.upstreamFormat(), format,
            r.body() != null && Translation.wantsStreamUsage(r.body()), r.model());
        this.translator = t;
        this.parser = new SseParser(16 * 1024 * 1024, (e, raw) -> {
          if (e != null) {
            t.onEvent(e, raw, out::add);
          } else if (committed || t.sawContent()) {
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
          onAttemptFailed(this, unwrap(err));
        }
      });
    }

    /**
     * Sends through the Jetty client. Every failure, before or after the headers, reaches the completion listener;
     * the body readers only stop on one.
     */
    private void sendLocal(org.eclipse.jetty.client.Request r) {
      localRequest = r;
      r.onResponseContentSource(this::onLocalResponse);
      r.send(result -> {
        if (!result.isFailed()) {
          return;
        }
        if (localStream != null) {
          // A failure after the headers of a stream: Jetty may report it here before the body reader sees it.
          localStreamEnded = true;
          onStreamEnd(this, result.getFailure());
        } else {
          onAttemptFailed(this, result.getFailure());
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
        new LocalBody(source, MAX_ERROR_BODY, bytes -> onUpstreamStatus(this, status, bytes, retryAfter)).run();
      } else if (translator != null) {
        localStream = source;
        readLocalStream();
      } else {
        new LocalBody(source, MAX_UPSTREAM_BODY, bytes -> onFullBody(this, bytes)).run();
      }
    }

    /**
     * Hands what the local server streamed so far to {@link #onStreamData}, which asks for more
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
          onStreamEnd(this, chunk.getFailure());
          return;
        }
        boolean last = chunk.isLast();
        localStreamEnded = last;
        ByteBuffer bytes = chunk.getByteBuffer();
        if (bytes.hasRemaining()) {
          try {
            onStreamData(this, List.of(bytes));
          } finally {
            chunk.release();
          }
          if (last) {
            onStreamEnd(this, null);
          }
          return;
        }
        chunk.release();
        if (last) {
          onStreamEnd(this, null);
          return;
        }
      }
    }

    private HttpResponse.BodySubscriber<Void> onHeaders(HttpResponse.ResponseInfo info) {
      int status = info.statusCode();
      if (status / 100 != 2) {
        String retryAfter = info.headers().firstValue("retry-after").orElse(null);
        return new Collector(MAX_ERROR_BODY, bytes -> onUpstreamStatus(this, status, bytes, retryAfter));
      }
      if (translator != null) {
        return HttpResponse.BodySubscribers.fromSubscriber(this);
      }
      return new Collector(MAX_UPSTREAM_BODY, bytes -> onFullBody(this, bytes));
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
      onStreamData(this, item);
    }

    @Override
    public void onError(Throwable t) {
      onStreamEnd(this, t);
    }

    @Override
    public void onComplete() {
      onStreamEnd(this, null);
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

  /** Sends the request to the decision's endpoint, moving down its alternates while endpoints cannot be used. */
  private void dispatch(RoutingDecision first, @Nullable String retryCause) {
    RoutingDecision d = first;
    String cause = retryCause;
    while (d != null) {
      Endpoint e = d.endpoint();
      g.metrics.decisions.inc(e.id(), cause != null ? (e.isExternal() ? "fallback" : "retry")
          : e.isExternal() ? "fallback" : d.cachedPrefixTokens() > 0 ? "prefix_cache" : "load");
      Upstreams.Prepared p;
      try {
        p = g.upstreams.prepare(e, d.request(), body);
      } catch (ProviderUnavailableException ex) {
        noteFailure(e, "unavailable", 502, ex.getMessage());
        d = d.retryOnNextAlternate();
        cause = "unavailable";
        continue;
      } catch (UnsupportedTranslationException ex) {
        noteFailure(e, "untranslatable", 400, ex.getMessage());
        d = d.retryOnNextAlternate();
        cause = "untranslatable";
        continue;
      }
      Attempt a = new Attempt(d, p);
      synchronized (this) {
        if (finished) {
          d.reportFailed();
          return;
        }
        attempt = a;
        attempts++;
      }
      a.send();
      return;
    }
    exhausted();
  }

  private void noteFailure(Endpoint e, String cause, int status, @Nullable String message) {
    g.metrics.retries.inc(e.id(), cause);
    synchronized (this) {
      lastStatus = status;
      lastError = e.id() + ": " + message;
    }
    log.debug("Attempt on {} failed ({}): {}", e.id(), cause, message);
  }

  /** The attempt failed before anything reached the client: try the next alternate. */
  private void retry(Attempt a, String cause, int status, String message) {
    synchronized (this) {
      if (a != attempt || finished || committed) {
        return;
      }
      attempt = null;
    }
    a.cancel();
    noteFailure(a.endpoint(), cause, status, message);
    RoutingDecision next = a.decision.retryOnNextAlternate();
    if (next == null) {
      exhausted();
    } else {
      dispatch(next, cause);
    }
  }

  private void exhausted() {
    int status;
    String message;
    Duration retryAfter;
    synchronized (this) {
      status = lastStatus;
      message = lastError;
      retryAfter = lastRetryAfter;
    }
    release();
    if (retryAfter == null && (status == 503 || status == 429)) {
      retryAfter = Duration.ofSeconds(1);
    }
    respondError(status, "no endpoint could serve the request; last failure: " + message, null, retryAfter,
        "upstream");
  }

  private void onAttemptFailed(Attempt a, Throwable err) {
    if (a.cancelled) {
      return;
    }
    // java.net.http (providers) and Jetty (local servers) name the same failures differently; Jetty's only
    // SocketTimeoutException is its connect timeout.
    boolean connectTimeout = err instanceof HttpConnectTimeoutException || err instanceof SocketTimeoutException;
    boolean timeout = connectTimeout || err instanceof HttpTimeoutException || err instanceof TimeoutException;
    String cause = connectTimeout ? "connect_timeout" : timeout ? "timeout"
        : err instanceof ConnectException ? "connect" : "io";
    int status = timeout ? 504 : 502;
    Endpoint e = a.endpoint();
    if (!e.isExternal() && err instanceof ConnectException) {
      // Passive health: the connection was refused, nothing listens there any more (a connect timeout may only be
      // a full accept queue, so it is not counted). The scraper revives the endpoint when it answers again.
      a.decision.endpointState().updateHealth(Health.UNHEALTHY, "the gateway could not connect: " + describe(err));
    }
    if (isCommitted()) {
      midStreamFailure(a, "upstream " + a.endpoint().id() + " failed: " + describe(err));
    } else {
      retry(a, cause, status, describe(err));
    }
  }

  private synchronized boolean isCommitted() {
    return committed;
  }

  private void onUpstreamStatus(Attempt a, int status, byte[] errorBody, @Nullable String retryAfter) {
    String message = ApiErrors.messageOf(errorBody);
    // The request itself is at fault: another endpoint would refuse it too.
    if (status == 400 || status == 413 || status == 422) {
      synchronized (this) {
        if (a != attempt || finished) {
          return;
        }
      }
      a.decision.reportFailed();
      release();
      respondError(status, message, null, null, "client_error", a.endpoint());
      return;
    }
    if (retryAfter != null) {
      try {
        long seconds = Long.parseLong(retryAfter.trim());
        synchronized (this) {
          lastRetryAfter = Duration.ofSeconds(Math.max(1, Math.min(seconds, 3600)));
        }
      } catch (NumberFormatException e) {
        // an HTTP date: keep the default
      }
    }
    retry(a, "status_" + status, status == 429 || status == 503 ? status : 502,
        "HTTP " + status + ": " + message);
  }

  // ---- complete responses ----

  private void onFullBody(Attempt a, byte[] bytes) {
    ObjectNode node;
    try {
      node = MAPPER.readTree(bytes) instanceof ObjectNode o ? o : null;
    } catch (IOException e) {
      node = null;
    }
    if (node == null) {
      retry(a, "bad_body", 502, "the response was not a JSON object");
      return;
    }
    Usage u = Usages.ofResponse(a.prepared.upstreamFormat(), node);
    // no usage in the body: its output is estimated from the text (charged() adds the prompt)
    Usage usage = u == null ? new Usage(0, 0, OutputEstimate.ofResponse(node)) : u;
    byte[] out = bytes;
    // the client sees the model name it asked for: an alias or a policy's rewrite must not show through
    String clientModel = req().model();
    boolean renamed = node.hasNonNull("model") && !clientModel.equals(node.path("model").asText());
    if (a.prepared.upstreamFormat() != format || renamed) {
      try {
        ObjectNode answer = a.prepared.upstreamFormat() != format
            ? Translation.response(node, a.prepared.upstreamFormat(), format) : node;
        if (answer.hasNonNull("model")) {
          answer.put("model", clientModel);
        }
        out = MAPPER.writeValueAsBytes(answer);
      } catch (IOException | RuntimeException e) {
        retry(a, "untranslatable", 502, "response translation failed: " + e);
        return;
      }
    }
    synchronized (this) {
      if (a != attempt || finished) {
        return;
      }
      finished = true;
      committed = true;
      firstByteNanos = System.nanoTime();
    }
    a.decision.reportFinished(usage);
    g.responseChains.answered(req(), a.endpoint(), a.prepared.upstreamFormat(), node);
    stopWatching();
    response.setStatus(200);
    response.getHeaders().put(JSON_TYPE);
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, out.length);
    addDebugHeaders(a);
    byte[] written = out;
    response.write(true, ByteBuffer.wrap(written), Callback.from(
        () -> done(a, 200, usage, null),
        x -> {
          done(a, 200, usage, "client_disconnect");
        }));
  }

  // ---- streams ----

  private void onStreamData(Attempt a, List<ByteBuffer> buffers) {
    byte[] toWrite = null;
    boolean more = false;
    boolean failBeforeContent = false;
    String upstreamError = null;
    boolean overflow = false;
    StreamTranslator t = java.util.Objects.requireNonNull(a.translator);
    synchronized (this) {
      if (a != attempt || finished || a.cancelled) {
        a.cancel();
        return;
      }
      a.lastActivityNanos = System.nanoTime();
      try {
        for (ByteBuffer b : buffers) {
          java.util.Objects.requireNonNull(a.parser).feed(b);
        }
      } catch (IllegalStateException e) {
        overflow = true;
      }
      if (!overflow) {
        if (!committed) {
          if (!t.sawContent()) {
            if (t.upstreamError() != null) {
              failBeforeContent = true;
              upstreamError = t.upstreamError();
            } else {
              a.preamble.addAll(a.out);
              a.out.clear();
              more = true;
            }
          } else {
            toWrite = commitBuffered(a);
            writing = true;
          }
        } else if (a.out.isEmpty()) {
          more = true;
        } else {
          toWrite = concat(a.out);
          a.out.clear();
          writing = true;
        }
      }
    }
    if (overflow) {
      if (isCommitted()) {
        midStreamFailure(a, "upstream event too large");
      } else {
        retry(a, "bad_body", 502, "upstream event too large");
      }
      return;
    }
    if (failBeforeContent) {
      retry(a, "error_event", 502, "error event: " + upstreamError);
      return;
    }
    if (toWrite != null) {
      startStream(a);
      write(a, toWrite);
    } else if (more) {
      a.requestMore();
    }
  }

  /** Marks the response committed and takes everything buffered so far. The caller holds this exchange's lock. */
  private byte[] commitBuffered(Attempt a) {
    committed = true;
    firstByteNanos = System.nanoTime();
    a.preamble.addAll(a.out);
    a.out.clear();
    byte[] all = concat(a.preamble);
    a.preamble.clear();
    return all;
  }

  /** Before a stream's first bytes: the router learns of the first token, and the stream's headers are set. */
  private void startStream(Attempt a) {
    if (!a.sawFirstToken) {
      a.sawFirstToken = true;
      a.decision.reportFirstToken();
      stopWatching();
      response.setStatus(200);
      response.getHeaders().put(SSE_TYPE);
      response.getHeaders().put(NO_CACHE);
      addDebugHeaders(a);
    }
  }

  private void write(Attempt a, byte[] bytes) {
    response.write(false, ByteBuffer.wrap(bytes), new Callback() {
      @Override
      public void succeeded() {
        byte[] end;
        synchronized (Exchange.this) {
          writing = false;
          end = pendingEnd;
          pendingEnd = null;
          if (end != null) {
            writing = true;
          }
        }
        if (end != null) {
          writeLast(a, end, false);
        } else {
          a.requestMore();
        }
      }

      @Override
      public void failed(Throwable x) {
        byte[] end;
        synchronized (Exchange.this) {
          writing = false;
          end = pendingEnd;
          pendingEnd = null;
        }
        if (end != null) {
          // The stream had ended and its last bytes waited behind this write: the exchange is finished, so
          // clientGone would ignore it; it is recorded and charged here (regression: never settled, never answered).
          StreamTranslator t = a.translator;
          done(a, 200, t == null ? Usage.UNKNOWN : t.usage(), "client_disconnect");
          return;
        }
        clientGone(x);
      }
    });
  }

  private void onStreamEnd(Attempt a, @Nullable Throwable error) {
    StreamTranslator t = java.util.Objects.requireNonNull(a.translator);
    byte[] toWrite;
    boolean ok;
    synchronized (this) {
      if (a != attempt || finished || a.cancelled) {
        return;
      }
      if (error == null) {
        java.util.Objects.requireNonNull(a.parser).finish();
      }
      ok = error == null && t.complete() && t.upstreamError() == null;
      if (!committed) {
        if (!ok || (!t.sawContent() && a.preamble.isEmpty() && a.out.isEmpty())) {
          toWrite = null;
        } else {
          toWrite = commitBuffered(a);
        }
      } else {
        toWrite = concat(a.out);
        a.out.clear();
      }
      if (toWrite != null && ok) {
        finished = true;
      }
    }
    if (toWrite == null) {
      retry(a, error != null ? "io" : t.upstreamError() != null ? "error_event" : "truncated", 502,
          error != null ? describe(error) : t.upstreamError() != null ? "error event: " + t.upstreamError()
              : "the stream ended before any content");
      return;
    }
    if (!ok) {
      String reason = error != null ? "upstream " + a.endpoint().id() + " failed mid-stream: " + describe(error)
          : t.upstreamError() != null ? null
          : "upstream " + a.endpoint().id() + " ended the stream early";
      midStreamFailure(a, reason, toWrite);
      return;
    }
    startStream(a);
    a.decision.reportFinished(t.usage());
    g.responseChains.streamed(req(), a.endpoint(), a.prepared.upstreamFormat(), t);
    boolean deferred;
    synchronized (this) {
      deferred = writing;
      if (deferred) {
        pendingEnd = toWrite;
      } else {
        writing = true;
      }
    }
    if (!deferred) {
      writeLast(a, toWrite, false);
    }
  }

  private void midStreamFailure(Attempt a, @Nullable String reason) {
    midStreamFailure(a, reason, new byte[0]);
  }

  /** Ends a committed stream with an error event of the client's API (unless the upstream's was forwarded). */
  private void midStreamFailure(Attempt a, @Nullable String reason, byte[] before) {
    boolean deferred;
    byte[] end;
    synchronized (this) {
      if (a != attempt || finished) {
        return;
      }
      finished = true;
      byte[] event = reason == null ? new byte[0] : ApiErrors.streamEvent(format, 502, reason);
      end = concat(List.of(before, event));
      deferred = writing;
      if (deferred) {
        pendingEnd = end;
      } else {
        writing = true;
      }
    }
    a.cancel();
    a.decision.reportFailed();
    if (!deferred) {
      writeLast(a, end, true);
    }
    log.debug("Stream through {} failed: {}", a.endpoint().id(), reason);
  }

  private void writeLast(Attempt a, byte[] bytes, boolean failed) {
    StreamTranslator t = a.translator;
    Usage usage = t == null ? Usage.UNKNOWN : t.usage();
    boolean failedStream = failed || (t != null && (t.upstreamError() != null || !t.complete()));
    response.write(true, ByteBuffer.wrap(bytes), Callback.from(
        () -> done(a, 200, usage, failedStream ? "mid_stream" : null),
        x -> done(a, 200, usage, "client_disconnect")));
  }

  // ---- the client ----

  /** Jetty reports the client's connection failed (closed or reset) while the request is handled. */
  private void clientFailed(Throwable failure) {
    clientGone(failure);
  }

  private void clientGone(Throwable x) {
    Attempt a;
    boolean wasQueued;
    synchronized (this) {
      if (finished) {
        return;
      }
      finished = true;
      a = attempt;
      wasQueued = queued;
      queued = false;
    }
    if (wasQueued) {
      g.queue.remove(this);
      g.metrics.queued.inc(caller.tenantLabel(), "cancelled");
      release();
    }
    if (a != null) {
      a.cancel();
      a.decision.reportFailed();
    }
    log.debug("Client went away: {}", x.toString());
    if (a != null) {
      StreamTranslator t = a.translator;
      done(a, 499, t == null ? Usage.UNKNOWN : t.usage(), "client_disconnect");
    } else {
      finish(499, null, Usage.UNKNOWN, "client_disconnect", x);
    }
  }

  // ---- timeouts ----

  void checkTimeouts(long now) {
    Attempt a;
    boolean isCommitted;
    synchronized (this) {
      a = attempt;
      if (a == null || finished) {
        return;
      }
      isCommitted = committed;
    }
    if (!isCommitted) {
      if (now - a.sentNanos > WATCH_AFTER_NANOS) {
        watchForDisconnect();
      }
      Duration limit = a.translator != null ? a.prepared.firstTokenTimeout() : a.prepared.requestTimeout();
      if (now - a.sentNanos > limit.toNanos()) {
        retry(a, "first_token_timeout", 504, "no " + (a.translator != null ? "first token" : "response")
            + " within " + limit.toMillis() + " ms");
      }
    } else if (a.translator != null && now - a.lastActivityNanos > a.prepared.idleTimeout().toNanos()) {
      midStreamFailure(a, "upstream " + a.endpoint().id() + " sent nothing for " + a.prepared.idleTimeout().toMillis()
          + " ms");
    }
  }

  /**
   * Arms a {@link ClientDisconnect} once the request has waited {@link #WATCH_AFTER_NANOS} for its answer, so that
   * a client that leaves a long generation cancels it (within the ticker's period of the arming).
   */
  private void watchForDisconnect() {
    synchronized (this) {
      if (disconnectWatch != null || committed || finished) {
        return;
      }
      disconnectWatch = ClientDisconnect.arm(request);
    }
  }

  /** Before anything is written: the watcher stops, and a watched connection closes after this response. */
  private void stopWatching() {
    ClientDisconnect w;
    synchronized (this) {
      w = disconnectWatch;
    }
    if (w != null) {
      w.disarm();
      response.getHeaders().put(HttpHeader.CONNECTION, "close");
    }
  }

  // ---- endings ----

  private void addDebugHeaders(Attempt a) {
    if (g.debugHeaders) {
      response.getHeaders().put("x-kinference-endpoint", a.endpoint().id());
      response.getHeaders().put("x-kinference-cached-tokens", a.decision.cachedPrefixTokens());
      String source = a.decision.request().sessionSource();
      if (source != null) {
        response.getHeaders().put("x-kinference-session-source", source);
      }
    }
  }

  /** Answers with an error in the client's API format. */
  void respondError(int status, @Nullable String message, @Nullable String param, @Nullable Duration retryAfter,
      String errorType) {
    respondError(status, message, param, retryAfter, errorType, null);
  }

  private void respondError(int status, @Nullable String message, @Nullable String param,
      @Nullable Duration retryAfter, String errorType, @Nullable Endpoint endpoint) {
    synchronized (this) {
      if (finished) {
        return;
      }
      finished = true;
      committed = true;
    }
    String text = message == null ? "error" : message;
    byte[] bytes = ApiErrors.body(format, status, text, param);
    stopWatching();
    response.setStatus(status);
    response.getHeaders().put(JSON_TYPE);
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
    if (retryAfter != null) {
      response.getHeaders().put(HttpHeader.RETRY_AFTER, Math.max(1, (retryAfter.toMillis() + 999) / 1000));
    }
    if (status == 401 && format != ApiFormat.ANTHROPIC_MESSAGES) {
      response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Bearer");
    }
    response.write(true, ByteBuffer.wrap(bytes), Callback.from(
        () -> finish(status, endpoint, Usage.UNKNOWN, errorType, null),
        x -> finish(status, endpoint, Usage.UNKNOWN, errorType, x)));
  }

  private void done(Attempt a, int status, Usage reported, @Nullable String errorType) {
    Endpoint e = a.endpoint();
    Usage usage = charged(a, reported);
    double cost = g.cost(e, usage);
    Reservation r = reservation;
    if (r != null) {
      r.settle(usage, e, cost, errorType != null);
    }
    if (e.isExternal()) {
      g.metrics.fallbacks.inc(caller.tenantLabel(), req().model(), e.id());
    }
    finishWith(status, e, usage, cost, errorType,
        "client_disconnect".equals(errorType) ? new IOException("client disconnected") : null);
  }

  /**
   * What a request that reached a server is charged, the one figure its reservation settles to and its usage record,
   * access log and metrics show: the server's report when it sent a whole one; otherwise (a stream cut off by the
   * client or the upstream, or sent without usage) the prompt, which the server prefilled, as the router counted it,
   * and the output tokens already relayed, counted from the chunks.
   */
  private static Usage charged(Attempt a, Usage reported) {
    StreamTranslator t = a.translator;
    boolean whole = t == null ? reported.promptTokens() > 0 : t.complete() && reported.completionTokens() > 0;
    if (whole) {
      return reported;
    }
    int input = reported.promptTokens() > 0 ? reported.promptTokens() : a.decision.promptTokens();
    int output = Math.max(reported.completionTokens(), t == null ? 0 : t.outputEvents());
    return new Usage(input, Math.min(reported.cachedPromptTokens(), input), output);
  }

  private void finish(int status, @Nullable Endpoint endpoint, Usage usage, String errorType,
      @Nullable Throwable failure) {
    finishWith(status, endpoint, usage, 0, errorType, failure);
  }

  private void finishWith(int status, @Nullable Endpoint endpoint, Usage usage, double cost,
      @Nullable String errorType, @Nullable Throwable failure) {
    if (!recorded.compareAndSet(false, true)) {
      return;
    }
    long end = System.nanoTime();
    String tenant = caller.tenantLabel();
    InferenceRequest r = req;
    String model = r == null ? "-" : r.model();
    String endpointId = endpoint == null ? "-" : endpoint.id();
    GatewayMetrics m = g.metrics;
    m.requests.inc(tenant, model, endpointId, Integer.toString(status));
    if (errorType != null) {
      m.errors.inc(tenant, model, endpointId, errorType);
    }
    double seconds = (end - arrivalNanos) * 1e-9;
    m.duration.observe(seconds, tenant, model, format == ApiFormat.OPENAI_COMPLETIONS ? "text_completion" : "chat",
        endpointId, errorType == null ? "" : errorType);
    long first;
    synchronized (this) {
      first = firstByteNanos;
    }
    double ttft = -1;
    if (endpoint != null && usage.promptTokens() + usage.completionTokens() > 0) {
      m.tokens.add(usage.promptTokens(), tenant, model, endpointId, "input");
      m.tokens.add(usage.cachedPromptTokens(), tenant, model, endpointId, "cached");
      m.tokens.add(usage.completionTokens(), tenant, model, endpointId, "output");
      m.tokenUsage.observe(usage.promptTokens(), tenant, model, endpointId, "input");
      m.tokenUsage.observe(usage.completionTokens(), tenant, model, endpointId, "output");
      m.cost.add(cost, tenant, model, endpointId);
    }
    if (first != 0 && r != null && r.stream()) {
      ttft = (first - arrivalNanos) * 1e-9;
      m.ttft.observe(ttft, tenant, model, endpointId);
      if (usage.completionTokens() > 1) {
        m.timePerOutputToken.observe((end - first) * 1e-9 / (usage.completionTokens() - 1), tenant, model,
            endpointId);
      }
    }
    if (g.accessLog && accessLog.isInfoEnabled()) {
      accessLog.info(String.format(Locale.ROOT,
          "%s %s tenant=%s model=%s endpoint=%s status=%d stream=%s attempts=%d input=%d cached=%d output=%d "
              + "ttft_ms=%s duration_ms=%.1f cost=%.6f%s",
          request.getMethod(), request.getHttpURI().getPath(), tenant, model, endpointId, status,
          r != null && r.stream(), attemptCount(), usage.promptTokens(), usage.cachedPromptTokens(),
          usage.completionTokens(), ttft < 0 ? "-" : String.format(Locale.ROOT, "%.1f", ttft * 1e3), seconds * 1e3,
          cost, errorType == null ? "" : " error=" + errorType));
    }
    // Leaves the active set only once recorded, so that no active request means every one is in the metrics
    // (regression: StreamFailureTest read the mid-stream error count between the two and found 0).
    g.active.remove(this);
    // The queue first: completing the callback may go on to handle the connection's next, pipelined request on
    // this thread (GatewayThreadPool), which must not overtake the requests already waiting for this capacity.
    g.drainQueue();
    if (failure != null) {
      callback.failed(failure);
    } else {
      callback.succeeded();
    }
  }

  private synchronized int attemptCount() {
    return attempts;
  }

  // ---- helpers ----

  private static byte[] concat(List<byte[]> parts) {
    if (parts.size() == 1) {
      return parts.get(0);
    }
    int n = 0;
    for (byte[] p : parts) {
      n += p.length;
    }
    byte[] out = new byte[n];
    int at = 0;
    for (byte[] p : parts) {
      System.arraycopy(p, 0, out, at, p.length);
      at += p.length;
    }
    return out;
  }

  /**
   * A transport failure as clients may read it: its kind and a short message. Jetty puts its whole connection state
   * into some messages, which is neither readable nor the client's business.
   */
  private static String describe(Throwable t) {
    String message = t.getMessage();
    String kind = t.getClass().getSimpleName();
    return message == null || message.isBlank() ? kind
        : message.length() > 160 || message.contains("@") ? kind : kind + ": " + message;
  }

  private static Throwable unwrap(Throwable t) {
    Throwable x = t;
    while ((x instanceof java.util.concurrent.CompletionException
        || x instanceof java.util.concurrent.ExecutionException) && x.getCause() != null) {
      x = x.getCause();
    }
    return x;
  }

  /**
   * Reads a local server's whole body up to a limit, then hands it on; beyond the limit, the rest is discarded. On a
   * failure it stops: the request's completion listener reports it.
   */
  private static final class LocalBody implements Runnable {
    private final Content.Source source;
    private final int limit;
    private final java.util.function.Consumer<byte[]> whenDone;
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    LocalBody(Content.Source source, int limit, java.util.function.Consumer<byte[]> whenDone) {
      this.source = source;
      this.limit = limit;
      this.whenDone = whenDone;
    }

    @Override
    public void run() {
      while (true) {
        Content.Chunk chunk = source.read();
        if (chunk == null) {
          source.demand(Invocable.from(InvocationType.NON_BLOCKING, this));
          return;
        }
        if (Content.Chunk.isFailure(chunk)) {
          return;
        }
        ByteBuffer b = chunk.getByteBuffer();
        int n = Math.min(b.remaining(), limit - bytes.size());
        if (n > 0) {
          if (b.hasArray()) {
            bytes.write(b.array(), b.arrayOffset() + b.position(), n);
          } else {
            byte[] part = new byte[n];
            b.get(part);
            bytes.writeBytes(part);
          }
        }
        boolean last = chunk.isLast();
        chunk.release();
        if (last) {
          whenDone.accept(bytes.toByteArray());
          return;
        }
      }
    }
  }

  /** Collects a body up to a limit, then hands it on; beyond the limit, the rest is discarded. */
  private static final class Collector implements HttpResponse.BodySubscriber<Void> {
    private final int limit;
    private final java.util.function.Consumer<byte[]> whenDone;
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final CompletableFuture<Void> result = new CompletableFuture<>();

    Collector(int limit, java.util.function.Consumer<byte[]> whenDone) {
      this.limit = limit;
      this.whenDone = whenDone;
    }

    @Override
    public java.util.concurrent.CompletionStage<Void> getBody() {
      return result;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
      s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(List<ByteBuffer> item) {
      for (ByteBuffer b : item) {
        int n = Math.min(b.remaining(), limit - bytes.size());
        if (n > 0) {
          byte[] chunk = new byte[n];
          b.get(chunk);
          bytes.writeBytes(chunk);
        }
      }
    }

    @Override
    public void onError(Throwable t) {
      result.completeExceptionally(t);
    }

    @Override
    public void onComplete() {
      try {
        whenDone.accept(bytes.toByteArray());
      } finally {
        result.complete(null);
      }
    }
  }
}
