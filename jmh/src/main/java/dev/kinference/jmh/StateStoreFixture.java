package dev.kinference.jmh;

import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.policy.engine.Admission;
import dev.kinference.policy.engine.Governance;
import dev.kinference.policy.engine.YamlPolicyEngine;
import dev.kinference.policy.limits.RateLimitStore;
import dev.kinference.policy.limits.StateStores;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.Usage;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * What the state-store benchmarks share: one tenant whose every request touches a sliding token window, a
 * concurrency lease and a daily budget (the most a reservation writes), the request and usage of one chat
 * completion, and a raw RESP connection for configuring and observing the Redis server.
 */
final class StateStoreFixture {

  static final String MODEL = "bench-model";
  static final String TENANT = "acme";

  /**
   * A pool with a price and a tenant with a token limit that never refuses (10^12 per minute), a concurrency limit
   * and a daily budget that is never spent (10^9 USD): each reservation checks and writes all three counters, each
   * settlement releases the lease, corrects the token and cost counters and adds the usage totals.
   */
  static final String CONFIG = """
      apiVersion: kinference.dev/v1alpha1
      kind: InferencePool
      metadata: {name: bench}
      spec:
        model: %s
        price: {input: 10.0, output: 30.0}
        endpoints:
          - {id: e0, url: "http://127.0.0.1:9"}
      ---
      apiVersion: kinference.dev/v1alpha1
      kind: Tenant
      metadata: {name: %s}
      spec:
        apiKeys: [{name: a, sha256: %s}]
        models: ["*"]
        limits: {tokensPerMinute: 1000000000000, concurrentRequests: 64}
        budget: {period: day, limit: 1000000000, currency: USD}
      """.formatted(MODEL, TENANT, Governance.sha256Hex("key-acme"));

  /** A short chat completion of the tenant: about 30 prompt tokens, at most 256 output tokens. */
  static final InferenceRequest REQUEST = InferenceRequest.builder(MODEL)
      .system("You are a concise assistant.")
      .user("Summarise the state of the shared rate limits in one sentence, please.")
      .maxTokens(256)
      .tenant(TENANT)
      .build();

  /** What the server reports back: 30 prompt tokens (16 of them cached) and 120 output tokens. */
  static final Usage USAGE = new Usage(30, 16, 120);

  private StateStoreFixture() {}

  /** Governance over the benchmark's configuration and {@code store}. */
  static Governance governance(RateLimitStore store) {
    return Governance.builder()
        .engine(YamlPolicyEngine.builder().config(PolicyLoader.load(CONFIG, "bench.yaml").orThrow()).build())
        .rateLimitStore(store)
        .build();
  }

  /** The store {@code uri} names ({@code memory} or {@code redis://...}), as the gateway opens it. */
  static RateLimitStore open(String uri) {
    return StateStores.open(uri, null, Duration.ofMillis(500));
  }

  /** One request's governance path: reserve, then settle with the reported usage. */
  static Admission request(Governance g) {
    Admission a = g.reserve(REQUEST);
    a.settle(USAGE);
    return a;
  }

  /**
   * A blocking RESP2 connection to a Redis server on 127.0.0.1, outside the store's client, so that what it sends
   * is not mistaken for the store's traffic (it is told apart by command name). Not thread-safe.
   */
  static final class Resp implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;

    Resp(int port) {
      try {
        socket = new Socket(InetAddress.getLoopbackAddress(), port);
        socket.setTcpNoDelay(true);
        out = socket.getOutputStream();
        in = new BufferedInputStream(socket.getInputStream(), 1 << 16);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /** Sends one command and returns its reply (String, Long, List, or null). */
    @Nullable Object call(String... args) {
      send(args);
      return read();
    }

    void send(String... args) {
      try {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(("*" + args.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
        for (String a : args) {
          byte[] bytes = a.getBytes(StandardCharsets.UTF_8);
          b.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
          b.writeBytes(bytes);
          b.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        out.write(b.toByteArray());
        out.flush();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /** The next reply; an error reply is thrown. */
    @Nullable Object read() {
      String line = line();
      char type = line.charAt(0);
      String rest = line.substring(1);
      return switch (type) {
        case '+' -> rest;
        case '-' -> throw new IllegalStateException("redis: " + rest);
        case ':' -> Long.parseLong(rest);
        case '$' -> bulk(Integer.parseInt(rest));
        case '*' -> {
          int n = Integer.parseInt(rest);
          if (n < 0) {
            yield null;
          }
          List<@Nullable Object> items = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            items.add(read());
          }
          yield items;
        }
        default -> throw new IllegalStateException("unexpected RESP reply: " + line);
      };
    }

    private @Nullable String bulk(int n) {
      if (n < 0) {
        return null;
      }
      byte[] data = new byte[n + 2];
      int off = 0;
      try {
        while (off < data.length) {
          int r = in.read(data, off, data.length - off);
          if (r < 0) {
            throw new IOException("connection closed");
          }
          off += r;
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return new String(data, 0, n, StandardCharsets.UTF_8);
    }

    /** One CRLF-terminated line, without the CRLF. */
    String line() {
      try {
        ByteArrayOutputStream b = new ByteArrayOutputStream(256);
        int prev = -1;
        while (true) {
          int c = in.read();
          if (c < 0) {
            throw new IOException("connection closed");
          }
          if (prev == '\r' && c == '\n') {
            byte[] bytes = b.toByteArray();
            return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
          }
          b.write(c);
          prev = c;
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /** {@code INFO commandstats} as command name to calls. */
    Map<String, Long> commandCalls() {
      Map<String, Long> calls = new TreeMap<>();
      commandStats().forEach((name, callsAndMicros) -> calls.put(name, callsAndMicros[0]));
      return calls;
    }

    /** {@code INFO commandstats} as command name to {calls, microseconds spent in the server}. */
    Map<String, long[]> commandStats() {
      Map<String, long[]> stats = new TreeMap<>();
      Object info = call("INFO", "commandstats");
      for (String l : String.valueOf(info).split("\r\n")) {
        if (l.startsWith("cmdstat_")) {
          String name = l.substring("cmdstat_".length(), l.indexOf(':'));
          stats.put(name, new long[] {number(l, "calls="), number(l, "usec=")});
        }
      }
      return stats;
    }

    private static long number(String line, String key) {
      int at = line.indexOf(key) + key.length();
      int end = line.indexOf(',', at);
      return Long.parseLong(line.substring(at, end < 0 ? line.length() : end));
    }

    @Override
    public void close() {
      try {
        socket.close();
      } catch (IOException e) {
        // nothing to do
      }
    }
  }

  /** Sets the server's {@code appendfsync} ({@code always}, {@code everysec} or {@code no}). */
  static void appendfsync(int port, String mode) {
    try (Resp r = new Resp(port)) {
      r.call("CONFIG", "SET", "appendfsync", mode);
    }
  }
}
