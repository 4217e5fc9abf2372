package dev.kinference.sim.bench;

import java.util.Arrays;

/**
 * How much a router herds: within each window of one scrape interval, the share of that window's sends that the
 * busiest server got. Routers that act on stale load signals (and independent replicas that cannot see each other's
 * sends) pile a window's requests onto the server that looked idlest at the last scrape; a router that spreads
 * load keeps this near {@code 1 / servers}. Reports the mean over windows with at least as many sends as servers,
 * and the worst. Fed in send order; not thread-safe.
 */
final class Herding {

  private final long windowNanos;
  private final int[] sends;
  private long windowStart = Long.MIN_VALUE;
  private int windowSends;
  private double shareSum;
  private int windows;
  private double worst;

  Herding(int servers, long windowNanos) {
    if (servers < 1 || windowNanos <= 0) {
      throw new IllegalArgumentException("servers and window must be positive: " + servers + ", " + windowNanos);
    }
    this.sends = new int[servers];
    this.windowNanos = windowNanos;
  }

  /** A request was sent to {@code server} at {@code sentNanos}, not before the previous one's send. */
  void onSend(int server, long sentNanos) {
    if (windowStart == Long.MIN_VALUE || sentNanos - windowStart >= windowNanos) {
      closeWindow();
      windowStart = windowStart == Long.MIN_VALUE ? sentNanos
          : windowStart + (sentNanos - windowStart) / windowNanos * windowNanos;
    }
    sends[server]++;
    windowSends++;
  }

  private void closeWindow() {
    if (windowSends >= sends.length) {
      int max = 0;
      for (int s : sends) {
        max = Math.max(max, s);
      }
      double share = (double) max / windowSends;
      shareSum += share;
      windows++;
      worst = Math.max(worst, share);
    }
    Arrays.fill(sends, 0);
    windowSends = 0;
  }

  /** Mean over counted windows of the busiest server's share of sends; 0 when no window had enough sends. */
  double meanShare() {
    closeWindow();
    return windows == 0 ? 0 : shareSum / windows;
  }

  /** The largest share seen in any counted window. */
  double worstShare() {
    closeWindow();
    return worst;
  }
}
