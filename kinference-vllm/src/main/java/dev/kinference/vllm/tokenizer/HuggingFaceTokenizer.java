package dev.kinference.vllm.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.kinference.prompt.TokenizationException;
import dev.kinference.prompt.Tokenizer;
import dev.kinference.request.InferenceRequest;
import dev.kinference.vllm.template.ChatTemplate;
import dev.kinference.vllm.template.TemplateException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tokenizes in-process exactly as a vLLM server with the same model does: the chat template of
 * {@code tokenizer_config.json} rendered by {@link ChatTemplate} (then encoded without adding special tokens, the
 * template having written them), a completion prompt encoded with special tokens, both by Hugging Face's own
 * tokenizer library through DJL ({@code ai.djl.huggingface:tokenizers}, an optional dependency: add it to use this
 * class; its native library ships inside the jar, nothing is downloaded).
 *
 * <p>Multi-turn chats are not re-encoded from scratch: the rendered prompt is cut at special tokens (which
 * Hugging Face tokenizers split out before anything else, so the pieces encode independently) and each piece's
 * ids are cached, so the next turn of a conversation encodes only its new messages. At construction a probe checks
 * that piecewise encoding equals whole encoding for this tokenizer (it does not for some SentencePiece
 * configurations); if not, every prompt is encoded whole.
 *
 * <p>A request this class cannot tokenize exactly (images, a template construct the engine lacks,
 * {@code continue_final_message}) raises {@link TokenizationException}; it never guesses. Thread-safe.
 */
