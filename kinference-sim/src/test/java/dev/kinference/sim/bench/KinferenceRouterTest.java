package dev.kinference.sim.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.cache.KvEvent;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.PrefixKeys;
import dev.kinference.sim.engine.EngineStepEvents;
import dev.kinference.sim.engine.RequestListener;
import dev.kinference.sim.engine.SimEngine;
import dev.kinference.sim.engine.SimRequest;
import dev.kinference.sim.fleet.FleetRouter;
import dev.kinference.sim.workload.ClientRequest;
import dev.kinference.sim.workload.Prompts;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KinferenceRouterTest {

  @Test
  void theRouterMapsEngineHashesToItsOwnKeysAndRoutesToTheServerHoldingThePrefix() throws Exception {
    FakeView view = new FakeView(3);
    KinferenceRouter router = new KinferenceRouter(true, 1);
    router.start(view);
    ClientRequest warm = FakeView.request("warm", Prompts.text(1, 200) + " first question");
    SimEngine engine = view.engine(2);
    List<EngineStepEvents> batches = new ArrayList<>();
    SimEngine withEvents = SimEngine.builder().gpu(engine.config().gpu()).model(engine.config().model())
        .servedModelName("m").numGpuBlocks(100).kvEventListener(batches::add).build();
    withEvents.submit(SimRequest.of("warm", warm.promptTokens(), 1), RequestListener.NONE);
    while (withEvents.nextEventNanos() != Long.MAX_VALUE) {
      withEvents.advanceTo(withEvents.nextEventNanos());
    }
    PrefixKeys keys = warm.request().tokenize(Prompts.TOKENIZER).keys(16);
    Set<Long> routerKeys = new HashSet<>();
    for (int b = 0; b < keys.size(); b++) {
      routerKeys.add(keys.key(b));
    }
    Set<Long> engineHashes = new HashSet<>();
    for (EngineStepEvents batch : batches) {
      for (KvEvent e : batch.events()) {
        if (e instanceof KvEvent.BlockStored s) {
          Arrays.stream(s.blockHashes()).forEach(engineHashes::add);
        }
      }
      router.onKvEvents(2, batch, 0);
    }
    assertThat(engineHashes).isNotEmpty().doesNotContainAnyElementsOf(routerKeys);

    PreciseCacheIndex index = (PreciseCacheIndex) router.router().cacheIndex();
    EndpointState server2 = Objects.requireNonNull(router.router().fleet().get("sim-2"));
    assertThat(index.blockCount(server2)).isEqualTo(engineHashes.size());
    for (long h : engineHashes) {
      assertThat(routerKeys).contains(index.routerKey(server2, h));
    }

    ClientRequest next = FakeView.request("next", Prompts.text(1, 200) + " second question");
    FleetRouter.Decision d = router.route(next, 0);
    assertThat(d.server()).isEqualTo(2);
  }
}
