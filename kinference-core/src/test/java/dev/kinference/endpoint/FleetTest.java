package dev.kinference.endpoint;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FleetTest {

  /**
   * Regression: the router now registers its scorers that are fleet listeners, so a custom scorer that registered
   * itself as well was told of every endpoint twice.
   */
  @Test
  void aListenerRegisteredTwiceIsToldOnce() {
    Fleet fleet = Fleet.of(List.of(Endpoint.of("e0", "http://127.0.0.1:9000", "m")));
    List<String> added = new ArrayList<>();
    FleetListener listener = new FleetListener() {
      @Override
      public void onEndpointAdded(EndpointState endpoint) {
        added.add(endpoint.id());
      }
    };
    fleet.addListener(listener);
    fleet.addListener(listener);
    assertThat(added).containsExactly("e0");
    fleet.setEndpoints(List.of(Endpoint.of("e0", "http://127.0.0.1:9000", "m"),
        Endpoint.of("e1", "http://127.0.0.1:9001", "m")));
    assertThat(added).containsExactly("e0", "e1");
  }
}
