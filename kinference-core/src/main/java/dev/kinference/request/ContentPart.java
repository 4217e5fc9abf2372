package dev.kinference.request;

import java.util.List;
import java.util.Objects;

/**
 * One part of a message's content, normalised across the OpenAI and Anthropic formats: OpenAI content parts and
 * {@code tool_calls}, Anthropic content blocks.
 */
public sealed interface ContentPart
    permits ContentPart.Text, ContentPart.Image, ContentPart.ToolUse, ContentPart.ToolResult, ContentPart.Other {

  /** Plain text (OpenAI {@code text} part or string content, Anthropic {@code text} or {@code thinking} block). */
  record Text(String text) implements ContentPart {
    public Text {
      Objects.requireNonNull(text, "text");
    }
  }

  /** An image, identified by its URL or by a digest of its inline data. */
  record Image(String source) implements ContentPart {
    public Image {
      Objects.requireNonNull(source, "source");
    }
  }

  /**
   * A call the assistant made to a tool (OpenAI {@code tool_calls[]}, Anthropic {@code tool_use}).
   *
   * @param inputJson the arguments as a JSON text, exactly as sent
   */
  record ToolUse(String id, String name, String inputJson) implements ContentPart {
    public ToolUse {
      Objects.requireNonNull(id, "id");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(inputJson, "inputJson");
    }
  }

  /** The result of a tool call (OpenAI {@code tool} message, Anthropic {@code tool_result} block). */
  record ToolResult(String toolUseId, List<ContentPart> content, boolean isError) implements ContentPart {
    public ToolResult {
      Objects.requireNonNull(toolUseId, "toolUseId");
      content = List.copyOf(content);
    }
  }

  /** A part this library does not interpret (audio, documents, ...), kept as its type and JSON text. */
  record Other(String type, String json) implements ContentPart {
    public Other {
      Objects.requireNonNull(type, "type");
      Objects.requireNonNull(json, "json");
    }
  }
}
