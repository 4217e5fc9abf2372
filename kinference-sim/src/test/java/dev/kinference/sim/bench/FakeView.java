package dev.kinference.sim.bench;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.request.InferenceRequest;
import dev.kinference.sim.engine.GpuSpec;
import dev.kinference.sim.engine.ModelSpec;
import dev.kinference.sim.engine.SimEngine;
import dev.kinference.sim.fleet.FleetView;
import dev.kinference.sim.workload.ClientRequest;
import dev.kinference.sim.workload.Prompts;
import java.util.ArrayList;
import java.util.List;

/** A fleet view of idle engines, for unit tests of routers. */
final class FakeView implements FleetView {
  private final List<Endpoint> endpoints = new ArrayList<>();
  private final List<SimEngine> engines = new ArrayList<>();

  FakeView(int n) {
    for (int i = 0; i < n; i++) {
      endpoints.add(Endpoint.of("sim-" + i, "http://sim-" + i + ".invalid", "m"));
      engines.add(SimEngine.builder().gpu(GpuSpec.H100).model(ModelSpec.QWEN3_8B).servedModelName("m")
          .numGpuBlocks(100).build());
    }
  }

  static ClientRequest request(String id, String text) {
    InferenceRequest r = InferenceRequest.builder("m").user(text).maxTokens(5).build();
    return new ClientRequest(id, r, Prompts.tokens(r), text, 5, null, "test", null, null);
  }

  @Override
  public List<Endpoint> endpoints() {
    return endpoints;
  }

  @Override
  public String model() {
    return "m";
  }

  @Override
  public SimEngine engine(int i) {
    return engines.get(i);
  }

  @Override
  public long nowNanos() {
    return 0;
  }
}
