package dev.kinference.cli;

import dev.kinference.policy.limits.RateLimitStore;
import dev.kinference.policy.limits.ResilientStateStore;
import dev.kinference.policy.limits.StateStores;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * The state-store options every command that governs requests takes ({@code serve}, {@code epp}), as a picocli
 * mixin: where rate limits, budgets and usage totals are kept, what requests see while a shared store is
 * unreachable, and how many replicas share it.
 */
public final class StateStoreOptions {

  @Option(names = "--state-store", paramLabel = "URI", defaultValue = "${env:KINFERENCE_STATE_STORE:-memory}",
      description = "Where rate limits, budgets and usage totals are kept: memory (this process; with several "
          + "replicas each enforces the whole limit) or redis://HOST:PORT[/DB] (rediss:// for TLS; Redis 7 or "
          + "Valkey 8), shared by every replica. Password in the URI or KINFERENCE_STATE_STORE_PASSWORD. Env "
          + "KINFERENCE_STATE_STORE (default: memory).")
  String stateStore = "memory";

  @Option(names = "--state-store-failure", paramLabel = "MODE",
      defaultValue = "${env:KINFERENCE_STATE_STORE_FAILURE:-open}",
      description = "While a shared store is unreachable: open (each replica enforces its share of every limit, "
          + "limit / --replicas, and reconciles when the store answers again) or closed (503 with Retry-After). Env "
          + "KINFERENCE_STATE_STORE_FAILURE (default: ${DEFAULT-VALUE}).")
  String stateStoreFailure = "open";

  @Option(names = "--state-store-timeout", paramLabel = "DURATION", defaultValue = "500ms",
      description = "The longest one call to a shared store may take before it counts as unreachable (default: "
          + "${DEFAULT-VALUE}).")
  String stateStoreTimeout = "500ms";

  @Option(names = "--replicas", paramLabel = "N", defaultValue = "${env:KINFERENCE_REPLICAS:-1}",
      description = "How many replicas share the traffic: each one's share of the limits while a shared store is "
          + "unreachable, and with an approximate cache index the routing profile that makes replicas agree where "
          + "conversations go (prefix-rendezvous); with a precise index and a shared store the replicas share the "
          + "prompt tokens each has in the servers' prefill at every scrape. Env KINFERENCE_REPLICAS, which the Helm "
          + "chart sets (default: "
          + "${DEFAULT-VALUE}).")
  int replicas = 1;

  @Option(names = "--no-prefill-sharing",
      description = "With a precise index, a shared store and --replicas above 1, do not share the prompt tokens in "
          + "the servers' prefill with the other replicas: each routes on its own account (to measure what sharing "
          + "gives, bench/replicas-bench.sh).")
  boolean noPrefillSharing;

  /** The failure mode asked for. */
  public ResilientStateStore.FailureMode failureMode() {
    return switch (stateStoreFailure.trim().toLowerCase(Locale.ROOT)) {
      case "open" -> ResilientStateStore.FailureMode.OPEN;
      case "closed" -> ResilientStateStore.FailureMode.CLOSED;
      default -> throw new IllegalArgumentException("--state-store-failure must be open or closed, not "
          + stateStoreFailure);
    };
  }

  /**
   * The store asked for: memory, or a shared one wrapped in its failure mode.
   *
   * @throws IllegalArgumentException for a malformed URI, an unknown scheme, a bad failure mode or replica count
   */
  public RateLimitStore open() {
    if (replicas < 1) {
      throw new IllegalArgumentException("--replicas must be at least 1, not " + replicas);
    }
    ResilientStateStore.FailureMode mode = failureMode();
    RateLimitStore opened = StateStores.open(stateStore, System.getenv("KINFERENCE_STATE_STORE_PASSWORD"),
        ServeCommand.duration(stateStoreTimeout, "--state-store-timeout"));
    int shareOf = replicas;
    return opened.shared() ? ResilientStateStore.builder(opened).failureMode(mode).replicas(() -> shareOf).build()
        : opened;
  }

  /** The line a command prints about its store, without credentials. */
  public String describe(RateLimitStore store) {
    return store.shared() ? StateStores.redact(stateStore.strip()) + " (shared; while unreachable: "
        + failureMode().cliName() + ")" : "memory (limits, budgets and usage are this process's own)";
  }

  /** Whether replicas with a precise index and a shared store share their pending prefill (not --no-prefill-sharing). */
  public boolean prefillSharing() {
    return !noPrefillSharing;
  }

  /** How many replicas of this process share the traffic (--replicas, KINFERENCE_REPLICAS). */
  public int replicas() {
    return replicas;
  }
}
