package dev.kinference.sim.workload;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kinference.request.InferenceRequest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * A trace in the Mooncake format (FAST'25): JSON lines {@code {"timestamp": ms, "input_length": tokens,
 * "output_length": tokens, "hash_ids": [ints]}}, one request a line, where each hash id stands for one 512-token
 * block of the prompt and equal ids mean an equal prefix. Replayed as a {@link TimedWorkload}: request {@code i}
 * is sent at its timestamp, its prompt made of 512 pseudo-random tokens per hash id (the same id gives the same
 * tokens, so shared ids are shared prefixes on the servers) cut or padded to {@code input_length}.
 *
 * <p>Not thread-safe.
 */
public final class MooncakeTrace implements TimedWorkload {

  /** Tokens a hash id stands for. */
  public static final int TRACE_BLOCK_TOKENS = 512;

  /** One line of the trace. */
  @SuppressWarnings("ArrayRecordComponent") // copied in and out
  public record Entry(long timestampMs, int inputLength, int outputLength, long[] hashIds) {
    public Entry {
      if (timestampMs < 0 || inputLength < 1 || outputLength < 0) {
        throw new IllegalArgumentException("invalid trace entry: timestamp " + timestampMs + ", input "
            + inputLength + ", output " + outputLength);
      }
      hashIds = hashIds.clone();
    }

    @Override
    public long[] hashIds() {
      return hashIds.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Entry e && timestampMs == e.timestampMs && inputLength == e.inputLength
          && outputLength == e.outputLength && Arrays.equals(hashIds, e.hashIds);
    }

    @Override
    public int hashCode() {
      return Objects.hash(timestampMs, inputLength, outputLength, Arrays.hashCode(hashIds));
    }
  }

  private final String model;
  private final List<Entry> entries;
  private final int maxInputTokens;
  private final String source;
  private final Map<Long, int[]> blocks = new HashMap<>();
  private int next;

  private MooncakeTrace(String model, List<Entry> entries, int maxInputTokens, String source) {
    this.model = model;
    this.entries = List.copyOf(entries);
    this.maxInputTokens = maxInputTokens;
    this.source = source;
  }

