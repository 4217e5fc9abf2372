package dev.kinference.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.endpoint.Health;
import dev.kinference.policy.PolicyEngine;
import dev.kinference.policy.PolicyVerdict;
import dev.kinference.request.InferenceRequest;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link Router#rankByLoad}'s ranking for pooling requests, on a fleet without a router around it. */
class LoadRankingTest {

  private static final String MODEL = "bge-m3";

  private final Fleet fleet = Fleet.create();

  private EndpointState state(String id) {
    return Objects.requireNonNull(fleet.get(id));
  }

  private void fleetOf(int local) {
    List<Endpoint> endpoints = new java.util.ArrayList<>();
    for (int i = 0; i < local; i++) {
      endpoints.add(Endpoint.of("e" + i, "http://127.0.0.1:" + (8000 + i), MODEL));
    }
    endpoints.add(new Endpoint("cloud", URI.create("https://api.example.com"), MODEL,
        Map.of(Endpoint.EXTERNAL_LABEL, "true")));
    fleet.setEndpoints(endpoints);
  }

  private Router.PoolingChoice rank(InferenceRequest request, PolicyEngine policy) {
    return LoadRanking.rank(request, fleet.snapshot(), policy, new SplittableRandom(3));
  }

  private Router.PoolingChoice rank(InferenceRequest request) {
    return LoadRanking.rank(request, fleet.snapshot(), null, new SplittableRandom(3));
  }

  private static InferenceRequest embed(String model) {
    return InferenceRequest.builder(model).user("a passage to embed").build();
  }

  @Test
  void leastLoadedComeFirstUnhealthyLastAndDrainingOrExternalNever() {
    fleetOf(5);
    state("e0").onDispatched(10);
    state("e0").onDispatched(10);
    state("e2").onDispatched(10);
    state("e3").updateHealth(Health.UNHEALTHY, "connection refused");
    state("e4").updateHealth(Health.DRAINING, "left the fleet");

    Router.PoolingChoice choice = rank(embed(MODEL));

    assertThat(choice.ranked()).extracting(EndpointState::id).containsExactly("e1", "e2", "e0", "e3");
    assertThat(choice.request().model()).isEqualTo(MODEL);
    assertThat(choice.trace()).isEmpty();
  }

  @Test
  void anUnknownModelIsA404NamingTheServedModelsAndAModelWithNoEndpointLeftA503() {
    fleetOf(1);
    assertThatThrownBy(() -> rank(embed("no-such-model")))
        .isInstanceOfSatisfying(NoEndpointException.class, e -> {
          assertThat(e.httpStatus()).isEqualTo(404);
          assertThat(e.unknownModel()).isTrue();
          assertThat(e.getMessage()).contains("no-such-model").contains(MODEL);
        });

    state("e0").updateHealth(Health.DRAINING, "left the fleet");
    assertThatThrownBy(() -> rank(embed(MODEL)))
        .isInstanceOfSatisfying(NoEndpointException.class, e -> {
          assertThat(e.httpStatus()).isEqualTo(503);
          assertThat(e.unknownModel()).isFalse();
        });
  }

  @Test
  void thePolicyMayRejectOrRewriteTheRequestAndSelectTheEndpoints() {
    fleetOf(3);
    PolicyEngine policy = new PolicyEngine() {
      @Override
      public String name() {
        return "test-policy";
      }

      @Override
      public PolicyVerdict evaluate(InferenceRequest request, Fleet.Snapshot snapshot) {
        return switch (request.model()) {
          case "forbidden" -> new PolicyVerdict.Reject(403, "tenant may not embed", null, List.of("p/deny"));
          case "alias" -> new PolicyVerdict.Proceed(request.withModel(MODEL), e -> !e.id().equals("e0"),
              List.of(), false, List.of("p/alias"));
          default -> PolicyVerdict.Proceed.unchanged(request);
        };
      }
    };

    assertThatThrownBy(() -> rank(embed("forbidden"), policy))
        .isInstanceOfSatisfying(RequestRejectedException.class, e -> {
          assertThat(e.httpStatus()).isEqualTo(403);
          assertThat(e.trace()).containsExactly("p/deny");
        });
    Router.PoolingChoice aliased = rank(embed("alias"), policy);
    assertThat(aliased.request().model()).isEqualTo(MODEL);
    assertThat(aliased.ranked()).extracting(EndpointState::id)
        .as("the policy's selection, local endpoints only").containsExactlyInAnyOrder("e1", "e2");
    assertThat(aliased.trace()).containsExactly("p/alias");
  }
}
