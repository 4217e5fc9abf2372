package dev.kinference.sim.bench;

import dev.kinference.sim.fleet.FleetRouter;
import dev.kinference.sim.fleet.FleetView;
import dev.kinference.sim.workload.ClientRequest;
import java.util.SplittableRandom;

/** The plain load balancers: random (a Kubernetes Service), round robin, least request, power of two choices. */
final class SimpleRouters {

  private SimpleRouters() {}

  /** kube-proxy: a uniformly random pod for each request. */
  static final class RandomRouter implements FleetRouter {
    private final SplittableRandom random;
    private int servers;

    RandomRouter(long seed) {
      this.random = new SplittableRandom(seed);
    }

    @Override
    public String name() {
      return "random";
    }

    @Override
    public void start(FleetView fleet) {
      servers = fleet.size();
    }

    @Override
    public Decision route(ClientRequest request, long nowNanos) {
      int s = random.nextInt(servers);
      return () -> s;
    }
  }

  /** Round robin. */
  static final class RoundRobinRouter implements FleetRouter {
    private int servers;
    private int next;

    @Override
    public String name() {
      return "round-robin";
    }

    @Override
    public void start(FleetView fleet) {
      servers = fleet.size();
    }

    @Override
    public Decision route(ClientRequest request, long nowNanos) {
      int s = next;
      next = (next + 1) % servers;
      return () -> s;
    }
  }

  /** nginx {@code least_conn}: fewest requests in flight, ties at random. */
  static final class LeastRequestRouter implements FleetRouter {
    private final SplittableRandom random;
    private LoadCounts load = new LoadCounts(0);

    LeastRequestRouter(long seed) {
      this.random = new SplittableRandom(seed);
    }

    @Override
    public String name() {
      return "least-request";
    }

    @Override
    public void start(FleetView fleet) {
      load = new LoadCounts(fleet.size());
    }

    @Override
    public Decision route(ClientRequest request, long nowNanos) {
      int[] q = load.inFlight;
      int best = -1;
      int ties = 0;
      for (int i = 0; i < q.length; i++) {
        if (best < 0 || q[i] < q[best]) {
          best = i;
          ties = 1;
        } else if (q[i] == q[best] && random.nextInt(++ties) == 0) {
          best = i;
        }
      }
      return load.dispatch(best);
    }
  }

  /** Envoy {@code LEAST_REQUEST}: the less loaded of two servers drawn at random. */
  static final class PowerOfTwoRouter implements FleetRouter {
    private final SplittableRandom random;
    private LoadCounts load = new LoadCounts(0);

    PowerOfTwoRouter(long seed) {
      this.random = new SplittableRandom(seed);
    }

    @Override
    public String name() {
      return "power-of-two";
    }

    @Override
    public void start(FleetView fleet) {
      load = new LoadCounts(fleet.size());
    }

    @Override
    public Decision route(ClientRequest request, long nowNanos) {
      int n = load.inFlight.length;
      int a = random.nextInt(n);
      int b = n == 1 ? a : (a + 1 + random.nextInt(n - 1)) % n;
      int[] q = load.inFlight;
      int pick = q[a] < q[b] ? a : q[b] < q[a] ? b : (random.nextBoolean() ? a : b);
      return load.dispatch(pick);
    }
  }
}
