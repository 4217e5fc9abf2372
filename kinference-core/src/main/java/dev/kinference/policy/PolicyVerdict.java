package dev.kinference.policy;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.request.InferenceRequest;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/** What a {@link PolicyEngine} decided. Every verdict carries the trace of the rules that matched, in order. */
public sealed interface PolicyVerdict permits PolicyVerdict.Proceed, PolicyVerdict.Reject {

  /** The rules that matched, in evaluation order, each as {@code policy/rule: what it did}. */
  List<String> trace();

  /**
   * Route the request.
   *
   * @param request the request to route: the original, or rewritten (model, priority, LoRA)
   * @param candidates which fleet members may serve it; null means every member serving the request's model that
   *     is not an external provider
   * @param fallbackEndpointIds fleet members (typically external providers) to try, in order, after the
   *     candidates are exhausted
   * @param preferFallbacks whether to try the fallbacks first (local capacity is saturated)
   */
  record Proceed(InferenceRequest request, @Nullable Predicate<EndpointState> candidates,
      List<String> fallbackEndpointIds, boolean preferFallbacks, List<String> trace) implements PolicyVerdict {

    public Proceed {
      Objects.requireNonNull(request, "request");
      fallbackEndpointIds = List.copyOf(fallbackEndpointIds);
      trace = List.copyOf(trace);
    }

    /** Proceed unchanged. */
    public static Proceed unchanged(InferenceRequest request) {
      return new Proceed(request, null, List.of(), false, List.of());
    }
  }

  /**
   * Refuse the request.
   *
   * @param httpStatus 4xx or 5xx
   * @param reason shown to the caller
   * @param retryAfter for a {@code Retry-After} header, or null
   */
  record Reject(int httpStatus, String reason, @Nullable Duration retryAfter, List<String> trace)
      implements PolicyVerdict {

    public Reject {
      Objects.requireNonNull(reason, "reason");
      if (httpStatus < 400 || httpStatus > 599) {
        throw new IllegalArgumentException("a rejection status must be 4xx or 5xx: " + httpStatus);
      }
      trace = List.copyOf(trace);
    }
  }
}
