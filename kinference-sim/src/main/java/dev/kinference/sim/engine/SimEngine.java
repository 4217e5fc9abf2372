package dev.kinference.sim.engine;

import dev.kinference.cache.KvEvent;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One simulated vLLM server: the V1 engine's scheduler, KV block pool and prefix cache, with step times from a
 * roofline ({@link StepCostModel}). Driven in virtual time by a discrete-event simulation, or in wall-clock time by a
 * thread that sleeps until {@link #nextEventNanos()}.
 *
 * <h2>Behaviour (vLLM V1, {@code vllm/v1/core/sched/scheduler.py} and {@code kv_cache_manager.py})</h2>
 * <ul>
 *   <li>Each step has a budget of {@code max_num_batched_tokens}. Running requests are scheduled first, in order:
 *       one token for a decode, the rest of the prompt (up to the remaining budget) for a chunked prefill. If their
 *       blocks cannot be allocated, the last running request is preempted (its blocks freed, its progress reset to
 *       0, put back at the head of the waiting queue: preemption by recompute) until the allocation fits.</li>
 *   <li>Then, if nobody was preempted, waiting requests are admitted in order while the budget lasts and fewer than
 *       {@code max_num_seqs} run: the prefix cache is looked up (whole blocks, at most {@code prompt - 1} tokens), the
 *       uncached tokens are chunked to the budget, and the first request whose blocks do not fit stops admission
 *       (head-of-line blocking, as in vLLM).</li>
 *   <li>Blocks are cached as soon as they are scheduled to be full (prompt and generated tokens alike), so a request
 *       admitted later in the same step already hits them. A finished request's blocks are freed tail first, so its
 *       prefix stays cached longest; allocation evicts from the head of the free queue (least recently freed).</li>
 *   <li>A step's outputs appear when its forward pass ends: a request whose computed tokens reach its length
 *       samples one token (its first token ends its TTFT).</li>
 * </ul>
 *
 * <h2>Driving it</h2>
 * The engine's clock only moves through {@link #advanceTo}. {@link #submit} and {@link #abort} act at
 * {@link #now()}. A driver calls {@code advanceTo(t)} before acting at time {@code t}, and calls it again at
 * {@link #nextEventNanos()} (the end of the step in flight, or {@link #now()} when an idle engine has work). Steps
 * complete at their end time even if {@code advanceTo} is called later: outputs carry their exact times. Requests
 * submitted while a step is in flight wait for the next step, as in vLLM.
 *
 * <h2>Observable state</h2>
 * {@link #metrics()} is what {@code /metrics} shows; {@link Builder#kvEventListener} receives one
 * {@link EngineStepEvents} per step that changed the cache, with the engine's own block hashes;
 * {@link RequestListener}s receive tokens and usage.
 *
 * <p>Not thread-safe: one thread at a time (a virtual-time loop, or a real-time server holding a lock). Listeners run
 * on that thread, inside {@link #advanceTo}, {@link #abort} or {@link #restart}; see {@link RequestListener} for what
 * they may call.
 */
public final class SimEngine {

  private final EngineConfig config;
  private final StepCostModel cost;
  private final EngineHasher hasher;
  private final @Nullable Consumer<EngineStepEvents> kvEventListener;
  private final @Nullable Consumer<StepRecord> stepObserver;
  private final int blockSize;

  private List<KvEvent> pendingEvents = new ArrayList<>();
  private BlockPool pool;
  private final ArrayDeque<Sequence> waiting = new ArrayDeque<>();
  private final ArrayList<Sequence> running = new ArrayList<>();
  private final HashMap<String, Sequence> active = new HashMap<>();
  private final ArrayList<Sequence> stepSequences = new ArrayList<>();
  private final ArrayList<Sequence> deferredAborts = new ArrayList<>();

  private long now;
  private boolean stepInFlight;
  private long stepStart;
  private long stepEnd;
  private boolean inCallback;
  private boolean completingStep;
  private long eventSequence;
  private long submitted;

  // metrics
  private long prefixQueries;
  private long prefixHits;
  private long promptTokens;
  private long generationTokens;
  private long preemptions;
  private long steps;
  private long busyNanos;
  private final EnumMap<FinishReason, Long> finished = new EnumMap<>(FinishReason.class);
  /** An immutable copy of {@link #finished} for {@link #metrics}, kept until a request finishes (scrapes are many). */
  private @Nullable Map<FinishReason, Long> finishedCopy;
  private LatencyHistogram.Accumulator ttft = new LatencyHistogram.Accumulator(LatencyHistogram.TTFT_BOUNDS);
  private LatencyHistogram.Accumulator itl = new LatencyHistogram.Accumulator(LatencyHistogram.ITL_BOUNDS);
  private LatencyHistogram.Accumulator e2e = new LatencyHistogram.Accumulator(LatencyHistogram.E2E_BOUNDS);

  private SimEngine(Builder b, EngineConfig config) {
    this.config = config;
    this.cost = new StepCostModel(config.gpu(), config.model(), config.tensorParallel());
    this.hasher = new EngineHasher(config.hashSeed());
    this.kvEventListener = b.kvEventListener;
    this.stepObserver = b.stepObserver;
    this.blockSize = config.blockSize();
    this.pool = new BlockPool(config.numGpuBlocks(), pendingEvents);
    this.now = b.startNanos;
  }

  public static Builder builder() {
    return new Builder();
  }

  public EngineConfig config() {
    return config;
  }

  public StepCostModel costModel() {
    return cost;
  }

  /** The engine's clock, in nanoseconds. */
  public long now() {
    return now;
  }

  /**
   * Queues a request arriving at {@link #now()}.
   *
   * @throws IllegalArgumentException if a request with this id is active, if prompt plus output exceed
   *     {@code max_model_len}, or if the request could never fit in the KV cache
   */
  public void submit(SimRequest request, RequestListener listener) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(listener, "listener");
    if (active.containsKey(request.id())) {
      throw new IllegalArgumentException("request id already active: " + request.id());
    }
    int length = request.promptTokens().length + request.expectedOutputTokens();
    if (length > config.maxModelLen()) {
      throw new IllegalArgumentException("request " + request.id() + ": prompt (" + request.promptTokens().length
          + " tokens) plus max_tokens (" + request.expectedOutputTokens() + ") exceed max_model_len "
          + config.maxModelLen());
    }
    long blocksNeeded = (long) ceilDiv(length, blockSize) + config.stateBlocksPerSequence();
    if (blocksNeeded > config.numGpuBlocks() - 1) {
      throw new IllegalArgumentException("request " + request.id() + " needs " + blocksNeeded
          + " KV blocks; the engine has " + (config.numGpuBlocks() - 1));
    }
    long seed = config.hashSeed() * 0x9E3779B97F4A7C15L + request.id().hashCode() * 0xC2B2AE3D27D4EB4FL
        + submitted++;
    Sequence s = new Sequence(request, listener, now, seed);
    active.put(request.id(), s);
    waiting.addLast(s);
  }

  /**
   * Aborts an active request at {@link #now()}: it leaves the queue or the batch, its blocks are freed (they stay
   * cached), and its listener gets {@link FinishReason#ABORT}. Called from a listener during a step's outputs, the
   * abort takes effect when the step's outputs have been delivered.
   *
   * @return false if no such request is active
   */
  public boolean abort(String requestId) {
    Sequence s = active.get(requestId);
    if (s == null || s.finished) {
      return false;
    }
    if (completingStep && s.running) {
      if (!deferredAborts.contains(s)) {
        deferredAborts.add(s);
      }
      return true;
    }
    if (s.running) {
      running.remove(s);
    } else {
      waiting.remove(s);
    }
    finish(s, FinishReason.ABORT);
    return true;
  }

  /**
   * When the engine next needs {@link #advanceTo}: the end of the step in flight, {@link #now()} if it is idle with
   * work queued, or {@link Long#MAX_VALUE} if it is idle and empty.
   */
  public long nextEventNanos() {
    if (stepInFlight) {
      return stepEnd;
    }
    return waiting.isEmpty() && running.isEmpty() ? Long.MAX_VALUE : now;
  }

  /** Whether a step is running. */
  public boolean isBusy() {
    return stepInFlight;
  }

  /**
   * Runs the engine up to {@code nanos}: completes every step that ends by then (delivering its outputs and KV
   * events at its end time) and starts the next step whenever there is work, then sets the clock to {@code nanos}.
   *
   * @throws IllegalArgumentException if {@code nanos} is before {@link #now()}
   * @throws IllegalStateException if called from a listener
   */
  public void advanceTo(long nanos) {
    if (inCallback) {
      throw new IllegalStateException("advanceTo must not be called from a listener");
    }
    if (nanos < now) {
      throw new IllegalArgumentException("time moves forward only: " + nanos + " < " + now);
    }
    while (true) {
      if (stepInFlight) {
        if (stepEnd > nanos) {
          break;
        }
        now = stepEnd;
        completeStep();
      } else if (!waiting.isEmpty() || !running.isEmpty()) {
        if (!startStep()) {
          break;
        }
      } else {
        break;
      }
    }
    now = nanos;
  }

  /**
   * Restarts the server: every active request ends with {@link FinishReason#ABORT}, the KV cache is emptied without
   * events (a new process publishes none), counters and histograms restart at zero, and KV event batches are
   * numbered from 0 again. The clock keeps running.
   */
  public void restart() {
    if (inCallback) {
      throw new IllegalStateException("restart must not be called from a listener");
    }
    List<Sequence> all = new ArrayList<>(running);
    all.addAll(waiting);
    running.clear();
    waiting.clear();
    stepInFlight = false;
    stepSequences.clear();
    pendingEvents = new ArrayList<>();
    pool = new BlockPool(config.numGpuBlocks(), pendingEvents);
    for (Sequence s : all) {
      s.running = false;
      s.numBlocks = 0;
      s.stateBlocks = new int[0];
      finishWithoutFree(s, FinishReason.ABORT);
    }
    active.clear();
    pendingEvents.clear();
    eventSequence = 0;
    prefixQueries = 0;
    prefixHits = 0;
    promptTokens = 0;
    generationTokens = 0;
    preemptions = 0;
    steps = 0;
    busyNanos = 0;
    finished.clear();
    finishedCopy = null;
    ttft = new LatencyHistogram.Accumulator(LatencyHistogram.TTFT_BOUNDS);
    itl = new LatencyHistogram.Accumulator(LatencyHistogram.ITL_BOUNDS);
    e2e = new LatencyHistogram.Accumulator(LatencyHistogram.E2E_BOUNDS);
  }

  /**
   * vLLM's {@code POST /reset_prefix_cache}: drops every cached block and publishes {@code AllBlocksCleared}, if
   * no block is in use.
   *
   * @return false (nothing changes) while requests hold blocks
   */
  public boolean resetPrefixCache() {
    if (!config.enablePrefixCaching() || !running.isEmpty() || stepInFlight) {
      return false;
    }
    boolean reset = pool.resetPrefixCache();
    publishEvents(now);
    return reset;
  }

  /** The current metrics. */
  public EngineMetrics metrics() {
    Map<FinishReason, Long> finishedNow = finishedCopy;
    if (finishedNow == null) {
      finishedNow = Map.copyOf(finished);
      finishedCopy = finishedNow;
    }
    return new EngineMetrics(now, waiting.size(), running.size(), pool.usage(), blockSize, config.numGpuBlocks(),
        prefixQueries, prefixHits, promptTokens, generationTokens, preemptions, finishedNow,
        ttft.snapshot(), itl.snapshot(), e2e.snapshot(), pool.freeCount(), pool.cachedBlockCount(), steps,
        busyNanos);
  }

  /** Requests queued. */
  public int waitingCount() {
    return waiting.size();
  }

  /** Requests in the batch. */
  public int runningCount() {
    return running.size();
  }

  /**
   * The true state an oracle router may read: prompt tokens (or recompute) still to prefill over all queued and
   * running requests, before prefix-cache hits of the queued ones.
   */
  public long pendingPrefillTokens() {
    long n = 0;
    for (Sequence s : running) {
      n += s.pendingPrefill();
    }
    for (Sequence s : waiting) {
      n += s.pendingPrefill();
    }
    return n;
  }

  /**
   * The prompt tokens a request with these tokens would find in the prefix cache now (whole blocks, at most
   * {@code tokens.length - 1}), without changing anything. For an oracle router and for tests.
   */
  public int cachedPrefixTokens(int[] tokens, @Nullable String lora, @Nullable String cacheSalt) {
    if (!config.enablePrefixCaching() || tokens.length < 2) {
      return 0;
    }
    int maxBlocks = (tokens.length - 1) / blockSize;
    long parent = 0;
    int b = 0;
    for (; b < maxBlocks; b++) {
      parent = hasher.hash(parent, tokens, b * blockSize, blockSize, lora, cacheSalt);
      if (pool.lookup(parent) < 0) {
        break;
      }
    }
    return b * blockSize;
  }

  /** Package-private view for tests: the block pool. */
  BlockPool pool() {
    return pool;
  }

  /** Package-private view for tests: the engine's hash of a token sequence's blocks. */
  long[] engineHashes(int[] tokens, @Nullable String lora, @Nullable String cacheSalt) {
    long[] out = new long[tokens.length / blockSize];
    long parent = 0;
    for (int b = 0; b < out.length; b++) {
      parent = hasher.hash(parent, tokens, b * blockSize, blockSize, lora, cacheSalt);
      out[b] = parent;
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Scheduling

  /** Schedules a step at {@link #now()}; false if nothing could be scheduled. */
  private boolean startStep() {
    int budget = config.maxNumBatchedTokens();
    stepSequences.clear();
    boolean observe = stepObserver != null;
    Map<String, Integer> admittedHits = observe ? new LinkedHashMap<>() : Map.of();
    List<String> preemptedIds = observe ? new ArrayList<>() : List.of();
    boolean preempted = false;

    for (int i = 0; i < running.size() && budget > 0; ) {
      Sequence s = running.get(i);
      int newTokens = Math.min(s.numTokens - s.numComputed, budget);
      boolean scheduled = false;
      while (true) {
        if (allocateSlots(s, newTokens, null, 0)) {
          scheduled = true;
          break;
        }
        Sequence victim = running.remove(running.size() - 1);
        preempt(victim);
        preempted = true;
        if (observe) {
          preemptedIds.add(victim.id());
        }
        if (victim == s) {
          break;
        }
      }
      if (!scheduled) {
        break;
      }
      s.scheduledTokens = newTokens;
      stepSequences.add(s);
      budget -= newTokens;
      i++;
    }

    if (!preempted) {
      int[] hits = new int[16];
      while (!waiting.isEmpty() && budget > 0 && running.size() < config.maxNumSeqs()) {
        Sequence s = waiting.peekFirst();
        int hitBlocks = 0;
        if (config.enablePrefixCaching()) {
          int maxBlocks = (s.numTokens - 1) / blockSize;
          if (hits.length < maxBlocks) {
            hits = new int[Math.max(maxBlocks, hits.length * 2)];
          }
          while (hitBlocks < maxBlocks) {
            int block = pool.lookup(s.blockHash(hitBlocks, hasher, blockSize));
            if (block < 0) {
              break;
            }
            hits[hitBlocks++] = block;
          }
        }
        int hitTokens = hitBlocks * blockSize;
        int newTokens = Math.min(s.numTokens - hitTokens, budget);
        if (!allocateSlots(s, newTokens, hits, hitBlocks)) {
          break;
        }
        waiting.pollFirst();
        running.add(s);
        s.running = true;
        s.numComputed = hitTokens;
        if (s.cachedTokens < 0) {
          s.cachedTokens = hitTokens;
        }
        prefixQueries += s.numTokens;
        prefixHits += hitTokens;
        if (observe) {
          admittedHits.put(s.id(), hitTokens);
        }
        s.scheduledTokens = newTokens;
        stepSequences.add(s);
        budget -= newTokens;
      }
    }

    if (stepSequences.isEmpty()) {
      publishEvents(now);
      return false;
    }
    long tokens = 0;
    long kvTokens = 0;
    double pairs = 0;
    int prefill = 0;
    int decode = 0;
    for (Sequence s : stepSequences) {
      int n = s.scheduledTokens;
      tokens += n;
      kvTokens += s.numComputed + n;
      pairs += n * (s.numComputed + (n + 1) / 2.0);
      if (n == 1 && s.numComputed == s.numTokens - 1 && s.numOutput > 0) {
        decode++;
      } else {
        prefill += n;
      }
    }
    long duration = Math.max(1, Math.round(cost.stepSeconds(stepSequences.size(), tokens, kvTokens, pairs) * 1e9));
    stepStart = now;
    stepEnd = now + duration;
    stepInFlight = true;
    if (observe) {
      Map<String, Integer> scheduled = new LinkedHashMap<>();
      for (Sequence s : stepSequences) {
        scheduled.put(s.id(), s.scheduledTokens);
      }
      Objects.requireNonNull(stepObserver).accept(new StepRecord(stepStart, stepEnd, scheduled, admittedHits, prefill,
          decode, preemptedIds, waiting.size(), running.size(), pool.freeCount()));
    }
    return true;
  }

  /**
   * vLLM's {@code allocate_slots}: room for {@code newTokens} more tokens after the hit blocks, or false (nothing
   * changes) if the free queue cannot supply the blocks, counting hit blocks that must leave the free queue.
   */
  private boolean allocateSlots(Sequence s, int newTokens, int @Nullable [] hits, int hitCount) {
    int computedAfterHits = s.numComputed + hitCount * blockSize;
    int needed = ceilDiv(computedAfterHits + newTokens, blockSize);
    int toAllocate = Math.max(0, needed - s.numBlocks - hitCount);
    int hitsFromFreeQueue = 0;
    for (int i = 0; i < hitCount; i++) {
      if (pool.refCount(Objects.requireNonNull(hits)[i]) == 0) {
        hitsFromFreeQueue++;
      }
    }
    int stateNeeded = s.stateBlocks.length == 0 ? config.stateBlocksPerSequence() : 0;
    if (toAllocate + hitsFromFreeQueue + stateNeeded > pool.freeCount()) {
      return false;
    }
    for (int i = 0; i < hitCount; i++) {
      int block = Objects.requireNonNull(hits)[i];
      pool.touch(block);
      s.addBlock(block);
    }
    if (hitCount > 0) {
      s.numCachedBlocks = hitCount;
    }
    if (stateNeeded > 0) {
      s.stateBlocks = new int[stateNeeded];
      for (int i = 0; i < stateNeeded; i++) {
        s.stateBlocks[i] = pool.allocate();
      }
    }
    for (int i = 0; i < toAllocate; i++) {
      s.addBlock(pool.allocate());
    }
    if (config.enablePrefixCaching()) {
      cacheFullBlocks(s, Math.min(computedAfterHits + newTokens, s.numTokens));
    }
    return true;
  }

  /** vLLM's {@code cache_full_blocks}: hashes the newly full blocks and publishes one {@code BlockStored}. */
  private void cacheFullBlocks(Sequence s, int tokensToCache) {
    int full = tokensToCache / blockSize;
    int first = s.numCachedBlocks;
    if (full <= first) {
      return;
    }
    long[] hashes = new long[full - first];
    for (int b = first; b < full; b++) {
      long h = s.blockHash(b, hasher, blockSize);
      pool.cache(s.blocks[b], h);
      hashes[b - first] = h;
    }
    Long parent = first == 0 ? null : s.blockHash(first - 1, hasher, blockSize);
    int[] tokens = Arrays.copyOfRange(s.tokens, first * blockSize, full * blockSize);
    pendingEvents.add(new KvEvent.BlockStored(hashes, parent, tokens, blockSize, s.request.lora(),
        KvEvent.Medium.GPU, first == 0 ? s.request.cacheSalt() : null));
    s.numCachedBlocks = full;
  }

  private void preempt(Sequence s) {
    freeBlocks(s);
    s.running = false;
    s.numComputed = 0;
    s.preemptions++;
    preemptions++;
    waiting.addFirst(s);
  }

  /** Frees the request's state blocks, then its KV blocks tail first (so the tail is evicted first). */
  private void freeBlocks(Sequence s) {
    for (int b : s.stateBlocks) {
      pool.free(b);
    }
    s.stateBlocks = new int[0];
    for (int i = s.numBlocks - 1; i >= 0; i--) {
      pool.free(s.blocks[i]);
    }
    s.numBlocks = 0;
    s.numCachedBlocks = 0;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Step completion

  private void completeStep() {
    stepInFlight = false;
    steps++;
    busyNanos += stepEnd - stepStart;
    long t = stepEnd;
    inCallback = true;
    completingStep = true;
    try {
      for (Sequence s : stepSequences) {
        if (s.finished || !s.running) {
          continue;
        }
        s.numComputed += s.scheduledTokens;
        s.scheduledTokens = 0;
        if (s.numComputed < s.numTokens) {
          continue;
        }
        int token = s.nextOutputToken();
        s.tokens[s.numTokens++] = token;
        int index = s.numOutput++;
        generationTokens++;
        if (index == 0) {
          s.firstTokenNanos = t;
          promptTokens += s.promptLength;
          ttft.record((t - s.arrivalNanos) * 1e-9);
          s.listener.onFirstToken(s.id(), t);
        } else {
          itl.record((t - s.lastTokenNanos) * 1e-9);
        }
        s.lastTokenNanos = t;
        s.listener.onToken(s.id(), t, index, token);
        if (s.numOutput >= s.outputLimit) {
          int[] script = s.request.outputTokens();
          boolean stop = script != null && script.length <= s.request.maxTokens();
          running.remove(s);
          finish(s, stop ? FinishReason.STOP : FinishReason.LENGTH);
        }
      }
      stepSequences.clear();
      for (Iterator<Sequence> it = deferredAborts.iterator(); it.hasNext(); ) {
        Sequence s = it.next();
        it.remove();
        if (!s.finished) {
          running.remove(s);
          waiting.remove(s);
          finish(s, FinishReason.ABORT);
        }
      }
    } finally {
      inCallback = false;
      completingStep = false;
    }
    publishEvents(t);
  }

  private void finish(Sequence s, FinishReason reason) {
    freeBlocks(s);
    finishWithoutFree(s, reason);
  }

  private void finishWithoutFree(Sequence s, FinishReason reason) {
    s.finished = true;
    s.running = false;
    active.remove(s.id());
    finished.merge(reason, 1L, Long::sum);
    finishedCopy = null;
    e2e.record((now - s.arrivalNanos) * 1e-9);
    boolean wasInCallback = inCallback;
    inCallback = true;
    try {
      s.listener.onFinished(new RequestOutcome(s.id(), reason, s.promptLength, s.numOutput,
          Math.max(0, s.cachedTokens), s.arrivalNanos, s.firstTokenNanos, now, s.preemptions));
    } finally {
      inCallback = wasInCallback;
    }
  }

  private void publishEvents(long timestamp) {
    if (pendingEvents.isEmpty()) {
      return;
    }
    if (kvEventListener != null) {
      EngineStepEvents batch = new EngineStepEvents(eventSequence++, timestamp, pendingEvents);
      pendingEvents.clear();
      kvEventListener.accept(batch);
    } else {
      pendingEvents.clear();
    }
  }

  private static int ceilDiv(int a, int b) {
    return (a + b - 1) / b;
  }

  @Override
  public String toString() {
    return "SimEngine[" + config.servedModelName() + " on " + config.tensorParallel() + "x " + config.gpu().name()
        + ", blocks=" + config.numGpuBlocks() + ", waiting=" + waiting.size() + ", running=" + running.size() + "]";
  }

  /**
   * Configures a {@link SimEngine}. Unset values take vLLM's defaults for the GPU ({@code vllm serve}): block size
   * 16, {@code gpu_memory_utilization} 0.9, {@code max_num_batched_tokens} and {@code max_num_seqs} per
   * {@link EngineConfig#defaultMaxNumBatchedTokens}, {@code num_gpu_blocks} from memory profiling,
   * {@code max_model_len} the model's, capped to what the KV cache holds. Not thread-safe.
   */
  public static final class Builder {
    private GpuSpec gpu = GpuSpec.H100;
    private ModelSpec model = ModelSpec.QWEN3_8B;
    private int tensorParallel = 1;
    private @Nullable String servedModelName;
    private int blockSize = 16;
    private int numGpuBlocks;
    private int maxNumBatchedTokens;
    private int maxNumSeqs;
    private int maxModelLen;
    private double gpuMemoryUtilization = 0.9;
    private boolean enablePrefixCaching = true;
    private long hashSeed = 0x6B696E666572656EL;
    private long startNanos;
    private @Nullable Consumer<EngineStepEvents> kvEventListener;
    private @Nullable Consumer<StepRecord> stepObserver;

    private Builder() {}

    public Builder gpu(GpuSpec gpu) {
      this.gpu = Objects.requireNonNull(gpu, "gpu");
      return this;
    }

    public Builder model(ModelSpec model) {
      this.model = Objects.requireNonNull(model, "model");
      return this;
    }

    /** GPUs per engine ({@code --tensor-parallel-size}). Default 1. */
    public Builder tensorParallel(int tp) {
      if (tp < 1 || tp > 64) {
        throw new IllegalArgumentException("tensorParallel must be in [1, 64]: " + tp);
      }
      this.tensorParallel = tp;
      return this;
    }

    /** The served model name ({@code --served-model-name}). Default: the model's name. */
    public Builder servedModelName(String name) {
      if (name.isBlank()) {
        throw new IllegalArgumentException("servedModelName must not be blank");
      }
      this.servedModelName = name;
      return this;
    }

    /** Tokens per KV block. Default 16. */
    public Builder blockSize(int size) {
      if (size < 1 || size > 4096) {
        throw new IllegalArgumentException("blockSize must be in [1, 4096]: " + size);
      }
      this.blockSize = size;
      return this;
    }

    /** Overrides the profiled number of KV blocks ({@code --num-gpu-blocks-override}); includes the null block. */
    public Builder numGpuBlocks(int blocks) {
      if (blocks < 2) {
        throw new IllegalArgumentException("numGpuBlocks must be at least 2: " + blocks);
      }
      this.numGpuBlocks = blocks;
      return this;
    }

    public Builder maxNumBatchedTokens(int tokens) {
      if (tokens < 1) {
        throw new IllegalArgumentException("maxNumBatchedTokens must be positive: " + tokens);
      }
      this.maxNumBatchedTokens = tokens;
      return this;
    }

    public Builder maxNumSeqs(int seqs) {
      if (seqs < 1) {
        throw new IllegalArgumentException("maxNumSeqs must be positive: " + seqs);
      }
      this.maxNumSeqs = seqs;
      return this;
    }

    public Builder maxModelLen(int tokens) {
      if (tokens < 2) {
        throw new IllegalArgumentException("maxModelLen must be at least 2: " + tokens);
      }
      this.maxModelLen = tokens;
      return this;
    }

    public Builder gpuMemoryUtilization(double fraction) {
      if (!(fraction > 0 && fraction <= 1)) {
        throw new IllegalArgumentException("gpuMemoryUtilization must be in (0, 1]: " + fraction);
      }
      this.gpuMemoryUtilization = fraction;
      return this;
    }

    /** Automatic prefix caching. Default on, as in vLLM V1. */
    public Builder enablePrefixCaching(boolean enable) {
      this.enablePrefixCaching = enable;
      return this;
    }

    /** Seed of the engine's block hashes. Engines with different seeds hash the same tokens differently. */
    public Builder hashSeed(long seed) {
      this.hashSeed = seed;
      return this;
    }

    /** The clock's initial value. Default 0; a real-time driver passes {@link System#nanoTime()}. */
    public Builder startNanos(long nanos) {
      this.startNanos = nanos;
      return this;
    }

    /** Receives each step's KV events (on the driving thread, at the step's end). Default: none. */
    public Builder kvEventListener(Consumer<EngineStepEvents> listener) {
      this.kvEventListener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /** Receives a {@link StepRecord} as each step is scheduled; for tests and tracing. Default: none. */
    public Builder stepObserver(Consumer<StepRecord> observer) {
      this.stepObserver = Objects.requireNonNull(observer, "observer");
      return this;
    }

    /**
     * Builds the engine.
     *
     * @throws IllegalArgumentException if the model does not fit, or the settings contradict each other
     */
    public SimEngine build() {
      int batched = maxNumBatchedTokens > 0 ? maxNumBatchedTokens : EngineConfig.defaultMaxNumBatchedTokens(gpu);
      int seqs = maxNumSeqs > 0 ? maxNumSeqs : EngineConfig.defaultMaxNumSeqs(gpu);
      int blocks = numGpuBlocks > 0 ? numGpuBlocks
          : EngineConfig.profileNumGpuBlocks(gpu, model, tensorParallel, blockSize, gpuMemoryUtilization, batched,
              seqs);
      long blockBytes = (long) blockSize * model.kvBytesPerToken();
      int stateBlocks = model.stateBytesPerSequence() == 0 ? 0
          : (int) ((model.stateBytesPerSequence() + blockBytes - 1) / blockBytes);
      long capacity = (long) (blocks - 1 - stateBlocks) * blockSize;
      if (capacity < blockSize) {
        throw new IllegalArgumentException("the KV cache (" + blocks + " blocks) cannot hold one sequence");
      }
      int len = maxModelLen > 0 ? maxModelLen : (int) Math.min(model.maxModelLen(), capacity);
      if (len > capacity) {
        throw new IllegalArgumentException("max_model_len " + len + " exceeds the KV cache's " + capacity
            + " tokens; lower maxModelLen");
      }
      EngineConfig config = new EngineConfig(gpu, model, tensorParallel,
          servedModelName != null ? servedModelName : model.name(), blockSize, blocks, batched, seqs, len,
          gpuMemoryUtilization, enablePrefixCaching, stateBlocks, hashSeed);
      return new SimEngine(this, config);
    }
  }
}
