/**
 * Kinference as the endpoint picker (EPP) of the Gateway API Inference Extension: {@link
 * dev.kinference.epp.EndpointPicker} speaks Envoy's ext_proc v3, {@link dev.kinference.epp.EppServer} serves it with
 * gRPC health, {@link dev.kinference.epp.EppCommand} is {@code kinference epp}.
 */
@NullMarked
package dev.kinference.epp;

import org.jspecify.annotations.NullMarked;
