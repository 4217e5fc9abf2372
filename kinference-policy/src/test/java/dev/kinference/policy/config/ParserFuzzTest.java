package dev.kinference.policy.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.StringLength;
import org.snakeyaml.engine.v2.api.Dump;
import org.snakeyaml.engine.v2.api.DumpSettings;

/**
 * The YAML parser and the validation fuzzed: whatever the input, loading returns normally with a configuration or
 * with errors that say where and what, never an exception.
 */
class ParserFuzzTest {

  private static final List<String> FIELDS = List.of("apiVersion", "kind", "metadata", "name", "spec", "model",
      "endpoints", "url", "id", "labels", "selector", "matchLabels", "blockSize", "capacity", "targets", "pool",
      "provider", "alias", "weight", "fallback", "api", "baseUrl", "apiKey", "env", "file", "models", "price",
      "input", "output", "timeouts", "apiKeys", "sha256", "header", "value", "limits", "tokensPerMinute",
      "requestsPerMinute", "concurrentRequests", "modelLimits", "budget", "period", "limit", "prices", "rules",
      "match", "action", "tenants", "promptTokens", "min", "max", "trafficClass", "personalData", "complexity",
      "route", "reject", "status", "message", "requireLocal", "onSaturation", "admitBelow", "queueDepth",
      "kvUtilization", "setPriority", "retryAfter", "stop", "order", "saturated");
  private static final List<String> VALUES = List.of("kinference.dev/v1alpha1", "InferencePool", "ModelAlias",
      "ExternalProvider", "Tenant", "InferencePolicy", "small", "chat", "http://10.0.0.1:8000", "openai", "batch",
      "simple", "true", "false", "0", "-1", "1.5", "1e400", ".nan", "~", "null", "30s", "queue", "reject", "*",
      "'quoted'", "\"dq\"", "[]", "{}", "[a, b]", "{a: 1}", "&x 1", "*x", "!!str 5", "!custom x", "<<", "|",
      ">-", "sk-proj-EXAMPLE000000000000000000000FAKE", "\u00e9t\u00e9", "\t", "#", "---", "...", "%YAML 1.2");

  private static void loadsWithoutThrowing(String text) {
    LoadResult r = PolicyLoader.load(text, "fuzz.yaml");
    assertThat(r.config() == null).isEqualTo(r.hasErrors());
    for (Problem p : r.problems()) {
      assertThat(p.message()).isNotBlank();
      assertThat(p.line()).isNotNegative();
      assertThat(p.column()).isNotNegative();
      assertThat(p.toString()).startsWith("fuzz.yaml");
    }
  }

  @Property(tries = 300)
  void anyStringLoadsOrReportsProblems(@ForAll @StringLength(max = 400) String text) {
    loadsWithoutThrowing(text);
  }

  @Provide
  Arbitrary<String> yamlish() {
    Arbitrary<String> token = Arbitraries.oneOf(Arbitraries.of(FIELDS).map(f -> f + ":"), Arbitraries.of(VALUES),
        Arbitraries.of("\n", "\n  ", "\n    ", "\n- ", "\n  - ", " ", ": ", ", ", "[", "]", "{", "}", "- ", "---\n"));
    return token.list().ofMaxSize(80).map(l -> String.join("", l));
  }

  @Property(tries = 500)
  void yamlLikeTokenSoupLoadsOrReportsProblems(@ForAll("yamlish") String text) {
    loadsWithoutThrowing(text);
  }

  @Provide
  Arbitrary<Object> trees() {
    Arbitrary<Object> scalar = Arbitraries.oneOf(Arbitraries.of(VALUES).map(v -> (Object) v),
        Arbitraries.integers().map(i -> (Object) i), Arbitraries.doubles().map(d -> (Object) d),
        Arbitraries.of(true, false).map(b -> (Object) b), Arbitraries.just(null));
    return Arbitraries.recursive(() -> scalar, this::container, 1, 5);
  }

  private Arbitrary<Object> container(Arbitrary<Object> inner) {
    Arbitrary<Object> map = Arbitraries.maps(Arbitraries.oneOf(Arbitraries.of(FIELDS), Arbitraries.strings()
        .ofMaxLength(8)), inner).ofMaxSize(6).map(m -> (Object) m);
    Arbitrary<Object> list = inner.list().ofMaxSize(4).map(l -> (Object) l);
    return Arbitraries.oneOf(map, list);
  }

  @Provide
  Arbitrary<Map<String, Object>> resources() {
    return Arbitraries.of("InferencePool", "ModelAlias", "ExternalProvider", "Tenant", "InferencePolicy", "Nope")
        .flatMap(kind -> trees().map(spec -> {
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("apiVersion", "kinference.dev/v1alpha1");
          m.put("kind", kind);
          m.put("metadata", Map.of("name", "r"));
          m.put("spec", spec);
          return m;
        }));
  }

  @Property(tries = 200)
  void arbitraryResourceTreesAreValidatedNotThrown(@ForAll("resources") Map<String, Object> resource) {
    Parsed p = PolicyLoader.parse(resource, "k8s");
    assertThat(p.ok()).isEqualTo(p.problems().stream().noneMatch(Problem::isError));
    String yaml = new Dump(DumpSettings.builder().build()).dumpToString(resource);
    loadsWithoutThrowing(yaml);
    LoadResult all = PolicyLoader.build(List.of(p, p));
    assertThat(all.hasErrors()).as("the same resource twice is a duplicate").isTrue();
  }

  @Provide
  Arbitrary<String> mutatedExamples() throws IOException {
    List<String> lines = new ArrayList<>();
    try (var files = Files.list(PolicyLoaderTest.EXAMPLES)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
        lines.addAll(Files.readAllLines(f));
        lines.add("---");
      }
    }
    Arbitrary<Tuple.Tuple3<Integer, Integer, String>> edit = Arbitraries.integers().between(0, lines.size() - 1)
        .flatMap(i -> Arbitraries.integers().between(0, 5).flatMap(op -> Arbitraries.oneOf(Arbitraries.of(VALUES),
            Arbitraries.of(FIELDS)).map(v -> Tuple.of(i, op, v))));
    return edit.list().ofMinSize(1).ofMaxSize(6).map(edits -> {
      List<String> copy = new ArrayList<>(lines);
      for (var e : edits) {
        int i = Math.min(e.get1(), copy.size() - 1);
        String line = copy.get(i);
        switch (e.get2()) {
          case 0 -> copy.remove(i);
          case 1 -> copy.add(i, line);
          case 2 -> copy.set(i, line.replaceFirst(":\\s.*$", ": " + e.get3()));
          case 3 -> copy.set(i, "  " + line);
          case 4 -> copy.set(i, line.stripLeading());
          default -> copy.set(i, line.replaceFirst("^(\\s*)([A-Za-z]+)", "$1" + e.get3()));
        }
        if (copy.isEmpty()) {
          copy.add("");
        }
      }
      return String.join("\n", copy);
    });
  }

  @Property(tries = 200)
  void editsOfTheExampleLoadOrReportProblems(@ForAll("mutatedExamples") String text) {
    loadsWithoutThrowing(text);
  }
}
