package dev.kinference.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckCommandTest {

  private static final Path EXAMPLES = Path.of("..", "examples", "policies");

  @Test
  void acceptsTheExampleConfiguration() {
    CliRun r = CliRun.of("check", EXAMPLES.toString());
    assertThat(r.status()).as(r.out() + r.err()).isZero();
    assertThat(r.out()).contains("0 errors, 0 warnings");
  }

  @Test
  void reportsEveryProblemAndExitsNonZero(@TempDir Path dir) throws Exception {
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, """
        apiVersion: kinference.dev/v1alpha1
        kind: ModelAlias
        metadata: {name: chat}
        spec:
          targets: [{pool: nowhere, weight: heavy}]
          extra: 1
        """);
    CliRun r = CliRun.of("check", bad.toString());
    assertThat(r.status()).isEqualTo(1);
    assertThat(r.out()).contains(bad + ":5:37: error: spec.targets[0].weight: expected an integer, got string "
        + "'heavy'", bad + ":6:3: error: spec.extra: unknown field", "2 errors");
  }

  /** Issue 26: a pool's routing profile is checked against each scorer's declaration and shown by --explain. */
  @Test
  void checksAPoolsRoutingProfileAndExplainShowsIt(@TempDir Path dir) throws Exception {
    String pool = """
        apiVersion: kinference.dev/v1alpha1
        kind: InferencePool
        metadata: {name: small}
        spec:
          model: qwen
          endpoints: [{url: "http://10.0.0.1:8000"}]
          routing:
            profile:
              scorers:
                - {type: prefix-overlap, weight: 3}
                - {type: kv-utilization, weight: 1, parameters: %s}
        """;
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, pool.formatted("{knee: 0.5, knees: 2}"));
    CliRun r = CliRun.of("check", bad.toString());
    assertThat(r.status()).isEqualTo(1);
    assertThat(r.out()).contains(bad + ":11:69: error: spec.routing.profile.scorers[1].parameters.knees: unknown "
        + "parameter 'knees' (did you mean 'knee'?); kv-utilization takes knee", "1 error,");
    Path good = dir.resolve("good.yaml");
    Files.writeString(good, pool.formatted("{knee: 0.7}"));
    Path request = dir.resolve("request.json");
    Files.writeString(request, "{\"model\": \"qwen\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}");
    CliRun explained = CliRun.of("check", good.toString(), "--explain", request.toString());
    assertThat(explained.status()).as(explained.out() + explained.err()).isZero();
    assertThat(explained.out()).contains(
        "profile: prefix-overlap 3, kv-utilization 1 {knee=0.7} (the pool's, for model qwen)");
  }

  @Test
  void explainsARequest() {
    CliRun r = CliRun.of("check", EXAMPLES.toString(), "--explain", EXAMPLES.resolve("request-pii.json").toString(),
        "--tenant", "support-bot", "--saturated", "large");
    assertThat(r.status()).as(r.out() + r.err()).isZero();
    assertThat(r.out()).contains("default/support-stays-on-premises: requireLocal; onSaturation reject",
        "verdict: reject 503", "never leaves local pools", "Retry-After 10 s");
    CliRun batch = CliRun.of("check", EXAMPLES.toString(), "--explain", EXAMPLES.resolve("request.json").toString(),
        "--tenant", "analytics", "--batch");
    assertThat(batch.out()).contains("default/batch-tier: admitBelow", "setPriority -10", "route: 10.0.0.1");
    CliRun byDefault = CliRun.of("check", EXAMPLES.toString(), "--explain",
        EXAMPLES.resolve("request.json").toString(), "--tenant", "analytics");
    assertThat(byDefault.out()).as("analytics is batch by its traffic.defaultClass")
        .contains("tenant analytics, batch, priority 0", "default/batch-tier: admitBelow");
    CliRun search = CliRun.of("check", EXAMPLES.toString(), "--explain", EXAMPLES.resolve("request.json").toString(),
        "--tenant", "search");
    assertThat(search.out()).contains("tenant search, interactive, priority 0").doesNotContain("batch-tier");
  }

  @Test
  void explainNamesTheDetectorAndWhereItFoundPersonalDataButNeverTheValue(@TempDir Path dir) throws Exception {
    Path request = dir.resolve("request.json");
    Files.writeString(request, """
        {"model": "chat", "metadata": {"customer": "jane.doe@example.com"},
         "messages": [{"role": "user", "content": [
           {"type": "text", "text": "Why was the refund declined?"},
           {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg"}}]}]}
        """);
    CliRun r = CliRun.of("check", EXAMPLES.toString(), "--explain", request.toString(), "--tenant", "support-bot");
    assertThat(r.status()).as(r.out() + r.err()).isZero();
    assertThat(r.out()).contains("personal data: email (email by builtin at metadata.customer+0)")
        .contains("found email (email by builtin at metadata.customer+0)")
        .doesNotContain("jane.doe@example.com").doesNotContain("jane.doe").doesNotContain("iVBORw0KGgo");

    Files.writeString(request, """
        {"model": "chat", "messages": [{"role": "user", "content": [
           {"type": "text", "text": "What is in this picture?"},
           {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg"}}]}]}
        """);
    CliRun image = CliRun.of("check", EXAMPLES.toString(), "--explain", request.toString(), "--tenant",
        "support-bot");
    assertThat(image.out()).contains("uninspectable image (image/png, base64) at "
        + "messages[0].content[1].image_url.url: treated as personal").doesNotContain("iVBORw0KGgo");
  }

  @Test
  void usageErrors() {
    assertThat(CliRun.of("check").status()).isEqualTo(2);
    CliRun r = CliRun.of("check", EXAMPLES.toString(), "--tenant", "x");
    assertThat(r.status()).isEqualTo(2);
    assertThat(r.err()).contains("only apply with --explain");
    CliRun badFormat = CliRun.of("check", EXAMPLES.toString(), "--explain", EXAMPLES.resolve("request.json").toString(),
        "--format", "xml");
    assertThat(badFormat.status()).isEqualTo(2);
  }

  /** Issue 21: the one-machine overlay of the example is as clean as the example; and explains the README's requests as the README says. */
  @Test
  void theLocalExampleIsCleanAndExplainsTheReadmesRequests() {
    Path local = Path.of("..", "examples", "policies-local");
    CliRun r = CliRun.of("check", local.toString());
    assertThat(r.status()).as(r.out() + r.err()).isZero();
    assertThat(r.out()).contains("checked 5 files: 2 pools, 2 aliases, 1 providers, 3 tenants, 1 policies (6 rules); "
        + "0 errors, 0 warnings");
    for (String[] args : List.of(
        new String[] {"route: 127.0.0.1:18101", "request.json", "--tenant", "search"},
        new String[] {"route: 127.0.0.1:18111", "request-pii.json", "--tenant", "search", "--saturated", "large"},
        new String[] {"verdict: reject 503", "request-pii.json", "--tenant", "support-bot", "--saturated", "large"},
        new String[] {"priority -10", "request.json", "--tenant", "analytics"})) {
      List<String> cmd = new java.util.ArrayList<>(List.of("check", local.toString(), "--explain",
          EXAMPLES.resolve(args[1]).toString()));
      cmd.addAll(List.of(args).subList(2, args.length));
      CliRun e = CliRun.of(cmd.toArray(String[]::new));
      assertThat(e.status()).as(e.err()).isZero();
      assertThat(e.out()).contains(args[0]);
    }
  }
}
