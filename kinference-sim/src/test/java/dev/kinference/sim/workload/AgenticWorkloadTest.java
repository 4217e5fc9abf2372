package dev.kinference.sim.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

class AgenticWorkloadTest {

  private static final String MODEL = "m";

  /** A small shape for driving whole sessions quickly: the same structure, contexts of 2,000 tokens. */
  private static AgenticShape small(int forkPercent) {
    return new AgenticShape(300, 2_000, 2, 20, 100, 40, Duration.ofSeconds(2), forkPercent, 8, 200_000);
  }

  private static List<ClientRequest> drive(Session session) {
    List<ClientRequest> out = new ArrayList<>();
    ClientRequest r;
    while ((r = session.nextRequest()) != null) {
      out.add(r);
    }
    return out;
  }

  private static boolean startsWith(int[] array, int[] prefix) {
    return array.length >= prefix.length && Arrays.equals(array, 0, prefix.length, prefix, 0, prefix.length);
  }

  private static int[] concat(int[] a, int @Nullable [] b) {
    int[] tail = Objects.requireNonNull(b);
    int[] out = Arrays.copyOf(a, a.length + tail.length);
    System.arraycopy(tail, 0, out, a.length, tail.length);
    return out;
  }

  @Test
  void sessionsOpenWithTheSharedSystemPromptAndAContextOf55kTokensOnAverage() {
    AgenticWorkload w = AgenticShape.codingAgent(262_144).workload(MODEL, 7);
    SplittableRandom random = new SplittableRandom(1);
    int n = 600;
    long total = 0;
    int[] system = null;
    for (int i = 0; i < n; i++) {
      int[] prompt = Objects.requireNonNull(w.newSession(random, i).nextRequest()).promptTokens();
      total += prompt.length - 3_000;
      if (system == null) {
        system = Arrays.copyOf(prompt, 3_000);
      }
      assertThat(startsWith(prompt, system)).as("session %d opens with the shared system prompt", i).isTrue();
    }
    // lognormal, sigma 0.6: the sample mean of 600 is within about 3% of 55,000 (one standard error is 1.5%)
    assertThat(total / (double) n).isBetween(51_000.0, 59_000.0);
  }

  @Test
  void sessionsRunTwoToTwentyTurnsAndEachTurnRepeatsThePreviousPromptAndTheAnswerTheServerGenerated() {
    AgenticWorkload w = small(0).workload(MODEL, 3);
    SplittableRandom random = new SplittableRandom(2);
    int fewest = Integer.MAX_VALUE;
    int most = 0;
    for (int s = 0; s < 300; s++) {
      List<ClientRequest> turns = drive(w.newSession(random, s));
      fewest = Math.min(fewest, turns.size());
      most = Math.max(most, turns.size());
      for (int t = 1; t < turns.size(); t++) {
        ClientRequest previous = turns.get(t - 1);
        int[] answered = concat(previous.promptTokens(), previous.scriptedOutput());
        ClientRequest next = turns.get(t);
        assertThat(startsWith(next.promptTokens(), answered)).as("turn %d extends turn %d", t, t - 1).isTrue();
        assertThat(next.promptTokens().length).as("a tool output follows the answer")
            .isGreaterThanOrEqualTo(answered.length + 32);
        assertThat(next.sessionId()).isEqualTo(previous.sessionId());
        assertThat(next.request().sessionId()).isEqualTo(previous.sessionId());
      }
    }
    assertThat(fewest).isEqualTo(2);
    assertThat(most).isEqualTo(20);
  }

  @Test
  void aSubagentStartsFromItsParentsContextAtTheForkUnderItsOwnSession() {
    AgenticWorkload w = small(100).workload(MODEL, 5);
    SplittableRandom random = new SplittableRandom(3);
    Session parent = w.newSession(random, 0);
    ClientRequest first = Objects.requireNonNull(parent.nextRequest());
    assertThat(w.pendingForks()).isEqualTo(1);
    Session subagent = w.newSession(random, 1);
    assertThat(w.pendingForks()).isZero();
    List<ClientRequest> subTurns = drive(subagent);
    assertThat(subTurns).hasSizeBetween(2, 8);
    int[] parentAtFork = concat(first.promptTokens(), first.scriptedOutput());
    for (ClientRequest r : subTurns) {
      assertThat(startsWith(r.promptTokens(), parentAtFork)).as("every subagent turn shares the parent's prefix")
          .isTrue();
      assertThat(r.sessionId()).isEqualTo(first.sessionId() + "-sub0");
    }
    assertThat(w.pendingForks()).as("subagents fork no further").isZero();
    assertThat(subTurns.get(0).promptTokens().length).as("the subagent's task follows the parent's context")
        .isGreaterThan(parentAtFork.length);
  }

  @Test
  void withoutForksEverySessionIsTopLevel() {
    AgenticWorkload w = small(0).workload(MODEL, 5);
    SplittableRandom random = new SplittableRandom(4);
    for (int s = 0; s < 20; s++) {
      drive(w.newSession(random, s));
      assertThat(w.pendingForks()).isZero();
    }
  }

  @Test
  void theSeedDecidesTheSessionsAndTheRunsGeneratorDoesNot() {
    int[] a = Objects.requireNonNull(small(10).workload(MODEL, 9).newSession(new SplittableRandom(1), 0)
        .nextRequest()).promptTokens();
    int[] b = Objects.requireNonNull(small(10).workload(MODEL, 9).newSession(new SplittableRandom(99), 0)
        .nextRequest()).promptTokens();
    int[] c = Objects.requireNonNull(small(10).workload(MODEL, 10).newSession(new SplittableRandom(1), 0)
        .nextRequest()).promptTokens();
    assertThat(a).isEqualTo(b);
    assertThat(c).isNotEqualTo(a);
  }

  @Test
  void sessionsEndBeforeTheServersMaxModelLen() {
    AgenticShape shape = new AgenticShape(300, 6_000, 20, 20, 2_000, 40, Duration.ZERO, 0, 20, 12_000);
    AgenticWorkload w = shape.workload(MODEL, 1);
    SplittableRandom random = new SplittableRandom(5);
    for (int s = 0; s < 50; s++) {
      for (ClientRequest r : drive(w.newSession(random, s))) {
        assertThat(r.promptTokens().length + r.maxTokens()).isLessThanOrEqualTo(12_000);
      }
    }
  }

  @Test
  void invalidShapesAreRefusedNamingEverySetting() {
    assertThatThrownBy(() -> new AgenticShape(3_000, 55_000, 5, 2, 1_000, 300, Duration.ofSeconds(2), 10, 8,
        262_144)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("turns 5-2");
    assertThatThrownBy(() -> new AgenticShape(3_000, 55_000, 2, 20, 1_000, 300, Duration.ofSeconds(2), 101, 8,
        262_144)).hasMessageContaining("fork 101%");
    assertThatThrownBy(() -> new AgenticShape(3_000, 55_000, 2, 20, 1_000, 300, Duration.ofSeconds(2), 10, 8,
        2_000)).hasMessageContaining("max context 2000");
    assertThatThrownBy(() -> AgenticShape.of(List.of(1, 2, 3), 100_000)).hasMessageContaining("eight numbers");
    assertThat(AgenticShape.of(List.of(3000, 55000, 2, 20, 1000, 300, 2000, 10), 100_000))
        .isEqualTo(AgenticShape.codingAgent(100_000));
  }
}
