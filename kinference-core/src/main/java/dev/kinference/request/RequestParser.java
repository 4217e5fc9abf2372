package dev.kinference.request;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Parses OpenAI (chat, completions, Responses) and Anthropic request bodies into {@link InferenceRequest}s, enforcing size limits.
 *
 * <p>Instances are immutable and thread-safe. Every problem is reported as an {@link InvalidRequestException} whose
 * message names the field; nothing is dropped or guessed silently.
 */
public final class RequestParser {

  private static final RequestParser DEFAULTS = builder().build();

  private final long maxBodyBytes;
  private final int maxMessages;
  private final ObjectMapper mapper;

  private RequestParser(Builder b) {
    this.maxBodyBytes = b.maxBodyBytes;
    this.maxMessages = b.maxMessages;
    JsonFactory factory = JsonFactory.builder()
        .streamReadConstraints(StreamReadConstraints.builder()
            .maxNestingDepth(b.maxNestingDepth)
            .maxStringLength((int) Math.min(Integer.MAX_VALUE, b.maxBodyBytes))
            .build())
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
        .build();
    this.mapper = new ObjectMapper(factory);
  }

  /** A parser with the default limits: 32 MiB bodies, 100,000 messages, nesting depth 64. */
  public static RequestParser defaults() {
    return DEFAULTS;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The largest body accepted, in bytes. */
  public long maxBodyBytes() {
    return maxBodyBytes;
  }

  /**
   * Parses a request body of the given format.
   *
   * @throws RequestTooLargeException if the body or its message list exceeds a limit
   * @throws MalformedRequestException if the body is not JSON or a field is missing or wrong
   */
  public InferenceRequest parse(ApiFormat format, byte[] body) throws InvalidRequestException {
    if (body.length > maxBodyBytes) {
      throw new RequestTooLargeException("body", body.length, maxBodyBytes);
    }
    JsonNode root;
    try {
      root = mapper.readTree(body);
    } catch (JsonProcessingException e) {
      throw new MalformedRequestException("body", "is not valid JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw new MalformedRequestException("body", "could not be read: " + e.getMessage());
    }
    if (root == null || root.isMissingNode()) {
      throw new MalformedRequestException("body", "is empty");
    }
    if (!(root instanceof ObjectNode object)) {
      throw new MalformedRequestException("body", "must be a JSON object");
    }
    return switch (format) {
      case OPENAI_CHAT -> parseOpenAiChat(object);
      case OPENAI_COMPLETIONS -> parseOpenAiCompletions(object);
      case ANTHROPIC_MESSAGES -> parseAnthropicMessages(object);
      case OPENAI_RESPONSES -> ResponsesParser.parse(this, object);
    };
  }

  /** Parses a body given as a string (UTF-8). */
  public InferenceRequest parse(ApiFormat format, String body) throws InvalidRequestException {
    return parse(format, body.getBytes(StandardCharsets.UTF_8));
  }

  private InferenceRequest parseOpenAiChat(ObjectNode root) throws InvalidRequestException {
    InferenceRequest.Builder b = common(root, ApiFormat.OPENAI_CHAT);
    JsonNode messages = requireArray(root, "messages");
    checkMessageCount(messages);
    if (messages.isEmpty()) {
      throw new MalformedRequestException("messages", "must contain at least one message");
    }
    for (int i = 0; i < messages.size(); i++) {
      b.message(openAiMessage(messages.get(i), "messages[" + i + "]"));
    }
    Integer maxTokens = optionalPositiveInt(root, "max_completion_tokens");
    if (maxTokens == null) {
      maxTokens = optionalPositiveInt(root, "max_tokens");
    }
    if (maxTokens != null) {
      b.maxTokens(maxTokens);
    }
    sequences(root, b);
    tools(root, b);
    return b.build();
  }

  private Message openAiMessage(JsonNode node, String path) throws InvalidRequestException {
    if (!node.isObject()) {
      throw new MalformedRequestException(path, "must be an object");
    }
    String role = requireString(node, "role", path);
    return switch (role) {
      case "system", "developer", "user", "assistant" -> openAiTurn(node, role, path);
      case "tool" -> {
        String toolCallId = requireString(node, "tool_call_id", path);
        JsonNode content = node.get("content");
        if (content == null || content.isNull()) {
          throw new MalformedRequestException(path + ".content", "is required for role tool");
        }
        List<ContentPart> inner = new ArrayList<>();
        openAiContent(content, path + ".content", inner);
        yield new Message("tool", List.of(new ContentPart.ToolResult(toolCallId, inner, false)));
      }
      case "function" -> {
        JsonNode content = node.get("content");
        List<ContentPart> inner = new ArrayList<>();
        if (content != null && !content.isNull()) {
          openAiContent(content, path + ".content", inner);
        }
        yield new Message("tool",
            List.of(new ContentPart.ToolResult(optionalString(node, "name", path, ""), inner, false)));
      }
      default -> throw new MalformedRequestException(path + ".role",
          "unknown role '" + role + "' (expected system, developer, user, assistant or tool)");
    };
  }

  /** A system, developer, user or assistant message: content parts, refusal, and assistant tool calls. */
  private Message openAiTurn(JsonNode node, String role, String path) throws InvalidRequestException {
    List<ContentPart> parts = new ArrayList<>();
    JsonNode content = node.get("content");
    if (content != null && !content.isNull()) {
      openAiContent(content, path + ".content", parts);
    } else if (!role.equals("assistant")) {
      throw new MalformedRequestException(path + ".content", "is required for role " + role);
    }
    JsonNode refusal = node.get("refusal");
    if (refusal != null && refusal.isTextual()) {
      parts.add(new ContentPart.Text(refusal.asText()));
    }
    JsonNode toolCalls = node.get("tool_calls");
    if (toolCalls != null && !toolCalls.isNull()) {
      if (!toolCalls.isArray()) {
        throw new MalformedRequestException(path + ".tool_calls", "must be an array");
      }
      for (int i = 0; i < toolCalls.size(); i++) {
        String callPath = path + ".tool_calls[" + i + "]";
        JsonNode call = toolCalls.get(i);
        if (!call.isObject()) {
          throw new MalformedRequestException(callPath, "must be an object");
        }
        JsonNode function = call.get("function");
        if (function == null || !function.isObject()) {
          throw new MalformedRequestException(callPath + ".function", "must be an object");
        }
        JsonNode args = function.get("arguments");
        String argsText = args == null || args.isNull() ? "" : args.isTextual() ? args.asText() : args.toString();
        parts.add(new ContentPart.ToolUse(
            optionalString(call, "id", callPath, ""),
            requireString(function, "name", callPath + ".function"),
            argsText));
      }
    }
    if (role.equals("assistant") && (content == null || content.isNull())
        && (toolCalls == null || toolCalls.isNull()) && parts.isEmpty()) {
      throw new MalformedRequestException(path, "an assistant message needs content or tool_calls");
    }
    return new Message(role.equals("developer") ? "system" : role, parts);
  }

  void openAiContent(JsonNode content, String path, List<ContentPart> out) throws InvalidRequestException {
    contentParts(content, path, out, (type, part, partPath) -> switch (type) {
      case "text", "input_text" -> new ContentPart.Text(requireString(part, "text", partPath));
      case "refusal" -> new ContentPart.Text(requireString(part, "refusal", partPath));
      case "image_url" -> {
        JsonNode imageUrl = part.get("image_url");
        String url;
        if (imageUrl != null && imageUrl.isTextual()) {
          url = imageUrl.asText();
        } else if (imageUrl != null && imageUrl.isObject()) {
          url = requireString(imageUrl, "url", partPath + ".image_url");
        } else {
          throw new MalformedRequestException(partPath + ".image_url", "must be an object with a url");
        }
        yield new ContentPart.Image(url.startsWith("data:") ? digest(url) : url);
      }
      default -> null;
    });
  }

  /** Reads one typed content part of an OpenAI-style array; null for a type kept as {@link ContentPart.Other}. */
  @FunctionalInterface
  interface PartReader {
    @Nullable ContentPart read(String type, JsonNode part, String partPath) throws InvalidRequestException;
  }

  /**
   * OpenAI-style content, shared by Chat Completions and Responses: a string is one text part; an array holds objects
   * with a {@code type}, each read by {@code reader}.
   */
  static void contentParts(JsonNode content, String path, List<ContentPart> out, PartReader reader)
      throws InvalidRequestException {
    if (content.isTextual()) {
      out.add(new ContentPart.Text(content.asText()));
      return;
    }
    if (!content.isArray()) {
      throw new MalformedRequestException(path, "must be a string or an array of content parts");
    }
    for (int i = 0; i < content.size(); i++) {
      String partPath = path + "[" + i + "]";
      JsonNode part = content.get(i);
      if (!part.isObject()) {
        throw new MalformedRequestException(partPath, "must be an object");
      }
      String type = requireString(part, "type", partPath);
      ContentPart read = reader.read(type, part, partPath);
      out.add(read != null ? read : new ContentPart.Other(type, part.toString()));
    }
  }

  private InferenceRequest parseOpenAiCompletions(ObjectNode root) throws InvalidRequestException {
    InferenceRequest.Builder b = common(root, ApiFormat.OPENAI_COMPLETIONS);
    JsonNode prompt = root.get("prompt");
    if (prompt == null || prompt.isNull()) {
      throw new MalformedRequestException("prompt", "is required");
    }
    if (prompt.isTextual()) {
      b.prompt(prompt.asText());
    } else if (prompt.isArray()) {
      if (prompt.isEmpty()) {
        throw new MalformedRequestException("prompt", "must not be empty");
      }
      JsonNode first = prompt.get(0);
      if (first.isTextual() || first.isArray()) {
        if (prompt.size() != 1) {
          throw new MalformedRequestException("prompt",
              "batched prompts (" + prompt.size() + ") are not supported: send one request per prompt");
        }
        if (first.isTextual()) {
          b.prompt(first.asText());
        } else {
          b.promptTokenIds(tokenIds(first, "prompt[0]"));
        }
      } else {
        b.promptTokenIds(tokenIds(prompt, "prompt"));
      }
    } else {
      throw new MalformedRequestException("prompt", "must be a string, an array of token ids, or a one-element array");
    }
    Integer maxTokens = optionalPositiveInt(root, "max_tokens");
    if (maxTokens != null) {
      b.maxTokens(maxTokens);
    }
    sequences(root, b);
    return b.build();
  }

  /**
   * OpenAI's {@code n} (choices returned) and, for completions, {@code best_of} (sequences generated, of which
   * {@code n} are returned): the server generates the larger of the two, each up to {@code max_tokens}.
   */
  private static void sequences(JsonNode root, InferenceRequest.Builder b) throws InvalidRequestException {
    Integer n = optionalPositiveInt(root, "n");
    Integer bestOf = optionalPositiveInt(root, "best_of");
    int k = Math.max(n == null ? 1 : n, bestOf == null ? 1 : bestOf);
    if (k > InferenceRequest.MAX_SEQUENCES) {
      throw new MalformedRequestException(bestOf != null && bestOf == k ? "best_of" : "n",
          "must be at most " + InferenceRequest.MAX_SEQUENCES);
    }
    b.sequences(k);
  }

  private static int[] tokenIds(JsonNode array, String path) throws InvalidRequestException {
    int[] ids = new int[array.size()];
    for (int i = 0; i < ids.length; i++) {
      JsonNode id = array.get(i);
      if (!id.isIntegralNumber() || !id.canConvertToInt() || id.intValue() < 0) {
        throw new MalformedRequestException(path + "[" + i + "]", "must be a non-negative token id");
      }
      ids[i] = id.intValue();
    }
    if (ids.length == 0) {
      throw new MalformedRequestException(path, "must not be empty");
    }
    return ids;
  }

  private InferenceRequest parseAnthropicMessages(ObjectNode root) throws InvalidRequestException {
    InferenceRequest.Builder b = common(root, ApiFormat.ANTHROPIC_MESSAGES);
    JsonNode maxTokens = root.get("max_tokens");
    if (maxTokens == null || maxTokens.isNull()) {
      throw new MalformedRequestException("max_tokens", "is required");
    }
    Integer max = optionalPositiveInt(root, "max_tokens");
    if (max != null) {
      b.maxTokens(max);
    }
    JsonNode system = root.get("system");
    if (system != null && !system.isNull()) {
      List<ContentPart> parts = new ArrayList<>();
      anthropicContent(system, "system", parts);
      b.message(new Message("system", parts));
    }
    JsonNode messages = requireArray(root, "messages");
    checkMessageCount(messages);
    if (messages.isEmpty()) {
      throw new MalformedRequestException("messages", "must contain at least one message");
    }
    for (int i = 0; i < messages.size(); i++) {
      String path = "messages[" + i + "]";
      JsonNode m = messages.get(i);
      if (!m.isObject()) {
        throw new MalformedRequestException(path, "must be an object");
      }
      String role = requireString(m, "role", path);
      if (!role.equals("user") && !role.equals("assistant")) {
        throw new MalformedRequestException(path + ".role", "must be user or assistant, not '" + role + "'");
      }
      JsonNode content = m.get("content");
      if (content == null || content.isNull()) {
        throw new MalformedRequestException(path + ".content", "is required");
      }
      List<ContentPart> parts = new ArrayList<>();
      anthropicContent(content, path + ".content", parts);
      b.message(new Message(role, parts));
    }
    tools(root, b);
    return b.build();
  }

  private void anthropicContent(JsonNode content, String path, List<ContentPart> out) throws InvalidRequestException {
    if (content.isTextual()) {
      out.add(new ContentPart.Text(content.asText()));
      return;
    }
    if (!content.isArray()) {
      throw new MalformedRequestException(path, "must be a string or an array of content blocks");
    }
    for (int i = 0; i < content.size(); i++) {
      String blockPath = path + "[" + i + "]";
      JsonNode block = content.get(i);
      if (!block.isObject()) {
        throw new MalformedRequestException(blockPath, "must be an object");
      }
      String type = requireString(block, "type", blockPath);
      switch (type) {
        case "text" -> out.add(new ContentPart.Text(requireString(block, "text", blockPath)));
        case "thinking" -> out.add(new ContentPart.Text(requireString(block, "thinking", blockPath)));
        case "image" -> {
          JsonNode source = block.get("source");
          if (source == null || !source.isObject()) {
            throw new MalformedRequestException(blockPath + ".source", "must be an object");
          }
          String sourceType = requireString(source, "type", blockPath + ".source");
          String id = switch (sourceType) {
            case "url" -> requireString(source, "url", blockPath + ".source");
            case "base64" -> digest(requireString(source, "data", blockPath + ".source"));
            default -> source.toString();
          };
          out.add(new ContentPart.Image(id));
        }
        case "tool_use", "server_tool_use" -> {
          JsonNode input = block.get("input");
          out.add(new ContentPart.ToolUse(
              requireString(block, "id", blockPath),
              requireString(block, "name", blockPath),
              input == null ? "{}" : input.toString()));
        }
        case "tool_result" -> {
          List<ContentPart> inner = new ArrayList<>();
          JsonNode c = block.get("content");
          if (c != null && !c.isNull()) {
            anthropicContent(c, blockPath + ".content", inner);
          }
          JsonNode isError = block.get("is_error");
          out.add(new ContentPart.ToolResult(
              requireString(block, "tool_use_id", blockPath), inner, isError != null && isError.asBoolean(false)));
        }
        default -> out.add(new ContentPart.Other(type, block.toString()));
      }
    }
  }

  InferenceRequest.Builder common(ObjectNode root, ApiFormat format) throws InvalidRequestException {
    InferenceRequest.Builder b = InferenceRequest.builder(requireModel(root)).format(format).body(root);
    JsonNode stream = root.get("stream");
    if (stream != null && !stream.isNull()) {
      if (!stream.isBoolean()) {
        throw new MalformedRequestException("stream", "must be a boolean");
      }
      b.stream(stream.booleanValue());
    }
    JsonNode salt = root.get("cache_salt");
    if (salt != null && !salt.isNull()) {
      if (!salt.isTextual() || salt.asText().isEmpty()) {
        throw new MalformedRequestException("cache_salt", "must be a non-empty string");
      }
      b.cacheSalt(salt.asText());
    }
    sessionHint(root, b);
    b.promptRetention(PromptRetentionHints.read(format, root));
    JsonNode priority = root.get("priority");
    if (priority != null && !priority.isNull()) {
      if (!priority.isIntegralNumber() || !priority.canConvertToInt()) {
        throw new MalformedRequestException("priority", "must be an integer");
      }
      // vLLM's priority is "lower is handled earlier"; ours is "larger is more urgent"
      int vllm = priority.intValue();
      b.priority(vllm == Integer.MIN_VALUE ? Integer.MAX_VALUE : -vllm);
    }
    return b;
  }

  /**
   * The body's session hints, strongest first: the Responses API's {@code previous_response_id} (the conversation
   * this request continues; the gateway resolves it to the conversation's first response), OpenAI's
   * {@code prompt_cache_key} (the client's own grouping of requests that share a prefix), Anthropic's {@code metadata.user_id} and OpenAI's {@code safety_identifier} (one
   * end user, who may hold several conversations), then OpenAI's {@code user} (deprecated, often a constant). Values
   * that are not non-blank strings of at most {@value #MAX_SESSION_HINT} characters are ignored, not rejected:
   * they are hints. The gateway lets headers override these (see {@code SessionHints} there).
   */
  private static void sessionHint(ObjectNode root, InferenceRequest.Builder b) {
    String[][] fields = {{"previous_response_id"}, {"prompt_cache_key"}, {"metadata", "user_id"},
        {"safety_identifier"}, {"user"}};
    for (String[] path : fields) {
      JsonNode v = root;
      for (String f : path) {
        v = v.isObject() ? v.get(f) : null;
        if (v == null) {
          break;
        }
      }
      if (v != null && v.isTextual() && !v.asText().isBlank() && v.asText().length() <= MAX_SESSION_HINT) {
        b.session(v.asText(), String.join(".", path));
        return;
      }
    }
  }

  /** The longest session hint taken from a body field. */
  static final int MAX_SESSION_HINT = 512;

  private static String requireModel(ObjectNode root) throws InvalidRequestException {
    JsonNode model = root.get("model");
    if (model == null || model.isNull()) {
      throw new MalformedRequestException("model", "is required");
    }
    if (!model.isTextual() || model.asText().isBlank()) {
      throw new MalformedRequestException("model", "must be a non-empty string");
    }
    return model.asText();
  }

  static void tools(ObjectNode root, InferenceRequest.Builder b) throws InvalidRequestException {
    JsonNode tools = root.get("tools");
    if (tools == null || tools.isNull()) {
      return;
    }
    if (!tools.isArray()) {
      throw new MalformedRequestException("tools", "must be an array");
    }
    for (int i = 0; i < tools.size(); i++) {
      JsonNode tool = tools.get(i);
      if (!tool.isObject()) {
        throw new MalformedRequestException("tools[" + i + "]", "must be an object");
      }
      b.tool(tool.toString());
    }
  }

  void checkMessageCount(JsonNode messages) throws InvalidRequestException {
    if (messages.size() > maxMessages) {
      throw new RequestTooLargeException("messages", messages.size(), maxMessages);
    }
  }

  private static JsonNode requireArray(JsonNode node, String field) throws InvalidRequestException {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      throw new MalformedRequestException(field, "is required");
    }
    if (!value.isArray()) {
      throw new MalformedRequestException(field, "must be an array");
    }
    return value;
  }

  static String requireString(JsonNode node, String field, String path) throws InvalidRequestException {
    JsonNode value = node.get(field);
    String fieldPath = path.isEmpty() ? field : path + "." + field;
    if (value == null || value.isNull()) {
      throw new MalformedRequestException(fieldPath, "is required");
    }
    if (!value.isTextual()) {
      throw new MalformedRequestException(fieldPath, "must be a string");
    }
    return value.asText();
  }

  static String optionalString(JsonNode node, String field, String path, String fallback)
      throws InvalidRequestException {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      return fallback;
    }
    if (!value.isTextual()) {
      throw new MalformedRequestException(path + "." + field, "must be a string");
    }
    return value.asText();
  }

