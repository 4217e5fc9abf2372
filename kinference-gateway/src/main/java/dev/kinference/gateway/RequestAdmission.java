package dev.kinference.gateway;

import dev.kinference.request.InferenceRequest;
import dev.kinference.request.InvalidRequestException;
import dev.kinference.request.TrafficClass;
import dev.kinference.routing.RequestRejectedException;
import java.util.Locale;
import org.eclipse.jetty.http.HttpFields;
import org.jspecify.annotations.Nullable;

/**
 * The admission phase of an {@link Exchange}: parses the body, applies the session hints and the tenant's traffic
 * policy to the priority and class the headers ask for (clamped), and reserves the request's budget with the
 * guard. A request refused here is answered and goes no further.
 */
final class RequestAdmission {

  private final Exchange x;
  private final HttpFields headers;

  RequestAdmission(Exchange x, HttpFields headers) {
    this.x = x;
    this.headers = headers;
  }

  /** The request as admitted, with its reservation set on the exchange; null if it was answered (refused). */
  @Nullable InferenceRequest admit(byte[] bodyBytes) {
    InferenceRequest parsed;
    try {
      parsed = x.g.parser.parse(x.format, bodyBytes);
    } catch (InvalidRequestException e) {
      x.respondError(e.httpStatus(), e.getMessage(), e.field().isEmpty() ? null : e.field(), null, "client_error");
      return null;
    }
    InferenceRequest.Builder b = parsed.toBuilder().tenant(x.caller.tenant());
    SessionHints.apply(headers::get, parsed, b, x.g.responseChains);
    if (!applyTrafficPolicy(parsed, b)) {
      return null;
    }
    String requestId = headers.get("x-request-id");
    if (requestId != null) {
      b.header("x-request-id", requestId);
    }
    InferenceRequest r = b.build();
    x.req = r;
    try {
      RequestReservation admitted = x.g.guard.admit(x.caller, r);
      x.reservation = admitted;
      x.req = admitted.request();
      return admitted.request();
    } catch (RequestRejectedException e) {
      if (e.httpStatus() == 429) {
        x.g.metrics.rateLimited.inc(x.caller.tenantLabel(), r.model());
      }
      x.respondError(e.httpStatus(), e.getMessage(), null, e.retryAfter().orElse(null),
          e.httpStatus() == 429 ? "rate_limited" : "rejected");
      return null;
    }
  }

  /**
   * The tenant's traffic policy gives the class and priority; the headers (and a body's priority) only choose within
   * it, clamped. Policy rules (setPriority) apply later and are not clamped. False if a header was malformed (the
   * request was answered).
   */
  private boolean applyTrafficPolicy(InferenceRequest parsed, InferenceRequest.Builder b) {
    var traffic = x.g.guard.traffic(x.caller);
    String priority = headers.get("x-kinference-priority");
    var json = parsed.body();
    String priorityFrom = priority != null ? "x-kinference-priority"
        : json != null && json.hasNonNull("priority") ? "priority" : null;
    int askedPriority = parsed.priority();
    if (priority != null) {
      try {
        askedPriority = Integer.parseInt(priority.trim());
      } catch (NumberFormatException e) {
        x.respondError(400, "header x-kinference-priority must be an integer", null, null, "client_error");
        return false;
      }
    }
    if (priorityFrom == null) {
      b.priority(traffic.priority());
    } else {
      int p = traffic.clampPriority(askedPriority);
      if (p != askedPriority) {
        x.g.metrics.clamps.priority(x.caller.tenantLabel(), priorityFrom, askedPriority, p);
      }
      b.priority(p);
    }
    String trafficClass = headers.get("x-kinference-traffic-class");
    TrafficClass askedClass = null;
    if (trafficClass != null) {
      switch (trafficClass.trim().toLowerCase(Locale.ROOT)) {
        case "batch" -> askedClass = TrafficClass.BATCH;
        case "interactive" -> askedClass = TrafficClass.INTERACTIVE;
        default -> {
          x.respondError(400, "header x-kinference-traffic-class must be interactive or batch", null, null,
              "client_error");
          return false;
        }
      }
    }
    TrafficClass servedClass = traffic.classFor(askedClass);
    if (askedClass != null && servedClass != askedClass) {
      x.g.metrics.clamps.trafficClass(x.caller.tenantLabel(), "x-kinference-traffic-class", askedClass, servedClass);
    }
    b.trafficClass(servedClass);
    return true;
  }
}
