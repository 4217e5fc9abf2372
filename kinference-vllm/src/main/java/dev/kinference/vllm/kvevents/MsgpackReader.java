package dev.kinference.vllm.kvevents;

import java.nio.charset.StandardCharsets;

/**
 * A cursor over one msgpack document in a {@code byte[]}, reading values in place: no boxing, no copies except
 * where a caller asks for a {@link String}. Every read checks bounds and types and throws
 * {@link KvEventFormatException} with the offset and the reason, so a truncated or garbage frame can never read past
 * its end or loop forever.
 *
 * <p>Not thread-safe: one reader per decoding thread, {@link #reset reset} for each frame.
 */
final class MsgpackReader {

  /** What the next value is, from its first byte. */
  enum Type {
    NIL, BOOLEAN, INTEGER, FLOAT, STRING, BINARY, ARRAY, MAP, EXTENSION
  }

  private byte[] buf = new byte[0];
  private int pos;
  private int limit;
  // Set by readStringHeader/readBinaryHeader: where the payload of the value just read starts.
  private int payloadOffset;

  /** Reads {@code bytes[offset, offset + length)} from its start. */
  void reset(byte[] bytes, int offset, int length) {
    if (offset < 0 || length < 0 || offset + length > bytes.length) {
      throw new IllegalArgumentException("range out of bounds");
    }
    this.buf = bytes;
    this.pos = offset;
    this.limit = offset + length;
  }

  int position() {
    return pos;
  }

  boolean hasRemaining() {
    return pos < limit;
  }

  /** The type of the next value, without consuming it. */
  Type peekType() {
    int b = peekByte();
    if (b <= 0x7f || b >= 0xe0) {
      return Type.INTEGER;
    }
    if (b <= 0x8f) {
      return Type.MAP;
    }
    if (b <= 0x9f) {
      return Type.ARRAY;
    }
    if (b <= 0xbf) {
      return Type.STRING;
    }
    return switch (b) {
      case 0xc0 -> Type.NIL;
      case 0xc2, 0xc3 -> Type.BOOLEAN;
      case 0xc4, 0xc5, 0xc6 -> Type.BINARY;
      case 0xc7, 0xc8, 0xc9, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8 -> Type.EXTENSION;
      case 0xca, 0xcb -> Type.FLOAT;
      case 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3 -> Type.INTEGER;
      case 0xd9, 0xda, 0xdb -> Type.STRING;
      case 0xdc, 0xdd -> Type.ARRAY;
      case 0xde, 0xdf -> Type.MAP;
      default -> throw fail("byte 0xc1 is never used in msgpack");
    };
  }

  boolean isNil() {
    return peekByte() == 0xc0;
  }

  /** Consumes a nil if one is next; returns whether it did. */
  boolean tryReadNil() {
    if (peekByte() == 0xc0) {
      pos++;
      return true;
    }
    return false;
  }

  /** The number of elements of the array that starts here. */
  int readArrayHeader() {
    int b = readByte();
    if (b >= 0x90 && b <= 0x9f) {
      return b & 0x0f;
    }
    if (b == 0xdc) {
      return readU16();
    }
    if (b == 0xdd) {
      return readLength32("array");
    }
    pos--;
    throw fail("expected an array, found " + describe(b));
  }

  /** The number of key/value pairs of the map that starts here. */
  int readMapHeader() {
    int b = readByte();
    if (b >= 0x80 && b <= 0x8f) {
      return b & 0x0f;
    }
    if (b == 0xde) {
      return readU16();
    }
    if (b == 0xdf) {
      return readLength32("map");
    }
    pos--;
    throw fail("expected a map, found " + describe(b));
  }

