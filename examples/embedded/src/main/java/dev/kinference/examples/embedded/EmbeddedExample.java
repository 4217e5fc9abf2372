package dev.kinference.examples.embedded;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointMetrics;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.InvalidRequestException;
import dev.kinference.request.RequestParser;
import dev.kinference.routing.CandidateScore;
import dev.kinference.routing.Router;
import dev.kinference.routing.RoutingDecision;
import dev.kinference.routing.Usage;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/**
 * Builds a router over three endpoints and routes two multi-turn conversations that share a long system prompt,
 * printing each decision and why it was made. No server is contacted: routing is a library call, and this example
 * plays the part of the HTTP client, reporting each request's first token and completion.
 */
public final class EmbeddedExample {

  private static final String MODEL = "Qwen/Qwen3-8B";
  private static final String SYSTEM = "You are the support assistant of ACME Corp. Follow the policy below. "
      + "Refunds are possible within 30 days of purchase when the item is unused and in its original packaging. "
      .repeat(40);

  private EmbeddedExample() {}

  public static void main(String[] args) throws InvalidRequestException {
    run(System.out);
  }

  /** Runs the example, printing to {@code out}. */
  public static void run(PrintStream out) throws InvalidRequestException {
    Router router = Router.builder()
        .endpoints(List.of(
            Endpoint.of("vllm-0", "http://127.0.0.1:8000", MODEL),
            Endpoint.of("vllm-1", "http://127.0.0.1:8001", MODEL),
            Endpoint.of("vllm-2", "http://127.0.0.1:8002", MODEL)))
        .build();
    // A metrics scraper (kinference-vllm) would do this continuously; here every server reports an idle queue.
    for (EndpointState e : router.fleet().endpoints()) {
      e.updateMetrics(EndpointMetrics.of(0, 0, 0.05, System.nanoTime()));
    }
    out.println(router);
    String[] questions = {"Can I return opened headphones?", "What if they are defective?", "How long does it take?"};
    for (String customer : List.of("alice", "bob")) {
      StringBuilder history = new StringBuilder();
      for (String question : questions) {
        String body = "{\"model\":\"" + MODEL + "\",\"messages\":[{\"role\":\"system\",\"content\":"
            + quote(SYSTEM) + "}" + history + ",{\"role\":\"user\",\"content\":" + quote(question) + "}]}";
        InferenceRequest request = RequestParser.defaults().parse(ApiFormat.OPENAI_CHAT, body).toBuilder()
            .tenant("support").sessionId(customer).build();
        RoutingDecision decision = router.route(request);
        print(out, customer, question, decision);
        // ... send to decision.endpoint().uri() here; when the first token arrives and when the stream ends:
        decision.reportFirstToken();
        String answer = "Answer to: " + question;
        decision.reportFinished(new Usage(decision.promptTokens(), decision.cachedPrefixTokens(), 12));
        history.append(",{\"role\":\"user\",\"content\":").append(quote(question)).append("}")
            .append(",{\"role\":\"assistant\",\"content\":").append(quote(answer)).append("}");
      }
    }
  }

  private static void print(PrintStream out, String customer, String question, RoutingDecision d) {
    out.printf(Locale.ROOT, "%n%s: %s%n  -> %s  prompt=%d tokens, cached=%d, predicted TTFT=%d ms%n", customer,
        question, d.endpoint().id(), d.promptTokens(), d.cachedPrefixTokens(), d.predictedTtft().toMillis());
    for (CandidateScore c : d.breakdown()) {
      out.printf(Locale.ROOT, "     %-7s total=%.3f cached=%5d ttft=%.3fs %s%n", c.endpoint().id(), c.total(),
          c.cachedTokens(), c.predictedTtftSeconds(), c.scores());
    }
  }

  private static String quote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }
}
