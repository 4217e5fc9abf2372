package dev.kinference.cli;

import dev.kinference.sim.engine.ModelSpec;
import dev.kinference.sim.server.SimulatedServer;
import dev.kinference.sim.server.SimulatedServerBuilder;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kinference sim-servers}: simulated vLLM servers on loopback, for trying {@code kinference serve --config}
 * and for the proxy benchmark ({@code bench/proxy-bench.sh}).
 */
@Command(
    name = "sim-servers",
    mixinStandardHelpOptions = true,
    description = {
        "Starts simulated vLLM servers on 127.0.0.1 (OpenAI and Anthropic APIs, /metrics, /health, KV events over "
            + "ZMQ) and keeps them running until Ctrl-C. Prints one line per server: its id and base URL.",
        ""})
public final class SimServersCommand implements Callable<Integer> {

  @CommandLine.Spec
  @SuppressWarnings("NullAway.Init") // injected by picocli before call()
  CommandLine.Model.CommandSpec spec;

  @Option(names = "--count", defaultValue = "3", paramLabel = "N", description = "Servers (default: ${DEFAULT-VALUE}).")
  int count = 3;

  @Option(names = "--model", defaultValue = "Qwen/Qwen3-8B", paramLabel = "NAME",
      description = "Served model name (default: ${DEFAULT-VALUE}).")
  String model = "Qwen/Qwen3-8B";

  @Option(names = "--port", defaultValue = "0", paramLabel = "PORT",
      description = "HTTP port of the first server, the next ones on the following ports (default: free ports).")
  int port;

  @Option(names = "--instant", description = "Answer at once (no engine model): for measuring proxies.")
  boolean instant;

  @Option(names = "--time-scale", defaultValue = "1", paramLabel = "X",
      description = "Simulated seconds per wall-clock second; below 1 streams slowly (default: ${DEFAULT-VALUE}).")
  double timeScale = 1;

  @Option(names = "--output-tokens", defaultValue = "64", paramLabel = "N",
      description = "Output length when a request sets none (default: ${DEFAULT-VALUE}).")
  int outputTokens = 64;

  @Option(names = "--max-num-seqs", defaultValue = "0", paramLabel = "N",
      description = "vLLM's --max-num-seqs (default: the engine's).")
  int maxNumSeqs;

  @Option(names = "--gpu-blocks", defaultValue = "0", paramLabel = "N",
      description = "KV blocks per server (default: derived from the GPU's memory).")
  int gpuBlocks;

  @Option(names = "--cpu-offload-gib", defaultValue = "0", paramLabel = "GIB",
      description = "A KV offload tier of GIB GiB of host memory per server, as vLLM's offloading connector; its "
          + "blocks are published with medium CPU (default: none).")
  double cpuOffloadGib;

  @Option(names = "--engine-model", paramLabel = "NAME",
      description = "The model shape the engine simulates: Qwen3-8B, Qwen3-32B, Llama-3.1-8B, Llama-3.1-70B, "
          + "Qwen3.5-27B-FP8, Qwen3.5-27B-FP8-mamba-align (the same model as vLLM's Mamba KV-cache groups keep it: "
          + "784-token blocks, events of group_idx 0-3) or gpt-oss-20b, whose sliding-window KV-cache group "
          + "publishes events of group_idx 1 (default: the engine's).")
  @Nullable String engineModel;

  @Option(names = "--no-kv-events", description = "Do not publish KV events.")
  boolean noKvEvents;

  @Option(names = "--urls-file", paramLabel = "FILE", description = "Also write the lines to FILE once all started.")
  @Nullable Path urlsFile;

  @Option(names = "--pool-file", paramLabel = "FILE",
      description = "Also write, once all started, an InferencePool of these servers with their KV-event addresses "
          + "to FILE: 'kinference serve --config' on its directory routes over them with the precise index.")
  @Nullable Path poolFile;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    List<SimulatedServer> servers = new ArrayList<>();
    StringBuilder lines = new StringBuilder();
    if (port < 0 || (port > 0 && port + count - 1 > 65_535)) {
      spec.commandLine().getErr().println("kinference sim-servers: --port must leave room for " + count
          + " consecutive ports below 65536, got " + port);
      return 2;
    }
    if (!(cpuOffloadGib >= 0) || cpuOffloadGib > 1 << 20) {
      spec.commandLine().getErr().println("kinference sim-servers: --cpu-offload-gib must be in [0, 1048576], got "
          + cpuOffloadGib);
      return 2;
    }
    @Nullable ModelSpec engineSpec = null;
    if (engineModel != null) {
      try {
        engineSpec = ModelSpec.named(engineModel);
      } catch (IllegalArgumentException e) {
        spec.commandLine().getErr().println("kinference sim-servers: --engine-model: " + e.getMessage());
        return 2;
      }
    }
    @Nullable ModelSpec shape = engineSpec;
    for (int i = 0; i < count; i++) {
      SimulatedServerBuilder b = SimulatedServer.builder(model).name("sim-" + i).instantResponse(instant)
          .timeScale(timeScale).defaultOutputTokens(outputTokens).kvEvents(!noKvEvents)
          .port(port == 0 ? 0 : port + i);
      if (maxNumSeqs > 0 || gpuBlocks > 0 || cpuOffloadGib > 0 || shape != null) {
        b.engine(e -> {
          if (shape != null) {
            e.model(shape);
          }
          if (cpuOffloadGib > 0) {
            e.cpuOffloadBytes((long) (cpuOffloadGib * (1L << 30)));
          }
          if (maxNumSeqs > 0) {
            e.maxNumSeqs(maxNumSeqs);
          }
          if (gpuBlocks > 0) {
            e.numGpuBlocks(gpuBlocks);
          }
        });
      }
      SimulatedServer s;
      try {
        s = b.start();
      } catch (RuntimeException e) {
        spec.commandLine().getErr().println("kinference sim-servers: cannot start a server"
            + (port == 0 ? "" : " on 127.0.0.1:" + (port + i)) + ": " + e.getMessage()
            + (e.getCause() == null ? "" : " (" + e.getCause().getMessage() + ")"));
        servers.forEach(SimulatedServer::close);
        return 2;
      }
      servers.add(s);
      lines.append(s.name()).append(' ').append(s.baseUri()).append('\n');
    }
    out.print(lines);
    out.flush();
    try {
      if (poolFile != null) {
        writeCreatingDirectory(poolFile, ServeCommand.embeddedConfig(servers, model));
      }
      if (urlsFile != null) {
        Files.writeString(urlsFile, lines.toString(), StandardCharsets.UTF_8);
      }
    } catch (IOException e) {
      // servers nobody can find are of no use: stop them rather than run on with the file missing
      spec.commandLine().getErr().println("kinference sim-servers: cannot write " + e.getMessage() + " ("
          + e.getClass().getSimpleName() + "); the servers are stopped");
      servers.forEach(SimulatedServer::close);
      return 2;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      servers.forEach(SimulatedServer::close);
      stopped.countDown();
    }, "kinference-sim-servers-shutdown"));
    stopped.await();
    return 0;
  }

  /** The pool file is meant to be {@code serve --config DIR}, so its directory usually does not exist yet. */
  static void writeCreatingDirectory(Path file, String content) throws IOException {
    Path dir = file.toAbsolutePath().getParent();
    if (dir != null) {
      Files.createDirectories(dir);
    }
    Files.writeString(file, content, StandardCharsets.UTF_8);
  }
}
