package dev.kinference.gateway;

import dev.kinference.cache.CacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.policy.classify.DetectorFailures;
import java.util.List;
import java.util.function.IntSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's metrics, per tenant and endpoint. Names follow the OpenTelemetry GenAI semantic conventions where
 * one exists ({@code gen_ai.server.time_to_first_token}, {@code gen_ai.server.request.duration},
 * {@code gen_ai.server.time_per_output_token}, {@code gen_ai.client.token.usage},
 * {@code gen_ai.client.operation.duration}), with their attributes and recommended buckets, rendered as
 * OpenTelemetry's Prometheus exporter renders them (dots to underscores, the unit {@code s} as {@code _seconds}, an
 * annotation unit such as {@code {token}} dropped); the rest are {@code kinference_gateway_*}, the router's view of
 * each endpoint ({@link RouterViewMetrics}) and {@code kinference_build_info}. The mapping is in the gateway's README.
 * Thread-safe.
 */
final class GatewayMetrics {

  /** The labels of the GenAI server histograms: the conventions' attributes, plus tenant and endpoint. */
  static final String[] GEN_AI_LABELS = {"tenant", "gen_ai_operation_name", "gen_ai_provider_name",
      "gen_ai_request_model", "gen_ai_response_model", "endpoint"};

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
      "gen_ai.server.time_to_first_token: time from the request's arrival to the first content reaching the client "
          + "(streams that succeeded).", Metrics.GEN_AI_TTFT, GEN_AI_LABELS);
  final Metrics.Histogram duration = registry.histogram("gen_ai_server_request_duration_seconds",
      "gen_ai.server.request.duration: time from the request's arrival to its last byte.", Metrics.GEN_AI_DURATION,
      withLast(GEN_AI_LABELS, "error_type"));
  final Metrics.Histogram timePerOutputToken = registry.histogram("gen_ai_server_time_per_output_token_seconds",
      "gen_ai.server.time_per_output_token: time per output token after the first (streams that succeeded).",
      Metrics.GEN_AI_TPOT, GEN_AI_LABELS);
  final Metrics.Histogram tokenUsage = registry.histogram("gen_ai_client_token_usage",
      "gen_ai.client.token.usage: tokens per request, by type (input, output), as charged.", Metrics.TOKENS,
      withLast(GEN_AI_LABELS, "gen_ai_token_type"));
  final Metrics.Histogram operationDuration = registry.histogram("gen_ai_client_operation_duration_seconds",
      "gen_ai.client.operation.duration: the gateway as a client of its upstreams, one observation per attempt, "
          + "from sending it to its answer's end (or its failure).", Metrics.GEN_AI_DURATION,
      "gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "gen_ai_response_model", "endpoint",
      "server_address", "error_type");
  final Metrics.Histogram routingDuration = registry.histogram("kinference_gateway_routing_duration_seconds",
      "Time the router took to decide, by outcome (routed, refused, failed).", Metrics.ROUTING_SECONDS, "outcome");

  GatewayMetrics(Fleet fleet, IntSupplier queueDepth, IntSupplier active) {
    this(fleet, null, queueDepth, active);
  }

  GatewayMetrics(Fleet fleet, @Nullable CacheIndex cacheIndex, IntSupplier queueDepth, IntSupplier active) {
    RouterViewMetrics.register(registry, fleet, cacheIndex);
    BuildInfo.register(registry);
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

  private static String[] withLast(String[] labels, String last) {
    String[] all = java.util.Arrays.copyOf(labels, labels.length + 1);
    all[labels.length] = last;
    return all;
  }

  String render() {
    return registry.render();
  }
}
