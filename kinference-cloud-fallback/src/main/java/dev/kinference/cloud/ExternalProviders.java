package dev.kinference.cloud;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kinference.cloud.translate.Translation;
import dev.kinference.cloud.translate.UnsupportedTranslationException;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.plugin.PluginSet;
import dev.kinference.plugin.Plugins;
import dev.kinference.request.ApiFormat;
import dev.kinference.routing.Usage;
import java.io.UncheckedIOException;
import java.net.http.HttpRequest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A set of external providers: their fleet endpoints, their prices, and the HTTP request for one of them in the
 * provider's own format. The {@link ProviderApi} dialects are found with {@link java.util.ServiceLoader}.
 *
 * <p>Immutable and thread-safe. Keys are read from the environment when a request is prepared, so a rotated key
 * (a restarted process with a new variable) needs no configuration change, and a missing key fails that provider
 * only.
 */
public final class ExternalProviders {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final ExternalProviders NONE = builder().build();

  private final Map<String, CloudProvider> providers;
  private final PluginSet<ProviderApi> apis;
  private final Function<String, @Nullable String> environment;
  private final List<Endpoint> endpoints;
  private final PriceTable priceTable;

  private ExternalProviders(Builder b) {
    this.providers = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(b.providers));
    this.apis = b.apis != null ? b.apis : Plugins.load(ProviderApi.class);
    this.environment = b.environment;
    List<Endpoint> eps = new ArrayList<>();
    PriceTable prices = PriceTable.empty();
    for (CloudProvider p : providers.values()) {
      eps.addAll(p.endpoints());
      prices = prices.with(p.priceTable());
    }
    this.endpoints = List.copyOf(eps);
    this.priceTable = prices;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** No providers. */
  public static ExternalProviders none() {
    return NONE;
  }

  /** The providers by name. */
  public Map<String, CloudProvider> providers() {
    return providers;
  }

  /** Every provider's endpoints, to add to the fleet beside the local servers. */
  public List<Endpoint> endpoints() {
    return endpoints;
  }

  /** The prices of every provider model, by model name. */
  public PriceTable priceTable() {
    return priceTable;
  }

  /** The dialects available, by name. */
  public PluginSet<ProviderApi> apis() {
    return apis;
  }

  /** The provider of an external endpoint, or empty for a local one or one of another provider set. */
  public Optional<CloudProvider> providerOf(Endpoint endpoint) {
    String name = endpoint.label(CloudProvider.PROVIDER_LABEL);
    return name == null || !endpoint.isExternal() ? Optional.empty() : Optional.ofNullable(providers.get(name));
  }

  /** The cost of {@code usage} on an external endpoint's model; 0 for endpoints not of these providers. */
  public double cost(Endpoint endpoint, Usage usage) {
    return providerOf(endpoint).map(p -> {
      CloudProvider.Model m = p.models().get(endpoint.model());
      return m == null ? 0.0 : m.prices().cost(usage);
    }).orElse(0.0);
  }

  /**
   * Problems that make a provider unusable, one line each: a key variable that is unset, a dialect nobody
   * provides. Empty when every provider can be called.
   */
  public List<String> problems() {
    List<String> out = new ArrayList<>();
    for (CloudProvider p : providers.values()) {
      if (apis.find(p.api()).isEmpty()) {
        out.add("provider " + p.name() + ": no ProviderApi named '" + p.api() + "'; known: " + apis.names());
      }
      String env = p.apiKeyEnv();
      if (env != null && isBlank(environment.apply(env))) {
        out.add("provider " + p.name() + ": environment variable " + env + " is not set");
      }
      java.nio.file.Path file = p.apiKeyFile();
      if (file != null && isBlank(readKey(file))) {
        out.add("provider " + p.name() + ": key file " + file + " is missing or empty");
      }
    }
    return out;
  }

