package dev.kinference.vllm.kvevents;

/**
 * A KV-event frame could not be decoded: truncated, not msgpack, or not the shape vLLM publishes. The message says
 * what was wrong and at which byte. Nothing of the frame was applied.
 */
public final class KvEventFormatException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public KvEventFormatException(String message) {
    super(message);
  }

  public KvEventFormatException(String message, Throwable cause) {
    super(message, cause);
  }
}
