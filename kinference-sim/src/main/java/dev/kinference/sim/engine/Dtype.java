package dev.kinference.sim.engine;

/** A numeric format for weights, activations or the KV cache. */
public enum Dtype {
  BF16(2),
  FP8(1);

  private final int bytes;

  Dtype(int bytes) {
    this.bytes = bytes;
  }

  /** Bytes per element. */
  public int bytes() {
    return bytes;
  }
}
