package dev.kinference.sim.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.InvalidRequestException;
import dev.kinference.request.RequestParser;
import dev.kinference.request.RequestTooLargeException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Blocker;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP face of a {@link SimulatedServer}: vLLM's OpenAI (chat, completions, Responses: {@link SimResponses})
 * and Anthropic endpoints, its pooling endpoints and
 * {@code /detokenize} ({@link SimPooling}), plus {@code /tokenize},
 * {@code /health}, {@code /metrics}, {@code /v1/models} and {@code /version}.
 *
 * <p>Each request is handled on its own virtual thread, which blocks until the engine loop delivers its tokens.
 */
final class SimHttpHandler extends Handler.Abstract {

  static final String JSON = "application/json";
  private static final String EVENT_STREAM = "text/event-stream; charset=utf-8";
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final SimulatedServer server;
  private final RequestParser parser = RequestParser.defaults();
  private final SimPooling pooling;
  private final SimResponses responses;

  SimHttpHandler(SimulatedServer server) {
    super(InvocationType.BLOCKING);
    this.server = server;
    this.pooling = new SimPooling(server);
    this.responses = new SimResponses(server, this);
  }

  SimResponses responses() {
    return responses;
  }

  /** A request that failed validation: the status and vLLM's error type. */
  static final class HttpError extends Exception {
    private static final long serialVersionUID = 1L;
    final int status;
    final String type;

