package dev.kinference.routing;

import dev.kinference.plugin.Parameters;
import dev.kinference.plugin.PluginSet;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * A routing profile as one router runs it: its own scorer instances, their weights and names, in combination
 * order, and the profile they make up with every parameter written out. Immutable after construction; the scorers
 * are thread-safe by their contract.
 */
final class ProfileScorers {

  final Scorer[] scorers;
  final double[] weights;
  final String[] names;
  final RoutingProfile profile;

  ProfileScorers(List<Scorer> scorers, List<Double> weights) {
    this.scorers = scorers.toArray(new Scorer[0]);
    this.weights = weights.stream().mapToDouble(Double::doubleValue).toArray();
    this.names = scorers.stream().map(Scorer::name).toArray(String[]::new);
    List<RoutingProfile.WeightedScorer> entries = new ArrayList<>(this.scorers.length);
    for (int k = 0; k < this.scorers.length; k++) {
      entries.add(new RoutingProfile.WeightedScorer(names[k], this.weights[k],
          this.scorers[k].parameters().asMap()));
    }
    this.profile = new RoutingProfile(entries);
  }

  /** New scorer instances for {@code profile}, on the router's clock. */
  static ProfileScorers create(RoutingProfile profile, PluginSet<Scorer> known, LongSupplier ticker) {
    List<Scorer> scorers = new ArrayList<>();
    List<Double> weights = new ArrayList<>();
    for (RoutingProfile.WeightedScorer entry : profile.resolve(known).scorers()) {
      Scorer factory = known.require(entry.type());
      scorers.add(factory.create(Parameters.of(factory.declaredParameters(), entry.parameters()), ticker));
      weights.add(entry.weight());
    }
    return new ProfileScorers(scorers, weights);
  }
}
