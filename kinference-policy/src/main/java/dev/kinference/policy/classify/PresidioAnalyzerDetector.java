package dev.kinference.policy.classify;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.request.InferenceRequest;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A personal-data detector backed by a <a href="https://microsoft.github.io/presidio/">Microsoft Presidio</a>
 * analyzer, named {@code presidio}: {@code POST {base}/analyze} with {@code {"text", "language",
 * "score_threshold"}}, answered by a JSON array of {@code {entity_type, start, end, score}}. A request's fields
 * ({@link RequestFields}) are sent as one text, one field per line, and each result is mapped back to its field and
 * offset. Results below the score threshold and entity types without a mapped {@link PersonalDataKind} are ignored.
 *
 * <p>Fails closed: an analyzer that answers with an error status, answers nonsense, cannot be reached or does not
 * answer within the timeout (default {@value #DEFAULT_TIMEOUT_MS} ms) makes {@link #detect} throw {@link
 * PersonalDataDetectorException}, and the request is treated as personal.
 *
 * <p>Configured with {@link #builder} or from the environment ({@link #fromEnvironment}). Thread-safe.
 */
public final class PresidioAnalyzerDetector implements PersonalDataDetector {

  public static final long DEFAULT_TIMEOUT_MS = 500;
  public static final double DEFAULT_SCORE_THRESHOLD = 0.5;

  private static final ObjectMapper JSON = new ObjectMapper();

  private final URI analyze;
  private final Duration timeout;
  private final double scoreThreshold;
  private final String language;
  private final Map<String, PersonalDataKind> entities;
  private final HttpClient http;

  private PresidioAnalyzerDetector(Builder b) {
    String base = b.baseUrl.toString();
    this.analyze = URI.create(base.endsWith("/") ? base + "analyze" : base + "/analyze");
    this.timeout = b.timeout;
    this.scoreThreshold = b.scoreThreshold;
    this.language = b.language;
    this.entities = Map.copyOf(b.entities);
    this.http = HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1).build();
  }

  /** A detector for the analyzer at {@code baseUrl} (such as {@code http://presidio-analyzer:3000}). */
  public static Builder builder(URI baseUrl) {
    return new Builder(baseUrl);
  }

  /**
   * The detector the environment configures, or null without {@code KINFERENCE_PRESIDIO_URL}:
   * <ul>
   *   <li>{@code KINFERENCE_PRESIDIO_URL}: the analyzer's base URL;</li>
   *   <li>{@code KINFERENCE_PRESIDIO_TIMEOUT}: such as {@code 500ms} or {@code 2s} (default 500 ms);</li>
   *   <li>{@code KINFERENCE_PRESIDIO_SCORE_THRESHOLD}: 0 to 1 (default 0.5);</li>
   *   <li>{@code KINFERENCE_PRESIDIO_LANGUAGE}: default {@code en};</li>
   *   <li>{@code KINFERENCE_PRESIDIO_ENTITIES}: {@code ENTITY=kind} pairs separated by commas, added to (or
   *       replacing) the {@linkplain Builder#DEFAULT_ENTITIES default mapping}; {@code ENTITY=} drops one.</li>
   * </ul>
   *
   * @throws IllegalArgumentException if a setting is invalid
   */
  public static @Nullable PresidioAnalyzerDetector fromEnvironment(Function<String, @Nullable String> env) {
    String url = env.apply("KINFERENCE_PRESIDIO_URL");
    if (url == null || url.isBlank()) {
      return null;
    }
    Builder b = builder(URI.create(url.trim()));
    String timeout = env.apply("KINFERENCE_PRESIDIO_TIMEOUT");
    if (timeout != null && !timeout.isBlank()) {
      b.timeout(duration(timeout.trim()));
    }
    String threshold = env.apply("KINFERENCE_PRESIDIO_SCORE_THRESHOLD");
    if (threshold != null && !threshold.isBlank()) {
      b.scoreThreshold(Double.parseDouble(threshold.trim()));
    }
    String language = env.apply("KINFERENCE_PRESIDIO_LANGUAGE");
    if (language != null && !language.isBlank()) {
      b.language(language.trim());
    }
    String mapping = env.apply("KINFERENCE_PRESIDIO_ENTITIES");
    if (mapping != null && !mapping.isBlank()) {
      for (String pair : mapping.split(",")) {
        if (pair.isBlank()) {
          continue;
        }
        int eq = pair.indexOf('=');
        if (eq <= 0) {
          throw new IllegalArgumentException("KINFERENCE_PRESIDIO_ENTITIES: '" + pair.trim()
              + "' is not ENTITY=kind");
        }
        String entity = pair.substring(0, eq).trim();
        String kind = pair.substring(eq + 1).trim();
        if (kind.isEmpty()) {
          b.entities.remove(entity);
        } else {
          PersonalDataKind k = kind(kind);
          if (k == null) {
            throw new IllegalArgumentException("KINFERENCE_PRESIDIO_ENTITIES: unknown kind '" + kind + "' (one of "
                + Arrays.stream(PersonalDataKind.values()).map(PersonalDataKind::yamlName).toList() + ")");
          }
          b.entity(entity, k);
        }
      }
    }
    return b.build();
  }

  /** The environment variable {@code name}, else the system property ({@code kinference.presidio.url}, ...). */
  static @Nullable String processSetting(String name) {
    String v = System.getenv(name);
    if (v == null) {
      v = System.getProperty(name.toLowerCase(Locale.ROOT).replace('_', '.'));
    }
    return v;
  }

  static Duration duration(String s) {
    String t = s.toLowerCase(Locale.ROOT);
    try {
      if (t.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2).trim()));
      }
      if (t.endsWith("s")) {
        return Duration.ofMillis(Math.round(Double.parseDouble(t.substring(0, t.length() - 1).trim()) * 1000));
      }
      if (t.startsWith("pt")) {
        return Duration.parse(s);
      }
      return Duration.ofMillis(Long.parseLong(t));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("KINFERENCE_PRESIDIO_TIMEOUT: '" + s + "' is not a duration such as 500ms "
          + "or 2s", e);
    }
  }

  private static @Nullable PersonalDataKind kind(String yamlName) {
    for (PersonalDataKind k : PersonalDataKind.values()) {
      if (k.yamlName().equals(yamlName)) {
        return k;
      }
    }
    return null;
  }

  @Override
  public String name() {
    return "presidio";
  }

  public Duration timeout() {
    return timeout;
  }

  /** Entity types to kinds. */
  public Map<String, PersonalDataKind> entities() {
    return entities;
  }

  @Override
  public PersonalData detect(CharSequence text) {
    if (text.isEmpty()) {
      return PersonalData.NONE;
    }
    String s = text.toString();
    return collect(analyze(s), s, new int[] {0}, new String[] {""});
  }

  /** The request's fields in one analysis. */
  @Override
  public PersonalData detect(InferenceRequest request) {
    List<String> paths = new ArrayList<>();
    List<Integer> starts = new ArrayList<>();
    StringBuilder sb = new StringBuilder(256);
    RequestFields.walk(request, (path, text) -> {
      if (text.isEmpty()) {
        return;
      }
      paths.add(path);
      starts.add(sb.length());
      sb.append(text).append('\n');
    });
    if (sb.isEmpty()) {
      return PersonalData.NONE;
    }
    String all = sb.toString();
    int[] s = starts.stream().mapToInt(Integer::intValue).toArray();
    return collect(analyze(all), all, s, paths.toArray(String[]::new));
  }

  private PersonalData collect(JsonNode results, String text, int[] starts, String[] paths) {
    EnumSet<PersonalDataKind> kinds = EnumSet.noneOf(PersonalDataKind.class);
    List<PersonalDataFinding> where = new ArrayList<>();
    int count = 0;
    for (JsonNode r : results) {
      JsonNode type = r.get("entity_type");
      if (type == null || !type.isTextual()) {
        throw malformed("a result without entity_type");
      }
      PersonalDataKind kind = entities.get(type.asText());
      if (kind == null || r.path("score").asDouble(1.0) < scoreThreshold) {
        continue;
      }
      int start = Math.max(0, charIndex(text, r.path("start").asInt(0)));
      int field = Arrays.binarySearch(starts, start);
      if (field < 0) {
        field = Math.max(0, -field - 2);
      }
      kinds.add(kind);
      count++;
      if (where.size() < PersonalData.MAX_FINDINGS) {
        where.add(new PersonalDataFinding(kind, name(), paths[field], start - starts[field]));
      }
    }
    return count == 0 ? PersonalData.NONE : new PersonalData(kinds, count, where);
  }

  /** Presidio counts code points (Python strings); Java counts UTF-16 units. */
  private static int charIndex(String text, int codePoints) {
    try {
      return text.offsetByCodePoints(0, Math.min(codePoints, text.codePointCount(0, text.length())));
    } catch (IndexOutOfBoundsException e) {
      return Math.min(codePoints, text.length());
    }
  }

  private JsonNode analyze(String text) {
    ObjectNode req = JSON.createObjectNode();
    req.put("text", text);
    req.put("language", language);
    req.put("score_threshold", scoreThreshold);
    byte[] body;
    try {
      body = JSON.writeValueAsBytes(req);
    } catch (IOException e) {
      throw new PersonalDataDetectorException(name(), "error", "could not encode the request", e);
    }
    HttpRequest request = HttpRequest.newBuilder(analyze).timeout(timeout)
        .header("Content-Type", "application/json").header("Accept", "application/json")
        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
    CompletableFuture<HttpResponse<byte[]>> f = http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray());
    HttpResponse<byte[]> response;
    try {
      response = f.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      f.cancel(true);
      throw new PersonalDataDetectorException(name(), "timeout", "no answer within " + timeout.toMillis()
          + " ms", null);
    } catch (InterruptedException e) {
      f.cancel(true);
      Thread.currentThread().interrupt();
      throw new PersonalDataDetectorException(name(), "interrupted", "interrupted", e);
    } catch (ExecutionException e) {
      Throwable c = e.getCause() != null ? e.getCause() : e;
      boolean timedOut = c instanceof java.net.http.HttpTimeoutException;
      throw new PersonalDataDetectorException(name(), timedOut ? "timeout" : "unavailable",
          (timedOut ? "no answer within " + timeout.toMillis() + " ms" : "unreachable") + " ("
              + c.getClass().getSimpleName() + ")",
          c);
    }
    if (response.statusCode() != 200) {
      throw new PersonalDataDetectorException(name(), "status", "answered " + response.statusCode(), null);
    }
    JsonNode results;
    try {
      results = JSON.readTree(response.body());
    } catch (IOException e) {
      throw malformed("not JSON");
    }
    if (results == null || !results.isArray()) {
      throw malformed("not a JSON array");
    }
    return results;
  }

  private PersonalDataDetectorException malformed(String what) {
    return new PersonalDataDetectorException(name(), "malformed", "answered " + what, null);
  }

  @Override
  public String toString() {
    return "presidio(" + analyze + ", timeout " + timeout.toMillis() + " ms, score >= " + scoreThreshold + ")";
  }

  /** Configures a {@link PresidioAnalyzerDetector}; not thread-safe. */
  public static final class Builder {

    /**
     * Presidio's predefined entity types mapped by default: {@code EMAIL_ADDRESS} email, {@code PHONE_NUMBER}
     * phone, {@code CREDIT_CARD} payment-card, {@code IBAN_CODE} iban, national identity numbers ({@code US_SSN},
     * {@code US_ITIN}, {@code US_PASSPORT}, {@code US_DRIVER_LICENSE}, {@code UK_NHS}, {@code UK_NINO}, {@code
     * ES_NIF}, {@code ES_NIE}, {@code IT_FISCAL_CODE}, {@code IT_IDENTITY_CARD}, {@code IT_PASSPORT}) national-id,
     * {@code CRYPTO} secret; and, when those kinds exist, {@code PERSON} person and passports passport.
     */
    public static final Map<String, String> DEFAULT_ENTITIES = defaults();

    private final URI baseUrl;
    private Duration timeout = Duration.ofMillis(DEFAULT_TIMEOUT_MS);
    private double scoreThreshold = DEFAULT_SCORE_THRESHOLD;
    private String language = "en";
    private final Map<String, PersonalDataKind> entities = new LinkedHashMap<>();

    private Builder(URI baseUrl) {
      this.baseUrl = Objects.requireNonNull(baseUrl, "baseUrl");
      String scheme = baseUrl.getScheme();
      if (scheme == null || !(scheme.equals("http") || scheme.equals("https"))) {
        throw new IllegalArgumentException("the Presidio analyzer URL must be http or https: " + baseUrl);
      }
      DEFAULT_ENTITIES.forEach((entity, kind) -> {
        PersonalDataKind k = kind(kind);
        if (k == null && kind.equals("passport")) {
          k = PersonalDataKind.NATIONAL_ID;
        }
        if (k != null) {
          entities.put(entity, k);
        }
      });
    }

    private static Map<String, String> defaults() {
      Map<String, String> m = new LinkedHashMap<>();
      m.put("EMAIL_ADDRESS", "email");
      m.put("PHONE_NUMBER", "phone");
      m.put("CREDIT_CARD", "payment-card");
      m.put("IBAN_CODE", "iban");
      for (String id : List.of("US_SSN", "US_ITIN", "US_DRIVER_LICENSE", "UK_NHS", "UK_NINO", "ES_NIF", "ES_NIE",
          "IT_FISCAL_CODE", "IT_IDENTITY_CARD")) {
        m.put(id, "national-id");
      }
      m.put("US_PASSPORT", "passport");
      m.put("IT_PASSPORT", "passport");
      m.put("CRYPTO", "secret");
      m.put("PERSON", "person");
      return java.util.Collections.unmodifiableMap(m);
    }

    /** How long one analysis may take, connection included (default 500 ms); a slower one fails closed. */
    public Builder timeout(Duration timeout) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("the Presidio timeout must be positive");
      }
      this.timeout = timeout;
      return this;
    }

    /** Results scoring below this are ignored (default 0.5). */
    public Builder scoreThreshold(double threshold) {
      if (!(threshold >= 0 && threshold <= 1)) {
        throw new IllegalArgumentException("the Presidio score threshold must be between 0 and 1");
      }
      this.scoreThreshold = threshold;
      return this;
    }

    /** The language sent with the text (default {@code en}). */
    public Builder language(String language) {
      this.language = Objects.requireNonNull(language, "language");
      return this;
    }

    /** Maps an entity type to a kind, replacing its default mapping. */
    public Builder entity(String entityType, PersonalDataKind kind) {
      entities.put(Objects.requireNonNull(entityType, "entityType"), Objects.requireNonNull(kind, "kind"));
      return this;
    }

    /** Only these entity types, mapped so (drops the defaults). */
    public Builder entities(Map<String, PersonalDataKind> mapping) {
      entities.clear();
      entities.putAll(mapping);
      return this;
    }

    public PresidioAnalyzerDetector build() {
      return new PresidioAnalyzerDetector(this);
    }
  }
}
