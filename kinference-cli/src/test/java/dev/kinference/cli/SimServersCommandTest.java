package dev.kinference.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SimServersCommandTest {

  @Test
  void aPoolFileThatCannotBeWrittenIsOneLineAndStopsTheServers(@TempDir Path dir) throws Exception {
    Path notADirectory = Files.writeString(dir.resolve("a-file"), "x");
    Path unwritable = notADirectory.resolve("pool.yaml");

    CliRun r = CliRun.of("sim-servers", "--count", "1", "--port", "0", "--instant", "--pool-file", unwritable.toString());

    assertThat(r.status()).isEqualTo(2);
    assertThat(r.err().strip()).hasLineCount(1)
        .startsWith("kinference sim-servers: cannot write ")
        .contains(notADirectory.toString())
        .endsWith("the servers are stopped");
    assertThat(r.out()).startsWith("sim-0 http://127.0.0.1:");
    assertThat(unwritable).doesNotExist();
  }

  @Test
  void aPoolFileInADirectoryNotYetMadeIsWrittenThere(@TempDir Path dir) throws Exception {
    Path config = dir.resolve("cfg").resolve("pool.yaml");

    SimServersCommand.writeCreatingDirectory(config, "kind: InferencePool\n");

    assertThat(config).hasContent("kind: InferencePool");
  }
}