  static @Nullable Integer optionalPositiveInt(JsonNode node, String field) throws InvalidRequestException {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      return null;
    }
    if (!value.isIntegralNumber() || !value.canConvertToInt() || value.intValue() < 1) {
      throw new MalformedRequestException(field, "must be a positive integer");
    }
    return value.intValue();
  }

  static String digest(String data) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      return "sha256:" + HexFormat.of().formatHex(sha.digest(data.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every Java runtime", e);
    }
  }

  /** Configures a {@link RequestParser}; each setter validates its argument. Not thread-safe. */
  public static final class Builder {
    private long maxBodyBytes = 32L * 1024 * 1024;
    private int maxMessages = 100_000;
    private int maxNestingDepth = 64;

    private Builder() {}

    /** Bodies larger than this are refused with HTTP 413. Default 32 MiB. */
    public Builder maxBodyBytes(long bytes) {
      if (bytes < 1024) {
        throw new IllegalArgumentException("maxBodyBytes must be at least 1024: " + bytes);
      }
      this.maxBodyBytes = bytes;
      return this;
    }

    /** Conversations longer than this are refused with HTTP 413. Default 100,000. */
    public Builder maxMessages(int messages) {
      if (messages < 1) {
        throw new IllegalArgumentException("maxMessages must be positive: " + messages);
      }
      this.maxMessages = messages;
      return this;
    }

    /** JSON nested deeper than this is refused with HTTP 400. Default 64. */
    public Builder maxNestingDepth(int depth) {
      if (depth < 8) {
        throw new IllegalArgumentException("maxNestingDepth must be at least 8: " + depth);
      }
      this.maxNestingDepth = depth;
      return this;
    }

    public RequestParser build() {
      return new RequestParser(this);
    }
  }
}
