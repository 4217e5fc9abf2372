package dev.kinference.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SimServersCommandTest {

  @Test
  void aPoolFileThatCannotBeWrittenIsOneLineAndStopsTheServers(@TempDir Path dir) {
    Path missing = dir.resolve("no-such-dir").resolve("pool.yaml");

    CliRun r = CliRun.of("sim-servers", "--count", "1", "--port", "0", "--instant", "--pool-file", missing.toString());

    assertThat(r.status()).isEqualTo(2);
    assertThat(r.err().strip()).hasLineCount(1)
        .startsWith("kinference sim-servers: cannot write " + missing)
        .endsWith("the servers are stopped");
    assertThat(r.out()).startsWith("sim-0 http://127.0.0.1:");
    assertThat(missing).doesNotExist();
  }
}
