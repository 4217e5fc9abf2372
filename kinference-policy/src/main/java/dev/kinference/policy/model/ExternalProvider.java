package dev.kinference.policy.model;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * An OpenAI- or Anthropic-compatible cloud API. Each of its models becomes one fleet member, an external endpoint
 * with id {@code external:<provider>/<model>} (see {@link #endpointId}), labelled {@code kinference.dev/external=true}
 * and {@value #PROVIDER_LABEL}{@code =<provider>}. The API key is read from an environment variable or a file when
 * a request is sent, never written in the configuration.
 */
public record ExternalProvider(ObjectMeta metadata, Spec spec) implements Resource {

  public static final String KIND = "ExternalProvider";

  /** The endpoint label naming the provider of an external endpoint. */
  public static final String PROVIDER_LABEL = "kinference.dev/provider";

  public ExternalProvider {
    Objects.requireNonNull(metadata, "metadata");
    Objects.requireNonNull(spec, "spec");
  }

  @Override
  public String kind() {
    return KIND;
  }

  /** The fleet endpoint id of {@code provider}'s {@code model}: {@code external:<provider>/<model>}. */
  public static String endpointId(String provider, String model) {
    return "external:" + provider + "/" + model;
  }

  /** The model's price, falling back to the provider's default price, or null. */
  public @Nullable Price priceOf(String model) {
    for (Model m : spec.models()) {
      if (m.name().equals(model) && m.price() != null) {
        return m.price();
      }
    }
    return spec.price();
  }

  /** Whether the provider offers this model. */
  public boolean offers(String model) {
    return spec.models().stream().anyMatch(m -> m.name().equals(model));
  }

  /**
   * @param api the wire format
   * @param baseUrl such as {@code https://api.openai.com/v1}
   * @param apiKey where the key comes from
   * @param models the models offered
   * @param price default price of models that name none, or null
   * @param timeouts request timeouts
   */
  public record Spec(Api api, URI baseUrl, SecretRef apiKey, List<Model> models, @Nullable Price price,
      Timeouts timeouts) {
    public Spec {
      Objects.requireNonNull(api, "api");
      Objects.requireNonNull(baseUrl, "baseUrl");
      Objects.requireNonNull(apiKey, "apiKey");
      Objects.requireNonNull(timeouts, "timeouts");
      models = List.copyOf(models);
    }
  }

  /** The provider's wire format. */
  public enum Api {
    OPENAI,
    ANTHROPIC;

    public String yamlName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Exactly one of an environment variable or a file holding the key. */
  public record SecretRef(@Nullable String env, @Nullable String file) {

    /** Reads the secret now; null if the variable is unset or the file unreadable. */
    public @Nullable String resolve() {
      if (env != null) {
        String v = System.getenv(env);
        return v == null || v.isBlank() ? null : v.strip();
      }
      if (file != null) {
        try {
          return java.nio.file.Files.readString(java.nio.file.Path.of(file)).strip();
        } catch (java.io.IOException | RuntimeException e) {
          return null;
        }
      }
      return null;
    }

    @Override
    public String toString() {
      return env != null ? "env " + env : "file " + file;
    }
  }

  /** One model offered by the provider, with its price (or null for the provider's default). */
  public record Model(String name, @Nullable Price price) {
    public Model {
      Objects.requireNonNull(name, "name");
    }
  }

  /**
   * @param connect to open a connection (default 5 s)
   * @param firstToken until the first token (default 60 s)
   * @param request for the whole request (default 600 s)
   */
  public record Timeouts(Duration connect, Duration firstToken, Duration request) {

    public static final Timeouts DEFAULT =
        new Timeouts(Duration.ofSeconds(5), Duration.ofSeconds(60), Duration.ofSeconds(600));

    public Timeouts {
      Objects.requireNonNull(connect, "connect");
      Objects.requireNonNull(firstToken, "firstToken");
      Objects.requireNonNull(request, "request");
    }
  }
}
