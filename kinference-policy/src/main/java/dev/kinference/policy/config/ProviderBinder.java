package dev.kinference.policy.config;

import dev.kinference.policy.model.ExternalProvider;
import dev.kinference.policy.model.ObjectMeta;
import dev.kinference.policy.model.Price;
import java.net.URI;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Binds an {@code ExternalProvider}'s spec: API dialect, base URL, where the key comes from (never the key itself),
 * models, price and timeouts. Not thread-safe; one per document.
 */
final class ProviderBinder {
  private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  private final Binding b;

  ProviderBinder(Binding b) {
    this.b = b;
  }

  ExternalProvider provider(ObjectMeta meta, Fields spec) {
    ExternalProvider.Api api = spec.enumValue("api", ExternalProvider.Api.class, ExternalProvider.Api::yamlName);
    if (!spec.has("api")) {
      spec.missing("api", "openai or anthropic");
    }
    String baseUrl = spec.requiredStr("baseUrl", "such as https://api.openai.com/v1");
    URI base = spec.has("baseUrl") ? b.checkUrl(spec, "baseUrl", baseUrl, true) : null;
    ExternalProvider.SecretRef key = secretRef(spec);
    List<ExternalProvider.Model> models = spec.list("models", this::providerModel);
    if (!spec.has("models")) {
      spec.missing("models", "the models offered, such as [{name: gpt-4o-mini}]");
    } else if (models.isEmpty() && spec.peek("models") instanceof YNode.YList l && l.items().isEmpty()) {
      b.error(spec.pos("models"), spec.child("models"), "no models: the provider could serve nothing; list the models "
          + "it offers, such as [{name: gpt-4o-mini}], or remove the provider");
    }
    Set<String> names = new HashSet<>();
    for (int i = 0; i < models.size(); i++) {
      if (!names.add(models.get(i).name())) {
        String p = spec.child("models") + "[" + i + "]";
        b.error(b.positions.getOrDefault(p, spec.pos), p, "model '" + models.get(i).name() + "' is listed twice");
      }
    }
    Price price = b.price(spec, "price");
    ExternalProvider.Timeouts timeouts = ExternalProvider.Timeouts.DEFAULT;
    Fields t = spec.obj("timeouts");
    if (t != null) {
      Duration connect = positiveTimeout(t, "connect");
      Duration first = positiveTimeout(t, "firstToken");
      Duration request = positiveTimeout(t, "request");
      t.done();
      timeouts = new ExternalProvider.Timeouts(connect != null ? connect : timeouts.connect(),
          first != null ? first : timeouts.firstToken(), request != null ? request : timeouts.request());
    }
    spec.done();
    return new ExternalProvider(meta, new ExternalProvider.Spec(api == null ? ExternalProvider.Api.OPENAI : api,
        base == null ? URI.create("https://invalid.invalid") : base, key == null
            ? new ExternalProvider.SecretRef("INVALID", null) : key, models, price, timeouts));
  }

  private @Nullable Duration positiveTimeout(Fields t, String key) {
    Duration d = t.duration(key);
    if (d != null && d.isZero()) {
      b.error(t.pos(key), t.child(key), "a timeout of 0 would fail every request to this provider; give a positive "
          + "duration such as 30s, or remove it for the default");
      return null;
    }
    return d;
  }

  private ExternalProvider.@Nullable SecretRef secretRef(Fields spec) {
    YNode n = spec.get("apiKey");
    if (n == null) {
      spec.missing("apiKey", "where the key comes from: {env: VARIABLE} or {file: /path/to/key}");
      return null;
    }
    if (n instanceof YNode.YScalar) {
      b.error(n.pos(), spec.child("apiKey"), "API key written inline: never put keys in a configuration; use "
          + "apiKey: {env: VARIABLE} or apiKey: {file: /path/to/key}");
      return null;
    }
    Fields o = b.obj(n, spec.child("apiKey"));
    if (o == null) {
      return null;
    }
    for (String inline : Binding.INLINE_KEY_FIELDS) {
      if (o.has(inline)) {
        b.error(o.keyPos(inline), o.child(inline), "API key written inline: never put keys in a configuration; "
            + "use env: VARIABLE or file: /path/to/key");
        o.ignore(inline);
      }
    }
    String env = o.str("env");
    String file = o.str("file");
    if (env != null && !ENV_NAME.matcher(env).matches()) {
      b.error(o.pos("env"), o.child("env"), "'" + env + "' is not an environment variable name");
    }
    if (env != null && file != null) {
      b.error(o.pos, o.path, "give either env or file, not both");
    } else if (env == null && file == null && o.errorsBefore == b.errors) {
      b.error(o.pos, o.path, "apiKey needs env: VARIABLE or file: /path/to/key");
    }
    o.done();
    return new ExternalProvider.SecretRef(env, file);
  }

  private ExternalProvider.@Nullable Model providerModel(YNode node, String path) {
    Fields o = b.obj(node, path);
    if (o == null) {
      return null;
    }
    String name = o.requiredStr("name", "the provider's model name");
    Price price = b.price(o, "price");
    o.done();
    return new ExternalProvider.Model(name, price);
  }
}
