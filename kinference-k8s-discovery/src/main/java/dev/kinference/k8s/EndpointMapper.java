package dev.kinference.k8s;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointLabels;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * Turns EndpointSlices and Pods into {@link Endpoint}s. An address becomes an endpoint when its EndpointSlice
 * conditions say {@code ready} and {@code serving} and not {@code terminating}, and its pod (when known) is Ready and
 * not being deleted: behind a Service with {@code publishNotReadyAddresses} every address is {@code ready}, but
 * {@code serving} still follows the pod's readiness. The endpoint's labels are the pod's own labels (so a pool's
 * {@code selector} such as {@code app: vllm-qwen3} matches), then the ones below, which win
 * ({@link PodAnnotations}). A pod in slices of both address families (a dual-stack Service) gets its IPv4 address,
 * always (IPv6 only when it has no IPv4 one); its id is {@code namespace/pod} either way. Pure functions over JSON;
 * the result is sorted by id, ids unique.
 */
final class EndpointMapper {

  /** Jackson 2, for the JSON the rest of Kinference reads (fabric8 serialises its model with Jackson 3). */
  static final ObjectMapper JSON = new ObjectMapper();

  /** A fabric8 model object as JSON. */
  static JsonNode toJson(Object fabric8Object) {
    try {
      return JSON.readTree(io.fabric8.kubernetes.client.utils.Serialization.asJson(fabric8Object));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("unreadable object from fabric8: " + e.getMessage(), e);
    }
  }

  /** Why an EndpointSlice address whose pod is not known is left out (reported once, until the pod appears). */
  static final String POD_UNKNOWN = "its pod is not known; skipped until it appears";

  /**
   * What the mapping needs from the source's configuration.
   *
   * @param portName the serving port's name when a pod does not say
   * @param defaultPort the serving port of a pod that declares none (pod mode)
   * @param defaultModel the model of pods that do not name one, or null to skip such pods
   * @param defaultPool the pool label of pods that do not name one, or null
   * @param requirePods whether an EndpointSlice address is used only once its pod is known (annotations read)
   */
  record Settings(String portName, int defaultPort, @Nullable String defaultModel, @Nullable String defaultPool,
      boolean requirePods) {}

  /** The endpoints, plus why some addresses were left out (one line each, keyed by pod or address). */
  record Result(List<Endpoint> endpoints, Map<String, String> skipped) {}

  private EndpointMapper() {}

  /** Endpoints from the EndpointSlices of one Service, with the pods (keyed {@code namespace/name}) they point to. */
  static Result fromSlices(Collection<JsonNode> slices, Map<String, JsonNode> pods, Settings s) {
    Map<String, Endpoint> out = new TreeMap<>();
    Map<String, String> skipped = new TreeMap<>();
    // IPv4 slices first, then by name: a dual-stack pod always gets the same address family.
    List<JsonNode> ordered = new ArrayList<>(slices);
    ordered.sort(Comparator.comparingInt((JsonNode n) -> n.path("addressType").asText("IPv4").equals("IPv4") ? 0 : 1)
        .thenComparing(n -> n.path("metadata").path("name").asText("")));
    for (JsonNode slice : ordered) {
      String addressType = slice.path("addressType").asText("IPv4");
      if (!addressType.equals("IPv4") && !addressType.equals("IPv6")) {
        continue; // FQDN slices name no pod address
      }
      String sliceNs = slice.path("metadata").path("namespace").asText("");
      JsonNode ports = slice.path("ports");
      for (JsonNode ep : slice.path("endpoints")) {
        JsonNode conditions = ep.path("conditions");
        // Kubernetes: a missing "ready" means unknown, to be read as ready; a missing "serving" is "ready"'s
        // value. With publishNotReadyAddresses "ready" is always true, "serving" is the pod's readiness.
        boolean ready = conditions.path("ready").asBoolean(true);
        boolean serving = conditions.path("serving").asBoolean(ready);
        boolean terminating = conditions.path("terminating").asBoolean(false);
        JsonNode addresses = ep.path("addresses");
        if (!ready || !serving || terminating || addresses.isEmpty()) {
          continue;
        }
        String address = addresses.get(0).asText();
        JsonNode ref = ep.path("targetRef");
        JsonNode pod = null;
        String podName = null;
        String podNs = sliceNs;
        if ("Pod".equals(ref.path("kind").asText())) {
          podName = ref.path("name").asText(null);
          podNs = ref.path("namespace").asText(sliceNs);
          pod = podName == null ? null : pods.get(podNs.isEmpty() ? podName : podNs + "/" + podName);
        }
        String what = podName != null ? podNs + "/" + podName : address;
        String id = podName != null ? (podNs.isEmpty() ? podName : podNs + "/" + podName) : null;
        if (id != null && out.containsKey(id)) {
          continue; // already taken from an earlier slice (the other family, or a slice being rebalanced)
        }
        if (pod == null && s.requirePods()) {
          skipped.put(what, POD_UNKNOWN);
          continue;
        }
        if (pod != null && (deleting(pod) || !podReady(pod.path("status")))) {
          continue; // terminating or not ready, even if the slice has not caught up
        }
        Integer port = slicePort(ports, pod, s);
        if (port == null) {
          skipped.put(what, "no serving port");
          continue;
        }
        String zone = ep.path("zone").asText("");
        build(out, skipped, what, podName, podNs, address, port, pod, zone, s, "");
      }
    }
    return new Result(List.copyOf(out.values()), skipped);
  }

