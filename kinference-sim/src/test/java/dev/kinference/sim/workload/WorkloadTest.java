package dev.kinference.sim.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kinference.sim.engine.FinishReason;
import dev.kinference.sim.engine.RequestOutcome;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkloadTest {

  private static final RequestOutcome DONE = new RequestOutcome("x", FinishReason.STOP, 1, 1, 0, 0, 1, 2, 0);

  @Test
  void textOfNWordsIsNTokens() {
    for (int n : new int[] {1, 7, 100, 1234}) {
      assertThat(Prompts.TOKENIZER.count(Prompts.text(n, n))).isEqualTo(n);
    }
    assertThat(Prompts.text(5, 50)).isEqualTo(Prompts.text(5, 50)).isNotEqualTo(Prompts.text(6, 50));
  }

  @Test
  void sharedPrefixRequestsOfAGroupShareTheSystemPromptTokens() {
    SharedPrefixWorkload w = new SharedPrefixWorkload("m", 2, 3, 400, 50, 10, null, 1);
    SplittableRandom r = new SplittableRandom(3);
    ClientRequest a = null;
    ClientRequest b = null;
    for (int i = 0; i < 50 && (a == null || b == null); i++) {
      ClientRequest c = Objects.requireNonNull(w.newSession(r, i).nextRequest());
      if (a == null) {
        a = c;
      } else if (!Arrays.equals(c.promptTokens(), a.promptTokens()) && sameGroup(a, c)) {
        b = c;
      }
    }
    assertThat(b).isNotNull();
    // role marker + 400 system tokens are common; the questions differ
    assertThat(commonPrefix(a.promptTokens(), b.promptTokens())).isBetween(401, 403);
    assertThat(a.promptTokens().length).isEqualTo(1 + 400 + 1 + 1 + 50 + 1 + 1);
    assertThat(a.maxTokens()).isEqualTo(10);
    assertThat(a.scriptedOutput()).isNull();
  }

  private static boolean sameGroup(ClientRequest a, ClientRequest b) {
    return commonPrefix(a.promptTokens(), b.promptTokens()) > 100;
  }

  private static int commonPrefix(int[] a, int[] b) {
    int i = 0;
    while (i < a.length && i < b.length && a[i] == b[i]) {
      i++;
    }
    return i;
  }

  @Test
  void aConversationsNextPromptStartsWithThePreviousPromptAndTheGeneratedAnswer() {
    MultiTurnWorkload w = new MultiTurnWorkload("m", 1, 100, 4, 4, 30, 20, Duration.ofSeconds(2), "t1", 9);
    Session s = w.newSession(new SplittableRandom(1), 0);
    ClientRequest first = Objects.requireNonNull(s.nextRequest());
    ClientRequest second = Objects.requireNonNull(s.nextRequest());
    int[] generated = Objects.requireNonNull(first.scriptedOutput());
    assertThat(generated).hasSize(20);
    assertThat(generated[generated.length - 1]).isEqualTo(Prompts.END_OF_TURN);
    int[] expectedStart = Arrays.copyOf(first.promptTokens(), first.promptTokens().length + generated.length);
    System.arraycopy(generated, 0, expectedStart, first.promptTokens().length, generated.length);
    assertThat(Arrays.copyOf(second.promptTokens(), expectedStart.length)).isEqualTo(expectedStart);
    assertThat(second.sessionId()).isEqualTo(first.sessionId()).isNotNull();
    assertThat(second.tenant()).isEqualTo("t1");
    assertThat(s.thinkTimeNanos(DONE)).isPositive();
    assertThat(s.nextRequest()).isNotNull();
    assertThat(s.nextRequest()).isNotNull();
    assertThat(s.nextRequest()).isNull();
  }

  @Test
  void uniquePromptsShareNoFullBlock() {
    UniquePromptWorkload w = new UniquePromptWorkload("m", 200, 5, null, 2);
    SplittableRandom r = new SplittableRandom(1);
    Set<Integer> seen = new HashSet<>();
    for (int i = 0; i < 20; i++) {
      ClientRequest c = Objects.requireNonNull(w.newSession(r, i).nextRequest());
      assertThat(c.promptTokens().length).isBetween(100, 301);
      assertThat(seen.add(Arrays.hashCode(Arrays.copyOf(c.promptTokens(), 16)))).isTrue();
    }
  }

  @Test
  void aTenantMixDrawsEachTenantByWeight() {
    TenantMixWorkload mix = new TenantMixWorkload(List.of(
        new TenantMixWorkload.Part("a", 3, new UniquePromptWorkload("m", 50, 5, "a", 1)),
        new TenantMixWorkload.Part("b", 1, new SharedPrefixWorkload("m", 2, 2, 40, 10, 5, "b", 1))));
    SplittableRandom r = new SplittableRandom(5);
    int a = 0;
    for (int i = 0; i < 400; i++) {
      if ("a".equals(Objects.requireNonNull(mix.newSession(r, i).nextRequest()).tenant())) {
        a++;
      }
    }
    assertThat(a).isBetween(260, 340);
    assertThatThrownBy(() -> new TenantMixWorkload(List.of())).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theMooncakeFixtureParsesAndSharedHashIdsAreSharedPrefixes() {
    MooncakeTrace trace = MooncakeTrace.read(new java.io.InputStreamReader(Objects.requireNonNull(
        getClass().getResourceAsStream("/traces/mooncake-sample.jsonl")), java.nio.charset.StandardCharsets.UTF_8),
        "m", 0, "fixture");
    assertThat(trace.entries()).hasSize(200);
    assertThat(trace.durationNanos()).isPositive();
    SplittableRandom r = new SplittableRandom(1);
    TimedWorkload.Timed first = Objects.requireNonNull(trace.nextTimedSession(r));
    assertThat(first.offsetNanos()).isZero();
    // two entries starting with the same hash id have the same first 512 tokens
    List<MooncakeTrace.Entry> entries = trace.entries();
    int i = -1;
    int j = -1;
    for (int x = 0; x < entries.size() && j < 0; x++) {
      for (int y = x + 1; y < entries.size(); y++) {
        long[] hx = entries.get(x).hashIds();
        long[] hy = entries.get(y).hashIds();
        if (hx.length > 1 && hy.length > 1 && hx[0] == hy[0] && entries.get(x).inputLength() > 512
            && entries.get(y).inputLength() > 512) {
          i = x;
          j = y;
          break;
        }
      }
    }
    assertThat(j).isPositive();
    int[] pi = Objects.requireNonNull(trace.newSession(r, i).nextRequest()).promptTokens();
    int[] pj = Objects.requireNonNull(trace.newSession(r, j).nextRequest()).promptTokens();
    assertThat(pi).hasSize(entries.get(i).inputLength());
    assertThat(Arrays.copyOf(pi, 512)).isEqualTo(Arrays.copyOf(pj, 512));
  }

  @Test
  void aMalformedTraceLineIsReportedWithItsNumber() {
    String trace = """
        {"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [1]}
        {"timestamp": 5, "input_length": 10, "output_length": 5
        """;
    assertThatThrownBy(() -> MooncakeTrace.read(new StringReader(trace), "m", 0, "t.jsonl"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("t.jsonl line 2 at column")
        .hasMessageContaining("malformed JSON").hasMessageNotContaining("REDACTED");
    String missing = "{\"timestamp\": 0, \"output_length\": 5, \"hash_ids\": []}\n";
    assertThatThrownBy(() -> MooncakeTrace.read(new StringReader(missing), "m", 0, "t.jsonl"))
        .hasMessageContaining("line 1").hasMessageContaining("input_length");
    String trailing = "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [1]} extra\n";
    assertThatThrownBy(() -> MooncakeTrace.read(new StringReader(trailing), "m", 0, "t.jsonl"))
        .hasMessageContaining("t.jsonl line 1").hasMessageContaining("malformed JSON");
    assertThatThrownBy(() -> MooncakeTrace.read(new StringReader("\n\n"), "m", 0, "empty.jsonl"))
        .hasMessageContaining("no requests");
  }

  @Test
  void aSynthesizedTraceRoundTrips() throws Exception {
    List<MooncakeTrace.Entry> entries = MooncakeTrace.synthesize(3, 30, 5, 2);
    java.io.StringWriter out = new java.io.StringWriter();
    MooncakeTrace.write(entries, out);
    MooncakeTrace back = MooncakeTrace.read(new StringReader(out.toString()), "m", 0, "s");
    assertThat(back.entries()).isEqualTo(entries);
  }

  @Test
  void theCommittedSampleTraceIsWhatMooncakeTraceWritesByDefault(@TempDir Path dir) throws Exception {
    // docs/BENCHMARKS.md and docs/PERFORMANCE.md generate their traces with this command line
    Path written = dir.resolve("sample.jsonl");
    MooncakeTrace.main(new String[] {written.toString()});
    try (var sample = Objects.requireNonNull(getClass().getResourceAsStream("/traces/mooncake-sample.jsonl"))) {
      assertThat(Files.readString(written)).isEqualTo(new String(sample.readAllBytes(), StandardCharsets.UTF_8));
    }
    Path larger = dir.resolve("larger.jsonl");
    MooncakeTrace.main(new String[] {larger.toString(), "300", "50", "4", "9"});
    java.io.StringWriter expected = new java.io.StringWriter();
    MooncakeTrace.write(MooncakeTrace.synthesize(9, 300, 50, 4), expected);
    assertThat(Files.readString(larger)).isEqualTo(expected.toString());
    assertThatThrownBy(() -> MooncakeTrace.synthesize(1, 10, 0, 4)).hasMessageContaining("rate above 0");
    assertThatThrownBy(() -> MooncakeTrace.synthesize(1, 0, 5, 4)).hasMessageContaining("0 requests");
  }
}
