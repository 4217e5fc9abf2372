package dev.kinference.sim.server;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * vLLM's {@code ZmqEventPublisher}, on loopback: a PUB socket sending each batch as three frames
 * {@code [topic, seq (8 bytes, big-endian, from 0), payload]}, and a ROUTER replay socket answering a request
 * {@code [identity, "", start seq]} with every buffered batch whose sequence is at least the start, as
 * {@code [identity, "", seq, payload]} (or {@code [identity, "", topic, seq, payload]} in the newer layout), then
 * the end marker {@code [identity, "", ff x 8, ""]}.
 *
 * <p>Thread-safety: {@link #publish}, {@link #restart}, {@link #dropSequences} and {@link #close} may be called
 * from any thread. The sockets are owned by one publisher thread (ZMQ sockets are not thread-safe), which assigns
 * sequence numbers in the order batches were handed over.
 */
final class KvEventPublisher implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(KvEventPublisher.class);
  static final byte[] END_SEQ = {-1, -1, -1, -1, -1, -1, -1, -1};
  private static final byte[] EMPTY = new byte[0];

  /** Work for the publisher thread. */
  private sealed interface Command permits Batch, Restart, Stop {}

  @SuppressWarnings("ArrayRecordComponent") // an encoded frame, never compared or copied
  private record Batch(byte[] payload) implements Command {}

  private record Restart(CountDownLatch done) implements Command {}

  private record Stop() implements Command {}

  /** A half-open range of sequence numbers not sent live (still buffered for replay). */
  private record Range(long from, long to) {}

  private final ZContext context;
  private final ZMQ.Socket pub;
  private final ZMQ.Socket replay;
  private final byte[] topic;
  private final int pubPort;
  private final int replayPort;
  private final int bufferSteps;
  private final boolean replayWithTopic;
  private final BlockingQueue<Command> commands = new LinkedBlockingQueue<>();
  private final List<Range> drops = new CopyOnWriteArrayList<>();
  private final AtomicLong sentLive = new AtomicLong();
  private final AtomicLong droppedLive = new AtomicLong();
  private final AtomicLong nextSequence = new AtomicLong();
  private final Thread thread;
  private final java.util.concurrent.atomic.AtomicLong subscriptions = new java.util.concurrent.atomic.AtomicLong();
  private volatile boolean closed;

  // owned by the publisher thread
  private final ArrayDeque<Batch> buffered = new ArrayDeque<>();
  private final ArrayDeque<Long> bufferedSeqs = new ArrayDeque<>();
  private long seq;

  /**
   * Binds both sockets on {@code host}, to the given ports or, where a port is 0, to ephemeral ones.
   *
   * @param bufferSteps batches kept for replay (vLLM's {@code buffer_steps})
   * @param replayWithTopic whether replayed batches carry the topic frame (newer vLLM) or not (older)
   */
  KvEventPublisher(String host, int port, int replayPort, String topic, int hwm, int bufferSteps,
      boolean replayWithTopic, String name) {
    this.topic = topic.getBytes(StandardCharsets.UTF_8);
    this.bufferSteps = bufferSteps;
    this.replayWithTopic = replayWithTopic;
    this.context = new ZContext(1);
    // JeroMQ's I/O thread can fail while the context terminates (a term acknowledgement sent to a mailbox that has
    // just closed); the default handler printed that on stderr, at the end of `kinference demo`'s output.
    context.setUncaughtExceptionHandler(this::onZeroMqThreadFailure);
    try {
      // XPUB rather than PUB: the same wire protocol for subscribers, but it hands us their subscriptions, so a test
      // can wait until one took effect instead of sleeping past ZeroMQ's slow-joiner window.
      this.pub = context.createSocket(SocketType.XPUB);
      pub.setXpubVerbose(true);
      pub.setSndHWM(hwm);
      pub.setLinger(0);
      // JeroMQ occasionally stalls a fresh connection's greeting; a short handshake limit makes it reconnect.
      pub.setHandshakeIvl(1_000);
      this.pubPort = bind(pub, host, port);
      this.replay = context.createSocket(SocketType.ROUTER);
      replay.setLinger(0);
      replay.setHandshakeIvl(1_000);
      this.replayPort = bind(replay, host, replayPort);
    } catch (RuntimeException e) {
      context.close();
      throw e;
    }
    this.thread = new Thread(this::run, "kv-events-" + name);
    thread.setDaemon(true);
    thread.start();
  }

  private static int bind(ZMQ.Socket socket, String host, int port) {
    if (port == 0) {
      return socket.bindToRandomPort("tcp://" + host);
    }
    socket.bind("tcp://" + host + ":" + port);
    return port;
  }

  int port() {
    return pubPort;
  }

  int replayPort() {
    return replayPort;
  }

  byte[] topic() {
    return topic.clone();
  }

  /** Hands a batch payload over for publishing; its sequence number is assigned in order. */
  void publish(byte[] payload) {
    if (!closed) {
      commands.add(new Batch(payload));
    }
  }

  /**
   * Forgets every buffered batch and starts sequence numbers again at 0, as a restarted vLLM process does. Returns
   * once batches handed over before this call were sent.
   */
  void restart() throws InterruptedException {
    CountDownLatch done = new CountDownLatch(1);
    commands.add(new Restart(done));
    if (!done.await(10, TimeUnit.SECONDS)) {
      throw new IllegalStateException("KV-event publisher did not restart within 10 s");
    }
  }

  /** Batches with sequence numbers in {@code [from, to)} are buffered for replay but not sent live. */
  void dropSequences(long from, long to) {
    if (from < 0 || to < from) {
      throw new IllegalArgumentException("invalid range [" + from + ", " + to + ")");
    }
    drops.add(new Range(from, to));
  }

  /** Stops dropping. */
  void clearDrops() {
    drops.clear();
  }

  /** The sequence number the next batch will get. */
  long nextSequence() {
    return nextSequence.get();
  }

  /** What becomes of a failure in one of the context's own threads: expected while closing, a warning before. */
  void onZeroMqThreadFailure(Thread thread, Throwable failure) {
    if (closed) {
      log.debug("ZeroMQ thread {} failed while the publisher closed", thread.getName(), failure);
    } else {
      log.warn("ZeroMQ thread {} failed", thread.getName(), failure);
    }
  }

  Thread.UncaughtExceptionHandler zeroMqThreadFailureHandler() {
    return context.getUncaughtExceptionHandler();
  }

  long sentLive() {
    return sentLive.get();
  }

  long droppedLive() {
    return droppedLive.get();
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    commands.add(new Stop());
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    context.close();
  }

  private void run() {
    try {
      while (true) {
        Command c = commands.poll(2, TimeUnit.MILLISECONDS);
        while (c != null) {
          switch (c) {
            case Batch b -> send(b);
            case Restart r -> {
              seq = 0;
              nextSequence.set(0);
              buffered.clear();
              bufferedSeqs.clear();
              r.done().countDown();
            }
            case Stop s -> {
              return;
            }
          }
          c = commands.poll();
        }
        countSubscriptions();
        serviceReplay();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      if (!closed) {
        log.error("KV-event publisher stopped", e);
      }
    }
  }

  private void countSubscriptions() {
    for (byte[] m = pub.recv(ZMQ.DONTWAIT); m != null; m = pub.recv(ZMQ.DONTWAIT)) {
      if (m.length > 0 && m[0] == 1) {
        subscriptions.incrementAndGet();
      }
    }
  }

  /** How many subscribe messages subscribers have sent so far (one per subscription, counted on arrival). */
  long subscriptions() {
    return subscriptions.get();
  }

  private void send(Batch b) {
    long s = seq++;
    nextSequence.set(seq);
    if (dropped(s)) {
      droppedLive.incrementAndGet();
    } else {
      pub.sendMore(topic);
      pub.sendMore(seqBytes(s));
      pub.send(b.payload());
      sentLive.incrementAndGet();
    }
    buffered.addLast(b);
    bufferedSeqs.addLast(s);
    if (buffered.size() > bufferSteps) {
      buffered.removeFirst();
      bufferedSeqs.removeFirst();
    }
  }

  private boolean dropped(long s) {
    for (Range r : drops) {
      if (s >= r.from() && s < r.to()) {
        return true;
      }
    }
    return false;
  }

  /** Answers every waiting replay request; malformed requests are logged and ignored, as vLLM does. */
  private void serviceReplay() {
    while (true) {
      byte[] identity = replay.recv(ZMQ.DONTWAIT);
      if (identity == null) {
        return;
      }
      List<byte[]> frames = new java.util.ArrayList<>(3);
      frames.add(identity);
      while (replay.hasReceiveMore()) {
        frames.add(replay.recv());
      }
      if (frames.size() != 3 || frames.get(1).length != 0 || frames.get(2).length == 0
          || frames.get(2).length > 8) {
        log.warn("Invalid KV-event replay request with {} frames; ignored", frames.size());
        continue;
      }
      long start = 0;
      for (byte x : frames.get(2)) {
        start = (start << 8) | (x & 0xff);
      }
      var seqs = bufferedSeqs.iterator();
      for (Batch b : buffered) {
        long s = seqs.next();
        if (Long.compareUnsigned(s, start) >= 0) {
          replay.sendMore(identity);
          replay.sendMore(EMPTY);
          if (replayWithTopic) {
            replay.sendMore(topic);
          }
          replay.sendMore(seqBytes(s));
          replay.send(b.payload());
        }
      }
      replay.sendMore(identity);
      replay.sendMore(EMPTY);
      if (replayWithTopic) {
        replay.sendMore(topic);
      }
      replay.sendMore(END_SEQ);
      replay.send(EMPTY);
    }
  }

  static byte[] seqBytes(long s) {
    byte[] b = new byte[8];
    for (int i = 7; i >= 0; i--) {
      b[i] = (byte) s;
      s >>>= 8;
    }
    return b;
  }
}
