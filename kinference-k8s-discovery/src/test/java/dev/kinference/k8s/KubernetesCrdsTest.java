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

  /** Structural check of {@code value} against a CRD schema: declared fields only, declared types, required. */
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
        for (int i = 0; i < value.size(); i++) {
          conforms(schema.path("items"), value.get(i), path + "[" + i + "]", problems);
        }
      }
      case "integer" -> {
        if (!value.isIntegralNumber()) {
          problems.add(path + ": expected an integer");
        }
      }
      case "number" -> {
        if (!value.isNumber()) {
          problems.add(path + ": expected a number");
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
