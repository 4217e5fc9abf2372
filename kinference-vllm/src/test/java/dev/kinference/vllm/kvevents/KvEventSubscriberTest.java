package dev.kinference.vllm.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.cache.KvEvent;
import dev.kinference.cache.PreciseCacheIndex;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.endpoint.EndpointState;
import dev.kinference.endpoint.Fleet;
import dev.kinference.testkit.vllm.KvEventEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Against a real ZeroMQ PUB/ROUTER publisher on loopback. */
class KvEventSubscriberTest {

  static final String MODEL = "Qwen/Qwen3-8B";
  static final int BLOCK = 4;

  final List<AutoCloseable> closeables = new ArrayList<>();
  final Fleet fleet = Fleet.create();
  final PreciseCacheIndex index = new PreciseCacheIndex();
  /** Current vLLM's encoding; the tests of other layouts declare their own. */
  final KvEventEncoder enc = KvEventEncoder.of(KvEventEncoder.Layout.MAP);
  final Random random = new Random(42);
  final List<String> rejections = new CopyOnWriteArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
  }

  EndpointState endpoint(String id) {
    fleet.addListener(index);
    fleet.setEndpoints(List.of(Endpoint.of(id, "http://127.0.0.1:1", MODEL)));
    return fleet.get(id);
  }

  TestKvPublisher publisher(boolean replay, boolean topicInReplay) {
    TestKvPublisher p = new TestKvPublisher("kv@pod@" + MODEL, replay, topicInReplay);
    closeables.add(p);
    return p;
  }

  KvEventSubscriber subscribe(EndpointState state, TestKvPublisher p, boolean replay) {
    KvEventSubscriber s = KvEventSubscriber.builder(state, index)
        .address(p.address())
        .replayAddress(replay ? p.replayAddress() : null)
        .topic("kv@pod@")
        .receiveTimeout(Duration.ofMillis(20))
        .replayTimeout(Duration.ofSeconds(15)) // generous: the build machine may be heavily loaded
        .listener(new KvEventSubscriber.Listener() {
          @Override
          public void onRejected(EndpointState endpoint, String reason) {
            rejections.add(reason);
          }
        })
        .build()
        .start();
    closeables.add(s);
    return s;
  }

  /**
   * A subscriber with a replay socket whose longest reconnect backoff is {@code reconnectMax}, so it checks a silence
   * after twice that plus a second instead of eleven seconds.
   */
  KvEventSubscriber subscribeCheckingSilences(EndpointState state, TestKvPublisher p, Duration reconnectMax) {
    KvEventSubscriber s = KvEventSubscriber.builder(state, index).address(p.address())
        .replayAddress(p.replayAddress()).topic("kv@pod@").receiveTimeout(Duration.ofMillis(20))
        .replayTimeout(Duration.ofSeconds(15)).reconnect(Duration.ofMillis(10), reconnectMax)
        .build().start();
    closeables.add(s);
    return s;
  }

  /** Publishes a no-op batch until the subscriber has seen one, so that later messages are not lost to joining. */
  static void handshake(TestKvPublisher p, KvEventSubscriber s, KvEventEncoder enc) {
    long before = s.stats().batches();
    Await.until("subscription", () -> {
      p.publish(enc.encode(0, List.of(), -1));
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return s.stats().batches() > before;
    });
  }

  int[] prompt() {
    int prefix = random.nextInt(4);
    int prefixBlocks = 2 + prefix * 3;
    int suffixBlocks = random.nextInt(4);
    int[] tokens = new int[(prefixBlocks + suffixBlocks) * BLOCK + random.nextInt(BLOCK)];
    for (int i = 0; i < tokens.length; i++) {
      tokens[i] = i < prefixBlocks * BLOCK ? 1000 * prefix + i : random.nextInt(150_000);
    }
    return tokens;
  }

  void workload(TestKvPublisher p, FakeEnginePool pool, KvEventEncoder enc, int requests) {
    for (int i = 0; i < requests; i++) {
      List<KvEvent> events = pool.process(prompt());
      p.publish(enc.encode(i, events, 0));
    }
  }

  /** Like {@link #workload}, but the live messages are lost: only the publisher's replay buffer has the batches. */
  void lostWorkload(TestKvPublisher p, FakeEnginePool pool, KvEventEncoder enc, int requests) {
    for (int i = 0; i < requests; i++) {
      p.publishLost(enc.encode(i, pool.process(prompt()), 0));
    }
  }

  static void awaitApplied(KvEventSubscriber s, TestKvPublisher p) {
    long last = p.nextSeq() - 1;
    Await.until("sequence " + last, () -> s.stats().lastSequence() == last, () -> s.stats().toString());
  }

  @ParameterizedTest
  @EnumSource(KvEventEncoder.Layout.class)
  void indexEqualsTheServersBlockPoolAfterAWorkload(KvEventEncoder.Layout layout) {
    EndpointState state = endpoint("vllm-0");
    TestKvPublisher p = publisher(false, false);
    KvEventSubscriber s = subscribe(state, p, false);
    KvEventEncoder enc = KvEventEncoder.of(layout);
    handshake(p, s, enc);
    FakeEnginePool pool = new FakeEnginePool(MODEL, BLOCK, 40);

    workload(p, pool, enc, 300);
    awaitApplied(s, p);

    pool.assertIndexEquals(index, state);
    assertThat(s.stats().gaps()).isZero();
    assertThat(s.stats().resyncs()).isZero();
    assertThat(index.stats().orphanedBlocks()).isZero();
    assertThat(pool.contents()).isNotEmpty();
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aDroppedRangeOfEventsIsReplayed(boolean topicInReplay) {
    EndpointState state = endpoint("vllm-0");
    TestKvPublisher p = publisher(true, topicInReplay);
    KvEventSubscriber s = subscribe(state, p, true);
    handshake(p, s, enc);
    FakeEnginePool pool = new FakeEnginePool(MODEL, BLOCK, 40);
    workload(p, pool, enc, 20);

    lostWorkload(p, pool, enc, 15);
    workload(p, pool, enc, 20);
    awaitApplied(s, p);

    pool.assertIndexEquals(index, state);
    assertThat(s.stats().gaps()).isEqualTo(s.stats().repairedGaps()).isPositive();
    assertThat(s.stats().replayedBatches()).isGreaterThanOrEqualTo(15);
    assertThat(s.stats().resyncs()).isZero();
  }

  /**
   * Regression: JeroMQ 0.6 leaves about one fresh connection in a hundred established but deaf (the subscriber never
   * reads the publisher's greeting), and ZeroMQ's default 30 s handshake limit kept such a subscriber deaf that long.
   * With {@link KvEventSockets#HANDSHAKE_MILLIS} every one of 150 fresh subscribers hears within seconds.
   */
  @Test
  void everyFreshSubscriberHearsThePublisherWithinSeconds() throws Exception {
    EndpointState state = endpoint("vllm-0");
    TestKvPublisher p = publisher(false, false);
    // one context for all: each subscriber still makes a fresh socket and connection, which is what stalled
    try (org.zeromq.ZContext context = new org.zeromq.ZContext(1)) {
      context.setLinger(0);
      for (int i = 0; i < 150; i++) {
        freshSubscriberHears(state, p, context, i);
      }
    }
  }

  private void freshSubscriberHears(EndpointState state, TestKvPublisher p, org.zeromq.ZContext context, int i)
      throws InterruptedException {
    KvEventSubscriber s = KvEventSubscriber.builder(state, index).address(p.address()).topic("kv@pod@")
        .receiveTimeout(Duration.ofMillis(5)).context(context).build().start();
    long start = System.nanoTime();
    while (s.stats().batches() == 0) {
      assertThat(System.nanoTime() - start).as("fresh subscriber %d still deaf", i).isLessThan(8_000_000_000L);
      p.publish(enc.encode(0, List.of(), -1));
      Thread.sleep(2);
    }
    s.close();
  }

  @Test
  void aSubscriberThatJoinsLateReplaysWhatTheServerStillBuffers() {
    EndpointState state = endpoint("vllm-0");
    TestKvPublisher p = publisher(true, true);
    FakeEnginePool pool = new FakeEnginePool(MODEL, BLOCK, 40);
    workload(p, pool, enc, 50);

    KvEventSubscriber s = subscribe(state, p, true);
    Await.until("subscription", () -> {
      p.publish(enc.encode(0, List.of(), 0));
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return s.stats().batches() > 0;
    });
    awaitApplied(s, p);

    pool.assertIndexEquals(index, state);
    assertThat(s.stats().replayedBatches()).isGreaterThanOrEqualTo(50);
  }

  @Test
  void aGapWithoutReplayDropsTheEndpointsEntriesAndRebuildsFromNewEvents() {
    EndpointState state = endpoint("vllm-0");
    TestKvPublisher p = publisher(false, false);
    KvEventSubscriber s = subscribe(state, p, false);
    KvEventEncoder enc = KvEventEncoder.of(KvEventEncoder.Layout.ARRAY);
    handshake(p, s, enc);
    FakeEnginePool pool = new FakeEnginePool(MODEL, BLOCK, 40);
    workload(p, pool, enc, 30);
    awaitApplied(s, p);
    pool.assertIndexEquals(index, state);

    p.publishLost(enc.encode(0, pool.process(prompt()), 0));
    // The server clears its cache (as after a reset), so the rebuilt index can be compared exactly.
    pool.clear();
    p.publish(enc.encode(0, List.of(new KvEvent.AllBlocksCleared()), 0));
    workload(p, pool, enc, 30);
    awaitApplied(s, p);

    assertThat(s.stats().gaps()).isEqualTo(1);
    assertThat(s.stats().repairedGaps()).isZero();
    assertThat(s.stats().resyncs()).isEqualTo(1);
    pool.assertIndexEquals(index, state);
  }

  @Test
  void anUnrepairableGapLeavesOnlyEntriesThatAreTrue() {
    EndpointState state = endpoint("vllm-0");
    TestKvPublisher p = publisher(true, false);
    KvEventSubscriber s = subscribe(state, p, true);
    handshake(p, s, enc);
    FakeEnginePool pool = new FakeEnginePool(MODEL, BLOCK, 40);
    workload(p, pool, enc, 30);
    awaitApplied(s, p);

    lostWorkload(p, pool, enc, 10);
    p.evictReplayBufferBelow(p.nextSeq());
    workload(p, pool, enc, 30);
    awaitApplied(s, p);

    assertThat(s.stats().gaps()).isEqualTo(1);
    assertThat(s.stats().repairedGaps()).isZero();
    assertThat(s.stats().resyncs()).isPositive();
    // Everything the index holds is in the pool under the right key; it may hold less than the pool.
    var contents = pool.contents();
    assertThat(index.blockCount(state)).isPositive().isLessThanOrEqualTo(contents.size());
    contents.forEach((hash, key) -> {
      Long k = index.routerKey(state, hash);
      if (k != null) {
        assertThat(k).isEqualTo(key);
      }
    });
  }

  /**
   * Regression: a fresh subscriber whose live socket never delivered (seen about once in a dozen runs of
   * SimulatedServerIntegrationTest against the simulator's JeroMQ publisher) replaced its socket after each silence
   * without asking the replay socket, so its endpoint stayed empty. What the server buffers is now applied.
   */
  @Test
  void aSubscriberWhoseLiveSocketNeverDeliversLearnsFromTheReplaySocket() throws Exception {
    EndpointState state = endpoint("vllm-0");
    TestKvPublisher p = publisher(true, true);
    FakeEnginePool pool = new FakeEnginePool(MODEL, BLOCK, 40);
    lostWorkload(p, pool, enc, 12);
    KvEventSubscriber s = subscribeCheckingSilences(state, p, Duration.ofMillis(10));
    awaitApplied(s, p);
    pool.assertIndexEquals(index, state);
    assertThat(s.stats().replayedBatches()).isEqualTo(12);
  }

  /**
   * Regression: a subscriber whose connection dropped before it had applied anything, and which then learned the
   * server's batches from the replay socket, took its first live message for one after a lost connection and
   * rebuilt its entries for nothing (SimulatedServerIntegrationTest saw one resync where it expects none).
   */
  @Test
  void aConnectionLostBeforeAnythingWasAppliedCostsNoResync() throws Exception {
    EndpointState state = endpoint("vllm-0");
    TestKvPublisher p = publisher(true, true);
    KvEventSubscriber s = subscribeCheckingSilences(state, p, Duration.ofMillis(10));
    Thread.sleep(500); // connected, nothing published yet
    p.restart(); // the connection drops
    FakeEnginePool pool = new FakeEnginePool(MODEL, BLOCK, 40);
    lostWorkload(p, pool, enc, 12);
    awaitApplied(s, p); // from the replay socket, after a silence
    handshake(p, s, enc); // then live again
    workload(p, pool, enc, 5);
    awaitApplied(s, p);
    pool.assertIndexEquals(index, state);
    assertThat(s.stats().resyncs()).as(s.stats().toString()).isZero();
    assertThat(s.stats().reconnects()).as(s.stats().toString()).isZero();
  }

  @Test
  void aKilledAndRestartedServerIsDetectedAndRebuilt() throws Exception {
    EndpointState state = endpoint("vllm-0");
    TestKvPublisher p = publisher(true, true);
    KvEventSubscriber s = subscribe(state, p, true);
    handshake(p, s, enc);
    FakeEnginePool pool = new FakeEnginePool(MODEL, BLOCK, 40);
    workload(p, pool, enc, 40);
    awaitApplied(s, p);
    pool.assertIndexEquals(index, state);

    p.restart();
    FakeEnginePool fresh = new FakeEnginePool(MODEL, BLOCK, 40);
    // Until the subscriber has reconnected, what the new process publishes is only in its replay buffer.
    Await.until("reconnect after restart", () -> {
      p.publish(enc.encode(0, fresh.process(prompt()), 0));
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return s.stats().restarts() > 0;
    });
    workload(p, fresh, enc, 20);
    awaitApplied(s, p);

    assertThat(s.stats().restarts()).isEqualTo(1);
    fresh.assertIndexEquals(index, state);
  }

  @Test
  void truncatedAndGarbageFramesAreRejectedAndTheSubscriberKeepsRunning() {
    EndpointState state = endpoint("vllm-0");
    TestKvPublisher p = publisher(false, false);
    KvEventSubscriber s = subscribe(state, p, false);
    handshake(p, s, enc);
    byte[] topic = "kv@pod@x".getBytes(StandardCharsets.UTF_8);
    byte[] valid = enc.encode(1, List.of(new KvEvent.BlockStored(new long[] {1, 2}, null, new int[] {1, 2, 3, 4,
        5, 6, 7, 8}, BLOCK, null, KvEvent.Medium.GPU, null)), 0);

    p.sendRaw(topic, KvEventSequencer.toBytes(p.nextSeq()));                 // two frames
    p.sendRaw(topic, new byte[] {0, 1, 2}, valid);                             // 3-byte sequence
    long seq = p.publish(java.util.Arrays.copyOf(valid, valid.length - 5));    // truncated payload
    p.publish("not msgpack at all".getBytes(StandardCharsets.US_ASCII));       // garbage payload
    FakeEnginePool pool = new FakeEnginePool(MODEL, BLOCK, 40);
    workload(p, pool, enc, 20);
    awaitApplied(s, p);

    assertThat(s.isRunning()).isTrue();
    assertThat(s.stats().rejectedFrames()).isEqualTo(4);
    assertThat(rejections).hasSize(4);
    assertThat(rejections.get(0)).contains("expected 3 frames");
    assertThat(rejections.get(1)).contains("sequence frame has 3 bytes");
    assertThat(rejections.get(2)).contains("batch " + seq + " does not decode").contains("truncated");
    assertThat(rejections.get(3)).contains("does not decode");
    pool.assertIndexEquals(index, state);
  }

  @Test
  void dataParallelRanksSubscribeOnPortOffsets() throws Exception {
    TestKvPublisher rank0 = null;
    TestKvPublisher rank1 = null;
    for (int attempt = 0; rank1 == null; attempt++) {
      TestKvPublisher p0 = publisher(false, false);
      try {
        rank1 = new TestKvPublisher("kv@pod@" + MODEL, false, false, p0.port() + 1);
        closeables.add(rank1);
        rank0 = p0;
      } catch (RuntimeException portTaken) {
        if (attempt > 20) {
          throw portTaken;
        }
      }
    }
    fleet.addListener(index);
    String base = rank0.address();
    fleet.setEndpoints(List.of(
        Endpoint.of("vllm-0#dp0", "http://127.0.0.1:1", MODEL)
            .withLabel(dev.kinference.vllm.VllmLabels.KV_EVENTS, base)
            .withLabel(dev.kinference.vllm.VllmLabels.DATA_PARALLEL_RANK, "0"),
        Endpoint.of("vllm-0#dp1", "http://127.0.0.1:1", MODEL)
            .withLabel(dev.kinference.vllm.VllmLabels.KV_EVENTS, base)
            .withLabel(dev.kinference.vllm.VllmLabels.DATA_PARALLEL_RANK, "1")));
    KvEventSubscriptions subs = KvEventSubscriptions.create(index, 0,
        b -> b.receiveTimeout(Duration.ofMillis(20)).replayTimeout(Duration.ofSeconds(15))).attach(fleet);
    closeables.add(subs);
    assertThat(subs.subscriber("vllm-0#dp1").address()).isEqualTo(rank1.address());

    FakeEnginePool pool0 = new FakeEnginePool(MODEL, BLOCK, 40);
    FakeEnginePool pool1 = new FakeEnginePool(MODEL, BLOCK, 40);
    KvEventSubscriber s0 = subs.subscriber("vllm-0#dp0");
    KvEventSubscriber s1 = subs.subscriber("vllm-0#dp1");
    handshake(rank0, s0, enc);
    handshake(rank1, s1, enc);
    for (int i = 0; i < 30; i++) {
      rank0.publish(enc.encode(i, pool0.process(prompt()), 0));
      rank1.publish(enc.encode(i, pool1.process(prompt()), 1));
    }
    awaitApplied(s0, rank0);
    awaitApplied(s1, rank1);

    pool0.assertIndexEquals(index, fleet.get("vllm-0#dp0"));
    pool1.assertIndexEquals(index, fleet.get("vllm-0#dp1"));
    assertThat(s1.stats().rankMismatches()).isZero();

    EndpointState leaving = fleet.get("vllm-0#dp1");
    fleet.setEndpoints(List.of(fleet.get("vllm-0#dp0").endpoint()));
    assertThat(subs.subscriber("vllm-0#dp1")).isNull();
    Await.until("subscriber stopped", () -> !s1.isRunning());
    assertThat(index.blockCount(leaving)).isZero();
  }

  /** Regression: a replay request sent right after connecting was occasionally lost and the gap never repaired. */
  @Test
  void aLostReplayRequestIsSentAgain() throws Exception {
    EndpointState state = endpoint("vllm-0");
    TestKvPublisher p = publisher(false, false);
    List<byte[]> buffer = new ArrayList<>();
    try (org.zeromq.ZContext ctx = new org.zeromq.ZContext(1)) {
      org.zeromq.ZMQ.Socket router = ctx.createSocket(org.zeromq.SocketType.ROUTER);
      int port = router.bindToRandomPort("tcp://127.0.0.1");
      router.setReceiveTimeOut(20);
      java.util.concurrent.atomic.AtomicInteger requests = new java.util.concurrent.atomic.AtomicInteger();
      java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
      Thread replay = new Thread(() -> {
        while (!stop.get()) {
          byte[] identity = router.recv(0);
          if (identity == null) {
            continue;
          }
          while (router.hasReceiveMore()) {
            router.recv(0);
          }
          if (requests.incrementAndGet() == 1) {
            continue; // the first request is lost
          }
          List<byte[]> copy;
          synchronized (buffer) {
            copy = new ArrayList<>(buffer);
          }
          for (int i = 0; i < copy.size(); i++) {
            router.sendMore(identity);
            router.sendMore(new byte[0]);
            router.sendMore(KvEventSequencer.toBytes(i));
            router.send(copy.get(i));
          }
          router.sendMore(identity);
          router.sendMore(new byte[0]);
          router.sendMore(KvEventSequencer.toBytes(-1));
          router.send(new byte[0]);
        }
        router.close();
      });
      replay.start();
      KvEventSubscriber s = KvEventSubscriber.builder(state, index).address(p.address())
          .replayAddress("tcp://127.0.0.1:" + port).receiveTimeout(Duration.ofMillis(20))
          .replayTimeout(Duration.ofSeconds(15)).build().start();
      closeables.add(s);
      FakeEnginePool pool = new FakeEnginePool(MODEL, BLOCK, 40);
      // Everything before the first live message is only in the replay buffer.
      for (int i = 0; i < 10; i++) {
        byte[] payload = enc.encode(i, pool.process(prompt()), 0);
        synchronized (buffer) {
          buffer.add(payload);
        }
        p.publishLost(payload);
      }
      Await.until("a live batch", () -> {
        byte[] payload = enc.encode(0, List.of(), 0);
        synchronized (buffer) {
          buffer.add(payload);
        }
        p.publish(payload);
        try {
          Thread.sleep(10);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return s.stats().batches() > 0;
      });
      awaitApplied(s, p);
      stop.set(true);
      replay.join();

      assertThat(requests.get()).isGreaterThanOrEqualTo(2);
      assertThat(s.stats().replayedBatches()).isGreaterThanOrEqualTo(10);
      pool.assertIndexEquals(index, state);
    }
  }

  /**
   * Regression: a subscriber filtered to another topic got no live events, then applied every batch by replay. The
   * rule is {@link KvEventSequencerTest#theTopicFilterHoldsForReplays}; this checks that the replay socket's topic
   * frames reach it.
   */
  @Test
  void theTopicFilterHoldsForReplaysToo() {
    EndpointState state = endpoint("other-topic");
    TestKvPublisher p = publisher(true, true);
    for (int i = 0; i < 128; i++) {
      p.publish(enc.encode(0, List.of(), -1));
    }
    KvEventSubscriber s = KvEventSubscriber.builder(state, index).address(p.address())
        .replayAddress(p.replayAddress()).topic("someone-else@").receiveTimeout(Duration.ofMillis(20))
        .replayTimeout(Duration.ofSeconds(15)).reconnect(Duration.ofMillis(10), Duration.ofMillis(10))
        .build().start();
    closeables.add(s);
    // The silence check (after twice the longest backoff plus a second) asks the replay socket, applies nothing and
    // replaces the live socket; the next check asks again, so by then the first answer has been handled.
    Await.until("two replay requests", () -> p.replayRequests() > 1);
    assertThat(s.stats().batches()).as("batches of another topic applied").isZero();
  }
}
