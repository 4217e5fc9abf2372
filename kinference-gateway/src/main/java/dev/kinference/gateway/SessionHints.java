package dev.kinference.gateway;

import dev.kinference.request.InferenceRequest;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The session a request belongs to, from its headers, over the body's hints that {@code RequestParser} already read.
 * Precedence, strongest first, and why:
 *
 * <ol>
 *   <li>{@code x-kinference-session}: the gateway's own header, set on purpose by whoever deploys it.</li>
 *   <li>The session headers coding agents send, each naming exactly one conversation:
 *       {@code x-claude-code-session-id} (Claude Code), {@code session_id} and {@code conversation_id} (OpenAI Codex
 *       CLI, codex-rs), {@code x-session-id} (a common generic name).</li>
 *   <li>{@code previous_response_id} (body, Responses API): the conversation this request continues, named by the
 *       response it follows; every turn names a new one, so the key is the conversation's first response
 *       ({@link ResponseChains}). Exactly one conversation, like the agents' headers, but a body field, below them.
 *       (Where the request goes when the upstream stored that response is not a hint: see {@link ResponseChains}.)
 *       </li>
 *   <li>{@code prompt_cache_key} (body): the client's own grouping of requests that share a prefix.</li>
 *   <li>{@code metadata.user_id} (Anthropic), {@code safety_identifier} (OpenAI): one end user, who may have several
 *       conversations at once; coarser, so weaker.</li>
 *   <li>{@code user} (OpenAI, deprecated in favour of the two above, and often a constant per application).</li>
 * </ol>
 *
 * <p>The hint that won is {@link InferenceRequest#sessionSource()}, and the router's decision notes name it. The
 * gateway and the endpoint picker ({@code kinference epp}) both apply it. Stateless and thread-safe.
 */
public final class SessionHints {

  /** Agents' session headers, in precedence order. */
  static final List<String> AGENT_HEADERS =
      List.of("x-claude-code-session-id", "session_id", "conversation_id", "x-session-id");

  static final String GATEWAY_HEADER = "x-kinference-session";

  /** The longest header value taken as a session key. */
  static final int MAX_LENGTH = 512;

  private SessionHints() {
  }

  /**
   * Sets the session from the headers when one is given; otherwise keeps the body's hint, a
   * {@code previous_response_id} resolved to its conversation's first response by {@code chains}.
   */
  static void apply(Function<String, @Nullable String> headers, InferenceRequest parsed, InferenceRequest.Builder b,
      ResponseChains chains) {
    chains.resolveSession(parsed, b);
    apply(headers, b);
  }

  /** Sets the session from the headers when one is given; otherwise leaves the body's hint, if any. */
  public static void apply(Function<String, @Nullable String> headers, InferenceRequest.Builder b) {
    String v = usable(headers.apply(GATEWAY_HEADER));
    if (v != null) {
      b.session(v, GATEWAY_HEADER);
      return;
    }
    for (String h : AGENT_HEADERS) {
      v = usable(headers.apply(h));
      if (v != null) {
        b.session(v, h);
        return;
      }
    }
  }

  private static @Nullable String usable(@Nullable String v) {
    if (v == null) {
      return null;
    }
    String t = v.trim();
    return t.isEmpty() || t.length() > MAX_LENGTH ? null : t;
  }
}
