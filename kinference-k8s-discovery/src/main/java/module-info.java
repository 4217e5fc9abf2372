/**
 * Kubernetes discovery for Kinference: EndpointSlice, pod and custom-resource informers (fabric8
 * kubernetes-client on its {@code java.net.http} transport).
 *
 * <p>The fabric8 jars are automatic modules named after their files. {@code kubernetes-client} (the implementation,
 * loaded reflectively by {@code KubernetesClientBuilder}) shares packages with {@code kubernetes-client-api}, so at
 * run time both must be on the class path, not the module path (the gateway and its image run on the class path).
 */
module dev.kinference.k8s {
  requires transitive dev.kinference.core;
  requires transitive dev.kinference.policy;
  requires static transitive org.jspecify;
  requires transitive kubernetes.client.api;
  requires kubernetes.model.core;
  requires kubernetes.model.common;
  requires kubernetes.model.discovery;
  requires io.fabric8.kubernetes.client.jdkhttp;
  requires java.net.http;
  requires org.slf4j;

  exports dev.kinference.k8s;

  provides dev.kinference.endpoint.EndpointSource with dev.kinference.k8s.KubernetesEndpointSource;
}
