package dev.kinference.vllm.kvevents;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waits for a condition that another thread makes true; fails after a generous bound (no timing assertions). */
final class Await {

  private Await() {}

  static void until(String what, BooleanSupplier condition) {
    until(what, condition, () -> "");
  }

  static void until(String what, BooleanSupplier condition, Supplier<String> state) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what + " " + state.get());
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted", e);
      }
    }
  }
}
