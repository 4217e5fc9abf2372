package dev.kinference.k8s;

import io.fabric8.kubernetes.client.Config;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The files a fabric8 configuration was read from whose change calls for a new client: the kubeconfig files of its
 * context, cluster and user, and the cluster CA file (in a cluster, the service account's {@code ca.crt}).
 */
final class ConfigFiles {

  private ConfigFiles() {}

  static List<Path> files(Config config) {
    Set<Path> out = new LinkedHashSet<>();
    add(out, config.getFile());
    add(out, config.getFileWithCluster());
    add(out, config.getFileWithAuthInfo());
    String ca = config.getCaCertFile();
    if (ca != null && !ca.isBlank()) {
      out.add(Path.of(ca).toAbsolutePath());
    }
    return List.copyOf(new ArrayList<>(out));
  }

  private static void add(Set<Path> out, @Nullable File f) {
    if (f != null) {
      out.add(f.toPath().toAbsolutePath());
    }
  }

  /**
   * A digest of the files' contents. A file that cannot be read (briefly missing while a mounted Secret is
   * updated) changes it too; the new client then replaces the current one only once it has listed everything, so
   * that costs a retry, never the endpoints.
   */
  static String fingerprint(List<Path> files) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      for (Path p : files) {
        md.update(p.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        try {
          md.update(Files.readAllBytes(p));
        } catch (IOException e) {
          md.update((byte) 0);
        }
      }
      return HexFormat.of().formatHex(md.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
