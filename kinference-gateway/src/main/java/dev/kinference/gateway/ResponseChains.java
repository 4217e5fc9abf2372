package dev.kinference.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.kinference.cloud.translate.StreamTranslator;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.NoEndpointException;
import dev.kinference.routing.RequestRejectedException;
import dev.kinference.routing.Router;
import dev.kinference.routing.RoutingDecision;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Where each stored Responses API response lives, for the requests that continue it with
 * {@code previous_response_id}. A server that stores responses (vLLM with {@code VLLM_ENABLE_RESPONSES_API_STORE=1})
 * holds the conversation, and no other server can continue it, so such a request is routed only to the endpoint that
 * answered the response it names (503 with {@code Retry-After} while that endpoint cannot take requests). And since
 * every turn names a new id, the conversation's session key (see {@link SessionHints}) is its first response's id,
 * the same for every turn: the router's decision notes say {@code session from previous_response_id}.
 *
 * <p>Only responses the server says it stored are remembered ({@code "store": false} in the answer, as vLLM answers
 * when its store is off, is not), and only those of local servers: a cloud provider's answer is translated and its
 * id made up. An id this gateway never saw (another replica's, or from before a restart) is routed like any request;
 * a server that lacks it answers 404, and the gateway tries the alternates. The links are kept in this process,
 * bounded in number and idle time (Caffeine, as the router's session affinity). Thread-safe.
 */
final class ResponseChains {

  /** A stored response: the endpoint holding it, and its conversation's first response. */
  record Link(String endpointId, String root) {}

  static final String SOURCE = "previous_response_id";

  private final Cache<String, Link> links;

  ResponseChains(long maxResponses, Duration idleExpiry) {
    this.links = Caffeine.newBuilder().maximumSize(maxResponses).expireAfterAccess(idleExpiry).build();
  }

  /** The defaults: a million responses, each forgotten after a day without a request continuing it. */
  static ResponseChains defaults() {
    return new ResponseChains(1_000_000, Duration.ofDays(1));
  }

  /** The link of a stored response, or null if this gateway does not know it. */
  @Nullable Link link(String responseId) {
    return links.getIfPresent(responseId);
  }

  /**
   * When the request's session came from {@code previous_response_id} (no header overrode it), makes the session
   * key the conversation's first response, if known.
   */
  void resolveSession(InferenceRequest parsed, InferenceRequest.Builder b) {
    String previous = parsed.sessionId();
    if (!SOURCE.equals(parsed.sessionSource()) || previous == null) {
      return;
    }
    Link l = links.getIfPresent(previous);
    if (l != null) {
      b.session(l.root(), SOURCE);
    }
  }

  /** Routes the request; one continuing a known stored response goes only to the endpoint holding it. */
  RoutingDecision route(Router router, InferenceRequest r) {
    String previous = previousResponseId(r);
    Link l = previous == null ? null : links.getIfPresent(previous);
    if (l == null) {
      return router.route(r);
    }
    String holder = l.endpointId();
    try {
      return router.route(r, e -> e.id().equals(holder));
    } catch (NoEndpointException e) {
      throw new RequestRejectedException(503, "previous_response_id '" + previous + "' is held by endpoint "
          + holder + ", which cannot take requests now; only it can continue that conversation",
          Duration.ofSeconds(1), List.of());
    }
  }

  /** A complete answer from {@code endpoint} in {@code upstream}'s format: remembers its id if it was stored. */
  void answered(InferenceRequest r, Endpoint endpoint, ApiFormat upstream, ObjectNode body) {
    if (body.path("store").asBoolean(true)) {
      remember(r, endpoint, upstream, body.path("id").asText(""));
    }
  }

  /** A stream that ended well: remembers its response's id if it was stored. */
  void streamed(InferenceRequest r, Endpoint endpoint, ApiFormat upstream, StreamTranslator t) {
    String id = t.responseId();
    if (id != null) {
      remember(r, endpoint, upstream, id);
    }
  }

  private void remember(InferenceRequest r, Endpoint endpoint, ApiFormat upstream, String responseId) {
    if (responseId.isEmpty() || endpoint.isExternal() || upstream != ApiFormat.OPENAI_RESPONSES
        || r.format() != ApiFormat.OPENAI_RESPONSES) {
      return;
    }
    String previous = previousResponseId(r);
    String root = responseId;
    if (previous != null) {
      Link p = links.getIfPresent(previous);
      root = p != null ? p.root() : previous;
    }
    links.put(responseId, new Link(endpoint.id(), root));
  }

  static @Nullable String previousResponseId(InferenceRequest r) {
    if (r.format() != ApiFormat.OPENAI_RESPONSES) {
      return null;
    }
    ObjectNode body = r.body();
    JsonNode v = body == null ? null : body.get(SOURCE);
    return v != null && v.isTextual() && !v.asText().isBlank() ? v.asText() : null;
  }
}
