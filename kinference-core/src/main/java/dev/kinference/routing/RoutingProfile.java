package dev.kinference.routing;

import dev.kinference.plugin.Parameters;
import dev.kinference.plugin.PluginSet;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What a router scores with, as one value: the scorers by type name, each with its weight and parameters, in
 * combination order. A profile names scorer types; the router makes its own instances from it ({@link
 * Scorer#create}), so one profile may configure many routers. Parameters left out take the scorer's declared
 * defaults, the same a scorer selected by name gets. docs/ROUTING.md gives the default profile's rationale.
 * Immutable and thread-safe.
 *
 * @param scorers the entries, in combination order; at least one, each type once
 */
public record RoutingProfile(List<WeightedScorer> scorers) {

  /**
   * One scorer of a profile.
   *
   * @param type the scorer's {@link Scorer#name() name}, such as {@code kv-utilization}
   * @param weight its weight in the sum, positive and finite
   * @param parameters its parameters by name ({@link Double}, {@link Long} or {@link java.time.Duration} by the
   *     declared kind); those left out take their defaults
   */
  public record WeightedScorer(String type, double weight, Map<String, Object> parameters) {
    public WeightedScorer {
      Objects.requireNonNull(type, "type");
      if (type.isBlank()) {
        throw new IllegalArgumentException("a scorer needs a type");
      }
      if (!(weight > 0) || Double.isInfinite(weight)) {
        throw new IllegalArgumentException("scorer '" + type + "': weight must be positive and finite: " + weight);
      }
      parameters = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(parameters));
    }

    /** {@code type weight} or {@code type weight {k=v, ...}}. */
    public String describe() {
      return type + " " + format(weight) + (parameters.isEmpty() ? ""
          : parameters.entrySet().stream().map(e -> e.getKey() + "=" + show(e.getValue()))
              .collect(Collectors.joining(", ", " {", "}")));
    }
  }

  public RoutingProfile {
    scorers = List.copyOf(scorers);
    if (scorers.isEmpty()) {
      throw new IllegalArgumentException("a routing profile needs at least one scorer");
    }
    Set<String> types = new HashSet<>();
    for (WeightedScorer s : scorers) {
      if (!types.add(s.type())) {
        throw new IllegalArgumentException("scorer '" + s.type() + "' appears twice in the profile");
      }
    }
  }

  /**
   * The default profile: {@code predicted-ttft} 1, {@code prefix-overlap} 1, {@code kv-utilization} 0.5, {@code
   * new-prefix-headroom} 1, {@code session-affinity} 1, {@code queue-depth} 0.3, {@code prefix-under-saturation} 4, {@code session-residency} 4,
   * {@code ttft-overflow} 16 (above the other weights' sum, so once every candidate is
   * saturated a request predicted late everywhere goes to the candidate furthest behind) and, with a precise cache
   * index, {@code prefix-home} 1, every one with its default parameters. docs/ROUTING.md says why each is there.
   *
   * @param preciseCacheIndex whether the router's cache index is precise: an approximate one already remembers
   *     where prompts were sent, which is what {@code prefix-home} adds
   */
  public static RoutingProfile defaults(boolean preciseCacheIndex) {
    return defaults(preciseCacheIndex, 1);
  }

  /**
   * The default profile for one of {@code routerReplicas} independent routers sharing the traffic (replicas behind a
   * Service): as {@link #defaults(boolean)}, and with an approximate cache index and more than one replica also
   * {@code prefix-rendezvous} 1, so that replicas that cannot see each other's decisions agree where a conversation
   * and a new group of prompts go. A precise index already gives every replica the same view.
   *
   * @param routerReplicas at least 1
   */
  public static RoutingProfile defaults(boolean preciseCacheIndex, int routerReplicas) {
    if (routerReplicas < 1) {
      throw new IllegalArgumentException("routerReplicas must be at least 1: " + routerReplicas);
    }
    Builder b = builder().scorer("predicted-ttft", 1.0).scorer("prefix-overlap", 1.0).scorer("kv-utilization", 0.5)
        .scorer("new-prefix-headroom", 1.0).scorer("session-affinity", 1.0).scorer("queue-depth", 0.3).scorer("prefix-under-saturation", 4.0)
        .scorer("session-residency", 4.0).scorer("ttft-overflow", 16.0);
    if (preciseCacheIndex) {
      b.scorer("prefix-home", 1.0);
    } else if (routerReplicas > 1) {
      b.scorer("prefix-rendezvous", 1.0);
    }
    return b.build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The scorer types, in combination order. */
  public List<String> types() {
    return scorers.stream().map(WeightedScorer::type).toList();
  }

  /**
   * What is wrong with this profile against the scorers known: types not known (naming the known ones), parameters
   * not declared or out of range (naming the allowed ones). Each problem starts with its path, such as {@code
   * scorers[1].parameters.knee}. Empty when the profile can be used.
   */
  public List<String> problems(PluginSet<Scorer> known) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < scorers.size(); i++) {
      WeightedScorer s = scorers.get(i);
      var scorer = known.find(s.type());
      if (scorer.isEmpty()) {
        out.add("scorers[" + i + "].type: unknown scorer '" + s.type() + "'; known: " + String.join(", ",
            known.names()));
        continue;
      }
      for (Parameters.Problem p : Parameters.problems(scorer.get().declaredParameters(), s.parameters())) {
        out.add("scorers[" + i + "].parameters." + p.key() + ": " + p.message());
      }
    }
    return out;
  }

  /**
   * This profile with every declared parameter written out, defaults included: two profiles that configure the
   * same scorers alike resolve to equal values.
   *
   * @throws IllegalArgumentException listing the {@link #problems} when there are any
   */
  public RoutingProfile resolve(PluginSet<Scorer> known) {
    List<String> problems = problems(known);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException("invalid routing profile: " + String.join("; ", problems));
    }
    List<WeightedScorer> out = new ArrayList<>(scorers.size());
    for (WeightedScorer s : scorers) {
      Scorer scorer = known.require(s.type());
      out.add(new WeightedScorer(s.type(), s.weight(),
          Parameters.of(scorer.declaredParameters(), s.parameters()).asMap()));
    }
    return new RoutingProfile(out);
  }

  /** {@code predicted-ttft 1, kv-utilization 0.5 {knee=0.5}, ...}, in combination order. */
  public String describe() {
    return scorers.stream().map(WeightedScorer::describe).collect(Collectors.joining(", "));
  }

  private static String format(double d) {
    return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
  }

  private static String show(Object value) {
    return switch (value) {
      case Double d -> format(d);
      case java.time.Duration d -> d.toString().substring(2).toLowerCase(java.util.Locale.ROOT);
      default -> String.valueOf(value);
    };
  }

  /** Builds a {@link RoutingProfile}; each call validates its entry. Not thread-safe. */
  public static final class Builder {
    private final List<WeightedScorer> scorers = new ArrayList<>();

    private Builder() {}

    /** Adds the scorer of this type with its default parameters. */
    public Builder scorer(String type, double weight) {
      return scorer(type, weight, Map.of());
    }

    /** Adds the scorer of this type with these parameters over its defaults. */
    public Builder scorer(String type, double weight, Map<String, ?> parameters) {
      scorers.add(new WeightedScorer(type, weight, new LinkedHashMap<String, Object>(parameters)));
      return this;
    }

    public RoutingProfile build() {
      return new RoutingProfile(scorers);
    }
  }
}
