package dev.kinference.vllm;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointLabels;
import java.net.URI;
import org.jspecify.annotations.Nullable;

/**
 * The {@link Endpoint#labels() endpoint labels} this module reads, and how it reads them. A discovery source
 * (Kubernetes annotations, a static list) sets them; everything else has defaults. The names are
 * {@link EndpointLabels}'s (their one home, in core), repeated here where this module's readers are.
 */
public final class VllmLabels {

  /**
   * The ZeroMQ address of the server's KV-event publisher as seen from the router, such as
   * {@code tcp://10.0.0.7:5557}. For a data-parallel rank it is the base address: rank r publishes on port + r.
   * Without it an endpoint gets no KV-event subscriber (unless a default port is configured).
   */
  public static final String KV_EVENTS = EndpointLabels.KV_EVENTS;

  /** The address of the server's replay ROUTER socket, such as {@code tcp://10.0.0.7:5558} (base port too). */
  public static final String KV_EVENTS_REPLAY = EndpointLabels.KV_EVENTS_REPLAY;

  /** The topic the server publishes on ({@code --kv-events-config} {@code topic}); default empty (all). */
  public static final String KV_EVENTS_TOPIC = EndpointLabels.KV_EVENTS_TOPIC;

  /**
   * The data-parallel rank this endpoint stands for when one vLLM server runs several engines: its metrics are
   * the ones labelled {@code engine="<rank>"} and its KV events come from the publisher port + rank.
   */
  public static final String DATA_PARALLEL_RANK = EndpointLabels.DATA_PARALLEL_RANK;

  /** Where the server's {@code /metrics} and {@code /health} live, when not at the endpoint's own URI. */
  public static final String METRICS_URI = EndpointLabels.METRICS_URI;

  private VllmLabels() {}

  /** The endpoint's data-parallel rank, or -1 when it stands for the whole server. */
  public static int dataParallelRank(Endpoint endpoint) {
    String rank = endpoint.label(DATA_PARALLEL_RANK);
    if (rank == null || rank.isBlank()) {
      return -1;
    }
    try {
      int r = Integer.parseInt(rank.strip());
      if (r < 0) {
        throw new IllegalArgumentException("negative " + DATA_PARALLEL_RANK + " on endpoint " + endpoint.id());
      }
      return r;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "label " + DATA_PARALLEL_RANK + " of endpoint " + endpoint.id() + " is not a number: " + rank, e);
    }
  }

  /** The base URI of the server's metrics and health endpoints. */
  public static URI metricsBase(Endpoint endpoint) {
    String m = endpoint.label(METRICS_URI);
    return m == null || m.isBlank() ? endpoint.uri() : URI.create(m.strip());
  }

  /**
   * {@code address} with its TCP port moved up by {@code offset}, as vLLM offsets a data-parallel rank's
   * publisher ({@code tcp://host:5557} + 2 is {@code tcp://host:5559}). Other transports get vLLM's
   * {@code _dp<rank>} suffix.
   */
  public static String offsetPort(String address, int offset) {
    if (offset <= 0) {
      return address;
    }
    if (!address.startsWith("tcp://")) {
      return address + "_dp" + offset;
    }
    int colon = address.lastIndexOf(':');
    if (colon < "tcp://".length()) {
      throw new IllegalArgumentException("no port in ZeroMQ address " + address);
    }
    try {
      int port = Integer.parseInt(address.substring(colon + 1));
      return address.substring(0, colon + 1) + (port + offset);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("no port in ZeroMQ address " + address, e);
    }
  }

  /** The endpoint's label {@code key}, stripped, or null if absent or blank. */
  public static @Nullable String nonBlank(Endpoint endpoint, String key) {
    String v = endpoint.label(key);
    return v == null || v.isBlank() ? null : v.strip();
  }
}
