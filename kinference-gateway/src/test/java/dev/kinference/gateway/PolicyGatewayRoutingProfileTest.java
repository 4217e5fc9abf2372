package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.HttpResponseFor;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.CandidateScore;
import dev.kinference.routing.RoutingDecision;
import dev.kinference.routing.RoutingProfile;
import dev.kinference.sim.server.SimulatedServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Issue 26: a pool's {@code spec.routing.profile} is the profile the gateway's router scores that pool's model with;
 * other models keep the default profile. The servers are simulated vLLM servers, the client the OpenAI SDK.
 */
class PolicyGatewayRoutingProfileTest {

  static final String TUNED_MODEL = "tuned/model";

  static String config(List<SimulatedServer> tuned, SimulatedServer plain, String profile) {
    return """
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePool
        metadata: {name: tuned}
        spec:
          model: %s
          endpoints: [{id: t0, url: "%s"}, {id: t1, url: "%s"}]
          routing:
            profile:
              scorers: %s
        ---
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePool
        metadata: {name: plain}
        spec:
          model: %s
          endpoints: [{id: p0, url: "%s"}]
        """.formatted(TUNED_MODEL, tuned.get(0).baseUri(), tuned.get(1).baseUri(), profile, Harness.MODEL,
        plain.baseUri());
  }

  static final String TUNED = "[{type: prefix-overlap, weight: 3}, "
      + "{type: kv-utilization, weight: 1.5, parameters: {knee: 0}}, {type: in-flight, weight: 0.25}]";

  static SimulatedServer sim(String model, String name) {
    return SimulatedServer.builder(model).name(name).defaultOutputTokens(4).timeScale(50).kvEvents(false).start();
  }

  @Test
  void aPoolsProfileScoresItsModelAndAChangeWaitsForARestart() throws Exception {
    AtomicReference<Consumer<PolicyConfig>> feed = new AtomicReference<>();
    try (SimulatedServer t0 = sim(TUNED_MODEL, "t0"); SimulatedServer t1 = sim(TUNED_MODEL, "t1");
        SimulatedServer p0 = sim(Harness.MODEL, "p0")) {
      PolicyConfig initial = PolicyLoader.load(config(List.of(t0, t1), p0, TUNED), "pools.yaml").orThrow();
      try (PolicyGateway pg = PolicyGateway.builder().config(initial).configFeed(deliver -> {
        feed.set(deliver);
        return () -> { };
      }).scrapeInterval(Duration.ofMillis(100)).gateway(g -> g.port(0).debugHeaders(true)).build().start()) {
        RoutingProfile expected = RoutingProfile.builder().scorer("prefix-overlap", 3)
            .scorer("kv-utilization", 1.5, Map.of("knee", 0.0)).scorer("in-flight", 0.25).build();
        assertThat(pg.router().profile(TUNED_MODEL)).isEqualTo(initial.routingProfiles().get(TUNED_MODEL))
            .isEqualTo(expected);
        assertThat(pg.router().profile(Harness.MODEL)).isEqualTo(pg.router().profile());
        assertThat(pg.router().profile().types()).containsExactlyElementsOf(RoutingProfile.defaults(false).types());

        // served through the gateway, by the OpenAI SDK
        OpenAIClient openai = OpenAIOkHttpClient.builder().baseUrl(pg.gateway().uri() + "/v1").apiKey("none")
            .maxRetries(0).timeout(Duration.ofSeconds(30)).build();
        String question = "Which scorer weighs most here? " + "context ".repeat(200);
        try (HttpResponseFor<ChatCompletion> raw = openai.chat().completions().withRawResponse().create(
            ChatCompletionCreateParams.builder().model(TUNED_MODEL).addUserMessage(question).build())) {
          assertThat(raw.statusCode()).isEqualTo(200);
          assertThat(raw.headers().values("x-kinference-endpoint")).singleElement().isIn("t0", "t1");
        }

        // the decision is the tuned weighted sum: the prompt's prefix now counts 3, KV headroom 1.5, load 0.25
        RoutingDecision d = pg.router().preview(InferenceRequest.builder(TUNED_MODEL).user(question).build());
        assertThat(d.breakdown()).hasSize(2);
        for (CandidateScore c : d.breakdown()) {
          assertThat(c.scores().keySet()).containsExactly("prefix-overlap", "kv-utilization", "in-flight");
          assertThat(c.total()).isCloseTo(3 * c.scores().get("prefix-overlap")
              + 1.5 * c.scores().get("kv-utilization") + 0.25 * c.scores().get("in-flight"), within(1e-9));
        }
        CandidateScore first = d.breakdown().get(0);
        assertThat(first.scores().get("prefix-overlap")).as("the server that answered holds the prompt")
            .isGreaterThan(0.5);
        assertThat(d.breakdown().get(1).scores().get("prefix-overlap")).isZero();
        RoutingDecision plain = pg.router().preview(InferenceRequest.builder(Harness.MODEL).user(question).build());
        assertThat(plain.breakdown().get(0).scores().keySet())
            .containsExactlyElementsOf(RoutingProfile.defaults(false).types());

        // a new profile is logged and kept for the next start: the scorers' state stays whole meanwhile
        feed.get().accept(PolicyLoader.load(config(List.of(t0, t1), p0, "[{type: in-flight, weight: 1}]"),
            "pools.yaml").orThrow());
        assertThat(pg.governance().config().routingProfiles().get(TUNED_MODEL).types()).containsExactly("in-flight");
        assertThat(pg.router().profile(TUNED_MODEL)).isEqualTo(expected);
      }
    }
  }
}
