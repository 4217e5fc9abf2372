package dev.kinference.cloud.translate;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.request.ApiFormat;
import java.util.Objects;

/**
 * Translation between the OpenAI chat and Anthropic messages formats, in both directions, and from the OpenAI
 * Responses API to either (its answers back), for requests, complete responses and event streams. Stateless and thread-safe; stream translators are per stream.
 *
 * <p>Mapping, in short:
 * <ul>
 *   <li>system / developer messages and Anthropic's top-level {@code system}; user text and images (data URLs and
 *       base64 sources, URLs); assistant text; {@code tool_calls} and {@code tool_use} blocks (arguments as a JSON
 *       text versus an object); {@code tool} messages and {@code tool_result} blocks (which must open a user
 *       turn); consecutive same-role turns merged for Anthropic;</li>
 *   <li>{@code max_tokens} / {@code max_completion_tokens} (Anthropic requires one: a default is supplied),
 *       {@code stop} / {@code stop_sequences}, {@code temperature} (clamped to Anthropic's 0..1), {@code top_p},
 *       {@code tools}, {@code tool_choice} (auto, none, required/any, a named tool) and
 *       {@code parallel_tool_calls} / {@code disable_parallel_tool_use}, {@code user} /
 *       {@code metadata.user_id};</li>
 *   <li>finish reasons: stop / end_turn or stop_sequence, length / max_tokens, tool_calls / tool_use,
 *       content_filter / refusal;</li>
 *   <li>usage: OpenAI's {@code prompt_tokens} include cached tokens, Anthropic's {@code input_tokens} exclude cache
 *       reads; both are converted so the totals agree;</li>
 *   <li>reasoning: OpenAI-compatible {@code reasoning_content} and Anthropic {@code thinking} blocks map to each
 *       other in responses; thinking sent back in a request is dropped.</li>
 * </ul>
 * Refused ({@link UnsupportedTranslationException}): {@code n} > 1, log probabilities, a non-text
 * {@code response_format}, audio, documents, server tools, unknown parameters. Dropped, as they only tune sampling
 * or bookkeeping: {@link RequestTranslation#OPENAI_DROPPED} and {@link RequestTranslation#ANTHROPIC_DROPPED}
 * (penalties, seed, logit bias, top_k towards OpenAI, extended-thinking settings).
 * OpenAI {@code /v1/completions} requests are not translated.
 *
 * <p>Responses API requests are translated to Chat Completions (and on to Anthropic messages): {@code instructions}
 * and {@code input} items (messages, images by URL, {@code function_call} and {@code function_call_output},
 * reasoning items dropped), function {@code tools} and {@code tool_choice}, {@code max_output_tokens},
 * {@code text.format} (JSON formats for chat providers only), {@code reasoning.effort} (chat only). Refused, named:
 * {@code previous_response_id}, {@code conversation} and stored {@code prompt}s (the provider does not hold them),
 * built-in tools, images by file id, files, {@code background}, {@code top_logprobs}, unknown parameters. Dropped:
 * {@link ResponsesTranslation#DROPPED} ({@code store} among them: the provider's answer is not stored, so its id
 * cannot be continued). Answers and streams come back as a Responses {@code response} and its typed events, with
 * message and {@code function_call} items and usage; streamed reasoning is not carried.
 */
public final class Translation {

  /** The output budget sent to Anthropic when an OpenAI request gives none (Anthropic requires one). */
  public static final int DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

  private Translation() {}

  /** Whether a request in format {@code from} can be served by an upstream speaking {@code to}. */
  public static boolean canTranslate(ApiFormat from, ApiFormat to) {
    return from == to
        || (from == ApiFormat.OPENAI_CHAT && to == ApiFormat.ANTHROPIC_MESSAGES)
        || (from == ApiFormat.ANTHROPIC_MESSAGES && to == ApiFormat.OPENAI_CHAT)
        || (from == ApiFormat.OPENAI_RESPONSES && (to == ApiFormat.OPENAI_CHAT || to == ApiFormat.ANTHROPIC_MESSAGES));
  }

