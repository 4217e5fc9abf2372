package dev.kinference.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

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
    Map<String, Set<String>> modulesByName = new TreeMap<>();
    List<String> modules = new ArrayList<>();
    try (Stream<Path> dirs = Files.list(REPOSITORY)) {
      for (Path module : dirs.filter(d -> Files.isDirectory(d.resolve("src/main/java"))).sorted().toList()) {
        String moduleName = module.getFileName().toString();
        modules.add(moduleName);
        for (String name : classNames(module.resolve("src/main/java"))) {
          modulesByName.computeIfAbsent(name, n -> new TreeSet<>()).add(moduleName);
        }
      }
    }
    assertThat(modules).as("modules found under " + REPOSITORY)
        .contains("kinference-core", "kinference-policy", "kinference-gateway", "kinference-cloud-fallback",
            "kinference-cli");

    Map<String, Set<String>> shared = new TreeMap<>(modulesByName);
    shared.values().removeIf(m -> m.size() < 2);
    assertThat(shared).as("simple names used in more than one module: rename one so it says what it is there")
        .isEmpty();
  }

  @Test
  void theWalkFindsEachModulesTopLevelClasses() throws IOException {
    // Guards the walk itself, so the check above cannot pass by finding nothing.
    assertThat(classNames(REPOSITORY.resolve("kinference-policy/src/main/java"))).contains("Caller", "Binder");
    assertThat(classNames(REPOSITORY.resolve("kinference-gateway/src/main/java")))
        .contains("CallerIdentity").doesNotContain("Caller", "package-info");
  }

  private static Set<String> classNames(Path sourceRoot) throws IOException {
    Set<String> names = new TreeSet<>();
    try (Stream<Path> files = Files.walk(sourceRoot)) {
      files.map(f -> f.getFileName().toString())
          .filter(f -> f.endsWith(".java"))
          .map(f -> f.substring(0, f.length() - ".java".length()))
          .filter(n -> !EXEMPT.contains(n))
          .forEach(names::add);
    }
    return names;
  }
}
