package dev.kinference.sim.engine;

import dev.kinference.cache.KvEvent;
import java.util.ArrayDeque;
import java.util.ArrayList;
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
 * {@link #metrics()} is what {@code /metrics} shows; {@link SimEngineBuilder#kvEventListener} receives one
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
  private final KvCacheManager kv;
  private final @Nullable Consumer<EngineStepEvents> kvEventListener;
  private final @Nullable Consumer<StepRecord> stepObserver;
  private final int blockSize;

  private final ArrayDeque<Sequence> waiting = new ArrayDeque<>();
  private final ArrayList<Sequence> running = new ArrayList<>();
  /** Requests whose prefix is loading from the offload tier; they hold their GPU blocks meanwhile. */
  private final ArrayList<Sequence> loading = new ArrayList<>();
  /** No step could be scheduled at {@link #now}: only a finishing load (or a new request) can change that. */
  private boolean stalled;
  private int[] hits = new int[16];
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
  private EngineCounters counters = new EngineCounters();

  SimEngine(SimEngineBuilder b, EngineConfig config) {
    this.config = config;
    this.cost = new StepCostModel(config.gpu(), config.model(), config.tensorParallel());
    this.kv = new KvCacheManager(config);
    this.kvEventListener = b.kvEventListener;
    this.stepObserver = b.stepObserver;
    this.blockSize = config.blockSize();
    this.now = b.startNanos;
  }

  public static SimEngineBuilder builder() {
    return new SimEngineBuilder();
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
    long blocksNeeded = (long) KvCacheManager.ceilDiv(length, blockSize) * config.model().attentionGroups()
        + 2L * config.stateBlocksPerSequence();
    if (blocksNeeded > config.numGpuBlocks() - 1) {
      throw new IllegalArgumentException("request " + request.id() + " needs " + blocksNeeded
          + " KV blocks; the engine has " + (config.numGpuBlocks() - 1));
    }
    long seed = config.hashSeed() * 0x9E3779B97F4A7C15L + request.id().hashCode() * 0xC2B2AE3D27D4EB4FL
        + submitted++;
    Sequence s = new Sequence(request, listener, now, seed);
    active.put(request.id(), s);
    waiting.addLast(s);
    stalled = false;
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
    } else if (!loading.remove(s)) {
      waiting.remove(s);
    }
    stalled = false;
    finish(s, FinishReason.ABORT);
    return true;
  }

  /** Whether request {@code requestId} has reached this engine and is still active: for an oracle router. */
  public boolean holds(String requestId) {
    Sequence s = active.get(requestId);
    return s != null && !s.finished;
  }

  /**
   * When the engine next needs {@link #advanceTo}: the end of the step in flight, {@link #now()} if it is idle with
   * work it can schedule, the end of the first load from the offload tier if it waits for one, or
   * {@link Long#MAX_VALUE} if it is idle and empty.
   */
  public long nextEventNanos() {
    if (stepInFlight) {
      return stepEnd;
    }
    if (!stalled && (!waiting.isEmpty() || !running.isEmpty())) {
      return now;
    }
    long load = nextLoadEnd();
    if (load != Long.MAX_VALUE) {
      return Math.max(now, load);
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
        continue;
      }
      finishLoads(now);
      if (!stalled && (!waiting.isEmpty() || !running.isEmpty())) {
        if (startStep() || !stalled) {
          continue; // a step started, or preemptions changed what can be scheduled: try again
        }
      }
      long load = nextLoadEnd();
      if (load > nanos) {
        break;
      }
      now = Math.max(now, load);
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
    all.addAll(loading);
    running.clear();
    waiting.clear();
    loading.clear();
    stalled = false;
    stepInFlight = false;
    stepSequences.clear();
    kv.restart();
    for (Sequence s : all) {
      s.running = false;
      s.numBlocks = 0;
      s.numWindowBlocks = 0;
      s.stateBlocks = new int[0];
      finishWithoutFree(s, FinishReason.ABORT);
    }
    active.clear();
    eventSequence = 0;
    counters = new EngineCounters();
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
    boolean reset = kv.resetPrefixCache();
    publishEvents(now);
    return reset;
  }

  /** The current metrics. */
  public EngineMetrics metrics() {
    return counters.metrics(now, waiting.size() + loading.size(), running.size(), kv.pool(), config);
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
    for (Sequence s : loading) {
      n += s.pendingPrefill();
    }
    return n;
  }

  /**
   * The prompt tokens a request with these tokens would find in the prefix cache now (whole blocks, at most
   * {@code tokens.length - 1}), without changing anything. For an oracle router and for tests.
   */
  public int cachedPrefixTokens(int[] tokens, @Nullable String lora, @Nullable String cacheSalt) {
    return kv.cachedPrefixTokens(tokens, lora, cacheSalt);
  }

  /** Package-private view for tests: the block pool. */
  BlockPool pool() {
    return kv.pool();
  }

  /** Package-private view for tests: the offload tier, or null. */
  @Nullable CpuOffloadTier offloadTier() {
    return kv.offload();
  }

  /** Package-private view for tests: the engine's hash of a token sequence's blocks. */
  long[] engineHashes(int[] tokens, @Nullable String lora, @Nullable String cacheSalt) {
    return kv.engineHashes(tokens, lora, cacheSalt);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Scheduling

  /** Schedules a step at {@link #now()}; false if nothing could be scheduled. */
  private boolean startStep() {
    int budget = config.maxNumBatchedTokens();
    stepSequences.clear();
    kv.newStep();
    boolean observe = stepObserver != null;
    Map<String, Integer> admittedHits = observe ? new LinkedHashMap<>() : Map.of();
    List<String> preemptedIds = observe ? new ArrayList<>() : List.of();
    boolean preempted = false;

    for (int i = 0; i < running.size() && budget > 0; ) {
      Sequence s = running.get(i);
      int newTokens = kv.alignedChunk(s, s.numComputed, Math.min(s.numTokens - s.numComputed, budget));
      if (newTokens == 0) {
        i++; // its chunk reaches no block boundary within the budget left (a Mamba model's aligned prefill)
        continue;
      }
      boolean scheduled = false;
      while (true) {
        if (kv.allocateSlots(s, newTokens, null, 0, true)) {
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
      budget = admitWaiting(budget, observe ? admittedHits : null);
    }

    if (stepSequences.isEmpty()) {
      publishEvents(now);
      stalled = !preempted; // nothing changed: only a finishing load or a new request can
      return false;
    }
    stalled = false;
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
          decode, preemptedIds, waiting.size(), running.size(), kv.pool().freeCount()));
    }
    return true;
  }

  /**
   * Admits waiting requests in order while the budget lasts and fewer than {@code max_num_seqs} run, looking up
   * each one's prefix in the GPU cache and then the offload tier; returns the budget left. A request with blocks to
   * load from the offload tier takes its GPU blocks now and waits for the load outside the queue (vLLM's
   * {@code WAITING_FOR_REMOTE_KVS}), without taking budget.
   */
  private int admitWaiting(int budget, @Nullable Map<String, Integer> admittedHits) {
    int[] count = new int[1];
    while (!waiting.isEmpty() && budget > 0 && running.size() < config.maxNumSeqs()) {
      Sequence s = waiting.peekFirst();
      int hitBlocks = 0;
      int hitTokens;
      if (s.loadedTokens > 0) {
        hitTokens = s.numComputed; // its prefix was loaded into the blocks it holds
      } else {
        hits = kv.lookup(s, hits, count);
        hitBlocks = count[0];
        int offloaded = kv.offloadedAfter(s, hitBlocks);
        if (offloaded > 0) {
          if (!kv.allocateSlots(s, offloaded * blockSize, hits, hitBlocks, false)) {
            break;
          }
          waiting.pollFirst();
          s.numComputed = hitBlocks * blockSize;
          s.loadedTokens = offloaded * blockSize;
          s.loadDoneNanos = now + kv.loadNanos(s.loadedTokens);
          loading.add(s);
          counters.prefixQueries += s.numTokens;
          counters.prefixHits += s.numComputed;
          continue;
        }
        hitTokens = hitBlocks * blockSize;
      }
      int newTokens = kv.alignedChunk(s, hitTokens, Math.min(s.numTokens - hitTokens, budget));
      if (newTokens == 0 || !kv.allocateSlots(s, newTokens, hits, hitBlocks, true)) {
        break;
      }
      waiting.pollFirst();
      running.add(s);
      s.running = true;
      s.numComputed = hitTokens;
      if (s.cachedTokens < 0) {
        s.cachedTokens = hitTokens;
      }
      if (s.loadedTokens == 0) {
        counters.prefixQueries += s.numTokens;
        counters.prefixHits += hitTokens;
      }
      if (admittedHits != null) {
        admittedHits.put(s.id(), hitTokens);
      }
      s.scheduledTokens = newTokens;
      stepSequences.add(s);
      budget -= newTokens;
    }
    return budget;
  }

  /**
   * Loads from the offload tier that ended by {@code t}: the loaded blocks are cached on the GPU (their
   * {@code BlockStored} follows) and the request goes back to the head of the queue with its prefix computed.
   */
  private void finishLoads(long t) {
    for (int i = loading.size() - 1; i >= 0; i--) {
      Sequence s = loading.get(i);
      if (s.loadDoneNanos > t) {
        continue;
      }
      loading.remove(i);
      s.numComputed += s.loadedTokens;
      kv.cacheFullBlocks(s, s.numComputed);
      waiting.addFirst(s);
      stalled = false;
    }
  }

  private long nextLoadEnd() {
    long t = Long.MAX_VALUE;
    for (Sequence s : loading) {
      t = Math.min(t, s.loadDoneNanos);
    }
    return t;
  }

  private void preempt(Sequence s) {
    kv.freeBlocks(s);
    s.loadedTokens = 0;
    s.running = false;
    s.numComputed = 0;
    s.preemptions++;
    counters.preemptions++;
    waiting.addFirst(s);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Step completion

  private void completeStep() {
    stepInFlight = false;
    counters.steps++;
    counters.busyNanos += stepEnd - stepStart;
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
        counters.generationTokens++;
        if (index == 0) {
          s.firstTokenNanos = t;
          counters.promptTokens += s.promptLength;
          counters.ttft.record((t - s.arrivalNanos) * 1e-9);
          s.listener.onFirstToken(s.id(), t);
        } else {
          counters.itl.record((t - s.lastTokenNanos) * 1e-9);
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
    finishLoads(t);
    publishEvents(t);
  }

  private void finish(Sequence s, FinishReason reason) {
    kv.freeBlocks(s);
    finishWithoutFree(s, reason);
  }

  private void finishWithoutFree(Sequence s, FinishReason reason) {
    s.finished = true;
    s.running = false;
    active.remove(s.id());
    counters.finished(reason, (now - s.arrivalNanos) * 1e-9);
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
    if (!kv.hasEvents()) {
      return;
    }
    List<Integer> groups = kv.eventGroups();
    List<KvEvent> events = kv.drainEvents();
    if (kvEventListener != null) {
      kvEventListener.accept(new EngineStepEvents(eventSequence++, timestamp, events, groups,
          config.model().fullAttentionGroup()));
    }
  }

  @Override
  public String toString() {
    return "SimEngine[" + config.servedModelName() + " on " + config.tensorParallel() + "x " + config.gpu().name()
        + ", blocks=" + config.numGpuBlocks() + ", waiting=" + waiting.size() + ", running=" + running.size() + "]";
  }
}
