package dev.kinference.request;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Reads a request body's prompt-caching hints into a {@link PromptRetention}. Hints never fail a request: a value
 * that is not understood is ignored, as the provider that defined it would reject it, not the router.
 *
 * <p>Anthropic: every {@code cache_control} on a tool, a {@code system} block or a message's content block marks a
 * breakpoint; its {@code ttl} is {@code "5m"} (the default) or {@code "1h"}. The longest ttl wins, and of the
 * breakpoints with it the last, since Anthropic caches everything before a breakpoint. OpenAI:
 * {@code prompt_cache_retention: "24h"} covers the whole prompt.
 */
final class PromptRetentionHints {

  private static final Duration ANTHROPIC_DEFAULT = Duration.ofMinutes(5);

  private PromptRetentionHints() {
  }

  static @Nullable PromptRetention read(ApiFormat format, JsonNode root) {
    return switch (format) {
      case ANTHROPIC_MESSAGES -> anthropic(root);
      default -> openAi(root);
    };
  }

  private static @Nullable PromptRetention openAi(JsonNode root) {
    JsonNode v = root.get("prompt_cache_retention");
    return v != null && v.isTextual() && v.asText().equals("24h")
        ? new PromptRetention(Duration.ofHours(24), 1.0) : null;
  }

  private static @Nullable PromptRetention anthropic(JsonNode root) {
    Scan scan = new Scan();
    JsonNode tools = root.get("tools");
    if (tools != null && tools.isArray()) {
      for (JsonNode tool : tools) {
        scan.block(tool, tool.toString().length());
      }
    }
    scan.content(root.get("system"));
    JsonNode messages = root.get("messages");
    if (messages != null && messages.isArray()) {
      for (JsonNode m : messages) {
        scan.content(m.isObject() ? m.get("content") : null);
      }
    }
    Duration ttl = scan.ttl;
    if (ttl == null || scan.breakpointEnd == 0) {
      return null;
    }
    return new PromptRetention(ttl, (double) scan.breakpointEnd / scan.total);
  }

  /** Walks the prompt's blocks in the order the model reads them, counting characters and noting breakpoints. */
  private static final class Scan {
    long total;
    long breakpointEnd;
    @Nullable Duration ttl;

    void content(@Nullable JsonNode content) {
      if (content == null) {
        return;
      }
      if (content.isTextual()) {
        total += content.asText().length();
        return;
      }
      if (content.isArray()) {
        for (JsonNode blockNode : content) {
          block(blockNode, textLength(blockNode));
        }
      }
    }

    void block(JsonNode block, long chars) {
      total += chars;
      Duration t = ttlOf(block.isObject() ? block.get("cache_control") : null);
      if (t != null && (ttl == null || t.compareTo(ttl) >= 0)) {
        ttl = t;
        breakpointEnd = total;
      }
    }

    private static long textLength(JsonNode block) {
      if (!block.isObject()) {
        return 0;
      }
      JsonNode text = block.get("text");
      if (text != null && text.isTextual()) {
        return text.asText().length();
      }
      JsonNode input = block.get("input"); // tool_use
      if (input != null) {
        return input.toString().length();
      }
      JsonNode content = block.get("content"); // tool_result
      if (content != null) {
        return content.isTextual() ? content.asText().length() : content.toString().length();
      }
      return 0;
    }

    private static @Nullable Duration ttlOf(@Nullable JsonNode cacheControl) {
      if (cacheControl == null || !cacheControl.isObject()) {
        return null;
      }
      JsonNode type = cacheControl.get("type");
      if (type == null || !"ephemeral".equals(type.asText())) {
        return null;
      }
      JsonNode ttl = cacheControl.get("ttl");
      if (ttl == null || ttl.isNull()) {
        return ANTHROPIC_DEFAULT;
      }
      return switch (ttl.asText()) {
        case "5m" -> ANTHROPIC_DEFAULT;
        case "1h" -> Duration.ofHours(1);
        default -> null;
      };
    }
  }
}
