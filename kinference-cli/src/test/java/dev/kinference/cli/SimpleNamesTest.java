package dev.kinference.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 26: no two top-level main classes of different modules share a simple name, so a name in a stack trace, a
 * log line or ARCHITECTURE.md says which class it is. The CLI module runs it because it sits above every library
 * module; it reads the sources of every module of the repository (each directory beside this one with
 * {@code src/main/java}), tests and {@code package-info}/{@code module-info} excepted.
 */
class SimpleNamesTest {

  private static final Path REPOSITORY = Path.of("..").toAbsolutePath().normalize();
  private static final Set<String> EXEMPT = Set.of("package-info", "module-info");

  @Test
  void noSimpleNameIsUsedByTwoModules() throws IOException {
    assertThat(modulesByName(REPOSITORY).values().stream().flatMap(Set::stream).distinct())
        .as("modules found under " + REPOSITORY)
        .contains("kinference-core", "kinference-policy", "kinference-gateway", "kinference-cloud-fallback",
            "kinference-cli");
    assertThat(sharedNames(REPOSITORY))
        .as("simple names used in more than one module: rename one so it says what it is there")
        .isEmpty();
  }

  @Test
  void aNameInTwoModulesIsReportedWithBothModules(@TempDir Path repository) throws IOException {
    write(repository, "one/src/main/java/a/Caller.java");
    write(repository, "one/src/main/java/a/package-info.java");
    write(repository, "two/src/main/java/b/c/Caller.java");
    write(repository, "two/src/main/java/b/package-info.java");
    write(repository, "two/src/main/java/b/Other.java");
    write(repository, "two/src/test/java/b/Other.java");
    write(repository, "three/src/test/java/a/Caller.java");

    assertThat(sharedNames(repository)).isEqualTo(Map.of("Caller", Set.of("one", "two")));
  }

  /** Simple names found in more than one module, with the modules. */
  private static Map<String, Set<String>> sharedNames(Path repository) throws IOException {
    Map<String, Set<String>> shared = modulesByName(repository);
    shared.values().removeIf(m -> m.size() < 2);
    return shared;
  }

  private static Map<String, Set<String>> modulesByName(Path repository) throws IOException {
    Map<String, Set<String>> modulesByName = new TreeMap<>();
    try (Stream<Path> dirs = Files.list(repository)) {
      for (Path module : dirs.filter(d -> Files.isDirectory(d.resolve("src/main/java"))).sorted().toList()) {
        try (Stream<Path> files = Files.walk(module.resolve("src/main/java"))) {
          files.map(f -> f.getFileName().toString())
              .filter(f -> f.endsWith(".java"))
              .map(f -> f.substring(0, f.length() - ".java".length()))
              .filter(n -> !EXEMPT.contains(n))
              .forEach(n -> modulesByName.computeIfAbsent(n, k -> new TreeSet<>())
                  .add(module.getFileName().toString()));
        }
      }
    }
    return modulesByName;
  }

  private static void write(Path repository, String file) throws IOException {
    Files.createDirectories(repository.resolve(file.substring(0, file.lastIndexOf('/'))));
    Files.writeString(repository.resolve(file), "// " + file + "\n");
  }
}
