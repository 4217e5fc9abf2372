package dev.kinference.policy.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class YamlReaderTest {

  private static List<String> problems(String yaml) {
    Problems p = new Problems("t.yaml");
    YamlReader.read(yaml, p);
    return p.list().stream().map(Problem::toString).toList();
  }

  @Test
  void scalarsAreTypedByTheCoreSchema() {
    Problems p = new Problems("t.yaml");
    var docs = YamlReader.read("a: 1\nb: 1.5\nc: true\nd: ~\ne: '1'\nf: hello\ng: 0x1F\n", p);
    var map = (YNode.YMap) docs.get(0).root();
    assertThat(((YNode.YScalar) map.entries().get("a").value()).type()).isEqualTo(YNode.Type.INT);
    assertThat(((YNode.YScalar) map.entries().get("b").value()).type()).isEqualTo(YNode.Type.FLOAT);
    assertThat(((YNode.YScalar) map.entries().get("c").value()).type()).isEqualTo(YNode.Type.BOOL);
    assertThat(((YNode.YScalar) map.entries().get("d").value()).type()).isEqualTo(YNode.Type.NULL);
    assertThat(((YNode.YScalar) map.entries().get("e").value()).type()).isEqualTo(YNode.Type.STRING);
    assertThat(((YNode.YScalar) map.entries().get("f").value()).type()).isEqualTo(YNode.Type.STRING);
    assertThat(((YNode.YScalar) map.entries().get("g").value()).type()).isEqualTo(YNode.Type.INT);
    assertThat(map.entries().get("f").keyPos()).isEqualTo(new YNode.Pos(6, 1));
    assertThat(p.list()).isEmpty();
  }

  @Test
  void anchorsAndAliasesAreExpanded() {
    Problems p = new Problems("t.yaml");
    var docs = YamlReader.read("x: &v {a: 1}\ny: *v\n", p);
    var map = (YNode.YMap) docs.get(0).root();
    assertThat(map.entries().get("y").value()).isSameAs(map.entries().get("x").value());
    assertThat(p.list()).isEmpty();
  }

  @Test
  void billionLaughsIsStoppedByTheNodeBudget() {
    StringBuilder sb = new StringBuilder("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for (int i = 1; i < 10; i++) {
      sb.append("a").append(i).append(": &a").append(i).append(" [");
      for (int j = 0; j < 10; j++) {
        sb.append(j == 0 ? "" : ", ").append("*a").append(i - 1);
      }
      sb.append("]\n");
    }
    assertThat(problems(sb.toString())).anyMatch(s -> s.contains("document too large")
        || s.contains("Number of aliases for non-scalar nodes exceeds"));
  }

  @Test
  void aRecursiveAliasIsAProblemNotAHang() {
    assertThat(problems("a: &x [1, *x]\n")).anyMatch(s -> s.contains("alias *x refers to an anchor that is not "
        + "complete here"));
  }

  @Test
  void deepNestingIsBoundedWithoutRecursion() {
    String deep = "[".repeat(100_000) + "]".repeat(100_000);
    assertThat(problems(deep)).anyMatch(s -> s.contains("nested more than 64 levels deep; the rest of the source is not read"));
    StringBuilder block = new StringBuilder();
    for (int i = 0; i < 100; i++) {
      block.append(" ".repeat(i)).append("k").append(i).append(":\n");
    }
    assertThat(problems(block.toString())).anyMatch(s -> s.contains("nested more than 64 levels deep; the rest of the source is not read"));
  }

  @Test
  void duplicateKeysMergeKeysTagsAndComplexKeysAreReported() {
    assertThat(problems("a: 1\na: 2\n")).containsExactly("t.yaml:2:1: error: duplicate key 'a' (first at line 1)");
    assertThat(problems("b: &b {x: 1}\nc:\n  <<: *b\n"))
        .containsExactly("t.yaml:3:3: error: merge keys (<<) are not supported: write the fields out");
    assertThat(problems("a: !custom 1\n")).containsExactly(
        "t.yaml:1:4: error: unsupported YAML tag !custom; write a plain value");
    assertThat(problems("? [a, b]\n: 1\n")).containsExactly(
        "t.yaml:1:3: error: mapping keys must be plain strings, not lists");
  }

  @Test
  void syntaxErrorsCarryTheirPosition() {
    assertThat(problems("a: [1, 2\nb: 3\n")).singleElement().asString().startsWith("t.yaml:2:2: error: invalid YAML");
    assertThat(problems("\t- tab\n")).singleElement().asString().contains("invalid YAML");
  }
}
