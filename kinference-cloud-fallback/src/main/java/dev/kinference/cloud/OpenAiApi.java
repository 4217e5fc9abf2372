package dev.kinference.cloud;

import dev.kinference.request.ApiFormat;
import java.net.URI;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The OpenAI API and compatible ones (vLLM, most hosted open-model services): chat completions and completions,
 * {@code Authorization: Bearer}. The base URI includes the version, as in the OpenAI SDKs:
 * {@code https://api.openai.com/v1}, to which {@code chat/completions} is appended.
 */
public final class OpenAiApi implements ProviderApi {

  /** For {@link java.util.ServiceLoader}. */
  public OpenAiApi() {}

  @Override
  public String name() {
    return "openai";
  }

  @Override
  public ApiFormat primaryFormat() {
    return ApiFormat.OPENAI_CHAT;
  }

  @Override
  public boolean accepts(ApiFormat format) {
    return format == ApiFormat.OPENAI_CHAT || format == ApiFormat.OPENAI_COMPLETIONS;
  }

  @Override
  public URI uri(URI baseUri, ApiFormat format) {
    return ProviderApi.resolve(baseUri, format == ApiFormat.OPENAI_COMPLETIONS ? "completions" : "chat/completions");
  }

  @Override
  public void headers(@Nullable String apiKey, BiConsumer<String, String> header) {
    if (apiKey != null) {
      header.accept("Authorization", "Bearer " + apiKey);
    }
  }
}