  /**
   * An integer as its 64 bits: signed values as themselves, unsigned values at or above 2^63 (msgpack
   * {@code 0xcf}) as the {@code long} with the same bits, so an unsigned 64-bit hash survives unchanged.
   */
  long readLongBits() {
    int b = readByte();
    if (b <= 0x7f) {
      return b;
    }
    if (b >= 0xe0) {
      return (byte) b;
    }
    return switch (b) {
      case 0xcc -> readByte();
      case 0xcd -> readU16();
      case 0xce -> readU32();
      case 0xcf, 0xd3 -> readRaw64();
      case 0xd0 -> (byte) readByte();
      case 0xd1 -> (short) readU16();
      case 0xd2 -> (int) readU32();
      default -> {
        pos--;
        throw fail("expected an integer, found " + describe(b));
      }
    };
  }

  /** An integer that must fit an {@code int}. */
  int readInt() {
    int start = pos;
    int b = peekByte();
    long v = readLongBits();
    if ((b == 0xcf && v < 0) || v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
      pos = start;
      throw fail("integer out of int range");
    }
    return (int) v;
  }

  /** A float, or an integer read as a double. */
  double readDouble() {
    int b = peekByte();
    if (b == 0xcb) {
      pos++;
      return Double.longBitsToDouble(readRaw64());
    }
    if (b == 0xca) {
      pos++;
      return Float.intBitsToFloat((int) readU32());
    }
    if (peekType() == Type.INTEGER) {
      long v = readLongBits();
      return b == 0xcf && v < 0 ? unsignedToDouble(v) : v;
    }
    throw fail("expected a number, found " + describe(b));
  }

  boolean readBoolean() {
    int b = readByte();
    if (b == 0xc2) {
      return false;
    }
    if (b == 0xc3) {
      return true;
    }
    pos--;
    throw fail("expected a boolean, found " + describe(b));
  }

  /**
   * A block hash: an integer (its 64 bits) or a byte string (its last 8 bytes, big-endian; shorter strings are
   * zero-extended on the left).
   */
  long readHash() {
    int b = peekByte();
    if (b == 0xc4 || b == 0xc5 || b == 0xc6) {
      int len = readBinaryHeader();
      int from = payloadOffset;
      long v = 0;
      for (int i = Math.max(from, from + len - 8); i < from + len; i++) {
        v = (v << 8) | (buf[i] & 0xff);
      }
      return v;
    }
    if (peekType() == Type.INTEGER) {
      return readLongBits();
    }
    throw fail("expected a block hash (integer or bytes), found " + describe(b));
  }

  /** Consumes a string header and skips its bytes; returns its length, with its first byte at {@link #payloadOffset()}. */
  int readStringHeader() {
    int b = readByte();
    int len;
    if (b >= 0xa0 && b <= 0xbf) {
      len = b & 0x1f;
    } else if (b == 0xd9) {
      len = readByte();
    } else if (b == 0xda) {
      len = readU16();
    } else if (b == 0xdb) {
      len = readLength32("string");
    } else {
      pos--;
      throw fail("expected a string, found " + describe(b));
    }
    return consumePayload(len, "string");
  }

  /** Consumes a binary header and skips its bytes; returns its length, with its first byte at {@link #payloadOffset()}. */
  int readBinaryHeader() {
    int b = readByte();
    int len;
    if (b == 0xc4) {
      len = readByte();
    } else if (b == 0xc5) {
      len = readU16();
    } else if (b == 0xc6) {
      len = readLength32("binary");
    } else {
      pos--;
      throw fail("expected binary data, found " + describe(b));
    }
    return consumePayload(len, "binary");
  }

  /** Where the payload of the last string or binary value read starts. */
  int payloadOffset() {
    return payloadOffset;
  }

  byte[] buffer() {
    return buf;
  }

  String readString() {
    int len = readStringHeader();
    return new String(buf, payloadOffset, len, StandardCharsets.UTF_8);
  }

  /** Whether the string just read (at {@link #payloadOffset()}, {@code len} bytes) equals the ASCII {@code ascii}. */
  boolean payloadEquals(int len, byte[] ascii) {
    if (len != ascii.length) {
      return false;
    }
    for (int i = 0; i < len; i++) {
      if (buf[payloadOffset + i] != ascii[i]) {
        return false;
      }
    }
    return true;
  }

