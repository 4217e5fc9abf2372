package dev.kinference.cloud;

import dev.kinference.endpoint.Endpoint;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * An external OpenAI- or Anthropic-compatible API: where it is, which {@link ProviderApi} dialect it speaks, the
 * environment variable holding its key (keys are never written in configuration), the models it serves with their
 * prices, and its timeouts. Each model becomes one fleet {@link Endpoint} with the id
 * {@code external:<provider>/<model>} (the policy module's convention), labelled
 * {@link Endpoint#EXTERNAL_LABEL}{@code =true} and {@value #PROVIDER_LABEL}{@code =<provider>}, so a policy can name
 * it as a fallback. This is the client's side of a provider: the gateway builds one from a policy file's
 * {@code ExternalProvider} resource.
 *
 * <p>Immutable and thread-safe; build one with {@link #builder(String)}.
 */
public final class CloudProvider {

  /** Endpoint label: the provider's name. */
  public static final String PROVIDER_LABEL = "kinference.dev/provider";
  /** Endpoint label: the {@link ProviderApi} name. */
  public static final String API_LABEL = "kinference.dev/api";
  /** Endpoint label: the model name sent to the provider. */
  public static final String PROVIDER_MODEL_LABEL = "kinference.dev/provider-model";

  private static final Pattern NAME = Pattern.compile("[a-z0-9]([a-z0-9.-]*[a-z0-9])?");
  private static final Pattern ENV = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  /**
   * One model the provider serves.
   *
   * @param name the model name requests and policies use
   * @param providerModel the name the provider knows it by
   */
  public record Model(String name, String providerModel, Prices prices) {
    public Model {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(providerModel, "providerModel");
      Objects.requireNonNull(prices, "prices");
      if (name.isBlank() || providerModel.isBlank()) {
        throw new IllegalArgumentException("model names must not be blank");
      }
    }
  }

  private final String name;
  private final String api;
  private final URI baseUri;
  private final @Nullable String apiKeyEnv;
  private final @Nullable Path apiKeyFile;
  private final Map<String, Model> models;
  private final Duration connectTimeout;
  private final Duration firstTokenTimeout;
  private final Duration idleTimeout;
  private final Duration requestTimeout;
  private final int defaultMaxTokens;
  private final Map<String, String> headers;
  private final List<Endpoint> endpoints;

  private CloudProvider(Builder b) {
    this.name = b.name;
    this.api = b.api;
    this.baseUri = Objects.requireNonNull(b.baseUri, "baseUri");
    this.apiKeyEnv = b.apiKeyEnv;
    this.apiKeyFile = b.apiKeyFile;
    this.models = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(b.models));
    this.connectTimeout = b.connectTimeout;
    this.firstTokenTimeout = b.firstTokenTimeout;
    this.idleTimeout = b.idleTimeout;
    this.requestTimeout = b.requestTimeout;
    this.defaultMaxTokens = b.defaultMaxTokens;
    this.headers = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(b.headers));
    List<Endpoint> eps = new ArrayList<>();
    for (Model m : models.values()) {
      eps.add(new Endpoint(endpointId(name, m.name()), baseUri, m.name(), Map.of(
          Endpoint.EXTERNAL_LABEL, "true",
          PROVIDER_LABEL, name,
          API_LABEL, api,
          PROVIDER_MODEL_LABEL, m.providerModel())));
    }
    this.endpoints = List.copyOf(eps);
  }

  /** A builder for a provider named {@code name} (lower case letters, digits, dots and dashes). */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** The fleet endpoint id of {@code model} at provider {@code provider}: {@code external:provider/model}. */
  public static String endpointId(String provider, String model) {
    return "external:" + provider + "/" + model;
  }

  public String name() {
    return name;
  }

  /** The {@link ProviderApi} name: {@code openai}, {@code anthropic}, or a plugin's. */
  public String api() {
    return api;
  }

  public URI baseUri() {
    return baseUri;
  }

  /** The environment variable holding the key, or null if the provider needs none. */
  public @Nullable String apiKeyEnv() {
    return apiKeyEnv;
  }

  /** The file holding the key (read when a request is sent), or null. */
  public @Nullable Path apiKeyFile() {
    return apiKeyFile;
  }

  /** The models, by the name requests use. */
  public Map<String, Model> models() {
    return models;
  }

  public Duration connectTimeout() {
    return connectTimeout;
  }

  /** How long to wait for the first token (or the whole response when not streaming). */
  public Duration firstTokenTimeout() {
    return firstTokenTimeout;
  }

  /** The longest silence allowed between two events of a stream. */
  public Duration idleTimeout() {
    return idleTimeout;
  }

  /** A non-streamed request's whole response. */
  public Duration requestTimeout() {
    return requestTimeout;
  }

  /** The output budget sent when a request that must be translated to Anthropic's format gives none. */
  public int defaultMaxTokens() {
    return defaultMaxTokens;
  }

  /** Extra headers sent with every request (an organisation id, a beta flag). */
  public Map<String, String> headers() {
    return headers;
  }

  /** One fleet endpoint per model. */
  public List<Endpoint> endpoints() {
    return endpoints;
  }

  /** The price table of this provider's models. */
  public PriceTable priceTable() {
    Map<String, Prices> p = new LinkedHashMap<>();
    models.values().forEach(m -> p.put(m.name(), m.prices()));
    return PriceTable.of(p, "USD");
  }

  @Override
  public String toString() {
    return "CloudProvider[" + name + " " + api + " " + baseUri + " models=" + models.keySet() + "]";
  }

  /** Configures a {@link CloudProvider}; each setter validates its argument. Not thread-safe. */
  public static final class Builder {
    private final String name;
    private String api = "openai";
    private @Nullable URI baseUri;
    private @Nullable String apiKeyEnv;
    private @Nullable Path apiKeyFile;
    private final Map<String, Model> models = new LinkedHashMap<>();
    private Duration connectTimeout = Duration.ofSeconds(5);
    private Duration firstTokenTimeout = Duration.ofSeconds(60);
    private Duration idleTimeout = Duration.ofSeconds(60);
    private Duration requestTimeout = Duration.ofMinutes(10);
    private int defaultMaxTokens = 4096;
    private final Map<String, String> headers = new LinkedHashMap<>();

    private Builder(String name) {
      if (name == null || !NAME.matcher(name).matches()) {
        throw new IllegalArgumentException(
            "provider name must be lower-case letters, digits, dots and dashes: " + name);
      }
      this.name = name;
    }

    /** The {@link ProviderApi} dialect by name. Default {@code openai}. */
    public Builder api(String apiName) {
      if (apiName == null || apiName.isBlank()) {
        throw new IllegalArgumentException("api must not be blank");
      }
      this.api = apiName;
      return this;
    }

    /** The base URI, as the provider's SDK takes it ({@code https://api.openai.com/v1}). */
    public Builder baseUri(String uri) {
      URI u = URI.create(Objects.requireNonNull(uri, "uri"));
      if (!"http".equals(u.getScheme()) && !"https".equals(u.getScheme())) {
        throw new IllegalArgumentException("baseUri must be http or https: " + uri);
      }
      this.baseUri = u;
      return this;
    }

    /** The environment variable holding the API key. */
    public Builder apiKeyEnv(String variable) {
      if (variable == null || !ENV.matcher(variable).matches()) {
        throw new IllegalArgumentException("not an environment variable name: " + variable);
      }
      this.apiKeyEnv = variable;
      this.apiKeyFile = null;
      return this;
    }

    /** A file holding the API key (a mounted secret), read when a request is sent. */
    public Builder apiKeyFile(Path file) {
      this.apiKeyFile = Objects.requireNonNull(file, "file");
      this.apiKeyEnv = null;
      return this;
    }

    /** A model known to the provider as {@code providerModel} and to requests as {@code name}. */
    public Builder model(String name, String providerModel, Prices prices) {
      Model m = new Model(name, providerModel, prices);
      if (models.putIfAbsent(name, m) != null) {
        throw new IllegalArgumentException("model '" + name + "' added twice to provider " + this.name);
      }
      return this;
    }

    /** A model known by the same name to requests and to the provider. */
    public Builder model(String name, Prices prices) {
      return model(name, name, prices);
    }

    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = positive(timeout, "connectTimeout");
      return this;
    }

    public Builder firstTokenTimeout(Duration timeout) {
      this.firstTokenTimeout = positive(timeout, "firstTokenTimeout");
      return this;
    }

    public Builder idleTimeout(Duration timeout) {
      this.idleTimeout = positive(timeout, "idleTimeout");
      return this;
    }

    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = positive(timeout, "requestTimeout");
      return this;
    }

    public Builder defaultMaxTokens(int tokens) {
      if (tokens < 1) {
        throw new IllegalArgumentException("defaultMaxTokens must be positive: " + tokens);
      }
      this.defaultMaxTokens = tokens;
      return this;
    }

    /** An extra header sent with every request; not for keys, which come from the environment. */
    public Builder header(String name, String value) {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(value, "value");
      String lower = name.toLowerCase(java.util.Locale.ROOT);
      if (lower.equals("authorization") || lower.equals("x-api-key") || lower.equals("api-key")) {
        throw new IllegalArgumentException("keys come from the environment (apiKeyEnv), not from headers");
      }
      headers.put(name, value);
      return this;
    }

    public CloudProvider build() {
      if (baseUri == null) {
        throw new IllegalStateException("provider " + name + " needs a baseUri");
      }
      if (models.isEmpty()) {
        throw new IllegalStateException("provider " + name + " serves no model");
      }
      return new CloudProvider(this);
    }

    private static Duration positive(Duration d, String what) {
      Objects.requireNonNull(d, what);
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(what + " must be positive: " + d);
      }
      return d;
    }
  }
}
