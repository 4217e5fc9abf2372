package dev.kinference.epp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.gateway.CallerIdentity;
import dev.kinference.gateway.PolicyGateway;
import dev.kinference.gateway.RequestGuard;
import dev.kinference.gateway.RequestReservation;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.sim.server.SimulatedServer;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** A request naming an InferenceObjective in x-gateway-inference-objective gets the objective's priority. */
class EndpointPickerObjectiveTest {

  static final String MODEL = EndpointPickerTest.MODEL;

  /** Everyone, unlimited; remembers the priority of each admitted request. */
  static final class Recording implements RequestGuard {
    final LinkedBlockingQueue<Integer> priorities = new LinkedBlockingQueue<>();

    @Override
    public CallerIdentity authenticate(ApiFormat format, Function<String, @Nullable String> header) {
      return RequestGuard.OPEN.authenticate(format, header);
    }

    @Override
    public RequestReservation admit(CallerIdentity caller, InferenceRequest request) {
      priorities.add(request.priority());
      return RequestGuard.OPEN.admit(caller, request);
    }

    @Override
    public @Nullable List<String> models(CallerIdentity caller) {
      return RequestGuard.OPEN.models(caller);
    }
  }

  @Test
  void theObjectivesPriorityIsTheRequests() throws Exception {
    try (SimulatedServer sim = SimulatedServer.builder(MODEL).name("sim").start()) {
      String yaml = """
          apiVersion: kinference.dev/v1alpha1
          kind: InferencePool
          metadata: {name: local}
          spec:
            model: %s
            endpoints:
              - id: sim
                url: %s
          """.formatted(MODEL, sim.baseUri());
      Map<String, Integer> objectives = Map.of("chat", 7, "batch", -3, "huge", 5000);
      Recording guard = new Recording();
      try (PolicyGateway pg = PolicyGateway.builder().config(PolicyLoader.load(yaml, "c.yaml").orThrow()).build()) {
        EndpointPicker picker = EndpointPicker.builder().router(pg.router()).guard(guard)
            .objectives(objectives::get).build();
        try (EppServer server = EppServer.start(picker, "127.0.0.1", 0)) {
          ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
          try {
            assertThat(priority(channel, guard, "chat")).isEqualTo(7);
            assertThat(priority(channel, guard, "batch")).isEqualTo(-3);
            assertThat(priority(channel, guard, "huge")).as("kept within the priority range").isEqualTo(1000);
            assertThat(priority(channel, guard, "unknown")).as("the default").isZero();
            assertThat(priority(channel, guard, null)).isZero();
          } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
          }
        }
      }
    }
  }

  private static int priority(ManagedChannel channel, Recording guard, @Nullable String objective)
      throws InterruptedException {
    EndpointPickerGovernanceTest.Call call = new EndpointPickerGovernanceTest.Call(channel);
    String[] extra = objective == null ? new String[0]
        : new String[] {EndpointPicker.OBJECTIVE_HEADER, objective};
    call.requests.onNext(EndpointPickerTest.headers("/v1/chat/completions", null, null, false, extra));
    call.requests.onNext(EndpointPickerTest.body(
        "{\"model\":\"" + MODEL + "\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", true));
    ProcessingResponse first = call.next();
    assertThat(first.hasImmediateResponse()).as("%s", first).isFalse();
    Integer p = guard.priorities.poll(10, TimeUnit.SECONDS);
    assertThat(p).isNotNull();
    call.requests.onCompleted();
    return p;
  }
}