  /**
   * The request body for an upstream speaking {@code to}, for model {@code upstreamModel}. The input is not
   * modified. Within one format only the model is replaced (and, for OpenAI streams, usage requested).
   *
   * @param defaultMaxTokens the output budget to send to Anthropic when the OpenAI request gives none
   * @throws UnsupportedTranslationException if the request uses a feature {@code to} cannot express
   */
  public static ObjectNode request(ObjectNode body, ApiFormat from, ApiFormat to, String upstreamModel,
      int defaultMaxTokens) throws UnsupportedTranslationException {
    Objects.requireNonNull(upstreamModel, "upstreamModel");
    if (from == to) {
      // Shallow: only top-level fields change, and the input's nested nodes are never modified.
      ObjectNode copy = Json.object();
      copy.setAll(body);
      copy.put("model", upstreamModel);
      // Responses streams always end with their usage (response.completed): nothing to ask for
      boolean chunked = to == ApiFormat.OPENAI_CHAT || to == ApiFormat.OPENAI_COMPLETIONS;
      if (chunked && copy.path("stream").asBoolean(false)) {
        ObjectNode options = Json.object();
        if (body.get("stream_options") instanceof ObjectNode old) {
          options.setAll(old);
        }
        options.put("include_usage", true);
        copy.set("stream_options", options);
      }
      return copy;
    }
    if (from == ApiFormat.OPENAI_CHAT && to == ApiFormat.ANTHROPIC_MESSAGES) {
      return RequestTranslation.openAiChatToAnthropic(body, upstreamModel, defaultMaxTokens);
    }
    if (from == ApiFormat.ANTHROPIC_MESSAGES && to == ApiFormat.OPENAI_CHAT) {
      return RequestTranslation.anthropicToOpenAiChat(body, upstreamModel);
    }
    if (from == ApiFormat.OPENAI_RESPONSES && to == ApiFormat.OPENAI_CHAT) {
      return ResponsesTranslation.requestToChat(body, upstreamModel, to);
    }
    if (from == ApiFormat.OPENAI_RESPONSES && to == ApiFormat.ANTHROPIC_MESSAGES) {
      return RequestTranslation.openAiChatToAnthropic(ResponsesTranslation.requestToChat(body, upstreamModel, to),
          upstreamModel, defaultMaxTokens);
    }
    throw new UnsupportedTranslationException(from, to, "", "no translation between these formats");
  }

  /**
   * A complete response body from an upstream speaking {@code from}, in the client's format {@code to}.
   *
   * @throws IllegalArgumentException if there is no translation between the formats
   */
  public static ObjectNode response(ObjectNode body, ApiFormat from, ApiFormat to) {
    if (from == to) {
      return body;
    }
    if (from == ApiFormat.OPENAI_CHAT && to == ApiFormat.ANTHROPIC_MESSAGES) {
      return ResponseTranslation.openAiChatToAnthropic(body);
    }
    if (from == ApiFormat.ANTHROPIC_MESSAGES && to == ApiFormat.OPENAI_CHAT) {
      return ResponseTranslation.anthropicToOpenAiChat(body, System.currentTimeMillis() / 1000);
    }
    if (from == ApiFormat.OPENAI_CHAT && to == ApiFormat.OPENAI_RESPONSES) {
      return ResponsesTranslation.responseFromChat(body);
    }
    if (from == ApiFormat.ANTHROPIC_MESSAGES && to == ApiFormat.OPENAI_RESPONSES) {
      return ResponsesTranslation.responseFromChat(
          ResponseTranslation.anthropicToOpenAiChat(body, System.currentTimeMillis() / 1000));
    }
    throw new IllegalArgumentException("no response translation from " + from + " to " + to);
  }

  /**
   * A translator for one streamed response from an upstream speaking {@code upstream} to a client speaking
   * {@code client}.
   *
   * @param clientWantsUsage whether the OpenAI client asked for the usage chunk ({@code stream_options.
   *     include_usage}); the gateway always asks upstream, and drops the chunk when the client did not
   * @param requestModel the model name to report if the upstream does not say
   */
  public static StreamTranslator stream(ApiFormat upstream, ApiFormat client, boolean clientWantsUsage,
      String requestModel) {
    if (upstream == client) {
      return switch (client) {
        case ANTHROPIC_MESSAGES -> new Streams.AnthropicPassthrough(requestModel);
        case OPENAI_RESPONSES -> new ResponsesStreams.Passthrough(requestModel);
        case OPENAI_CHAT, OPENAI_COMPLETIONS -> new Streams.OpenAiPassthrough(clientWantsUsage, requestModel);
      };
    }
    long now = System.currentTimeMillis() / 1000;
    if (upstream == ApiFormat.OPENAI_CHAT && client == ApiFormat.OPENAI_RESPONSES) {
      return new ResponsesStreams.FromChat(now, requestModel);
    }
    if (upstream == ApiFormat.ANTHROPIC_MESSAGES && client == ApiFormat.OPENAI_RESPONSES) {
      return new ResponsesStreams.Chained(new Streams.AnthropicToOpenAi(true, now, requestModel),
          new ResponsesStreams.FromChat(now, requestModel));
    }
    if (upstream == ApiFormat.OPENAI_CHAT && client == ApiFormat.ANTHROPIC_MESSAGES) {
      return new Streams.OpenAiToAnthropic(requestModel);
    }
    if (upstream == ApiFormat.ANTHROPIC_MESSAGES && client == ApiFormat.OPENAI_CHAT) {
      return new Streams.AnthropicToOpenAi(clientWantsUsage, System.currentTimeMillis() / 1000, requestModel);
    }
    throw new IllegalArgumentException("no stream translation from " + upstream + " to " + client);
  }

  /** Whether an OpenAI request body asks for the usage chunk of a stream. */
  public static boolean wantsStreamUsage(ObjectNode body) {
    return body.path("stream_options").path("include_usage").asBoolean(false);
  }
}
