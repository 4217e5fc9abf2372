package dev.kinference.jmh;

import dev.kinference.policy.engine.Admission;
import dev.kinference.policy.engine.Governance;
import dev.kinference.policy.limits.RateLimitStore;
import dev.kinference.testkit.RedisServer;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the state store adds to each request: one request's governance path, {@link Governance#reserve} then {@link
 * Admission#settle}, over the in-process store and over Redis on loopback (a real {@code redis-server} started for
 * the trial, with the Helm chart's persistence: {@code appendfsync everysec}). The tenant has a sliding token
 * window, a concurrency limit and a daily budget (see {@link StateStoreFixture#CONFIG}), so each reservation touches
 * all three counters and each settlement writes the usage totals; with Redis that is one Lua script each.
 *
 * <p>{@code oneThread} is one request at a time (the added latency of a request); {@code fourThreads} is four
 * requests at once from four threads on this 2-core machine, over the same tenant's keys and, for Redis, the store's
 * one multiplexed connection (contention). {@code bench/state-store-bench.sh} runs this and {@link
 * StateStoreRoundTrips}; docs/PERFORMANCE.md has the figures.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@State(Scope.Benchmark)
public class GovernanceStateStoreBenchmark {

  /** {@code memory} (this process) or {@code redis} (a redis-server on 127.0.0.1). */
  @Param({"memory", "redis"})
  public String store = "memory";

  /** The Redis server's {@code appendfsync}: {@code everysec} as the Helm chart, {@code always} as the test kit. */
  @Param({"everysec"})
  public String appendfsync = "everysec";

  private @Nullable RedisServer redis;
  private RateLimitStore rateLimitStore;
  private Governance governance;

  @Setup(Level.Trial)
  public void start() {
    String uri = "memory";
    if (store.equals("redis")) {
      RedisServer server = RedisServer.start();
      redis = server;
      StateStoreFixture.appendfsync(server.port(), appendfsync);
      uri = server.uri();
    } else if (!store.equals("memory")) {
      throw new IllegalArgumentException("store must be memory or redis: " + store);
    }
    rateLimitStore = StateStoreFixture.open(uri);
    governance = StateStoreFixture.governance(rateLimitStore);
    // loads the Lua scripts and connects before the warm-up
    StateStoreFixture.request(governance);
  }

  @TearDown(Level.Trial)
  public void stop() {
    rateLimitStore.close();
    RedisServer server = redis;
    if (server != null) {
      server.close();
    }
  }

  /** One request at a time. */
  @Benchmark
  @Threads(1)
  public Admission oneThread() {
    return StateStoreFixture.request(governance);
  }

  /** Four requests at once, one per thread, of the same tenant. */
  @Benchmark
  @Threads(4)
  public Admission fourThreads() {
    return StateStoreFixture.request(governance);
  }
}