    HttpError(int status, String type, String message) {
      super(message, null, false, false);
      this.status = status;
      this.type = type;
    }
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    String path = Request.getPathInContext(request);
    String method = request.getMethod();
    try {
      if (!server.isAnswering() && !path.equals("/metrics")) {
        if (path.equals("/health")) {
          send(response, callback, 503, JSON, new byte[0]);
        } else {
          byte[] body = path.startsWith("/v1/messages")
              ? WireJson.anthropicError("ServiceUnavailableError", "The engine is not running")
              : WireJson.openAiError("The engine is not running", "ServiceUnavailableError", 503);
          send(response, callback, 503, JSON, body);
        }
        return true;
      }
      switch (path) {
        case "/health" -> {
          if (get(method, response, callback)) {
            send(response, callback, 200, JSON, new byte[0]);
          }
        }
        case "/metrics" -> {
          if (get(method, response, callback)) {
            send(response, callback, 200, "text/plain; version=0.0.4; charset=utf-8",
                server.metricsText().getBytes(StandardCharsets.UTF_8));
          }
        }
        case "/version" -> {
          if (get(method, response, callback)) {
            send(response, callback, 200, JSON, "{\"version\":\"0.26.0+kinference.sim\"}".getBytes(
                StandardCharsets.UTF_8));
          }
        }
        case "/v1/models" -> {
          if (get(method, response, callback)) {
            send(response, callback, 200, JSON, WireJson.models(server.modelName(), server.loraAdapters(),
                server.createdSeconds(), server.maxModelLen()));
          }
        }
        case "/v1/chat/completions" -> {
          if (post(method, response, callback)) {
            openAi(ApiFormat.OPENAI_CHAT, request, response, callback);
          }
        }
        case "/v1/completions" -> {
          if (post(method, response, callback)) {
            openAi(ApiFormat.OPENAI_COMPLETIONS, request, response, callback);
          }
        }
        case "/v1/messages" -> {
          if (post(method, response, callback)) {
            anthropic(request, response, callback);
          }
        }
        case "/v1/responses" -> {
          if (post(method, response, callback)) {
            responses.handle(request, response, callback);
          }
        }
        case "/v1/messages/count_tokens" -> {
          if (post(method, response, callback)) {
            countTokens(request, response, callback);
          }
        }
        case "/tokenize" -> {
          if (post(method, response, callback)) {
            tokenize(request, response, callback);
          }
        }
        case "/reset_prefix_cache" -> {
          if (post(method, response, callback)) {
            server.resetPrefixCache();
            send(response, callback, 200, JSON, new byte[0]);
          }
        }
        default -> {
          if (!SimPooling.PATHS.contains(path)) {
            send(response, callback, 404, JSON, WireJson.detail("Not Found"));
          } else if (post(method, response, callback)) {
            pooling(path, request, response, callback);
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      callback.failed(e);
    } catch (IOException | RuntimeException e) {
      // the client went away mid-response, or a bug: end the exchange either way
      callback.failed(e);
    }
    return true;
  }

  private static boolean get(String method, Response response, Callback callback) {
    if (method.equals("GET") || method.equals("HEAD")) {
      return true;
    }
    send(response, callback, 405, JSON, WireJson.detail("Method Not Allowed"));
    return false;
  }

  private static boolean post(String method, Response response, Callback callback) {
    if (method.equals("POST")) {
      return true;
    }
    send(response, callback, 405, JSON, WireJson.detail("Method Not Allowed"));
    return false;
  }

  // ---- OpenAI ----

  private void openAi(ApiFormat format, Request request, Response response, Callback callback)
      throws IOException, InterruptedException {
    Call call;
    try {
      InferenceRequest parsed = parser.parse(format, readBody(request));
      call = prepare(parsed);
    } catch (HttpError | InvalidRequestException e) {
      refuseOpenAi(e, response, callback);
      return;
    }
    boolean chat = format == ApiFormat.OPENAI_CHAT;
    String id = (chat ? "chatcmpl-" : "cmpl-") + randomHex();
    long created = System.currentTimeMillis() / 1000;
    ResponseStream stream = server.submit(id, call);
    if (call.stream) {
      streamOpenAi(chat, id, created, call, stream, response, callback);
    } else {
      Outcome outcome = await(stream);
      if (outcome.failure != null) {
        send(response, callback, 500, JSON, WireJson.openAiError(outcome.failure, "InternalServerError", 500));
        return;
      }
      String text = server.text().text(call.words, 0, call.words.length);
      WireJson.Usage usage = usage(call, outcome.cachedTokens, call.words.length);
      byte[] body = chat
          ? WireJson.chatResponse(id, created, call.model, text, call.finishReason, usage)
          : WireJson.completionResponse(id, created, call.model, text, call.finishReason, usage);
      send(response, callback, 200, JSON, body);
    }
  }

  private void streamOpenAi(boolean chat, String id, long created, Call call, ResponseStream stream,
      Response response, Callback callback) throws IOException, InterruptedException {
    EngineStreamRelay.relay(server, call, stream, new EngineStreamRelay.Format() {
      @Override
      public byte[] failureBody(String reason) {
        return WireJson.openAiError(reason, "InternalServerError", 500);
      }

      @Override
      public void start(Response r) throws IOException {
        if (chat) {
          write(r, WireJson.chatRoleChunk(id, created, call.model, call.continuousUsage ? usage(call, -1, 0) : null));
        }
      }

      @Override
      public void text(Response r, String text, int sent) throws IOException {
        String finish = sent == call.words.length ? call.finishReason : null;
        WireJson.Usage running = call.continuousUsage ? usage(call, -1, sent) : null;
        write(r, chat
            ? WireJson.chatContentChunk(id, created, call.model, text, finish, running)
            : WireJson.completionChunk(id, created, call.model, text, finish, running));
      }

      @Override
      public void finish(Response r, Callback cb, ResponseStream.Finished f, int sent, boolean started)
          throws IOException {
        if (call.includeUsage) {
          write(r, WireJson.usageChunk(id, chat ? "chat.completion.chunk" : "text_completion", created,
              call.model, usage(call, f.cachedPromptTokens(), sent)));
        }
        r.write(true, ByteBuffer.wrap(WireJson.DONE), cb);
      }
    }, response, callback);
  }

  // ---- Anthropic ----

  private void anthropic(Request request, Response response, Callback callback)
      throws IOException, InterruptedException {
    Call call;
    try {
      call = prepare(parser.parse(ApiFormat.ANTHROPIC_MESSAGES, readBody(request)));
    } catch (HttpError e) {
      send(response, callback, e.status, JSON, WireJson.anthropicError(e.type, message(e)));
      return;
    } catch (RequestTooLargeException e) {
      send(response, callback, 413, JSON, WireJson.anthropicError("BadRequestError", message(e)));
      return;
    } catch (InvalidRequestException e) {
      send(response, callback, 400, JSON, WireJson.anthropicError("BadRequestError", message(e)));
      return;
    }
    // vLLM serves /v1/messages through its chat completion path, so ids are chat completion ids.
    String id = "chatcmpl-" + randomHex();
    ResponseStream stream = server.submit(id, call);
    String stopReason = WireJson.stopReason(call.finishReason);
    if (!call.stream) {
      Outcome outcome = await(stream);
      if (outcome.failure != null) {
        send(response, callback, 500, JSON, WireJson.anthropicError("internal_error", outcome.failure));
        return;
      }
      send(response, callback, 200, JSON, WireJson.message(id, call.model,
          server.text().text(call.words, 0, call.words.length), stopReason, call.promptTokens.length,
          call.words.length));
      return;
    }
    EngineStreamRelay.relay(server, call, stream, new EngineStreamRelay.Format() {
      @Override
      public byte[] failureBody(String reason) {
        return WireJson.anthropicError("internal_error", reason);
      }

      @Override
      public void start(Response r) throws IOException {
        write(r, WireJson.messageStart(id, call.model, call.promptTokens.length));
        write(r, WireJson.contentBlockStart(0));
      }

      @Override
      public void text(Response r, String text, int sent) throws IOException {
        write(r, WireJson.contentBlockDelta(0, text));
      }

      @Override
      public void finish(Response r, Callback cb, ResponseStream.Finished f, int sent, boolean started)
          throws IOException {
        if (!started) {
          startStream(r);
          write(r, WireJson.messageStart(id, call.model, call.promptTokens.length));
        } else {
          write(r, WireJson.contentBlockStop(0));
        }
        write(r, WireJson.messageDelta(stopReason, call.promptTokens.length, sent));
        r.write(true, ByteBuffer.wrap(WireJson.messageStop()), cb);
      }
    }, response, callback);
  }

  private void countTokens(Request request, Response response, Callback callback) throws IOException {
    try {
      ObjectNode body = parseObject(readBody(request));
      body.put("max_tokens", 1);
      InferenceRequest parsed = parser.parse(ApiFormat.ANTHROPIC_MESSAGES, MAPPER.writeValueAsBytes(body));
      resolveModel(parsed.model());
      send(response, callback, 200, JSON, WireJson.countTokens(server.tokenize(parsed).length));
    } catch (HttpError e) {
      send(response, callback, e.status, JSON, WireJson.anthropicError(e.type, message(e)));
    } catch (InvalidRequestException e) {
      send(response, callback, 400, JSON, WireJson.anthropicError("BadRequestError", message(e)));
    }
  }

  // ---- tokenize ----

  /** {@code {model?, prompt | messages, add_special_tokens?}}: tokenized as the server would, chat template and all. */
  private void tokenize(Request request, Response response, Callback callback) throws IOException {
    try {
      ObjectNode body = parseObject(readBody(request));
      JsonNode model = body.get("model");
      if (model == null || model.isNull()) {
        body.put("model", server.modelName());
      }
      ApiFormat format;
      if (body.has("messages")) {
        format = ApiFormat.OPENAI_CHAT;
      } else if (body.has("prompt")) {
        format = ApiFormat.OPENAI_COMPLETIONS;
      } else {
        throw new HttpError(400, "BadRequestError", "either 'prompt' or 'messages' is required");
      }
      InferenceRequest parsed = parser.parse(format, MAPPER.writeValueAsBytes(body));
      resolveModel(parsed.model());
      send(response, callback, 200, JSON, WireJson.tokenize(server.tokenize(parsed), server.maxModelLen()));
    } catch (HttpError e) {
      send(response, callback, e.status, JSON, WireJson.openAiError(message(e), e.type, e.status));
    } catch (InvalidRequestException e) {
      send(response, callback, 400, JSON, WireJson.openAiError(message(e), "BadRequestError", 400));
    }
  }

  // ---- pooling ----

  private void pooling(String path, Request request, Response response, Callback callback) throws IOException {
    try {
      ObjectNode body = parseObject(readBody(request));
      JsonNode model = body.get("model");
      if (model != null && !model.isNull()) {
        resolveModel(model.asText());
      }
      send(response, callback, 200, JSON, pooling.answer(path, body));
    } catch (HttpError e) {
      send(response, callback, e.status, JSON, WireJson.openAiError(message(e), e.type, e.status));
    } catch (SimPooling.BadRequest | RequestTooLargeException e) {
      send(response, callback, 400, JSON, WireJson.openAiError(message(e), "BadRequestError", 400));
    }
  }

  // ---- shared ----

  /** Everything needed to run and answer one generation request. */
  static final class Call {
    final String model;
    final @Nullable String lora;
    final @Nullable String cacheSalt;
    final int[] promptTokens;
    /** The answer's words, one per output token. */
    final int[] words;
    /**
     * The engine's script: the answer's token ids, plus one more when the answer is cut by {@code max_tokens} (so
     * the engine ends it with {@code length}, not {@code stop}).
     */
    final int[] outputTokens;
    final String finishReason;
    final boolean stream;
    final boolean includeUsage;
    final boolean continuousUsage;

    Call(String model, @Nullable String lora, @Nullable String cacheSalt, int[] promptTokens, int[] words,
        int[] outputTokens, String finishReason, boolean stream, boolean includeUsage, boolean continuousUsage) {
      this.model = model;
      this.lora = lora;
      this.cacheSalt = cacheSalt;
      this.promptTokens = promptTokens;
      this.words = words;
      this.outputTokens = outputTokens;
      this.finishReason = finishReason;
      this.stream = stream;
      this.includeUsage = includeUsage;
      this.continuousUsage = continuousUsage;
    }
  }

  /** The end of a request: cached prompt tokens, or why it failed. */
  record Outcome(int cachedTokens, @Nullable String failure) {}

  Call prepare(InferenceRequest parsed) throws HttpError {
    String lora = resolveModel(parsed.model());
    ObjectNode body = parsed.body();
    JsonNode n = body == null ? null : body.get("n");
    if (n != null && !n.isNull() && !(n.isIntegralNumber() && n.intValue() == 1)) {
      throw new HttpError(400, "BadRequestError", "the simulator serves n=1 only");
    }
    boolean includeUsage = false;
    boolean continuousUsage = false;
    JsonNode options = body == null ? null : body.get("stream_options");
    if (options != null && options.isObject()) {
      if (!parsed.stream()) {
        throw new HttpError(400, "BadRequestError", "Stream options can only be defined when `stream=True`.");
      }
      includeUsage = options.path("include_usage").asBoolean(false);
      continuousUsage = options.path("continuous_usage_stats").asBoolean(false);
    }
    boolean ignoreEos = body != null && body.path("ignore_eos").asBoolean(false);
    int[] prompt = server.tokenize(parsed);
    int maxLen = server.maxModelLen();
    int maxTokens = parsed.maxTokens();
    if (maxTokens > 0 && prompt.length + (long) maxTokens > maxLen) {
      throw new HttpError(400, "BadRequestError", "This model's maximum context length is " + maxLen
          + " tokens. However, you requested " + (prompt.length + (long) maxTokens) + " tokens (" + prompt.length
          + " in the messages, " + maxTokens + " in the completion). Please reduce the length of the messages or"
          + " completion.");
    }
    if (prompt.length >= maxLen) {
      throw new HttpError(400, "BadRequestError", "This model's maximum context length is " + maxLen
          + " tokens. However, your prompt has " + prompt.length + " tokens.");
    }
    int budget = maxTokens > 0 ? maxTokens : maxLen - prompt.length;
    int natural = server.defaultOutputTokens();
    int count;
    String finishReason;
    if (ignoreEos || natural > budget) {
      count = budget;
      finishReason = "length";
    } else {
      count = natural;
      finishReason = "stop";
    }
    boolean cut = finishReason.equals("length");
    int[] script = server.text().words(ThreadLocalRandom.current().nextLong(), cut ? count + 1 : count);
    int[] words = cut ? Arrays.copyOf(script, count) : script;
    return new Call(parsed.model(), lora, parsed.cacheSalt(), prompt, words, server.text().tokenIds(script),
        finishReason, parsed.stream(), includeUsage, continuousUsage);
  }

  /** The LoRA adapter the model name selects, null for the base model. */
  private @Nullable String resolveModel(String model) throws HttpError {
    if (model.equals(server.modelName())) {
      return null;
    }
    if (server.loraAdapters().contains(model)) {
      return model;
    }
    throw new HttpError(404, "NotFoundError", "The model `" + model + "` does not exist.");
  }

  static Outcome await(ResponseStream stream) throws InterruptedException {
    while (true) {
      ResponseStream.Event e = stream.next();
      switch (e) {
        case ResponseStream.Tokens t -> {
          // the answer is assembled at the end
        }
        case ResponseStream.Finished f -> {
          return new Outcome(f.cachedPromptTokens(), null);
        }
        case ResponseStream.Failed f -> {
          return new Outcome(0, f.reason());
        }
      }
    }
  }

  /**
   * A request refused before it ran, answered as an OpenAI error: an {@link HttpError} with its own status and type,
   * a body too large with 413, any other invalid request with 400.
   */
  static void refuseOpenAi(Exception e, Response response, Callback callback) {
    int status = e instanceof HttpError h ? h.status : e instanceof RequestTooLargeException ? 413 : 400;
    String type = e instanceof HttpError h ? h.type : "BadRequestError";
    send(response, callback, status, JSON, WireJson.openAiError(message(e), type, status));
  }

  private WireJson.Usage usage(Call call, int cached, int completionTokens) {
    return new WireJson.Usage(call.promptTokens.length, completionTokens,
        cached >= 0 && server.promptTokensDetails() ? cached : -1);
  }

  byte[] readBody(Request request) throws IOException, RequestTooLargeException {
    long limit = parser.maxBodyBytes();
    long declared = request.getLength();
    if (declared > limit) {
      throw new RequestTooLargeException("body", declared, limit);
    }
    try (InputStream in = Request.asInputStream(request)) {
      byte[] buf = new byte[(int) Math.max(256, Math.min(declared, limit))];
      int size = 0;
      while (true) {
        if (size == buf.length) {
          if (buf.length >= limit) {
            if (in.read() < 0) {
              break;
            }
            throw new RequestTooLargeException("body", limit + 1, limit);
          }
          buf = Arrays.copyOf(buf, (int) Math.min(limit, buf.length * 2L));
        }
        int r = in.read(buf, size, buf.length - size);
        if (r < 0) {
          break;
        }
        size += r;
      }
      return Arrays.copyOf(buf, size);
    }
  }

  private static ObjectNode parseObject(byte[] body) throws HttpError {
    try {
      JsonNode node = MAPPER.readTree(body);
      if (node instanceof ObjectNode o) {
        return o;
      }
      throw new HttpError(400, "BadRequestError", "body must be a JSON object");
    } catch (IOException e) {
      throw new HttpError(400, "BadRequestError", "body is not valid JSON: " + message(e));
    }
  }

  static void startStream(Response response) {
    response.setStatus(200);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, EVENT_STREAM);
  }

  static void write(Response response, byte[] bytes) throws IOException {
    try (Blocker.Callback cb = Blocker.callback()) {
      response.write(false, ByteBuffer.wrap(bytes), cb);
      cb.block();
    }
  }

  static void send(Response response, Callback callback, int status, String contentType, byte[] body) {
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
    response.write(true, ByteBuffer.wrap(body), callback);
  }

  static String message(Throwable e) {
    String m = e.getMessage();
    return m == null ? e.toString() : m;
  }

  static String randomHex() {
    ThreadLocalRandom r = ThreadLocalRandom.current();
    return String.format("%016x%016x", r.nextLong(), r.nextLong());
  }
}
