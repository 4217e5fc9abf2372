package dev.kinference.jmh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The public Mooncake trace format (FAST'25): JSONL, one request a line,
 * {@code {"timestamp": ms, "input_length": tokens, "output_length": tokens, "hash_ids": [ints]}}, each hash id one
 * 512-token prefix block, equal ids meaning a reusable prefix. {@link #generate} writes a synthetic trace of that
 * format; {@link #read} parses any such file, including the published one.
 */
final class MooncakeTraceFile {

  /** Tokens per hash id. */
  static final int TOKENS_PER_ID = 512;

  /** One request of the trace. */
  @SuppressWarnings("ArrayRecordComponent") // benchmark fixture: read, never copied or compared
  record Request(long timestampMs, int inputLength, int outputLength, long[] hashIds) {}

  private MooncakeTraceFile() {}

  /**
   * Writes {@code count} requests shaped like Mooncake's conversation trace: Poisson arrivals at
   * {@code requestsPerSecond}; input lengths log-normal (median about 4,000 tokens, mean about 7,000, at most
   * 32,768); 40% continue an earlier request (a later turn: its hash ids, then new ones), 30% start with one of 20
   * shared system prefixes of 2 to 12 ids, 30% are new throughout.
   */
  static void generate(Path file, int count, double requestsPerSecond, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    long[][] systemPrefixes = new long[20][];
    long nextId = 0;
    for (int i = 0; i < systemPrefixes.length; i++) {
      systemPrefixes[i] = new long[2 + r.nextInt(11)];
      for (int k = 0; k < systemPrefixes[i].length; k++) {
        systemPrefixes[i][k] = nextId++;
      }
    }
    List<long[]> earlier = new ArrayList<>();
    double t = 0;
    try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      for (int i = 0; i < count; i++) {
        t += -Math.log(1 - r.nextDouble()) / requestsPerSecond * 1000;
        int input = (int) Math.min(32_768, Math.max(64, Math.exp(8.3 + 1.0 * gaussian(r))));
        int ids = (input + TOKENS_PER_ID - 1) / TOKENS_PER_ID;
        long[] hashIds = new long[ids];
        int from = 0;
        double kind = r.nextDouble();
        if (kind < 0.4 && !earlier.isEmpty()) {
          long[] before = earlier.get(Math.max(0, earlier.size() - 1 - r.nextInt(Math.min(earlier.size(), 1000))));
          from = Math.min(before.length, ids);
          System.arraycopy(before, 0, hashIds, 0, from);
        } else if (kind < 0.7) {
          long[] p = systemPrefixes[r.nextInt(systemPrefixes.length)];
          from = Math.min(p.length, ids);
          System.arraycopy(p, 0, hashIds, 0, from);
        }
        for (int k = from; k < ids; k++) {
          hashIds[k] = nextId++;
        }
        earlier.add(hashIds);
        int output = (int) Math.min(4096, Math.max(1, Math.exp(5.0 + 0.8 * gaussian(r))));
        w.write("{\"timestamp\": " + (long) t + ", \"input_length\": " + input + ", \"output_length\": " + output
            + ", \"hash_ids\": " + java.util.Arrays.toString(hashIds) + "}");
        w.newLine();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Parses a Mooncake JSONL trace. */
  static List<Request> read(Path file) {
    ObjectMapper json = new ObjectMapper();
    List<Request> out = new ArrayList<>();
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        JsonNode n = json.readTree(line);
        JsonNode idsNode = n.path("hash_ids");
        long[] ids = new long[idsNode.size()];
        for (int i = 0; i < ids.length; i++) {
          ids[i] = idsNode.get(i).asLong();
        }
        int input = n.path("input_length").asInt(ids.length * TOKENS_PER_ID);
        out.add(new Request(n.path("timestamp").asLong(), input, n.path("output_length").asInt(0), ids));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  private static double gaussian(SplittableRandom r) {
    return Math.sqrt(-2 * Math.log(1 - r.nextDouble())) * Math.cos(2 * Math.PI * r.nextDouble());
  }
}
