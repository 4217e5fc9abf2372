package dev.kinference.request;

/**
 * Whether a request is latency-sensitive or can wait. Batch traffic is admitted only where capacity is idle and is
 * queued behind interactive traffic.
 */
public enum TrafficClass {
  INTERACTIVE,
  BATCH
}
