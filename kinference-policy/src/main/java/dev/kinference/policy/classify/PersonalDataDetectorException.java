package dev.kinference.policy.classify;

import java.util.Objects;

/**
 * A detector could not analyse a request (a remote analyzer failed, answered too late or answered nonsense). The
 * request is treated as personal: it stays local.
 */
public final class PersonalDataDetectorException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final String detector;
  private final String reason;

  /**
   * @param detector the detector's name
   * @param reason a short label for metrics: {@code timeout}, {@code status}, {@code unavailable}, {@code
   *     malformed}, {@code error}
   * @param message what happened, without any of the analysed text or internal addresses (it may reach clients in
   *     a refusal)
   */
  public PersonalDataDetectorException(String detector, String reason, String message,
      @org.jspecify.annotations.Nullable Throwable cause) {
    super(detector + ": " + message, cause);
    this.detector = Objects.requireNonNull(detector, "detector");
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  public String detector() {
    return detector;
  }

  public String reason() {
    return reason;
  }
}
