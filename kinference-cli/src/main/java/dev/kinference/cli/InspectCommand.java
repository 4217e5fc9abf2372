package dev.kinference.cli;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import dev.kinference.cache.KvEvent;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.vllm.VllmLabels;
import dev.kinference.vllm.kvevents.KvEventBatch;
import dev.kinference.vllm.kvevents.KvEventSubscriber;
import dev.kinference.vllm.kvevents.KvEventSubscriptions;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kinference inspect}: look at what live vLLM servers publish. */
@Command(
    name = "inspect",
    mixinStandardHelpOptions = true,
    description = "Look at what live vLLM servers publish.",
    subcommands = {InspectCommand.KvEvents.class})
public final class InspectCommand implements Runnable {

  @CommandLine.Spec
  @SuppressWarnings("NullAway.Init") // injected by picocli before run()
  CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** {@code kinference inspect kv-events}. */
  @Command(
      name = "kv-events",
      mixinStandardHelpOptions = true,
      description = {
          "Subscribes to vLLM KV-cache event publishers, prints each decoded event as one JSON line, and at the end",
          "the index size per endpoint and the gaps seen. Block hashes are printed as unsigned 64-bit numbers."})
  static final class KvEvents implements Callable<Integer> {

    @CommandLine.Spec
    @SuppressWarnings("NullAway.Init") // injected by picocli before call()
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--connect", required = true, paramLabel = "tcp://HOST:PORT",
        description = "A publisher address (vLLM's kv-events endpoint); repeat for several servers.")
    List<String> connect = new ArrayList<>();

    @Option(names = "--replay", paramLabel = "tcp://HOST:PORT",
        description = "The replay socket of the (first) publisher; gaps are repaired through it.")
    @Nullable String replay;

    @Option(names = "--topic", defaultValue = "", description = "Topic prefix to subscribe to (default: all).")
    String topic = "";

    @Option(names = "--duration", defaultValue = "10s", paramLabel = "DURATION",
        description = "How long to listen: 10s, 500ms, 2m, or ISO-8601 (default: ${DEFAULT-VALUE}).")
    String duration = "10s";

    @Option(names = "--model", defaultValue = "inspect",
        description = "Model name seeding the router's block keys (default: ${DEFAULT-VALUE}).")
    String model = "inspect";

    @Option(names = "--data-parallel-rank", paramLabel = "RANK",
        description = "Subscribe to this data-parallel rank (port + RANK).")
    @Nullable Integer rank;

    @Option(names = "--quiet", description = "Print only the summary, not every event.")
    boolean quiet;

