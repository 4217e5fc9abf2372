package dev.kinference.jmh;

import dev.kinference.cache.ApproximateCacheIndex;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.prompt.BlockKeys;
import dev.kinference.prompt.PrefixKeys;
import java.util.SplittableRandom;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * The {@link ApproximateCacheIndex} in the shapes of SGLang's {@code tree_benchmark} (10 tenants): insert of random
 * alphanumeric texts of 10, 50, 100 and 500 characters; inserts of texts sharing one of four prefixes;
 * prefix-match hit, miss and partial on a tree pre-filled with 4 x 1,000 prefixed texts; and the mixed workload
 * (every third operation a match, the rest inserts, texts built from six conversation prefixes) at 1, 2 and 4
 * threads.
 *
 * <p>SGLang's tree takes text; the index takes block keys. So every operation here starts from text as SGLang's
 * does: tokenize it with the default {@link ApproximateTokenizer}, hash the block keys, then teach the index
 * ({@code onRouted}) or look up. Single operations are sampled (mean and percentiles per operation); the mixed
 * workload is measured in operations per second, all threads together. {@code blockSize} 16 is what the router uses (about 64 characters a block, so a
 * 10-character text has no full block and its insert is only tokenization and hashing); {@code blockSize} 1 keys
 * every token, about one key per four characters, the nearest this index gets to SGLang's per-character tree.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class ApproximateIndexBench {

  static final int TENANTS = 10;
  static final String[] CONVERSATION_PREFIXES = {
      "<|system|>\nYou are a helpful assistant.\n<|user|>\n",
      "<|im_start|>system\nYou are a helpful AI assistant.<|im_end|>\n<|im_start|>user\n",
      "[INST] <<SYS>>\nYou are a helpful assistant.\n<</SYS>>\n\n",
      "Human: ",
      "User: ",
      "### Instruction:\n",
  };
  static final String[] SHARED_PREFIXES = {"system:", "user:", "assistant:", "tool:"};

  static final ApproximateTokenizer TOKENIZER = new ApproximateTokenizer();
  static final long SEED = BlockKeys.seed(Workloads.MODEL, null, null);

  /** SGLang's {@code Alphanumeric.sample_string}. */
  static String alphanumeric(SplittableRandom r, int len) {
    String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    char[] c = new char[len];
    for (int i = 0; i < len; i++) {
      c[i] = alphabet.charAt(r.nextInt(alphabet.length()));
    }
    return new String(c);
  }

  /** Text to keys, as an insert or match starts. */
  static PrefixKeys keys(String text, int blockSize) {
    int[] tokens = TOKENIZER.encode(text);
    return PrefixKeys.of(SEED, tokens, tokens.length, blockSize);
  }

  /** Tokens per key. */
  @State(Scope.Benchmark)
  public static class Granularity {
    @Param({"16", "1"})
    public int blockSize = 16;
  }

  /** An index over ten tenants. */
  @State(Scope.Benchmark)
  public static class Tree {
    ApproximateCacheIndex index;
    EndpointState[] tenants;
    int blockSize;

    @Setup(Level.Trial)
    public void build(Granularity g) {
      blockSize = g.blockSize;
      Fleet fleet = Workloads.fleet(TENANTS);
      tenants = Workloads.states(fleet);
      index = ApproximateCacheIndex.builder().defaultCapacityBlocks(1 << 20).build();
      fleet.addListener(index);
    }
  }

  /** SGLang's {@code insert_throughput}: 1,000 random texts of {@code textLength} characters, cycled. */
  @State(Scope.Thread)
  public static class RandomTexts {
    @Param({"10", "50", "100", "500"})
    public int textLength = 100;

    String[] texts;
    int next;

    @Setup(Level.Trial)
    public void build() {
      SplittableRandom r = new SplittableRandom(7);
      texts = new String[1000];
      for (int i = 0; i < texts.length; i++) {
        texts[i] = alphanumeric(r, textLength);
      }
    }
  }

  /** SGLang's {@code shared_prefix_100}: 4 prefixes x 250 texts with a 50-character random suffix. */
  @State(Scope.Thread)
  public static class PrefixedTexts {
    String[] texts;
    int next;

    @Setup(Level.Trial)
    public void build() {
      SplittableRandom r = new SplittableRandom(11);
      texts = new String[SHARED_PREFIXES.length * 250];
      int n = 0;
      for (String p : SHARED_PREFIXES) {
        for (int i = 0; i < 250; i++) {
          texts[n++] = p + alphanumeric(r, 50);
        }
      }
    }
  }

  /**
   * SGLang's {@code prefix_match_latency}: a tree holding 4 x 1,000 prefixed texts spread over the ten tenants;
   * hits look up one of them, misses a random 50-character text, partials a prefix plus "partial_query".
   */
  @State(Scope.Benchmark)
  public static class FilledTree {
    ApproximateCacheIndex index;
    EndpointState[] tenants;
    int blockSize;
    String[] hits;
    String[] misses;
    String[] partials;

    @Setup(Level.Trial)
    public void build(Granularity g) {
      blockSize = g.blockSize;
      Fleet fleet = Workloads.fleet(TENANTS);
      tenants = Workloads.states(fleet);
      index = ApproximateCacheIndex.builder().defaultCapacityBlocks(1 << 20).build();
      fleet.addListener(index);
      SplittableRandom r = new SplittableRandom(13);
      hits = new String[SHARED_PREFIXES.length * 1000];
      int n = 0;
      for (String p : SHARED_PREFIXES) {
        for (int i = 0; i < 1000; i++) {
          hits[n] = p + alphanumeric(r, 50);
          index.onRouted(tenants[n % TENANTS], keys(hits[n], blockSize));
          n++;
        }
      }
      misses = new String[1000];
      for (int i = 0; i < misses.length; i++) {
        misses[i] = alphanumeric(r, 50);
      }
      partials = new String[SHARED_PREFIXES.length];
      for (int i = 0; i < partials.length; i++) {
        partials[i] = SHARED_PREFIXES[i] + "partial_query";
      }
    }
  }

  /** Per-thread cursor and scratch. */
  @State(Scope.Thread)
  public static class Cursor {
    int next;
    int[] matched = new int[TENANTS];
  }

  @Benchmark
  public void insertRandomText(Tree tree, RandomTexts texts) {
    int i = texts.next++;
    String text = texts.texts[i % texts.texts.length];
    tree.index.onRouted(tree.tenants[i % TENANTS], keys(text, tree.blockSize));
  }

  @Benchmark
  public void insertSharedPrefix(Tree tree, PrefixedTexts texts) {
    int i = texts.next++;
    String text = texts.texts[i % texts.texts.length];
    tree.index.onRouted(tree.tenants[i % TENANTS], keys(text, tree.blockSize));
  }

  @Benchmark
  public int matchHit(FilledTree tree, Cursor c) {
    String text = tree.hits[c.next++ % tree.hits.length];
    tree.index.lookup(keys(text, tree.blockSize), tree.tenants, TENANTS, c.matched);
    return c.matched[0];
  }

  @Benchmark
  public int matchMiss(FilledTree tree, Cursor c) {
    String text = tree.misses[c.next++ % tree.misses.length];
    tree.index.lookup(keys(text, tree.blockSize), tree.tenants, TENANTS, c.matched);
    return c.matched[0];
  }

  @Benchmark
  public int matchPartial(FilledTree tree, Cursor c) {
    String text = tree.partials[c.next++ % tree.partials.length];
    tree.index.lookup(keys(text, tree.blockSize), tree.tenants, TENANTS, c.matched);
    return c.matched[0];
  }

  /**
   * SGLang's {@code mixed_workload}: thread t, as tenant t, runs operation i on
   * {@code prefix[i % 6] + "thread" + t + "_request" + i}: a match when {@code i % 3 == 0}, else an insert. The
   * tree is shared by the threads and not reset (SGLang builds a fresh one per 200 operations).
   */
  @State(Scope.Thread)
  public static class MixedThread {
    int thread;
    int i;
    int[] matched = new int[TENANTS];

    @Setup(Level.Trial)
    public void build(ThreadParams params) {
      thread = params.getThreadIndex();
    }
  }

  static int mixed(Tree tree, MixedThread t) {
    int i = t.i++;
    String text = CONVERSATION_PREFIXES[i % CONVERSATION_PREFIXES.length] + "thread" + t.thread + "_request" + i;
    PrefixKeys k = keys(text, tree.blockSize);
    if (i % 3 == 0) {
      tree.index.lookup(k, tree.tenants, TENANTS, t.matched);
      return t.matched[0];
    }
    tree.index.onRouted(tree.tenants[t.thread % TENANTS], k);
    return 0;
  }

  @Benchmark
  @Threads(1)
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  public int mixed1Thread(Tree tree, MixedThread t) {
    return mixed(tree, t);
  }

  @Benchmark
  @Threads(2)
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  public int mixed2Threads(Tree tree, MixedThread t) {
    return mixed(tree, t);
  }

  @Benchmark
  @Threads(4)
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  public int mixed4Threads(Tree tree, MixedThread t) {
    return mixed(tree, t);
  }
}
