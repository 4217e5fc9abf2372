package dev.kinference.endpoint;

/** Whether the router may send new requests to an endpoint. */
public enum Health {
  /** Serving; also the state of an endpoint nobody has checked yet. */
  HEALTHY,
  /** Not answering, or {@code /health} said 503; recovers by itself when checks pass again. */
  UNHEALTHY,
  /** Leaving the fleet: no new requests, in-flight ones finish. */
  DRAINING
}
