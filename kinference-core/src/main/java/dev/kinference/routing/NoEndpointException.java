package dev.kinference.routing;

import java.util.List;

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
