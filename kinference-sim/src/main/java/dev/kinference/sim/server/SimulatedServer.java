package dev.kinference.sim.server;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointLabels;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.prompt.TokenizationException;
import dev.kinference.request.InferenceRequest;
import dev.kinference.sim.engine.EngineConfig;
import dev.kinference.sim.engine.EngineMetrics;
import dev.kinference.sim.engine.EngineStepEvents;
import dev.kinference.sim.engine.SimEngine;
import dev.kinference.sim.engine.SimEngineBuilder;
import dev.kinference.sim.engine.SimRequest;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.VirtualThreadPool;
import org.jspecify.annotations.Nullable;

/**
 * One simulated vLLM server on loopback: a real HTTP server speaking vLLM's OpenAI and Anthropic APIs (plus
 * {@code /tokenize}, {@code /health}, {@code /metrics}, {@code /v1/models}), and a real ZMQ PUB socket with a
 * ROUTER replay socket publishing KV-cache events in vLLM's wire format. Behind them an engine model runs in
 * wall-clock time (optionally faster, see {@link Builder#timeScale}).
 *
 * <pre>{@code
 * try (SimulatedServer server = SimulatedServer.builder("Qwen/Qwen3-8B").start()) {
 *   URI base = server.baseUri();                 // http://127.0.0.1:<port>
 *   String events = server.kvEventsEndpoint();   // tcp://127.0.0.1:<port>
 * }
 * }</pre>
 *
 * <p>Operational hooks for tests: {@link #kill()} (the engine dies: requests fail, {@code /health} answers 503),
 * {@link #kill(KillMode)} with {@link KillMode#UNREACHABLE} (nothing listens any more), {@link #restart()} (an
 * empty cache, counters reset, KV-event sequence numbers from 0 again, same ports), {@link #dropKvEvents} (batches
 * missing from the live stream but available for replay) and {@link #resetPrefixCache()}.
 *
 * <p>Thread-safe. The hooks are serialised with each other; requests are served concurrently.
 */
public final class SimulatedServer implements AutoCloseable {

  private static final String HOST = "127.0.0.1";

  /** How {@link #kill(KillMode)} takes a server down. */
  public enum KillMode {
    /** The engine dies, the API process stays: requests fail with 503, {@code /health} answers 503. */
    ENGINE_DEAD,
    /** The whole process is gone: connections are refused, the ZMQ sockets are closed. */
    UNREACHABLE
  }

  private enum State {
    RUNNING,
    ENGINE_DEAD,
    UNREACHABLE,
    CLOSED
  }

  private final String name;
  private final String modelName;
  private final List<String> loraAdapters;
  private final int maxLoras;
  private final int defaultOutputTokens;
  private final double timeScale;
  private final boolean instantResponse;
  private final boolean kvEvents;
  private final KvEventFormat kvEventFormat;
  private final @Nullable String configuredTopic;
  private final boolean replayWithTopic;
  private final int dataParallelRank;
  private final boolean promptTokensDetails;
  private final int kvEventBufferSteps;
  private final Consumer<SimEngineBuilder> engineSettings;
  private final int requestedMaxModelLen;
  private final @Nullable Long hashSeed;
  private final int instantBlockSize = 16;
  private final long instantNumGpuBlocks = 10_000;

  private final ApproximateTokenizer tokenizer = new ApproximateTokenizer();
  private final SyntheticText text = new SyntheticText(tokenizer);
  private final Server jetty;
  private final SimResponses responses;
  private final ServerConnector connector;
  private final int port;
  private final KvEventBatchWriter encoder;
  private final String topic;
  private final long createdSeconds = System.currentTimeMillis() / 1000;

  private volatile State state = State.RUNNING;
  private volatile @Nullable KvEventPublisher publisher;
  private volatile @Nullable RealtimeEngineLoop loop;
  private volatile @Nullable EngineConfig engineConfig;
  private volatile @Nullable EngineMetrics lastEngineMetrics;
  private volatile MetricsPage metrics;
  private int publisherPort;
  private int replayPort;

