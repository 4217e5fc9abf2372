package dev.kinference.k8s;

/**
 * How a watch is carried. The API server offers both; the events are the same JSON watch events either way.
 */
public enum WatchTransport {
  /** A long-lived chunked HTTP GET, one JSON event per line, as client-go and kubectl do. The default. */
  HTTP_STREAM,
  /** A WebSocket upgrade of the same GET, one JSON event per message, as the fabric8 client does. */
  WEBSOCKET
}
