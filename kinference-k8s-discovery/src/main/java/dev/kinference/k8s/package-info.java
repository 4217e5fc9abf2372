/**
 * Kinference on Kubernetes: endpoints discovered from EndpointSlices or pods
 * ({@link dev.kinference.k8s.KubernetesEndpointSource}, described by {@link dev.kinference.k8s.PodAnnotations}) and
 * policy resources watched as custom resources ({@link dev.kinference.k8s.PolicyResourceSource}), with fabric8
 * kubernetes-client shared informers on its {@code java.net.http} transport; the configuration is found by
 * {@link dev.kinference.k8s.KubernetesConfigs}.
 */
@NullMarked
package dev.kinference.k8s;

import org.jspecify.annotations.NullMarked;
