package dev.kinference.cloud;

import dev.kinference.request.ApiFormat;
import java.net.URI;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The Anthropic messages API: {@code x-api-key} and {@code anthropic-version: 2023-06-01}. The base URI excludes
 * the version, as in the Anthropic SDKs: {@code https://api.anthropic.com}, to which {@code v1/messages} is
 * appended.
 */
public final class AnthropicApi implements ProviderApi {

  /** For {@link java.util.ServiceLoader}. */
  public AnthropicApi() {}

  /** The API version sent with every request. */
  public static final String VERSION = "2023-06-01";

  @Override
  public String name() {
    return "anthropic";
  }

  @Override
  public ApiFormat primaryFormat() {
    return ApiFormat.ANTHROPIC_MESSAGES;
  }

  @Override
  public boolean accepts(ApiFormat format) {
    return format == ApiFormat.ANTHROPIC_MESSAGES;
  }

  @Override
  public URI uri(URI baseUri, ApiFormat format) {
    return ProviderApi.resolve(baseUri, "v1/messages");
  }

  @Override
  public void headers(@Nullable String apiKey, BiConsumer<String, String> header) {
    if (apiKey != null) {
      header.accept("x-api-key", apiKey);
    }
    header.accept("anthropic-version", VERSION);
  }
}