  SimulatedServer(SimulatedServerBuilder b) throws Exception {
    this.modelName = b.modelName;
    this.loraAdapters = List.copyOf(b.loraAdapters);
    this.maxLoras = b.maxLoras > 0 ? b.maxLoras : loraAdapters.isEmpty() ? 0 : Math.max(1, loraAdapters.size());
    this.requestedMaxModelLen = b.maxModelLen;
    this.hashSeed = b.hashSeed;
    this.defaultOutputTokens = b.defaultOutputTokens;
    this.timeScale = b.timeScale;
    this.instantResponse = b.instantResponse;
    this.kvEvents = b.kvEvents && !b.instantResponse;
    this.kvEventFormat = b.kvEventFormat;
    this.configuredTopic = b.topic;
    this.replayWithTopic = b.replayWithTopic;
    this.dataParallelRank = b.dataParallelRank;
    this.promptTokensDetails = b.promptTokensDetails;
    this.kvEventBufferSteps = b.kvEventBufferSteps;
    this.engineSettings = b.engineSettings;
    Map<String, Integer> loraIds = new LinkedHashMap<>();
    for (int i = 0; i < loraAdapters.size(); i++) {
      loraIds.put(loraAdapters.get(i), i + 1);
    }
    this.encoder = new KvEventBatchWriter(kvEventFormat, dataParallelRank, loraIds);

    VirtualThreadPool threads = new VirtualThreadPool();
    threads.setName("sim-http");
    this.jetty = new Server(threads);
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    this.connector = new ServerConnector(jetty, 1, 1, new HttpConnectionFactory(http));
    connector.setHost(HOST);
    connector.setPort(b.port);
    // long waits for a first token are normal under load; only a silent client should time out
    connector.setIdleTimeout(TimeUnit.MINUTES.toMillis(30));
    jetty.addConnector(connector);
    SimHttpHandler handler = new SimHttpHandler(this);
    this.responses = handler.responses();
    jetty.setHandler(handler);
    this.metrics = newMetrics();
    jetty.start();
    this.port = connector.getLocalPort();
    this.name = b.name != null ? b.name : HOST + ":" + port;
    this.topic = configuredTopic != null ? configuredTopic : "kv@" + HOST + ":" + port + "@" + modelName;
    try {
      startEngine();
    } catch (RuntimeException e) {
      KvEventPublisher p = publisher;
      if (p != null) {
        p.close();
      }
      jetty.stop();
      throw e;
    }
  }

  /** A builder for a server of {@code modelName} (the served model name requests must use). */
  public static SimulatedServerBuilder builder(String modelName) {
    return new SimulatedServerBuilder(modelName);
  }

  private void startEngine() {
    if (kvEvents) {
      KvEventPublisher p = publisher;
      if (p == null) {
        p = new KvEventPublisher(HOST, publisherPort, replayPort, topic, 100_000, kvEventBufferSteps,
            replayWithTopic, name);
        publisherPort = p.port();
        replayPort = p.replayPort();
        publisher = p;
      }
    }
    if (!instantResponse) {
      SimEngineBuilder eb = SimEngine.builder()
          .servedModelName(modelName)
          // a vLLM process hashes blocks with a random seed unless PYTHONHASHSEED is set
          .hashSeed(hashSeed != null ? hashSeed : ThreadLocalRandom.current().nextLong());
      if (requestedMaxModelLen > 0) {
        eb.maxModelLen(requestedMaxModelLen);
      }
      engineSettings.accept(eb);
      SimEngine engine = eb.kvEventListener(this::publishEvents).startNanos(0).build();
      engineConfig = engine.config();
      lastEngineMetrics = engine.metrics();
      metrics = newMetrics();
      loop = new RealtimeEngineLoop(engine, timeScale, name);
    } else {
      metrics = newMetrics();
    }
  }

