package dev.kinference.vllm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.cache.HybridCacheIndex;
import dev.kinference.sim.engine.ModelSpec;
import dev.kinference.sim.server.KvEventFormat;
import dev.kinference.sim.server.SimulatedServer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A simulated server of {@code Qwen3.5-27B-FP8-mamba-align} (the default model's shape as vLLM's
 * {@code mamba_cache_mode} align keeps it: three Mamba KV-cache groups 0-2 of its linear-attention layers and the
 * full-attention group 3, 784-token blocks) publishes each group's events over real ZeroMQ in vLLM's format; the
 * real subscriber and {@link HybridCacheIndex} then predict exactly the cached tokens the server reports for every
 * probe, although the full-attention group alone would often predict more (no Mamba state is cached at the block
 * where its hit ends).
 */
class MambaSimulatedServerTest {

  static final String MODEL = "sim-qwen3.5";

  @ParameterizedTest
  @EnumSource(KvEventFormat.class)
  void theRouterCountsTheHitTheHybridEngineUses(KvEventFormat format) throws Exception {
    try (HybridProbeRun run = new HybridProbeRun(MODEL, 784, 500, 250, 700)) {
      HybridProbeRun.Outcome outcome = run.run(SimulatedServer.builder(MODEL).timeScale(50).kvEventFormat(format)
          .maxModelLen(16_384)
          .engine(e -> e.model(ModelSpec.QWEN3_5_27B_FP8_MAMBA_ALIGN).numGpuBlocks(120).maxNumBatchedTokens(2048))
          .start(), 60);
      assertThat(outcome.hits()).as("probes with cached tokens").isPositive();
      assertThat(outcome.cutShort()).as("probes whose full-attention hit the Mamba groups cut short").isPositive();
      assertThat(outcome.stats().skippedEvents()).as("Mamba groups' events, kept apart").isPositive();
      // one clear only: the first events name Mamba group 0, indexed until full-attention group 3 turns up
      assertThat(outcome.stats().resyncs()).isEqualTo(1);
    }
  }
}
