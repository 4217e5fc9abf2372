package dev.kinference.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Where the bearer token comes from. A file is re-read at most every {@link #FILE_REFRESH} and whenever the API
 * server answered 401, because the kubelet rotates projected service-account tokens in place; an exec plugin is
 * re-run when its credential expires. Thread-safe.
 */
sealed interface TokenSource permits TokenSource.Fixed, TokenSource.FromFile, TokenSource.Exec {

  /** How often a token file is re-read (client-go re-reads every minute too). */
  Duration FILE_REFRESH = Duration.ofMinutes(1);

  /** The token to send, or null to send none. {@code stale} asks to reload (the last one was refused). */
  @Nullable String token(boolean stale);

  /** A token given in the configuration. */
  record Fixed(String value) implements TokenSource {
    @Override
    public String token(boolean stale) {
      return value;
    }

    @Override
    public String toString() {
      return "Fixed[<redacted>]";
    }
  }

  /** A token file, such as {@code /var/run/secrets/kubernetes.io/serviceaccount/token}. */
  final class FromFile implements TokenSource {
    private final Path file;
    private final LongSupplier nanoClock;
    private @Nullable String cached;
    private long readAtNanos;

    FromFile(Path file, LongSupplier nanoClock) {
      this.file = file;
      this.nanoClock = nanoClock;
    }

    Path file() {
      return file;
    }

    @Override
    public synchronized String token(boolean stale) {
      long now = nanoClock.getAsLong();
      if (cached == null || stale || now - readAtNanos >= FILE_REFRESH.toNanos()) {
        try {
          String read = Files.readString(file, StandardCharsets.UTF_8).strip();
          if (read.isEmpty() && cached == null) {
            throw new IllegalStateException("token file " + file + " is empty");
          }
          if (!read.isEmpty()) {
            cached = read;
          }
          readAtNanos = now;
        } catch (IOException e) {
          if (cached == null) {
            throw new UncheckedIOException("cannot read token file " + file, e);
          }
          // Keep the previous token: a rotation in progress may briefly hide the file.
        }
      }
      String token = cached;
      if (token == null) {
        throw new IllegalStateException("token file " + file + " is empty");
      }
      return token;
    }

    @Override
    public String toString() {
      return "FromFile[" + file + "]";
    }
  }

  /** A kubeconfig {@code exec} credential plugin (client.authentication.k8s.io ExecCredential). */
  final class Exec implements TokenSource {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIME_LIMIT = Duration.ofSeconds(60);
    private final List<String> command;
    private final Map<String, String> env;
    private final String apiVersion;
    private final @Nullable String installHint;
    private @Nullable String cached;
    private @Nullable Instant expiresAt;

    Exec(List<String> command, Map<String, String> env, String apiVersion, @Nullable String installHint) {
      this.command = List.copyOf(command);
      this.env = Map.copyOf(env);
      this.apiVersion = apiVersion;
      this.installHint = installHint;
    }

    @Override
    public synchronized String token(boolean stale) {
      Instant exp = expiresAt;
      String current = cached;
      if (current != null && !stale && (exp == null || Instant.now().isBefore(exp.minusSeconds(10)))) {
        return current;
      }
      String plugin = command.get(0);
      byte[] out;
      try {
        ProcessBuilder pb = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().putAll(env);
        pb.environment().put("KUBERNETES_EXEC_INFO",
            "{\"apiVersion\":\"" + apiVersion + "\",\"kind\":\"ExecCredential\",\"spec\":{\"interactive\":false}}");
        Process p;
        try {
          p = pb.start();
        } catch (IOException e) {
          throw new UncheckedIOException("cannot run credential plugin " + plugin + ": " + e.getMessage()
              + (installHint != null && !installHint.isBlank() ? "\n" + installHint.strip() : ""), e);
        }
        p.getOutputStream().close();
        out = p.getInputStream().readAllBytes();
        if (!p.waitFor(TIME_LIMIT.toSeconds(), TimeUnit.SECONDS)) {
          p.destroyForcibly();
          throw new IllegalStateException("credential plugin " + plugin + " did not finish within "
              + TIME_LIMIT.toSeconds() + " s");
        }
        if (p.exitValue() != 0) {
          throw new IllegalStateException("credential plugin " + plugin + " exited with status " + p.exitValue());
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read the output of credential plugin " + plugin, e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while running credential plugin " + plugin, e);
      }
      JsonNode status;
      try {
        status = JSON.readTree(out).path("status");
      } catch (IOException e) {
        String text = new String(out, StandardCharsets.UTF_8).strip();
        throw new IllegalStateException("credential plugin " + plugin + " printed no ExecCredential JSON: "
            + text.substring(0, Math.min(200, text.length())), e);
      }
      String token = status.path("token").asText("");
      if (token.isEmpty()) {
        throw new IllegalStateException("credential plugin " + plugin + " returned no status.token "
            + "(client certificates from plugins are not supported)");
      }
      String expiry = status.path("expirationTimestamp").asText("");
      try {
        expiresAt = expiry.isEmpty() ? null : Instant.parse(expiry);
      } catch (DateTimeParseException e) {
        expiresAt = null;
      }
      cached = token;
      return token;
    }

    @Override
    public String toString() {
      return "Exec[" + command.get(0) + "]";
    }
  }
}