  private MetricsPage newMetrics() {
    Map<String, String> cache = new LinkedHashMap<>();
    cache.put("block_size", Integer.toString(blockSize()));
    cache.put("gpu_memory_utilization", "0.9");
    cache.put("swap_space", "4");
    cache.put("cache_dtype", "auto");
    cache.put("is_attention_free", "False");
    cache.put("num_gpu_blocks_override", "None");
    cache.put("sliding_window", "None");
    cache.put("enable_prefix_caching", "True");
    cache.put("prefix_caching_hash_algo", "sha256");
    cache.put("cpu_offload_gb", "0");
    cache.put("calculate_kv_scales", "False");
    cache.put("num_gpu_blocks", Long.toString(numGpuBlocks()));
    cache.put("num_cpu_blocks", "None");
    EngineConfig c = engineConfig;
    if (c != null) {
      cache.put("gpu_memory_utilization", Double.toString(c.gpuMemoryUtilization()));
      cache.put("enable_prefix_caching", c.enablePrefixCaching() ? "True" : "False");
    }
    return new MetricsPage(modelName, dataParallelRank, cache, maxLoras, System.currentTimeMillis() / 1000.0);
  }

  private void publishEvents(EngineStepEvents batch) {
    KvEventPublisher p = publisher;
    if (p != null) {
      EngineConfig c = engineConfig;
      int window = c == null ? 0 : c.model().slidingWindow();
      p.publish(encoder.encodeBatch(System.currentTimeMillis() / 1000.0, batch.events(), batch.groups(), window,
          batch.fullAttentionGroup()));
    }
  }

  // ---- what the HTTP handler uses ----

  boolean isAnswering() {
    return state == State.RUNNING;
  }

  String metricsText() {
    RealtimeEngineLoop l = loop;
    EngineMetrics m;
    java.util.Set<String> running = java.util.Set.of();
    java.util.Set<String> waiting = java.util.Set.of();
    if (l != null) {
      m = l.metrics();
      lastEngineMetrics = m;
      if (maxLoras > 0) {
        running = l.loraAdapters(true);
        waiting = l.loraAdapters(false);
      }
    } else {
      m = lastEngineMetrics;
    }
    if (m == null) {
      m = emptyMetrics();
    }
    return metrics.render(m, running, waiting, System.currentTimeMillis() / 1000.0);
  }

  private EngineMetrics emptyMetrics() {
    dev.kinference.sim.engine.LatencyHistogram none = new dev.kinference.sim.engine.LatencyHistogram(
        new double[0], new long[1], 0, 0);
    return new EngineMetrics(0, 0, 0, 0, blockSize(), (int) numGpuBlocks(), 0, 0, 0, 0, 0, Map.of(), none, none,
        none, (int) numGpuBlocks(), 0, 0, 0);
  }

  /** Starts generating; the stream receives the tokens. */
  ResponseStream submit(String id, SimHttpHandler.Call call) {
    if (instantResponse) {
      ResponseStream stream = new ResponseStream(false);
      for (int i = 0; i < call.words.length; i++) {
        stream.token();
      }
      stream.finished(0);
      return stream;
    }
    ResponseStream stream = new ResponseStream(true);
    RealtimeEngineLoop l = loop;
    if (l == null) {
      stream.failed("the engine is not running");
      return stream;
    }
    stream.onAbort(() -> l.abort(id));
    l.submit(new SimRequest(id, call.promptTokens, call.words.length, call.outputTokens, call.lora, call.cacheSalt),
        stream);
    return stream;
  }

  int[] tokenize(InferenceRequest request) {
    try {
      return request.tokenize(tokenizer).tokens();
    } catch (TokenizationException e) {
      throw new IllegalStateException("the approximate tokenizer never fails", e);
    }
  }

  /** The Responses API endpoint and its stored responses. */
  SimResponses responses() {
    return responses;
  }

  SyntheticText text() {
    return text;
  }

