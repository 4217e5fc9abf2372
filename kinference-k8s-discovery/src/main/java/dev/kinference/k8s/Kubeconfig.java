package dev.kinference.k8s;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;

/**
 * Reads the part of a kubeconfig file that a development setup needs: one context's cluster (server, CA, TLS
 * verification) and user (token, token file, client certificate, exec plugin), and its namespace. Relative file
 * paths are resolved against the kubeconfig's directory, as kubectl does. Stateless.
 */
final class Kubeconfig {

  private Kubeconfig() {}

  static KubernetesConfig parse(Path file, @Nullable String contextName) {
    String where = "kubeconfig " + file;
    Object root;
    try {
      LoadSettings settings = LoadSettings.builder().setLabel(file.toString()).setAllowDuplicateKeys(false)
          .setMaxAliasesForCollections(50).build();
      root = new Load(settings).loadFromString(new String(KubernetesConfig.read(file), StandardCharsets.UTF_8));
    } catch (YamlEngineException e) {
      throw new IllegalArgumentException(where + " is not valid YAML: " + e.getMessage(), e);
    }
    Map<String, Object> doc = map(root, where);
    String ctxName = contextName != null ? contextName : string(doc, "current-context");
    if (ctxName == null || ctxName.isBlank()) {
      throw new IllegalArgumentException(where + " has no current-context; name a context");
    }
    Map<String, Object> context = named(doc, "contexts", ctxName, "context", where);
    String clusterName = string(context, "cluster");
    String userName = string(context, "user");
    if (clusterName == null) {
      throw new IllegalArgumentException(where + ": context " + ctxName + " names no cluster");
    }
    Map<String, Object> cluster = named(doc, "clusters", clusterName, "cluster", where);
    String server = string(cluster, "server");
    if (server == null || server.isBlank()) {
      throw new IllegalArgumentException(where + ": cluster " + clusterName + " has no server");
    }
    Path dir = file.toAbsolutePath().getParent();
    String clusterWhere = where + ": cluster " + clusterName;
    KubernetesConfig.Builder b;
    try {
      b = KubernetesConfig.builder(URI.create(server.strip()));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(clusterWhere + " server: " + e.getMessage(), e);
    }
    String ns = string(context, "namespace");
    if (ns != null && !ns.isBlank()) {
      b.namespace(ns);
    }
    if (Boolean.TRUE.equals(cluster.get("insecure-skip-tls-verify"))) {
      b.insecureSkipTlsVerify(true);
    } else {
      Field ca = bytes(cluster, "certificate-authority-data", "certificate-authority", dir, clusterWhere);
      if (ca != null) {
        try {
          b.certificateAuthority(ca.bytes());
        } catch (IllegalArgumentException e) {
          throw ca.invalid(e);
        }
      }
    }
    if (userName != null) {
      Map<String, Object> user = named(doc, "users", userName, "user", where);
      configureUser(b, user, userName, dir, where);
    }
    return b.build();
  }

  private static void configureUser(KubernetesConfig.Builder b, Map<String, Object> user, String userName,
      @Nullable Path dir, String where) {
    String userWhere = where + ": user " + userName;
    String token = string(user, "token");
    String tokenFile = string(user, "tokenFile");
    Field cert = bytes(user, "client-certificate-data", "client-certificate", dir, userWhere);
    Field key = bytes(user, "client-key-data", "client-key", dir, userWhere);
    if (token != null && !token.isBlank()) {
      b.token(token);
    } else if (tokenFile != null && !tokenFile.isBlank()) {
      Path path = resolve(dir, tokenFile);
      // Like kubectl, report a missing token file now rather than at the first request.
      if (!Files.isRegularFile(path)) {
        throw new IllegalArgumentException(userWhere + " tokenFile: no such file " + path);
      }
      b.tokenFile(path);
    } else if (user.get("exec") != null) {
      b.tokenSource(exec(map(user.get("exec"), userWhere + " exec"), dir, userWhere));
    } else if (user.get("auth-provider") != null) {
      throw new IllegalArgumentException(where + ": user " + userName
          + " uses an auth-provider, which is not supported; use a token or an exec plugin");
    } else if (user.get("username") != null) {
      throw new IllegalArgumentException(where + ": user " + userName
          + " uses basic authentication, which Kubernetes no longer supports");
    }
    if (cert != null || key != null) {
      if (cert == null || key == null) {
        throw new IllegalArgumentException(where + ": user " + userName
            + " needs both a client certificate and a client key");
      }
      List<X509Certificate> chain;
      try {
        chain = Pem.certificates(cert.bytes(), "client certificate");
      } catch (IllegalArgumentException e) {
        throw cert.invalid(e);
      }
      try {
        Pem.privateKey(key.bytes(), "client key");
      } catch (IllegalArgumentException e) {
        throw key.invalid(e);
      }
      try {
        b.clientCertificate(cert.bytes(), key.bytes());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(userWhere + ": " + e.getMessage() + " ("
            + chain.get(0).getSubjectX500Principal().getName() + ")", e);
      }
    }
  }

