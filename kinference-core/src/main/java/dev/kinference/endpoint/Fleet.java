package dev.kinference.endpoint;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;

/**
 * The current set of endpoints and their states. {@link #setEndpoints} reconciles with a complete new set: new
 * endpoints join with a free slot, endpoints that are gone start draining (no new requests; their slot is reused
 * only once their in-flight requests finished), and endpoints that come back are revived.
 *
 * <p>Thread-safe: updates are serialised; readers get an immutable snapshot through a volatile read, so lookups
 * on the routing path take no lock and allocate nothing.
 */
public final class Fleet {

  /** An immutable view of the members. */
  public record Snapshot(List<EndpointState> all, Map<String, EndpointState> byId,
      Map<String, List<EndpointState>> byModel, int slotCapacity) {

    /** The members serving {@code model} (in slot order), or an empty list. */
    public List<EndpointState> serving(String model) {
      return byModel.getOrDefault(model, List.of());
    }
  }

  private final Object updateLock = new Object();
  private final List<FleetListener> listeners = new CopyOnWriteArrayList<>();
  private volatile Snapshot snapshot = new Snapshot(List.of(), Map.of(), Map.of(), 0);
  // guarded by updateLock
  private final Map<String, EndpointState> members = new LinkedHashMap<>();
  private final Map<String, EndpointState> draining = new HashMap<>();
  private final TreeSet<Integer> freeSlots = new TreeSet<>();
  /** Learned prefill rates by model and hardware ({@link PrefillRate#poolKey}). */
  private final Map<String, PrefillRate> prefillRates = new HashMap<>();
  private int nextSlot;

  private Fleet() {}

  public static Fleet create() {
    return new Fleet();
  }

  /** A fleet that starts with these endpoints. */
  public static Fleet of(Collection<Endpoint> endpoints) {
    Fleet f = new Fleet();
    f.setEndpoints(endpoints);
    return f;
  }

  /** Registers a listener; it is told of the current members at once. Registering it again does nothing. */
  public void addListener(FleetListener listener) {
    Objects.requireNonNull(listener, "listener");
    synchronized (updateLock) {
      // identity, not equals(): two listeners alike are still two listeners
      for (FleetListener registered : listeners) {
        @SuppressWarnings("ReferenceEquality")
        boolean same = registered == listener;
        if (same) {
          return;
        }
      }
      listeners.add(listener);
      for (EndpointState s : members.values()) {
        listener.onEndpointAdded(s);
      }
    }
  }

  /** Makes {@code endpoints} the complete membership (ids unique). */
  public void setEndpoints(Collection<Endpoint> endpoints) {
    Map<String, Endpoint> wanted = new LinkedHashMap<>();
    for (Endpoint e : endpoints) {
      if (wanted.put(e.id(), e) != null) {
        throw new IllegalArgumentException("duplicate endpoint id: " + e.id());
      }
    }
    synchronized (updateLock) {
      reapDrained();
      for (var it = members.entrySet().iterator(); it.hasNext(); ) {
        var entry = it.next();
        Endpoint next = wanted.get(entry.getKey());
        if (next == null || !next.equals(entry.getValue().endpoint())) {
          EndpointState gone = entry.getValue();
          it.remove();
          gone.updateHealth(Health.DRAINING, "left the fleet");
          draining.put(gone.id(), gone);
          listeners.forEach(l -> l.onEndpointRemoved(gone));
        }
      }
      for (Endpoint e : wanted.values()) {
        if (members.containsKey(e.id())) {
          continue;
        }
        EndpointState back = draining.get(e.id());
        EndpointState state;
        if (back != null && back.endpoint().equals(e)) {
          draining.remove(e.id());
          back.revive();
          state = back;
        } else {
          state = new EndpointState(e, allocateSlot(),
              prefillRates.computeIfAbsent(PrefillRate.poolKey(e), k -> new PrefillRate()));
        }
        members.put(e.id(), state);
        listeners.forEach(l -> l.onEndpointAdded(state));
      }
      publish();
    }
  }

  /** The current members. */
  public Snapshot snapshot() {
    return snapshot;
  }

  /** The member with this id, or null. */
  public @Nullable EndpointState get(String id) {
    return snapshot.byId().get(id);
  }

  /** The members, in slot order. */
  public List<EndpointState> endpoints() {
    return snapshot.all();
  }

  /** Endpoints that left and still have requests in flight. */
  public List<EndpointState> draining() {
    synchronized (updateLock) {
      reapDrained();
      return List.copyOf(draining.values());
    }
  }

  private void reapDrained() {
    for (var it = draining.values().iterator(); it.hasNext(); ) {
      EndpointState s = it.next();
      if (s.inFlight() <= 0) {
        it.remove();
        freeSlots.add(s.slot());
      }
    }
  }

  private int allocateSlot() {
    Integer free = freeSlots.pollFirst();
    return free != null ? free : nextSlot++;
  }

  private void publish() {
    List<EndpointState> all = new ArrayList<>(members.values());
    all.sort((a, b) -> Integer.compare(a.slot(), b.slot()));
    Map<String, EndpointState> byId = new HashMap<>();
    Map<String, List<EndpointState>> byModel = new HashMap<>();
    for (EndpointState s : all) {
      byId.put(s.id(), s);
      byModel.computeIfAbsent(s.endpoint().model(), k -> new ArrayList<>()).add(s);
    }
    byModel.replaceAll((k, v) -> List.copyOf(v));
    snapshot = new Snapshot(List.copyOf(all), Map.copyOf(byId), Map.copyOf(byModel), nextSlot);
  }
}
