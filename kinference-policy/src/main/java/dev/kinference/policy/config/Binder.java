package dev.kinference.policy.config;

import dev.kinference.policy.classify.BuiltinPersonalDataDetector;
import dev.kinference.policy.classify.PersonalData;
import dev.kinference.policy.classify.PersonalDataKind;
import dev.kinference.policy.model.ExternalProvider;
import dev.kinference.policy.model.InferencePolicy;
import dev.kinference.policy.model.InferencePool;
import dev.kinference.policy.model.ModelAlias;
import dev.kinference.policy.model.ObjectMeta;
import dev.kinference.policy.model.Resource;
import dev.kinference.policy.model.Tenant;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Binds one document to a {@link Resource}, reporting every structural problem (unknown fields with suggestions,
 * wrong types, missing required fields, values out of range, limits that can never admit a request, keys written
 * inline) and recording the position of each field for later cross-resource checks. Not thread-safe; one binder
 * per document. Each kind's spec has its own binder ({@link PoolBinder}, {@link AliasBinder}, {@link ProviderBinder},
 * {@link TenantBinder}, {@link PolicyBinder}); the values they read and the problems they report go through one
 * {@link Binding}.
 */
final class Binder {

  static final Set<String> KINDS = Set.of(InferencePool.KIND, ModelAlias.KIND, ExternalProvider.KIND, Tenant.KIND,
      InferencePolicy.KIND);
  private static final Pattern DNS_NAME =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  /** Metadata fields a Kubernetes API server adds; ignored. */
  private static final Set<String> SERVER_METADATA = Set.of("uid", "resourceVersion", "generation",
      "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "ownerReferences",
      "finalizers", "generateName", "selfLink");
  private static final BuiltinPersonalDataDetector SECRETS = new BuiltinPersonalDataDetector();

  private final Binding b;

  private Binder(Problems problems) {
    this.b = new Binding(problems);
  }

  /** A bound document: the resource (null when it has errors) and the positions of its fields. */
  record Bound(@Nullable Resource resource, @Nullable String kind, @Nullable String name,
      Map<String, YNode.Pos> positions, YNode.Pos start) {}

  static Bound bind(YNode root, YNode.Pos start, Problems problems) {
    Binder binder = new Binder(problems);
    Binding b = binder.b;
    int before = problems.list().size();
    Resource r = null;
    String kind = null;
    String name = null;
    Fields top = b.obj(root, "");
    if (top != null) {
      String apiVersion = top.str("apiVersion");
      if (apiVersion == null) {
        top.missing("apiVersion", "write apiVersion: " + Resource.API_VERSION);
      } else if (!apiVersion.equals(Resource.API_VERSION)) {
        b.error(top.pos("apiVersion"), "apiVersion", "unsupported apiVersion '" + apiVersion + "'; this version "
            + "reads " + Resource.API_VERSION);
      }
      kind = top.str("kind");
      ObjectMeta meta = binder.metadata(top);
      name = meta == null ? null : meta.name();
      top.ignore("status");
      if (kind == null) {
        top.missing("kind", "one of " + String.join(", ", new java.util.TreeSet<>(KINDS)));
        top.ignore("spec");
      } else if (!KINDS.contains(kind)) {
        b.error(top.pos("kind"), "kind", "unknown kind '" + kind + "'" + Suggestions.suggest(kind, KINDS)
            + "; known kinds: "
            + String.join(", ", new java.util.TreeSet<>(KINDS)));
        top.ignore("spec");
      } else {
        Fields spec = top.requiredObj("spec");
        if (spec != null && meta != null) {
          r = switch (kind) {
            case InferencePool.KIND -> new PoolBinder(b).pool(meta, spec);
            case ModelAlias.KIND -> new AliasBinder(b).alias(meta, spec);
            case ExternalProvider.KIND -> new ProviderBinder(b).provider(meta, spec);
            case Tenant.KIND -> new TenantBinder(b).tenant(meta, spec);
            case InferencePolicy.KIND -> new PolicyBinder(b).policy(meta, spec);
            default -> null;
          };
        } else if (spec != null) {
          spec.ignoreAll();
        }
      }
      top.done();
    }
    // secrets anywhere, unless the field was already reported as a key written inline
    Set<YNode.Pos> reported = new HashSet<>();
    for (Problem p : problems.list().subList(before, problems.list().size())) {
      reported.add(new YNode.Pos(p.line(), p.column()));
    }
    binder.scanSecrets(root, "", new HashSet<>(), reported);
    boolean failed = b.errors > 0 || problems.list().subList(before, problems.list().size()).stream()
        .anyMatch(Problem::isError);
    return new Bound(failed ? null : r, kind, name, Map.copyOf(b.positions), start);
  }

  private @Nullable ObjectMeta metadata(Fields top) {
    Fields m = top.requiredObj("metadata");
    if (m == null) {
      return null;
    }
    String name = m.str("name");
    if (name == null) {
      m.missing("name", "every resource needs a name");
    } else if (name.length() > 253 || !DNS_NAME.matcher(name).matches()) {
      b.error(m.pos("name"), m.child("name"), "invalid name '" + name + "': use lower-case letters, digits, '-' and "
          + "'.', starting and ending with a letter or digit (at most 253 characters)");
    }
    String ns = m.str("namespace");
    Map<String, String> labels = m.strMap("labels");
    Map<String, String> annotations = m.strMap("annotations");
    SERVER_METADATA.forEach(m::ignore);
    m.done();
    return name == null ? null : new ObjectMeta(name, ns, labels, annotations);
  }

  /** Reports a string that looks like a secret anywhere in the document, unless already reported as a key. */
  private void scanSecrets(YNode n, String path, Set<YNode> seen, Set<YNode.Pos> reported) {
    if (!seen.add(n)) {
      return;
    }
    switch (n) {
      case YNode.YScalar s -> {
        if (s.type() == YNode.Type.STRING && s.value() != null && s.value().length() >= 15) {
          PersonalData found = SECRETS.detect(s.value());
          boolean already = s.pos().line() > 0 && reported.contains(s.pos());
          if (found.kinds().contains(PersonalDataKind.SECRET) && !already) {
            b.error(s.pos(), path, "this looks like a secret (API key or token) written inline; never put keys in a "
                + "configuration: reference them with apiKey.env or apiKey.file, and store tenants' keys as sha256");
          }
        }
      }
      case YNode.YMap m -> {
        for (YNode.Entry e : m.entries().values()) {
          scanSecrets(e.value(), path.isEmpty() ? e.key() : path + "." + e.key(), seen, reported);
        }
      }
      case YNode.YList l -> {
        for (int i = 0; i < l.items().size(); i++) {
          scanSecrets(l.items().get(i), path + "[" + i + "]", seen, reported);
        }
      }
    }
  }

  /** See {@link Durations#parse}. */
  static @Nullable Duration parseDuration(String text) {
    return Durations.parse(text);
  }
}