public final class HuggingFaceTokenizer implements Tokenizer, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(HuggingFaceTokenizer.class);

  private final String name;
  private final ai.djl.huggingface.tokenizers.HuggingFaceTokenizer encoder;
  private final @Nullable ChatTemplate defaultTemplate;
  private final @Nullable ChatTemplate toolTemplate;
  private final Map<String, String> specialTokens;
  private final List<String> splitTokens;
  private final Map<String, Integer> splitTokenIds;
  private final boolean piecewise;
  private final Cache<String, int[]> pieces;

  private HuggingFaceTokenizer(Builder b) throws IOException, TemplateException {
    this.name = b.name;
    Path json = b.tokenizerJson;
    Map<String, String> options = Map.of("addSpecialTokens", "false", "truncation", "false", "padding", "false",
        "modelMaxLength", Integer.toString(Integer.MAX_VALUE));
    this.encoder = ai.djl.huggingface.tokenizers.HuggingFaceTokenizer.newInstance(json, options);
    JsonNode config = b.tokenizerConfig == null ? ChatRequests.JSON.createObjectNode()
        : ChatRequests.JSON.readTree(Files.readString(b.tokenizerConfig));
    String defaultSource = b.chatTemplate;
    String toolSource = b.toolUseTemplate;
    JsonNode ct = config.get("chat_template");
    if (defaultSource == null && ct != null) {
      if (ct.isTextual()) {
        defaultSource = ct.asText();
      } else if (ct.isArray()) {
        for (JsonNode named : ct) {
          String n = named.path("name").asText();
          if (n.equals("default")) {
            defaultSource = named.path("template").asText();
          } else if (n.equals("tool_use") && toolSource == null) {
            toolSource = named.path("template").asText();
          }
        }
      }
    }
    this.defaultTemplate = defaultSource == null ? null : ChatTemplate.compile(defaultSource);
    this.toolTemplate = toolSource == null ? null : ChatTemplate.compile(toolSource);
    Map<String, String> special = new LinkedHashMap<>();
    for (String key : List.of("bos_token", "eos_token", "unk_token", "pad_token")) {
      JsonNode t = config.get(key);
      if (t != null && t.isTextual()) {
        special.put(key, t.asText());
      } else if (t != null && t.isObject() && t.path("content").isTextual()) {
        special.put(key, t.path("content").asText());
      }
    }
    this.specialTokens = Map.copyOf(special);
    Map<String, Integer> ids = new LinkedHashMap<>();
    JsonNode added = ChatRequests.JSON.readTree(Files.readString(json)).path("added_tokens");
    for (JsonNode t : added) {
      if (t.path("special").asBoolean(false) && !t.path("normalized").asBoolean(false)
          && !t.path("lstrip").asBoolean(false) && !t.path("rstrip").asBoolean(false)
          && !t.path("single_word").asBoolean(false) && t.path("content").isTextual()) {
        ids.put(t.path("content").asText(), t.path("id").asInt());
      }
    }
    this.splitTokenIds = Map.copyOf(ids);
    List<String> sorted = new ArrayList<>(ids.keySet());
    sorted.sort(Comparator.comparingInt(String::length).reversed());
    this.splitTokens = List.copyOf(sorted);
    this.pieces = Caffeine.newBuilder().maximumWeight(b.cacheChars)
        .weigher((String k, int[] v) -> k.length() + v.length).build();
    this.piecewise = !splitTokens.isEmpty() && piecewiseMatchesWhole();
    if (!piecewise && !splitTokens.isEmpty()) {
      LOG.info("tokenizer {} does not encode piecewise like whole; prompts are encoded whole", name);
    }
  }

  /**
   * A tokenizer from a model directory holding {@code tokenizer.json} and {@code tokenizer_config.json}. As in
   * transformers, a {@code chat_template.jinja} file there (gpt-oss and newer models ship their template so) takes
   * priority over the config's {@code chat_template}, and {@code additional_chat_templates/tool_use.jinja} is the
   * template for requests with tools.
   */
  public static HuggingFaceTokenizer fromDirectory(Path directory) throws IOException {
    Path config = directory.resolve("tokenizer_config.json");
    Builder builder = builder(directory.resolve("tokenizer.json"))
        .tokenizerConfig(Files.exists(config) ? config : null);
    Path template = directory.resolve("chat_template.jinja");
    if (Files.isRegularFile(template)) {
      builder.chatTemplate(Files.readString(template));
    }
    Path toolUse = directory.resolve("additional_chat_templates").resolve("tool_use.jinja");
    if (Files.isRegularFile(toolUse)) {
      builder.toolUseTemplate(Files.readString(toolUse));
    }
    return builder.build();
  }

  public static Builder builder(Path tokenizerJson) {
    return new Builder(tokenizerJson);
  }

  @Override
  public String name() {
    return name;
  }

  /** Whether chat prompts are encoded piece by piece with cached pieces (see the class documentation). */
  public boolean isPiecewise() {
    return piecewise;
  }

  @Override
  public int[] tokenize(InferenceRequest request) throws TokenizationException {
    int[] given = request.promptTokenIds();
    if (given != null) {
      return given;
    }
    String prompt = request.prompt();
    if (prompt != null) {
      return toInts(encoder.encode(prompt, true, false).getIds());
    }
    return encodeRendered(render(request));
  }

  /** The chat prompt vLLM would build for {@code request}: its template rendered. */
  public String render(InferenceRequest request) throws TokenizationException {
    ChatRequests chat = ChatRequests.of(request);
    if (chat.continueFinalMessage()) {
      throw new TokenizationException("continue_final_message is not supported by the in-process tokenizer");
    }
    ChatTemplate template = chat.tools() != null && toolTemplate != null ? toolTemplate : defaultTemplate;
    if (template == null) {
      throw new TokenizationException("tokenizer " + name + " has no chat template");
    }
    Map<String, Object> context = new LinkedHashMap<>(specialTokens);
    chat.templateKwargs().properties().forEach(e -> context.put(e.getKey(), e.getValue()));
    context.put("messages", chat.messages());
    context.put("tools", chat.tools() == null ? ChatRequests.JSON.nullNode() : chat.tools());
    context.put("add_generation_prompt", chat.addGenerationPrompt());
    try {
      return template.render(context);
    } catch (TemplateException e) {
      throw new TokenizationException(String.valueOf(e.getMessage()), e);
    }
  }

  /** Encodes a rendered prompt without adding special tokens (it has them), piece by piece when possible. */
  public int[] encodeRendered(String text) {
    return piecewise ? encodePiecewise(text, true) : toInts(encoder.encode(text, false, false).getIds());
  }

  /** Cuts {@code text} at special tokens and encodes the pieces between them, from the cache if asked. */
  private int[] encodePiecewise(String text, boolean cached) {
    IntList out = new IntList(text.length() / 3 + 16);
    int pos = 0;
    int n = text.length();
    while (pos < n) {
      int next = -1;
      String token = null;
      for (String t : splitTokens) {
        int at = text.indexOf(t, pos);
        if (at >= 0 && (next < 0 || at < next)) {
          next = at;
          token = t;
        }
      }
      int end = next < 0 ? n : next;
      if (end > pos) {
        String piece = text.substring(pos, end);
        out.addAll(cached ? pieces.get(piece, this::encodeWhole) : encodeWhole(piece));
      }
      if (token == null) {
        break;
      }
      out.add(Objects.requireNonNull(splitTokenIds.get(token)));
      pos = end + token.length();
    }
    return out.toArray();
  }

  private int[] encodeWhole(String text) {
    return toInts(encoder.encode(text, false, false).getIds());
  }

  private boolean piecewiseMatchesWhole() {
    String special = splitTokens.get(splitTokens.size() - 1);
    List<String> probes = List.of("Hello world" + special + "\nuser\n  x  " + special + special + " trailing ",
        special + "start" + special, "a" + special + "b " + special + " c\n\n" + special + "\u00e9\u4e2d");
    for (String probe : probes) {
      if (!java.util.Arrays.equals(encodeWhole(probe), encodePiecewise(probe, false))) {
        return false;
      }
    }
    return true;
  }

  private static int[] toInts(long[] ids) {
    int[] out = new int[ids.length];
    for (int i = 0; i < ids.length; i++) {
      out[i] = Math.toIntExact(ids[i]);
    }
    return out;
  }

  @Override
  public void close() {
    encoder.close();
  }

  /** A growable int array. */
  private static final class IntList {
    private int[] a;
    private int size;

    IntList(int capacity) {
      a = new int[Math.max(16, capacity)];
    }

    void add(int v) {
      if (size == a.length) {
        a = java.util.Arrays.copyOf(a, a.length * 2);
      }
      a[size++] = v;
    }

    void addAll(int[] vs) {
      if (size + vs.length > a.length) {
        a = java.util.Arrays.copyOf(a, Math.max(a.length * 2, size + vs.length));
      }
      System.arraycopy(vs, 0, a, size, vs.length);
      size += vs.length;
    }

    int[] toArray() {
      return java.util.Arrays.copyOf(a, size);
    }
  }

  /** Builds a {@link HuggingFaceTokenizer}; not thread-safe. */
  public static final class Builder {
    private final Path tokenizerJson;
    private @Nullable Path tokenizerConfig;
    private @Nullable String chatTemplate;
    private @Nullable String toolUseTemplate;
    private String name = "huggingface";
    private long cacheChars = 16L << 20;

    private Builder(Path tokenizerJson) {
      this.tokenizerJson = Objects.requireNonNull(tokenizerJson, "tokenizerJson");
    }

    /** {@code tokenizer_config.json}: the chat template and special tokens; without it only completions work. */
    public Builder tokenizerConfig(@Nullable Path config) {
      this.tokenizerConfig = config;
      return this;
    }

    /** A chat template to use instead of the config's (vLLM's {@code --chat-template}). */
    public Builder chatTemplate(@Nullable String source) {
      this.chatTemplate = source;
      return this;
    }

    /**
     * A chat template for requests with tools, instead of the config's {@code tool_use} template (a model's
     * {@code additional_chat_templates/tool_use.jinja}); requests without tools use {@link #chatTemplate}.
     */
    public Builder toolUseTemplate(@Nullable String source) {
      this.toolUseTemplate = source;
      return this;
    }

    /** The name routers select this tokenizer by; default {@code huggingface}. */
    public Builder name(String name) {
      if (name.isBlank()) {
        throw new IllegalArgumentException("name must not be blank");
      }
      this.name = name;
      return this;
    }

    /** Characters of prompt pieces (plus their ids) kept in the piece cache; default 16 Mi. */
    public Builder cacheChars(long chars) {
      if (chars < 0) {
        throw new IllegalArgumentException("cacheChars must not be negative: " + chars);
      }
      this.cacheChars = chars;
      return this;
    }

    /**
     * Loads the tokenizer and compiles its chat template.
     *
     * @throws IOException if a file cannot be read or the chat template cannot be compiled (the cause says why)
     */
    public HuggingFaceTokenizer build() throws IOException {
      if (!Files.isRegularFile(tokenizerJson)) {
        throw new IOException("no tokenizer.json at " + tokenizerJson);
      }
      try {
        return new HuggingFaceTokenizer(this);
      } catch (TemplateException e) {
        throw new IOException("the chat template of " + tokenizerJson.getParent() + " cannot be used: "
            + e.getMessage(), e);
      } catch (UncheckedIOException e) {
        throw e.getCause();
      }
    }
  }

}
