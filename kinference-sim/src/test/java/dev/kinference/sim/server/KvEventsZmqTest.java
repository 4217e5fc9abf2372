package dev.kinference.sim.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.prompt.ApproximateTokenizer;
import dev.kinference.request.InferenceRequest;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import zmq.ZError;

/** The KV-event stream as raw ZMQ frames, read with a JeroMQ SUB (live) and DEALER (replay) socket. */
class KvEventsZmqTest {

  static final String MODEL = "Qwen/Qwen3-8B";
  static final HttpClient HTTP = HttpClient.newHttpClient();
  ZContext zmq;

  @BeforeEach
  void context() {
    zmq = new ZContext();
  }

  @AfterEach
  void closeContext() {
    zmq.close();
  }

  /** One live message: its three frames. */
  @SuppressWarnings("ArrayRecordComponent") // raw frames, compared with Arrays.equals where needed
  record Frames(byte[] topic, long seq, byte[] payload) {}

  /**
   * A SUB socket whose subscription the publisher has seen (ZMQ's slow joiner: messages published before that are
   * not delivered). Its 1 s handshake limit makes a connection that JeroMQ 0.6 leaves deaf (about one in a hundred)
   * reconnect, as the product's subscriber does (regression: arrayFormatServersSendPositionalEvents).
   */
  ZMQ.Socket subscribe(SimulatedServer s) throws InterruptedException {
    return subscribe(s, s.kvEventsEndpoint());
  }

  /**
   * Subscribes through {@code endpoint}. While waiting, the socket is asked for its events: a ZeroMQ socket handles
   * the commands of its I/O thread only when its owner uses it, and after a reconnect the command that resends the
   * subscription would otherwise wait forever (regression: aSubscriberWhoseFirstConnectionStaysSilentIsHeardOnceItReconnects).
   */
  ZMQ.Socket subscribe(SimulatedServer s, String endpoint) throws InterruptedException {
    long before = s.kvEventSubscriptions();
    ZMQ.Socket sub = zmq.createSocket(SocketType.SUB);
    sub.setLinger(0);
    sub.setHandshakeIvl(1_000);
    sub.setReceiveTimeOut(15_000);
    sub.connect(endpoint);
    sub.subscribe(new byte[0]);
    long deadline = System.nanoTime() + 15_000_000_000L;
    while (s.kvEventSubscriptions() == before) {
      assertThat(System.nanoTime()).as("subscription seen by the publisher within 15 s").isLessThan(deadline);
      sub.getEvents();
      Thread.sleep(5);
    }
    return sub;
  }

  static Frames receive(ZMQ.Socket sub) {
    byte[] topic = sub.recv();
    assertThat(topic).as("a live message within 15 s").isNotNull();
    assertThat(sub.hasReceiveMore()).isTrue();
    byte[] seq = sub.recv();
    assertThat(sub.hasReceiveMore()).isTrue();
    byte[] payload = sub.recv();
    assertThat(sub.hasReceiveMore()).as("exactly three frames").isFalse();
    assertThat(seq).hasSize(8);
    return new Frames(topic, ByteBuffer.wrap(seq).getLong(), payload);
  }

