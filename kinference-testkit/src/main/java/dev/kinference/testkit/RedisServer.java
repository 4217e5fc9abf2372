package dev.kinference.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real Redis server for tests: the Debian package's {@code redis-server} (or {@code valkey-server}), started on
 * a free 127.0.0.1 port with a temporary directory, append-only persistence fsynced on every write (so that a
 * server killed and started again keeps what it acknowledged), and stopped by {@link #close}. A machine without
 * the binary fails the test with a message saying how to install it; it never skips.
 *
 * <p>Not thread-safe: one test thread drives it.
 */
public final class RedisServer implements AutoCloseable {

  private final Path binary;
  private final Path dir;
  private final int port;
  private Process process;

  private RedisServer(Path binary, Path dir, int port) throws IOException {
    this.binary = binary;
    this.dir = dir;
    this.port = port;
    this.process = launch();
  }

  /** Starts a server; fails with installation advice when no Redis or Valkey binary is on this machine. */
  public static RedisServer start() {
    Path binary = find();
    try {
      Path dir = Files.createTempDirectory("kinference-redis-");
      int port;
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        port = s.getLocalPort();
      }
      return new RedisServer(binary, dir, port);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path find() {
    List<String> tried = new ArrayList<>();
    for (String name : List.of("redis-server", "valkey-server")) {
      for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(java.io.File.pathSeparator)) {
        Path p = Path.of(dir, name);
        if (Files.isExecutable(p)) {
          return p;
        }
      }
      tried.add(name);
      Path p = Path.of("/usr/bin", name);
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    throw new AssertionError("This test needs a Redis server binary and found none of " + tried + " on the PATH. "
        + "Install it: sudo apt-get install -y redis-server (Debian/Ubuntu; .ci/run does this itself).");
  }

  private Process launch() throws IOException {
    Process p = new ProcessBuilder(binary.toString(), "--port", Integer.toString(port), "--bind", "127.0.0.1",
        "--dir", dir.toString(), "--save", "", "--appendonly", "yes", "--appendfsync", "always",
        "--protected-mode", "yes", "--daemonize", "no", "--loglevel", "warning")
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve("redis.log").toFile())
        .start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        throw new IllegalStateException("redis-server exited: " + log());
      }
      if (answersPing()) {
        return p;
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    p.destroyForcibly();
    throw new IllegalStateException("redis-server did not answer on port " + port + " within 10 s: " + log());
  }

  private boolean answersPing() {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      s.setSoTimeout(1000);
      s.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      byte[] buf = new byte[7];
      int n = s.getInputStream().read(buf);
      return n > 0 && new String(buf, 0, n, StandardCharsets.US_ASCII).startsWith("+PONG");
    } catch (IOException e) {
      return false;
    }
  }

  private String log() {
    try {
      return Files.readString(dir.resolve("redis.log"));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  /** {@code redis://127.0.0.1:PORT}. */
  public String uri() {
    return "redis://127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  /** Whether the server process runs. */
  public boolean running() {
    return process.isAlive();
  }

  /** Kills the server at once (SIGKILL), as a crash would; its acknowledged writes are on disk. */
  public void kill() {
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Starts the server again on the same port and directory, after {@link #kill}. */
  public void restart() {
    if (process.isAlive()) {
      throw new IllegalStateException("still running");
    }
    try {
      process = launch();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** How long to allow for a server to come back, for tests' waits. */
  public static Duration startTimeout() {
    return Duration.ofSeconds(10);
  }

  @Override
  public void close() {
    kill();
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // a temporary directory left behind is harmless
    }
  }
}
