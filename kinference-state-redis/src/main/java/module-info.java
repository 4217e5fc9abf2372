/**
 * Kinference's shared governance state on a Redis-protocol server (Redis 7, Valkey 8): rate limits, concurrency
 * leases, budgets and usage totals that hold across gateway replicas and restarts. Start with {@link
 * dev.kinference.state.redis.RedisStateStore}; {@code StateStores.open("redis://...")} finds it by its URI scheme.
 */
module dev.kinference.state.redis {
  requires transitive dev.kinference.policy;
  requires static transitive org.jspecify;
  requires org.slf4j;
  requires lettuce.core;

  exports dev.kinference.state.redis;

  provides dev.kinference.policy.limits.StateStoreFactory with
      dev.kinference.state.redis.RedisStateStoreFactory;
}
