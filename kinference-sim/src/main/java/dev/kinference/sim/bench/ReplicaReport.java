package dev.kinference.sim.bench;

import java.util.Locale;

/**
 * The table of replicated routers ({@code NAME@N}): for each workload, each router's peak goodput, hit rate and
 * herding at each replica count, and its goodput against the same router's single instance ({@code NAME@1}).
 */
final class ReplicaReport {

  private ReplicaReport() {
  }

  /** The table, or the empty string when no router of {@code result} is replicated. */
  static String table(BenchmarkResult result) {
    StringBuilder b = new StringBuilder();
    for (String workload : result.workloads()) {
      for (String router : result.routers()) {
        int at = router.lastIndexOf('@');
        if (at < 0) {
          continue;
        }
        if (b.isEmpty()) {
          b.append(String.format(Locale.ROOT, "%nRouter replicas (each request to a random replica; herding: the busiest"
              + " server's share of a scrape interval's sends)%n%-16s %-22s %9s %12s %9s %8s %8s %10s%n",
              "workload", "router", "replicas", "goodput/min", "hit rate", "herd", "herd max", "vs one"));
        }
        String base = router.substring(0, at);
        double peak = result.peakGoodput(workload, router);
        double one = result.routers().contains(Routers.replicated(base, 1))
            ? result.peakGoodput(workload, Routers.replicated(base, 1)) : Double.NaN;
        double herd = Double.NaN;
        double herdMax = Double.NaN;
        for (RunResult r : result.sweep(workload, router)) {
          if (!Double.isNaN(r.herdingMeanShare())) {
            herd = Double.isNaN(herd) ? r.herdingMeanShare() : Math.max(herd, r.herdingMeanShare());
            herdMax = Double.isNaN(herdMax) ? r.herdingWorstShare() : Math.max(herdMax, r.herdingWorstShare());
          }
        }
        b.append(String.format(Locale.ROOT, "%-16s %-22s %9s %12.1f %8.1f%% %7.1f%% %7.1f%% %10s%n", workload, base,
            router.substring(at + 1), peak, 100 * result.pooledHitRate(workload, router), 100 * herd, 100 * herdMax,
            Double.isNaN(one) || one == 0 ? "-" : String.format(Locale.ROOT, "%+.1f%%", 100 * (peak / one - 1))));
      }
    }
    return b.toString();
  }
}
