package dev.kinference.vllm.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.endpoint.Health;
import dev.kinference.vllm.kvevents.KvEventSequencer.Action;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The subscriber's sequence, gap, restart and silence rules without sockets or threads: sequence numbers and a
 * replay buffer in, actions out, written as one line each ({@code apply 3}, {@code replay 1} for a replayed apply,
 * {@code clear}, {@code gap 1..2 repaired}, {@code restart 9->0}, {@code reject}, {@code reconnected},
 * {@code replace}).
 */
class KvEventSequencerTest {

  static final byte[] TOPIC = "kv@pod@model".getBytes(StandardCharsets.UTF_8);
  static final long CHECK_AFTER = 1_000;

  /** What the fake replay socket buffers: the batches the server published, by sequence number. */
  final List<byte[][]> buffer = new ArrayList<>();
  boolean replayAnswers = true;
  int replayRequests;

  KvEventSequencer withReplay() {
    return new KvEventSequencer(TOPIC, this::fetch, CHECK_AFTER);
  }

  KvEventSequencer withoutReplay() {
    return new KvEventSequencer(TOPIC, null, CHECK_AFTER);
  }

  @Nullable List<byte[][]> fetch(long from) {
    replayRequests++;
    if (!replayAnswers) {
      return null;
    }
    List<byte[][]> replies = new ArrayList<>();
    for (byte[][] reply : buffer) {
      byte[] seq = reply[reply.length - 2];
      if (seq.length != 8 || Long.compareUnsigned(KvEventSequencer.toLong(seq), from) >= 0) {
        replies.add(reply);
      }
    }
    replies.add(new byte[][] {TOPIC, KvEventSequencer.toBytes(-1), new byte[0]});
    return replies;
  }

  /** The server publishes (and buffers) batches {@code from..to}, payload "b<seq>". */
  void buffered(long from, long to) {
    for (long s = from; s <= to; s++) {
      buffer.add(new byte[][] {TOPIC, KvEventSequencer.toBytes(s), payload(s)});
    }
  }

  static byte[] payload(long seq) {
    return ("b" + seq).getBytes(StandardCharsets.US_ASCII);
  }

  static List<byte[]> live(long seq) {
    return List.of(TOPIC, KvEventSequencer.toBytes(seq), payload(seq));
  }

  static String render(List<Action> actions) {
    return actions.stream().map(a -> switch (a) {
      case Action.Apply p -> (p.replayed() ? "replay " : "apply ") + p.seq()
          + (new String(p.payload(), StandardCharsets.US_ASCII).equals("b" + p.seq()) ? "" : "'");
      case Action.Clear c -> "clear";
      case Action.Gap g -> "gap " + g.expected() + ".." + (g.received() - 1) + (g.repaired() ? " repaired" : "");
      case Action.Restart r -> "restart " + r.last() + "->" + r.received();
      case Action.Reconnected r -> "reconnected";
      case Action.Reject r -> "reject";
      case Action.ReplaceSocket r -> "replace";
    }).collect(Collectors.joining(", "));
  }

  /** Feeds live sequence numbers in order; returns the actions of the last one. */
  static String feed(KvEventSequencer s, long... seqs) {
    String last = "";
    for (long seq : seqs) {
      last = render(s.onMessage(live(seq), 0));
    }
    return last;
  }

  @ParameterizedTest(name = "after {0}, live {1} with the server buffering {2}: {3}")
  @CsvSource(delimiter = '|', textBlock = """
      # applied so far | live | server buffers | actions
      -                | 0    | 0..0           | apply 0
      0 1 2            | 3    | 0..3           | apply 3
      -                | 3    | 0..3           | replay 0, replay 1, replay 2, apply 3
      -                | 3    | 2..3           | clear, replay 2, apply 3
      0 1              | 4    | 0..4           | replay 2, replay 3, gap 2..3 repaired, apply 4
      0 1              | 5    | 3..5           | clear, replay 3, replay 4, gap 2..4, apply 5
      0 1              | 5    | 0..1           | clear, gap 2..4, apply 5
      5 6 7            | 2    | 0..2           | clear, restart 7->2, replay 0, replay 1, apply 2
      5 6 7            | 0    | 0..0           | clear, restart 7->0, apply 0
      5 6 7            | 7    | 0..7           | clear, restart 7->7, replay 0, replay 1, replay 2, replay 3, replay 4, replay 5, replay 6, apply 7
      """)
  void liveMessagesWithAReplaySocket(String applied, long live, String buffers, String expected) {
    KvEventSequencer s = withReplay();
    String[] range = buffers.split("\\.\\.");
    buffered(Long.parseLong(range[0]), Long.parseLong(range[1]));
    if (!applied.equals("-")) {
      for (String seq : applied.split(" ")) {
        s.onMessage(live(Long.parseLong(seq)), 0);
      }
    }
    assertThat(render(s.onMessage(live(live), 0))).isEqualTo(expected);
  }

