package dev.kinference.prompt;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The approximate tokenizer's piece boundaries, whatever the scan does to be fast. */
class ApproximateTokenizerPiecesTest {

  private final ApproximateTokenizer tokenizer = new ApproximateTokenizer();

  /** The ids of the pieces, each encoded alone (every piece is one token). */
  private int[] piecewise(String... pieces) {
    List<Integer> ids = new ArrayList<>();
    for (String p : pieces) {
      int[] one = tokenizer.encode(p);
      assertThat(one).as("piece '%s'", p).hasSize(1);
      ids.add(one[0]);
    }
    return ids.stream().mapToInt(Integer::intValue).toArray();
  }

  @Test
  void cutsWordsDigitsSpacesAndNewlines() {
    String text = "Hello world 12345\n\n  xyzzyplugh,é😀 a\tb";
    assertThat(tokenizer.encode(text)).containsExactly(piecewise("Hello", " world", " ", "123", "45", "\n\n", " ",
        " xyzzyp", "lugh", ",", "é", "😀", " a", "\t", "b"));
    assertThat(tokenizer.count(text)).isEqualTo(15);
  }

  @Test
  void longTextsAndVirtualThreadsGiveTheSameIds() throws InterruptedException {
    StringBuilder sb = new StringBuilder();
    while (sb.length() < 200_000) {
      sb.append("lorem ipsum dolor 42\n");
    }
    String text = sb.toString();
    int[] platform = tokenizer.encode(text);
    assertThat(platform).hasSize(tokenizer.count(text));
    AtomicReference<int[]> onVirtual = new AtomicReference<>();
    Thread.ofVirtual().start(() -> onVirtual.set(tokenizer.encode(text))).join();
    assertThat(onVirtual.get()).isEqualTo(platform);
    String shortText = text.substring(0, 21 * 50); // whole lines: a cut word would tokenize differently
    assertThat(tokenizer.encode(shortText)).isEqualTo(java.util.Arrays.copyOf(platform, tokenizer.count(shortText)));
  }
}