  private static TokenSource exec(Map<String, Object> exec, @Nullable Path dir, String where) {
    String command = string(exec, "command");
    if (command == null || command.isBlank()) {
      throw new IllegalArgumentException(where + ": exec plugin has no command");
    }
    command = command.strip();
    // As kubectl does: a command with a directory part is relative to the kubeconfig, a bare name is on the PATH.
    if (command.indexOf('/') >= 0 || command.indexOf(java.io.File.separatorChar) >= 0) {
      command = resolve(dir, command).toString();
    }
    List<String> cmd = new ArrayList<>();
    cmd.add(command);
    Object args = exec.get("args");
    if (args instanceof List<?> list) {
      for (Object a : list) {
        cmd.add(String.valueOf(a));
      }
    }
    Map<String, String> env = new LinkedHashMap<>();
    Object envList = exec.get("env");
    if (envList instanceof List<?> list) {
      for (Object e : list) {
        Map<String, Object> kv = map(e, where + ": exec env");
        String name = string(kv, "name");
        String value = string(kv, "value");
        if (name != null && value != null) {
          env.put(name, value);
        }
      }
    }
    String apiVersion = string(exec, "apiVersion");
    return new TokenSource.Exec(cmd, env,
        apiVersion != null ? apiVersion : "client.authentication.k8s.io/v1", string(exec, "installHint"));
  }

  /** The bytes of a {@code *-data} or file field, and where they came from, to name it in errors. */
  private static final class Field {
    private final byte[] bytes;
    private final String where;

    Field(byte[] bytes, String where) {
      this.bytes = bytes;
      this.where = where;
    }

    byte[] bytes() {
      return bytes;
    }

    IllegalArgumentException invalid(IllegalArgumentException e) {
      return new IllegalArgumentException(where + ": " + e.getMessage(), e);
    }
  }

  private static @Nullable Field bytes(Map<String, Object> m, String dataKey, String fileKey, @Nullable Path dir,
      String where) {
    String data = string(m, dataKey);
    if (data != null && !data.isBlank()) {
      try {
        return new Field(Base64.getMimeDecoder().decode(data.strip()), where + " " + dataKey);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(where + ": " + dataKey + " is not base64", e);
      }
    }
    String f = string(m, fileKey);
    if (f != null && !f.isBlank()) {
      Path path = resolve(dir, f);
      try {
        return new Field(Files.readAllBytes(path), where + " " + fileKey);
      } catch (IOException e) {
        throw new IllegalArgumentException(where + " " + fileKey + ": cannot read " + path + " ("
            + e.getClass().getSimpleName() + ")", e);
      }
    }
    return null;
  }

  private static Path resolve(@Nullable Path dir, String file) {
    String f = file.strip();
    if (f.startsWith("~/")) {
      return Path.of(System.getProperty("user.home"), f.substring(2));
    }
    Path p = Path.of(f);
    return p.isAbsolute() || dir == null ? p : dir.resolve(p);
  }

  private static Map<String, Object> named(Map<String, Object> doc, String listKey, String name, String itemKey,
      String where) {
    Object list = doc.get(listKey);
    if (list instanceof List<?> items) {
      for (Object item : items) {
        Map<String, Object> entry = map(item, where + ": " + listKey);
        if (name.equals(string(entry, "name"))) {
          Object inner = entry.get(itemKey);
          return inner == null ? Map.of() : map(inner, where + ": " + listKey + " " + name);
        }
      }
    }
    throw new IllegalArgumentException(where + ": no " + itemKey + " named '" + name + "' in " + listKey);
  }

  @SuppressWarnings("unchecked") // a YAML mapping: keys are strings in every kubeconfig
  private static Map<String, Object> map(@Nullable Object o, String where) {
    if (o instanceof Map<?, ?> m) {
      return (Map<String, Object>) m;
    }
    throw new IllegalArgumentException(where + " is not a mapping");
  }

  private static @Nullable String string(Map<String, Object> m, String key) {
    Object v = m.get(key);
    return v == null ? null : String.valueOf(v);
  }
}
