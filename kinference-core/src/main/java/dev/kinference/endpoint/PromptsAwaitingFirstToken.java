package dev.kinference.endpoint;

import dev.kinference.prompt.PrefixKeys;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The prompts a router sent to one endpoint that have not had their first token yet: queued there or in their
 * prefill. The server will hold their blocks before its KV events say so (vLLM caches a block once its prefill is
 * scheduled, and a request queued behind it then finds it), so a precise cache index counts them as held
 * ({@code PreciseCacheIndex}). Without them, requests sharing a long prefix that arrive while its first request is
 * still queued all looked cold, were spread by load, and each server computed the prefix again: with 18,000-token
 * system prompts every group then lived on every server, and past saturation the servers ran out of KV memory
 * (docs/BENCHMARKS.md, "Prompts still in their prefill").
 *
 * <p>Thread-safe and lock-free: a {@link ConcurrentHashMap} keyed by a token per dispatch; a lookup
 * reads a weakly consistent view, which routing tolerates. A prompt is held only until its first token or its end is
 * reported, so the map holds at most the endpoint's requests in flight (and never more than {@value #MAX_HELD}).
 */
public final class PromptsAwaitingFirstToken {

  /**
   * More prompts than any server queues: past it, a caller is not reporting its decisions, and the set starts over
   * rather than grow without bound (the credit is lost for a moment, never wrongly kept).
   */
  static final int MAX_HELD = 4096;

  /**
   * The shortest shared prefix credited, in tokens. A short one costs little to prefill again and little memory, and
   * crediting it moved conversations that shared only a 2,000-token system prompt onto the server where another was
   * still queued, against the load (multi-turn chats lost 0.8% of their peak goodput over 60 seeds); a long one is
   * what each server should compute once. The same length as {@code prefix-rendezvous}'s default for a long cold
   * prompt.
   */
  public static final int MIN_SHARED_TOKENS = 4096;

  private final ConcurrentHashMap<Object, PrefixKeys> byDispatch = new ConcurrentHashMap<>();

  /** An empty set; each {@link EndpointState} has its own. */
  PromptsAwaitingFirstToken() {}

  /** Whether a prompt with these keys is long enough that a prefix it shares could be credited. */
  public static boolean canCredit(PrefixKeys keys) {
    return keys.size() * (long) keys.blockSize() >= MIN_SHARED_TOKENS;
  }

  /**
   * Records {@code keys} as sent by {@code dispatch}, a key with identity equality that holds nothing else (a token
   * of its own, so an unreported dispatch keeps no request alive).
   */
  public void add(Object dispatch, PrefixKeys keys) {
    if (byDispatch.size() >= MAX_HELD) {
      byDispatch.clear();
    }
    byDispatch.put(dispatch, keys);
  }

  /** Forgets what {@code dispatch} sent; does nothing if it sent nothing or was forgotten already. */
  public void remove(Object dispatch) {
    byDispatch.remove(dispatch);
  }

  /**
   * The most leading blocks of {@code keys} that one prompt awaiting its first token shares, if they make at least
   * {@value #MIN_SHARED_TOKENS} tokens; else 0.
   */
  public int longestSharedPrefix(PrefixKeys keys) {
    if (byDispatch.isEmpty() || !canCredit(keys)) {
      return 0;
    }
    int longest = 0;
    for (PrefixKeys sent : byDispatch.values()) {
      longest = Math.max(longest, sent.sharedLeadingBlocks(keys));
    }
    return longest * (long) keys.blockSize() >= MIN_SHARED_TOKENS ? longest : 0;
  }

  /**
   * What an index that found {@code heldBlocks} of {@code keys} held on this endpoint counts as held: those, or the
   * longer prefix a prompt awaiting its first token here shares. The one place a lookup applies the credit.
   */
  public int credited(int heldBlocks, PrefixKeys keys) {
    return heldBlocks >= keys.size() ? heldBlocks : Math.max(heldBlocks, longestSharedPrefix(keys));
  }

  /** The number of prompts held. */
  public int size() {
    return byDispatch.size();
  }
}
