package dev.kinference.gateway;

import dev.kinference.cloud.ProviderUnavailableException;
import dev.kinference.cloud.translate.ApiErrors;
import dev.kinference.cloud.translate.UnsupportedTranslationException;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.Health;
import dev.kinference.routing.RoutingDecision;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dispatch phase of an {@link Exchange}: sends the request to the routing decision's endpoint as an
 * {@link Attempt}, and while nothing has reached the client, moves a failed attempt on to the decision's next
 * alternate; when none is left, answers with the last failure. State lives in the exchange, under its lock.
 */
final class Dispatch {

  private static final Logger log = LoggerFactory.getLogger(Exchange.class);

  private final Exchange x;

  Dispatch(Exchange x) {
    this.x = x;
  }

  /** Sends the request to the decision's endpoint, moving down its alternates while endpoints cannot be used. */
  void dispatch(RoutingDecision first, @Nullable String retryCause) {
    RoutingDecision d = first;
    String cause = retryCause;
    while (d != null) {
      Endpoint e = d.endpoint();
      x.g.metrics.decisions.inc(e.id(), cause != null ? (e.isExternal() ? "fallback" : "retry")
          : e.isExternal() ? "fallback" : d.cachedPrefixTokens() > 0 ? "prefix_cache" : "load");
      Upstreams.Prepared p;
      try {
        p = x.g.upstreams.prepare(e, d.request(), x.body);
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
      // attempts are dispatched one after another, so the count read here is still this attempt's when it starts
      Attempt a = new Attempt(x, d, p, x.trace.attemptStarted(d, x.attemptCount() + 1, cause));
      synchronized (x) {
        if (x.finished) {
          d.reportFailed();
          a.end("client_disconnect");
          return;
        }
        x.attempt = a;
        x.attempts++;
      }
      a.send();
      return;
    }
    exhausted();
  }

  private void noteFailure(Endpoint e, String cause, int status, @Nullable String message) {
    x.g.metrics.retries.inc(e.id(), cause);
    synchronized (x) {
      x.lastStatus = status;
      x.lastError = e.id() + ": " + message;
    }
    log.debug("Attempt on {} failed ({}): {}", e.id(), cause, message);
  }

  /** The attempt failed before anything reached the client: try the next alternate. */
  void retry(Attempt a, String cause, int status, String message) {
    synchronized (x) {
      if (a != x.attempt || x.finished || x.committed) {
        return;
      }
      x.attempt = null;
    }
    a.cancel();
    a.end(cause);
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
    synchronized (x) {
      status = x.lastStatus;
      message = x.lastError;
      retryAfter = x.lastRetryAfter;
    }
    x.release();
    if (retryAfter == null && (status == 503 || status == 429)) {
      retryAfter = Duration.ofSeconds(1);
    }
    x.respondError(status, "no endpoint could serve the request; last failure: " + message, null, retryAfter,
        "upstream");
  }

  /** The attempt's transport failed: before the answer started, it is retried; after, the stream ends in error. */
  void failed(Attempt a, Throwable err) {
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
    if (x.isCommitted()) {
      x.relay.midStreamFailure(a, "upstream " + a.endpoint().id() + " failed: " + describe(err));
    } else {
      retry(a, cause, status, describe(err));
    }
  }

  /** The upstream answered with an error status. */
  void upstreamStatus(Attempt a, int status, byte[] errorBody, @Nullable String retryAfter) {
    String message = ApiErrors.messageOf(errorBody);
    // The request itself is at fault: another endpoint would refuse it too.
    if (status == 400 || status == 413 || status == 422) {
      synchronized (x) {
        if (a != x.attempt || x.finished) {
          return;
        }
      }
      a.decision.reportFailed();
      a.end(Integer.toString(status));
      x.release();
      x.respondError(status, message, null, null, "client_error", a.endpoint());
      return;
    }
    if (retryAfter != null) {
      try {
        long seconds = Long.parseLong(retryAfter.trim());
        synchronized (x) {
          x.lastRetryAfter = Duration.ofSeconds(Math.max(1, Math.min(seconds, 3600)));
        }
      } catch (NumberFormatException e) {
        // an HTTP date: keep the default
      }
    }
    // A continuation of a response no server holds is the client's 404, once every endpoint has said so; any other
    // error status is the upstream's fault (502), except overload, which the client may retry.
    boolean unknownResponse = status == 404 && ResponseChains.previousResponseId(x.req()) != null;
    retry(a, "status_" + status, status == 429 || status == 503 || unknownResponse ? status : 502,
        "HTTP " + status + ": " + message);
  }

  /**
   * A transport failure as clients may read it: its kind and a short message. Jetty puts its whole connection state
   * into some messages, which is neither readable nor the client's business.
   */
  static String describe(Throwable t) {
    String message = t.getMessage();
    String kind = t.getClass().getSimpleName();
    return message == null || message.isBlank() ? kind
        : message.length() > 160 || message.contains("@") ? kind : kind + ": " + message;
  }

  static Throwable unwrap(Throwable t) {
    Throwable x = t;
    while ((x instanceof java.util.concurrent.CompletionException
        || x instanceof java.util.concurrent.ExecutionException) && x.getCause() != null) {
      x = x.getCause();
    }
    return x;
  }
}
