package dev.kinference.request;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.prompt.TokenizedPrompt;
import dev.kinference.prompt.Tokenizer;
import dev.kinference.prompt.TokenizationException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * An inference request as the router sees it: what the client sent (model, system prompt, messages or prompt,
 * tools, output budget, streaming, {@code cache_salt}) and what the caller knows about it (tenant, session,
 * priority, traffic class, LoRA adapter, headers).
 *
 * <p>Instances are immutable and safe to share between threads. The tokenization of the prompt is computed at most
 * once per tokenizer and remembered, so that a policy engine and the router can both look at it cheaply.
 *
 * <p>Build one from a JSON body with {@link RequestParser}, or programmatically with {@link #builder(String)}.
 */
public final class InferenceRequest {

  /** The most sequences ({@code n}, {@code best_of}) one request may ask for. */
  public static final int MAX_SEQUENCES = 128;

  private final ApiFormat format;
  private final String model;
  private final List<Message> messages;
  private final @Nullable String prompt;
  private final int @Nullable [] promptTokenIds;
  private final List<String> toolsJson;
  private final int maxTokens;
  private final int sequences;
  private final boolean stream;
  private final @Nullable String cacheSalt;
  private final @Nullable String lora;
  private final @Nullable String tenant;
  private final @Nullable String sessionId;
  private final @Nullable String sessionSource;
  private final @Nullable PromptRetention promptRetention;
  private final int priority;
  private final TrafficClass trafficClass;
  private final Map<String, String> headers;
  private final @Nullable ObjectNode body;
  private final long promptChars;

  // Remembered tokenization; a benign race may compute it twice, never wrongly.
  private volatile @Nullable TokenizedPrompt tokenized;

  private InferenceRequest(Builder b) {
    this.format = b.format;
    this.model = b.model;
    this.messages = List.copyOf(b.messages);
    this.prompt = b.prompt;
    this.promptTokenIds = b.promptTokenIds == null ? null : b.promptTokenIds.clone();
    this.toolsJson = List.copyOf(b.toolsJson);
    this.maxTokens = b.maxTokens;
    this.sequences = b.sequences;
    this.stream = b.stream;
    this.cacheSalt = b.cacheSalt;
    this.lora = b.lora;
    this.tenant = b.tenant;
    this.sessionId = b.sessionId;
    this.sessionSource = b.sessionSource;
    this.promptRetention = b.promptRetention;
    this.priority = b.priority;
    this.trafficClass = b.trafficClass;
    this.headers = java.util.Collections.unmodifiableMap(new TreeMap<>(b.headers));
    this.body = b.body;
    this.promptChars = countChars(messages, prompt, promptTokenIds, toolsJson);
  }

  /** A builder for a chat request (OpenAI chat format unless {@link Builder#format} says otherwise). */
  public static Builder builder(String model) {
    return new Builder(model);
  }

  /** A builder holding every value of this request, to derive a changed copy. */
  public Builder toBuilder() {
    Builder b = new Builder(model);
    b.format = format;
    b.messages.addAll(messages);
    b.prompt = prompt;
    b.promptTokenIds = promptTokenIds;
    b.toolsJson.addAll(toolsJson);
    b.maxTokens = maxTokens;
    b.sequences = sequences;
    b.stream = stream;
    b.cacheSalt = cacheSalt;
    b.lora = lora;
    b.tenant = tenant;
    b.sessionId = sessionId;
    b.sessionSource = sessionSource;
    b.promptRetention = promptRetention;
    b.priority = priority;
    b.trafficClass = trafficClass;
    b.headers.putAll(headers);
    b.body = body;
    return b;
  }

  /** This request for another model (an alias resolved, or a cheaper model chosen by policy). */
  public InferenceRequest withModel(String newModel) {
    return toBuilder().model(newModel).build();
  }

  public ApiFormat format() {
    return format;
  }

  /** The model name the client asked for, or the served model after a policy rewrote it. */
  public String model() {
    return model;
  }

  /** The conversation, system prompt first; empty for a completions request. */
  public List<Message> messages() {
    return messages;
  }

  /** The text prompt of a completions request, or null. */
  public @Nullable String prompt() {
    return prompt;
  }

  /** The token ids of a completions request sent as an array of integers, or null. */
  public int @Nullable [] promptTokenIds() {
    return promptTokenIds == null ? null : promptTokenIds.clone();
  }

  /** The tool definitions, each as the JSON text the client sent. */
  public List<String> toolsJson() {
    return toolsJson;
  }

  /** The requested output budget ({@code max_tokens}, {@code max_completion_tokens}), or -1 if none was given. */
  public int maxTokens() {
    return maxTokens;
  }

  /**
   * How many sequences the server generates, each up to {@link #maxTokens()}: OpenAI's {@code n}, or {@code best_of}
   * when larger; 1 when neither is given.
   */
  public int sequences() {
    return sequences;
  }

  public boolean stream() {
    return stream;
  }

  /** vLLM's {@code cache_salt}: requests with different salts never share cached blocks. */
  public @Nullable String cacheSalt() {
    return cacheSalt;
  }

  /** The LoRA adapter to serve the request with, or null for the base model. */
  public @Nullable String lora() {
    return lora;
  }

  public @Nullable String tenant() {
    return tenant;
  }

  /** A caller-supplied conversation key; requests with the same key prefer the same endpoint. */
  public @Nullable String sessionId() {
    return sessionId;
  }

  /**
   * Which hint gave {@link #sessionId()}: the header or body field's name ({@code x-kinference-session}, an agent's
   * session header such as {@code x-claude-code-session-id} or {@code session_id}, {@code prompt_cache_key},
   * {@code metadata.user_id}, {@code safety_identifier}, {@code user}), {@code caller} when set programmatically
   * without a source, or null when there is no session.
   */
  public @Nullable String sessionSource() {
    return sessionSource;
  }

  /**
   * How long the client asked that the start of its prompt stay cached ({@code cache_control} breakpoints,
   * {@code prompt_cache_retention}), or null when it did not say.
   */
  public @Nullable PromptRetention promptRetention() {
    return promptRetention;
  }

  /** Larger is more urgent; 0 is the default. */
  public int priority() {
    return priority;
  }

  public TrafficClass trafficClass() {
    return trafficClass;
  }

  /** Request headers the caller chose to pass on, names in lower case. */
  public Map<String, String> headers() {
    return headers;
  }

  /** The header's value, looked up case-insensitively, or null. */
  public @Nullable String header(String name) {
    return headers.get(name.toLowerCase(Locale.ROOT));
  }

  /** The parsed JSON body this request came from, or null when built programmatically. Do not modify it. */
  public @Nullable ObjectNode body() {
    return body;
  }

  /** Characters of prompt content (messages, prompt, tools): a size measure available before tokenization. */
  public long promptChars() {
    return promptChars;
  }

  /** The text of the system messages, joined by blank lines, or an empty string. */
  public String systemPrompt() {
    StringBuilder sb = new StringBuilder();
    for (Message m : messages) {
      if (m.role().equals("system")) {
        for (ContentPart p : m.content()) {
          if (p instanceof ContentPart.Text t) {
            if (sb.length() > 0) {
              sb.append("\n\n");
            }
            sb.append(t.text());
          }
        }
      }
    }
    return sb.toString();
  }

  /**
   * The prompt as the given tokenizer sees it, computed on first use and remembered for that tokenizer.
   *
   * @throws TokenizationException when the tokenizer cannot tokenize this request
   */
  @SuppressWarnings("ReferenceEquality") // remembered per tokenizer instance, by identity
  public TokenizedPrompt tokenize(Tokenizer tokenizer) throws TokenizationException {
    TokenizedPrompt current = tokenized;
    if (current != null && current.tokenizer() == tokenizer) {
      return current;
    }
    TokenizedPrompt fresh = TokenizedPrompt.of(tokenizer, tokenizer.tokenize(this), this);
    tokenized = fresh;
    return fresh;
  }

  @Override
  public String toString() {
    return "InferenceRequest[" + format + " model=" + model + " messages=" + messages.size() + " chars=" + promptChars
        + (tenant == null ? "" : " tenant=" + tenant) + (sessionId == null ? "" : " session=" + sessionId + " (" + sessionSource + ")") + "]";
  }

  private static long countChars(
      List<Message> messages, @Nullable String prompt, int @Nullable [] tokenIds, List<String> tools) {
    long n = 0;
    for (Message m : messages) {
      for (ContentPart p : m.content()) {
        n += partChars(p);
      }
    }
    if (prompt != null) {
      n += prompt.length();
    }
    if (tokenIds != null) {
      n += 4L * tokenIds.length;
    }
    for (String t : tools) {
      n += t.length();
    }
    return n;
  }

  private static long partChars(ContentPart p) {
    return switch (p) {
      case ContentPart.Text t -> t.text().length();
      case ContentPart.Image i -> i.source().length();
      case ContentPart.ToolUse u -> u.name().length() + u.inputJson().length();
      case ContentPart.ToolResult r -> {
        long n = 0;
        for (ContentPart c : r.content()) {
          n += partChars(c);
        }
        yield n;
      }
      case ContentPart.Other o -> o.json().length();
    };
  }

  /** Builds an {@link InferenceRequest}; not thread-safe. */
  public static final class Builder {
    private ApiFormat format = ApiFormat.OPENAI_CHAT;
    private String model;
    private final List<Message> messages = new ArrayList<>();
    private @Nullable String prompt;
    private int @Nullable [] promptTokenIds;
    private final List<String> toolsJson = new ArrayList<>();
    private int maxTokens = -1;
    private int sequences = 1;
    private boolean stream;
    private @Nullable String cacheSalt;
    private @Nullable String lora;
    private @Nullable String tenant;
    private @Nullable String sessionId;
    private @Nullable String sessionSource;
    private @Nullable PromptRetention promptRetention;
    private int priority;
    private TrafficClass trafficClass = TrafficClass.INTERACTIVE;
    private final Map<String, String> headers = new TreeMap<>();
    private @Nullable ObjectNode body;

    private Builder(String model) {
      this.model = requireText(model, "model");
    }

    public Builder format(ApiFormat format) {
      this.format = Objects.requireNonNull(format, "format");
      return this;
    }

    public Builder model(String model) {
      this.model = requireText(model, "model");
      return this;
    }

    public Builder system(String text) {
      return message(Message.text("system", text));
    }

    public Builder user(String text) {
      return message(Message.text("user", text));
    }

    public Builder assistant(String text) {
      return message(Message.text("assistant", text));
    }

    public Builder message(Message message) {
      messages.add(Objects.requireNonNull(message, "message"));
      return this;
    }

    public Builder messages(List<Message> all) {
      all.forEach(this::message);
      return this;
    }

    /** Makes this a completions request with a text prompt. */
    public Builder prompt(String prompt) {
      this.prompt = Objects.requireNonNull(prompt, "prompt");
      this.format = ApiFormat.OPENAI_COMPLETIONS;
      return this;
    }

    /** Makes this a completions request whose prompt is already tokenized. */
    public Builder promptTokenIds(int[] ids) {
      this.promptTokenIds = ids.clone();
      this.format = ApiFormat.OPENAI_COMPLETIONS;
      return this;
    }

    public Builder tool(String definitionJson) {
      toolsJson.add(Objects.requireNonNull(definitionJson, "definitionJson"));
      return this;
    }

    /** Sequences generated (OpenAI's {@code n} or {@code best_of}), 1 to {@value InferenceRequest#MAX_SEQUENCES}. */
    public Builder sequences(int sequences) {
      if (sequences < 1 || sequences > MAX_SEQUENCES) {
        throw new IllegalArgumentException("sequences must be 1 to " + MAX_SEQUENCES + ": " + sequences);
      }
      this.sequences = sequences;
      return this;
    }

    public Builder maxTokens(int maxTokens) {
      if (maxTokens < -1 || maxTokens == 0) {
        throw new IllegalArgumentException("maxTokens must be positive, or -1 for unspecified: " + maxTokens);
      }
      this.maxTokens = maxTokens;
      return this;
    }

    public Builder stream(boolean stream) {
      this.stream = stream;
      return this;
    }

    public Builder cacheSalt(@Nullable String cacheSalt) {
      this.cacheSalt = cacheSalt;
      return this;
    }

    public Builder lora(@Nullable String lora) {
      this.lora = lora;
      return this;
    }

    public Builder tenant(@Nullable String tenant) {
      this.tenant = tenant;
      return this;
    }

    /** The session key, its source {@code caller}. */
    public Builder sessionId(@Nullable String sessionId) {
      return session(sessionId, "caller");
    }

    /** The client's prompt-caching hint; null for none. */
    public Builder promptRetention(@Nullable PromptRetention promptRetention) {
      this.promptRetention = promptRetention;
      return this;
    }

    /** The session key and the hint that gave it (see {@link InferenceRequest#sessionSource()}). */
    public Builder session(@Nullable String sessionId, @Nullable String source) {
      this.sessionId = sessionId;
      this.sessionSource = sessionId == null ? null : source == null ? "caller" : source;
      return this;
    }

    public Builder priority(int priority) {
      this.priority = priority;
      return this;
    }

    public Builder trafficClass(TrafficClass trafficClass) {
      this.trafficClass = Objects.requireNonNull(trafficClass, "trafficClass");
      return this;
    }

    public Builder header(String name, String value) {
      headers.put(name.toLowerCase(Locale.ROOT), Objects.requireNonNull(value, "value"));
      return this;
    }

    public Builder headers(Map<String, String> all) {
      all.forEach(this::header);
      return this;
    }

    public Builder body(@Nullable ObjectNode body) {
      this.body = body;
      return this;
    }

    public InferenceRequest build() {
      if (format == ApiFormat.OPENAI_COMPLETIONS) {
        if (prompt == null && promptTokenIds == null) {
          throw new IllegalStateException("a completions request needs a prompt or prompt token ids");
        }
      } else if (messages.isEmpty()) {
        throw new IllegalStateException("a " + format + " request needs at least one message");
      }
      return new InferenceRequest(this);
    }

    private static String requireText(String value, String what) {
      Objects.requireNonNull(value, what);
      if (value.isBlank()) {
        throw new IllegalArgumentException(what + " must not be blank");
      }
      return value;
    }
  }
}
