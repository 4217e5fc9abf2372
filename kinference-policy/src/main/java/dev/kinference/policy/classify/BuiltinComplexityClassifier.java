package dev.kinference.policy.classify;

import dev.kinference.request.ContentPart;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.Message;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * The default complexity classifier, {@code builtin}: a transparent score over a few features of the prompt.
 * <ul>
 *   <li>length: more than 1,000 estimated input tokens +1, more than 4,000 +2;</li>
 *   <li>code (fenced blocks, or several lines that look like code) +2, topic {@code code};</li>
 *   <li>mathematics (LaTeX, integrals, equations, proofs) +1, topic {@code math};</li>
 *   <li>reasoning cues in the last user turn ("step by step", "explain why", "prove", "trade-off", "design", ...)
 *       +1 each, at most +2, topic {@code reasoning};</li>
 *   <li>tool definitions +1; three or more questions +1; a conversation of more than six messages +1.</li>
 * </ul>
 * Score 0 is {@link Complexity#SIMPLE} (if the last user turn is under 600 characters), 1 or 2
 * {@link Complexity#MODERATE}, 3 or more {@link Complexity#COMPLEX}. Topics {@code translation} and {@code
 * summarization} are recognised by their verbs; a prompt with no other topic is {@code chat}. Only the last 8,000
 * characters of the last user turn are read for cues, so the cost is bounded. Stateless and thread-safe.
 */
public final class BuiltinComplexityClassifier implements ComplexityClassifier {

  private static final int CUE_WINDOW = 8_000;
  private static final String[] REASONING_CUES = {"step by step", "step-by-step", "explain why", "why does",
      "why is", "prove", "derive", "analyze", "analyse", "analysis", "compare", "trade-off", "tradeoff",
      "pros and cons", "design", "architect", "optimize", "optimise", "debug", "root cause", "evaluate",
      "critique", "in depth", "in detail", "reason about", "think through", "plan ", "strategy", "refactor"};
  private static final String[] MATH_CUES = {"\\frac", "\\int", "\\sum", "integral", "derivative", "equation",
      "theorem", "lemma", "matrix", "eigen", "probability", "∫", "∑"};
  private static final String[] CODE_LINE_STARTS = {"def ", "class ", "import ", "#include", "function ",
      "public ", "private ", "return ", "const ", "let ", "var ", "fn ", "func ", "package ", "SELECT ", "for (",
      "if (", "while ("};

  /** Public for {@link java.util.ServiceLoader}. */
  public BuiltinComplexityClassifier() {}

  @Override
  public String name() {
    return "builtin";
  }

  @Override
  public PromptClass classify(InferenceRequest request, int promptTokens) {
    String last = lastUserText(request);
    String cueText = last.length() > CUE_WINDOW ? last.substring(last.length() - CUE_WINDOW) : last;
    String lower = cueText.toLowerCase(Locale.ROOT);
    Set<String> topics = new TreeSet<>();
    StringBuilder why = new StringBuilder("tokens=").append(promptTokens);
    int score = 0;
    if (promptTokens > 4000) {
      score += 2;
    } else if (promptTokens > 1000) {
      score += 1;
    }
    if (looksLikeCode(cueText)) {
      score += 2;
      topics.add("code");
      why.append(", code");
    }
    if (containsAny(lower, MATH_CUES)) {
      score += 1;
      topics.add("math");
      why.append(", math");
    }
    int cues = countCues(lower);
    if (cues > 0) {
      score += Math.min(2, cues);
      topics.add("reasoning");
      why.append(", ").append(cues).append(" reasoning cue").append(cues > 1 ? "s" : "");
    }
    if (!request.toolsJson().isEmpty()) {
      score += 1;
      why.append(", tools");
    }
    if (count(cueText, '?') >= 3) {
      score += 1;
      why.append(", several questions");
    }
    if (request.messages().size() > 6) {
      score += 1;
      why.append(", long conversation");
    }
    if (lower.contains("translate") || lower.contains("translation")) {
      topics.add("translation");
    }
    if (lower.contains("summarize") || lower.contains("summarise") || lower.contains("summary")
        || lower.contains("tl;dr")) {
      topics.add("summarization");
    }
    if (topics.isEmpty()) {
      topics.add("chat");
    }
    Complexity c;
    if (score >= 3) {
      c = Complexity.COMPLEX;
    } else if (score >= 1 || last.length() >= 600) {
      c = Complexity.MODERATE;
    } else {
      c = Complexity.SIMPLE;
    }
    return new PromptClass(c, topics, why.append(", score=").append(score).toString());
  }

  private static String lastUserText(InferenceRequest request) {
    String prompt = request.prompt();
    if (prompt != null) {
      return prompt;
    }
    for (int i = request.messages().size() - 1; i >= 0; i--) {
      Message m = request.messages().get(i);
      if (m.role().equals("user")) {
        StringBuilder sb = new StringBuilder();
        for (ContentPart p : m.content()) {
          if (p instanceof ContentPart.Text t) {
            sb.append(t.text()).append('\n');
          }
        }
        return sb.toString();
      }
    }
    return "";
  }

  private static boolean looksLikeCode(String text) {
    if (text.contains("```")) {
      return true;
    }
    int codeLines = 0;
    int start = 0;
    int n = text.length();
    while (start < n) {
      int end = text.indexOf('\n', start);
      if (end < 0) {
        end = n;
      }
      String line = text.substring(start, end).strip();
      if (!line.isEmpty()) {
        char last = line.charAt(line.length() - 1);
        boolean code = last == ';' || last == '{' || last == '}';
        for (String s : CODE_LINE_STARTS) {
          code |= line.startsWith(s);
        }
        if (code && ++codeLines >= 3) {
          return true;
        }
      }
      start = end + 1;
    }
    return false;
  }

  private static int countCues(String lower) {
    int n = 0;
    for (String cue : REASONING_CUES) {
      if (lower.contains(cue)) {
        n++;
      }
    }
    return n;
  }

  private static boolean containsAny(String text, String[] needles) {
    for (String s : needles) {
      if (text.contains(s)) {
        return true;
      }
    }
    return false;
  }

  private static int count(String s, char c) {
    int n = 0;
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) == c) {
        n++;
      }
    }
    return n;
  }
}
