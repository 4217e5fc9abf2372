package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.request.TrafficClass;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class HeaderClampsTest {

  @Test
  void everyClampIsCountedAndLoggedOncePerTenantAndHeaderPerMinute() {
    Metrics registry = new Metrics();
    Metrics.Counter counter = registry.counter("clamped_total", "help", "tenant", "header");
    AtomicLong now = new AtomicLong(42);
    HeaderClamps clamps = new HeaderClamps(counter, now::get);

    assertThat(clamps.priority("a", "x-kinference-priority", Integer.MAX_VALUE, 0)).isTrue();
    assertThat(clamps.priority("a", "x-kinference-priority", 7, 0)).as("same minute").isFalse();
    assertThat(clamps.priority("a", "priority", 7, 0)).as("another header").isTrue();
    assertThat(clamps.priority("b", "x-kinference-priority", 7, 0)).as("another tenant").isTrue();
    assertThat(clamps.trafficClass("a", "x-kinference-traffic-class", TrafficClass.INTERACTIVE,
        TrafficClass.BATCH)).isTrue();
    now.addAndGet(HeaderClamps.LOG_INTERVAL_NANOS - 1);
    assertThat(clamps.priority("a", "x-kinference-priority", 7, 0)).isFalse();
    now.addAndGet(1);
    assertThat(clamps.priority("a", "x-kinference-priority", 7, 0)).as("a minute later").isTrue();
    assertThat(clamps.priority("a", "x-kinference-priority", 7, 0)).isFalse();

    assertThat(counter.get("a", "x-kinference-priority")).isEqualTo(5);
    assertThat(counter.get("a", "priority")).isEqualTo(1);
    assertThat(counter.get("b", "x-kinference-priority")).isEqualTo(1);
    assertThat(counter.get("a", "x-kinference-traffic-class")).isEqualTo(1);
  }
}