  /**
   * Reads a trace. Entries are sorted by timestamp; blank lines are skipped.
   *
   * @param maxInputTokens longer prompts are cut to this (a server's context), 0 for no limit
   * @throws IllegalArgumentException naming the line, for malformed JSON or missing or invalid fields
   */
  public static MooncakeTrace read(Reader reader, String model, int maxInputTokens, String source) {
    // A line is one JSON object: text after it is a malformed line, not ignored.
    ObjectMapper json = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    List<Entry> entries = new ArrayList<>();
    try (BufferedReader in = new BufferedReader(reader)) {
      String line;
      int number = 0;
      while ((line = in.readLine()) != null) {
        number++;
        if (line.isBlank()) {
          continue;
        }
        try {
          JsonNode node = json.readTree(line);
          entries.add(parse(node));
        } catch (JsonProcessingException e) {
          // Jackson's own message ends with a source location that says nothing here ("REDACTED", line 1).
          String column = e.getLocation() == null ? "" : " at column " + e.getLocation().getColumnNr();
          throw new IllegalArgumentException(source + " line " + number + column + ": malformed JSON: "
              + e.getOriginalMessage().replaceAll(" \\(start marker at \\[Source:.*?column: \\d+\\]\\)", ""), e);
        } catch (RuntimeException e) {
          throw new IllegalArgumentException(source + " line " + number + ": " + e.getMessage(), e);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (entries.isEmpty()) {
      throw new IllegalArgumentException(source + ": the trace has no requests");
    }
    entries.sort((a, b) -> Long.compare(a.timestampMs(), b.timestampMs()));
    return new MooncakeTrace(model, entries, maxInputTokens, source);
  }

  /** Reads a trace file. */
  public static MooncakeTrace read(Path file, String model, int maxInputTokens) {
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      return read(r, model, maxInputTokens, file.toString());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read trace " + file + ": " + e.getMessage(), e);
    }
  }

  private static Entry parse(JsonNode node) {
    if (node == null || !node.isObject()) {
      throw new IllegalArgumentException("not a JSON object");
    }
    long ts = requireNumber(node, "timestamp").asLong();
    int input = requireNumber(node, "input_length").asInt();
    int output = requireNumber(node, "output_length").asInt();
    JsonNode ids = node.get("hash_ids");
    if (ids == null || !ids.isArray()) {
      throw new IllegalArgumentException("missing array field 'hash_ids'");
    }
    long[] hashIds = new long[ids.size()];
    for (int i = 0; i < hashIds.length; i++) {
      if (!ids.get(i).canConvertToLong()) {
        throw new IllegalArgumentException("hash_ids[" + i + "] is not an integer");
      }
      hashIds[i] = ids.get(i).asLong();
    }
    return new Entry(ts, input, output, hashIds);
  }

  private static JsonNode requireNumber(JsonNode node, String field) {
    JsonNode v = node.get(field);
    if (v == null || !v.isNumber()) {
      throw new IllegalArgumentException("missing numeric field '" + field + "'");
    }
    return v;
  }

  /** Writes entries as JSON lines. */
  public static void write(List<Entry> entries, Writer out) throws IOException {
    for (Entry e : entries) {
      StringBuilder sb = new StringBuilder();
      sb.append("{\"timestamp\": ").append(e.timestampMs()).append(", \"input_length\": ").append(e.inputLength())
          .append(", \"output_length\": ").append(e.outputLength()).append(", \"hash_ids\": [");
      long[] ids = e.hashIds();
      for (int i = 0; i < ids.length; i++) {
        sb.append(i == 0 ? "" : ", ").append(ids[i]);
      }
      out.write(sb.append("]}\n").toString());
    }
  }

  /**
   * A synthetic trace with Mooncake's structure: {@code requests} requests at Poisson arrivals of
   * {@code ratePerSecond}; a third continue an earlier conversation (its hash ids plus new ones), a third start
   * from one of {@code documents} shared documents (long common prefixes), the rest are new.
   */
  public static List<Entry> synthesize(long seed, int requests, double ratePerSecond, int documents) {
    if (requests < 1 || !(ratePerSecond > 0) || Double.isInfinite(ratePerSecond) || documents < 1) {
      throw new IllegalArgumentException("a synthetic trace needs at least 1 request, a finite rate above 0 and at "
          + "least 1 document: " + requests + " requests, " + ratePerSecond + "/s, " + documents + " documents");
    }
    SplittableRandom r = new SplittableRandom(seed);
    List<Entry> out = new ArrayList<>();
    List<long[]> conversations = new ArrayList<>();
    long nextId = 0;
    long[][] docs = new long[documents][];
    for (int d = 0; d < docs.length; d++) {
      docs[d] = new long[2 + r.nextInt(6)];
      for (int i = 0; i < docs[d].length; i++) {
        docs[d][i] = nextId++;
      }
    }
    double t = 0;
    for (int i = 0; i < requests; i++) {
      t += -Math.log(1 - r.nextDouble()) / ratePerSecond * 1000;
      double kind = r.nextDouble();
      long[] prefix;
      if (kind < 1.0 / 3 && !conversations.isEmpty()) {
        prefix = conversations.get(r.nextInt(conversations.size()));
      } else if (kind < 2.0 / 3) {
        prefix = docs[r.nextInt(docs.length)];
      } else {
        prefix = new long[0];
      }
      int fresh = 1 + r.nextInt(3);
      long[] ids = Arrays.copyOf(prefix, prefix.length + fresh);
      for (int k = prefix.length; k < ids.length; k++) {
        ids[k] = nextId++;
      }
      int input = (ids.length - 1) * TRACE_BLOCK_TOKENS + 1 + r.nextInt(TRACE_BLOCK_TOKENS);
      int output = 16 + r.nextInt(400);
      out.add(new Entry((long) t, input, output, ids));
      conversations.add(ids);
    }
    return out;
  }

  /**
   * {@code java ... MooncakeTrace OUT [REQUESTS [RATE [DOCUMENTS [SEED]]]]}: writes {@link #synthesize}'s trace. The
   * defaults (200 requests at 2 a second over 6 documents, seed 7) give the committed sample trace
   * {@code kinference-sim/src/test/resources/traces/mooncake-sample.jsonl}.
   */
  public static void main(String[] args) throws IOException {
    TraceWriterMain.run("MooncakeTrace", "OUT.jsonl [REQUESTS [RATE [DOCUMENTS [SEED]]]]", 5, args,
        a -> synthesize(TraceWriterMain.longArg(a, 4, 7), TraceWriterMain.intArg(a, 1, 200),
            TraceWriterMain.doubleArg(a, 2, 2.0), TraceWriterMain.intArg(a, 3, 6)),
        entries -> TraceStatistics.of(entries).toString());
  }

  public List<Entry> entries() {
    return entries;
  }

  @Override
  public String name() {
    return "trace";
  }

  @Override
  public String describe() {
    long shared = entries.stream().filter(e -> e.hashIds().length > 0).count();
    double meanIn = entries.stream().mapToInt(Entry::inputLength).average().orElse(0);
    double meanOut = entries.stream().mapToInt(Entry::outputLength).average().orElse(0);
    return String.format(Locale.ROOT, "%s: %d requests over %.1f s, mean %.0f in / %.0f out tokens (%d with hash ids)",
        source, entries.size(), durationNanos() / 1e9, meanIn, meanOut, shared);
  }

  @Override
  public long durationNanos() {
    return (entries.get(entries.size() - 1).timestampMs() - entries.get(0).timestampMs()) * 1_000_000L;
  }

  @Override
  public @Nullable Timed nextTimedSession(RandomGenerator random) {
    if (next >= entries.size()) {
      return null;
    }
    int index = next++;
    Entry e = entries.get(index);
    long offset = (e.timestampMs() - entries.get(0).timestampMs()) * 1_000_000L;
    return new Timed(offset, new SharedPrefixWorkload.SingleRequestSession(request(index, e)));
  }

  @Override
  public Session newSession(RandomGenerator random, long number) {
    int index = (int) (number % entries.size());
    return new SharedPrefixWorkload.SingleRequestSession(request(index, entries.get(index)));
  }

  private ClientRequest request(int index, Entry e) {
    int length = maxInputTokens > 0 ? Math.min(e.inputLength(), maxInputTokens) : e.inputLength();
    int[] tokens = new int[length];
    long[] ids = e.hashIds();
    int filled = 0;
    for (int b = 0; b < ids.length && filled < length; b++) {
      int[] block = blocks.computeIfAbsent(ids[b], MooncakeTrace::blockTokens);
      int n = Math.min(TRACE_BLOCK_TOKENS, length - filled);
      System.arraycopy(block, 0, tokens, filled, n);
      filled += n;
    }
    if (filled < length) {
      SplittableRandom r = new SplittableRandom(0x5EED_0000_0000L + index);
      for (int i = filled; i < length; i++) {
        tokens[i] = r.nextInt(1 << 30);
      }
    }
    int output = Math.max(1, e.outputLength());
    InferenceRequest request = InferenceRequest.builder(model).promptTokenIds(tokens).maxTokens(output).build();
    return new ClientRequest("trace-" + index, request, tokens, Prompts.tokenText(tokens), output, null, "trace",
        null, null);
  }

  private static int[] blockTokens(long hashId) {
    SplittableRandom r = new SplittableRandom(hashId * 0x9E3779B97F4A7C15L + 0x7F4A7C15L);
    int[] out = new int[TRACE_BLOCK_TOKENS];
    for (int i = 0; i < out.length; i++) {
      out[i] = r.nextInt(1 << 30);
    }
    return out;
  }
}
