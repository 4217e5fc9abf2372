package dev.kinference.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.policy.classify.Complexity;
import dev.kinference.policy.classify.PersonalDataKind;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.policy.config.Problem;
import dev.kinference.policy.model.ExternalProvider;
import dev.kinference.policy.model.InferencePolicy;
import dev.kinference.policy.model.Tenant;
import dev.kinference.request.TrafficClass;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * Keeps {@code deploy/crds} in step with the Java model of {@code kinference-policy}, in both directions: every
 * field of every example policy is declared by its CRD's schema (else the API server would drop it), and every
 * field a schema declares is one the Java binder knows (else it would be reported as unknown). Enumerations
 * match the Java enums; the Helm chart ships the same CRDs.
 */
class KubernetesCrdsTest {

  static final Path CRDS = Path.of("..", "deploy", "crds");

  static Map<String, JsonNode> crdsByKind() throws IOException {
    Map<String, JsonNode> out = new TreeMap<>();
    try (Stream<Path> files = Files.list(CRDS)) {
      for (Path f : files.sorted().toList()) {
        JsonNode crd = PolicyResourceSourceTest.yaml(Files.readString(f));
        out.put(crd.path("spec").path("names").path("kind").asText(), crd);
      }
    }
    return out;
  }

  static JsonNode schema(JsonNode crd) {
    return crd.path("spec").path("versions").get(0).path("schema").path("openAPIV3Schema");
  }

  @Test
  void oneCrdPerWatchedKindWithTheWatchedGroupVersionAndPlural() throws IOException {
    Map<String, JsonNode> crds = crdsByKind();
    assertThat(crds.keySet()).containsExactlyInAnyOrderElementsOf(PolicyResourceSource.KINDS.keySet());
    for (Map.Entry<String, JsonNode> e : crds.entrySet()) {
      JsonNode spec = e.getValue().path("spec");
      assertThat(spec.path("group").asText()).isEqualTo("kinference.dev");
      assertThat(spec.path("scope").asText()).isEqualTo("Namespaced");
      assertThat(spec.path("names").path("plural").asText()).isEqualTo(PolicyResourceSource.KINDS.get(e.getKey()));
      assertThat(e.getValue().path("metadata").path("name").asText())
          .isEqualTo(PolicyResourceSource.KINDS.get(e.getKey()) + ".kinference.dev");
      JsonNode version = spec.path("versions").get(0);
      assertThat(version.path("name").asText()).isEqualTo("v1alpha1");
      assertThat(version.path("served").asBoolean()).isTrue();
      assertThat(version.path("storage").asBoolean()).isTrue();
    }
  }

  @Test
  void everyVersionHasTheStatusSubresourceTypedColumnsAndUnambiguousNames() throws IOException {
    List<String> shortNames = new ArrayList<>();
    for (Map.Entry<String, JsonNode> e : crdsByKind().entrySet()) {
      JsonNode spec = e.getValue().path("spec");
      // kubectl get kinference lists all five; our InferencePool is told apart from the Gateway API Inference
      // Extension's (inferencepools.inference.networking.k8s.io) by a short name of its own.
      assertThat(strings(spec.at("/names/categories"))).as(e.getKey()).containsExactly("kinference");
      List<String> shorts = strings(spec.at("/names/shortNames"));
      assertThat(shorts).as(e.getKey()).hasSize(1).allMatch(s -> s.startsWith("k"));
      shortNames.addAll(shorts);
      for (JsonNode version : spec.path("versions")) {
        assertThat(version.at("/subresources/status").isObject()).as("%s: status subresource", e.getKey()).isTrue();
        assertThat(version.at("/schema/openAPIV3Schema/properties/status").isObject()).isTrue();
        for (JsonNode column : version.path("additionalPrinterColumns")) {
          JsonNode field = schemaAt(version.at("/schema/openAPIV3Schema"), column.path("jsonPath").asText());
          String type = column.path("type").asText();
          switch (field.path("type").asText()) {
            case "integer" -> assertThat(type).as("%s column %s", e.getKey(), column).isEqualTo("integer");
            case "number" -> assertThat(type).as("%s column %s", e.getKey(), column).isEqualTo("number");
            case "array" -> assertThat(type.equals("string") && column.path("description").asText().contains("[*]"))
                .as("%s column %s: an array prints as a string, the reason said", e.getKey(), column).isTrue();
            default -> assertThat(type).as("%s column %s", e.getKey(), column).isIn("string", "date");
          }
        }
      }
    }
    assertThat(shortNames).containsExactlyInAnyOrder("kpool", "kalias", "kprovider", "ktenant", "kpolicy");
    assertThat(crdsByKind().get("InferencePolicy").at("/spec/versions/0/additionalPrinterColumns/0/type").asText())
        .isEqualTo("integer");
  }

