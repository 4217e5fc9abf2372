package dev.kinference.cache;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.PrefixKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;

/** Fleets, tokens and keys for the cache tests. */
final class Fixtures {

  static final String MODEL = "test-model";
  static final int BLOCK = 16;

  private Fixtures() {}

  static Fleet fleet(CacheIndex index, int endpoints) {
    Fleet fleet = Fleet.create();
    fleet.addListener(index);
    List<Endpoint> list = new ArrayList<>();
    for (int i = 0; i < endpoints; i++) {
      list.add(Endpoint.of("e" + i, "http://127.0.0.1:" + (8000 + i), MODEL));
    }
    fleet.setEndpoints(list);
    return fleet;
  }

  /** The one endpoint of a fleet built around {@code index}. */
  static EndpointState soleEndpoint(CacheIndex index) {
    return member(fleet(index, 1), 0);
  }

  static EndpointState member(Fleet fleet, int i) {
    return Objects.requireNonNull(fleet.get("e" + i));
  }

  static int[] tokens(long seed, int count) {
    SplittableRandom random = new SplittableRandom(seed);
    int[] t = new int[count];
    for (int i = 0; i < count; i++) {
      t[i] = random.nextInt(150_000);
    }
    return t;
  }

  static PrefixKeys keys(int[] tokens) {
    return PrefixKeys.of(BlockKeys.seed(MODEL, null, null), tokens, tokens.length, BLOCK);
  }

  static int match(CacheIndex index, int[] tokens, EndpointState endpoint) {
    int[] out = new int[1];
    index.lookup(keys(tokens), new EndpointState[] {endpoint}, 1, out);
    return out[0];
  }
}
