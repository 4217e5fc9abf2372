package dev.kinference.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointSource;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The contract of {@link EndpointSource}: after {@code start} the listener receives complete sets of endpoints
 * with unique ids, the first one within {@link #firstDeliveryTimeout()}; {@code start} works once; {@code close} is
 * idempotent and ends deliveries.
 */
public abstract class EndpointSourceContract {

  /** For subclasses. */
  protected EndpointSourceContract() {}

  /** A fresh, unstarted source that will deliver at least one endpoint. */
  protected abstract EndpointSource createSource();

  /** How long the first delivery may take. Default 10 s. */
  protected Duration firstDeliveryTimeout() {
    return Duration.ofSeconds(10);
  }

  @Test
  void deliversACompleteSetWithUniqueIds() throws Exception {
    try (EndpointSource source = createSource()) {
      LinkedBlockingQueue<List<Endpoint>> deliveries = new LinkedBlockingQueue<>();
      source.start(deliveries::add);
      List<Endpoint> first = deliveries.poll(firstDeliveryTimeout().toMillis(), TimeUnit.MILLISECONDS);
      assertThat(first).as("first delivery").isNotNull().isNotEmpty();
      Set<String> ids = new HashSet<>();
      for (Endpoint e : first) {
        assertThat(ids.add(e.id())).as("unique id %s", e.id()).isTrue();
        assertThat(e.model()).isNotBlank();
      }
    }
  }

  @Test
  void startsOnlyOnce() {
    try (EndpointSource source = createSource()) {
      source.start(set -> { });
      assertThatThrownBy(() -> source.start(set -> { })).isInstanceOf(IllegalStateException.class);
    }
  }

  @Test
  void closeIsIdempotent() {
    EndpointSource source = createSource();
    source.start(set -> { });
    source.close();
    source.close();
  }

  @Test
  void nameIsStableLowerCaseAndNonBlank() {
    try (EndpointSource source = createSource()) {
      assertThat(source.name()).isNotBlank().matches("[a-z0-9][a-z0-9.-]*");
    }
  }
}
