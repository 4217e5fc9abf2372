package dev.kinference.policy.limits;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Gateway replicas' published pending prefill tokens per endpoint, in one process's memory: what {@link
 * InMemoryRateLimitStore} answers {@link RateLimitStore#sharePendingPrefillTokens} with, so that replicas in one JVM
 * (tests, embedded gateways) share as they would through Redis. Thread-safe: per-endpoint concurrent maps, no
 * global lock.
 */
final class PendingPrefillShares {

  /** One replica's share at one endpoint, counted until {@code expiresAtNanos}. */
  private record Share(long tokens, long expiresAtNanos) {}

  private final ConcurrentHashMap<String, ConcurrentHashMap<String, Share>> byEndpoint = new ConcurrentHashMap<>();
  private final LongSupplier nanoClock;

  PendingPrefillShares(LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
  }

  /** 0 for each endpoint of {@code own}: no other replica shares. */
  static Map<String, Long> none(Map<String, Long> own) {
    Map<String, Long> out = new HashMap<>(own.size() * 2);
    own.keySet().forEach(id -> out.put(id, 0L));
    return out;
  }

  /** Validates the arguments every store's implementation takes. */
  static void check(String replica, Map<String, Long> own, Duration ttl) {
    if (replica.isEmpty()) {
      throw new IllegalArgumentException("replica id must not be empty");
    }
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive: " + ttl);
    }
    own.forEach((id, tokens) -> {
      if (tokens < 0) {
        throw new IllegalArgumentException("pending prefill tokens at " + id + " must not be negative: " + tokens);
      }
    });
  }

  Map<String, Long> share(String replica, Map<String, Long> own, Duration ttl) {
    check(replica, own, ttl);
    long now = nanoClock.getAsLong();
    long expires = now + ttl.toNanos();
    Map<String, Long> out = new HashMap<>(own.size() * 2);
    for (Map.Entry<String, Long> e : own.entrySet()) {
      ConcurrentHashMap<String, Share> shares = byEndpoint.computeIfAbsent(e.getKey(),
          k -> new ConcurrentHashMap<>());
      shares.put(replica, new Share(e.getValue(), expires));
      long others = 0;
      for (Map.Entry<String, Share> s : shares.entrySet()) {
        if (s.getValue().expiresAtNanos() - now <= 0) {
          shares.remove(s.getKey(), s.getValue());
        } else if (!s.getKey().equals(replica)) {
          others += s.getValue().tokens();
        }
      }
      out.put(e.getKey(), others);
    }
    return out;
  }
}
