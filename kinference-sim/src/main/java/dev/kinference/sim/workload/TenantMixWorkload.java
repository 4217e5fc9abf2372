package dev.kinference.sim.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * A mix of workloads, one per tenant: each new session comes from tenant {@code i}'s workload with probability
 * proportional to its weight. Give each part its tenant at construction, so its requests carry it. Not
 * thread-safe.
 */
public final class TenantMixWorkload implements Workload {

  /** One tenant's share of the traffic. */
  public record Part(String tenant, double weight, Workload workload) {
    public Part {
      Objects.requireNonNull(tenant, "tenant");
      Objects.requireNonNull(workload, "workload");
      if (!(weight > 0) || Double.isInfinite(weight)) {
        throw new IllegalArgumentException("weight must be positive: " + weight);
      }
    }
  }

  private final List<Part> parts;
  private final double[] cumulative;

  public TenantMixWorkload(List<Part> parts) {
    if (parts.isEmpty()) {
      throw new IllegalArgumentException("a mix needs at least one part");
    }
    this.parts = List.copyOf(parts);
    this.cumulative = new double[parts.size()];
    double sum = 0;
    for (int i = 0; i < parts.size(); i++) {
      sum += parts.get(i).weight();
      cumulative[i] = sum;
    }
    for (int i = 0; i < cumulative.length; i++) {
      cumulative[i] /= sum;
    }
  }

  @Override
  public String name() {
    return "tenant-mix";
  }

  @Override
  public String describe() {
    List<String> s = new ArrayList<>();
    for (Part p : parts) {
      s.add(String.format(Locale.ROOT, "%s %.0f%%: %s (%s)", p.tenant(), 100 * p.weight() / totalWeight(),
          p.workload().name(), p.workload().describe()));
    }
    return String.join("; ", s);
  }

  private double totalWeight() {
    return parts.stream().mapToDouble(Part::weight).sum();
  }

  @Override
  public Session newSession(RandomGenerator random, long number) {
    double u = random.nextDouble();
    for (int i = 0; i < cumulative.length; i++) {
      if (u < cumulative[i] || i == cumulative.length - 1) {
        return parts.get(i).workload().newSession(random, number);
      }
    }
    throw new AssertionError("unreachable");
  }

  public List<Part> parts() {
    return parts;
  }
}
