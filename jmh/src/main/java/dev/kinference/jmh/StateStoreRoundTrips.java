package dev.kinference.jmh;

import dev.kinference.policy.engine.Governance;
import dev.kinference.policy.limits.RateLimitStore;
import dev.kinference.state.redis.RedisStateStore;
import dev.kinference.testkit.RedisServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;

/**
 * Store round trips per request, measured, and a plain p50/p99 of one request's governance path (reserve then
 * settle) over the in-process store and over Redis on loopback. Not a JMH benchmark: a main class that {@code
 * bench/state-store-bench.sh} runs from the benchmarks jar.
 *
 * <pre>
 * java -cp jmh/target/benchmarks.jar dev.kinference.jmh.StateStoreRoundTrips [REQUESTS [LATENCY_REQUESTS]]
 * </pre>
 *
 * <p>Latency: after a warm-up, {@code LATENCY_REQUESTS} (default 20,000) sequential requests per store, timed one by
 * one with {@link System#nanoTime} into a histogram, in interleaved chunks (memory, Redis with {@code appendfsync
 * everysec} as the Helm chart runs it, Redis with {@code appendfsync always} as the test kit starts it), so that
 * the machine's drift touches each alike.
 *
 * <p>Round trips: {@code REQUESTS} (default 10,000) sequential requests over Redis while a second connection
 * watches the server with {@code MONITOR}, which tells the commands clients sent (one per round trip) from those the
 * Lua scripts ran; each {@code EVALSHA} is attributed to its script by the SHA-1 of the script text. {@code INFO
 * commandstats} before and after cross-checks the count of script calls.
 */
public final class StateStoreRoundTrips {

  private static final int CHUNKS = 4;
  private static final String END_MARKER = "kinference-bench-end";

  private StateStoreRoundTrips() {}

  public static void main(String[] args) throws Exception {
    int requests = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
    int latencyRequests = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
    try (RedisServer redis = RedisServer.start()) {
      StateStoreFixture.appendfsync(redis.port(), "everysec");
      latency(redis, latencyRequests);
      StateStoreFixture.appendfsync(redis.port(), "everysec");
      roundTrips(redis, requests);
    }
  }

  // ---- latency ----

  private static void latency(RedisServer redis, int requests) {
    RateLimitStore memoryStore = StateStoreFixture.open("memory");
    RateLimitStore redisStore = StateStoreFixture.open(redis.uri());
    Governance memory = StateStoreFixture.governance(memoryStore);
    Governance shared = StateStoreFixture.governance(redisStore);
    Histogram base = new Histogram(60_000_000_000L, 3);
    Histogram everysec = new Histogram(60_000_000_000L, 3);
    Histogram always = new Histogram(60_000_000_000L, 3);
    Map<String, Histogram> histograms = new LinkedHashMap<>();
    histograms.put("memory", base);
    histograms.put("redis", everysec);
    histograms.put("redis-fsync-always", always);
    // warm-up: the JIT, the scripts loaded, the connection made
    for (int i = 0; i < 3; i++) {
      run(memory, requests / 2, null);
      run(shared, requests / 2, null);
    }
    int chunk = Math.max(1, requests / CHUNKS);
    long scriptCalls = 0;
    long scriptMicros = 0;
    Histogram ping = new Histogram(60_000_000_000L, 3);
    try (StateStoreFixture.Resp stats = new StateStoreFixture.Resp(redis.port())) {
      for (int c = 0; c < CHUNKS; c++) {
        run(memory, chunk, base);
        StateStoreFixture.appendfsync(redis.port(), "everysec");
        Map<String, long[]> before = stats.commandStats();
        run(shared, chunk, everysec);
        Map<String, long[]> after = stats.commandStats();
        long[] was = before.getOrDefault("evalsha", new long[2]);
        long[] now = after.getOrDefault("evalsha", new long[2]);
        scriptCalls += now[0] - was[0];
        scriptMicros += now[1] - was[1];
        StateStoreFixture.appendfsync(redis.port(), "always");
        run(shared, chunk, always);
        // the floor: a PING's round trip over a plain blocking socket
        for (int i = 0; i < chunk; i++) {
          long t0 = System.nanoTime();
          stats.call("PING");
          ping.recordValue(System.nanoTime() - t0);
        }
      }
    }
    memoryStore.close();
    redisStore.close();
    System.out.printf(Locale.ROOT, "%nLatency of reserve + settle, %,d sequential requests per store (microseconds)%n",
        chunk * CHUNKS);
    System.out.printf(Locale.ROOT, "%-20s %9s %9s %9s %9s %9s %9s %12s %12s%n", "store", "mean", "p50", "p90", "p99",
        "p99.9", "max", "added p50", "added p99");
    for (Map.Entry<String, Histogram> e : histograms.entrySet()) {
      Histogram h = e.getValue();
      boolean isBase = e.getKey().equals("memory");
      System.out.printf(Locale.ROOT, "%-20s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %12s %12s%n", e.getKey(),
          h.getMean() / 1e3, us(h, 50), us(h, 90), us(h, 99), us(h, 99.9), h.getMaxValue() / 1e3,
          isBase ? "" : String.format(Locale.ROOT, "%.1f", us(h, 50) - us(base, 50)),
          isBase ? "" : String.format(Locale.ROOT, "%.1f", us(h, 99) - us(base, 99)));
    }
    System.out.printf(Locale.ROOT, "Redis's own time per script call (INFO commandstats, appendfsync everysec): "
        + "%.1f us; a PING's round trip over a plain blocking socket: p50 %.1f us, p99 %.1f us%n",
        scriptMicros / (double) Math.max(1, scriptCalls), us(ping, 50), us(ping, 99));
    for (Map.Entry<String, Histogram> e : histograms.entrySet()) {
      Histogram h = e.getValue();
      // one line per store for the script to parse
      System.out.printf(Locale.ROOT, "RESULT latency store=%s p50=%.1f p99=%.1f p999=%.1f mean=%.1f n=%d%n",
          e.getKey(), us(h, 50), us(h, 99), us(h, 99.9), h.getMean() / 1e3, h.getTotalCount());
    }
    System.out.printf(Locale.ROOT, "RESULT server script_us=%.1f ping_p50=%.1f ping_p99=%.1f%n",
        scriptMicros / (double) Math.max(1, scriptCalls), us(ping, 50), us(ping, 99));
  }

