package dev.kinference.policy.limits;

import dev.kinference.plugin.PluginSet;
import dev.kinference.plugin.Plugins;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Locale;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/** Opens the state store a URI names: {@code memory}, or a shared store found by its scheme. */
public final class StateStores {

  /** The default time any one call to a shared store may take. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(500);

  private StateStores() {}

  /**
   * The store {@code uri} names: {@code memory} (this process only), or for example {@code redis://HOST:PORT/DB}
   * through a {@link StateStoreFactory} on the class or module path. A shared store is returned bare; wrap it in a
   * {@link ResilientStateStore} to choose what happens while it is unreachable.
   *
   * @throws IllegalArgumentException for a malformed URI or a scheme no factory opens (the message lists those
   *     that are available)
   */
  public static RateLimitStore open(String uri, @Nullable String password, Duration timeout) {
    String text = uri.strip();
    if (text.equalsIgnoreCase("memory") || text.equalsIgnoreCase("in-memory")) {
      return new InMemoryRateLimitStore();
    }
    URI parsed;
    try {
      parsed = new URI(text);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("not a state store URI: " + redact(text) + " (" + e.getReason() + ")", e);
    }
    String scheme = parsed.getScheme() == null ? "" : parsed.getScheme().toLowerCase(Locale.ROOT);
    PluginSet<StateStoreFactory> factories = Plugins.load(StateStoreFactory.class);
    TreeSet<String> known = new TreeSet<>();
    known.add("memory");
    for (StateStoreFactory f : factories.providers()) {
      if (f.schemes().contains(scheme)) {
        return f.open(new StateStoreFactory.StateStoreSettings(parsed, password, timeout));
      }
      known.addAll(f.schemes());
    }
    throw new IllegalArgumentException("no state store for '" + redact(text) + "': use one of " + known
        + (known.size() == 1 ? " (add kinference-state-redis for redis:// and rediss://)" : ""));
  }

  /**
   * {@code uri} with its user information replaced by {@code ***}, for messages and logs: Redis URIs put a password
   * there alone ({@code redis://PASSWORD@host}) as well as after a user name.
   */
  public static String redact(String uri) {
    return uri.replaceAll("(?<=://)[^@/?#]*@", "***@");
  }
}
