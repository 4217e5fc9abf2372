package dev.kinference.routing;

import dev.kinference.endpoint.Fleet;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * No endpoint serves the requested model (HTTP 404), or the policy's selection matched none (HTTP 503).
 */
public final class NoEndpointException extends RoutingException {

  private static final long serialVersionUID = 1L;

  private final String model;
  private final boolean unknownModel;

  NoEndpointException(String model, boolean unknownModel, List<String> knownModels) {
    super(unknownModel
        ? "no endpoint serves model '" + model + "'" + (knownModels.isEmpty() ? "" : "; served: " + knownModels)
        : "no endpoint is available for model '" + model + "'");
    this.model = model;
    this.unknownModel = unknownModel;
  }

  /**
   * The exception for a request that found no endpoint: {@code unknownModel} when no member serves {@code model}
   * (the message lists the models {@code snap} serves), otherwise its endpoints were all excluded.
   */
  static NoEndpointException none(String model, boolean unknownModel, Fleet.Snapshot snap) {
    return unknownModel
        ? new NoEndpointException(model, true, new ArrayList<>(new TreeSet<>(snap.byModel().keySet())))
        : new NoEndpointException(model, false, List.of());
  }

  public String model() {
    return model;
  }

  /** True when no endpoint serves the model at all, false when its endpoints are excluded or gone. */
  public boolean unknownModel() {
    return unknownModel;
  }

  @Override
  public int httpStatus() {
    return unknownModel ? 404 : 503;
  }
}
