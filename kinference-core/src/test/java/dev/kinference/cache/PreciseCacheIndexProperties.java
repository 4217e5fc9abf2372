package dev.kinference.cache;

import static dev.kinference.cache.Fixtures.BLOCK;
import static dev.kinference.cache.Fixtures.MODEL;
import static dev.kinference.cache.Fixtures.member;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.prompt.BlockKeys;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The precise index's lookups against a model (the set of blocks each endpoint holds, matched block by block) under
 * random stores, removals in any order and clears: bisection where the blocks are prefix-closed, and the walk where
 * a removal broke that, must both give exactly the model's answer.
 */
class PreciseCacheIndexProperties {

  private static final int PROMPTS = 4;
  /** More than {@link BlockTable#WALK_AT_MOST}, so prefix-closed endpoints are bisected. */
  private static final int BLOCKS = 80;

  @Property(tries = 300)
  void lookupsMatchTheHeldBlocksExactly(@ForAll long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    // Four prompts sharing a system prompt of 20 blocks; two of them also share the next 20.
    int[][] prompts = new int[PROMPTS][];
    int[] system = Fixtures.tokens(seed, 20 * BLOCK);
    int[] shared = Fixtures.tokens(seed + 1, 20 * BLOCK);
    for (int p = 0; p < PROMPTS; p++) {
      int[] rest = Fixtures.tokens(seed + 2 + p, BLOCKS * BLOCK);
      int[] t = Arrays.copyOf(system, BLOCKS * BLOCK);
      int from = 20 * BLOCK;
      if (p < 2) {
        System.arraycopy(shared, 0, t, from, shared.length);
        from += shared.length;
      }
      System.arraycopy(rest, 0, t, from, t.length - from);
      prompts[p] = t;
    }
    long[][] keys = new long[PROMPTS][];
    for (int p = 0; p < PROMPTS; p++) {
      keys[p] = BlockKeys.chain(BlockKeys.seed(MODEL, null, null), prompts[p], prompts[p].length, BLOCK);
    }

    PreciseCacheIndex index = new PreciseCacheIndex();
    Fleet fleet = Fixtures.fleet(index, 3);
    EndpointState[] endpoints = {member(fleet, 0), member(fleet, 1), member(fleet, 2)};
    List<Set<Long>> held = new ArrayList<>();
    for (int e = 0; e < endpoints.length; e++) {
      held.add(new HashSet<>());
    }
    boolean tailFirst = r.nextBoolean();
    for (int op = 0; op < 120; op++) {
      int e = r.nextInt(endpoints.length);
      Set<Long> h = held.get(e);
      int what = r.nextInt(10);
      if (what < 5) {
        // Store blocks [from, to) of a prompt, continuing from a held block (or from the start).
        int p = r.nextInt(PROMPTS);
        int from = 0;
        while (from < BLOCKS && h.contains(keys[p][from]) && r.nextInt(4) != 0) {
          from++;
        }
        if (from == BLOCKS) {
          continue;
        }
        int to = Math.min(BLOCKS, from + 1 + r.nextInt(30));
        long[] hashes = new long[to - from];
        for (int i = from; i < to; i++) {
          hashes[i - from] = engineHash(keys[p][i]);
        }
        Long parent = from == 0 ? null : engineHash(keys[p][from - 1]);
        index.onEvent(endpoints[e], new KvEvent.BlockStored(hashes, parent,
            Arrays.copyOfRange(prompts[p], from * BLOCK, to * BLOCK), BLOCK, null, KvEvent.Medium.GPU, null));
        if (from == 0 || h.contains(keys[p][from - 1])) {
          for (int i = from; i < to; i++) {
            h.add(keys[p][i]);
          }
        }
      } else if (what < 9) {
        // Remove some held blocks: the deepest first (as vLLM evicts), or any.
        List<Long> candidates = new ArrayList<>(h);
        if (candidates.isEmpty()) {
          continue;
        }
        List<Long> gone = new ArrayList<>();
        if (tailFirst) {
          for (long k : candidates) {
            if (!hasHeldChild(k, h, keys) && gone.size() < 6) {
              gone.add(k);
            }
          }
        } else {
          for (int i = 0, n = 1 + r.nextInt(6); i < n; i++) {
            gone.add(candidates.get(r.nextInt(candidates.size())));
          }
        }
        long[] hashes = gone.stream().mapToLong(PreciseCacheIndexProperties::engineHash).toArray();
        index.onEvent(endpoints[e], new KvEvent.BlockRemoved(hashes, KvEvent.Medium.GPU));
        gone.forEach(h::remove);
      } else {
        index.onEvent(endpoints[e], new KvEvent.AllBlocksCleared());
        h.clear();
      }
      for (int p = 0; p < PROMPTS; p++) {
        int[] matched = new int[endpoints.length];
        index.lookup(Fixtures.keys(prompts[p]), endpoints, endpoints.length, matched);
        for (int x = 0; x < endpoints.length; x++) {
          int expected = 0;
          while (expected < BLOCKS && held.get(x).contains(keys[p][expected])) {
            expected++;
          }
          assertThat(matched[x]).as("prompt %d on endpoint %d after op %d", p, x, op).isEqualTo(expected);
        }
      }
      if (tailFirst) {
        for (EndpointState endpoint : endpoints) {
          assertThat(index.isPrefixClosed(endpoint)).as("evicted tail first").isTrue();
        }
      }
    }
  }

  /** The engine's hash of a block: any function of its whole prefix, as the router key is. */
  private static long engineHash(long routerKey) {
    return routerKey * 0xBF58476D1CE4E5B9L + 11;
  }

  private static boolean hasHeldChild(long key, Set<Long> held, long[][] keys) {
    for (long[] chain : keys) {
      for (int i = 0; i + 1 < chain.length; i++) {
        if (chain[i] == key && held.contains(chain[i + 1])) {
          return true;
        }
      }
    }
    return false;
  }
}