  private static double us(Histogram h, double percentile) {
    return h.getValueAtPercentile(percentile) / 1e3;
  }

  private static void run(Governance g, int n, @Nullable Histogram h) {
    for (int i = 0; i < n; i++) {
      long t0 = System.nanoTime();
      StateStoreFixture.request(g);
      long t1 = System.nanoTime();
      if (h != null) {
        h.recordValue(t1 - t0);
      }
    }
  }

  // ---- round trips ----

  private static void roundTrips(RedisServer redis, int requests) throws Exception {
    Map<String, String> scriptBySha = new TreeMap<>();
    String calendar = resource("calendar.lua");
    for (String name : List.of("reserve", "settle", "renew")) {
      // as RedisStateStore loads them: the calendar functions, a newline, the script
      scriptBySha.put(sha1(calendar + "\n" + resource(name + ".lua")), name);
    }
    try (RateLimitStore store = StateStoreFixture.open(redis.uri());
        StateStoreFixture.Resp stats = new StateStoreFixture.Resp(redis.port());
        StateStoreFixture.Resp monitor = new StateStoreFixture.Resp(redis.port())) {
      Governance g = StateStoreFixture.governance(store);
      run(g, 1000, null);
      for (Map.Entry<String, String> s : scriptBySha.entrySet()) {
        if (s.getValue().equals("renew")) {
          continue; // loaded on the first lease renewal only
        }
        Object exists = stats.call("SCRIPT", "EXISTS", s.getKey());
        if (!(exists instanceof List<?> l) || !Long.valueOf(1).equals(l.get(0))) {
          throw new IllegalStateException("the " + s.getValue() + " script's SHA-1 " + s.getKey()
              + " is not loaded on the server: the store builds its scripts differently; update this class");
        }
      }
      Object me = stats.call("CLIENT", "INFO");
      String statsAddr = field(String.valueOf(me), "addr");

      Object ok = monitor.call("MONITOR");
      if (!"OK".equals(ok)) {
        throw new IllegalStateException("MONITOR: " + ok);
      }
      Map<String, Long> client = new TreeMap<>();
      Map<String, Long> lua = new TreeMap<>();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread reader = new Thread(() -> {
        try {
          while (true) {
            String line = monitor.line();
            int open = line.indexOf('[');
            int close = line.indexOf(']', open);
            if (open < 0 || close < 0) {
              continue;
            }
            String source = line.substring(open + 1, close);
            List<String> words = quoted(line.substring(close + 1), 2);
            if (words.isEmpty()) {
              continue;
            }
            String command = words.get(0).toLowerCase(Locale.ROOT);
            if (source.endsWith(" lua")) {
              lua.merge(command, 1L, Long::sum);
              continue;
            }
            if (source.endsWith(" " + statsAddr)) {
              if (command.equals("echo") && words.size() > 1 && words.get(1).equals(END_MARKER)) {
                return;
              }
              continue;
            }
            if (command.equals("evalsha") && words.size() > 1) {
              command = "evalsha " + scriptBySha.getOrDefault(words.get(1), "unknown script " + words.get(1));
            }
            client.merge(command, 1L, Long::sum);
          }
        } catch (RuntimeException e) {
          failure.set(e);
        }
      }, "monitor-reader");
      reader.setDaemon(true);
      Map<String, Long> before = stats.commandCalls();
      reader.start();
      long t0 = System.nanoTime();
      run(g, requests, null);
      long elapsed = System.nanoTime() - t0;
      Map<String, Long> after = stats.commandCalls();
      stats.call("ECHO", END_MARKER);
      reader.join(60_000);
      if (failure.get() != null) {
        throw new IllegalStateException("reading MONITOR failed", failure.get());
      }
      if (reader.isAlive()) {
        throw new IllegalStateException("MONITOR did not show the end marker within 60 s");
      }

      double reserve = client.getOrDefault("evalsha reserve", 0L) / (double) requests;
      double settle = client.getOrDefault("evalsha settle", 0L) / (double) requests;
      long total = 0;
      for (long v : client.values()) {
        total += v;
      }
      long scriptCalls = delta(before, after, "evalsha") + delta(before, after, "eval");
      long luaTotal = 0;
      for (long v : lua.values()) {
        luaTotal += v;
      }
      System.out.printf(Locale.ROOT, "%nRound trips to Redis, %,d sequential requests (%.1f s with MONITOR on)%n",
          requests, elapsed / 1e9);
      System.out.printf(Locale.ROOT, "commands sent by the store (MONITOR): %s%n", perRequest(client, requests));
      System.out.printf(Locale.ROOT, "commands run inside the scripts per request: %.1f (%s)%n",
          luaTotal / (double) requests, perRequest(lua, requests));
      System.out.printf(Locale.ROOT, "INFO commandstats cross-check: evalsha + eval calls per request %.3f%n",
          scriptCalls / (double) requests);
      System.out.printf(Locale.ROOT, "round trips per request: reserve %.3f, settle %.3f, total %.3f%n", reserve,
          settle, total / (double) requests);
      System.out.printf(Locale.ROOT,
          "RESULT roundtrips reserve=%.3f settle=%.3f total=%.3f commandstats=%.3f lua=%.1f n=%d%n", reserve, settle,
          total / (double) requests, scriptCalls / (double) requests, luaTotal / (double) requests, requests);
    }
  }

