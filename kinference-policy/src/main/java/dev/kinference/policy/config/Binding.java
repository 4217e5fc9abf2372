package dev.kinference.policy.config;

import dev.kinference.policy.model.FallbackRef;
import dev.kinference.policy.model.Price;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * One document being bound: its problems, the position of each field read, and the readers of values more than one
 * kind uses (a URL, a price, a fallback). Not thread-safe; one per document.
 */
final class Binding {

  /** Fields that hold a key when someone writes it inline; a key's place is the environment or a file. */
  static final Set<String> INLINE_KEY_FIELDS = Set.of("value", "key", "apiKey", "secret", "token");

  private final Problems problems;
  /** Each field's position by path, for problems found later across resources. */
  final Map<String, YNode.Pos> positions = new HashMap<>();
  /** Errors reported so far; readers compare it to tell whether a part had errors of its own. */
  int errors;

  Binding(Problems problems) {
    this.problems = problems;
  }

  // ---- problems and the tree -------------------------------------------------------------------------------------

  void error(YNode.Pos pos, String path, String message) {
    errors++;
    problems.error(pos, path, message);
  }

  void warn(YNode.Pos pos, String path, String message) {
    problems.warn(pos, path, message);
  }

  @Nullable Fields obj(YNode n, String path) {
    positions.putIfAbsent(path, n.pos());
    if (n instanceof YNode.YMap m) {
      return new Fields(this, m, path);
    }
    error(n.pos(), path, "expected a mapping, got " + YNode.describe(n));
    return null;
  }

  @Nullable String string(YNode n, String path) {
    if (n instanceof YNode.YScalar s && s.value() != null) {
      if (s.type() == YNode.Type.STRING) {
        return s.value();
      }
      error(n.pos(), path, "expected a string, got " + YNode.describe(n) + " (quote it: \"" + s.value() + "\")");
      return null;
    }
    error(n.pos(), path, "expected a string, got " + YNode.describe(n));
    return null;
  }

  <E extends Enum<E>> @Nullable E enumValue(YNode n, String path, Class<E> type,
      java.util.function.Function<E, String> yamlName) {
    String s = string(n, path);
    if (s == null) {
      return null;
    }
    List<String> names = new ArrayList<>();
    for (E e : type.getEnumConstants()) {
      String name = yamlName.apply(e);
      if (name.equalsIgnoreCase(s)) {
        return e;
      }
      names.add(name);
    }
    error(n.pos(), path, "'" + s + "' is not one of " + String.join(", ", names) + Suggestions.suggest(s, names));
    return null;
  }

  // ---- values more than one kind reads ---------------------------------------------------------------------------

  /** An endpoint's or provider's URL: http(s), a host, no credentials; over plain http to a remote host, a warning. */
  @Nullable URI checkUrl(Fields o, String key, String url, boolean external) {
    try {
      URI u = new URI(url);
      if (!"http".equals(u.getScheme()) && !"https".equals(u.getScheme())) {
        error(o.pos(key), o.child(key), "'" + url + "' is not an http or https URL");
        return null;
      }
      if (u.getHost() == null) {
        error(o.pos(key), o.child(key), "'" + url + "' has no host");
        return null;
      }
      if (u.getUserInfo() != null) {
        error(o.pos(key), o.child(key), "credentials written inline in the URL; use apiKey.env or apiKey.file");
        return null;
      }
      if (external && "http".equals(u.getScheme()) && !isLocalHost(u.getHost())) {
        warn(o.pos(key), o.child(key), "prompts and the API key would travel in clear text over http");
      }
      return u;
    } catch (URISyntaxException e) {
      error(o.pos(key), o.child(key), "invalid URL '" + url + "': " + e.getReason());
      return null;
    }
  }

  private static boolean isLocalHost(String host) {
    return host.equals("localhost") || host.equals("127.0.0.1") || host.equals("[::1]") || host.equals("::1");
  }

  /** A fallback of an alias or a policy action: {provider, model} or {alias}. */
  @Nullable FallbackRef fallbackRef(YNode node, String path) {
    Fields o = obj(node, path);
    if (o == null) {
      return null;
    }
    String provider = o.str("provider");
    String model = o.str("model");
    String alias = o.str("alias");
    if (alias != null && (provider != null || model != null)) {
      error(o.pos, o.path, "a fallback is either {provider, model} or {alias}, not both");
    } else if (alias == null && (provider == null || model == null)) {
      error(o.pos, o.path, "a fallback needs provider and model (or alias)");
    }
    o.done();
    return new FallbackRef(provider, model, alias);
  }

  /** A price per million tokens (a pool's, a provider's, or one of its models'). */
  @Nullable Price price(Fields parent, String key) {
    Fields o = parent.obj(key);
    if (o == null) {
      return null;
    }
    Double input = o.number("input", 0, 1e9);
    Double cached = o.number("cachedInput", 0, 1e9);
    Double output = o.number("output", 0, 1e9);
    if (input == null && output == null && cached == null && o.errorsBefore == errors) {
      error(o.pos, o.path, "a price needs input and output (per million tokens)");
    }
    o.done();
    return new Price(input == null ? 0 : input, cached, output == null ? 0 : output);
  }
}
