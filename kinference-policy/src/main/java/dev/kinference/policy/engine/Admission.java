package dev.kinference.policy.engine;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.policy.limits.Reservation;
import dev.kinference.policy.model.Price;
import dev.kinference.policy.model.Tenant;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.Usage;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A request admitted by {@link Governance#reserve}: its rate limits and budget are reserved until it is settled.
 * End it exactly once with {@link #settle} (it completed), {@link #fail} (it failed after being sent) or {@link
 * #cancel} (it was never sent: the router refused it); later calls do nothing. {@link #close} settles an admission
 * left open as if it used its whole reservation, so a stream that ended without a usage report is never recorded as
 * free.
 *
 * <p>Thread-safe: the first ending call wins.
 */
public final class Admission implements AutoCloseable {

  /** What each reserved demand counts. */
  enum Kind {
    REQUESTS,
    TOKENS,
    CONCURRENT,
    COST
  }

  private final Governance governance;
  private final InferenceRequest request;
  private final String tenant;
  private final String model;
  private final @Nullable Tenant tenantResource;
  private final int estimatedInputTokens;
  private final int reservedOutputTokens;
  private final Price estimatePrice;
  private final Reservation.Granted granted;
  private final List<Kind> kinds;
  private final AtomicBoolean ended = new AtomicBoolean();

  Admission(Governance governance, InferenceRequest request, String tenant, String model,
      @Nullable Tenant tenantResource, int estimatedInputTokens, int reservedOutputTokens, Price estimatePrice,
      Reservation.Granted granted, List<Kind> kinds) {
    this.governance = governance;
    this.request = request;
    this.tenant = tenant;
    this.model = model;
    this.tenantResource = tenantResource;
    this.estimatedInputTokens = estimatedInputTokens;
    this.reservedOutputTokens = reservedOutputTokens;
    this.estimatePrice = estimatePrice;
    this.granted = granted;
    this.kinds = List.copyOf(kinds);
  }

  /** The request to send: the original, with {@code max_tokens} set to the reserved budget if it had none. */
  public InferenceRequest request() {
    return request;
  }

  /** The tenant's name in accounting. */
  public String tenant() {
    return tenant;
  }

  /** The currency of this request's cost: its tenant's budget currency, else {@link Governance#DEFAULT_CURRENCY}. */
  public String currency() {
    Tenant t = tenantResource;
    Tenant.Budget b = t == null ? null : t.spec().budget();
    return b == null ? Governance.DEFAULT_CURRENCY : b.currency();
  }

  /** The model name in accounting (the public model requested). */
  public String model() {
    return model;
  }

  public int estimatedInputTokens() {
    return estimatedInputTokens;
  }

  public int reservedOutputTokens() {
    return reservedOutputTokens;
  }

  /** When the reservation was made, in the store's milliseconds (its sliding windows place it there). */
  public long reservedAtMillis() {
    return granted.atMillis();
  }

  /** The estimated cost reserved against the budget, in micro-units. */
  public long estimatedCostMicros() {
    return estimatePrice.costMicros(estimatedInputTokens, 0, reservedOutputTokens);
  }

  /** Whether the admission was settled, failed or cancelled. */
  public boolean ended() {
    return ended.get();
  }

  /**
   * The usage to report when the server gave none (a stream cut off or sent without {@code include_usage}): the
   * estimated input and the output tokens seen.
   */
  public Usage estimatedUsage(int observedOutputTokens) {
    return new Usage(estimatedInputTokens, 0, Math.max(0, observedOutputTokens));
  }

  /** The request completed with this usage. */
  public void settle(Usage usage) {
    end(usage, null, false);
  }

  /** The request completed with this usage on {@code servedBy} (whose pool or provider price applies). */
  public void settle(Usage usage, @Nullable Endpoint servedBy) {
    end(usage, servedBy, false);
  }

  /** The request failed after it was sent; {@code usage} is what it used anyway ({@link Usage#UNKNOWN} if none). */
  public void fail(Usage usage) {
    end(usage, null, true);
  }

  /** The request failed on {@code servedBy} after it was sent. */
  public void fail(Usage usage, @Nullable Endpoint servedBy) {
    end(usage, servedBy, true);
  }

  /** The request was never sent (refused by the router or its policy): releases everything, counts a refusal. */
  public void cancel() {
    if (ended.compareAndSet(false, true)) {
      governance.cancelled(this, granted);
    }
  }

  /** Settles an admission still open as if it used its whole reservation. */
  @Override
  public void close() {
    settle(estimatedUsage(reservedOutputTokens));
  }

  private void end(Usage usage, @Nullable Endpoint servedBy, boolean failed) {
    if (!ended.compareAndSet(false, true)) {
      return;
    }
    Price price = servedBy == null ? estimatePrice
        : Governance.priceFor(governance.config(), tenantResource, model, servedBy);
    int cached = Math.min(usage.cachedPromptTokens(), usage.promptTokens());
    long cost = price.costMicros(usage.promptTokens() - cached, cached, usage.completionTokens());
    long[] actual = new long[kinds.size()];
    for (int i = 0; i < actual.length; i++) {
      actual[i] = switch (kinds.get(i)) {
        case REQUESTS -> 1;
        case TOKENS -> (long) usage.promptTokens() + usage.completionTokens();
        case CONCURRENT -> 0;
        case COST -> cost;
      };
    }
    governance.settled(this, granted, actual, usage, cost, failed);
  }

  @Override
  public String toString() {
    return "Admission[" + tenant + " " + model + " ~" + estimatedInputTokens + "+" + reservedOutputTokens
        + " tokens" + (ended.get() ? ", ended" : "") + "]";
  }
}
