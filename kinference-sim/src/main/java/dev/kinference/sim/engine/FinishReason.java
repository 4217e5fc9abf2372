package dev.kinference.sim.engine;

/** Why a request ended, as vLLM's {@code finished_reason} label and the OpenAI {@code finish_reason} say it. */
public enum FinishReason {
  /** The scripted output ended (the model emitted its end-of-sequence token). */
  STOP("stop"),
  /** {@code max_tokens} output tokens were generated. */
  LENGTH("length"),
  /** The request was aborted (client gone, or the engine restarted). */
  ABORT("abort");

  private final String wireName;

  FinishReason(String wireName) {
    this.wireName = wireName;
  }

  /** vLLM's lower-case name. */
  public String wireName() {
    return wireName;
  }
}
