/**
 * Kinference gateway: the reference OpenAI/Anthropic-compatible HTTP gateway, as a library. The {@code kinference}
 * command line that runs it is module {@code dev.kinference.cli}.
 */
module dev.kinference.gateway {
  requires transitive dev.kinference.core;
  requires transitive dev.kinference.cloud;
  requires static transitive org.jspecify;
  requires dev.kinference.vllm;
  requires transitive dev.kinference.policy;
  // found by ServiceLoader for redis:// state stores; required so that the module graph always has it
  requires dev.kinference.state.redis;
  requires java.net.http;
  requires com.github.benmanes.caffeine;
  requires org.eclipse.jetty.server;
  requires org.eclipse.jetty.client;
  requires org.eclipse.jetty.http2.server;
  requires org.eclipse.jetty.http;
  requires org.eclipse.jetty.io;
  requires org.eclipse.jetty.util;
  requires org.slf4j;
  // traces: the API (no-op without an SDK) and the SDK's autoconfiguration from OTEL_* variables
  requires transitive io.opentelemetry.api;
  requires io.opentelemetry.context;
  requires io.opentelemetry.sdk;
  requires io.opentelemetry.sdk.autoconfigure;
  requires io.opentelemetry.sdk.autoconfigure.spi;

  exports dev.kinference.gateway;
}