  /** Skips one value of any type, including nested arrays and maps. */
  void skipValue() {
    // A flat count of values still to skip: containers add their children. Every value takes at least one byte,
    // so garbage ends in a truncation error, never a deep recursion or an endless loop.
    long pending = 1;
    while (pending > 0) {
      pending--;
      int b = readByte();
      if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
        continue;
      }
      if (b <= 0x8f) {
        pending += 2L * (b & 0x0f);
      } else if (b <= 0x9f) {
        pending += b & 0x0f;
      } else if (b <= 0xbf) {
        consumePayload(b & 0x1f, "string");
      } else {
        switch (b) {
          case 0xc4, 0xd9 -> consumePayload(readByte(), "value");
          case 0xc5, 0xda -> consumePayload(readU16(), "value");
          case 0xc6, 0xdb -> consumePayload(readLength32("value"), "value");
          case 0xc7 -> consumePayload(readByte() + 1, "extension");
          case 0xc8 -> consumePayload(readU16() + 1, "extension");
          case 0xc9 -> consumePayload(readLength32("extension") + 1, "extension");
          case 0xca, 0xce, 0xd2 -> consumePayload(4, "number");
          case 0xcb, 0xcf, 0xd3 -> consumePayload(8, "number");
          case 0xcc, 0xd0 -> consumePayload(1, "number");
          case 0xcd, 0xd1 -> consumePayload(2, "number");
          case 0xd4 -> consumePayload(2, "extension");
          case 0xd5 -> consumePayload(3, "extension");
          case 0xd6 -> consumePayload(5, "extension");
          case 0xd7 -> consumePayload(9, "extension");
          case 0xd8 -> consumePayload(17, "extension");
          case 0xdc -> pending += readU16();
          case 0xdd -> pending += readLength32("array");
          case 0xde -> pending += 2L * readU16();
          case 0xdf -> pending += 2L * readLength32("map");
          default -> {
            pos--;
            throw fail("byte 0xc1 is never used in msgpack");
          }
        }
      }
    }
  }

  KvEventFormatException fail(String reason) {
    return new KvEventFormatException(reason + " at byte " + pos);
  }

  private int consumePayload(int len, String what) {
    if (len < 0 || len > limit - pos) {
      throw fail("truncated " + what + ": " + len + " bytes announced, " + (limit - pos) + " left");
    }
    payloadOffset = pos;
    pos += len;
    return len;
  }

  private int peekByte() {
    if (pos >= limit) {
      throw fail("truncated: unexpected end of data");
    }
    return buf[pos] & 0xff;
  }

  private int readByte() {
    if (pos >= limit) {
      throw fail("truncated: unexpected end of data");
    }
    return buf[pos++] & 0xff;
  }

  private int readU16() {
    if (limit - pos < 2) {
      throw fail("truncated: unexpected end of data");
    }
    int v = ((buf[pos] & 0xff) << 8) | (buf[pos + 1] & 0xff);
    pos += 2;
    return v;
  }

  private long readU32() {
    if (limit - pos < 4) {
      throw fail("truncated: unexpected end of data");
    }
    long v = ((long) (buf[pos] & 0xff) << 24) | ((buf[pos + 1] & 0xff) << 16) | ((buf[pos + 2] & 0xff) << 8)
        | (buf[pos + 3] & 0xff);
    pos += 4;
    return v;
  }

  private int readLength32(String what) {
    long n = readU32();
    if (n > limit - pos) {
      // Each element takes at least one byte: a longer count cannot be honest.
      throw fail("truncated " + what + ": " + n + " elements announced, " + (limit - pos) + " bytes left");
    }
    return (int) n;
  }

  private long readRaw64() {
    if (limit - pos < 8) {
      throw fail("truncated: unexpected end of data");
    }
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (buf[pos + i] & 0xff);
    }
    pos += 8;
    return v;
  }

  private static double unsignedToDouble(long v) {
    return (double) (v >>> 1) * 2.0 + (v & 1);
  }

  private static String describe(int b) {
    return String.format("0x%02x", b);
  }
}
