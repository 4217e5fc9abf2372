package dev.kinference.gateway;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Saturation;
import dev.kinference.routing.RequestRejectedException;
import dev.kinference.routing.RoutingDecision;
import dev.kinference.routing.RoutingException;
import io.opentelemetry.api.trace.Span;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The routing phase of an {@link Exchange}: asks the router for a decision and hands it to {@link Dispatch}, or,
 * when every endpoint the request may use is saturated, parks the exchange in the gateway's queue until one has
 * capacity or its wait runs out. State lives in the exchange, under its lock.
 */
final class Placement {

  private static final Logger log = LoggerFactory.getLogger(Exchange.class);

  private final Exchange x;

  Placement(Exchange x) {
    this.x = x;
  }

  /** Routes the request, or queues it when every endpoint it may use is saturated. */
  void route() {
    Span span = x.trace.routingStarted();
    RoutingDecision d;
    try {
      d = decide(span);
    } catch (RoutingException e) {
      x.release();
      refuse(e);
      return;
    } catch (RuntimeException e) {
      x.release();
      log.warn("Routing failed for {}", x.req(), e);
      x.respondError(500, "routing failed: " + e, null, null, "internal");
      return;
    }
    List<EndpointState> saturated = allSaturated(d);
    if (saturated != null && x.g.queue.capacity() > 0) {
      ExchangeTrace.routed(span, d, "queued");
      d.reportFailed(); // released: the request is routed afresh when it leaves the queue
      enqueue(saturated);
      return;
    }
    ExchangeTrace.routed(span, d, "dispatched");
    x.dispatch.dispatch(d, null);
  }

  /**
   * Asks the router, timing the decision ({@code kinference_gateway_routing_duration_seconds}); a refusal or failure
   * ends {@code span} with its error, a decision leaves it to the caller ({@link ExchangeTrace#routed}).
   */
  private RoutingDecision decide(Span span) {
    long start = System.nanoTime();
    String outcome = "failed";
    try {
      RoutingDecision d = x.g.responseChains.route(x.g.router, x.req());
      outcome = "routed";
      return d;
    } catch (RoutingException e) {
      outcome = "refused";
      GatewayTracing.end(span, e.httpStatus() == 404 ? "unknown_model" : Integer.toString(e.httpStatus()));
      throw e;
    } catch (RuntimeException e) {
      GatewayTracing.end(span, e.getClass().getName());
      throw e;
    } finally {
      x.g.metrics.routingDuration.observe((System.nanoTime() - start) * 1e-9, outcome);
    }
  }

  /** Answers a routing refusal: its status, its reason and its {@code Retry-After} (1 s for a 503 without one). */
  private void refuse(RoutingException e) {
    Duration retry = e instanceof RequestRejectedException rr ? rr.retryAfter().orElse(null) : null;
    if (retry == null && e.httpStatus() == 503) {
      retry = Duration.ofSeconds(1);
    }
    if (e.httpStatus() == 429) {
      x.g.metrics.rateLimited.inc(x.caller.tenantLabel(), x.req().model());
    }
    x.respondError(e.httpStatus(), e.getMessage(), null, retry,
        e.httpStatus() == 404 ? "unknown_model" : e.httpStatus() == 503 ? "no_capacity" : "rejected");
  }

  /** The decision's endpoints if every one is local and saturated, else null. */
  private @Nullable List<EndpointState> allSaturated(RoutingDecision d) {
    Saturation sat = x.g.router.saturation();
    long now = x.g.router.nanoTime();
    EndpointState chosen = d.endpointState();
    if (chosen.endpoint().isExternal() || !sat.isSaturated(chosen, now)) {
      return null;
    }
    List<EndpointState> all = new ArrayList<>(4);
    all.add(chosen);
    for (Endpoint e : d.alternates()) {
      EndpointState s = x.g.router.fleet().get(e.id());
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
    synchronized (x) {
      if (x.finished) {
        return;
      }
      x.blockers = saturated;
      x.queued = true;
      x.queuedAtNanos = System.nanoTime();
      x.deadlineNanos = x.queuedAtNanos + x.g.queueMaxWait.toNanos();
    }
    x.trace.queued();
    if (!x.g.queue.offer(x)) {
      synchronized (x) {
        x.queued = false;
      }
      x.trace.leftQueue("full");
      x.g.metrics.queued.inc(x.caller.tenantLabel(), "full");
      x.release();
      x.respondError(429, "every endpoint for model '" + x.req().model()
          + "' is saturated and the gateway queue is full (" + x.g.queue.capacity() + " waiting)", null,
          Duration.ofSeconds(1), "no_capacity");
    }
  }

  /** Whether an endpoint that blocked this request may have capacity now. */
  boolean mayHaveCapacity() {
    List<EndpointState> b;
    synchronized (x) {
      b = x.blockers;
    }
    Saturation sat = x.g.router.saturation();
    long now = x.g.router.nanoTime();
    for (EndpointState s : b) {
      if (!sat.isSaturated(s, now)) {
        return true;
      }
    }
    return b.isEmpty();
  }

  /** Taken off the queue: route afresh; false (stay queued) if still saturated. */
  boolean leaveQueue() {
    synchronized (x) {
      if (x.finished) {
        return true; // the client left; drop it
      }
    }
    Span span = x.trace.routingStarted();
    RoutingDecision d;
    try {
      d = decide(span);
    } catch (RoutingException e) {
      synchronized (x) {
        x.queued = false;
      }
      x.trace.leftQueue("refused");
      x.release();
      refuse(e); // a policy refusal after the wait (the configuration may have changed) keeps its Retry-After
      return true;
    }
    List<EndpointState> saturated = allSaturated(d);
    if (saturated != null && System.nanoTime() - x.deadlineNanos() < 0) {
      ExchangeTrace.routed(span, d, "still_saturated");
      d.reportFailed();
      synchronized (x) {
        x.blockers = saturated;
      }
      return false;
    }
    long waited;
    synchronized (x) {
      x.queued = false;
      waited = System.nanoTime() - x.queuedAtNanos;
    }
    x.g.metrics.queueWait.observe(waited * 1e-9, x.caller.tenantLabel());
    x.g.metrics.queued.inc(x.caller.tenantLabel(), "dispatched");
    ExchangeTrace.routed(span, d, "dispatched");
    x.trace.leftQueue("dispatched");
    x.dispatch.dispatch(d, null);
    return true;
  }

  void queueTimedOut() {
    long queuedAt;
    synchronized (x) {
      if (x.finished || !x.queued) {
        return;
      }
      x.queued = false;
      queuedAt = x.queuedAtNanos;
    }
    x.g.metrics.queued.inc(x.caller.tenantLabel(), "timeout");
    x.trace.leftQueue("timeout");
    x.g.metrics.queueWait.observe((System.nanoTime() - queuedAt) * 1e-9, x.caller.tenantLabel());
    x.release();
    Duration maxWait = x.g.queueMaxWait;
    x.respondError(503, "no capacity for model '" + x.req().model() + "': every endpoint stayed saturated for "
        + maxWait.toSeconds() + " s", null, Duration.ofSeconds(Math.max(1, maxWait.toSeconds() / 4)),
        "no_capacity");
  }
}
