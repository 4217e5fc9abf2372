package dev.kinference.routing;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/** The policy engine refused the request: the status, reason and rule trace come from the policy. */
public final class RequestRejectedException extends RoutingException {

  private static final long serialVersionUID = 1L;

  private final int status;
  private final transient @Nullable Duration retryAfter;
  private final transient List<String> trace;

  public RequestRejectedException(int status, String reason, @Nullable Duration retryAfter, List<String> trace) {
    super(reason);
    if (status < 400 || status > 599) {
      throw new IllegalArgumentException("a rejection status must be 4xx or 5xx: " + status);
    }
    this.status = status;
    this.retryAfter = retryAfter;
    this.trace = List.copyOf(trace);
  }

  @Override
  public int httpStatus() {
    return status;
  }

  /** When to retry, for a {@code Retry-After} header. */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }

  /** The rules that matched, in evaluation order. */
  public List<String> trace() {
    return trace;
  }
}
