package dev.kinference.sim.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.sim.engine.EngineMetrics;
import dev.kinference.sim.engine.EngineStepEvents;
import dev.kinference.sim.fleet.FleetRouter;
import dev.kinference.sim.fleet.FleetView;
import dev.kinference.sim.workload.ClientRequest;
import dev.kinference.sim.workload.Prompts;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.Test;

class ReplicatedRouterTest {

  /** Sends everything to one server and counts what it is told. */
  private static final class Counting implements FleetRouter {
    final int target;
    int routed;
    int scrapes;
    int started;

    Counting(int target) {
      this.target = target;
    }

    @Override
    public String name() {
      return "counting";
    }

    @Override
    public void start(FleetView fleet) {
      started++;
    }

    @Override
    public Decision route(ClientRequest request, long nowNanos) {
      routed++;
      return () -> target;
    }

    @Override
    public void onMetrics(int server, EngineMetrics metrics, long takenAtNanos, long nowNanos) {
      scrapes++;
    }

    @Override
    public void onKvEvents(int server, EngineStepEvents batch, long nowNanos) {
      scrapes++;
    }
  }

  @Test
  void eachRequestGoesToOneReplicaAndEveryReplicaHearsEveryScrape() {
    List<Counting> made = new ArrayList<>();
    ReplicatedRouter r = new ReplicatedRouter(3, i -> {
      Counting c = new Counting(i);
      made.add(c);
      return c;
    }, 7, 50_000_000L, false);
    FakeView view = new FakeView(3);
    r.start(view);
    for (int i = 0; i < 300; i++) {
      r.route(FakeView.request("r" + i, "prompt " + i), i * 1_000_000L);
    }
    r.onMetrics(0, view.engine(0).metrics(), 0, 0);
    assertThat(made).allSatisfy(c -> {
      assertThat(c.started).isEqualTo(1);
      assertThat(c.scrapes).isEqualTo(1);
      assertThat(c.routed).as("a random third each").isBetween(70, 130);
    });
    assertThat(made.stream().mapToInt(c -> c.routed).sum()).isEqualTo(300);
    assertThat(r.name()).isEqualTo("counting");
  }

  @Test
  void herdingIsTheBusiestServersShareOfEachWindow() {
    // one replica per server, each always picking its own: sends spread evenly, share 1/3
    ReplicatedRouter spread = new ReplicatedRouter(3, Counting::new, 1, 50_000_000L, false);
    spread.start(new FakeView(3));
    // one replica that always picks server 0: share 1
    ReplicatedRouter herd = new ReplicatedRouter(1, i -> new Counting(0), 1, 50_000_000L, false);
    herd.start(new FakeView(3));
    for (int i = 0; i < 3000; i++) {
      spread.route(FakeView.request("s" + i, "p"), i * 1_000_000L);
      herd.route(FakeView.request("h" + i, "p"), i * 1_000_000L);
    }
    Herding spreadHerding = Objects.requireNonNull(spread.herding());
    assertThat(spreadHerding.meanShare()).isCloseTo(0.45, within(0.1));
    assertThat(Objects.requireNonNull(herd.herding()).meanShare()).isEqualTo(1.0);
    assertThat(Objects.requireNonNull(herd.herding()).worstShare()).isEqualTo(1.0);
  }

  @Test
  void windowsWithFewerSendsThanServersAreNotCounted() {
    Herding h = new Herding(4, 10);
    h.onSend(0, 0);
    h.onSend(0, 5);
    h.onSend(1, 100);
    assertThat(h.meanShare()).isZero();
  }

  @Test
  void replicasMustBePositive() {
    assertThatThrownBy(() -> new ReplicatedRouter(0, Counting::new, 1, 1, false))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1");
  }

  @Test
  void replicasSharingTheirAccountsEachCountTheOthersPendingPrefillAtAScrapeAndIndependentOnesDoNot() {
    FakeView view = new FakeView(3);
    ReplicatedRouter shared = (ReplicatedRouter) Routers.create(Routers.replicatedSharing(Routers.OURS, 3), 7);
    ReplicatedRouter independent = (ReplicatedRouter) Routers.create(Routers.replicated(Routers.OURS, 3), 7);
    for (ReplicatedRouter r : List.of(shared, independent)) {
      r.start(view);
      for (int i = 0; i < 60; i++) {
        r.route(FakeView.request("r" + i, Prompts.text(i, 100) + " question " + i), 0);
      }
      for (int server = 0; server < 3; server++) {
        r.onMetrics(server, view.engine(server).metrics(), 0, 0);
      }
    }
    for (int server = 0; server < 3; server++) {
      long total = 0;
      for (int i = 0; i < 3; i++) {
        total += ((KinferenceRouter) shared.replica(i)).state(server).pendingPrefillTokens();
      }
      assertThat(total).as("server %d got prompts", server).isPositive();
      for (int i = 0; i < 3; i++) {
        EndpointState own = ((KinferenceRouter) shared.replica(i)).state(server);
        assertThat(own.peerPendingPrefillTokens()).isEqualTo(total - own.pendingPrefillTokens());
        assertThat(own.estimatedPendingPrefillTokens()).isGreaterThanOrEqualTo(total);
        assertThat(((KinferenceRouter) independent.replica(i)).state(server).peerPendingPrefillTokens()).isZero();
      }
    }
  }

  @Test
  void onlyOurReplicasShareTheirAccounts() {
    assertThatThrownBy(() -> Routers.create("random@3s", 1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("share their in-flight accounts");
    assertThat(Routers.describe("kinference-precise@3s")).contains("3 replicas sharing their in-flight accounts");
  }
}
