package dev.kinference.policy.config;

import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Reads and validates policy configurations. Every entry point reports every problem it finds at once, never
 * throws for bad input, and builds a {@link PolicyConfig} only when there is no error. The offline checker, the
 * runtime loader, the hot reload and Kubernetes custom-resource watches all use these same checks.
 *
 * <ul>
 *   <li>{@link #load(Collection)}: files and directories (every {@code *.yaml} and {@code *.yml} below a directory,
 *       skipping hidden entries such as a ConfigMap's {@code ..data}), several documents per file separated by
 *       {@code ---};</li>
 *   <li>{@link #load(String, String)}: YAML (or JSON) text;</li>
 *   <li>{@link #parse(Map, String)} and {@link #validate(Map, String)}: one resource already parsed into maps and
 *       lists (a custom resource from the Kubernetes API), checked on its own;</li>
 *   <li>{@link #build(List)}: the cross-resource checks over documents read separately.</li>
 * </ul>
 * Stateless and thread-safe.
 */
public final class PolicyLoader {

  /** Files larger than this are refused. */
  public static final long MAX_FILE_BYTES = 4L * 1024 * 1024;

  private PolicyLoader() {}

  /** Loads files and directories. */
  public static LoadResult load(Collection<Path> paths) {
    List<Problem> problems = new ArrayList<>();
    List<Parsed> docs = new ArrayList<>();
    List<String> sources = new ArrayList<>();
    for (Path path : paths) {
      for (Path file : yamlFiles(path, problems)) {
        String source = file.toString();
        sources.add(source);
        String text = readText(file, source, problems);
        if (text != null) {
          docs.addAll(read(text, source));
        }
      }
    }
    LoadResult built = build(docs);
    problems.addAll(built.problems());
    PolicyConfig config = built.config();
    return new LoadResult(config != null && problems.stream().noneMatch(Problem::isError)
        ? new PolicyConfig(config.resources(), sources) : null, problems, sources);
  }

  /** Loads files and directories. */
  public static LoadResult load(Path... paths) {
    return load(List.of(paths));
  }

  /** Loads YAML or JSON text holding one or more documents; {@code source} names it in problems. */
  public static LoadResult load(String text, String source) {
    LoadResult built = build(read(text, source));
    PolicyConfig config = built.config();
    return new LoadResult(config == null ? null : new PolicyConfig(config.resources(), List.of(source)),
        built.problems(), List.of(source));
  }

  /**
   * Reads every document of YAML or JSON text and checks each on its own; run {@link #build} over the result
   * (possibly with documents from other sources) for the cross-resource checks. A text that is not YAML yields one
   * {@link Parsed} without resource holding the syntax problem.
   */
  public static List<Parsed> read(String text, String source) {
    Problems syntax = new Problems(source);
    List<YamlReader.Document> documents = YamlReader.read(text, syntax);
    List<Parsed> out = new ArrayList<>();
    if (!syntax.list().isEmpty()) {
      out.add(new Parsed(null, null, null, source, syntax.list(), Map.of(), YNode.Pos.UNKNOWN));
    }
    for (YamlReader.Document d : documents) {
      if (d.root() instanceof YNode.YScalar s && s.type() == YNode.Type.NULL) {
        continue; // an empty document, such as after a trailing ---
      }
      out.add(bind(d.root(), d.start(), source));
    }
    return out;
  }

  /**
   * Checks one resource given as a tree of {@link Map}s, {@link List}s, strings, numbers and booleans (such as a
   * Kubernetes custom resource decoded from JSON). Problems carry {@code source} and a field path; their line is 0.
   */
  public static Parsed parse(Map<String, ?> resource, String source) {
    Problems problems = new Problems(source);
    YNode root = TreeReader.read(resource, problems);
    Parsed p = bind(root, YNode.Pos.UNKNOWN, source);
    if (problems.list().isEmpty()) {
      return p;
    }
    List<Problem> all = new ArrayList<>(problems.list());
    all.addAll(p.problems());
    return new Parsed(null, p.kind(), p.name(), source, all, p.positions, p.start);
  }

  /** The problems of one resource given as a tree, checked on its own (see {@link #parse(Map, String)}). */
  public static List<Problem> validate(Map<String, ?> resource, String source) {
    return parse(resource, source).problems();
  }

  /**
   * Runs the cross-resource checks (duplicate names, references, cycles, shadowed rules, tenants' identities) over
   * documents read by {@link #read} or {@link #parse}, and builds the configuration when no document has an error.
   * The result's problems include each document's own.
   */
  public static LoadResult build(List<Parsed> docs) {
    List<Problem> problems = new ArrayList<>();
    List<String> sources = new ArrayList<>();
    for (Parsed d : docs) {
      problems.addAll(d.problems());
      if (!sources.contains(d.source())) {
        sources.add(d.source());
      }
    }
    List<Problem> cross = new ArrayList<>();
    var resources = new ConfigValidator(docs, cross).validate();
    problems.addAll(cross);
    boolean errors = problems.stream().anyMatch(Problem::isError);
    return new LoadResult(errors ? null : new PolicyConfig(resources, sources), problems, sources);
  }

  private static Parsed bind(YNode root, YNode.Pos start, String source) {
    Problems problems = new Problems(source);
    Binder.Bound b = Binder.bind(root, start, problems);
    return new Parsed(b.resource(), b.kind(), b.name(), source, problems.list(), b.positions(), b.start());
  }

  private static List<Path> yamlFiles(Path path, List<Problem> problems) {
    if (Files.isRegularFile(path)) {
      return List.of(path);
    }
    if (!Files.isDirectory(path)) {
      problems.add(new Problem(Problem.Severity.ERROR, path.toString(), 0, 0, "", "no such file or directory"));
      return List.of();
    }
    List<Path> files = new ArrayList<>();
    for (Path p : tree(path, problems, false)) {
      String n = p.getFileName().toString();
      if ((n.endsWith(".yaml") || n.endsWith(".yml")) && Files.isRegularFile(p)) {
        files.add(p);
      }
    }
    files.sort(null);
    if (files.isEmpty()) {
      problems.add(new Problem(Problem.Severity.ERROR, path.toString(), 0, 0, "",
          "no .yaml or .yml files in this directory"));
    }
    return files;
  }

  /**
   * Every entry below {@code root} (directories when {@code directories}, else the others), at any depth, following
   * symbolic links but not hidden entries (a ConfigMap's {@code ..data}); a link back to a directory it is in is
   * reported (when {@code problems} is not null) and not followed, as is an entry that cannot be read.
   */
  static List<Path> tree(Path root, @Nullable List<Problem> problems, boolean directories) {
    List<Path> out = new ArrayList<>();
    try {
      Files.walkFileTree(root, java.util.EnumSet.of(java.nio.file.FileVisitOption.FOLLOW_LINKS), Integer.MAX_VALUE,
          new java.nio.file.SimpleFileVisitor<>() {
            @Override
            public java.nio.file.FileVisitResult preVisitDirectory(Path dir,
                java.nio.file.attribute.BasicFileAttributes attrs) {
              if (!dir.equals(root) && hidden(root, dir)) {
                return java.nio.file.FileVisitResult.SKIP_SUBTREE;
              }
              if (directories) {
                out.add(dir);
              }
              return java.nio.file.FileVisitResult.CONTINUE;
            }

            @Override
            public java.nio.file.FileVisitResult visitFile(Path file,
                java.nio.file.attribute.BasicFileAttributes attrs) {
              if (!directories && !hidden(root, file)) {
                out.add(file);
              }
              return java.nio.file.FileVisitResult.CONTINUE;
            }

            @Override
            public java.nio.file.FileVisitResult visitFileFailed(Path file, IOException e) {
              if (problems != null && !hidden(root, file)) {
                problems.add(new Problem(Problem.Severity.ERROR, file.toString(), 0, 0, "",
                    e instanceof java.nio.file.FileSystemLoopException
                        ? "symbolic link loop: this directory is also one of its own parents; not read (remove the "
                            + "link)"
                        : "cannot read: " + e));
              }
              return java.nio.file.FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException | java.io.UncheckedIOException e) {
      if (problems != null) {
        problems.add(new Problem(Problem.Severity.ERROR, root.toString(), 0, 0, "", "cannot list: " + e.getMessage()));
      }
    }
    return out;
  }

  private static boolean hidden(Path root, Path p) {
    for (Path part : root.relativize(p)) {
      if (part.toString().startsWith(".")) {
        return true;
      }
    }
    return false;
  }

  private static @Nullable String readText(Path file, String source, List<Problem> problems) {
    try {
      long size = Files.size(file);
      if (size > MAX_FILE_BYTES) {
        problems.add(new Problem(Problem.Severity.ERROR, source, 0, 0, "", "file too large (" + size
            + " bytes; at most " + MAX_FILE_BYTES + ")"));
        return null;
      }
      byte[] bytes = Files.readAllBytes(file);
      return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(java.nio.ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      problems.add(new Problem(Problem.Severity.ERROR, source, 0, 0, "", "not UTF-8 text"));
    } catch (IOException e) {
      problems.add(new Problem(Problem.Severity.ERROR, source, 0, 0, "", "cannot read: " + e));
    }
    return null;
  }
}