  /** Endpoints from pods selected by labels: running, ready, not being deleted, with an IP. */
  static Result fromPods(Collection<JsonNode> pods, Settings s) {
    return fromPods(pods, s, List.of());
  }

  /**
   * Endpoints from pods, as {@link #fromPods(Collection, Settings)}, but served on the given ports (an InferencePool's
   * {@code targetPorts}) rather than the port each pod names: one endpoint per pod and port, its id
   * {@code namespace/pod} for the first port and {@code namespace/pod:port} for the others. With no ports, each pod's
   * own.
   */
  static Result fromPods(Collection<JsonNode> pods, Settings s, List<Integer> targetPorts) {
    Map<String, Endpoint> out = new TreeMap<>();
    Map<String, String> skipped = new TreeMap<>();
    for (JsonNode pod : pods) {
      JsonNode meta = pod.path("metadata");
      String name = meta.path("name").asText("");
      String ns = meta.path("namespace").asText("");
      String what = ns.isEmpty() ? name : ns + "/" + name;
      JsonNode status = pod.path("status");
      String ip = status.path("podIP").asText("");
      boolean deleting = !meta.path("deletionTimestamp").isMissingNode() && !meta.path("deletionTimestamp").isNull();
      if (deleting || ip.isEmpty() || !"Running".equals(status.path("phase").asText()) || !podReady(status)) {
        continue;
      }
      if (!targetPorts.isEmpty()) {
        for (int i = 0; i < targetPorts.size(); i++) {
          build(out, skipped, what, name, ns, ip, targetPorts.get(i), pod, "", s,
              i == 0 ? "" : ":" + targetPorts.get(i));
        }
        continue;
      }
      Integer port = podPort(pod, s);
      if (port == null) {
        skipped.put(what, "no serving port");
        continue;
      }
      build(out, skipped, what, name, ns, ip, port, pod, "", s, "");
    }
    return new Result(List.copyOf(out.values()), skipped);
  }

  private static void build(Map<String, Endpoint> out, Map<String, String> skipped, String what,
      @Nullable String podName, String podNs, String address, int port, @Nullable JsonNode pod, String zone,
      Settings s, String idSuffix) {
    String model = attribute(pod, PodAnnotations.MODEL);
    if (model == null) {
      model = s.defaultModel();
    }
    if (model == null || model.isBlank()) {
      skipped.put(what, "names no model (set the " + PodAnnotations.MODEL + " annotation or label)");
      return;
    }
    String id = podName != null ? (podNs.isEmpty() ? podName : podNs + "/" + podName) + idSuffix
        : address + ":" + port;
    if (out.containsKey(id)) {
      return; // the same pod in two slices while they are being rebalanced
    }
    String host = address.indexOf(':') >= 0 ? "[" + address + "]" : address;
    String scheme = attribute(pod, PodAnnotations.SCHEME);
    if (scheme == null || !(scheme.equals("http") || scheme.equals("https"))) {
      scheme = "http";
    }
    Map<String, String> labels = new LinkedHashMap<>();
    if (pod != null) {
      // The pod's own labels, so that a pool's selector (app: vllm-qwen3) matches; Kinference's own keys below win.
      for (Map.Entry<String, JsonNode> e : pod.path("metadata").path("labels").properties()) {
        if (e.getValue().isTextual()) {
          labels.put(e.getKey(), e.getValue().asText());
        }
      }
    }
    String pool = attribute(pod, PodAnnotations.POOL);
    if (pool == null) {
      pool = s.defaultPool();
    }
    if (pool != null) {
      labels.put(PodAnnotations.POOL, pool);
    }
    if (podName != null) {
      labels.put(PodAnnotations.POD_LABEL, podName);
      if (!podNs.isEmpty()) {
        labels.put(PodAnnotations.NAMESPACE_LABEL, podNs);
      }
    }
    if (!zone.isEmpty()) {
      labels.put(PodAnnotations.ZONE_LABEL, zone);
    }
    Integer metricsPort = numeric(attribute(pod, PodAnnotations.METRICS_PORT));
    if (metricsPort != null && metricsPort != port) {
      labels.put(EndpointLabels.METRICS_URI, scheme + "://" + host + ":" + metricsPort);
    }
    String kv = zmqAddress(attribute(pod, PodAnnotations.KV_EVENTS), host);
    if (kv != null) {
      labels.put(EndpointLabels.KV_EVENTS, kv);
      String topic = attribute(pod, PodAnnotations.KV_EVENTS_TOPIC);
      if (topic != null) {
        labels.put(EndpointLabels.KV_EVENTS_TOPIC, topic.replace("{pod-ip}", address)
            .replace("{pod-name}", podName == null ? "" : podName).replace("{port}", Integer.toString(port))
            .replace("{model}", model));
      }
      String replay = zmqAddress(attribute(pod, PodAnnotations.KV_EVENTS_REPLAY), host);
      if (replay != null) {
        labels.put(EndpointLabels.KV_EVENTS_REPLAY, replay);
      }
    }
    try {
      out.put(id, new Endpoint(id, URI.create(scheme + "://" + host + ":" + port), model.strip(), labels));
    } catch (IllegalArgumentException e) {
      skipped.put(what, e.getMessage());
    }
  }

