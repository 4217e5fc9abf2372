package dev.kinference.gateway;

import dev.kinference.policy.model.Tenant;
import dev.kinference.request.TrafficClass;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports a request's {@code x-kinference-priority} or {@code x-kinference-traffic-class} (or body {@code priority})
 * clamped to its tenant's {@link Tenant.Traffic}: every clamp is counted in
 * {@code kinference_gateway_header_clamped_total}, and logged at INFO at most once per tenant and header per
 * minute (a client repeating its ask must not flood the log), with the number of clamps left unlogged since.
 * Thread-safe.
 */
final class HeaderClamps {

  private static final Logger log = LoggerFactory.getLogger(HeaderClamps.class);
  static final long LOG_INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);

  private final Metrics.Counter counter;
  private final LongSupplier ticker;
  /** Per tenant and header; as many as there are tenants, times three. */
  private final ConcurrentHashMap<String, Window> windows = new ConcurrentHashMap<>();

  HeaderClamps(Metrics.Counter counter, LongSupplier ticker) {
    this.counter = counter;
    this.ticker = ticker;
  }

  private static final class Window {
    long nextLogNanos;
    long unlogged;

    Window(long now) {
      this.nextLogNanos = now;
    }
  }

  /**
   * A priority asked for in {@code header} clamped to {@code got}.
   *
   * @return whether it was logged
   */
  boolean priority(String tenant, String header, int asked, int got) {
    String why = asked > got ? "its maxPriority" : "the lowest priority";
    return report(tenant, header, Integer.toString(asked), Integer.toString(got), why);
  }

  /**
   * A traffic class the tenant may not use clamped to its default class.
   *
   * @return whether it was logged
   */
  boolean trafficClass(String tenant, String header, TrafficClass asked, TrafficClass got) {
    return report(tenant, header, name(asked), name(got), "its defaultClass; it may not use " + name(asked));
  }

  private boolean report(String tenant, String header, String asked, String got, String why) {
    counter.inc(tenant, header);
    long now = ticker.getAsLong();
    Window w = windows.computeIfAbsent(tenant + '\n' + header, k -> new Window(now));
    long unlogged;
    synchronized (w) {
      if (now - w.nextLogNanos < 0) {
        w.unlogged++;
        return false;
      }
      w.nextLogNanos = now + LOG_INTERVAL_NANOS;
      unlogged = w.unlogged;
      w.unlogged = 0;
    }
    log.info("tenant {} asked for {} {}, clamped to {} ({}){}", tenant, header, asked, got, why,
        unlogged == 0 ? "" : "; " + unlogged + " more clamps since the last message");
    return true;
  }

  private static String name(TrafficClass c) {
    return c.name().toLowerCase(Locale.ROOT);
  }
}
