package dev.kinference.gateway;

import dev.kinference.cloud.CloudProvider;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.request.ApiFormat;
import org.jspecify.annotations.Nullable;

/**
 * The values of the OpenTelemetry GenAI semantic conventions' attributes as the gateway sets them, shared by its
 * metrics and its spans: {@code gen_ai.operation.name}, {@code gen_ai.provider.name}, {@code gen_ai.response.model}.
 * Stateless.
 */
final class GenAiNames {

  /** The provider of a request that reached no endpoint (refused, or failed before routing). */
  static final String NO_PROVIDER = "kinference";

  private GenAiNames() {}

  /** {@code chat} for the chat and messages APIs, {@code text_completion} for the legacy completions API. */
  static String operation(ApiFormat format) {
    return format == ApiFormat.OPENAI_COMPLETIONS ? "text_completion" : "chat";
  }

  /** {@code embeddings} (a well-known value), else the path's last segment: rerank, score, tokenize, detokenize. */
  static String poolingOperation(String path) {
    if (path.endsWith("/embeddings")) {
      return "embeddings";
    }
    return path.substring(path.lastIndexOf('/') + 1);
  }

  /**
   * {@code vllm} for a server of the fleet; for an external provider, the API dialect it speaks ({@code openai},
   * {@code anthropic}: the conventions' well-known values); {@value #NO_PROVIDER} when no endpoint was reached.
   */
  static String provider(@Nullable Endpoint endpoint) {
    if (endpoint == null) {
      return NO_PROVIDER;
    }
    if (!endpoint.isExternal()) {
      return "vllm";
    }
    String api = endpoint.label(CloudProvider.API_LABEL);
    return api == null ? "openai" : api;
  }

  /** The model the endpoint serves (for a provider, the name sent to it), or empty when no endpoint was reached. */
  static String responseModel(@Nullable Endpoint endpoint) {
    if (endpoint == null) {
      return "";
    }
    String providerModel = endpoint.label(CloudProvider.PROVIDER_MODEL_LABEL);
    return providerModel != null ? providerModel : endpoint.model();
  }
}
