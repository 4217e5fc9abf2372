package dev.kinference.epp;

import com.google.protobuf.ByteString;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.routing.Router;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The picker's round trip as Envoy sees it (run by {@code bench/epp-bench.sh}; not a test): one ext_proc stream per
 * request over gRPC on a loopback port, 64 endpoints with fresh metrics, the default profile and approximate index.
 * Timed: from sending the request headers to receiving the destination and the body given back (streamed mode); the
 * response phase then ends each decision, untimed. Two workloads of {@code TOKENS} prompt tokens each (default 1024,
 * 64 shared system prompts, so prefixes repeat): {@code pretokenized}, {@code /v1/completions} with the prompt as
 * token ids (tokenization excluded), and {@code chat}, {@code /v1/chat/completions} with text the router tokenizes
 * (the default approximate tokenizer; tokenization included). System properties: {@code endpoints}, {@code
 * requests}, {@code warmup}, {@code tokens}, {@code direct} (true), {@code transports} ({@code
 * in-process,loopback}), {@code workloads} ({@code pretokenized,chat}).
 */
public final class EppBench {

  static final String MODEL = "Qwen/Qwen3-8B";

  private EppBench() {}

  public static void main(String[] args) throws Exception {
    System.out.println("EppBench");
    int endpoints = Integer.getInteger("endpoints", 64);
    int requests = Integer.getInteger("requests", 20_000);
    int warmup = Integer.getInteger("warmup", 10_000);
    int tokens = Integer.getInteger("tokens", 1024);
    List<Endpoint> eps = new ArrayList<>();
    for (int i = 0; i < endpoints; i++) {
      eps.add(Endpoint.of("ep-" + i, "http://10.0." + (i / 250) + "." + (i % 250 + 1) + ":8000", MODEL));
    }
    Fleet fleet = Fleet.of(eps);
    long fresh = System.nanoTime() + TimeUnit.HOURS.toNanos(1); // no scraper: metrics stamped an hour ahead
    for (EndpointState s : fleet.endpoints()) {
      s.updateMetrics(EndpointMetrics.of(0, 2, 0.3, fresh).withCacheConfig(16, 100_000));
    }
    boolean direct = Boolean.parseBoolean(System.getProperty("direct", "true"));
    try (Router router = Router.builder().fleet(fleet).build();
        EppServer server = EppServer.start(EndpointPicker.builder().router(router).build(), "127.0.0.1", 0, direct)) {
      EndpointPicker picker = EndpointPicker.builder().router(router).build();
      io.grpc.Server inProcess = InProcessServerBuilder.forName("epp-bench").directExecutor().addService(picker)
          .build().start();
      NettyChannelBuilder loopback = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext();
      if (direct) {
        loopback.directExecutor();
      }
      for (String transport : System.getProperty("transports", "in-process,loopback").split(",")) {
        ManagedChannel channel = transport.equals("loopback") ? loopback.build()
            : InProcessChannelBuilder.forName("epp-bench").directExecutor().build();
        run(channel, transport + (direct && transport.equals("loopback") ? " (direct executor)" : ""), endpoints,
            requests, warmup, tokens);
      }
      inProcess.shutdownNow();
    }
  }

