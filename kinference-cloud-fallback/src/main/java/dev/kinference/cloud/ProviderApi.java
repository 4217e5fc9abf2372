package dev.kinference.cloud;

import dev.kinference.plugin.Plugin;
import dev.kinference.request.ApiFormat;
import java.net.URI;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * A wire dialect an external provider speaks: which request formats it accepts, where each is sent, and how a
 * request is authenticated. Found with {@link java.util.ServiceLoader} by {@link #name()}; {@code openai} and
 * {@code anthropic} are built in, and an adapter for another OpenAI-compatible variant (other paths or key header)
 * can be added as a plugin. Implementations must be stateless and thread-safe.
 */
public interface ProviderApi extends Plugin {

  /** The format requests are translated to when the client's format is not {@linkplain #accepts accepted}. */
  ApiFormat primaryFormat();

  /** Whether the provider accepts requests of this format as they are. */
  boolean accepts(ApiFormat format);

  /** The URI a request of {@code format} (one it accepts) is posted to, given the provider's base URI. */
  URI uri(URI baseUri, ApiFormat format);

  /** Adds the authentication header for {@code apiKey} (null: the provider needs none) and fixed headers. */
  void headers(@Nullable String apiKey, BiConsumer<String, String> header);

  /** The format to send a request of {@code clientFormat} in. */
  default ApiFormat upstreamFormat(ApiFormat clientFormat) {
    return accepts(clientFormat) ? clientFormat : primaryFormat();
  }

  /** Resolves {@code path} against a base URI whose path may or may not end with a slash. */
  static URI resolve(URI baseUri, String path) {
    String base = baseUri.toString();
    return URI.create(base.endsWith("/") ? base + path : base + "/" + path);
  }
}