  @ParameterizedTest(name = "after {0}, live {1}: {2}")
  @CsvSource(delimiter = '|', textBlock = """
      -       | 3 | apply 3
      0 1 2   | 3 | apply 3
      0 1     | 4 | clear, gap 2..3, apply 4
      5 6 7   | 2 | clear, restart 7->2, apply 2
      """)
  void liveMessagesWithoutAReplaySocket(String applied, long live, String expected) {
    KvEventSequencer s = withoutReplay();
    if (!applied.equals("-")) {
      for (String seq : applied.split(" ")) {
        s.onMessage(live(Long.parseLong(seq)), 0);
      }
    }
    assertThat(render(s.onMessage(live(live), 0))).isEqualTo(expected);
    assertThat(replayRequests).isZero();
  }

  @Test
  void aReplaySocketThatDoesNotAnswerLeavesAnUnrepairedGap() {
    KvEventSequencer s = withReplay();
    feed(s, 0, 1);
    replayAnswers = false;
    assertThat(feed(s, 4)).isEqualTo("clear, gap 2..3, apply 4");
  }

  @Test
  void sequenceNumbersAtAndAbove2To63AreUnsigned() {
    KvEventSequencer s = withoutReplay();
    long big = Long.MIN_VALUE; // 2^63
    feed(s, big - 1);
    assertThat(feed(s, big)).isEqualTo("apply " + big);
    assertThat(feed(s, big + 1)).isEqualTo("apply " + (big + 1));
  }

  @Test
  void malformedLiveFramesAreRejectedAndChangeNothing() {
    KvEventSequencer s = withoutReplay();
    feed(s, 0);
    assertThat(render(s.onMessage(List.of(TOPIC, KvEventSequencer.toBytes(1)), 0))).isEqualTo("reject");
    assertThat(render(s.onMessage(List.of(TOPIC, new byte[] {0, 1, 2}, payload(1)), 0))).isEqualTo("reject");
    assertThat(render(s.onMessage(live(-1), 0))).isEqualTo("reject");
    assertThat(s.lastSequence()).isZero();
    assertThat(feed(s, 1)).isEqualTo("apply 1");
  }

  @Test
  void aLostConnectionRebuildsTheEntriesFromWhatTheServerBuffers() {
    KvEventSequencer s = withReplay();
    buffered(0, 4);
    feed(s, 0, 1, 2);
    s.onDisconnected();
    // the same numbers continue, but they prove nothing after a lost connection
    assertThat(feed(s, 4)).isEqualTo("reconnected, clear, replay 0, replay 1, replay 2, replay 3, apply 4");
    assertThat(feed(s, 5)).isEqualTo("apply 5");
  }

  @Test
  void aLostConnectionWhoseNumbersWentBackIsAlsoARestart() {
    KvEventSequencer s = withReplay();
    feed(s, 0, 1, 2, 3);
    buffered(0, 1);
    s.onDisconnected();
    assertThat(feed(s, 1)).isEqualTo("reconnected, restart 3->1, clear, replay 0, apply 1");
  }

  @Test
  void aConnectionLostBeforeAnythingWasDeliveredCostsNoRebuild() {
    KvEventSequencer s = withReplay();
    s.socketOpened(0);
    s.onDisconnected();
    buffered(0, 1);
    assertThat(feed(s, 1)).isEqualTo("replay 0, apply 1");
  }

  @Test
  void aShortSilenceIsNotChecked() {
    KvEventSequencer s = withReplay();
    feed(s, 0);
    assertThat(s.onSilence(CHECK_AFTER, Health.HEALTHY)).isEmpty();
    assertThat(replayRequests).isZero();
  }

  @Test
  void aServerThatIsCurrentAndQuietKeepsTheSocket() {
    KvEventSequencer s = withReplay();
    buffered(0, 2);
    feed(s, 0, 1, 2);
    assertThat(s.onSilence(CHECK_AFTER + 1, Health.HEALTHY)).isEmpty();
    assertThat(replayRequests).isEqualTo(1);
    // the silence is measured again from the check
    assertThat(s.onSilence(2 * CHECK_AFTER, Health.HEALTHY)).isEmpty();
    assertThat(replayRequests).isEqualTo(1);
  }

  @Test
  void batchesTheLiveSocketMissedAreAppliedAfterASilenceAndTheSocketReplaced() {
    KvEventSequencer s = withReplay();
    buffered(0, 4);
    feed(s, 0, 1, 2);
    assertThat(render(s.onSilence(CHECK_AFTER + 1, Health.HEALTHY))).isEqualTo("replay 3, replay 4, replace");
    assertThat(feed(s, 5)).isEqualTo("apply 5");
  }

