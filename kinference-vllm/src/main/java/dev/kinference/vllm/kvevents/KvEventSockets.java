package dev.kinference.vllm.kvevents;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

/**
 * The ZeroMQ side of one {@link KvEventSubscriber}: its live SUB socket (subscribed to the topic, with a monitor that
 * reports lost connections) and the replay DEALER that asks vLLM's ROUTER for buffered batches. Knows the wire's
 * sockets and timeouts, nothing of sequences: the replies go to {@link KvEventSequencer} as they came, which also
 * holds them to the topic. Used by the subscriber's thread; {@link #close} may be called from the thread that stops it.
 */
final class KvEventSockets implements AutoCloseable {

  // the subscriber's logger, as before the sockets had their own class: logging configurations name it
  private static final Logger LOG = LoggerFactory.getLogger(KvEventSubscriber.class);
  /**
   * How long a connection may take to complete its ZMTP greeting before it is dropped and made again. JeroMQ 0.6
   * occasionally leaves a fresh loopback or LAN connection established but never reads the peer's greeting (about
   * one connection in a hundred here); ZeroMQ's default of 30 s would leave the subscriber deaf that long.
   */
  static final int HANDSHAKE_MILLIS = 1_000;
  private static final AtomicLong MONITORS = new AtomicLong();

  /** A connected live socket and the monitor reporting its disconnections; closing closes both. */
  record Live(ZMQ.Socket socket, ZMQ.Socket monitor) implements AutoCloseable {
    @Override
    public void close() {
      socket.close();
      monitor.close();
    }
  }

  private final String endpointId;
  private final String address;
  private final @Nullable String replayAddress;
  private final byte[] topic;
  private final Duration receiveTimeout;
  private final Duration replayTimeout;
  private final Duration reconnectMin;
  private final Duration reconnectMax;
  private final BooleanSupplier running;
  private final @Nullable ZContext sharedContext;
  private @Nullable ZContext ownContext;

  /**
   * @param running whether the subscriber still runs: a replay in progress gives up when it stops
   * @param sharedContext a context shared with other subscribers, or null to make one of its own
   */
  KvEventSockets(String endpointId, String address, @Nullable String replayAddress, byte[] topic,
      Duration receiveTimeout, Duration replayTimeout, Duration reconnectMin, Duration reconnectMax,
      BooleanSupplier running, @Nullable ZContext sharedContext) {
    this.endpointId = endpointId;
    this.address = address;
    this.replayAddress = replayAddress;
    this.topic = topic.clone();
    this.receiveTimeout = receiveTimeout;
    this.replayTimeout = replayTimeout;
    this.reconnectMin = reconnectMin;
    this.reconnectMax = reconnectMax;
    this.running = running;
    this.sharedContext = sharedContext;
  }

  /** A new live socket, connected and subscribed to the topic. */
  Live openLive() {
    ZMQ.Socket socket = context().createSocket(SocketType.SUB);
    ZMQ.Socket monitor = null;
    try {
      socket.setLinger(0);
      socket.setHandshakeIvl(HANDSHAKE_MILLIS);
      socket.setRcvHWM(100_000);
      socket.setReceiveTimeOut((int) receiveTimeout.toMillis());
      socket.setReconnectIVL((int) reconnectMin.toMillis());
      socket.setReconnectIVLMax((int) reconnectMax.toMillis());
      // Neither ZMTP heartbeats nor TCP keepalive options: with JeroMQ 0.6 either one sometimes leaves a
      // subscriber that never receives again from a publisher restarted on the same port (regression tests:
      // the restart tests). A silent connection is replaced instead (see KvEventSubscriber's receive loop).
      String monitorAddress = "inproc://kv-events-monitor-" + MONITORS.incrementAndGet();
      socket.monitor(monitorAddress, ZMQ.EVENT_DISCONNECTED);
      monitor = context().createSocket(SocketType.PAIR);
      monitor.setLinger(0);
      monitor.connect(monitorAddress);
      socket.connect(address);
      socket.subscribe(topic);
      return new Live(socket, monitor);
    } catch (RuntimeException e) {
      socket.close();
      if (monitor != null) {
        monitor.close();
      }
      throw e;
    }
  }

