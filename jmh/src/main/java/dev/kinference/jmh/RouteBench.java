package dev.kinference.jmh;

import dev.kinference.cache.ApproximateCacheIndex;
import dev.kinference.cache.CacheIndex;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.prompt.PrefixKeys;
import dev.kinference.prompt.TokenizationException;
import dev.kinference.prompt.TokenizedPrompt;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.Router;
import dev.kinference.routing.RoutingDecision;
import dev.kinference.routing.Usage;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The whole {@link Router#route} decision with the default profile (filters {@code healthy} and
 * {@code fresh-metrics}, scorers {@code predicted-ttft}, {@code prefix-overlap}, {@code kv-utilization},
 * {@code new-prefix-headroom}, {@code session-affinity}, {@code queue-depth}, {@code prefix-under-saturation} and {@code prefix-home}, picker
 * {@code max-score}),
 * over {@code endpoints} endpoints whose index holds about {@code indexedBlocks} (block, endpoint) entries.
 *
 * <p>The fleet is filled with chat conversations of {@code promptTokens} tokens (eight shared system prompts, each
 * an eighth of the prompt; the rest unique), conversation d cached on endpoint {@code d % endpoints}. Each request
 * repeats one of the first {@code hotConversations} of these conversations, so the walk visits every block of the
 * prompt (the longest lookup). Every endpoint's metrics are fresh and idle (2 running, none waiting, 30% KV used).
 *
 * <ul>
 *   <li>{@code decide}: the request was tokenized before (its prefix keys are remembered), so this is the decision
 *       alone: candidates, filters, index lookup, TTFT prediction, scoring, picking, accounting, the returned
 *       {@link RoutingDecision}; then {@code reportFinished} releases the load it accounted.</li>
 *   <li>{@code endToEnd}: builds the request from its two strings and routes it, so it adds rendering,
 *       tokenization (the default approximate tokenizer) and prefix-key hashing.</li>
 * </ul>
 * With the approximate index, {@code route} also teaches the index the prompt's blocks on the chosen endpoint.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
@State(Scope.Benchmark)
public class RouteBench {

  private static final int SYSTEM_PROMPTS = 8;

  @Param({"1024", "8192", "32768"})
  public int promptTokens = 8192;

  @Param({"8", "64", "256"})
  public int endpoints = 64;

  @Param({"precise", "approximate"})
  public String index = "precise";

  @Param({"1000000"})
  public int indexedBlocks = 1_000_000;

  /**
   * How many different conversations the requests cycle through: 16 keeps their blocks in this machine's 1 MB L2
   * cache (a hot working set: shared system prompts, active conversations); 1024 does not (every walk misses).
   */
  @Param({"16", "1024"})
  public int hotConversations = 1024;

  private Router router;
  private InferenceRequest[] pretokenized;
  private String[] systems;
  private String[] users;
  private int next;
  private int poolMask;

  @Setup(Level.Trial)
  public void build() throws TokenizationException {
    Fleet fleet = Workloads.fleet(endpoints);
    EndpointState[] states = Workloads.states(fleet);
    long capacity = Math.max(31_250, 2L * indexedBlocks / endpoints);
    // Stamped an hour ahead, the metrics stay fresh for the whole run: no scraper thread runs (or allocates) beside
    // the benchmark, and the freshness filter passes as it would with llm-d's 50 ms scrapes.
    Workloads.scrape(states, capacity, System.nanoTime() + TimeUnit.HOURS.toNanos(1));
    CacheIndex cacheIndex = switch (index) {
      case "precise" -> new PreciseCacheIndex();
      case "approximate" -> ApproximateCacheIndex.builder().build();
      default -> throw new IllegalArgumentException("unknown index " + index);
    };
    router = Router.builder().fleet(fleet).cacheIndex(cacheIndex).build();

    int systemWords = promptTokens / SYSTEM_PROMPTS;
    int userWords = promptTokens - systemWords - 5; // markers: system, end, user, end, assistant
    int blocksPerPrompt = promptTokens / Workloads.BLOCK_SIZE;
    int pool = Integer.highestOneBit(Math.min(hotConversations, Math.max(1, indexedBlocks / blocksPerPrompt)));
    poolMask = pool - 1;
    systems = new String[pool];
    users = new String[pool];
    pretokenized = new InferenceRequest[pool];
    String[] systemPrompts = new String[SYSTEM_PROMPTS];
    for (int i = 0; i < SYSTEM_PROMPTS; i++) {
      systemPrompts[i] = ChatPrompts.words(-1 - i, systemWords);
    }
    int conversations = 0;
    for (int d = 0; d < pool || cacheIndex.entryCount() < indexedBlocks; d++) {
      conversations++;
      String system = systemPrompts[d % SYSTEM_PROMPTS];
      String user = ChatPrompts.words(d, userWords);
      InferenceRequest request = ChatPrompts.chat(system, user);
      TokenizedPrompt prompt = request.tokenize(router.tokenizer());
      EndpointState holder = states[d % endpoints];
      if (cacheIndex instanceof PreciseCacheIndex) {
        int[] tokens = prompt.tokens();
        int blocks = tokens.length / Workloads.BLOCK_SIZE;
        cacheIndex.onEvent(holder, Workloads.stored(Workloads.engineHashes(tokens, blocks),
            Arrays.copyOf(tokens, blocks * Workloads.BLOCK_SIZE)));
      } else {
        PrefixKeys keys = prompt.keys(Workloads.BLOCK_SIZE);
        cacheIndex.onRouted(holder, keys);
      }
      if (d < pool) {
        systems[d] = system;
        users[d] = user;
        pretokenized[d] = request;
      }
    }
    System.out.printf("%n%s index: %d conversations of %d tokens on %d endpoints; %d entries%n", index,
        conversations, pretokenized[0].tokenize(router.tokenizer()).tokenCount(), endpoints,
        cacheIndex.entryCount());
  }

  /** The decision for a request whose tokens and prefix keys are already known. */
  @Benchmark
  public RoutingDecision decide() {
    next = (next + 1) & poolMask;
    RoutingDecision d = router.route(pretokenized[next]);
    d.reportFinished(Usage.UNKNOWN);
    return d;
  }

  /** Request building, rendering, tokenization, key hashing and the decision. */
  @Benchmark
  public RoutingDecision endToEnd() {
    next = (next + 1) & poolMask;
    RoutingDecision d = router.route(ChatPrompts.chat(systems[next], users[next]));
    d.reportFinished(Usage.UNKNOWN);
    return d;
  }
}