  /**
   * Regression: a server that restarted unheard and had published past the last number seen passed the silence
   * check (same number, different batch). The batch is compared byte for byte.
   */
  @Test
  void aServerThatRestartedUnheardIsDetectedAfterASilence() {
    KvEventSequencer s = withReplay();
    feed(s, 0, 1, 2);
    // the new process has published 0..4, with other contents
    for (long seq = 0; seq <= 4; seq++) {
      buffer.add(new byte[][] {TOPIC, KvEventSequencer.toBytes(seq), ("new" + seq).getBytes(StandardCharsets.UTF_8)});
    }
    assertThat(render(s.onSilence(CHECK_AFTER + 1, Health.HEALTHY)))
        .isEqualTo("restart 2->2, clear, replay 0', replay 1', replay 2', replay 3', replay 4', replace");
  }

  @Test
  void aServerThatMovedPastItsBufferIsRebuiltFromWhatItHolds() {
    KvEventSequencer s = withReplay();
    feed(s, 0, 1, 2);
    buffered(6, 7);
    assertThat(render(s.onSilence(CHECK_AFTER + 1, Health.HEALTHY)))
        .isEqualTo("gap 3..5, clear, replay 6, replay 7, replace");
  }

  @Test
  void aSilenceWithoutAnswerKeepsTheEntriesAndReplacesTheSocket() {
    KvEventSequencer s = withReplay();
    feed(s, 0);
    replayAnswers = false;
    assertThat(render(s.onSilence(CHECK_AFTER + 1, Health.HEALTHY))).isEqualTo("replace");
  }

  /**
   * Regression: a fresh subscriber whose live socket never delivered stayed empty. What the server buffers is
   * applied after a silence.
   */
  @Test
  void aSocketThatNeverDeliveredLearnsFromTheReplaySocket() {
    KvEventSequencer s = withReplay();
    s.socketOpened(0);
    buffered(0, 2);
    assertThat(render(s.onSilence(CHECK_AFTER + 1, Health.HEALTHY))).isEqualTo("replay 0, replay 1, replay 2, replace");
    assertThat(feed(s, 3)).isEqualTo("apply 3");
  }

  @Test
  void aServerWhoseHealthWentDownAndCameBackIsCheckedAtOnce() {
    KvEventSequencer s = withReplay();
    buffered(0, 1);
    feed(s, 0, 1);
    assertThat(s.onSilence(1, Health.UNHEALTHY)).isEmpty();
    assertThat(replayRequests).isZero();
    assertThat(s.onSilence(2, Health.HEALTHY)).isEmpty(); // checked: still current
    assertThat(replayRequests).isEqualTo(1);
  }

  @ParameterizedTest(name = "delivered {0}, connection lost {1}: {2}")
  @CsvSource({"true, false, ''", "false, false, replace", "true, true, replace"})
  void withoutAReplaySocketASilentSocketIsReplacedOnlyWhenLostOrNeverHeard(boolean delivered, boolean lost,
      String expected) {
    KvEventSequencer s = withoutReplay();
    s.socketOpened(0);
    if (delivered) {
      feed(s, 0);
    }
    if (lost) {
      s.onDisconnected();
    }
    assertThat(render(s.onSilence(CHECK_AFTER + 1, Health.HEALTHY))).isEqualTo(expected);
  }

  /** Regression: a subscriber filtered to another topic got no live events, then applied every batch by replay. */
  @Test
  void theTopicFilterHoldsForReplays() {
    KvEventSequencer s = new KvEventSequencer("someone-else@".getBytes(StandardCharsets.UTF_8), this::fetch,
        CHECK_AFTER);
    s.socketOpened(0);
    buffered(0, 127);
    assertThat(render(s.onSilence(CHECK_AFTER + 1, Health.HEALTHY))).isEqualTo("replace");
    assertThat(s.lastSequence()).isEqualTo(KvEventSequencer.NONE);
  }

  @Test
  void replayRepliesWithoutATopicFrameComeFromOlderServersAndPass() {
    KvEventSequencer s = withReplay();
    for (long seq = 0; seq <= 2; seq++) {
      buffer.add(new byte[][] {KvEventSequencer.toBytes(seq), payload(seq)});
    }
    assertThat(feed(s, 3)).isEqualTo("replay 0, replay 1, replay 2, apply 3");
  }

  @Test
  void aMalformedReplayReplyIsRejectedAndTheGapLeftUnrepaired() {
    KvEventSequencer s = withReplay();
    feed(s, 0);
    buffer.add(new byte[][] {TOPIC, new byte[] {1}, payload(1)});
    assertThat(feed(s, 3)).isEqualTo("reject, clear, gap 1..2, apply 3");
  }

  @Test
  void endOfReplayIsTheAllOnesSequenceOrAMalformedReply() {
    assertThat(KvEventSequencer.endsReplay(List.of(KvEventSequencer.toBytes(-1), new byte[0]))).isTrue();
    assertThat(KvEventSequencer.endsReplay(List.of(TOPIC, KvEventSequencer.toBytes(-1), new byte[0]))).isTrue();
    assertThat(KvEventSequencer.endsReplay(List.of(TOPIC, KvEventSequencer.toBytes(3), payload(3)))).isFalse();
    assertThat(KvEventSequencer.endsReplay(List.of(payload(3)))).isTrue();
  }
}
