package dev.kinference.sim.server;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small independent msgpack decoder for tests: maps to LinkedHashMap, arrays to List, integers to Long (uint64
 * values at or above 2^63 to BigInteger), floats to Double, str to String, bin to byte[], nil to null. Records the
 * type byte of every integer it reads so tests can check encodings.
 */
final class Msgpack {

  private final ByteBuffer in;
  final List<Integer> intTypeBytes = new ArrayList<>();

  private Msgpack(byte[] bytes) {
    this.in = ByteBuffer.wrap(bytes);
  }

  static Object decode(byte[] bytes) {
    Msgpack m = new Msgpack(bytes);
    Object v = m.read();
    if (m.in.hasRemaining()) {
      throw new IllegalArgumentException(m.in.remaining() + " trailing bytes");
    }
    return v;
  }

  static Msgpack reader(byte[] bytes) {
    return new Msgpack(bytes);
  }

  Object read() {
    int b = in.get() & 0xff;
    if (b <= 0x7f) {
      intTypeBytes.add(b);
      return (long) b;
    }
    if (b >= 0xe0) {
      intTypeBytes.add(b);
      return (long) (byte) b;
    }
    if ((b & 0xf0) == 0x80) {
      return map(b & 0x0f);
    }
    if ((b & 0xf0) == 0x90) {
      return array(b & 0x0f);
    }
    if ((b & 0xe0) == 0xa0) {
      return str(b & 0x1f);
    }
    return switch (b) {
      case 0xc0 -> null;
      case 0xc2 -> false;
      case 0xc3 -> true;
      case 0xc4 -> bin(in.get() & 0xff);
      case 0xc5 -> bin(in.getShort() & 0xffff);
      case 0xc6 -> bin(in.getInt());
      case 0xca -> (double) in.getFloat();
      case 0xcb -> in.getDouble();
      case 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3 -> integer(b);
      case 0xd9 -> str(in.get() & 0xff);
      case 0xda -> str(in.getShort() & 0xffff);
      case 0xdb -> str(in.getInt());
      case 0xdc -> array(in.getShort() & 0xffff);
      case 0xdd -> array(in.getInt());
      case 0xde -> map(in.getShort() & 0xffff);
      case 0xdf -> map(in.getInt());
      default -> throw new IllegalArgumentException("unsupported msgpack type 0x" + Integer.toHexString(b));
    };
  }

  private Object integer(int b) {
    intTypeBytes.add(b);
    return switch (b) {
      case 0xcc -> (long) (in.get() & 0xff);
      case 0xcd -> (long) (in.getShort() & 0xffff);
      case 0xce -> in.getInt() & 0xffffffffL;
      case 0xcf -> {
        long v = in.getLong();
        yield v >= 0 ? (Object) v : new BigInteger(Long.toUnsignedString(v));
      }
      case 0xd0 -> (long) in.get();
      case 0xd1 -> (long) in.getShort();
      case 0xd2 -> (long) in.getInt();
      default -> in.getLong();
    };
  }

  private List<Object> array(int n) {
    List<Object> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(read());
    }
    return out;
  }

  private Map<Object, Object> map(int n) {
    Map<Object, Object> out = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      out.put(read(), read());
    }
    return out;
  }

  private String str(int n) {
    byte[] b = new byte[n];
    in.get(b);
    return new String(b, StandardCharsets.UTF_8);
  }

  private byte[] bin(int n) {
    byte[] b = new byte[n];
    in.get(b);
    return b;
  }

  /** An unsigned 64-bit value as a long bit pattern. */
  static long u64(Object v) {
    if (v instanceof BigInteger b) {
      return b.longValue();
    }
    return (Long) v;
  }
}
