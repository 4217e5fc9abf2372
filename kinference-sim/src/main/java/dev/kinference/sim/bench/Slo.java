package dev.kinference.sim.bench;

import dev.kinference.sim.fleet.CompletedRequest;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * A latency objective a request meets or misses: it finished, its first token came within {@code ttft}, and its
 * mean time per output token after the first was at most {@code tpot} (unchecked when zero).
 */
public record Slo(Duration ttft, Duration tpot) {

  public Slo {
    Objects.requireNonNull(ttft, "ttft");
    Objects.requireNonNull(tpot, "tpot");
    if (ttft.isNegative() || ttft.isZero() || tpot.isNegative()) {
      throw new IllegalArgumentException("invalid SLO");
    }
  }

  public boolean isMetBy(CompletedRequest r) {
    if (!r.finished() || r.ttftNanos() < 0 || r.ttftNanos() > ttft.toNanos()) {
      return false;
    }
    if (tpot.isZero()) {
      return true;
    }
    int outputs = r.outcome() == null ? 0 : r.outcome().completionTokens();
    if (outputs <= 1) {
      return true;
    }
    double perToken = (double) (r.finishNanos() - r.firstTokenNanos()) / (outputs - 1);
    return perToken <= tpot.toNanos();
  }

  public String describe() {
    return String.format(Locale.ROOT, "TTFT <= %.2f s%s", ttft.toMillis() / 1000.0,
        tpot.isZero() ? "" : String.format(Locale.ROOT, " and TPOT <= %d ms", tpot.toMillis()));
  }
}
