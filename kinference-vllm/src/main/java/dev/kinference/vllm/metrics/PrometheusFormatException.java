package dev.kinference.vllm.metrics;

/** A metrics page is not valid Prometheus text; the message names the line and the reason. */
public final class PrometheusFormatException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public PrometheusFormatException(String message) {
    super(message);
  }
}
