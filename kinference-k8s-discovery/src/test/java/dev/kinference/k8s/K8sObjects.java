package dev.kinference.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;

/** Pods and EndpointSlices as the API server returns them, built as JSON. */
final class K8sObjects {

  static final String NS = "llm";
  static final String PODS = "/api/v1/namespaces/" + NS + "/pods";
  static final String SLICES = "/apis/discovery.k8s.io/v1/namespaces/" + NS + "/endpointslices";

  private K8sObjects() {}

  /** A vLLM pod with the usual annotations, running, ready or not. */
  static ObjectNode pod(String name, String ip, boolean ready, String model) {
    ObjectNode pod = EndpointMapper.JSON.createObjectNode();
    pod.put("apiVersion", "v1");
    pod.put("kind", "Pod");
    ObjectNode meta = pod.putObject("metadata");
    meta.put("name", name);
    meta.put("namespace", NS);
    meta.putObject("labels").put("app", "vllm").put(PodAnnotations.POOL, "qwen3-pool");
    ObjectNode ann = meta.putObject("annotations");
    ann.put(PodAnnotations.MODEL, model);
    ann.put(PodAnnotations.KV_EVENTS, "tcp://*:5557");
    ann.put(PodAnnotations.KV_EVENTS_TOPIC, "kv@{pod-ip}:{port}@{model}");
    ObjectNode container = pod.putObject("spec").putArray("containers").addObject();
    container.put("name", "vllm");
    container.put("image", "vllm/vllm-openai");
    ArrayNode ports = container.putArray("ports");
    ports.addObject().put("name", "http").put("containerPort", 8000);
    ports.addObject().put("name", "kv-events").put("containerPort", 5557);
    ObjectNode status = pod.putObject("status");
    status.put("phase", "Running");
    status.put("podIP", ip);
    status.putArray("conditions").addObject().put("type", "Ready").put("status", ready ? "True" : "False");
    return pod;
  }

  /** An EndpointSlice of service {@code service}; each address maps to {pod name, ready, terminating}. */
  static ObjectNode slice(String name, String service, Map<String, Object[]> addresses) {
    ObjectNode s = EndpointMapper.JSON.createObjectNode();
    s.put("apiVersion", "discovery.k8s.io/v1");
    s.put("kind", "EndpointSlice");
    ObjectNode meta = s.putObject("metadata");
    meta.put("name", name);
    meta.put("namespace", NS);
    meta.putObject("labels").put("kubernetes.io/service-name", service);
    s.put("addressType", "IPv4");
    s.putArray("ports").addObject().put("name", "http").put("port", 8000).put("protocol", "TCP");
    ArrayNode eps = s.putArray("endpoints");
    new java.util.TreeMap<>(addresses).forEach((ip, v) -> {
      ObjectNode ep = eps.addObject();
      ep.putArray("addresses").add(ip);
      ObjectNode c = ep.putObject("conditions");
      c.put("ready", (Boolean) v[1]);
      c.put("serving", (Boolean) v[1] || (Boolean) v[2]);
      c.put("terminating", (Boolean) v[2]);
      ep.putObject("targetRef").put("kind", "Pod").put("name", (String) v[0]).put("namespace", NS);
      ep.put("zone", "zone-a");
    });
    return s;
  }

  static Object[] at(String pod, boolean ready, boolean terminating) {
    return new Object[] {pod, ready, terminating};
  }

  static ObjectNode copy(JsonNode n) {
    return (ObjectNode) n.deepCopy();
  }
}
