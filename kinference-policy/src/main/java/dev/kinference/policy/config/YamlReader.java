package dev.kinference.policy.config;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.events.AliasEvent;
import org.snakeyaml.engine.v2.events.CollectionStartEvent;
import org.snakeyaml.engine.v2.events.Event;
import org.snakeyaml.engine.v2.events.NodeEvent;
import org.snakeyaml.engine.v2.events.ScalarEvent;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.Tag;
import org.snakeyaml.engine.v2.parser.ParserImpl;
import org.snakeyaml.engine.v2.resolver.ScalarResolver;
import org.snakeyaml.engine.v2.scanner.StreamReader;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * Reads YAML text into {@link YNode} documents from SnakeYAML Engine's event stream, so that nesting, aliases and
 * size are bounded here rather than by the stack: at most {@value #MAX_DEPTH} levels, {@value #MAX_NODES} nodes
 * per document counting alias expansions. Scalars are typed by the YAML 1.2 core schema. Stateless; thread-safe.
 */
final class YamlReader {

  static final int MAX_DEPTH = 64;
  static final int MAX_NODES = 100_000;
  static final int MAX_CODE_POINTS = 8 * 1024 * 1024;

  private static final ScalarResolver RESOLVER = new CoreSchema().getScalarResolver();

  private YamlReader() {}

  /** A document and where it starts. */
  record Document(YNode root, YNode.Pos start) {}

  /** Parses every document of {@code text}; problems go to {@code problems}. Never throws. */
  static List<Document> read(String text, Problems problems) {
    List<Document> docs = new ArrayList<>();
    LoadSettings settings = LoadSettings.builder()
        .setLabel(problems.source())
        .setCodePointLimit(MAX_CODE_POINTS)
        .setMaxAliasesForCollections(1_000)
        .setUseMarks(true)
        .build();
    Builder b = new Builder(problems, docs);
    Found bad = firstNonPrintable(text);
    if (bad != null) {
      int cp = text.codePointAt(bad.offset());
      problems.error(bad.pos(), "", "invalid YAML: special character " + String.format(java.util.Locale.ROOT,
          "U+%04X", cp) + (cp == 0 ? " (NUL)" : "") + " is not allowed; remove it (only tab, line breaks and "
          + "printable characters may appear)");
      return docs;
    }
    try {
      ParserImpl parser = new ParserImpl(settings, new StreamReader(settings, text));
      while (parser.hasNext() && !b.aborted) {
        b.accept(parser.next());
      }
    } catch (MarkedYamlEngineException e) {
      YNode.Pos pos = e.getProblemMark().or(e::getContextMark).map(YamlReader::pos).orElse(b.lastPos);
      String what = e.getProblem() == null ? "invalid YAML" : e.getProblem();
      String context = e.getContext() == null ? "" : " (" + e.getContext() + ")";
      problems.error(pos, "", "invalid YAML: " + what + context);
    } catch (YamlEngineException e) {
      problems.error(b.lastPos, "", "invalid YAML: " + e.getMessage());
    } catch (RuntimeException e) {
      // SnakeYAML may throw other runtime exceptions on hostile input; report, never propagate
      problems.error(b.lastPos, "", "invalid YAML: " + e);
    }
    return docs;
  }

  private record Found(YNode.Pos pos, int offset) {}

  /**
   * The first character YAML does not allow (outside tab, line breaks and printable characters), with its line and
   * column; SnakeYAML reports it without a position.
   */
  private static @Nullable Found firstNonPrintable(String text) {
    int line = 1;
    int column = 1;
    for (int i = 0; i < text.length(); ) {
      int c = text.codePointAt(i);
      if (!printable(c)) {
        return new Found(new YNode.Pos(line, column), i);
      }
      if (c == '\n' || (c == '\r' && (i + 1 >= text.length() || text.charAt(i + 1) != '\n'))) {
        line++;
        column = 1;
      } else if (c != '\r') {
        column++;
      }
      i += Character.charCount(c);
    }
    return null;
  }

  private static boolean printable(int c) {
    return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0x7E) || c == 0x85 || (c >= 0xA0 && c <= 0xD7FF)
        || (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
  }

  static YNode.Pos pos(Mark m) {
    return new YNode.Pos(m.getLine() + 1, m.getColumn() + 1);
  }

  private static YNode.Pos pos(Optional<Mark> m) {
    return m.map(YamlReader::pos).orElse(YNode.Pos.UNKNOWN);
  }

  /** A collection under construction. */
  private static final class Frame {
    final @Nullable LinkedHashMap<String, YNode.Entry> map;
    final @Nullable List<YNode> list;
    final YNode.Pos pos;
    final @Nullable String anchor;
    /** For a mapping: the key waiting for its value, or null. */
    @Nullable String pendingKey;
    YNode.Pos pendingKeyPos = YNode.Pos.UNKNOWN;
    boolean expectingKey = true;
    /** The next value must be dropped (its key was invalid). */
    boolean dropNext;

    Frame(boolean isMap, YNode.Pos pos, @Nullable String anchor) {
      this.map = isMap ? new LinkedHashMap<>() : null;
      this.list = isMap ? null : new ArrayList<>();
      this.pos = pos;
      this.anchor = anchor;
    }
  }

  private static final class Builder {
    final Problems problems;
    final List<Document> docs;
    final Deque<Frame> stack = new ArrayDeque<>();
    final Map<String, YNode> anchors = new HashMap<>();
    final IdentityHashMap<YNode, Integer> sizes = new IdentityHashMap<>();
    YNode.Pos lastPos = YNode.Pos.UNKNOWN;
    YNode.Pos docStart = YNode.Pos.UNKNOWN;
    int nodes;
    int skipDepth;
    /** Whether the skipped collection stood where a value was expected (and becomes null). */
    boolean skipFillsSlot;
    boolean aborted;

    Builder(Problems problems, List<Document> docs) {
      this.problems = problems;
      this.docs = docs;
    }

    void accept(Event e) {
      YNode.Pos p = pos(e.getStartMark());
      if (p.line() > 0) {
        lastPos = p;
      }
      if (skipDepth > 0) {
        switch (e.getEventId()) {
          case MappingStart, SequenceStart -> skipDepth++;
          case MappingEnd, SequenceEnd -> skipDepth--;
          default -> { }
        }
        if (skipDepth == 0 && skipFillsSlot) {
          value(new YNode.YScalar(null, YNode.Type.NULL, p), 1);
        }
        return;
      }
      switch (e.getEventId()) {
        case DocumentStart -> {
          stack.clear();
          anchors.clear();
          sizes.clear();
          nodes = 0;
          docStart = p;
        }
        case Scalar -> scalar((ScalarEvent) e, p);
        case Alias -> alias((AliasEvent) e, p);
        case MappingStart, SequenceStart -> start((CollectionStartEvent) e, p);
        case MappingEnd, SequenceEnd -> end();
        default -> { }
      }
    }

    private void start(CollectionStartEvent e, YNode.Pos p) {
      boolean isMap = e.getEventId() == Event.ID.MappingStart;
      checkTag(e.getTag(), isMap ? Tag.MAP : Tag.SEQ, p);
      if (stack.size() >= MAX_DEPTH) {
        // stop here: the parser's cost grows faster than linearly with nesting, so hostile input must not go on
        problems.error(p, "", "nested more than " + MAX_DEPTH + " levels deep; the rest of the source is not read");
        aborted = true;
        return;
      }
      Frame top = stack.peek();
      if (top != null && top.map != null && top.expectingKey) {
        problems.error(p, "", "mapping keys must be plain strings, not " + (isMap ? "mappings" : "lists"));
        top.expectingKey = false;
        top.dropNext = true;
        skipDepth = 1;
        skipFillsSlot = false;
        return;
      }
      stack.push(new Frame(isMap, p, anchorOf(e)));
    }

    private void end() {
      Frame f = stack.pop();
      YNode n = f.map != null ? new YNode.YMap(f.map, f.pos) : new YNode.YList(List.copyOf(f.list == null ? List.of() : f.list), f.pos);
      if (f.map != null && !f.expectingKey) {
        // a key without a value cannot come from the parser, but stay safe
        f.map.put(String.valueOf(f.pendingKey), new YNode.Entry(String.valueOf(f.pendingKey), f.pendingKeyPos,
            new YNode.YScalar(null, YNode.Type.NULL, f.pendingKeyPos)));
      }
      int size = 1;
      if (n instanceof YNode.YMap m) {
        for (YNode.Entry en : m.entries().values()) {
          size += sizes.getOrDefault(en.value(), 1);
        }
      } else if (n instanceof YNode.YList l) {
        for (YNode c : l.items()) {
          size += sizes.getOrDefault(c, 1);
        }
      }
      sizes.put(n, size);
      if (f.anchor != null) {
        anchors.put(f.anchor, n);
      }
      value(n, 0);
    }

    private void scalar(ScalarEvent e, YNode.Pos p) {
      YNode.Type type;
      Optional<String> tag = e.getTag();
      if (tag.isPresent() && !tag.get().equals("!")) {
        Tag t = new Tag(tag.get());
        type = typeOfTag(t);
        if (type == null) {
          problems.error(p, "", "unsupported YAML tag " + tag.get() + "; write a plain value");
          type = YNode.Type.STRING;
        }
      } else if (e.isPlain() && e.getImplicit().canOmitTagInPlainScalar()) {
        YNode.Type resolved = typeOfTag(RESOLVER.resolve(e.getValue(), true));
        type = resolved == null ? YNode.Type.STRING : resolved;
      } else {
        type = YNode.Type.STRING;
      }
      YNode n = new YNode.YScalar(type == YNode.Type.NULL ? null : e.getValue(), type, p);
      String anchor = anchorOf(e);
      if (anchor != null) {
        anchors.put(anchor, n);
      }
      value(n, 1);
    }

    private void alias(AliasEvent e, YNode.Pos p) {
      String name = e.getAlias().getValue();
      YNode target = anchors.get(name);
      if (target == null) {
        problems.error(p, "", "alias *" + name + " refers to an anchor that is not complete here "
            + "(an alias may not refer to a node that contains it)");
        value(new YNode.YScalar(null, YNode.Type.NULL, p), 1);
        return;
      }
      value(target, sizes.getOrDefault(target, 1));
    }

    private void value(YNode n, int addedNodes) {
      nodes += Math.max(1, addedNodes);
      if (nodes > MAX_NODES) {
        problems.error(n.pos(), "", "document too large: more than " + MAX_NODES
            + " values (counting alias expansions)");
        aborted = true;
        return;
      }
      Frame top = stack.peek();
      if (top == null) {
        docs.add(new Document(n, docStart.line() > 0 ? docStart : n.pos()));
        return;
      }
      if (top.list != null) {
        top.list.add(n);
        return;
      }
      LinkedHashMap<String, YNode.Entry> map = java.util.Objects.requireNonNull(top.map);
      if (top.expectingKey) {
        if (!(n instanceof YNode.YScalar s)) {
          problems.error(n.pos(), "", "mapping keys must be plain strings");
          top.expectingKey = false;
          top.dropNext = true;
          return;
        }
        String key = s.value() == null ? "null" : s.value();
        if (key.equals("<<")) {
          problems.error(n.pos(), "", "merge keys (<<) are not supported: write the fields out");
          top.dropNext = true;
        } else if (map.containsKey(key)) {
          YNode.Entry first = map.get(key);
          problems.error(n.pos(), "", "duplicate key '" + key + "' (first at line " + first.keyPos().line() + ")");
          top.dropNext = true;
        }
        top.pendingKey = key;
        top.pendingKeyPos = n.pos();
        top.expectingKey = false;
        return;
      }
      if (!top.dropNext) {
        String key = java.util.Objects.requireNonNull(top.pendingKey);
        map.put(key, new YNode.Entry(key, top.pendingKeyPos, n));
      }
      top.dropNext = false;
      top.pendingKey = null;
      top.expectingKey = true;
    }

    private void checkTag(Optional<String> tag, Tag expected, YNode.Pos p) {
      if (tag.isPresent() && !tag.get().equals("!") && !new Tag(tag.get()).equals(expected)) {
        problems.error(p, "", "unsupported YAML tag " + tag.get());
      }
    }

    private static @Nullable String anchorOf(NodeEvent e) {
      return e.getAnchor().map(a -> a.getValue()).orElse(null);
    }

    private static YNode.@Nullable Type typeOfTag(Tag t) {
      if (t.equals(Tag.STR)) {
        return YNode.Type.STRING;
      } else if (t.equals(Tag.INT)) {
        return YNode.Type.INT;
      } else if (t.equals(Tag.FLOAT)) {
        return YNode.Type.FLOAT;
      } else if (t.equals(Tag.BOOL)) {
        return YNode.Type.BOOL;
      } else if (t.equals(Tag.NULL)) {
        return YNode.Type.NULL;
      }
      return null;
    }
  }
}
