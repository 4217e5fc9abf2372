package dev.kinference.k8s;

import java.io.IOException;
import java.io.Serial;

/** The API server answered with an error status (or an ERROR watch event carrying one). */
final class ApiException extends IOException {

  @Serial
  private static final long serialVersionUID = 1L;

  private final int status;

  ApiException(int status, String message) {
    super(message);
    this.status = status;
  }

  /** The HTTP status, such as 410 (Gone: the resource version is too old, list again) or 403. */
  int status() {
    return status;
  }

  boolean isGone() {
    return status == 410;
  }
}
