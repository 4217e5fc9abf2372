package dev.kinference.prompt;

import dev.kinference.request.ContentPart;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.Message;
import java.util.Arrays;

/**
 * The default tokenizer: fast, deterministic, needing no model files, and about as many tokens per character as a
 * BPE tokenizer on English text (about 4 characters a token).
 *
 * <p>A chat request is rendered canonically, like a ChatML template: tool definitions, then for each message a
 * role-start marker, its content and an end marker, then the assistant's role-start marker as generation prompt.
 * So a conversation's next turn begins with exactly the tokens of the previous turn's prompt, which is what makes
 * multi-turn requests share cached blocks. Text is cut into pieces (a word of up to six letters with its leading
 * space, up to three digits, a run of white space, any other character) and each piece's id is a hash of it.
 *
 * <p>Ids are only meaningful to this class; a server must use the same tokenizer for precise cache matching
 * (the simulator does). Stateless and thread-safe.
 */
public final class ApproximateTokenizer implements Tokenizer {

  /** Ids of ordinary pieces are below this value; marker ids are at or above it. */
  public static final int SPECIAL_BASE = 1 << 30;

  private static final int MAX_LETTERS = 6;
  private static final int MAX_DIGITS = 3;
  private static final int MAX_SPACE = 16;
  private static final int END_MARKER = SPECIAL_BASE + 1;
  private static final int IMAGE_MARKER = SPECIAL_BASE + 2;
  private static final int TOOL_CALL_MARKER = SPECIAL_BASE + 3;
  private static final int TOOL_RESULT_MARKER = SPECIAL_BASE + 4;
  private static final int TOOLS_MARKER = SPECIAL_BASE + 5;

  /** Public for {@link java.util.ServiceLoader}. */
  public ApproximateTokenizer() {}

  @Override
  public String name() {
    return "approximate";
  }

  @Override
  public int[] tokenize(InferenceRequest request) {
    int[] ids = request.promptTokenIds();
    if (ids != null) {
      return ids;
    }
    Sink out = new Sink((int) Math.min(Integer.MAX_VALUE - 16, request.promptChars() / 4 + 16));
    String prompt = request.prompt();
    if (prompt != null) {
      encode(prompt, out);
      return out.toArray();
    }
    if (!request.toolsJson().isEmpty()) {
      out.add(TOOLS_MARKER);
      for (String tool : request.toolsJson()) {
        encode(tool, out);
      }
      out.add(END_MARKER);
    }
    for (Message m : request.messages()) {
      out.add(roleMarker(m.role()));
      for (ContentPart part : m.content()) {
        encodePart(part, out);
      }
      out.add(END_MARKER);
    }
    out.add(roleMarker("assistant"));
    return out.toArray();
  }

  /** The ids of a plain text, with no markers. */
  public int[] encode(CharSequence text) {
    Sink out = new Sink(text.length() / 4 + 4);
    encode(text, out);
    return out.toArray();
  }

  /** How many tokens {@link #encode} would return, without allocating them. */
  public int count(CharSequence text) {
    Sink counter = new Sink(0);
    counter.countOnly = true;
    encode(text, counter);
    return counter.size;
  }

  /** The marker id that starts a message of this role. */
  public static int roleMarker(String role) {
    return SPECIAL_BASE + 16 + Math.floorMod(role.hashCode(), 1 << 20);
  }

  private void encodePart(ContentPart part, Sink out) {
    switch (part) {
      case ContentPart.Text t -> encode(t.text(), out);
      case ContentPart.Image i -> {
        out.add(IMAGE_MARKER);
        out.add(pieceId(i.source(), 0, i.source().length()));
      }
      case ContentPart.ToolUse u -> {
        out.add(TOOL_CALL_MARKER);
        encode(u.name(), out);
        encode(u.inputJson(), out);
      }
      case ContentPart.ToolResult r -> {
        out.add(TOOL_RESULT_MARKER);
        for (ContentPart c : r.content()) {
          encodePart(c, out);
        }
      }
      case ContentPart.Other o -> encode(o.json(), out);
    }
  }

  private static void encode(CharSequence s, Sink out) {
    int len = s.length();
    int i = 0;
    while (i < len) {
      char c = s.charAt(i);
      int start = i;
      if (c == ' ' && i + 1 < len && Character.isLetter(s.charAt(i + 1))) {
        i = letters(s, i + 1, len);
      } else if (Character.isLetter(c)) {
        i = letters(s, i, len);
      } else if (c >= '0' && c <= '9') {
        int end = Math.min(len, i + MAX_DIGITS);
        i++;
        while (i < end && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
          i++;
        }
      } else if (c == '\n' || c == '\r') {
        i++;
        while (i < len && (s.charAt(i) == '\n' || s.charAt(i) == '\r')) {
          i++;
        }
      } else if (c == ' ' || c == '\t') {
        int end = Math.min(len, i + MAX_SPACE);
        i++;
        // leave a single space to prefix a following word, as BPE vocabularies do
        while (i < end && (s.charAt(i) == ' ' || s.charAt(i) == '\t')
            && !(s.charAt(i) == ' ' && i + 1 < len && Character.isLetter(s.charAt(i + 1)))) {
          i++;
        }
      } else if (Character.isHighSurrogate(c) && i + 1 < len && Character.isLowSurrogate(s.charAt(i + 1))) {
        i += 2;
      } else {
        i++;
      }
      out.add(pieceId(s, start, i));
    }
  }

  private static int letters(CharSequence s, int from, int len) {
    int end = Math.min(len, from + MAX_LETTERS);
    int i = from;
    while (i < end && Character.isLetter(s.charAt(i))) {
      i++;
    }
    return i;
  }

  private static int pieceId(CharSequence s, int from, int to) {
    int h = 0x811C9DC5;
    for (int i = from; i < to; i++) {
      h = (h ^ s.charAt(i)) * 0x01000193;
    }
    h ^= h >>> 15;
    h *= 0x2C1B3C6D;
    h ^= h >>> 12;
    return h & (SPECIAL_BASE - 1);
  }

  /** A growable int array. */
  private static final class Sink {
    private int[] ids;
    private int size;
    private boolean countOnly;

    Sink(int capacity) {
      ids = new int[Math.max(capacity, 0)];
    }

    void add(int id) {
      if (countOnly) {
        size++;
        return;
      }
      if (size == ids.length) {
        ids = Arrays.copyOf(ids, Math.max(16, ids.length * 2));
      }
      ids[size++] = id;
    }

    int[] toArray() {
      return size == ids.length ? ids : Arrays.copyOf(ids, size);
    }
  }
}