  /** The schema of the field a simple JSONPath such as {@code .spec.order} names. */
  private static JsonNode schemaAt(JsonNode schema, String jsonPath) {
    JsonNode cur = schema;
    for (String key : jsonPath.substring(1).split("\\.")) {
      cur = key.equals("metadata") ? JsonNodeFactory.instance.objectNode().put("type", "object")
          : cur.path("properties").path(key);
    }
    if (jsonPath.equals(".metadata.creationTimestamp")) {
      return JsonNodeFactory.instance.objectNode().put("type", "string");
    }
    assertThat(cur.isMissingNode()).as("column path %s is declared", jsonPath).isFalse();
    return cur;
  }

  /**
   * The CEL rules ({@code x-kubernetes-validations}) refuse, when an object is applied, what {@code Binder} would
   * report as invalid (and ignore). No API server runs here, so this checks that each rule is where it belongs and
   * says what the Java check says; {@link #celRulesStayWithinTheApiServersCostBudget} keeps them cheap.
   */
  @Test
  void celRulesMirrorWhatTheGatewayEnforces() throws IOException {
    Map<String, JsonNode> crds = crdsByKind();
    assertRule(crds, "ModelAlias", "/properties/spec/properties/targets/items",
        "(has(self.pool) ? 1 : 0) + (has(self.provider) ? 1 : 0) + (has(self.alias) ? 1 : 0) == 1",
        "exactly one of pool, provider or alias");
    assertRule(crds, "ModelAlias", "/properties/spec/properties/targets/items", "!has(self.provider) || has(self.model)",
        "needs model");
    assertRule(crds, "ModelAlias", "/properties/spec/properties/targets",
        "self.exists(t, !has(t.weight) || t.weight > 0)", "every target has weight 0");
    assertRule(crds, "ModelAlias", "/properties/spec/properties/fallback/items",
        "has(self.alias) ? !has(self.provider) && !has(self.model) : has(self.provider) && has(self.model)",
        "either {provider, model} or {alias}");
    assertRule(crds, "InferencePool", "/properties/spec", "!(has(self.endpoints) && has(self.selector))",
        "not both");
    assertRule(crds, "InferencePool", "/properties/spec/properties/selector",
        "has(self.matchLabels) && size(self.matchLabels) > 0", "at least one label");
    assertRule(crds, "ExternalProvider", "/properties/spec/properties/apiKey", "has(self.env) != has(self.file)",
        "not both");
    assertRule(crds, "Tenant", "/properties/spec/properties/traffic",
        "!has(self.maxPriority) || self.maxPriority >= (has(self.priority) ? self.priority : 0)",
        "maxPriority must be at least priority");
    assertRule(crds, "Tenant", "/properties/spec/properties/limits",
        "self.tokensPerMinute > (has(self.defaultMaxTokens) ? self.defaultMaxTokens : "
            + dev.kinference.policy.model.Tenant.DEFAULT_MAX_TOKENS + ")", "defaultMaxTokens");
    assertRule(crds, "Tenant", "/properties/spec/properties/budget/properties/limit", "self > 0.0",
        "a budget of 0");
    String rule = "/properties/spec/properties/rules/items/properties";
    assertRule(crds, "InferencePolicy", rule + "/action/properties/route", "has(self.alias) != has(self.pool)",
        "exactly one of alias or pool");
    assertRule(crds, "InferencePolicy", rule + "/action", "!has(self.reject) || !(has(self.route)",
        "reject stands alone");
    assertRule(crds, "InferencePolicy", rule + "/match/properties/promptTokens",
        "!has(self.min) || !has(self.max) || self.min <= self.max", "min is above max");
    // Weights, limits and thresholds the Java binder refuses at 0 or below.
    assertThat(schema(crds.get("ModelAlias")).at("/properties/spec/properties/targets/items/properties/weight/minimum")
        .asInt()).isZero();
    JsonNode limits = schema(crds.get("Tenant")).at("/properties/spec/properties/limits/properties");
    for (String k : List.of("requestsPerMinute", "tokensPerMinute", "concurrentRequests")) {
      assertThat(limits.at("/" + k + "/minimum").asInt()).as(k).isEqualTo(1);
    }
    assertThat(strings(schema(crds.get("Tenant")).at("/properties/spec/properties/budget/required")))
        .containsExactly("period", "limit");
    // References to other resources are their metadata.name: DNS-1123 subdomains, as Binder checks names.
    List<String> references = List.of(
        "ModelAlias:/properties/spec/properties/targets/items/properties/pool",
        "ModelAlias:/properties/spec/properties/targets/items/properties/provider",
        "ModelAlias:/properties/spec/properties/targets/items/properties/alias",
        "ModelAlias:/properties/spec/properties/fallback/items/properties/provider",
        "ModelAlias:/properties/spec/properties/fallback/items/properties/alias",
        "InferencePolicy:" + rule + "/action/properties/route/properties/alias",
        "InferencePolicy:" + rule + "/action/properties/route/properties/pool",
        "InferencePolicy:" + rule + "/action/properties/fallback/items/properties/provider",
        "InferencePolicy:" + rule + "/action/properties/fallback/items/properties/alias",
        "InferencePolicy:" + rule + "/match/properties/pool/properties/name");
    for (String r : references) {
      String[] kindAndPath = r.split(":", 2);
      JsonNode field = schema(crds.get(kindAndPath[0])).at(kindAndPath[1]);
      assertThat(field.path("maxLength").asInt()).as(r).isEqualTo(253);
      java.util.regex.Pattern dns = java.util.regex.Pattern.compile(field.path("pattern").asText());
      assertThat(dns.matcher("qwen3-8b").matches()).as(r).isTrue();
      assertThat(dns.matcher("openai.eu").matches()).as(r).isTrue();
      for (String bad : List.of("", "Qwen3", "-pool", "pool-", "a_b", "a..b", "a b")) {
        assertThat(dns.matcher(bad).matches()).as("%s refuses '%s'", r, bad).isFalse();
      }
    }
  }

