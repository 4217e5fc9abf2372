package dev.kinference.policy.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PolicyWatcherTest {

  private static String pool(String name, String model) {
    return """
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePool
        metadata: {name: %s}
        spec: {model: %s, endpoints: [{url: "http://%s.example:8000"}]}
        """.formatted(name, model, name);
  }

  @Test
  void aFailedReloadKeepsTheLastGoodConfigurationAndSaysWhy(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("pools.yaml");
    Files.writeString(file, pool("p", "model-1"));
    try (PolicyWatcher w = PolicyWatcher.start(List.of(dir), Duration.ZERO, Duration.ofHours(1))) {
      List<PolicyWatcher.Reload> seen = new CopyOnWriteArrayList<>();
      w.onReload(seen::add);
      PolicyConfig first = w.get();
      assertThat(first.pool("p").spec().model()).isEqualTo("model-1");

      write(file, pool("p", "model-1, blockSize: many"));
      PolicyWatcher.Reload failed = w.reloadNow();
      assertThat(failed.applied()).isFalse();
      // the watcher's own thread may reload the same good file meanwhile: compare content, not identity
      assertThat(w.get().pool("p").spec().model()).isEqualTo("model-1");
      assertThat(w.get().pool("p").spec().blockSize()).isEqualTo(16);
      // the watcher's own thread may have reloaded the same broken file meanwhile
      assertThat(w.lastFailure()).isNotNull();
      assertThat(w.lastFailure().applied()).isFalse();
      assertThat(failed.result().report())
          .contains("pools.yaml:4:35: error: spec.blockSize: expected an integer, got string 'many'");

      write(file, pool("p", "model-2"));
      PolicyWatcher.Reload ok = w.reloadNow();
      assertThat(ok.applied()).isTrue();
      assertThat(w.get().pool("p").spec().model()).isEqualTo("model-2");
      assertThat(w.lastFailure()).isNull();
      assertThat(seen).containsSubsequence(failed, ok);
    }
  }

  @Test
  void changesOnDiskAreNoticed(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("pools.yaml");
    Files.writeString(file, pool("p", "model-1"));
    try (PolicyWatcher w = PolicyWatcher.start(List.of(dir), Duration.ofMillis(20), Duration.ofMillis(200))) {
      Files.writeString(dir.resolve("more.yaml"), pool("q", "model-9"));
      awaitTrue(() -> w.get().pool("q") != null);
      Files.writeString(dir.resolve("broken.yaml"), "kind: [");
      awaitTrue(() -> w.lastFailure() != null);
      assertThat(w.get().pool("q")).as("the last good configuration stays").isNotNull();
      Files.delete(dir.resolve("broken.yaml"));
      awaitTrue(() -> w.lastFailure() == null);
    }
  }

  @Test
  void anInvalidInitialConfigurationCannotStart(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("x.yaml"), "kind: Nope\n");
    assertThatThrownBy(() -> PolicyWatcher.start(List.of(dir))).isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("unknown kind 'Nope'");
  }

  /** Writes atomically, so that the watcher's own thread never reads a half-written file. */
  private static void write(Path file, String text) throws java.io.IOException {
    Path tmp = Files.createTempFile(file.getParent(), ".tmp", ".part");
    Files.writeString(tmp, text);
    Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
  }

  private static void awaitTrue(java.util.function.BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("condition within 30 s").isLessThan(deadline);
      Thread.sleep(20);
    }
  }
}
