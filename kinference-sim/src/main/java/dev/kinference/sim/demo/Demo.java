package dev.kinference.sim.demo;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.routing.NoEndpointException;
import dev.kinference.routing.Router;
import dev.kinference.routing.RoutingDecision;
import dev.kinference.routing.Usage;
import dev.kinference.sim.bench.ConsoleProgress;
import dev.kinference.sim.bench.RunResult;
import dev.kinference.sim.bench.Slo;
import dev.kinference.sim.engine.EngineConfig;
import dev.kinference.sim.engine.FinishReason;
import dev.kinference.sim.engine.GpuSpec;
import dev.kinference.sim.engine.ModelSpec;
import dev.kinference.sim.engine.RequestOutcome;
import dev.kinference.sim.fleet.CompletedRequest;
import dev.kinference.sim.server.SimulatedFleet;
import dev.kinference.sim.server.SimulatedServer;
import dev.kinference.sim.workload.ClientRequest;
import dev.kinference.sim.workload.LoadPattern;
import dev.kinference.sim.workload.Session;
import dev.kinference.sim.workload.SharedPrefixWorkload;
import dev.kinference.sim.workload.Workload;
import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * The main job: starts real-time simulated vLLM servers on loopback, embeds the core {@link Router} as a library
 * user would (route in-process, send the request with {@code java.net.http}, report the first token and the end to
 * the {@link RoutingDecision}), drives a shared-prefix workload through it and then, on restarted servers, through
 * random routing (what a Kubernetes Service does), and compares the two.
 *
 * <p>Times are simulated seconds: the servers run {@link Options#timeScale()} times faster than a real GPU, and
 * every latency the clients measure is scaled back by the same factor.
 *
 * <p>Not thread-safe: one {@link #run} at a time per instance; {@link #run} itself uses virtual threads for the
 * clients.
 */
public final class Demo {

  /** The router every request of the baseline run goes to at random. */
  public static final String RANDOM = "random";

  private final Options options;

  private Demo(Options options) {
    this.options = options;
  }

  public static Demo of(Options options) {
    return new Demo(Objects.requireNonNull(options, "options"));
  }

  /**
   * What to run. Build with {@link #builder()}; every setter validates its argument.
   *
   * @param servers simulated servers
   * @param gpu each server's GPU
   * @param model the model
   * @param timeScale simulated seconds per wall-clock second
   * @param concurrency closed-loop clients
   * @param warmup simulated time before measuring (caches fill, queues settle)
   * @param measure simulated time measured
   * @param groups shared system prompts
   * @param usersPerGroup distinct questions per system prompt
   * @param systemPromptTokens tokens of each system prompt
   * @param questionTokens tokens of each question
   * @param outputTokens tokens of each answer
   * @param slo the latency objective goodput counts
   * @param seed the workload's and the random router's seed
   * @param reportDir where the report is written
   * @param view how the router sees the servers
   */
  public record Options(int servers, GpuSpec gpu, ModelSpec model, double timeScale, int concurrency,
      Duration warmup, Duration measure, int groups, int usersPerGroup, int systemPromptTokens, int questionTokens,
      int outputTokens, Slo slo, long seed, Path reportDir, RouterView view) {

    public Options {
      Objects.requireNonNull(gpu, "gpu");
      Objects.requireNonNull(model, "model");
      Objects.requireNonNull(warmup, "warmup");
      Objects.requireNonNull(measure, "measure");
      Objects.requireNonNull(slo, "slo");
      Objects.requireNonNull(reportDir, "reportDir");
      Objects.requireNonNull(view, "view");
    }

    public static Builder builder() {
      return new Builder();
    }

    /** Wall-clock seconds one router's run takes (warm-up plus measurement, before the drain). */
    public double wallSecondsPerRouter() {
      return (warmup.toNanos() + measure.toNanos()) / 1e9 / timeScale;
    }
  }

  /** Builds {@link Options}; defaults give the Kinference experiment's shape in about a minute. Not thread-safe. */
  public static final class Builder {
    private int servers = 3;
    private GpuSpec gpu = GpuSpec.L40S;
    private ModelSpec model = ModelSpec.QWEN3_5_27B_FP8;
    private double timeScale = 4;
    private int concurrency = 32;
    private Duration warmup = Duration.ofSeconds(30);
    private Duration measure = Duration.ofSeconds(90);
    private int groups = 32;
    private int usersPerGroup = 6;
    private int systemPromptTokens = 6000;
    private int questionTokens = 800;
    private int outputTokens = 100;
    private Slo slo = new Slo(Duration.ofSeconds(1), Duration.ZERO);
    private long seed = 20_250_611L;
    private Path reportDir = Path.of("kinference-report");
    private RouterView view = RouterView.ROUTER_ACCOUNTING;

    private Builder() {}

    public Builder servers(int n) {
      this.servers = positive(n, "servers");
      return this;
    }

    public Builder gpu(GpuSpec gpu) {
      this.gpu = Objects.requireNonNull(gpu, "gpu");
      return this;
    }

    public Builder model(ModelSpec model) {
      this.model = Objects.requireNonNull(model, "model");
      return this;
    }

    /** Simulated seconds per wall-clock second. Default 4. */
    public Builder timeScale(double scale) {
      if (!(scale > 0) || scale > 1000) {
        throw new IllegalArgumentException("timeScale must be in (0, 1000]: " + scale);
      }
      this.timeScale = scale;
      return this;
    }

    /** Closed-loop clients. Default 32. */
    public Builder concurrency(int clients) {
      this.concurrency = positive(clients, "concurrency");
      return this;
    }

    /** Simulated warm-up. Default 30 s. */
    public Builder warmup(Duration d) {
      if (d.isNegative()) {
        throw new IllegalArgumentException("warmup must not be negative: " + d);
      }
      this.warmup = d;
      return this;
    }

    /** Simulated measurement. Default 90 s. */
    public Builder measure(Duration d) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException("measure must be positive: " + d);
      }
      this.measure = d;
      return this;
    }

    /** The shared-prefix workload: inference-perf's shape. Default 32 groups x 6 users, 6,000 + 800 in, 100 out. */
    public Builder workload(int groups, int usersPerGroup, int systemPromptTokens, int questionTokens,
        int outputTokens) {
      this.groups = positive(groups, "groups");
      this.usersPerGroup = positive(usersPerGroup, "usersPerGroup");
      if (systemPromptTokens < 0) {
        throw new IllegalArgumentException("systemPromptTokens must not be negative: " + systemPromptTokens);
      }
      this.systemPromptTokens = systemPromptTokens;
      this.questionTokens = positive(questionTokens, "questionTokens");
      this.outputTokens = positive(outputTokens, "outputTokens");
      return this;
    }

    /** The latency objective of goodput. Default: first token within 1 s. */
    public Builder slo(Slo slo) {
      this.slo = Objects.requireNonNull(slo, "slo");
      return this;
    }

    public Builder seed(long seed) {
      this.seed = seed;
      return this;
    }

    /** Where the report goes. Default {@code kinference-report}. */
    public Builder reportDir(Path dir) {
      this.reportDir = Objects.requireNonNull(dir, "dir");
      return this;
    }

    /** How the router sees the servers. Default {@link RouterView#ROUTER_ACCOUNTING}. */
    public Builder view(RouterView view) {
      this.view = Objects.requireNonNull(view, "view");
      return this;
    }

    public Options build() {
      return new Options(servers, gpu, model, timeScale, concurrency, warmup, measure, groups, usersPerGroup,
          systemPromptTokens, questionTokens, outputTokens, slo, seed, reportDir, view);
    }

    private static int positive(int n, String what) {
      if (n < 1) {
        throw new IllegalArgumentException(what + " must be positive: " + n);
      }
      return n;
    }
  }

  /**
   * What the demo measured.
   *
   * @param engine each server's resolved configuration
   * @param runs the router's run, then random routing's
   * @param report the HTML report
   * @param wallSeconds how long the demo took
   */
  public record Result(EngineConfig engine, List<RunResult> runs, Path report, double wallSeconds) {
    public Result {
      runs = List.copyOf(runs);
    }

    public RunResult ours() {
      return runs.get(0);
    }

    public RunResult random() {
      return runs.get(1);
    }
  }

  /** Runs the demo, printing progress and the comparison to {@code out}. */
  public Result run(PrintStream out) {
    long started = System.nanoTime();
    Options o = options;
    SimulatedFleet fleet = SimulatedFleet.builder(o.model().name()).servers(o.servers())
        .eachServer(b -> b.timeScale(o.timeScale()).defaultOutputTokens(o.outputTokens())
            .engine(e -> e.gpu(o.gpu()).model(o.model())))
        .build();
    try {
      EngineConfig engine = Objects.requireNonNull(fleet.server(0).engineConfig());
      out.printf(Locale.ROOT, "Started %d simulated vLLM servers (%s, %s; %,d KV blocks of %d tokens each) on %s%n",
          o.servers(), o.gpu().name(), o.model().name(), engine.numGpuBlocks(), engine.blockSize(),
          fleet.servers().stream().map(s -> s.baseUri().getAuthority()).toList());
      out.printf(Locale.ROOT, "Workload: shared prefix, %d groups x %d users, %,d-token system prompt + %,d-token "
              + "question, %d tokens out; %d clients; %.0f s warm-up + %.0f s measured (simulated, time x%s)%n",
          o.groups(), o.usersPerGroup(), o.systemPromptTokens(), o.questionTokens(), o.outputTokens(),
          o.concurrency(), o.warmup().toNanos() / 1e9, o.measure().toNanos() / 1e9, trim(o.timeScale()));
      List<RunResult> runs = new ArrayList<>();
      try (Router router = o.view().configure(Router.builder().endpoints(fleet.endpoints())).build()) {
        Closeable view = o.view().connect(router, fleet);
        try {
          runs.add(runPhase(1, o.view().routerName(), new RouterDispatcher(router, fleet), out));
        } finally {
          view.close();
        }
      }
      fleet.servers().forEach(SimulatedServer::restart);
      runs.add(runPhase(2, RANDOM, new RandomDispatcher(fleet, o.seed()), out));
      double wall = (System.nanoTime() - started) / 1e9;
      Path report = DemoReport.write(o, engine, runs, wall);
      out.println();
      out.print(DemoReport.sideBySide(runs, o.slo()));
      out.println();
      out.println("Report: " + report.toAbsolutePath());
      return new Result(engine, runs, report, wall);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      fleet.close();
    }
  }

  static String trim(double d) {
    return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
  }

  // ---- dispatching ----

  /** Where a request goes, and how its progress is reported back. */
  interface Dispatcher {
    Dispatch dispatch(ClientRequest request);
  }

  /** One dispatched request. */
  interface Dispatch {
    int server();

    URI uri();

    default void firstToken() {}

    default void finished(int promptTokens, int cachedTokens, int completionTokens) {}

    default void failed() {}
  }

  /** The core router, embedded: route in-process, report the first token and the end to the decision. */
  static final class RouterDispatcher implements Dispatcher {
    private final Router router;
    private final List<String> ids;

    RouterDispatcher(Router router, SimulatedFleet fleet) {
      this.router = router;
      this.ids = fleet.servers().stream().map(SimulatedServer::name).toList();
    }

    @Override
    public Dispatch dispatch(ClientRequest request) {
      RoutingDecision decision = router.route(request.request());
      Endpoint chosen = decision.endpoint();
      int index = ids.indexOf(chosen.id());
      return new Dispatch() {
        @Override
        public int server() {
          return index;
        }

        @Override
        public URI uri() {
          return chosen.uri();
        }

        @Override
        public void firstToken() {
          decision.reportFirstToken();
        }

        @Override
        public void finished(int promptTokens, int cachedTokens, int completionTokens) {
          decision.reportFinished(new Usage(promptTokens, cachedTokens, completionTokens));
        }

        @Override
        public void failed() {
          decision.reportFailed();
        }
      };
    }
  }

  /** A Kubernetes Service: any server, uniformly at random. */
  static final class RandomDispatcher implements Dispatcher {
    private final List<URI> uris;
    private final SplittableRandom random;

    RandomDispatcher(SimulatedFleet fleet, long seed) {
      this.uris = fleet.baseUris();
      this.random = new SplittableRandom(seed ^ 0x5DEECE66DL);
    }

    @Override
    public synchronized Dispatch dispatch(ClientRequest request) {
      int index = random.nextInt(uris.size());
      URI uri = uris.get(index);
      return new Dispatch() {
        @Override
        public int server() {
          return index;
        }

        @Override
        public URI uri() {
          return uri;
        }
      };
    }
  }

  // ---- one run ----

  private RunResult runPhase(int number, String routerName, Dispatcher dispatcher, PrintStream out) {
    Options o = options;
    double scale = o.timeScale();
    long warmupWall = (long) (o.warmup().toNanos() / scale);
    long measureWall = (long) (o.measure().toNanos() / scale);
    Workload workload = new SharedPrefixWorkload(o.model().name(), o.groups(), o.usersPerGroup(),
        o.systemPromptTokens(), o.questionTokens(), o.outputTokens(), null, o.seed());
    RandomGenerator sessions = new SplittableRandom(o.seed());
    AtomicLong sessionNumbers = new AtomicLong();
    RunResult result = new RunResult(routerName, workload.name(), new LoadPattern.ClosedLoop(o.concurrency()),
        o.slo(), o.measure().toNanos() / 1e9);
    StreamingChatClient client = new StreamingChatClient();
    long start = System.nanoTime();
    long measureFrom = start + warmupWall;
    long end = measureFrom + measureWall;
    AtomicLong measured = new AtomicLong();
    AtomicLong failures = new AtomicLong();
    ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor();
    for (int c = 0; c < o.concurrency(); c++) {
      clients.execute(() -> {
        while (System.nanoTime() < end) {
          Session session;
          synchronized (workload) {
            session = workload.newSession(sessions, sessionNumbers.getAndIncrement());
          }
          ClientRequest request;
          while ((request = nextRequest(workload, session)) != null && System.nanoTime() < end) {
            CompletedRequest done = exchange(client, dispatcher, request, start, scale, result, measureFrom);
            if (done == null) {
              failures.incrementAndGet();
              break;
            }
            if (done.sentNanos() >= (measureFrom - start) * scale) {
              synchronized (result) {
                result.onRequest(done);
              }
              measured.incrementAndGet();
            }
          }
        }
      });
    }
    clients.shutdown();
    String label = String.format(Locale.ROOT, "[%d/2] %-18s", number, routerName);
    boolean redraw = ConsoleProgress.standardOutputIsTerminal();
    try {
      while (!clients.awaitTermination(500, TimeUnit.MILLISECONDS)) {
        long now = System.nanoTime();
        if (now > end + measureWall / 2 + TimeUnit.SECONDS.toNanos(5)) {
          client.cancelAll(); // the stragglers count as unfinished
        }
        if (!redraw) {
          continue;
        }
        double done = Math.min(1, (now - start) / (double) (end - start));
        int filled = (int) (done * 30);
        out.printf(Locale.ROOT, "\r%s [%s%s] %3.0f%%  %d measured requests", label, "#".repeat(filled),
            ".".repeat(30 - filled), done * 100, measured.get());
        out.flush();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      clients.shutdownNow();
    }
    out.printf(Locale.ROOT, "%s%s [%s] done: %d measured requests in %.0f s%s%n", redraw ? "\r" : "", label,
        "#".repeat(30),
        measured.get(), (System.nanoTime() - start) / 1e9,
        failures.get() == 0 ? "" : ", " + failures.get() + " failed");
    return result;
  }

  private static @Nullable ClientRequest nextRequest(Workload workload, Session session) {
    synchronized (workload) {
      return session.nextRequest();
    }
  }

  /**
   * Sends one request and returns what its client saw, in simulated nanoseconds since the run's start; null if it
   * could not be sent at all.
   */
  private static @Nullable CompletedRequest exchange(StreamingChatClient client, Dispatcher dispatcher,
      ClientRequest request, long start, double scale, RunResult result, long measureFrom) {
    long sent = System.nanoTime();
    Dispatch d;
    try {
      d = dispatcher.dispatch(request);
    } catch (NoEndpointException e) {
      return null;
    }
    boolean measuredRequest = sent >= measureFrom;
    StreamingChatClient.Exchange x = client.send(d.uri(), StreamingChatClient.body(request),
        new StreamingChatClient.Watcher() {
          @Override
          public void onFirstToken() {
            d.firstToken();
          }

          @Override
          public void onGap(long nanos) {
            if (measuredRequest) {
              synchronized (result) {
                result.onTokenGap(request, (long) (nanos * scale));
              }
            }
          }
        });
    if (x.finished()) {
      d.finished(x.promptTokens(), x.cachedTokens(), x.completionTokens());
    } else {
      d.failed();
    }
    long sentSim = sim(sent, start, scale);
    long firstSim = x.firstTokenNanos() < 0 ? -1 : sim(x.firstTokenNanos(), start, scale);
    long finishSim = x.finished() ? sim(x.finishNanos(), start, scale) : -1;
    RequestOutcome outcome = x.finished()
        ? new RequestOutcome(request.id(), x.finishReason().equals("stop") ? FinishReason.STOP : FinishReason.LENGTH,
            x.promptTokens(), x.completionTokens(), x.cachedTokens(), sentSim, firstSim, finishSim, 0)
        : null;
    return new CompletedRequest(request, d.server(), sentSim, firstSim, finishSim, outcome,
        (long) (x.maxGapNanos() * scale), Math.max(sentSim, sim(System.nanoTime(), start, scale)));
  }

  private static long sim(long wallNanos, long start, double scale) {
    return (long) ((wallNanos - start) * scale);
  }
}