  private static void assertRule(Map<String, JsonNode> crds, String kind, String at, String rule, String message) {
    List<String> rules = new ArrayList<>();
    JsonNode found = null;
    for (JsonNode v : schema(crds.get(kind)).at(at).path("x-kubernetes-validations")) {
      rules.add(v.path("rule").asText());
      if (v.path("rule").asText().contains(rule)) {
        found = v;
      }
    }
    assertThat(found).as("%s %s: a rule with %s in %s", kind, at, rule, rules).isNotNull();
    assertThat(java.util.Objects.requireNonNull(found).path("message").asText()).contains(message);
  }

  /**
   * The API server refuses a CRD whose rules' estimated cost is too high, and estimates an unbounded list as
   * millions of items: every list a rule iterates, or that holds objects with rules, is bounded, as is every map of
   * objects with rules.
   */
  @Test
  void celRulesStayWithinTheApiServersCostBudget() throws IOException {
    for (Map.Entry<String, JsonNode> e : crdsByKind().entrySet()) {
      List<String> unbounded = new ArrayList<>();
      bounded(schema(e.getValue()), "", unbounded);
      assertThat(unbounded).as("%s: collections above CEL rules without maxItems/maxProperties", e.getKey())
          .isEmpty();
    }
  }

  /** Whether {@code schema} or anything under it has CEL rules; collections above them must be bounded. */
  private static boolean bounded(JsonNode schema, String path, List<String> unbounded) {
    boolean rules = schema.has("x-kubernetes-validations");
    for (Map.Entry<String, JsonNode> p : schema.path("properties").properties()) {
      rules |= bounded(p.getValue(), path + "." + p.getKey(), unbounded);
    }
    if (schema.has("items") && bounded(schema.path("items"), path + "[]", unbounded)) {
      rules = true;
      if (!schema.has("maxItems")) {
        unbounded.add(path);
      }
    }
    if (schema.path("additionalProperties").isObject()
        && bounded(schema.path("additionalProperties"), path + ".*", unbounded)) {
      rules = true;
      if (!schema.has("maxProperties")) {
        unbounded.add(path);
      }
    }
    if (schema.path("x-kubernetes-validations").toString().contains("self.exists(")
        && !schema.has("maxItems")) {
      unbounded.add(path);
    }
    return rules;
  }

