package dev.kinference.endpoint;

/**
 * The names of the {@link Endpoint#labels() endpoint labels} that one module sets and another reads: a discovery
 * source or the simulator sets them, {@code kinference-vllm} reads them ({@code VllmLabels} has the readers). Their
 * one home, so that a writer and a reader cannot drift apart.
 */
public final class EndpointLabels {

  /**
   * The ZeroMQ address of the server's KV-event publisher as seen from the router, such as
   * {@code tcp://10.0.0.7:5557}. For a data-parallel rank it is the base address: rank r publishes on port + r.
   */
  public static final String KV_EVENTS = "kinference.dev/kv-events-endpoint";

  /** The address of the server's KV-event replay ROUTER socket, such as {@code tcp://10.0.0.7:5558}. */
  public static final String KV_EVENTS_REPLAY = "kinference.dev/kv-events-replay-endpoint";

  /** The topic the server publishes its KV events on; absent or empty: all. */
  public static final String KV_EVENTS_TOPIC = "kinference.dev/kv-events-topic";

  /** The data-parallel rank this endpoint stands for when one vLLM server runs several engines. */
  public static final String DATA_PARALLEL_RANK = "kinference.dev/data-parallel-rank";

  /** Where the server's {@code /metrics} and {@code /health} live, when not at the endpoint's own URI. */
  public static final String METRICS_URI = "kinference.dev/metrics-uri";

  private EndpointLabels() {}
}
