package dev.kinference.request;

import java.util.List;
import java.util.Objects;

/**
 * One turn of a conversation. The system prompt, whether sent as Anthropic's top-level {@code system} or as
 * OpenAI's {@code system}/{@code developer} message, is a message with role {@code system}.
 *
 * @param role {@code system}, {@code user}, {@code assistant} or {@code tool}
 * @param content the content parts in order; tool calls are {@link ContentPart.ToolUse} parts
 */
public record Message(String role, List<ContentPart> content) {

  public Message {
    Objects.requireNonNull(role, "role");
    content = List.copyOf(content);
  }

  /** A message whose content is one text part. */
  public static Message text(String role, String text) {
    return new Message(role, List.of(new ContentPart.Text(text)));
  }
}
