package dev.kinference.endpoint;

/**
 * Told when endpoints join or leave a {@link Fleet}. Called under the fleet's update lock, in order; must not call
 * back into {@link Fleet#setEndpoints}.
 */
public interface FleetListener {

  /** {@code endpoint} joined, with a slot no other live endpoint holds. */
  default void onEndpointAdded(EndpointState endpoint) {}

  /** {@code endpoint} left (it is now draining); forget what is known of its cache. */
  default void onEndpointRemoved(EndpointState endpoint) {}
}
