/**
 * vLLM's Prometheus metrics: {@link dev.kinference.vllm.metrics.PrometheusText} parses the text exposition
 * format; {@link dev.kinference.vllm.metrics.MetricsScraper} polls every fleet member's {@code /metrics} and
 * {@code /health} and keeps its {@link dev.kinference.endpoint.EndpointState} current.
 */
@NullMarked
package dev.kinference.vllm.metrics;

import org.jspecify.annotations.NullMarked;
