package dev.kinference.policy.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

class ResourceSchemasTest {

  @Test
  void everyFieldOfTheExampleIsInItsKindsSchemaWithTheRightType() throws Exception {
    int checked = 0;
    try (var files = Files.list(Path.of("..", "examples", "policies"))) {
      for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
        for (Object doc : new Load(LoadSettings.builder().build()).loadAllFromString(Files.readString(f))) {
          Map<?, ?> resource = (Map<?, ?>) doc;
          Map<String, Object> schema = ResourceSchemas.openApiV3((String) resource.get("kind"));
          checked += conforms(resource, schema, f.getFileName() + ":" + resource.get("kind"));
        }
      }
    }
    assertThat(checked).isGreaterThan(100);
  }

  @SuppressWarnings("unchecked")
  private static int conforms(Object value, Map<String, Object> schema, String path) {
    String type = (String) schema.get("type");
    switch (value) {
      case Map<?, ?> m -> {
        assertThat(type).as(path).isEqualTo("object");
        int n = 1;
        if (path.endsWith(":metadata") || path.endsWith(".metadata")) {
          return n;
        }
        for (var e : m.entrySet()) {
          String child = path + "." + e.getKey();
          Map<String, Object> sub;
          if (schema.containsKey("properties")) {
            sub = (Map<String, Object>) ((Map<String, Object>) schema.get("properties")).get(e.getKey());
          } else {
            sub = (Map<String, Object>) schema.get("additionalProperties");
          }
          assertThat(sub).as("schema of " + child).isNotNull();
          n += conforms(e.getValue(), sub, child);
        }
        return n;
      }
      case List<?> l -> {
        assertThat(type).as(path).isEqualTo("array");
        int n = 1;
        for (Object o : l) {
          n += conforms(o, (Map<String, Object>) schema.get("items"), path + "[]");
        }
        return n;
      }
      case String s -> {
        assertThat(type).as(path).isEqualTo("string");
        if (schema.containsKey("enum")) {
          assertThat((List<String>) schema.get("enum")).as(path).contains(s);
        }
      }
      case Integer i -> assertThat(type).as(path).isIn("integer", "number");
      case Long i -> assertThat(type).as(path).isIn("integer", "number");
      case Double d -> assertThat(type).as(path).isEqualTo("number");
      case Boolean b -> assertThat(type).as(path).isEqualTo("boolean");
      default -> throw new AssertionError(path + ": " + value);
    }
    return 1;
  }

  @Test
  @SuppressWarnings("unchecked")
  void optionalFieldsAreNullableAndEnumsUseTheirYamlNames() {
    Map<String, Object> policy = ResourceSchemas.openApiV3("InferencePolicy");
    Map<String, Object> spec = (Map<String, Object>) ((Map<String, Object>) policy.get("properties")).get("spec");
    Map<String, Object> rule = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) spec
        .get("properties")).get("rules")).get("items");
    Map<String, Object> match = (Map<String, Object>) ((Map<String, Object>) rule.get("properties")).get("match");
    Map<String, Object> matchProps = (Map<String, Object>) match.get("properties");
    assertThat(matchProps).containsKeys("tenants", "models", "promptTokens", "pool", "personalDataKinds");
    assertThat(((Map<String, Object>) matchProps.get("trafficClass"))).containsEntry("nullable", true)
        .containsEntry("enum", List.of("interactive", "batch"));
    assertThat((Map<String, Object>) ((Map<String, Object>) matchProps.get("personalDataKinds")).get("items"))
        .containsEntry("enum", List.of("email", "phone", "payment-card", "iban", "national-id", "passport", "person", "secret"));
    Map<String, Object> tenant = (Map<String, Object>) ((Map<String, Object>) ResourceSchemas.openApiV3("Tenant")
        .get("properties")).get("spec");
    Map<String, Object> traffic = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) tenant
        .get("properties")).get("traffic")).get("properties");
    assertThat(traffic).containsOnlyKeys("defaultClass", "allowedClasses", "priority", "maxPriority");
    assertThat((Map<String, Object>) ((Map<String, Object>) traffic.get("allowedClasses")).get("items"))
        .containsEntry("enum", List.of("interactive", "batch"));
    assertThat(ResourceSchemas.kinds()).containsExactly("InferencePool", "ModelAlias", "ExternalProvider", "Tenant",
        "InferencePolicy");
    for (String kind : ResourceSchemas.kinds()) {
      assertThat(ResourceSchemas.openApiV3(kind)).containsEntry("type", "object");
    }
    assertThatThrownBy(() -> ResourceSchemas.openApiV3("Nope")).isInstanceOf(IllegalArgumentException.class);
  }
}
