package dev.kinference.cloud;

import dev.kinference.request.ApiFormat;
import java.net.http.HttpRequest;
import java.util.Objects;

/**
 * A request ready to send to an external provider.
 *
 * @param httpRequest the POST, with the body in {@code upstreamFormat}, the key and the provider's headers
 * @param upstreamFormat the format the provider answers in; translate the response back with
 *     {@link dev.kinference.cloud.translate.Translation}
 * @param provider the provider
 * @param model the provider's model
 */
public record ProviderRequest(HttpRequest httpRequest, ApiFormat upstreamFormat, CloudProvider provider,
    CloudProvider.Model model) {

  public ProviderRequest {
    Objects.requireNonNull(httpRequest, "httpRequest");
    Objects.requireNonNull(upstreamFormat, "upstreamFormat");
    Objects.requireNonNull(provider, "provider");
    Objects.requireNonNull(model, "model");
  }
}
