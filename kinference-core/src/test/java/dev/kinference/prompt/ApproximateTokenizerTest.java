package dev.kinference.prompt;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.request.InferenceRequest;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ApproximateTokenizerTest {

  private final ApproximateTokenizer tokenizer = new ApproximateTokenizer();

  @Test
  void aConversationsNextTurnStartsWithThePreviousTurnsPrompt() {
    InferenceRequest turn1 = InferenceRequest.builder("m").system("You are a helpful assistant.")
        .user("Summarise the history of Rome in three sentences.").build();
    InferenceRequest turn2 = turn1.toBuilder().assistant("Rome was founded... It grew... It fell.")
        .user("Now do Carthage.").build();
    int[] first = tokenizer.tokenize(turn1);
    int[] second = tokenizer.tokenize(turn2);
    assertThat(second.length).isGreaterThan(first.length);
    assertThat(Arrays.copyOf(second, first.length)).containsExactly(first);
  }

  @Test
  void englishTextIsAboutFourCharactersAToken() {
    String text = "The quick brown fox jumps over the lazy dog while the cat watches from the window sill, "
        + "wondering whether dinner will be served on time tonight or whether it will be late again. ";
    String long_ = text.repeat(50);
    double charsPerToken = (double) long_.length() / tokenizer.encode(long_).length;
    assertThat(charsPerToken).isBetween(3.0, 6.0);
    assertThat(tokenizer.count(long_)).isEqualTo(tokenizer.encode(long_).length);
  }

  @Test
  void tokenizationIsDeterministicAndNonAsciiSafe() {
    String text = "Grüße aus Zürich 🚀 — 東京タワー 12345678 \n\n\tend";
    assertThat(tokenizer.encode(text)).containsExactly(tokenizer.encode(text));
    for (int id : tokenizer.encode(text)) {
      assertThat(id).isBetween(0, ApproximateTokenizer.SPECIAL_BASE - 1);
    }
  }

  @Test
  void tokenIdsOfACompletionRequestPassThrough() {
    InferenceRequest r = InferenceRequest.builder("m").promptTokenIds(new int[] {5, 6, 7}).build();
    assertThat(tokenizer.tokenize(r)).containsExactly(5, 6, 7);
  }

  @Test
  void differentRolesWithTheSameTextTokenizeDifferently() {
    int[] asUser = tokenizer.tokenize(InferenceRequest.builder("m").user("hello").build());
    int[] asSystem = tokenizer.tokenize(InferenceRequest.builder("m").system("hello").build());
    assertThat(asUser).isNotEqualTo(asSystem);
  }

  @Test
  void theTokenizationIsRememberedPerTokenizer() throws Exception {
    InferenceRequest r = InferenceRequest.builder("m").user("hello world").build();
    TokenizedPrompt once = r.tokenize(tokenizer);
    assertThat(r.tokenize(tokenizer)).isSameAs(once);
    assertThat(r.tokenize(new ApproximateTokenizer())).isNotSameAs(once);
    assertThat(once.keys(16)).isSameAs(once.keys(16));
  }
}
