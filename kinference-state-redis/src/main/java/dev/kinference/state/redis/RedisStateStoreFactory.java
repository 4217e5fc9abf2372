package dev.kinference.state.redis;

import dev.kinference.policy.limits.RateLimitStore;
import dev.kinference.policy.limits.StateStoreFactory;
import java.util.Set;

/** Opens {@code redis://}, {@code rediss://} and {@code redis-sentinel://} URIs as {@link RedisStateStore}s. */
public final class RedisStateStoreFactory implements StateStoreFactory {

  /** Public for {@link java.util.ServiceLoader}. */
  public RedisStateStoreFactory() {}

  @Override
  public String name() {
    return "redis";
  }

  @Override
  public Set<String> schemes() {
    return Set.of("redis", "rediss", "redis-sentinel", "valkey", "valkeys");
  }

  @Override
  public RateLimitStore open(StateStoreSettings settings) {
    String uri = settings.uri().toString();
    // Valkey speaks the same protocol; Lettuce knows the redis schemes
    if (uri.startsWith("valkey")) {
      uri = "redis" + uri.substring("valkey".length());
    }
    return RedisStateStore.builder(uri).password(settings.password()).timeout(settings.timeout()).build();
  }
}