    @Override
    public Integer call() throws InterruptedException {
      PrintWriter out = spec.commandLine().getOut();
      Duration listen;
      try {
        listen = parseDuration(duration);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
      }
      List<Endpoint> endpoints = new ArrayList<>();
      for (int i = 0; i < connect.size(); i++) {
        Endpoint e = Endpoint.of(connect.size() == 1 ? "kv-events" : "kv-events-" + i, "http://127.0.0.1", model)
            .withLabel(VllmLabels.KV_EVENTS, connect.get(i))
            .withLabel(VllmLabels.KV_EVENTS_TOPIC, topic);
        if (i == 0 && replay != null) {
          e = e.withLabel(VllmLabels.KV_EVENTS_REPLAY, replay);
        }
        if (rank != null) {
          e = e.withLabel(VllmLabels.DATA_PARALLEL_RANK, Integer.toString(rank));
        }
        endpoints.add(e);
      }
      Fleet fleet = Fleet.create();
      PreciseCacheIndex index = new PreciseCacheIndex();
      fleet.addListener(index);
      JsonLines lines = new JsonLines(out, quiet);
      try (KvEventSubscriptions subscriptions = KvEventSubscriptions.create(index, 0, b -> b.listener(lines))) {
        try {
          fleet.setEndpoints(endpoints);
          subscriptions.attach(fleet);
        } catch (IllegalArgumentException e) {
          throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        Thread.sleep(listen.toMillis());
        java.util.Map<String, KvEventSubscriber.Stats> stats = new java.util.HashMap<>();
        for (EndpointState s : fleet.endpoints()) {
          KvEventSubscriber sub = subscriptions.subscriber(s.id());
          if (sub != null) {
            sub.close();
            stats.put(s.id(), sub.stats());
          }
        }
        synchronized (lines) {
          for (EndpointState s : fleet.endpoints()) {
            out.println(summary(s, index, stats.get(s.id()), lines));
          }
          out.flush();
        }
      }
      return 0;
    }

    private static String summary(EndpointState s, PreciseCacheIndex index, KvEventSubscriber.@Nullable Stats st,
        JsonLines lines) {
      StringBuilder sb = new StringBuilder("{\"summary\":{\"endpoint\":");
      JsonLines.string(sb, s.endpoint().label(VllmLabels.KV_EVENTS));
      sb.append(",\"index_blocks\":").append(index.blockCount(s));
      if (st != null) {
        sb.append(",\"batches\":").append(st.batches())
            .append(",\"events\":").append(st.events())
            .append(",\"blocks\":").append(st.blocks())
            .append(",\"last_seq\":").append(st.lastSequence())
            .append(",\"gaps\":").append(st.gaps())
            .append(",\"repaired_gaps\":").append(st.repairedGaps())
            .append(",\"replayed_batches\":").append(st.replayedBatches())
            .append(",\"restarts\":").append(st.restarts())
            .append(",\"rejected_frames\":").append(st.rejectedFrames())
            .append(",\"resyncs\":").append(st.resyncs());
      }
      sb.append(",\"gap_ranges\":[");
      List<String> gaps = lines.gapsOf(s);
      sb.append(String.join(",", gaps)).append("]}}");
      return sb.toString();
    }

    static Duration parseDuration(String text) {
      Duration d = dev.kinference.policy.config.Durations.parse(text);
      if (d == null) {
        throw new IllegalArgumentException("invalid --duration '" + text + "' (use "
            + dev.kinference.policy.config.Durations.EXAMPLES + ")");
      }
      return positive(d, text);
    }

    private static Duration positive(Duration d, String text) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException("--duration must be positive: " + text);
      }
      return d;
    }
  }

  /** Prints the subscriber's doings as JSON lines; called from the subscriber threads. */
  static final class JsonLines implements KvEventSubscriber.Listener {
    private final PrintWriter out;
    private final boolean quiet;
    private final java.util.IdentityHashMap<EndpointState, List<String>> gaps = new java.util.IdentityHashMap<>();

    JsonLines(PrintWriter out, boolean quiet) {
      this.out = out;
      this.quiet = quiet;
    }

    synchronized List<String> gapsOf(EndpointState s) {
      return gaps.getOrDefault(s, List.of());
    }

    @Override
    public synchronized void onBatch(EndpointState endpoint, long seq, KvEventBatch batch, boolean replayed) {
      if (quiet) {
        return;
      }
      for (KvEvent e : batch.events()) {
        StringBuilder sb = new StringBuilder(256);
        sb.append("{\"endpoint\":");
        string(sb, endpoint.endpoint().label(VllmLabels.KV_EVENTS));
        sb.append(",\"seq\":").append(Long.toUnsignedString(seq));
        sb.append(",\"replayed\":").append(replayed);
        sb.append(",\"ts\":").append(Double.isFinite(batch.timestamp()) ? Double.toString(batch.timestamp()) : "null");
        sb.append(",\"data_parallel_rank\":").append(batch.dataParallelRank() < 0 ? "null"
            : Integer.toString(batch.dataParallelRank()));
        switch (e) {
          case KvEvent.BlockStored s -> {
            sb.append(",\"type\":\"BlockStored\",\"block_hashes\":");
            hashes(sb, s.blockHashes());
            sb.append(",\"parent_block_hash\":").append(s.parentBlockHash() == null ? "null"
                : Long.toUnsignedString(s.parentBlockHash()));
            sb.append(",\"token_ids\":[");
            int[] t = s.tokenIds();
            for (int i = 0; i < t.length; i++) {
              if (i > 0) {
                sb.append(',');
              }
              sb.append(t[i]);
            }
            sb.append("],\"block_size\":").append(s.blockSize());
            sb.append(",\"medium\":\"").append(s.medium()).append('"');
            sb.append(",\"lora_name\":");
            string(sb, s.loraName());
            sb.append(",\"cache_salt\":");
            string(sb, s.cacheSalt());
          }
          case KvEvent.BlockRemoved r -> {
            sb.append(",\"type\":\"BlockRemoved\",\"block_hashes\":");
            hashes(sb, r.blockHashes());
            sb.append(",\"medium\":\"").append(r.medium()).append('"');
          }
          case KvEvent.AllBlocksCleared c -> sb.append(",\"type\":\"AllBlocksCleared\"");
        }
        out.println(sb.append('}'));
      }
      out.flush();
    }

    @Override
    public synchronized void onGap(EndpointState endpoint, long expected, long received, boolean repaired) {
      String gap = "{\"from\":" + Long.toUnsignedString(expected) + ",\"to\":" + Long.toUnsignedString(received - 1)
          + ",\"repaired\":" + repaired + "}";
      gaps.computeIfAbsent(endpoint, k -> new ArrayList<>()).add(gap);
      out.println("{\"gap\":" + gap + "}");
      out.flush();
    }

    @Override
    public synchronized void onRestart(EndpointState endpoint, long last, long received) {
      out.println("{\"restart\":{\"last_seq\":" + Long.toUnsignedString(last) + ",\"seq\":"
          + Long.toUnsignedString(received) + "}}");
      out.flush();
    }

    @Override
    public synchronized void onRejected(EndpointState endpoint, String reason) {
      StringBuilder sb = new StringBuilder("{\"rejected\":");
      string(sb, reason);
      out.println(sb.append('}'));
      out.flush();
    }

    private static void hashes(StringBuilder sb, long[] hashes) {
      sb.append('[');
      for (int i = 0; i < hashes.length; i++) {
        if (i > 0) {
          sb.append(',');
        }
        sb.append(Long.toUnsignedString(hashes[i]));
      }
      sb.append(']');
    }

    static void string(StringBuilder sb, @Nullable String s) {
      if (s == null) {
        sb.append("null");
        return;
      }
      sb.append('"');
      JsonStringEncoder.getInstance().quoteAsString(s, sb);
      sb.append('"');
    }
  }
}
