package dev.kinference.policy.model;

import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * OpenAPI v3 schemas of the resource kinds, derived from the records of this package, for Kubernetes
 * CustomResourceDefinitions ({@code spec.versions[].schema.openAPIV3Schema}). The schemas describe shapes and
 * types (structural schemas); the semantic checks stay in {@link dev.kinference.policy.config.PolicyLoader}, which a
 * controller runs on every custom resource it reads.
 *
 * <p>Mapping: strings, {@link URI} and {@link Duration} (written {@code 30s}) are {@code string}; {@code int} and
 * {@code long} are {@code integer}; {@code double} is {@code number}; enums are {@code string} with their YAML
 * names; {@code Object} (a plugin parameter: a number or a duration) is any value ({@code
 * x-kubernetes-preserve-unknown-fields}); lists and sets are {@code array}; string-keyed maps are {@code object} with
 * {@code additionalProperties}; records are {@code object} with {@code properties}. Stateless; thread-safe.
 */
public final class ResourceSchemas {

  private static final Map<String, Class<? extends Record>> KINDS = kindMap();

  private ResourceSchemas() {}

  private static Map<String, Class<? extends Record>> kindMap() {
    Map<String, Class<? extends Record>> m = new LinkedHashMap<>();
    m.put(InferencePool.KIND, InferencePool.class);
    m.put(ModelAlias.KIND, ModelAlias.class);
    m.put(ExternalProvider.KIND, ExternalProvider.class);
    m.put(Tenant.KIND, Tenant.class);
    m.put(InferencePolicy.KIND, InferencePolicy.class);
    return m;
  }

  /** The kinds, in a stable order. */
  public static Set<String> kinds() {
    return KINDS.keySet();
  }

  /**
   * The {@code openAPIV3Schema} of a kind: {@code apiVersion}, {@code kind}, {@code metadata} (left to the API
   * server) and the kind's {@code spec}, as nested maps and lists ready to be written as YAML or JSON.
   *
   * @throws IllegalArgumentException for an unknown kind
   */
  public static Map<String, Object> openApiV3(String kind) {
    Class<? extends Record> type = KINDS.get(kind);
    if (type == null) {
      throw new IllegalArgumentException("unknown kind '" + kind + "'; known: " + KINDS.keySet());
    }
    Map<String, Object> props = new LinkedHashMap<>();
    props.put("apiVersion", Map.of("type", "string"));
    props.put("kind", Map.of("type", "string"));
    props.put("metadata", Map.of("type", "object"));
    RecordComponent spec = null;
    for (RecordComponent rc : type.getRecordComponents()) {
      if (rc.getName().equals("spec")) {
        spec = rc;
      }
    }
    props.put("spec", schemaOf(java.util.Objects.requireNonNull(spec).getGenericType()));
    Map<String, Object> root = new LinkedHashMap<>();
    root.put("type", "object");
    root.put("required", List.of("spec"));
    root.put("properties", props);
    return root;
  }

  private static Map<String, Object> schemaOf(Type t) {
    Map<String, Object> s = new LinkedHashMap<>();
    if (t instanceof ParameterizedType p) {
      Class<?> raw = (Class<?>) p.getRawType();
      if (List.class.isAssignableFrom(raw) || Set.class.isAssignableFrom(raw)) {
        s.put("type", "array");
        s.put("items", schemaOf(p.getActualTypeArguments()[0]));
        return s;
      }
      if (Map.class.isAssignableFrom(raw)) {
        s.put("type", "object");
        s.put("additionalProperties", schemaOf(p.getActualTypeArguments()[1]));
        return s;
      }
      throw new IllegalArgumentException("unsupported type " + t);
    }
    Class<?> c = (Class<?>) t;
    if (c == Object.class) {
      // a plugin parameter: a number or a duration, checked against the plugin's declaration by the binder
      s.put("x-kubernetes-preserve-unknown-fields", true);
      return s;
    }
    if (c == String.class || c == URI.class) {
      s.put("type", "string");
    } else if (c == Duration.class) {
      s.put("type", "string");
      s.put("pattern", "^(P.*|([0-9]+(\\.[0-9]+)?(ms|s|m|h|d))+)$");
    } else if (c == int.class || c == Integer.class || c == long.class || c == Long.class) {
      s.put("type", "integer");
    } else if (c == double.class || c == Double.class) {
      s.put("type", "number");
    } else if (c == boolean.class || c == Boolean.class) {
      s.put("type", "boolean");
    } else if (c.isEnum()) {
      s.put("type", "string");
      List<String> names = new ArrayList<>();
      for (Object e : c.getEnumConstants()) {
        names.add(((Enum<?>) e).name().toLowerCase(Locale.ROOT).replace('_', '-'));
      }
      s.put("enum", names);
    } else if (c.isRecord()) {
      s.put("type", "object");
      Map<String, Object> props = new LinkedHashMap<>();
      for (RecordComponent rc : c.getRecordComponents()) {
        Map<String, Object> child = schemaOf(rc.getGenericType());
        if (isNullable(rc)) {
          child.put("nullable", true);
        }
        props.put(rc.getName(), child);
      }
      s.put("properties", props);
    } else {
      throw new IllegalArgumentException("unsupported type " + c);
    }
    return s;
  }

  private static boolean isNullable(RecordComponent rc) {
    return rc.getAnnotatedType().isAnnotationPresent(Nullable.class);
  }
}
