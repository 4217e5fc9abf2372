/**
 * Kinference on Kubernetes: endpoints discovered from EndpointSlices or pods
 * ({@link dev.kinference.k8s.KubernetesEndpointSource}, described by {@link dev.kinference.k8s.PodAnnotations}),
 * policy resources watched as custom resources, and the API-server configuration they share
 * ({@link dev.kinference.k8s.KubernetesConfig}). Everything speaks HTTP to the API server through
 * {@code java.net.http}; no Kubernetes client library is needed.
 */
@NullMarked
package dev.kinference.k8s;

import org.jspecify.annotations.NullMarked;
