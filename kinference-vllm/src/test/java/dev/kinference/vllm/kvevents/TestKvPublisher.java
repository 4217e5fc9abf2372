package dev.kinference.vllm.kvevents;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * A stand-in for vLLM's ZmqEventPublisher on loopback: a PUB socket sending [topic, seq, payload] and a ROUTER
 * replay socket answering [identity, "", start] with the buffered batches and the end marker. Real sockets, real
 * bytes. {@link #restart()} closes both sockets and binds new ones on the same ports with the sequence back at 0,
 * as a restarted server does.
 */
final class TestKvPublisher implements AutoCloseable {

  @SuppressWarnings("ArrayRecordComponent") // a test buffer entry, never compared
  record Buffered(long seq, byte[] payload) {}

  private final ZContext ctx = new ZContext(1);
  private final byte[] topic;
  private final boolean withReplay;
  private final boolean topicInReplay;
  private final List<Buffered> buffer = new ArrayList<>();
  private ZMQ.Socket pub;
  private ZMQ.Socket router;
  private Thread replayThread;
  private volatile boolean running = true;
  private final int pubPort;
  private int replayPort;
  private long nextSeq;
  private final java.util.concurrent.atomic.AtomicInteger replayRequests = new java.util.concurrent.atomic.AtomicInteger();

  TestKvPublisher(String topic, boolean withReplay, boolean topicInReplay) {
    this(topic, withReplay, topicInReplay, 0);
  }

  TestKvPublisher(String topic, boolean withReplay, boolean topicInReplay, int port) {
    ctx.setLinger(0);
    this.topic = topic.getBytes(StandardCharsets.UTF_8);
    this.withReplay = withReplay;
    this.topicInReplay = topicInReplay;
    pub = ctx.createSocket(SocketType.PUB);
    pub.setSndHWM(1_000_000);
    if (port == 0) {
      pubPort = pub.bindToRandomPort("tcp://127.0.0.1");
    } else {
      pub.bind("tcp://127.0.0.1:" + port);
      pubPort = port;
    }
    if (withReplay) {
      router = ctx.createSocket(SocketType.ROUTER);
      replayPort = router.bindToRandomPort("tcp://127.0.0.1");
      startReplay();
    }
  }

  String address() {
    return "tcp://127.0.0.1:" + pubPort;
  }

  int port() {
    return pubPort;
  }

  String replayAddress() {
    return "tcp://127.0.0.1:" + replayPort;
  }

  /** Replay requests answered so far. */
  int replayRequests() {
    return replayRequests.get();
  }

  synchronized long nextSeq() {
    return nextSeq;
  }

  /** Publishes a batch; returns its sequence number. */
  synchronized long publish(byte[] payload) {
    long seq = nextSeq++;
    buffer.add(new Buffered(seq, payload));
    pub.sendMore(topic);
    pub.sendMore(KvEventSequencer.toBytes(seq));
    pub.send(payload);
    return seq;
  }

  /** Numbers and buffers a batch without sending it live: a message the subscriber misses. */
  synchronized long publishLost(byte[] payload) {
    long seq = nextSeq++;
    buffer.add(new Buffered(seq, payload));
    return seq;
  }

  /** Sends arbitrary frames on the live socket. */
  synchronized void sendRaw(byte[]... frames) {
    for (int i = 0; i < frames.length; i++) {
      if (i < frames.length - 1) {
        pub.sendMore(frames[i]);
      } else {
        pub.send(frames[i]);
      }
    }
  }

  /** Forgets the replay buffer up to (excluding) {@code seq}, as a full ring buffer does. */
  synchronized void evictReplayBufferBelow(long seq) {
    buffer.removeIf(b -> b.seq() < seq);
  }

  /** Closes both sockets, binds new ones on the same ports, and restarts numbering at 0. */
  void restart() throws InterruptedException {
    stopReplay();
    synchronized (this) {
      pub.close();
      nextSeq = 0;
      buffer.clear();
      pub = bindRetrying(SocketType.PUB, pubPort);
      if (withReplay) {
        router = bindRetrying(SocketType.ROUTER, replayPort);
      }
    }
    if (withReplay) {
      startReplay();
    }
  }

  private ZMQ.Socket bindRetrying(SocketType type, int port) throws InterruptedException {
    for (int attempt = 0; ; attempt++) {
      ZMQ.Socket s = ctx.createSocket(type);
      try {
        s.bind("tcp://127.0.0.1:" + port);
        return s;
      } catch (RuntimeException e) {
        s.close();
        if (attempt > 50) {
          throw e;
        }
        Thread.sleep(20);
      }
    }
  }

  private void startReplay() {
    running = true;
    ZMQ.Socket r = router;
    r.setReceiveTimeOut(20);
    replayThread = new Thread(() -> serveReplay(r), "test-replay");
    replayThread.setDaemon(true);
    replayThread.start();
  }

  private void stopReplay() throws InterruptedException {
    if (replayThread != null) {
      running = false;
      replayThread.join();
      replayThread = null;
    }
  }

  private void serveReplay(ZMQ.Socket r) {
    try {
      while (running) {
        byte[] identity = r.recv(0);
        if (identity == null) {
          continue;
        }
        List<byte[]> rest = new ArrayList<>();
        while (r.hasReceiveMore()) {
          rest.add(r.recv(0));
        }
        if (rest.size() != 2) {
          continue;
        }
        long start = KvEventSequencer.toLong(rest.get(1));
        List<Buffered> copy;
        synchronized (this) {
          copy = new ArrayList<>(buffer);
        }
        for (Buffered b : copy) {
          if (Long.compareUnsigned(b.seq(), start) >= 0) {
            r.sendMore(identity);
            r.sendMore(new byte[0]);
            if (topicInReplay) {
              r.sendMore(topic);
            }
            r.sendMore(KvEventSequencer.toBytes(b.seq()));
            r.send(b.payload());
          }
        }
        r.sendMore(identity);
        r.sendMore(new byte[0]);
        if (topicInReplay) {
          r.sendMore(topic);
        }
        r.sendMore(KvEventSequencer.toBytes(-1));
        r.send(new byte[0]);
        replayRequests.incrementAndGet();
      }
    } finally {
      r.close();
    }
  }

  @Override
  public void close() {
    try {
      stopReplay();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (this) {
      pub.close();
    }
    ctx.close();
  }
}
