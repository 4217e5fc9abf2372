package dev.kinference.endpoint;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The prefill rate learned for one model on one kind of hardware, shared by every endpoint serving it there
 * ({@link Endpoint#HARDWARE_LABEL}): the rate is a property of the model and the GPU, not of one server's load, and
 * learning it per server let queueing noise pull identical servers apart until the router avoided whichever had
 * learned worst. An exponentially weighted mean in log space, so one outlier moves it by a bounded factor.
 *
 * <p>Thread-safety: read and updated by any thread without locking; racing updates lose a sample at worst.
 */
final class PrefillRate {

  /** Per sample, in log space: a pool of servers supplies many samples, so each weighs little. */
  private static final double LEARNING_RATE = 0.05;

  private volatile double tokensPerSecond;
  private final AtomicLong samples = new AtomicLong();

  double tokensPerSecond(double coldStart) {
    double r = tokensPerSecond;
    return r > 0 ? r : coldStart;
  }

  long samples() {
    return samples.get();
  }

  void learn(double observedTokensPerSecond, double coldStart) {
    if (!(observedTokensPerSecond > 0) || Double.isInfinite(observedTokensPerSecond)) {
      return;
    }
    double current = tokensPerSecond(coldStart);
    double clamped = Math.max(current / 4, Math.min(current * 4, observedTokensPerSecond));
    tokensPerSecond = Math.exp(Math.log(current) + LEARNING_RATE * (Math.log(clamped) - Math.log(current)));
    samples.incrementAndGet();
  }

  /** Endpoints with the same key share a rate: the model and the hardware label (when there is one). */
  static String poolKey(Endpoint endpoint) {
    String hardware = endpoint.label(Endpoint.HARDWARE_LABEL);
    return hardware == null ? endpoint.model() : endpoint.model() + '\u0000' + hardware;
  }
}
