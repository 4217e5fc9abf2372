package dev.kinference.policy.classify;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.request.InferenceRequest;
import org.junit.jupiter.api.Test;

class BuiltinComplexityClassifierTest {

  private final BuiltinComplexityClassifier classifier = new BuiltinComplexityClassifier();

  private PromptClass classify(String user, int tokens) {
    return classifier.classify(InferenceRequest.builder("m").user(user).build(), tokens);
  }

  @Test
  void shortQuestionsAreSimple() {
    PromptClass c = classify("What is the capital of France?", 12);
    assertThat(c.complexity()).isEqualTo(Complexity.SIMPLE);
    assertThat(c.topics()).containsExactly("chat");
    assertThat(c.reason()).isEqualTo("tokens=12, score=0");
  }

  @Test
  void codeAndReasoningAreComplex() {
    PromptClass c = classify("""
        Explain why this deadlocks and design a fix step by step:
        ```java
        synchronized (a) { synchronized (b) { x(); } }
        ```""", 80);
    assertThat(c.complexity()).isEqualTo(Complexity.COMPLEX);
    assertThat(c.topics()).contains("code", "reasoning");
  }

  @Test
  void codeWithoutFencesIsRecognisedByItsLines() {
    PromptClass c = classify("def f(x):\n    return x\nimport os\nclass A:\n  pass", 30);
    assertThat(c.topics()).contains("code");
  }

  @Test
  void lengthAloneMakesAPromptModerateOrMore() {
    assertThat(classify("Summarize this.", 2000).complexity()).isEqualTo(Complexity.MODERATE);
    assertThat(classify("Summarize this.", 2000).topics()).containsExactly("summarization");
    assertThat(classify("Translate to German: " + "word ".repeat(200), 250).complexity())
        .isEqualTo(Complexity.MODERATE);
    assertThat(classify("Prove the theorem and derive the integral.", 9000).complexity())
        .isEqualTo(Complexity.COMPLEX);
  }

  @Test
  void toolsAndLongConversationsCount() {
    InferenceRequest.Builder b = InferenceRequest.builder("m").tool("{\"name\":\"f\"}");
    for (int i = 0; i < 4; i++) {
      b.user("hi").assistant("hello");
    }
    PromptClass c = classifier.classify(b.user("ok?").build(), 40);
    assertThat(c.reason()).contains("tools", "long conversation");
    assertThat(c.complexity()).isEqualTo(Complexity.MODERATE);
  }

  @Test
  void theClassifierIsFoundByServiceLoader() {
    assertThat(dev.kinference.plugin.Plugins.load(ComplexityClassifier.class).names()).contains("builtin");
  }
}