  /**
   * The replay socket's replies from {@code from} on, each reply's frames after the empty delimiter, up to and
   * including the end marker (or a malformed reply, which the sequencer rejects); null when it does not answer in
   * time (logged) or the subscriber is stopping. Only with a replay address.
   */
  @Nullable List<byte[][]> fetchReplay(long from) {
    String where = Objects.requireNonNull(replayAddress);
    ZMQ.Socket dealer = null;
    try {
      // The request is sent again on a fresh socket when no reply comes soon: a request sent right after
      // connecting is occasionally lost, and a duplicate only costs the server a second answer.
      long deadline = System.nanoTime() + replayTimeout.toNanos();
      byte[] first = null;
      for (int attempt = 0; first == null; attempt++) {
        long left = deadline - System.nanoTime();
        if (left <= 0 || !running.getAsBoolean()) {
          LOG.warn("replay of KV events {}.. of {} from {} got no answer within {}", Long.toUnsignedString(from),
              endpointId, where, replayTimeout);
          return null;
        }
        if (dealer != null) {
          dealer.close();
        }
        dealer = context().createSocket(SocketType.DEALER);
        dealer.setLinger(0);
        dealer.setHandshakeIvl(HANDSHAKE_MILLIS);
        dealer.setReceiveTimeOut((int) Math.max(1, Math.min(left / 1_000_000, 200L << Math.min(attempt, 6))));
        dealer.connect(where);
        dealer.sendMore(new byte[0]);
        dealer.send(KvEventSequencer.toBytes(from));
        first = dealer.recv(0);
      }
      return readReplies(Objects.requireNonNull(dealer), first, from, where);
    } catch (ZMQException e) {
      LOG.warn("replay of KV events of {} from {} failed: {}", endpointId, where, e.toString());
      return null;
    } finally {
      if (dealer != null) {
        dealer.close();
      }
    }
  }

  /** The replies after the {@code first} frame, up to and including the end marker; null on a timeout or a stop. */
  private @Nullable List<byte[][]> readReplies(ZMQ.Socket socket, byte[] firstFrame, long from, String where) {
    socket.setReceiveTimeOut((int) replayTimeout.toMillis());
    List<byte[][]> replies = new ArrayList<>();
    List<byte[]> frames = new ArrayList<>(5);
    byte @Nullable [] first = firstFrame;
    while (running.getAsBoolean()) {
      if (first == null) {
        first = socket.recv(0);
      }
      if (first == null) {
        LOG.warn("replay of KV events {}.. of {} from {} timed out after {}", Long.toUnsignedString(from),
            endpointId, where, replayTimeout);
        return null;
      }
      frames.clear();
      frames.add(first);
      first = null;
      while (socket.hasReceiveMore()) {
        frames.add(socket.recv(0));
      }
      if (!frames.isEmpty() && frames.get(0).length == 0) {
        frames.remove(0);
      }
      replies.add(frames.toArray(new byte[0][]));
      if (KvEventSequencer.endsReplay(frames)) {
        return replies;
      }
    }
    return null;
  }

  private ZContext context() {
    ZContext c = sharedContext;
    if (c != null) {
      return c;
    }
    synchronized (this) {
      ZContext own = ownContext;
      if (own == null) {
        own = new ZContext(1);
        own.setLinger(0);
        ownContext = own;
      }
      return own;
    }
  }

  /** Closes the context of its own, if it made one (a shared context stays open). */
  @Override
  public synchronized void close() {
    ZContext own = ownContext;
    if (own != null) {
      own.close();
      ownContext = null;
    }
  }
}