  int defaultOutputTokens() {
    return defaultOutputTokens;
  }

  boolean promptTokensDetails() {
    return promptTokensDetails;
  }

  long createdSeconds() {
    return createdSeconds;
  }

  // ---- public API ----

  /** The server's name: its {@code host:port} unless the builder named it. */
  public String name() {
    return name;
  }

  /** The served model name. */
  public String modelName() {
    return modelName;
  }

  /** The LoRA adapters served besides the base model, each also a model name requests may use. */
  public List<String> loraAdapters() {
    return loraAdapters;
  }

  /** {@code max_model_len}: the longest prompt plus output accepted. */
  public int maxModelLen() {
    EngineConfig c = engineConfig;
    if (c != null) {
      return c.maxModelLen();
    }
    return requestedMaxModelLen > 0 ? requestedMaxModelLen : 32_768;
  }

  /** The engine's configuration (GPU, model, blocks, budgets), or null for an instant-response server. */
  public @Nullable EngineConfig engineConfig() {
    return engineConfig;
  }

  /** {@code http://127.0.0.1:<port>}. */
  public URI baseUri() {
    return URI.create("http://" + HOST + ":" + port);
  }

  public int port() {
    return port;
  }

  /** The KV-event PUB address ({@code tcp://127.0.0.1:<port>}), or null when KV events are disabled. */
  public @Nullable String kvEventsEndpoint() {
    return kvEvents ? "tcp://" + HOST + ":" + publisherPort : null;
  }

  /** The KV-event ROUTER replay address, or null when KV events are disabled. */
  public @Nullable String kvEventsReplayEndpoint() {
    return kvEvents ? "tcp://" + HOST + ":" + replayPort : null;
  }

  /** The topic frame of every KV-event message. */
  public String kvEventsTopic() {
    return topic;
  }

  public KvEventFormat kvEventFormat() {
    return kvEventFormat;
  }

  /** Tokens per KV block, as {@code vllm:cache_config_info} reports. */
  public int blockSize() {
    EngineConfig c = engineConfig;
    return c == null ? instantBlockSize : c.blockSize();
  }

  /** KV blocks on the GPU, as {@code vllm:cache_config_info} reports. */
  public long numGpuBlocks() {
    EngineConfig c = engineConfig;
    return c == null ? instantNumGpuBlocks : c.numGpuBlocks();
  }

  /** Simulated seconds per wall-clock second. */
  public double timeScale() {
    return timeScale;
  }

  /**
   * This server as a router endpoint (id = {@link #name()}), labelled with its KV-event addresses and topic
   * ({@link EndpointLabels#KV_EVENTS}, {@link EndpointLabels#KV_EVENTS_REPLAY}, {@link EndpointLabels#KV_EVENTS_TOPIC}).
   */
  public Endpoint endpoint() {
    Map<String, String> labels = new LinkedHashMap<>();
    String events = kvEventsEndpoint();
    String replay = kvEventsReplayEndpoint();
    if (events != null && replay != null) {
      labels.put(EndpointLabels.KV_EVENTS, events);
      labels.put(EndpointLabels.KV_EVENTS_REPLAY, replay);
      labels.put(EndpointLabels.KV_EVENTS_TOPIC, topic);
    }
    return new Endpoint(name, baseUri(), modelName, labels);
  }

  /** Whether the server answers requests (not killed, not closed). */
  public boolean isAlive() {
    return state == State.RUNNING;
  }

  /** The sequence number of the next KV-event batch (the number published since the last start). */
  public long nextKvEventSequence() {
    KvEventPublisher p = publisher;
    return p == null ? 0 : p.nextSequence();
  }

  /** Subscriptions the KV-event publisher has received since it started (a test waits on this, not on a sleep). */
  public long kvEventSubscriptions() {
    KvEventPublisher p = publisher;
    return p == null ? 0 : p.subscriptions();
  }

