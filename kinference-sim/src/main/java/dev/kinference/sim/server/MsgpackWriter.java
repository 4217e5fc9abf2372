package dev.kinference.sim.server;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A minimal MessagePack encoder, writing the smallest encoding of each value as msgspec (vLLM's encoder) does:
 * non-negative integers as positive fixint or uint8/16/32/64, negative ones as negative fixint or int8/16/32/64,
 * floats always as float64, strings as fixstr/str8/str16/str32.
 *
 * <p>Not thread-safe; one writer builds one message.
 */
final class MsgpackWriter {

  private byte[] buf;
  private int size;

  MsgpackWriter() {
    this(256);
  }

  MsgpackWriter(int capacity) {
    buf = new byte[Math.max(16, capacity)];
  }

  MsgpackWriter nil() {
    return put(0xc0);
  }

  MsgpackWriter bool(boolean v) {
    return put(v ? 0xc3 : 0xc2);
  }

  /** A signed integer. */
  MsgpackWriter integer(long v) {
    if (v >= 0) {
      return unsigned(v);
    }
    if (v >= -32) {
      return put((int) v & 0xff);
    }
    if (v >= Byte.MIN_VALUE) {
      return put(0xd0).put((int) v & 0xff);
    }
    if (v >= Short.MIN_VALUE) {
      put(0xd1);
      return be(v, 2);
    }
    if (v >= Integer.MIN_VALUE) {
      put(0xd2);
      return be(v, 4);
    }
    put(0xd3);
    return be(v, 8);
  }

  /**
   * An unsigned 64-bit integer given as its bit pattern: values at or above 2^63 (negative as a Java long) are
   * written as uint64 ({@code 0xcf}).
   */
  MsgpackWriter unsigned(long bits) {
    if (bits < 0) {
      put(0xcf);
      return be(bits, 8);
    }
    if (bits < 128) {
      return put((int) bits);
    }
    if (bits < 256) {
      return put(0xcc).put((int) bits);
    }
    if (bits < 65536) {
      put(0xcd);
      return be(bits, 2);
    }
    if (bits < 4294967296L) {
      put(0xce);
      return be(bits, 4);
    }
    put(0xcf);
    return be(bits, 8);
  }

  MsgpackWriter float64(double v) {
    put(0xcb);
    return be(Double.doubleToRawLongBits(v), 8);
  }

  MsgpackWriter str(String s) {
    byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
    int n = utf8.length;
    if (n < 32) {
      put(0xa0 | n);
    } else if (n < 256) {
      put(0xd9).put(n);
    } else if (n < 65536) {
      put(0xda);
      be(n, 2);
    } else {
      put(0xdb);
      be(n, 4);
    }
    return raw(utf8);
  }

  MsgpackWriter bin(byte[] bytes) {
    int n = bytes.length;
    if (n < 256) {
      put(0xc4).put(n);
    } else if (n < 65536) {
      put(0xc5);
      be(n, 2);
    } else {
      put(0xc6);
      be(n, 4);
    }
    return raw(bytes);
  }

  MsgpackWriter arrayHeader(int n) {
    checkLength(n);
    if (n < 16) {
      return put(0x90 | n);
    }
    if (n < 65536) {
      put(0xdc);
      return be(n, 2);
    }
    put(0xdd);
    return be(n, 4);
  }

  MsgpackWriter mapHeader(int n) {
    checkLength(n);
    if (n < 16) {
      return put(0x80 | n);
    }
    if (n < 65536) {
      put(0xde);
      return be(n, 2);
    }
    put(0xdf);
    return be(n, 4);
  }

  int size() {
    return size;
  }

  byte[] toByteArray() {
    return Arrays.copyOf(buf, size);
  }

  private static void checkLength(int n) {
    if (n < 0) {
      throw new IllegalArgumentException("negative length: " + n);
    }
  }

  private MsgpackWriter raw(byte[] bytes) {
    ensure(bytes.length);
    System.arraycopy(bytes, 0, buf, size, bytes.length);
    size += bytes.length;
    return this;
  }

  private MsgpackWriter be(long v, int bytes) {
    ensure(bytes);
    for (int i = bytes - 1; i >= 0; i--) {
      buf[size++] = (byte) (v >>> (8 * i));
    }
    return this;
  }

  private MsgpackWriter put(int b) {
    ensure(1);
    buf[size++] = (byte) b;
    return this;
  }

  private void ensure(int more) {
    if (size + more > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + more));
    }
  }
}