  private static String perRequest(Map<String, Long> counts, int requests) {
    if (counts.isEmpty()) {
      return "none";
    }
    StringBuilder b = new StringBuilder();
    for (Map.Entry<String, Long> e : counts.entrySet()) {
      if (b.length() > 0) {
        b.append(", ");
      }
      b.append(e.getKey()).append(' ').append(String.format(Locale.ROOT, "%.3f", e.getValue() / (double) requests));
    }
    return b.toString();
  }

  private static long delta(Map<String, Long> before, Map<String, Long> after, String command) {
    return after.getOrDefault(command, 0L) - before.getOrDefault(command, 0L);
  }

  /** The first {@code max} double-quoted words of a MONITOR line (backslash escapes kept as they are). */
  private static List<String> quoted(String s, int max) {
    List<String> out = new ArrayList<>(max);
    int i = 0;
    while (out.size() < max) {
      int start = s.indexOf('"', i);
      if (start < 0) {
        break;
      }
      StringBuilder w = new StringBuilder();
      int j = start + 1;
      while (j < s.length() && s.charAt(j) != '"') {
        if (s.charAt(j) == '\\' && j + 1 < s.length()) {
          w.append(s.charAt(j));
          j++;
        }
        w.append(s.charAt(j));
        j++;
      }
      out.add(w.toString());
      i = j + 1;
    }
    return out;
  }

  /** A field of a {@code CLIENT INFO} line ({@code name=value} separated by spaces). */
  private static String field(String clientInfo, String name) {
    for (String kv : clientInfo.strip().split(" ")) {
      if (kv.startsWith(name + "=")) {
        return kv.substring(name.length() + 1);
      }
    }
    throw new IllegalStateException("no " + name + " in CLIENT INFO: " + clientInfo);
  }

  private static String resource(String file) {
    try (InputStream in = RedisStateStore.class.getResourceAsStream(file)) {
      if (in == null) {
        throw new IllegalStateException("missing script " + file);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String sha1(String text) {
    try {
      MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
      return HexFormat.of().formatHex(sha1.digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
