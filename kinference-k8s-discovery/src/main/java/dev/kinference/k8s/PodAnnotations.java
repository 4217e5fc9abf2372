package dev.kinference.k8s;

/**
 * The pod labels and annotations that describe an inference server to Kinference, and the endpoint labels they
 * become. Each key may be set as a label or as an annotation; an annotation wins. Everything but the model has a
 * default.
 *
 * <pre>{@code
 * metadata:
 *   labels:
 *     kinference.dev/pool: qwen3-pool
 *   annotations:
 *     kinference.dev/model: Qwen/Qwen3-8B
 *     kinference.dev/port: "8000"
 *     kinference.dev/kv-events: "5557"
 *     kinference.dev/kv-events-topic: "kv@{pod-ip}:{port}@{model}"
 * }</pre>
 */
public final class PodAnnotations {

  /** The served model name, as requests name it (vLLM's {@code --served-model-name}). Required, unless the source
   *  has a default model. */
  public static final String MODEL = "kinference.dev/model";

  /** The pool (an InferencePool's name) the server belongs to; copied to the endpoint label of the same name. */
  public static final String POOL = "kinference.dev/pool";

  /**
   * The serving port: a number, or the name of a container (or EndpointSlice) port. Default: the source's port
   * name ({@code http}), else the only or first port.
   */
  public static final String PORT = "kinference.dev/port";

  /** {@code http} (default) or {@code https}. */
  public static final String SCHEME = "kinference.dev/scheme";

  /** The port of {@code /metrics} and {@code /health} when not the serving port. */
  public static final String METRICS_PORT = "kinference.dev/metrics-port";

  /**
   * The KV-event publisher: a port ({@code 5557}), vLLM's own bind address ({@code tcp://*:5557}, taken from
   * {@code --kv-events-config}), or a full address. The pod IP is filled in. Without it the endpoint gets no
   * KV-event subscription and the router learns its cache from routing decisions.
   */
  public static final String KV_EVENTS = "kinference.dev/kv-events";

  /** The publisher's topic; may contain {@code {pod-ip}}, {@code {pod-name}}, {@code {port}} and {@code {model}}. */
  public static final String KV_EVENTS_TOPIC = "kinference.dev/kv-events-topic";

  /** The replay (ROUTER) socket, in the same forms as {@link #KV_EVENTS}. */
  public static final String KV_EVENTS_REPLAY = "kinference.dev/kv-events-replay";

  /** Endpoint label: the pod's name. */
  public static final String POD_LABEL = "kinference.dev/pod";

  /** Endpoint label: the pod's namespace. */
  public static final String NAMESPACE_LABEL = "kinference.dev/namespace";

  /** Endpoint label: the zone, from the EndpointSlice ({@code topology.kubernetes.io/zone}). */
  public static final String ZONE_LABEL = "kinference.dev/zone";

  private PodAnnotations() {}
}