  static void chat(SimulatedServer s, String user) throws Exception {
    String body = "{\"model\":\"" + MODEL + "\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\""
        + user + "\"}]}";
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(s.baseUri() + "/v1/chat/completions"))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
  }

  static String longText(int words) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < words; i++) {
      sb.append(" word").append(i % 97);
    }
    return sb.toString();
  }

  @Test
  @SuppressWarnings("unchecked")
  void liveFramesAreTopicSequenceAndAKvEventBatch() throws Exception {
    try (SimulatedServer s = SimulatedServer.builder(MODEL).hashSeed(42).start()) {
      ZMQ.Socket sub = subscribe(s);
      String user = "Tell me about caches." + longText(300);
      chat(s, user);
      Frames first = receive(sub);
      assertThat(new String(first.topic(), StandardCharsets.UTF_8))
          .isEqualTo("kv@127.0.0.1:" + s.port() + "@" + MODEL).isEqualTo(s.kvEventsTopic());
      assertThat(first.seq()).isZero();
      List<Object> batch = (List<Object>) Msgpack.decode(first.payload());
      assertThat(first.payload()[0]).isEqualTo((byte) 0x93);
      assertThat(first.payload()[1]).isEqualTo((byte) 0xcb);
      assertThat((Double) batch.get(0)).isCloseTo(System.currentTimeMillis() / 1000.0,
          org.assertj.core.data.Offset.offset(60.0));
      assertThat(batch.get(2)).isEqualTo(0L);
      Map<Object, Object> stored = (Map<Object, Object>) ((List<Object>) batch.get(1)).get(0);
      assertThat(stored.get("type")).isEqualTo("BlockStored");
      assertThat(stored.get("parent_block_hash")).isNull();
      assertThat(stored.get("block_size")).isEqualTo(16L);
      List<Object> hashes = (List<Object>) stored.get("block_hashes");
      int[] prompt = new ApproximateTokenizer().tokenize(InferenceRequest.builder(MODEL).user(user).build());
      long[] tokens = ((List<Object>) stored.get("token_ids")).stream().mapToLong(o -> (Long) o).toArray();
      assertThat(tokens).hasSize(hashes.size() * 16);
      assertThat(tokens).isEqualTo(Arrays.stream(prompt).limit(tokens.length).asLongStream().toArray());
      // unsigned 64-bit hashes: with ~20 random hashes, some are at or above 2^63 and must come as uint64
      assertThat(hashes).anySatisfy(h -> assertThat(h).isInstanceOf(BigInteger.class));
      Msgpack reader = Msgpack.reader(first.payload());
      reader.read();
      assertThat(reader.intTypeBytes).contains(0xcf);
      chat(s, "Another question." + longText(40));
      Frames second = receive(sub);
      assertThat(second.seq()).isEqualTo(1);
    }
  }

  @Test
  void aSubscriberWhoseFirstConnectionStaysSilentIsHeardOnceItReconnects() throws Exception {
    try (SimulatedServer s = SimulatedServer.builder(MODEL).timeScale(4).start();
        SilentFirstConnectionRelay relay = new SilentFirstConnectionRelay(portOf(s.kvEventsEndpoint()))) {
      ZMQ.Socket sub = subscribe(s, relay.endpoint());
      chat(s, "Hello" + longText(40));
      assertThat(receive(sub).seq()).isZero();
    }
  }

  static int portOf(@Nullable String endpoint) {
    assertThat(endpoint).isNotNull();
    return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
  }

  @Test
  @SuppressWarnings("unchecked")
  void arrayFormatServersSendPositionalEvents() throws Exception {
    try (SimulatedServer s = SimulatedServer.builder(MODEL).kvEventFormat(KvEventFormat.ARRAY).kvEventTopic("")
        .start()) {
      ZMQ.Socket sub = subscribe(s);
      chat(s, "Hello" + longText(40));
      Frames f = receive(sub);
      assertThat(f.topic()).isEmpty();
      List<Object> event = (List<Object>) ((List<Object>) ((List<Object>) Msgpack.decode(f.payload())).get(1)).get(0);
      assertThat(event.get(0)).isEqualTo("BlockStored");
      assertThat(event).hasSize(8);
      assertThat(event.get(6)).isEqualTo("GPU");
    }
  }

  /**
   * Reads one replay answer: every batch from {@code start}, then the end marker. A request that gets no answer is
   * sent again on a fresh socket: JeroMQ occasionally loses a message sent by a DEALER right after it connects
   * (regression: droppedSequencesAreMissingLiveAndRepairedByReplay failed with no answer in 15 s under load).
   */
  static List<Frames> replay(ZContext zmq, SimulatedServer s, long start, boolean withTopic) {
    long deadline = System.nanoTime() + 15_000_000_000L;
    ZMQ.Socket dealer;
    byte[] empty;
    do {
      dealer = zmq.createSocket(SocketType.DEALER);
      dealer.setLinger(0);
      dealer.setHandshakeIvl(1_000);
      dealer.setReceiveTimeOut(2_000);
      dealer.connect(s.kvEventsReplayEndpoint());
      dealer.sendMore(new byte[0]);
      dealer.send(KvEventPublisher.seqBytes(start));
      empty = dealer.recv();
      if (empty == null) {
        dealer.close();
      }
    } while (empty == null && System.nanoTime() < deadline);
    assertThat(empty).as("a replay answer within 15 s").isNotNull();
    dealer.setReceiveTimeOut(15_000);
    List<Frames> out = new ArrayList<>();
    while (true) {
      assertThat(empty).as("a replay answer within 15 s after " + out.size() + " batches").isNotNull().isEmpty();
      byte[] topic = withTopic ? dealer.recv() : new byte[0];
      byte[] seq = dealer.recv();
      byte[] payload = dealer.recv();
      assertThat(dealer.hasReceiveMore()).isFalse();
      if (Arrays.equals(seq, KvEventPublisher.END_SEQ)) {
        assertThat(payload).isEmpty();
        dealer.close();
        return out;
      }
      out.add(new Frames(topic, ByteBuffer.wrap(seq).getLong(), payload));
      empty = dealer.recv();
    }
  }

  @Test
  void droppedSequencesAreMissingLiveAndRepairedByReplay() throws Exception {
    try (SimulatedServer s = SimulatedServer.builder(MODEL).timeScale(4).start()) {
      ZMQ.Socket sub = subscribe(s);
      s.dropKvEvents(1, 3);
      int i = 0;
      while (s.nextKvEventSequence() < 5) {
        chat(s, "Question " + i++ + longText(40));
      }
      List<Long> live = new ArrayList<>();
      List<byte[]> livePayloads = new ArrayList<>();
      while (live.size() < s.nextKvEventSequence() - 2) {
        Frames f = receive(sub);
        live.add(f.seq());
        livePayloads.add(f.payload());
      }
      assertThat(live.subList(0, 3)).containsExactly(0L, 3L, 4L);
      List<Frames> replayed = replay(zmq, s, 1, false);
      assertThat(replayed.stream().map(Frames::seq).toList().subList(0, 4)).containsExactly(1L, 2L, 3L, 4L);
      assertThat(replayed.get(2).payload()).isEqualTo(livePayloads.get(1)); // seq 3, byte for byte
    }
  }

  @Test
  void replayWithTopicUsesTheNewerLayoutAndMalformedRequestsAreIgnored() throws Exception {
    try (SimulatedServer s = SimulatedServer.builder(MODEL).replayWithTopic(true).timeScale(4).start()) {
      chat(s, "Hello" + longText(40));
      ZMQ.Socket bad = zmq.createSocket(SocketType.DEALER);
      bad.connect(s.kvEventsReplayEndpoint());
      bad.send("garbage"); // no empty delimiter: two frames at the ROUTER, ignored
      List<Frames> replayed = replay(zmq, s, 0, true);
      assertThat(replayed).isNotEmpty();
      assertThat(replayed.get(0).seq()).isZero();
      assertThat(new String(replayed.get(0).topic(), StandardCharsets.UTF_8)).isEqualTo(s.kvEventsTopic());
    }
  }

  @Test
  void restartedServersNumberFromZeroAgainWithNewHashes() throws Exception {
    try (SimulatedServer s = SimulatedServer.builder(MODEL).timeScale(4).start()) {
      ZMQ.Socket sub = subscribe(s);
      String user = "Same question" + longText(40);
      chat(s, user);
      Frames before = receive(sub);
      assertThat(before.seq()).isZero();
      chat(s, "Another" + longText(40));
      s.restart();
      chat(s, user);
      Frames after = receive(sub);
      while (after.seq() != 0) {
        after = receive(sub);
      }
      assertThat(after.seq()).isZero();
      // a new process hashes with a new seed: the same tokens, different block hashes
      assertThat(firstHash(after)).isNotEqualTo(firstHash(before));
      assertThat(replay(zmq, s, 0, false).get(0).payload()).isEqualTo(after.payload());
    }
  }

  @Test
  void unreachableServersComeBackOnTheSameZmqPorts() throws Exception {
    try (SimulatedServer s = SimulatedServer.builder(MODEL).timeScale(4).start()) {
      String endpoint = s.kvEventsEndpoint();
      ZMQ.Socket before = subscribe(s);
      chat(s, "Hello" + longText(40));
      assertThat(receive(before).seq()).isZero();
      s.kill(SimulatedServer.KillMode.UNREACHABLE);
      s.restart();
      assertThat(s.kvEventsEndpoint()).isEqualTo(endpoint);
      ZMQ.Socket after = subscribe(s);
      chat(s, "Hello again" + longText(40));
      assertThat(receive(after).seq()).as("live on a new subscription").isZero();
      List<Frames> replayed = replay(zmq, s, 0, false);
      assertThat(replayed.get(0).seq()).isZero();
    }
  }

  @Test
  void resetPrefixCachePublishesAllBlocksCleared() throws Exception {
    try (SimulatedServer s = SimulatedServer.builder(MODEL).timeScale(4).start()) {
      chat(s, "Hello" + longText(40));
      assertThat(s.resetPrefixCache()).isTrue();
      List<Frames> replayed = replay(zmq, s, 0, false);
      Object last = Msgpack.decode(replayed.get(replayed.size() - 1).payload());
      assertThat(last.toString()).contains("AllBlocksCleared");
    }
  }

  @SuppressWarnings("unchecked")
  private static Object firstHash(Frames f) {
    Map<Object, Object> e = (Map<Object, Object>) ((List<Object>) ((List<Object>) Msgpack.decode(f.payload()))
        .get(1)).get(0);
    return ((List<Object>) e.get("block_hashes")).get(0);
  }

  @Test
  void aZeroMqThreadFailingWhileThePublisherClosesIsLoggedNotPrinted() {
    // Regression: `kinference demo` sometimes ended with a JeroMQ stack trace on stderr (an I/O thread's term
    // acknowledgement sent to a mailbox that had just closed, while the simulated servers shut down).
    KvEventPublisher publisher = new KvEventPublisher("127.0.0.1", 0, 0, "kv", 1_000, 16, false, "regression");
    Thread.UncaughtExceptionHandler handler = publisher.zeroMqThreadFailureHandler();
    PrintStream stderr = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      handler.uncaughtException(new Thread("iothread-2"), new ZError.IOException(new ClosedChannelException()));
      String whileOpen = captured.toString(StandardCharsets.UTF_8);
      captured.reset();
      publisher.close();
      handler.uncaughtException(new Thread("iothread-2"), new ZError.IOException(new ClosedChannelException()));
      assertThat(whileOpen).contains("ZeroMQ thread iothread-2 failed");
      assertThat(captured.toString(StandardCharsets.UTF_8)).doesNotContain("iothread-2");
    } finally {
      System.setErr(stderr);
      publisher.close();
    }
  }
}
