package dev.kinference.routing;

import dev.kinference.plugin.Parameters;
import dev.kinference.plugin.PluginSet;
import dev.kinference.plugin.Plugins;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link Router.Builder} was told to score with: scorers added one at a time or a profile for the router, and
 * profiles per model; each validated as it is given, made into the router's {@link ProfileScorers} when it is built.
 * Not thread-safe, as the builder is not.
 */
final class ScoringSetup {

  /** Scorers added one at a time: an instance, or a type with its validated parameters to instantiate. */
  private final List<Object> scorers = new ArrayList<>();
  private final List<Double> weights = new ArrayList<>();
  private @Nullable RoutingProfile profile;
  private final Map<String, RoutingProfile> profilesByModel = new LinkedHashMap<>();
  private @Nullable PluginSet<Scorer> scorerPlugins;

  void scorer(Scorer scorer, double weight) {
    Objects.requireNonNull(scorer, "scorer");
    checkWeight(weight);
    addScorer(scorer.name(), scorer, weight);
  }

  void scorer(String name, double weight, Map<String, ?> parameters) {
    checkWeight(weight);
    Scorer factory = scorerPlugins().require(name);
    addScorer(name, new RoutingProfile.WeightedScorer(name, weight,
        Parameters.of(factory.declaredParameters(), parameters).asMap()), weight);
  }

  void profile(RoutingProfile profile) {
    this.profile = Objects.requireNonNull(profile, "profile").resolve(scorerPlugins());
  }

  void profile(String model, RoutingProfile profile) {
    Objects.requireNonNull(model, "model");
    profilesByModel.put(model, Objects.requireNonNull(profile, "profile").resolve(scorerPlugins()));
  }

  /** Throws when both scorers one by one and a profile were given. */
  void checkOneChoice() {
    if (profile != null && !scorers.isEmpty()) {
      throw new IllegalStateException("give either scorers one by one or a profile, not both");
    }
  }

  private void addScorer(String name, Object scorer, double weight) {
    for (Object s : scorers) {
      String existing = s instanceof Scorer sc ? sc.name() : ((RoutingProfile.WeightedScorer) s).type();
      if (existing.equals(name)) {
        throw new IllegalArgumentException("scorer '" + name + "' added twice");
      }
    }
    scorers.add(scorer);
    weights.add(weight);
  }

  private static void checkWeight(double weight) {
    if (!(weight > 0) || Double.isInfinite(weight)) {
      throw new IllegalArgumentException("weight must be positive and finite: " + weight);
    }
  }

  private PluginSet<Scorer> scorerPlugins() {
    PluginSet<Scorer> known = scorerPlugins;
    if (known == null) {
      known = Plugins.load(Scorer.class);
      scorerPlugins = known;
    }
    return known;
  }

  /** The router's own scorers: the ones added, the profile given, or the default profile. */
  ProfileScorers forRouter(boolean preciseCacheIndex, int routerReplicas, LongSupplier ticker) {
    RoutingProfile given = profile;
    if (given != null) {
      return ProfileScorers.create(given, scorerPlugins(), ticker);
    }
    if (scorers.isEmpty()) {
      return ProfileScorers.create(RoutingProfile.defaults(preciseCacheIndex, routerReplicas), scorerPlugins(),
          ticker);
    }
    List<Scorer> instances = new ArrayList<>(scorers.size());
    for (Object s : scorers) {
      if (s instanceof Scorer scorer) {
        instances.add(scorer);
      } else {
        RoutingProfile.WeightedScorer entry = (RoutingProfile.WeightedScorer) s;
        Scorer factory = scorerPlugins().require(entry.type());
        instances.add(factory.create(Parameters.of(factory.declaredParameters(), entry.parameters()), ticker));
      }
    }
    return new ProfileScorers(instances, weights);
  }

  /** New scorer instances for each model's own profile. */
  Map<String, ProfileScorers> byModel(LongSupplier ticker) {
    Map<String, ProfileScorers> byModel = new HashMap<>();
    profilesByModel.forEach((model, p) -> byModel.put(model, ProfileScorers.create(p, scorerPlugins(), ticker)));
    return Map.copyOf(byModel);
  }
}
