/**
 * Kinference gateway: the reference OpenAI/Anthropic-compatible HTTP gateway and the {@code kinference} command
 * line.
 */
module dev.kinference.gateway {
  requires transitive dev.kinference.core;
  requires transitive dev.kinference.cloud;
  requires static transitive org.jspecify;
  requires dev.kinference.vllm;
  requires transitive dev.kinference.policy;
  requires dev.kinference.k8s;
  requires dev.kinference.sim;
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
  requires info.picocli;
  requires org.slf4j;
  // traces: the API (no-op without an SDK) and the SDK's autoconfiguration from OTEL_* variables
  requires transitive io.opentelemetry.api;
  requires io.opentelemetry.context;
  requires io.opentelemetry.sdk;
  requires io.opentelemetry.sdk.autoconfigure;
  requires io.opentelemetry.sdk.autoconfigure.spi;

  exports dev.kinference.gateway;

  // The commands are not API: picocli reaches them reflectively.
  opens dev.kinference.gateway.cli to info.picocli;
}
