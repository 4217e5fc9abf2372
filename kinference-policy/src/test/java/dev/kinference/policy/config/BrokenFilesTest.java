package dev.kinference.policy.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The checker's messages on the committed broken files in {@code src/test/resources/broken}: each {@code X.yaml}
 * must produce exactly the lines of {@code X.expected}, and a configuration only when none is an error. Regenerate the expectations after a
 * deliberate change of wording with {@code -Dkinference.updateFixtures=true} and review the diff.
 */
class BrokenFilesTest {

  static Stream<String> fixtures() throws IOException, URISyntaxException {
    try (Stream<Path> files = Files.list(dir())) {
      return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".yaml")).sorted().toList().stream();
    }
  }

  private static Path dir() throws URISyntaxException {
    return Path.of(BrokenFilesTest.class.getResource("/broken/unknown-fields.yaml").toURI()).getParent();
  }

  @ParameterizedTest
  @MethodSource("fixtures")
  void reportsEveryProblemWithItsPosition(String name) throws Exception {
    String text = Files.readString(dir().resolve(name), StandardCharsets.UTF_8);
    LoadResult r = PolicyLoader.load(text, "broken/" + name);
    String expectedName = name.replace(".yaml", ".expected");
    if (Boolean.getBoolean("kinference.updateFixtures")) {
      Path src = Path.of("src/test/resources/broken").resolve(expectedName);
      Files.writeString(src, r.report(), StandardCharsets.UTF_8);
    }
    List<String> expected = Files.readAllLines(dir().resolve(expectedName), StandardCharsets.UTF_8);
    assertThat(r.report().lines().toList()).isEqualTo(expected);
    assertThat(r.problems()).isNotEmpty();
    assertThat(r.config() == null).as("a configuration exactly when there is no error").isEqualTo(r.hasErrors());
  }
}
