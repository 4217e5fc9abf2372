package dev.kinference.cloud;

import dev.kinference.routing.Usage;
import java.util.Objects;

/**
 * A provider's answer, in the client's format.
 *
 * @param status the provider's HTTP status
 * @param body the response body (JSON) (an error body in the client's format when the status is not 2xx); for a stream,
 *     empty: the events went to the caller as they arrived
 * @param usage the tokens the provider reported
 * @param cost the cost of that usage at the provider's prices
 */
public record ProviderResponse(int status, String body, Usage usage, double cost) {

  public ProviderResponse {
    Objects.requireNonNull(body, "body");
    Objects.requireNonNull(usage, "usage");
  }

  public boolean isSuccess() {
    return status >= 200 && status < 300;
  }
}
