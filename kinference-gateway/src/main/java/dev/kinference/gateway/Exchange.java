package dev.kinference.gateway;

import dev.kinference.cloud.translate.ApiErrors;
import dev.kinference.cloud.translate.StreamTranslator;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.TrafficClass;
import dev.kinference.routing.RequestRejectedException;
import dev.kinference.routing.Usage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One inference request through the gateway, from its body to its last byte; the steps are listed on
 * {@link Gateway}. Its lifecycle, one class per phase:
 *
 * <ol>
 *   <li>{@link RequestAdmission}: authentication ({@link #authenticate}), parsing, the traffic policy, the reservation;
 *   <li>{@link Placement}: the routing decision, or a wait in the gateway's queue while every endpoint is saturated;
 *   <li>{@link Dispatch}: one {@link Attempt} after another down the decision's alternates until one answers;
 *   <li>{@link Relay}: the answer to the client, whole or streamed (from its first content it is committed: no more
 *       retries);
 *   <li>recording ({@link RequestRecorder}): settling the reservation, the metrics and the access log, once.
 * </ol>
 *
 * <p>Any phase may end the exchange early with an error answer ({@link #respondError}), and the client may leave at
 * any time ({@link #clientGone}); the ticker checks timeouts ({@link #checkTimeouts}).
 *
 * <p>Concurrency: events arrive from the server thread that read the body, the HTTP client's threads (response,
 * body chunks), Jetty's write callbacks and the ticker (timeouts, queue). State changes happen under this
 * object's lock (the phases share the fields below and take the same lock); writes to the client, sends and cancels
 * of upstream requests happen outside it. At most one write is outstanding. Callbacks of an attempt that is no
 * longer current are ignored.
 */
final class Exchange implements AdmissionQueue.Waiter {

  private static final Logger log = LoggerFactory.getLogger(Exchange.class);
  static final HttpField JSON_TYPE = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "application/json");
  /** A request answered sooner keeps its connection's keep-alive: see {@link ClientDisconnect}. */
  private static final long WATCH_AFTER_NANOS = 300_000_000L;

  final Gateway g;
  final ApiFormat format;
  final Dispatch dispatch;
  final Relay relay;
  private final Placement placement;
  private final Request request;
  private final Response response;
  private final Callback callback;
  final long arrivalNanos = System.nanoTime();
  final ExchangeTrace trace;
  private final AtomicBoolean recorded = new AtomicBoolean();

  CallerIdentity caller = CallerIdentity.ANONYMOUS;
  @Nullable InferenceRequest req;
  byte[] body = new byte[0];
  @Nullable RequestReservation reservation;

  // Guarded by this.
  @Nullable Attempt attempt;
  boolean committed;
  boolean finished;
  boolean writing;
  byte @Nullable [] pendingEnd;
  boolean queued;
  long queuedAtNanos;
  long deadlineNanos;
  List<EndpointState> blockers = List.of();
  int attempts;
  int lastStatus = 502;
  String lastError = "no upstream answered";
  @Nullable Duration lastRetryAfter;
  long firstByteNanos;
  private @Nullable ClientDisconnect disconnectWatch;

  Exchange(Gateway g, Request request, Response response, Callback callback, ApiFormat format) {
    this.g = g;
    this.request = request;
    this.response = response;
    this.callback = callback;
    this.format = format;
    this.trace = new ExchangeTrace(g.tracing, GenAiNames.operation(format), request.getHeaders());
    this.dispatch = new Dispatch(this);
    this.relay = new Relay(this, response);
    this.placement = new Placement(this);
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
    trace.admissionStarted();
    InferenceRequest admitted = new RequestAdmission(this, request.getHeaders()).admit(bodyBytes);
    trace.admissionEnded(admitted, null);
    if (admitted != null) {
      placement.route();
    }
  }

  void release() {
    RequestReservation r = reservation;
    if (r != null) {
      r.release();
    }
  }

  InferenceRequest req() {
    InferenceRequest r = req;
    if (r == null) {
      throw new IllegalStateException("request not parsed yet");
    }
    return r;
  }

  synchronized int attemptCount() {
    return attempts;
  }

  synchronized boolean isCommitted() {
    return committed;
  }

  // ---- the queue (AdmissionQueue.Waiter; the work is Placement's) ----

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
    return placement.mayHaveCapacity();
  }

  /** Taken off the queue: route afresh; false (stay queued) if still saturated. */
  boolean leaveQueue() {
    return placement.leaveQueue();
  }

  void queueTimedOut() {
    placement.queueTimedOut();
  }

  // ---- the client ----

  /** Jetty reports the client's connection failed (closed or reset) while the request is handled. */
  private void clientFailed(Throwable failure) {
    clientGone(failure);
  }

  void clientGone(Throwable x) {
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
      trace.leftQueue("cancelled");
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
        dispatch.retry(a, "first_token_timeout", 504, "no " + (a.translator != null ? "first token" : "response")
            + " within " + limit.toMillis() + " ms");
      }
    } else if (a.translator != null && now - a.lastActivityNanos > a.prepared.idleTimeout().toNanos()) {
      relay.midStreamFailure(a, "upstream " + a.endpoint().id() + " sent nothing for "
          + a.prepared.idleTimeout().toMillis() + " ms");
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
  void stopWatching() {
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

  /** Answers with an error in the client's API format. */
  void respondError(int status, @Nullable String message, @Nullable String param, @Nullable Duration retryAfter,
      String errorType) {
    respondError(status, message, param, retryAfter, errorType, null);
  }

  void respondError(int status, @Nullable String message, @Nullable String param,
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

  /** The answer of attempt {@code a} went out (or the client left): settle the reservation and record. */
  void done(Attempt a, int status, Usage reported, @Nullable String errorType) {
    a.end(errorType);
    Endpoint e = a.endpoint();
    Usage usage = charged(a, reported);
    double cost = g.cost(e, usage);
    RequestReservation r = reservation;
    if (r != null) {
      r.settle(usage, e, cost, errorType != null);
    }
    if (e.isExternal()) {
      g.metrics.fallbacks.inc(caller.tenantLabel(), req().model(), e.id());
    }
    finishWith(status, e, usage, cost, errorType,
        // Jetty's EofException is a QuietException: the connection is aborted as before, but without a WARN line
        // per client that leaves (an adversarial tenant could otherwise fill the log by disconnecting)
        "client_disconnect".equals(errorType) ? new EofException("client disconnected") : null);
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
    long first;
    int tries;
    synchronized (this) {
      first = firstByteNanos;
      tries = attempts;
    }
    g.recorder.record(new RequestRecorder.Outcome(request.getMethod(), request.getHttpURI().getPath(),
        caller.tenantLabel(), req, GenAiNames.operation(format), endpoint, status, tries, usage, cost, errorType,
        arrivalNanos, first, end));
    trace.finished(status, endpoint, usage, errorType, tries);
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
}
