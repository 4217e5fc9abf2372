package dev.kinference.policy.classify;

import dev.kinference.plugin.Plugin;
import dev.kinference.request.ContentPart;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.Message;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds personal data and secrets in prompt text. Requests flagged by it never leave local pools. Implementations
 * must be thread-safe and should run in time linear in the text's length. A detector that cannot decide (a remote
 * analyzer that fails or is slow) throws {@link PersonalDataDetectorException}: the request is then treated as
 * personal (fail closed) and the failure counted.
 *
 * <p>Every detector found (the {@code builtin} one, those registered with {@link java.util.ServiceLoader} and those
 * configured, such as {@link PresidioAnalyzerDetector}) runs on every request, and their findings are united: see
 * {@link PersonalDataDetectors}.
 */
public interface PersonalDataDetector extends Plugin {

  /** What {@code text} contains. */
  PersonalData detect(CharSequence text);

  /**
   * What the request contains, field by field ({@link RequestFields}: every string of its body that could leave,
   * URLs decoded), each finding carrying its field path. The default scans each field with {@link
   * #detect(CharSequence)}; a remote detector may override it to analyse the request in one call.
   */
  default PersonalData detect(InferenceRequest request) {
    List<PersonalData> found = new ArrayList<>(2);
    RequestFields.walk(request, (path, text) -> {
      PersonalData p = detect(text);
      if (p.found()) {
        found.add(locate(p, name(), path));
      }
    });
    PersonalData all = PersonalData.NONE;
    for (PersonalData p : found) {
      all = all.plus(p);
    }
    return all;
  }

  /**
   * {@code p}, found by {@code detector} in field {@code path}: its findings moved into {@code path}, or, when the
   * detector reported kinds without locations, one finding per kind at offset 0.
   */
  static PersonalData locate(PersonalData p, String detector, String path) {
    if (!p.found()) {
      return p;
    }
    if (!p.findings().isEmpty()) {
      return p.in(path);
    }
    List<PersonalDataFinding> where = new ArrayList<>(p.kinds().size());
    for (PersonalDataKind k : p.kinds()) {
      where.add(new PersonalDataFinding(k, detector, path, 0));
    }
    return new PersonalData(p.kinds(), p.occurrences(), where);
  }

  /**
   * The text of a request that complexity classifiers look at: messages (all roles), tool calls and results, the
   * prompt. Personal-data detection looks at more: see {@link #detect(InferenceRequest)}.
   */
  static String textOf(InferenceRequest request) {
    StringBuilder sb = new StringBuilder((int) Math.min(Integer.MAX_VALUE - 64, request.promptChars() + 16));
    for (Message m : request.messages()) {
      for (ContentPart p : m.content()) {
        appendPart(sb, p);
      }
    }
    String prompt = request.prompt();
    if (prompt != null) {
      sb.append(prompt).append('\n');
    }
    return sb.toString();
  }

  private static void appendPart(StringBuilder sb, ContentPart p) {
    switch (p) {
      case ContentPart.Text t -> sb.append(t.text()).append('\n');
      case ContentPart.ToolUse u -> sb.append(u.inputJson()).append('\n');
      case ContentPart.ToolResult r -> r.content().forEach(c -> appendPart(sb, c));
      case ContentPart.Other o -> sb.append(o.json()).append('\n');
      case ContentPart.Image i -> { }
    }
  }
}
