package dev.kinference.sim.bench;

import dev.kinference.cache.HybridCacheIndex;
import dev.kinference.cache.HybridGroups;
import dev.kinference.cache.KvEvent;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.prompt.PrefixKeys;
import dev.kinference.sim.engine.EngineStepEvents;
import java.util.List;
import java.util.function.LongFunction;
import org.jspecify.annotations.Nullable;

/**
 * The benchmark's servers' Mamba KV-cache groups, fed to the core's {@link HybridGroups} (vLLM's hybrid hit rule,
 * one home for the gateway and the benchmark): a prefix found in the full-attention group counts only up to its last
 * block whose state every Mamba group holds ({@code MambaManager.find_longest_cache_hit} in {@code mamba_cache_mode}
 * align). The benchmark's precise routers index the full-attention group and cut their hits with these groups, as the
 * gateway's KV-event subscriber does.
 *
 * <p>Each server's Mamba groups are declared up front (the model is known), so a server whose groups hold no state
 * yet has no hit. A batch's Mamba events are applied before its full-attention ones, which reach the index through
 * {@link #indexedEvent}. A sliding-window group's events are not applied here (see
 * {@link EngineStepEvents#fullAttentionEvents}). Not thread-safe: the benchmark's event thread and its routing run on
 * one thread.
 */
final class MambaStates {

  private final HybridGroups[] byServer;

  MambaStates(String model, int servers, int groups, int blockSize) {
    this.byServer = new HybridGroups[servers];
    for (int s = 0; s < servers; s++) {
      byServer[s] = new HybridGroups(model);
      for (int g = 0; g < groups; g++) {
        byServer[s].declare(g, HybridGroups.Role.MAMBA, 0, blockSize);
      }
    }
  }

  /** The benchmark's Mamba groups for a fleet of this model, or null if its model has none. */
  static @Nullable MambaStates of(String model, int servers, int mambaGroups, int blockSize) {
    return mambaGroups > 0 ? new MambaStates(model, servers, mambaGroups, blockSize) : null;
  }

  /** Cuts the hits {@code index} finds on each server's endpoint ({@code states}, by server) with its groups. */
  void registerWith(HybridCacheIndex index, EndpointState[] states) {
    for (int s = 0; s < states.length; s++) {
      index.register(states[s], byServer[s]);
    }
  }

  /**
   * Applies the Mamba groups' events of {@code batch} for {@code server}; {@code fullKeyOf} maps an engine hash to
   * its router key in the full-attention index (null if not held).
   */
  void apply(int server, EngineStepEvents batch, LongFunction<@Nullable Long> fullKeyOf) {
    List<KvEvent> events = batch.events();
    HybridGroups groups = byServer[server];
    for (int i = 0; i < events.size(); i++) {
      int g = batch.group(i);
      KvEvent e = events.get(i);
      boolean gpu = switch (e) {
        case KvEvent.BlockStored s -> s.medium() == KvEvent.Medium.GPU;
        case KvEvent.BlockRemoved r -> r.medium() == KvEvent.Medium.GPU;
        case KvEvent.AllBlocksCleared c -> true;
      };
      if (gpu && (e instanceof KvEvent.AllBlocksCleared || g != batch.fullAttentionGroup())) {
        groups.apply(g, HybridGroups.Role.UNKNOWN, 0, e, fullKeyOf);
      }
    }
  }

  /**
   * A full-attention event of {@code server} as the index should see it ({@link HybridGroups#indexedEvent}: the
   * removal of a copy while another stays is not passed on; null if nothing is left).
   */
  @Nullable KvEvent indexedEvent(int server, KvEvent event, LongFunction<@Nullable Long> fullKeyOf) {
    return byServer[server].indexedEvent(event, fullKeyOf);
  }

  /** How far a hit of {@code hit} leading blocks of {@code keys} on {@code server} reaches: its last held state. */
  int limit(int server, PrefixKeys keys, int hit) {
    return byServer[server].limit(keys, hit);
  }
}
