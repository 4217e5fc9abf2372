package dev.kinference.gateway;

import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.policy.classify.DetectorFailures;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * The gateway's metrics, per tenant and endpoint. Names follow the OpenTelemetry GenAI semantic conventions where
 * one exists ({@code gen_ai.server.time_to_first_token}, {@code gen_ai.server.request.duration},
 * {@code gen_ai.server.time_per_output_token}, {@code gen_ai.client.token.usage}), rendered as Prometheus names
 * (dots to underscores, the unit {@code s} as {@code _seconds}); the rest are {@code kinference_gateway_*}.
 * Thread-safe.
 */
final class GatewayMetrics {

  final Metrics registry = new Metrics();

  final Metrics.Counter requests = registry.counter("kinference_gateway_requests_total",
      "Requests answered, by tenant, requested model, endpoint that served them and HTTP status.",
      "tenant", "model", "endpoint", "status");
  final Metrics.Counter errors = registry.counter("kinference_gateway_errors_total",
      "Requests that failed, by error type (client_error, rate_limited, no_capacity, upstream, timeout, "
          + "client_disconnect, mid_stream).",
      "tenant", "model", "endpoint", "error_type");
  final Metrics.Counter tokens = registry.counter("kinference_gateway_tokens_total",
      "Tokens as the servers reported them: input (whole prompt), cached (prompt tokens served from the prefix "
          + "cache) and output.",
      "tenant", "model", "endpoint", "type");
  final Metrics.Counter cost = registry.counter("kinference_gateway_cost_total",
      "Cost of the tokens used at the price table's prices (USD unless the table says otherwise).",
      "tenant", "model", "endpoint");
  final Metrics.Counter decisions = registry.counter("kinference_gateway_routing_decisions_total",
      "Dispatches by the reason the endpoint was chosen: prefix_cache (expected cached prefix), load (no cached "
          + "prefix: least predicted wait), retry (next alternate after a failure), fallback (external provider).",
      "endpoint", "reason");
  final Metrics.Counter retries = registry.counter("kinference_gateway_retries_total",
      "Attempts abandoned before the first byte reached the client and retried elsewhere, by failed endpoint and "
          + "cause.",
      "endpoint", "cause");
  final Metrics.Counter fallbacks = registry.counter("kinference_gateway_fallbacks_total",
      "Requests served by an external provider.", "tenant", "model", "endpoint");
  final Metrics.Counter rateLimited = registry.counter("kinference_gateway_rate_limit_refusals_total",
      "Requests refused with 429 by a tenant limit.", "tenant", "model");
  final Metrics.Counter headerClamped = registry.counter("kinference_gateway_header_clamped_total",
      "Requests whose x-kinference-priority or x-kinference-traffic-class (or body priority) asked for more than "
          + "their tenant's traffic policy allows, and were clamped to it, by tenant and header (priority: the "
          + "body's field).",
      "tenant", "header");
  /** Counts and logs (rate-limited) the clamped headers. */
  final HeaderClamps clamps = new HeaderClamps(headerClamped, System::nanoTime);
  final Metrics.Counter queued = registry.counter("kinference_gateway_queued_total",
      "Requests that waited in the gateway queue because every endpoint they may use was saturated, by outcome "
          + "(dispatched, timeout, full, cancelled).",
      "tenant", "outcome");
  final Metrics.Histogram queueWait = registry.histogram("kinference_gateway_queue_wait_seconds",
      "Time spent in the gateway queue.", Metrics.SECONDS, "tenant");
  final Metrics.Histogram ttft = registry.histogram("gen_ai_server_time_to_first_token_seconds",
      "Time from the request's arrival to the first content reaching the client (streams).", Metrics.SECONDS,
      "tenant", "gen_ai_request_model", "endpoint");
  final Metrics.Histogram duration = registry.histogram("gen_ai_server_request_duration_seconds",
      "Time from the request's arrival to its last byte.", Metrics.SECONDS,
      "tenant", "gen_ai_request_model", "gen_ai_operation_name", "endpoint", "error_type");
  final Metrics.Histogram timePerOutputToken = registry.histogram("gen_ai_server_time_per_output_token_seconds",
      "Time per output token after the first (streams).", Metrics.SECONDS,
      "tenant", "gen_ai_request_model", "endpoint");
  final Metrics.Histogram tokenUsage = registry.histogram("gen_ai_client_token_usage",
      "Tokens per request, by type (input, output).", Metrics.TOKENS,
      "tenant", "gen_ai_request_model", "endpoint", "gen_ai_token_type");

  GatewayMetrics(Fleet fleet, IntSupplier queueDepth, IntSupplier active) {
    registry.gauge("kinference_gateway_active_requests",
        "Requests being handled now: queued, waiting for a first token, or streaming.",
        out -> out.accept(new Metrics.Gauge.Sample(List.of(), active.getAsInt())));
    registry.gauge("kinference_gateway_prefix_cache_hit_ratio",
        "Cached prompt tokens / prompt tokens, as the servers reported them, per endpoint.", out -> {
          for (EndpointState e : fleet.endpoints()) {
            double input = tokens.sum(null, null, e.id(), "input");
            if (input > 0) {
              out.accept(new Metrics.Gauge.Sample(List.of(e.id()), tokens.sum(null, null, e.id(), "cached") / input));
            }
          }
        }, "endpoint");
    registry.gauge("kinference_gateway_endpoint_in_flight",
        "Requests the router has in flight per endpoint.", out -> {
          for (EndpointState e : fleet.endpoints()) {
            out.accept(new Metrics.Gauge.Sample(List.of(e.id(), e.health().name().toLowerCase(java.util.Locale.ROOT)),
                e.inFlight()));
          }
        }, "endpoint", "health");
    registry.gauge("kinference_gateway_queue_depth", "Requests waiting in the gateway queue.",
        out -> out.accept(new Metrics.Gauge.Sample(List.of(), queueDepth.getAsInt())));
    registry.observedCounter("kinference_personal_data_detector_failures_total",
        "Personal-data detections that failed (an analyzer that errs, is unreachable or too slow), by detector and "
            + "reason; each such request was treated as personal and kept local.",
        out -> DetectorFailures.snapshot().forEach((k, v) -> out.accept(new Metrics.Gauge.Sample(k, v))),
        "detector", "reason");
  }

  String render() {
    return registry.render();
  }
}