  /**
   * The request for {@code endpoint} (one of these providers' endpoints) of a client request in
   * {@code clientFormat}: translated to the provider's format if it does not accept the client's, with the
   * provider's model name, key and headers. For OpenAI-format streams the usage chunk is requested.
   *
   * @throws ProviderUnavailableException if the endpoint is not one of these providers', the key variable is
   *     unset, or the dialect is unknown
   * @throws UnsupportedTranslationException if the request cannot be expressed in the provider's format
   */
  public ProviderRequest prepare(Endpoint endpoint, ApiFormat clientFormat, ObjectNode body)
      throws ProviderUnavailableException, UnsupportedTranslationException {
    CloudProvider p = providerOf(endpoint).orElseThrow(() ->
        new ProviderUnavailableException("endpoint " + endpoint.id() + " is not an external provider's"));
    CloudProvider.Model model = p.models().get(endpoint.model());
    if (model == null) {
      throw new ProviderUnavailableException("provider " + p.name() + " does not serve " + endpoint.model());
    }
    ProviderApi api = apis.find(p.api()).orElseThrow(() ->
        new ProviderUnavailableException("provider " + p.name() + ": no ProviderApi named '" + p.api() + "'"));
    String key = null;
    String env = p.apiKeyEnv();
    java.nio.file.Path file = p.apiKeyFile();
    if (env != null) {
      String value = environment.apply(env);
      if (value == null || value.isBlank()) {
        throw new ProviderUnavailableException(
            "provider " + p.name() + ": environment variable " + env + " holding its key is not set");
      }
      key = value.strip();
    } else if (file != null) {
      key = readKey(file);
      if (isBlank(key)) {
        throw new ProviderUnavailableException("provider " + p.name() + ": key file " + file + " is missing or empty");
      }
    }
    ApiFormat upstream = api.upstreamFormat(clientFormat);
    if (!Translation.canTranslate(clientFormat, upstream)) {
      throw new UnsupportedTranslationException(clientFormat, upstream, "",
          "provider " + p.name() + " (" + p.api() + ") cannot serve " + clientFormat.path());
    }
    ObjectNode out = Translation.request(body, clientFormat, upstream, model.providerModel(), p.defaultMaxTokens());
    byte[] bytes;
    try {
      bytes = MAPPER.writeValueAsBytes(out);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
    HttpRequest.Builder rb = HttpRequest.newBuilder(api.uri(p.baseUri(), upstream))
        .POST(HttpRequest.BodyPublishers.ofByteArray(bytes))
        .header("Content-Type", "application/json")
        .header("Accept", out.path("stream").asBoolean(false) ? "text/event-stream" : "application/json")
        .timeout(out.path("stream").asBoolean(false) ? p.firstTokenTimeout() : p.requestTimeout());
    api.headers(key, rb::header);
    p.headers().forEach(rb::header);
    return new ProviderRequest(rb.build(), upstream, p, model);
  }

  private static @Nullable String readKey(java.nio.file.Path file) {
    try {
      return java.nio.file.Files.readString(file).strip();
    } catch (java.io.IOException | RuntimeException e) {
      return null;
    }
  }

  private static boolean isBlank(@Nullable String s) {
    return s == null || s.isBlank();
  }

  /** Configures {@link ExternalProviders}; not thread-safe. */
  public static final class Builder {
    private final Map<String, CloudProvider> providers = new LinkedHashMap<>();
    private @Nullable PluginSet<ProviderApi> apis;
    private Function<String, @Nullable String> environment = System::getenv;

    private Builder() {}

    public Builder provider(CloudProvider provider) {
      Objects.requireNonNull(provider, "provider");
      if (providers.putIfAbsent(provider.name(), provider) != null) {
        throw new IllegalArgumentException("provider '" + provider.name() + "' added twice");
      }
      return this;
    }

    public Builder providers(List<CloudProvider> all) {
      all.forEach(this::provider);
      return this;
    }

    /** Where keys are looked up. Default {@link System#getenv(String)}; tests pass a map. */
    public Builder environment(Function<String, @Nullable String> lookup) {
      this.environment = Objects.requireNonNull(lookup, "lookup");
      return this;
    }

    /** The dialects to use. Default: every {@link ProviderApi} found with {@link java.util.ServiceLoader}. */
    public Builder apis(PluginSet<ProviderApi> set) {
      this.apis = Objects.requireNonNull(set, "set");
      return this;
    }

    public ExternalProviders build() {
      return new ExternalProviders(this);
    }
  }
}