  private static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(v -> out.add(v.asText()));
    return out;
  }

  @Test
  void enumerationsAreTheJavaEnumsYamlNames() throws IOException {
    Map<String, JsonNode> crds = crdsByKind();
    JsonNode provider = schema(crds.get("ExternalProvider")).at("/properties/spec/properties");
    assertThat(enumOf(provider.at("/api"))).containsExactlyElementsOf(
        Arrays.stream(ExternalProvider.Api.values()).map(ExternalProvider.Api::yamlName).toList());
    JsonNode tenant = schema(crds.get("Tenant")).at("/properties/spec/properties");
    assertThat(enumOf(tenant.at("/budget/properties/period"))).containsExactlyElementsOf(
        Arrays.stream(dev.kinference.policy.limits.CalendarPeriod.values()).map(dev.kinference.policy.limits.CalendarPeriod::yamlName).toList());
    JsonNode rule = schema(crds.get("InferencePolicy")).at("/properties/spec/properties/rules/items/properties");
    assertThat(enumOf(rule.at("/action/properties/onSaturation"))).containsExactlyElementsOf(
        Arrays.stream(InferencePolicy.OnSaturation.values()).map(InferencePolicy.OnSaturation::yamlName).toList());
    assertThat(enumOf(rule.at("/match/properties/trafficClass"))).containsExactlyElementsOf(
        Arrays.stream(TrafficClass.values()).map(c -> c.name().toLowerCase(Locale.ROOT)).toList());
    assertThat(enumOf(rule.at("/match/properties/personalDataKinds/items"))).containsExactlyElementsOf(
        Arrays.stream(PersonalDataKind.values()).map(PersonalDataKind::yamlName).toList());
    assertThat(enumOf(rule.at("/match/properties/complexity/items"))).containsExactlyElementsOf(
        Arrays.stream(Complexity.values()).map(Complexity::yamlName).toList());
  }

  private static List<String> enumOf(JsonNode schema) {
    List<String> out = new ArrayList<>();
    schema.path("enum").forEach(v -> out.add(v.asText()));
    assertThat(out).as("enum of %s", schema).isNotEmpty();
    return out;
  }

  @Test
  void everyExamplePolicyIsValidAndFitsItsCrdSchema() throws IOException {
    Map<String, JsonNode> crds = crdsByKind();
    List<Path> files = new ArrayList<>();
    try (Stream<Path> s = Files.list(Path.of("..", "examples", "policies"))) {
      s.filter(p -> p.toString().endsWith(".yaml")).sorted().forEach(files::add);
    }
    Path deployed = Path.of("..", "deploy", "examples", "policies.yaml");
    assertThat(PolicyLoader.load(files).errors()).as("examples/policies is valid").isEmpty();
    assertThat(PolicyLoader.load(deployed).errors()).as("%s is valid", deployed).isEmpty();
    files.add(deployed);
    int documents = 0;
    for (Path f : files) {
      String text = Files.readString(f);
      for (Object doc : new Load(LoadSettings.builder().build()).loadAllFromString(text)) {
        if (doc == null) {
          continue;
        }
        JsonNode node = EndpointMapper.JSON.valueToTree(doc);
        String kind = node.path("kind").asText();
        assertThat(crds).as("a CRD for %s", kind).containsKey(kind);
        List<String> problems = new ArrayList<>();
        conforms(schema(crds.get(kind)).at("/properties/spec"), node.path("spec"), kind + ".spec", problems);
        assertThat(problems).as("%s %s against its CRD", f, node.path("metadata").path("name")).isEmpty();
        documents++;
      }
    }
    assertThat(documents).isGreaterThanOrEqualTo(PolicyResourceSource.KINDS.size());
  }

  @Test
  void everyFieldAnCrdDeclaresIsKnownToTheJavaBinder() throws IOException {
    for (Map.Entry<String, JsonNode> e : crdsByKind().entrySet()) {
      ObjectNode doc = JsonNodeFactory.instance.objectNode();
      doc.put("apiVersion", "kinference.dev/v1alpha1");
      doc.put("kind", e.getKey());
      doc.putObject("metadata").put("name", "every-field");
      doc.set("spec", sample(schema(e.getValue()).at("/properties/spec")));
      @SuppressWarnings("unchecked")
      Map<String, Object> map = EndpointMapper.JSON.convertValue(doc, Map.class);
      List<Problem> unknown = PolicyLoader.validate(map, e.getKey()).stream()
          .filter(p -> p.message().startsWith("unknown field")).toList();
      assertThat(unknown).as("fields of the %s CRD the Java model does not know", e.getKey()).isEmpty();
    }
  }

  @Test
  void theHelmChartShipsTheSameCrds() throws IOException {
    try (Stream<Path> files = Files.list(CRDS)) {
      for (Path f : files.toList()) {
        Path copy = Path.of("..", "deploy", "helm", "kinference", "crds").resolve(f.getFileName());
        assertThat(copy).as("chart copy of %s", f.getFileName()).exists();
        assertThat(Files.readString(copy)).isEqualTo(Files.readString(f));
      }
    }
  }

  /** A value with every property the schema declares, of the declared type. */
  static JsonNode sample(JsonNode schema) {
    JsonNodeFactory f = JsonNodeFactory.instance;
    JsonNode en = schema.path("enum");
    if (en.isArray() && !en.isEmpty()) {
      return en.get(0);
    }
    return switch (schema.path("type").asText()) {
      case "object" -> {
        ObjectNode o = f.objectNode();
        for (Map.Entry<String, JsonNode> p : schema.path("properties").properties()) {
          o.set(p.getKey(), sample(p.getValue()));
        }
        if (schema.has("additionalProperties")) {
          o.set("key", sample(schema.path("additionalProperties")));
        }
        yield o;
      }
      case "array" -> f.arrayNode().add(sample(schema.path("items")));
      case "integer" -> f.numberNode(Math.max(1, schema.path("minimum").asLong(1)));
      case "number" -> f.numberNode(0.5);
      case "boolean" -> f.booleanNode(true);
      default -> f.textNode(schema.path("pattern").asText("").contains("0-9a-fA-F") ? "a".repeat(64) : "x");
    };
  }

  private static void bounds(JsonNode schema, JsonNode value, String path, List<String> problems) {
    if ((schema.has("minimum") && value.asDouble() < schema.path("minimum").asDouble())
        || (schema.has("maximum") && value.asDouble() > schema.path("maximum").asDouble())) {
      problems.add(path + ": " + value + " outside [" + schema.path("minimum") + ", " + schema.path("maximum") + "]");
    }
  }

  /**
   * Structural check of {@code value} against a CRD schema: declared fields only, declared types, required,
   * patterns, minimum/maximum and minItems/maxItems (not the CEL rules).
   */
  static void conforms(JsonNode schema, JsonNode value, String path, List<String> problems) {
    String type = schema.path("type").asText();
    switch (type) {
      case "object" -> {
        if (!value.isObject()) {
          problems.add(path + ": expected an object");
          return;
        }
        for (JsonNode req : schema.path("required")) {
          if (!value.has(req.asText())) {
            problems.add(path + ": missing required " + req.asText());
          }
        }
        for (Map.Entry<String, JsonNode> field : value.properties()) {
          JsonNode prop = schema.path("properties").path(field.getKey());
          if (prop.isMissingNode()) {
            prop = schema.path("additionalProperties");
          }
          if (prop.isMissingNode() || !prop.isObject()) {
            if (!schema.path("x-kubernetes-preserve-unknown-fields").asBoolean(false)) {
              problems.add(path + "." + field.getKey() + ": not declared by the CRD (the API server would drop it)");
            }
            continue;
          }
          conforms(prop, field.getValue(), path + "." + field.getKey(), problems);
        }
      }
      case "array" -> {
        if (!value.isArray()) {
          problems.add(path + ": expected an array");
          return;
        }
        if (value.size() < schema.path("minItems").asInt(0)
            || value.size() > schema.path("maxItems").asInt(Integer.MAX_VALUE)) {
          problems.add(path + ": " + value.size() + " items, outside minItems/maxItems");
        }
        for (int i = 0; i < value.size(); i++) {
          conforms(schema.path("items"), value.get(i), path + "[" + i + "]", problems);
        }
      }
      case "integer" -> {
        if (!value.isIntegralNumber()) {
          problems.add(path + ": expected an integer");
        } else {
          bounds(schema, value, path, problems);
        }
      }
      case "number" -> {
        if (!value.isNumber()) {
          problems.add(path + ": expected a number");
        } else {
          bounds(schema, value, path, problems);
        }
      }
      case "boolean" -> {
        if (!value.isBoolean()) {
          problems.add(path + ": expected a boolean");
        }
      }
      case "string" -> {
        if (!value.isTextual()) {
          problems.add(path + ": expected a string, got " + value);
        } else if (schema.has("pattern")
            && !java.util.regex.Pattern.compile(schema.path("pattern").asText()).matcher(value.asText()).find()) {
          problems.add(path + ": '" + value.asText() + "' does not match " + schema.path("pattern").asText());
        } else if (schema.has("enum")) {
          List<String> allowed = new ArrayList<>();
          schema.path("enum").forEach(v -> allowed.add(v.asText()));
          if (!allowed.contains(value.asText())) {
            problems.add(path + ": " + value.asText() + " not in " + allowed);
          }
        }
      }
      default -> problems.add(path + ": schema without a type");
    }
  }
}
