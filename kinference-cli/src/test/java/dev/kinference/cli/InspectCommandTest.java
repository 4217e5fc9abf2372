package dev.kinference.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.cache.KvEvent;
import dev.kinference.testkit.vllm.KvEventEncoder;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import picocli.CommandLine;

/** Runs {@code kinference inspect kv-events} against a real ZeroMQ publisher with a replay socket on loopback. */
class InspectCommandTest {

  static byte[] seq(long v) {
    byte[] b = new byte[8];
    for (int i = 7; i >= 0; i--) {
      b[i] = (byte) v;
      v >>>= 8;
    }
    return b;
  }

  @Test
  void printsEachEventAsAJsonLineAndASummary() throws Exception {
    KvEventEncoder enc = KvEventEncoder.of(KvEventEncoder.Layout.MAP);
    long big = Long.parseUnsignedLong("15760518052499183552");
    List<byte[]> batches = new ArrayList<>();
    batches.add(enc.encode(1.5, List.of(new KvEvent.BlockStored(new long[] {big, 7}, null,
        new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4, null, KvEvent.Medium.GPU, "tenant \"a\"")), 0));
    batches.add(enc.encode(2.5, List.of(new KvEvent.BlockRemoved(new long[] {7}, KvEvent.Medium.GPU)), 0));

    try (ZContext ctx = new ZContext(1)) {
      ctx.setLinger(0);
      ZMQ.Socket pub = ctx.createSocket(SocketType.PUB);
      int pubPort = pub.bindToRandomPort("tcp://127.0.0.1");
      ZMQ.Socket router = ctx.createSocket(SocketType.ROUTER);
      int replayPort = router.bindToRandomPort("tcp://127.0.0.1");
      router.setReceiveTimeOut(20);
      pub.setSndHWM(100_000);
      // The two batches were published before anyone listened: only the replay buffer has them.
      Thread publisher = new Thread(() -> {
        List<byte[]> buffer = new ArrayList<>(batches);
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (System.nanoTime() < deadline) {
          byte[] identity = router.recv(0);
          if (identity != null) {
            while (router.hasReceiveMore()) {
              router.recv(0); // ["", start]: the test replays everything
            }
            for (int i = 0; i < buffer.size(); i++) {
              router.sendMore(identity);
              router.sendMore(new byte[0]);
              router.sendMore(seq(i));
              router.send(buffer.get(i));
            }
            router.sendMore(identity);
            router.sendMore(new byte[0]);
            router.sendMore(seq(-1));
            router.send(new byte[0]);
          }
          pub.sendMore("kv@pod@m".getBytes(java.nio.charset.StandardCharsets.UTF_8));
          byte[] payload = enc.encode(3, List.of(), 0);
          pub.sendMore(seq(buffer.size()));
          pub.send(payload);
          buffer.add(payload);
        }
      });
      publisher.start();

      StringWriter text = new StringWriter();
      CommandLine cli = new CommandLine(new KinferenceCommand());
      cli.setOut(new PrintWriter(text));
      int status = cli.execute("inspect", "kv-events", "--connect", "tcp://127.0.0.1:" + pubPort,
          "--replay", "tcp://127.0.0.1:" + replayPort, "--topic", "kv@", "--duration", "3500ms");
      publisher.join();

      assertThat(status).isZero();
      List<String> lines = text.toString().lines().toList();
      assertThat(lines).anySatisfy(l -> assertThat(l)
          .contains("\"seq\":0,\"replayed\":true")
          .contains("\"type\":\"BlockStored\",\"block_hashes\":[15760518052499183552,7]")
          .contains("\"parent_block_hash\":null,\"token_ids\":[1,2,3,4,5,6,7,8],\"block_size\":4")
          .contains("\"cache_salt\":\"tenant \\\"a\\\"\""));
      assertThat(lines).anySatisfy(l -> assertThat(l).contains("\"seq\":1,\"replayed\":true")
          .contains("\"type\":\"BlockRemoved\",\"block_hashes\":[7]"));
      String summary = lines.get(lines.size() - 1);
      assertThat(summary).startsWith("{\"summary\":{").contains("\"index_blocks\":1").contains("\"gaps\":0")
          .contains("\"gap_ranges\":[]");
    }
  }

  @Test
  void rejectsABadDuration() {
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new KinferenceCommand());
    cli.setErr(new PrintWriter(err));
    int status = cli.execute("inspect", "kv-events", "--connect", "tcp://127.0.0.1:1", "--duration", "soon");
    assertThat(status).isEqualTo(2);
    assertThat(err.toString()).contains("invalid --duration 'soon'");
  }
}
