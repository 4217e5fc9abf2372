package dev.kinference.vllm.kvevents;

import dev.kinference.endpoint.Health;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The sequence logic of one {@link KvEventSubscriber}, without sockets or threads: messages, silences and lost
 * connections go in; what to do comes out as a list of {@link Action}s in the order they must be carried out (apply
 * a batch, clear the endpoint's entries, report a gap or restart, reject a frame, replace the live socket). The one
 * question it asks the outside world is the replay socket's answer, through a {@link ReplaySource}; tests answer it
 * from a list.
 *
 * <p>The rules are those listed on {@link KvEventSubscriber}: first message, restart (sequence not above the last),
 * gap (repaired through the replay socket when it can be), a lost connection (entries rebuilt), and a silence
 * (checked against the replay socket's copy of the last batch applied, byte for byte). Replayed replies are kept only
 * when their topic frame starts with the subscribed topic (replies without a topic frame, from older servers, pass).
 *
 * <p>Not thread-safe: one subscriber thread drives it.
 */
final class KvEventSequencer {

  static final long NONE = -1;
  /** The sequence number of the replay socket's end marker ({@code ff..ff}). */
  static final long END_OF_REPLAY = -1;

  /** The replay socket, asked for everything it buffers from a sequence number on. */
  @FunctionalInterface
  interface ReplaySource {
    /**
     * The replies to a replay request from {@code from}, each reply's frames after the empty delimiter ({@code [seq,
     * payload]} or {@code [topic, seq, payload]}), in order, up to and including the end marker or the first
     * malformed reply; null when the socket did not answer in time.
     */
    @Nullable List<byte[][]> fetch(long from);
  }

  /** One thing for the subscriber to do. */
  sealed interface Action {
    /** Decode and apply this batch; {@code replayed} when it came from the replay socket. */
    @SuppressWarnings("ArrayRecordComponent") // a frame handed on as is
    record Apply(long seq, byte[] payload, boolean replayed) implements Action {}

    /** Clear the endpoint's entries: what the index holds can no longer be trusted. */
    record Clear(String why) implements Action {}

    /** Batches {@code expected} up to {@code received - 1} were missed; {@code repaired} if the replay filled them. */
    record Gap(long expected, long received, boolean repaired) implements Action {}

    /** The server restarted: its sequence went from {@code last} to {@code received}. */
    record Restart(long last, long received) implements Action {}

    /** A connection that had delivered was lost and is back; the entries are rebuilt. */
    record Reconnected(long seq) implements Action {}

    /** A frame was rejected for {@code reason}. */
    record Reject(String reason) implements Action {}

    /** The live socket looks deaf: close it and connect a new one. */
    record ReplaceSocket() implements Action {}
  }

  /** One parsed replay reply. */
  @SuppressWarnings("ArrayRecordComponent") // a frame handed on as is
  private record Replayed(long seq, byte[] payload) {}

  private final byte[] topic;
  private final @Nullable ReplaySource replay;
  private final long checkAfterNanos;

  private long lastSeq = NONE;
  // the last batch applied, as received: a replay of it must match byte for byte
  private byte @Nullable [] lastPayload;
  // a connection that had delivered was reported lost: the next message proves nothing by its number
  private boolean disconnected;
  // of the current live socket
  private boolean delivered;
  private boolean lostSinceLastMessage;
  private boolean seenDown;
  private long silentSince;

  /**
   * @param topic the subscribed topic prefix
   * @param replay the replay socket, or null for none
   * @param checkAfterNanos how long a silence lasts before it is checked
   */
  KvEventSequencer(byte[] topic, @Nullable ReplaySource replay, long checkAfterNanos) {
    this.topic = topic.clone();
    this.replay = replay;
    this.checkAfterNanos = checkAfterNanos;
  }

  /** The last sequence number handed out to apply, or {@link #NONE}. */
  long lastSequence() {
    return lastSeq;
  }

  /** A new live socket was connected at {@code nowNanos}. */
  void socketOpened(long nowNanos) {
    silentSince = nowNanos;
    delivered = false;
    lostSinceLastMessage = false;
    seenDown = false;
  }

  /** The live socket's connection was reported lost. */
  void onDisconnected() {
    // Only a connection this socket was receiving on can have missed a restart: one that never delivered (JeroMQ
    // closes a fresh connection whose handshake stalls) leaves the first message to the usual checks.
    disconnected |= delivered;
    lostSinceLastMessage = true;
  }

  /** A live message of {@code frames} arrived at {@code nowNanos}. */
  List<Action> onMessage(List<byte[]> frames, long nowNanos) {
    silentSince = nowNanos;
    delivered = true;
    lostSinceLastMessage = false;
    seenDown = false; // a socket that delivers is not deaf: the sequence tells of a restart
    List<Action> out = new ArrayList<>(2);
    if (frames.size() != 3) {
      out.add(new Action.Reject("expected 3 frames [topic, seq, payload], got " + frames.size()));
      return out;
    }
    byte[] seqBytes = frames.get(1);
    if (seqBytes.length != 8) {
      out.add(new Action.Reject("sequence frame has " + seqBytes.length + " bytes, expected 8"));
      return out;
    }
    long seq = toLong(seqBytes);
    if (seq == END_OF_REPLAY) {
      out.add(new Action.Reject("live message carries the end-of-replay sequence"));
      return out;
    }
    if (disconnected) {
      disconnected = false;
      if (lastSeq != NONE) {
        // The server may have restarted meanwhile and published past our last number: its numbers prove nothing
        // now. Rebuild as a new subscriber would: clear, then replay what the server still buffers.
        out.add(new Action.Reconnected(seq));
        if (Long.compareUnsigned(seq, lastSeq) <= 0) {
          out.add(new Action.Restart(lastSeq, seq));
        }
        out.add(new Action.Clear("connection lost and re-established at sequence " + Long.toUnsignedString(seq)));
        lastSeq = NONE;
      }
    }
    if (lastSeq == NONE) {
      if (seq != 0 && replay != null) {
        replay(0, seq, out);
      }
    } else if (Long.compareUnsigned(seq, lastSeq) <= 0) {
      long last = lastSeq;
      out.add(new Action.Clear("sequence went from " + Long.toUnsignedString(last) + " to "
          + Long.toUnsignedString(seq) + ": server restarted"));
      out.add(new Action.Restart(last, seq));
      if (seq != 0 && replay != null) {
        replay(0, seq, out);
      }
    } else if (seq != lastSeq + 1) {
      long expected = lastSeq + 1;
      int before = out.size();
      boolean repaired = replay != null && replay(expected, seq, out);
      // a replay with a hole has cleared the entries already and applied what followed it: keep those
      if (!repaired && !out.subList(before, out.size()).stream().anyMatch(a -> a instanceof Action.Clear)) {
        clear(out, "batches " + Long.toUnsignedString(expected) + ".." + Long.toUnsignedString(seq - 1)
            + (replay == null ? " lost (no replay socket)" : " lost and not replayed"));
      }
      out.add(new Action.Gap(expected, seq, repaired));
    }
    apply(seq, frames.get(2), false, out);
    return out;
  }

  /**
   * Nothing arrived on the live socket until {@code nowNanos}; the endpoint's health is {@code health}. A silence
   * longer than the check interval, or a server whose health went down and came back, is checked: with a replay
   * socket, against the server's copy of the last batch applied; without one, a socket is replaced only when its
   * connection was reported lost or it never delivered. The list ends with {@link Action.ReplaceSocket} when the
   * socket should be replaced.
   */
  List<Action> onSilence(long nowNanos, Health health) {
    boolean cameBack = seenDown && health == Health.HEALTHY;
    seenDown = health == Health.UNHEALTHY || (seenDown && !cameBack);
    if (!cameBack && nowNanos - silentSince <= checkAfterNanos) {
      return List.of();
    }
    List<Action> out = new ArrayList<>();
    boolean replace = replay != null ? !checkAfterSilence(out) : lostSinceLastMessage || !delivered;
    if (replace) {
      out.add(new Action.ReplaceSocket());
    } else {
      silentSince = nowNanos;
    }
    return out;
  }

  /**
   * Replays batches {@code [from, to)} into {@code out}. Returns whether every one of them is there; on a hole the
   * entries are cleared first and the remaining batches applied on top.
   */
  private boolean replay(long from, long to, List<Action> out) {
    List<Replayed> answer = fetch(from, out);
    if (answer == null) {
      return false;
    }
    boolean complete = true;
    long next = from;
    for (Replayed r : answer) {
      if (Long.compareUnsigned(r.seq(), next) < 0 || Long.compareUnsigned(r.seq(), to) >= 0) {
        continue;
      }
      if (r.seq() != next) {
        complete = false;
        clear(out, "the server no longer buffers batches " + Long.toUnsignedString(next) + ".."
            + Long.toUnsignedString(r.seq() - 1));
      }
      apply(r.seq(), r.payload(), true, out);
      next = r.seq() + 1;
    }
    if (next != to) {
      if (complete) {
        clear(out, "the server no longer buffers batches " + Long.toUnsignedString(next) + ".."
            + Long.toUnsignedString(to - 1));
      }
      complete = false;
    }
    return complete;
  }

  /**
   * After a silence, asks the replay socket for everything from the last batch applied (from the first it buffers,
   * when none was applied yet: they are applied). Returns true when the server is current and quiet: it still holds
   * that batch, byte for byte, and nothing newer. Newer batches are applied (the live socket missed them: false, so
   * it is replaced). A server that no longer holds that batch as we saw it restarted, or moved on past its buffer:
   * the entries are rebuilt from what it still buffers (false). No answer: nothing is known, so the entries stay and
   * the socket is replaced (false).
   */
  private boolean checkAfterSilence(List<Action> out) {
    long last = lastSeq;
    byte[] lastSeen = lastPayload;
    if (last == NONE || lastSeen == null) {
      // Nothing applied yet: the socket may have been deaf from the start, or the server idle. Either way, what the
      // server buffers is where a new subscriber starts; the socket is replaced.
      List<Replayed> buffered = fetch(0, out);
      if (buffered != null) {
        disconnected = false; // what is applied now comes from the server as it is
        applyWhileConsecutive(buffered, out);
      }
      return false;
    }
    List<Replayed> answer = fetch(last, out);
    if (answer == null) {
      return false;
    }
    disconnected = false; // the server's answer vouches for the entries, or rebuilds them, below
    if (!answer.isEmpty() && answer.get(0).seq() == last && Arrays.equals(answer.get(0).payload(), lastSeen)) {
      applyWhileConsecutive(answer.subList(1, answer.size()), out); // after a hole, the next message reports a gap
      return answer.size() == 1;
    }
    boolean wentBack = answer.isEmpty() || Long.compareUnsigned(answer.get(0).seq(), last) <= 0;
    long now = answer.isEmpty() ? 0 : answer.get(0).seq();
    if (wentBack) {
      out.add(new Action.Restart(last, now));
      clear(out, "the server no longer holds batch " + Long.toUnsignedString(last) + " as it was: it restarted");
    } else {
      out.add(new Action.Gap(last + 1, now, false));
      clear(out, "batches " + Long.toUnsignedString(last + 1) + ".." + Long.toUnsignedString(now - 1)
          + " are no longer buffered by the server");
    }
    lastSeq = NONE;
    List<Replayed> rebuilt = wentBack ? fetch(0, out) : answer;
    if (rebuilt != null) {
      applyWhileConsecutive(rebuilt, out);
    }
    return false;
  }

  /** Applies replayed batches in order while each follows the last one applied (any first one after a clear). */
  private void applyWhileConsecutive(List<Replayed> batches, List<Action> out) {
    for (Replayed r : batches) {
      if (lastSeq != NONE && r.seq() != lastSeq + 1) {
        return;
      }
      apply(r.seq(), r.payload(), true, out);
    }
  }

  /**
   * The replay socket's answer from {@code from} on, in order, without the end marker and without replies of other
   * topics; null (after a {@link Action.Reject}) when a reply is malformed, or when the socket did not answer.
   */
  private @Nullable List<Replayed> fetch(long from, List<Action> out) {
    ReplaySource source = replay;
    List<byte[][]> replies = source == null ? null : source.fetch(from);
    if (replies == null) {
      return null;
    }
    List<Replayed> answer = new ArrayList<>(replies.size());
    for (byte[][] frames : replies) {
      // [seq, payload] (older servers) or [topic, seq, payload] (newer)
      if (frames.length != 2 && frames.length != 3) {
        out.add(new Action.Reject("replay reply has " + frames.length
            + " frames, expected [seq, payload] or [topic, seq, payload]"));
        return null;
      }
      byte[] seqBytes = frames[frames.length - 2];
      if (seqBytes.length != 8) {
        out.add(new Action.Reject("replay sequence frame has " + seqBytes.length + " bytes, expected 8"));
        return null;
      }
      long seq = toLong(seqBytes);
      if (seq == END_OF_REPLAY) {
        return answer;
      }
      // The topic filter holds for replays as for the live socket (a ZeroMQ subscription: a prefix). Regression: a
      // subscriber filtered to another topic applied every replayed batch.
      if (frames.length == 3 && !hasPrefix(frames[0], topic)) {
        continue;
      }
      answer.add(new Replayed(seq, frames[frames.length - 1]));
    }
    // no end marker: the answer was cut short; what arrived is still in order
    return answer;
  }

  /** Whether a reply (frames after the delimiter) ends a replay: the end marker, or a malformed reply. */
  static boolean endsReplay(List<byte[]> frames) {
    if (frames.size() != 2 && frames.size() != 3) {
      return true;
    }
    byte[] seqBytes = frames.get(frames.size() - 2);
    return seqBytes.length != 8 || toLong(seqBytes) == END_OF_REPLAY;
  }

  private void apply(long seq, byte[] payload, boolean replayed, List<Action> out) {
    lastSeq = seq;
    lastPayload = payload;
    out.add(new Action.Apply(seq, payload, replayed));
  }

  private static void clear(List<Action> out, String why) {
    out.add(new Action.Clear(why));
  }

  private static boolean hasPrefix(byte[] frame, byte[] prefix) {
    return frame.length >= prefix.length && Arrays.equals(frame, 0, prefix.length, prefix, 0, prefix.length);
  }

  static long toLong(byte[] b) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (b[i] & 0xff);
    }
    return v;
  }

  static byte[] toBytes(long v) {
    byte[] b = new byte[8];
    for (int i = 7; i >= 0; i--) {
      b[i] = (byte) v;
      v >>>= 8;
    }
    return b;
  }
}
