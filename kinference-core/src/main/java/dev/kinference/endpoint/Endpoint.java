package dev.kinference.endpoint;

import java.net.URI;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * One inference server: a vLLM instance (or one data-parallel rank of it), or an external provider.
 *
 * @param id stable and unique within a fleet, such as {@code 10.0.0.7:8000} or a pod name
 * @param uri the base URI requests are sent to, such as {@code http://10.0.0.7:8000}
 * @param model the served model name; requests route only to endpoints serving their model
 * @param labels free-form attributes (pool, zone, KV-event address and topic, {@code kinference.dev/external})
 */
public record Endpoint(String id, URI uri, String model, Map<String, String> labels) {

  /** Label marking an external (cloud) provider endpoint, which has no KV cache the router can see. */
  public static final String EXTERNAL_LABEL = "kinference.dev/external";

  /**
   * Label naming the hardware an endpoint runs on (such as {@code 2xH100}). Endpoints serving the same model on the
   * same hardware (or all of a model's endpoints, when none has the label) share one learned prefill rate.
   */
  public static final String HARDWARE_LABEL = "kinference.dev/hardware";

  public Endpoint {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(uri, "uri");
    Objects.requireNonNull(model, "model");
    if (id.isBlank()) {
      throw new IllegalArgumentException("endpoint id must not be blank");
    }
    if (model.isBlank()) {
      throw new IllegalArgumentException("endpoint model must not be blank (endpoint " + id + ")");
    }
    labels = java.util.Collections.unmodifiableMap(new TreeMap<>(labels));
  }

  /** An endpoint with no labels. */
  public static Endpoint of(String id, String uri, String model) {
    return new Endpoint(id, URI.create(uri), model, Map.of());
  }

  /** The label's value, or null. */
  public @Nullable String label(String key) {
    return labels.get(key);
  }

  /** This endpoint with one more label. */
  public Endpoint withLabel(String key, String value) {
    Map<String, String> more = new TreeMap<>(labels);
    more.put(key, value);
    return new Endpoint(id, uri, model, more);
  }

  /** Whether this is an external provider rather than a server in the fleet. */
  public boolean isExternal() {
    return "true".equals(labels.get(EXTERNAL_LABEL));
  }
}
