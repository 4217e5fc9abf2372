package dev.kinference.epp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.endpoint.Health;
import dev.kinference.gateway.GovernanceGuard;
import dev.kinference.gateway.PolicyGateway;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.policy.engine.Governance;
import dev.kinference.sim.server.SimulatedServer;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The picker with what PolicyGateway assembles from a configuration: an alias resolved (the forwarded body names the
 * pool's model), a tenant from its API key or from the trusted tenant header, its concurrency limit refused as 429
 * while a request is in flight, and released when the response ends.
 */
class EndpointPickerGovernanceTest {

  static final String MODEL = "Qwen/Qwen3-8B";
  static final String KEY = "sk-team-demo";

  static final class Call implements StreamObserver<ProcessingResponse> {
    final LinkedBlockingQueue<ProcessingResponse> responses = new LinkedBlockingQueue<>();
    final CountDownLatch done = new CountDownLatch(1);
    final StreamObserver<ProcessingRequest> requests;

    Call(ManagedChannel channel) {
      requests = ExternalProcessorGrpc.newStub(channel).process(this);
    }

    ProcessingResponse next() throws InterruptedException {
      ProcessingResponse r = responses.poll(10, TimeUnit.SECONDS);
      assertThat(r).isNotNull();
      return r;
    }

    void end() throws InterruptedException {
      requests.onCompleted();
      assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    }

    @Override
    public void onNext(ProcessingResponse value) {
      responses.add(value);
    }

    @Override
    public void onError(Throwable t) {
      done.countDown();
    }

    @Override
    public void onCompleted() {
      done.countDown();
    }
  }

  static String chat() {
    return "{\"model\":\"chat\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
  }

  @Test
  void aliasesTenantsAndLimitsApplyAsInTheGateway() throws Exception {
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
          ---
          apiVersion: kinference.dev/v1alpha1
          kind: ModelAlias
          metadata: {name: chat}
          spec:
            model: chat
            targets:
              - pool: local
          ---
          apiVersion: kinference.dev/v1alpha1
          kind: Tenant
          metadata: {name: team}
          spec:
            apiKeys: [{sha256: %s}]
            models: ["*"]
            limits:
              concurrentRequests: 1
          """.formatted(MODEL, sim.baseUri(), Governance.sha256Hex(KEY));
      try (PolicyGateway pg = PolicyGateway.builder().config(PolicyLoader.load(yaml, "c.yaml").orThrow()).build()) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (pg.fleet().endpoints().stream().anyMatch(e -> e.health() != Health.HEALTHY)
            && System.nanoTime() < deadline) {
          Thread.sleep(20);
        }
        EndpointPicker picker = EndpointPicker.builder().router(pg.router())
            .guard(GovernanceGuard.of(pg.governance())).tenantHeader("x-tenant").build();
        try (EppServer server = EppServer.start(picker, "127.0.0.1", 0)) {
          ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
          try {
            Call first = new Call(channel);
            first.requests.onNext(EndpointPickerTest.headers("/v1/chat/completions", null, null, false,
                "authorization", "Bearer " + KEY));
            first.requests.onNext(EndpointPickerTest.body(chat(), true));
            ProcessingResponse h = first.next();
            assertThat(h.hasImmediateResponse()).as("%s", h).isFalse();
            assertThat(EndpointPickerTest.destination(
                h.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersList()))
                .isEqualTo("127.0.0.1:" + sim.port());
            String forwarded = first.next().getRequestBody().getResponse().getBodyMutation().getStreamedResponse()
                .getBody().toStringUtf8();
            assertThat(forwarded).as("the alias resolved in the forwarded body").contains("\"model\":\"" + MODEL + "\"");

            // The tenant's one concurrent request is in flight: a second, named by the trusted header, is refused.
            Call second = new Call(channel);
            second.requests.onNext(EndpointPickerTest.headers("/v1/chat/completions", null, null, false,
                "x-tenant", "team"));
            second.requests.onNext(EndpointPickerTest.body(chat(), true));
            ProcessingResponse refused = second.next();
            assertThat(refused.hasImmediateResponse()).as("%s", refused).isTrue();
            assertThat(refused.getImmediateResponse().getStatus().getCodeValue()).isEqualTo(429);
            assertThat(refused.getImmediateResponse().getBody().toStringUtf8()).contains("\"error\"");
            second.end();

            first.requests.onNext(EndpointPickerTest.responseHeaders(200, "application/json"));
            first.next();
            first.requests.onNext(EndpointPickerTest.responseBody(
                "{\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2}}", true));
            first.next();
            first.end();

            Call third = new Call(channel);
            third.requests.onNext(EndpointPickerTest.headers("/v1/chat/completions", null, null, false,
                "x-tenant", "team"));
            third.requests.onNext(EndpointPickerTest.body(chat(), true));
            assertThat(third.next().hasRequestHeaders()).as("released when the response ended").isTrue();
            third.next();
            third.end();
          } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
          }
        }
      }
    }
  }
}