  static void run(ManagedChannel channel, String transport, int endpoints, int requests, int warmup, int tokens)
      throws InterruptedException {
    {
      System.out.println(transport + ":");
      try {
        for (String workload : System.getProperty("workloads", "pretokenized,chat").split(",")) {
          SplittableRandom random = new SplittableRandom(42);
          for (int i = 0; i < warmup; i++) {
            roundTrip(channel, workload, tokens, random);
          }
          long[] nanos = new long[requests];
          for (int i = 0; i < requests; i++) {
            nanos[i] = roundTrip(channel, workload, tokens, random);
          }
          Arrays.sort(nanos);
          System.out.printf(Locale.ROOT, "%-13s endpoints=%d tokens=%d requests=%d p50=%.1f us p90=%.1f us "
                  + "p99=%.1f us p99.9=%.1f us max=%.1f us%n", workload, endpoints, tokens, requests,
              at(nanos, 0.50), at(nanos, 0.90), at(nanos, 0.99), at(nanos, 0.999), nanos[nanos.length - 1] / 1e3);
        }
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }

  static double at(long[] sorted, double q) {
    return sorted[Math.min(sorted.length - 1, (int) (q * sorted.length))] / 1e3;
  }

  static String body(String workload, int tokens, SplittableRandom random) {
    int system = random.nextInt(64);
    StringBuilder b = new StringBuilder(tokens * 8);
    if (workload.equals("pretokenized")) {
      b.append("{\"model\":\"").append(MODEL).append("\",\"max_tokens\":16,\"prompt\":[");
      for (int i = 0; i < tokens; i++) {
        // the first half shared by the requests of one system prompt, the rest each request's own
        int id = i < tokens / 2 ? (system * 7919 + i * 31) % 151_000 : random.nextInt(151_000);
        b.append(i == 0 ? "" : ",").append(id);
      }
      return b.append("]}").toString();
    }
    b.append("{\"model\":\"").append(MODEL).append("\",\"max_tokens\":16,\"messages\":[{\"role\":\"system\","
        + "\"content\":\"");
    for (int i = 0; i < tokens / 2; i++) {
      b.append("w").append((system * 7919 + i * 31) % 5000).append(' ');
    }
    b.append("\"},{\"role\":\"user\",\"content\":\"");
    for (int i = 0; i < tokens / 2; i++) {
      b.append("u").append(random.nextInt(5000)).append(' ');
    }
    return b.append("\"}]}").toString();
  }

  static long roundTrip(ManagedChannel channel, String workload, int tokens, SplittableRandom random)
      throws InterruptedException {
    String path = workload.equals("pretokenized") ? "/v1/completions" : "/v1/chat/completions";
    ByteString body = ByteString.copyFromUtf8(body(workload, tokens, random));
    LinkedBlockingQueue<ProcessingResponse> responses = new LinkedBlockingQueue<>();
    CountDownLatch done = new CountDownLatch(1);
    long start = System.nanoTime();
    StreamObserver<ProcessingRequest> call = ExternalProcessorGrpc.newStub(channel).process(
        new StreamObserver<>() {
          @Override
          public void onNext(ProcessingResponse value) {
            responses.add(value);
          }

          @Override
          public void onError(Throwable t) {
            done.countDown();
          }

          @Override
          public void onCompleted() {
            done.countDown();
          }
        });
    call.onNext(ProcessingRequest.newBuilder().setRequestHeaders(HttpHeaders.newBuilder().setHeaders(
        HeaderMap.newBuilder()
            .addHeaders(HeaderValue.newBuilder().setKey(":method").setRawValue(ByteString.copyFromUtf8("POST")))
            .addHeaders(HeaderValue.newBuilder().setKey(":path").setRawValue(ByteString.copyFromUtf8(path))))).build());
    call.onNext(ProcessingRequest.newBuilder().setRequestBody(HttpBody.newBuilder().setBody(body).setEndOfStream(true))
        .build());
    ProcessingResponse first = responses.poll(10, TimeUnit.SECONDS);
    if (first == null || first.hasImmediateResponse()) {
      throw new IllegalStateException("no destination: " + first);
    }
    responses.poll(10, TimeUnit.SECONDS);
    long elapsed = System.nanoTime() - start;
    call.onNext(ProcessingRequest.newBuilder().setResponseHeaders(HttpHeaders.newBuilder().setHeaders(
        HeaderMap.newBuilder().addHeaders(HeaderValue.newBuilder().setKey(":status")
            .setRawValue(ByteString.copyFromUtf8("200"))))).build());
    call.onNext(ProcessingRequest.newBuilder().setResponseBody(HttpBody.newBuilder().setBody(ByteString.copyFromUtf8(
        "{\"usage\":{\"prompt_tokens\":" + tokens + ",\"completion_tokens\":16}}")).setEndOfStream(true)).build());
    responses.poll(10, TimeUnit.SECONDS);
    responses.poll(10, TimeUnit.SECONDS);
    call.onCompleted();
    done.await(10, TimeUnit.SECONDS);
    return elapsed;
  }
}
