package dev.kinference.sim.server;

import dev.kinference.sim.engine.SimEngineBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/** Configures a {@link SimulatedServer}; every setter validates its argument. Not thread-safe. */
public final class SimulatedServerBuilder {
  final String modelName;
  @Nullable String name;
  final List<String> loraAdapters = new ArrayList<>();
  int maxLoras;
  int maxModelLen;
  int defaultOutputTokens = 64;
  double timeScale = 1.0;
  boolean instantResponse;
  boolean kvEvents = true;
  KvEventFormat kvEventFormat = KvEventFormat.MAP;
  @Nullable String topic;
  boolean replayWithTopic;
  int dataParallelRank;
  boolean promptTokensDetails = true;
  int kvEventBufferSteps = 10_000;
  Consumer<SimEngineBuilder> engineSettings = b -> {};
  @Nullable Long hashSeed;
  int port;

  SimulatedServerBuilder(String modelName) {
    Objects.requireNonNull(modelName, "modelName");
    if (modelName.isBlank()) {
      throw new IllegalArgumentException("modelName must not be blank");
    }
    this.modelName = modelName;
  }

  /** The HTTP port on 127.0.0.1; 0 (the default) picks a free one. */
  public SimulatedServerBuilder port(int port) {
    if (port < 0 || port > 65_535) {
      throw new IllegalArgumentException("port must be between 0 and 65535, got " + port);
    }
    this.port = port;
    return this;
  }

  /** The server's name (its endpoint id). Default: {@code 127.0.0.1:<port>}. */
  public SimulatedServerBuilder name(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("name must not be blank");
    }
    this.name = name;
    return this;
  }

  /** Serves a LoRA adapter under this model name too ({@code --lora-modules}). */
  public SimulatedServerBuilder loraAdapter(String adapter) {
    Objects.requireNonNull(adapter, "adapter");
    if (adapter.isBlank() || adapter.equals(modelName) || loraAdapters.contains(adapter)) {
      throw new IllegalArgumentException("invalid or duplicate LoRA adapter name: '" + adapter + "'");
    }
    loraAdapters.add(adapter);
    return this;
  }

  /** {@code --max-loras}. Default: the number of adapters. */
  public SimulatedServerBuilder maxLoras(int maxLoras) {
    if (maxLoras < 1) {
      throw new IllegalArgumentException("maxLoras must be positive: " + maxLoras);
    }
    this.maxLoras = maxLoras;
    return this;
  }

  /**
   * {@code --max-model-len}: prompt plus output tokens. Default: the model's, capped to what the KV cache holds
   * (32,768 for an instant-response server).
   */
  public SimulatedServerBuilder maxModelLen(int maxModelLen) {
    if (maxModelLen < 16) {
      throw new IllegalArgumentException("maxModelLen must be at least 16: " + maxModelLen);
    }
    this.maxModelLen = maxModelLen;
    return this;
  }

  /**
   * How many tokens an answer has when the model stops by itself (finish reason {@code stop}); a smaller
   * {@code max_tokens} cuts it (finish reason {@code length}), and {@code ignore_eos} generates exactly
   * {@code max_tokens}. Default 64.
   */
  public SimulatedServerBuilder defaultOutputTokens(int tokens) {
    if (tokens < 1) {
      throw new IllegalArgumentException("defaultOutputTokens must be positive: " + tokens);
    }
    this.defaultOutputTokens = tokens;
    return this;
  }

  /** Simulated seconds per wall-clock second: 10 runs ten times faster than a real GPU. Default 1. */
  public SimulatedServerBuilder timeScale(double timeScale) {
    if (!(timeScale > 0) || Double.isInfinite(timeScale)) {
      throw new IllegalArgumentException("timeScale must be positive and finite: " + timeScale);
    }
    this.timeScale = timeScale;
    return this;
  }

  /**
   * Answers at once, with no engine model and no KV events: for measuring a proxy's own overhead. Default off.
   */
  public SimulatedServerBuilder instantResponse(boolean instant) {
    this.instantResponse = instant;
    return this;
  }

  /** Whether to publish KV events over ZMQ. Default on. */
  public SimulatedServerBuilder kvEvents(boolean enabled) {
    this.kvEvents = enabled;
    return this;
  }

  /** The event encoding. Default {@link KvEventFormat#MAP} (vLLM 0.26 and later). */
  public SimulatedServerBuilder kvEventFormat(KvEventFormat format) {
    this.kvEventFormat = Objects.requireNonNull(format, "format");
    return this;
  }

  /** The topic frame. Default {@code kv@127.0.0.1:<port>@<model>} (llm-d's convention); vLLM's own is "". */
  public SimulatedServerBuilder kvEventTopic(String topic) {
    this.topic = Objects.requireNonNull(topic, "topic");
    return this;
  }

  /**
   * Whether replayed batches carry the topic frame ({@code ["", topic, seq, payload]}, newer vLLM) instead of
   * {@code ["", seq, payload]} (older vLLM). Default false.
   */
  public SimulatedServerBuilder replayWithTopic(boolean withTopic) {
    this.replayWithTopic = withTopic;
    return this;
  }

  /** The data-parallel rank written in each batch and as the {@code engine} metrics label. Default 0. */
  public SimulatedServerBuilder dataParallelRank(int rank) {
    if (rank < 0) {
      throw new IllegalArgumentException("dataParallelRank must not be negative: " + rank);
    }
    this.dataParallelRank = rank;
    return this;
  }

  /** {@code --enable-prompt-tokens-details}: usage carries {@code prompt_tokens_details.cached_tokens}. On. */
  public SimulatedServerBuilder promptTokensDetails(boolean enabled) {
    this.promptTokensDetails = enabled;
    return this;
  }

  /** Batches kept for replay (vLLM's {@code buffer_steps}). Default 10,000. */
  public SimulatedServerBuilder kvEventBufferSteps(int steps) {
    if (steps < 1) {
      throw new IllegalArgumentException("kvEventBufferSteps must be positive: " + steps);
    }
    this.kvEventBufferSteps = steps;
    return this;
  }

  /**
   * Configures the engine model: GPU, model, tensor parallelism, block size, budgets (see
   * {@link SimEngineBuilder}). The server sets the served model name, the block-hash seed, {@code max_model_len}
   * (if set here) and the KV-event listener itself. Default: {@link SimEngineBuilder}'s defaults.
   */
  public SimulatedServerBuilder engine(Consumer<SimEngineBuilder> settings) {
    this.engineSettings = Objects.requireNonNull(settings, "settings");
    return this;
  }

  /**
   * The engine's block-hash seed (vLLM's {@code PYTHONHASHSEED}). Default: a random seed at every (re)start, so
   * that a restarted server's block hashes differ, as a real vLLM process's do.
   */
  public SimulatedServerBuilder hashSeed(long seed) {
    this.hashSeed = seed;
    return this;
  }

  /** Starts the server. */
  public SimulatedServer start() {
    try {
      return new SimulatedServer(this);
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("could not start the simulated server", e);
    }
  }
}
