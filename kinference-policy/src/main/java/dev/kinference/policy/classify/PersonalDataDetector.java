package dev.kinference.policy.classify;

import dev.kinference.plugin.Plugin;
import dev.kinference.request.ContentPart;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.Message;

/**
 * Finds personal data and secrets in prompt text. Requests flagged by it never leave local pools. Implementations
 * must be thread-safe, must not throw for any text, and should run in time linear in the text's length.
 */
public interface PersonalDataDetector extends Plugin {

  /** What {@code text} contains. */
  PersonalData detect(CharSequence text);

  /** What the request's text contains: every message's text, tool calls and results, and the prompt. */
  default PersonalData detect(InferenceRequest request) {
    return detect(textOf(request));
  }

  /** The text of a request that classifiers look at: messages (all roles), tool calls and results, the prompt. */
  static String textOf(InferenceRequest request) {
    StringBuilder sb = new StringBuilder((int) Math.min(Integer.MAX_VALUE - 64, request.promptChars() + 16));
    for (Message m : request.messages()) {
      for (ContentPart p : m.content()) {
        appendPart(sb, p);
      }
    }
    String prompt = request.prompt();
    if (prompt != null) {
      sb.append(prompt).append('\n');
    }
    return sb.toString();
  }

  private static void appendPart(StringBuilder sb, ContentPart p) {
    switch (p) {
      case ContentPart.Text t -> sb.append(t.text()).append('\n');
      case ContentPart.ToolUse u -> sb.append(u.inputJson()).append('\n');
      case ContentPart.ToolResult r -> r.content().forEach(c -> appendPart(sb, c));
      case ContentPart.Other o -> sb.append(o.json()).append('\n');
      case ContentPart.Image i -> { }
    }
  }
}
