package dev.kinference.vllm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.cache.HybridCacheIndex;
import dev.kinference.sim.engine.ModelSpec;
import dev.kinference.sim.server.KvEventFormat;
import dev.kinference.sim.server.SimulatedServer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A simulated server of a hybrid model (gpt-oss-20b's shape: a full-attention KV-cache group 0 and a 128-token
 * sliding-window group 1) publishes each group's events over real ZeroMQ in vLLM's format; the real subscriber and
 * {@link HybridCacheIndex} then predict exactly the cached tokens the server reports for every probe, although the
 * full-attention group alone would often predict more (the window group freed or lost the blocks a hit needs).
 */
class HybridSimulatedServerTest {

  static final String MODEL = "sim-gpt-oss";

  @ParameterizedTest
  @EnumSource(KvEventFormat.class)
  void theRouterCountsTheHitTheHybridEngineUses(KvEventFormat format) throws Exception {
    try (HybridProbeRun run = new HybridProbeRun(MODEL, 16, 80, 40, 60)) {
      HybridProbeRun.Outcome outcome = run.run(SimulatedServer.builder(MODEL).timeScale(50).kvEventFormat(format)
          .maxModelLen(1024).engine(e -> e.model(ModelSpec.GPT_OSS_20B).blockSize(16).numGpuBlocks(200)).start(), 60);
      assertThat(outcome.hits()).as("probes with cached tokens").isPositive();
      assertThat(outcome.cutShort()).as("probes whose full-attention hit the window group cut short").isPositive();
      assertThat(outcome.stats().resyncs()).isZero();
    }
  }
}
