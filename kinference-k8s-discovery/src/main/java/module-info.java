/** Kubernetes discovery for Kinference: EndpointSlice, pod and custom-resource watches over java.net.http. */
module dev.kinference.k8s {
  requires transitive dev.kinference.core;
  requires transitive dev.kinference.policy;
  requires static transitive org.jspecify;
  requires java.net.http;
  requires org.slf4j;
  requires org.snakeyaml.engine;

  exports dev.kinference.k8s;

  provides dev.kinference.endpoint.EndpointSource with dev.kinference.k8s.KubernetesEndpointSource;
}