  /** A ZeroMQ address from a port, a bind address ({@code tcp://*:5557}) or a full address; null if absent. */
  static @Nullable String zmqAddress(@Nullable String value, String host) {
    if (value == null || value.isBlank()) {
      return null;
    }
    String v = value.strip();
    Integer port = numeric(v);
    if (port != null) {
      return "tcp://" + host + ":" + port;
    }
    for (String wildcard : new String[] {"tcp://*:", "tcp://0.0.0.0:", "tcp://[::]:", "tcp://localhost:",
        "tcp://127.0.0.1:"}) {
      if (v.startsWith(wildcard)) {
        return "tcp://" + host + ":" + v.substring(wildcard.length());
      }
    }
    return v;
  }

  private static @Nullable Integer slicePort(JsonNode ports, @Nullable JsonNode pod, Settings s) {
    String wanted = attribute(pod, PodAnnotations.PORT);
    Integer number = numeric(wanted);
    if (number != null) {
      return number;
    }
    Integer byName = namedPort(ports, wanted != null ? wanted : s.portName());
    if (byName != null) {
      return byName;
    }
    if (wanted != null) {
      return null; // a port name that the Service does not expose
    }
    for (JsonNode p : ports) {
      if (p.has("port")) {
        return p.path("port").asInt();
      }
    }
    return null;
  }

  private static @Nullable Integer podPort(JsonNode pod, Settings s) {
    String wanted = attribute(pod, PodAnnotations.PORT);
    Integer number = numeric(wanted);
    if (number != null) {
      return number;
    }
    List<JsonNode> ports = new ArrayList<>();
    for (JsonNode c : pod.path("spec").path("containers")) {
      for (JsonNode p : c.path("ports")) {
        ports.add(p);
      }
    }
    String name = wanted != null ? wanted : s.portName();
    for (JsonNode p : ports) {
      if (name.equals(p.path("name").asText())) {
        return p.path("containerPort").asInt();
      }
    }
    if (wanted != null) {
      return null;
    }
    return ports.isEmpty() ? Integer.valueOf(s.defaultPort()) : Integer.valueOf(ports.get(0).path("containerPort")
        .asInt());
  }

  private static @Nullable Integer namedPort(JsonNode ports, String name) {
    for (JsonNode p : ports) {
      if (name.equals(p.path("name").asText())) {
        return p.path("port").asInt();
      }
    }
    return null;
  }

  private static boolean deleting(JsonNode pod) {
    JsonNode ts = pod.path("metadata").path("deletionTimestamp");
    return !ts.isMissingNode() && !ts.isNull();
  }

  private static boolean podReady(JsonNode status) {
    for (JsonNode c : status.path("conditions")) {
      if ("Ready".equals(c.path("type").asText())) {
        return "True".equals(c.path("status").asText());
      }
    }
    return false;
  }

  /** A pod's annotation, else its label of the same key; null if neither or blank. */
  static @Nullable String attribute(@Nullable JsonNode pod, String key) {
    if (pod == null) {
      return null;
    }
    JsonNode meta = pod.path("metadata");
    for (String where : new String[] {"annotations", "labels"}) {
      JsonNode v = meta.path(where).path(key);
      if (v.isTextual() && !v.asText().isBlank()) {
        return v.asText().strip();
      }
    }
    return null;
  }

  static @Nullable Integer numeric(@Nullable String v) {
    if (v == null || v.isEmpty() || v.length() > 5) {
      return null;
    }
    for (int i = 0; i < v.length(); i++) {
      if (!Character.isDigit(v.charAt(i))) {
        return null;
      }
    }
    int n = Integer.parseInt(v);
    return n >= 1 && n <= 65535 ? n : null;
  }
}