  /** KV-event batches sent on the live PUB socket (not dropped) since the server was built. */
  public long kvEventBatchesSent() {
    KvEventPublisher p = publisher;
    return p == null ? 0 : p.sentLive();
  }

  /** Same as {@code kill(KillMode.ENGINE_DEAD)}. */
  public void kill() {
    kill(KillMode.ENGINE_DEAD);
  }

  /**
   * Takes the server down: unfinished requests fail (streams are cut), and new ones get 503
   * ({@link KillMode#ENGINE_DEAD}) or a refused connection ({@link KillMode#UNREACHABLE}).
   */
  public synchronized void kill(KillMode mode) {
    checkOpen();
    RealtimeEngineLoop l = loop;
    loop = null;
    if (l != null) {
      lastEngineMetrics = l.metrics();
      l.kill("EngineCore died");
    }
    state = State.ENGINE_DEAD;
    if (mode == KillMode.UNREACHABLE) {
      try {
        connector.stop();
      } catch (Exception e) {
        throw new IllegalStateException("could not stop the connector of " + name, e);
      }
      KvEventPublisher p = publisher;
      publisher = null;
      if (p != null) {
        p.close();
      }
      state = State.UNREACHABLE;
    }
  }

  /**
   * Restarts the server process on the same ports: a new engine with an empty cache, metrics counters from zero,
   * KV-event sequence numbers from 0 with an empty replay buffer. Unfinished requests fail.
   */
  public synchronized void restart() {
    checkOpen();
    RealtimeEngineLoop l = loop;
    loop = null;
    if (l != null) {
      l.kill("EngineCore restarting");
    }
    try {
      if (state == State.UNREACHABLE) {
        connector.setPort(port);
        connector.start();
      } else {
        KvEventPublisher p = publisher;
        if (p != null) {
          p.restart();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while restarting " + name, e);
    } catch (Exception e) {
      throw new IllegalStateException("could not restart " + name, e);
    }
    startEngine();
    state = State.RUNNING;
  }

  /**
   * KV-event batches with sequence numbers in {@code [fromSequence, toSequence)} are not sent on the live stream,
   * but kept for replay: a subscriber sees a gap and can repair it through the replay socket.
   */
  public void dropKvEvents(long fromSequence, long toSequence) {
    KvEventPublisher p = publisher;
    if (p == null) {
      throw new IllegalStateException("KV events are not being published by " + name);
    }
    p.dropSequences(fromSequence, toSequence);
  }

  /** Stops dropping KV-event batches. */
  public void stopDroppingKvEvents() {
    KvEventPublisher p = publisher;
    if (p != null) {
      p.clearDrops();
    }
  }

  /**
   * vLLM's {@code POST /reset_prefix_cache}: if no request holds blocks, drops every cached block and publishes
   * {@code AllBlocksCleared}. Returns whether it did, once the event was handed to the publisher.
   */
  public boolean resetPrefixCache() {
    RealtimeEngineLoop l = loop;
    if (l == null) {
      return false;
    }
    try {
      return l.resetPrefixCache().get(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("could not reset the prefix cache of " + name, e);
    }
  }

  /** The current {@code /metrics} text. */
  public String metrics() {
    return metricsText();
  }

  private void checkOpen() {
    if (state == State.CLOSED) {
      throw new IllegalStateException(name + " is closed");
    }
  }

  /** Stops the engine, the HTTP server and the ZMQ sockets. */
  @Override
  public synchronized void close() {
    if (state == State.CLOSED) {
      return;
    }
    state = State.CLOSED;
    RealtimeEngineLoop l = loop;
    loop = null;
    if (l != null) {
      l.close();
    }
    KvEventPublisher p = publisher;
    publisher = null;
    if (p != null) {
      p.close();
    }
    try {
      jetty.stop();
    } catch (Exception e) {
      throw new IllegalStateException("could not stop " + name, e);
    }
  }

  @Override
  public String toString() {
    return "SimulatedServer[" + name + " " + modelName + " " + state + "]";
  }
}
