package dev.kinference.plugin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.routing.RoutingContext;
import dev.kinference.routing.Scorer;
import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PluginsTest {

  /** Sorts before the built-ins because of its order. */
  public static final class EarlyScorer extends NamedScorer {
    public EarlyScorer() {
      super("zz-early", -10);
    }
  }

  public static final class AlphaScorer extends NamedScorer {
    public AlphaScorer() {
      super("alpha", 0);
    }
  }

  /** Same name as a built-in but a later order: shadowed (a lower order would override the built-in). */
  public static final class ImpostorScorer extends NamedScorer {
    public ImpostorScorer() {
      super("prefix-overlap", 5);
    }
  }

  public static final class ThrowingScorer extends NamedScorer {
    public ThrowingScorer() {
      super("throwing", 0);
      throw new IllegalStateException("cannot start");
    }
  }

  public static final class BlankNameScorer extends NamedScorer {
    public BlankNameScorer() {
      super(" ", 0);
    }
  }

  abstract static class NamedScorer implements Scorer {
    private final String name;
    private final int order;

    NamedScorer(String name, int order) {
      this.name = name;
      this.order = order;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public int order() {
      return order;
    }

    @Override
    public void score(RoutingContext context, double[] scores) {
      java.util.Arrays.fill(scores, 0, context.candidateCount(), 0.5);
    }
  }

  /**
   * Regression: {@code session-residency} and {@code ttft-overflow} were listed in {@code META-INF/services} but not
   * in the module descriptor's {@code provides}, so an application on the module path, where {@link
   * java.util.ServiceLoader} reads only the descriptor, could not load the default profile (it names both).
   */
  @Test
  void theModuleDescriptorProvidesEveryBuiltInTheServiceFilesList() throws Exception {
    Path classes = Path.of(Scorer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    ModuleDescriptor descriptor;
    try (InputStream in = Files.newInputStream(classes.resolve("module-info.class"))) {
      descriptor = ModuleDescriptor.read(in);
    }
    Map<String, Set<String>> provided = new TreeMap<>();
    for (ModuleDescriptor.Provides p : descriptor.provides()) {
      provided.put(p.service(), new TreeSet<>(p.providers()));
    }
    Map<String, Set<String>> listed = new TreeMap<>();
    try (Stream<Path> files = Files.list(classes.resolve("META-INF/services"))) {
      for (Path file : files.toList()) {
        Set<String> providers = new TreeSet<>();
        for (String line : Files.readAllLines(file)) {
          if (!line.isBlank() && !line.startsWith("#")) {
            providers.add(line.strip());
          }
        }
        listed.put(file.getFileName().toString(), providers);
      }
    }
    assertThat(provided).isEqualTo(listed);
  }

  @Test
  void builtInsLoadInNameOrder() {
    PluginSet<Scorer> scorers = Plugins.load(Scorer.class);
    assertThat(scorers.names()).containsExactly("in-flight", "kv-utilization", "new-prefix-headroom", "predicted-ttft",
        "prefix-home", "prefix-overlap", "prefix-rendezvous", "prefix-under-saturation", "queue-depth", "session-affinity",
        "session-residency", "ttft-overflow");
    assertThat(scorers.failures()).isEmpty();
  }

  @Test
  void orderIsDeterministicAndBrokenProvidersAreReportedAndSkipped(@TempDir Path dir) throws IOException {
    Path services = dir.resolve("META-INF/services");
    Files.createDirectories(services);
    Files.writeString(services.resolve(Scorer.class.getName()), String.join("\n",
        "# third-party scorers, deliberately in a scrambled order",
        ThrowingScorer.class.getName(),
        "com.example.DoesNotExist",
        ImpostorScorer.class.getName(),
        AlphaScorer.class.getName(),
        BlankNameScorer.class.getName(),
        EarlyScorer.class.getName()) + "\n");
    try (URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()},
        PluginsTest.class.getClassLoader())) {
      PluginSet<Scorer> scorers = Plugins.load(Scorer.class, loader);
      assertThat(scorers.names()).containsExactly("zz-early", "alpha", "in-flight", "kv-utilization",
          "new-prefix-headroom", "predicted-ttft", "prefix-home", "prefix-overlap", "prefix-rendezvous", "prefix-under-saturation", "queue-depth",
          "session-affinity", "session-residency", "ttft-overflow");
      assertThat(scorers.require("prefix-overlap")).isInstanceOf(dev.kinference.routing.PrefixOverlapScorer.class);
      List<PluginFailure> failures = scorers.failures();
      assertThat(failures).hasSize(4);
      assertThat(failures).anySatisfy(f -> assertThat(f.reason()).contains("DoesNotExist"));
      assertThat(failures).anySatisfy(f -> assertThat(f.reason()).contains("cannot start"));
      assertThat(failures).anySatisfy(f -> {
        assertThat(f.provider()).isEqualTo(BlankNameScorer.class.getName());
        assertThat(f.reason()).contains("blank");
      });
      assertThat(failures).anySatisfy(f -> {
        assertThat(f.provider()).isEqualTo(ImpostorScorer.class.getName());
        assertThat(f.reason()).contains("shadowed");
      });
    }
  }

  @Test
  void selectingAnUnknownNameListsTheKnownOnes() {
    PluginSet<Scorer> scorers = Plugins.load(Scorer.class);
    assertThat(scorers.find("nope")).isEmpty();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> scorers.require("nope"))
        .hasMessageContaining("no Scorer named 'nope'")
        .hasMessageContaining("predicted-ttft");
  }
}
