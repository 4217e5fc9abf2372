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

  /** Character classes of ASCII, so the scan needs no {@link Character} call for it. */
  private static final byte OTHER = 0;
  private static final byte LETTER = 1;
  private static final byte DIGIT = 2;
  private static final byte NEWLINE = 3;
  private static final byte BLANK = 4;
  private static final byte[] ASCII = new byte[128];

  static {
    for (int c = 0; c < 128; c++) {
      ASCII[c] = Character.isLetter(c) ? LETTER : c >= '0' && c <= '9' ? DIGIT
          : c == '\n' || c == '\r' ? NEWLINE : c == ' ' || c == '\t' ? BLANK : OTHER;
    }
  }

  /**
   * Texts up to this many characters are scanned in a reused buffer of the (platform) thread; longer texts, and
   * texts tokenized on virtual threads (which would each keep a buffer), get their own.
   */
  private static final int BUFFER_CHARS = 1 << 16;

  private static final ThreadLocal<char[]> BUFFER = ThreadLocal.withInitial(() -> new char[BUFFER_CHARS]);

  private static boolean isLetter(char c) {
    return c < 128 ? ASCII[c] == LETTER : Character.isLetter(c);
  }

  private static void encode(CharSequence s, Sink out) {
    int len = s.length();
    if (len == 0) {
      return;
    }
    // One bulk copy, then a scan of a plain array: no per-character String dispatch or bounds checks.
    char[] a = len <= BUFFER_CHARS && !Thread.currentThread().isVirtual() ? BUFFER.get() : new char[len];
    if (s instanceof String str) {
      str.getChars(0, len, a, 0);
    } else {
      for (int k = 0; k < len; k++) {
        a[k] = s.charAt(k);
      }
    }
    int i = 0;
    while (i < len) {
      char c = a[i];
      int start = i;
      byte cls = c < 128 ? ASCII[c] : Character.isLetter(c) ? LETTER : OTHER;
      if (c == ' ' && i + 1 < len && isLetter(a[i + 1])) {
        i = letters(a, i + 1, len);
      } else if (cls == LETTER) {
        i = letters(a, i, len);
      } else if (cls == DIGIT) {
        int end = Math.min(len, i + MAX_DIGITS);
        i++;
        while (i < end && a[i] >= '0' && a[i] <= '9') {
          i++;
        }
      } else if (cls == NEWLINE) {
        i++;
        while (i < len && (a[i] == '\n' || a[i] == '\r')) {
          i++;
        }
      } else if (cls == BLANK) {
        int end = Math.min(len, i + MAX_SPACE);
        i++;
        // leave a single space to prefix a following word, as BPE vocabularies do
        while (i < end && (a[i] == ' ' || a[i] == '\t') && !(a[i] == ' ' && i + 1 < len && isLetter(a[i + 1]))) {
          i++;
        }
      } else if (Character.isHighSurrogate(c) && i + 1 < len && Character.isLowSurrogate(a[i + 1])) {
        i += 2;
      } else {
        i++;
      }
      out.add(pieceId(a, start, i));
    }
  }

  private static int letters(char[] a, int from, int len) {
    int end = Math.min(len, from + MAX_LETTERS);
    int i = from;
    while (i < end && isLetter(a[i])) {
      i++;
    }
    return i;
  }

  private static int pieceId(char[] a, int from, int to) {
    int h = 0x811C9DC5;
    for (int i = from; i < to; i++) {
      h = (h ^ a[i]) * 0x01000193;
    }
    return finish(h);
  }

  private static int pieceId(CharSequence s, int from, int to) {
    int h = 0x811C9DC5;
    for (int i = from; i < to; i++) {
      h = (h ^ s.charAt(i)) * 0x01000193;
    }
    return finish(h);
  }

  private static int finish(int hash) {
    int h = hash;
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
