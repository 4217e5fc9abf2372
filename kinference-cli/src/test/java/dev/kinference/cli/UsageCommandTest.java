package dev.kinference.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kinference.policy.accounting.UsageEntry;
import dev.kinference.policy.limits.Reservation;
import dev.kinference.state.redis.RedisStateStore;
import dev.kinference.testkit.RedisServer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code kinference usage} against a real Redis server holding what gateways recorded. */
class UsageCommandTest {

  @Test
  void printsEachTenantsUsageAsJsonOrATable() throws Exception {
    try (RedisServer redis = RedisServer.start();
        RedisStateStore store = RedisStateStore.builder(redis.uri()).build()) {
      Reservation.Granted none = new Reservation.Granted(List.of(), 0);
      store.settle(none, new long[0], new UsageEntry("search", "chat", false, 1_000, 600, 200, 12_500, "EUR"), 0);
      store.settle(none, new long[0], new UsageEntry("search", "chat", true, 500, 0, 20, 3_000, "EUR"), 0);
      store.settle(none, new long[0], new UsageEntry("analytics", "big", false, 10, 0, 5, 0, "EUR"), 0);

      CliRun json = CliRun.of("usage", "--state-store", redis.uri(), "--tenant", "search", "--since", "24h",
          "--format", "json");
      assertThat(json.status()).as(json.err()).isZero();
      JsonNode row = new ObjectMapper().readTree(json.out()).path("data").get(0);
      assertThat(row.path("tenant").asText()).isEqualTo("search");
      assertThat(row.path("requests").asLong()).isEqualTo(2);
      assertThat(row.path("inputTokens").asLong()).isEqualTo(1_500);
      assertThat(row.path("cachedTokens").asLong()).isEqualTo(600);
      assertThat(row.path("outputTokens").asLong()).isEqualTo(220);
      assertThat(row.path("totalTokens").asLong()).isEqualTo(1_720);
      assertThat(row.path("cost").asDouble()).isEqualTo(0.0155);
      assertThat(row.path("currency").asText()).isEqualTo("EUR");

      CliRun table = CliRun.of("usage", "--state-store", redis.uri(), "--since", "30d");
      assertThat(table.status()).as(table.err()).isZero();
      assertThat(table.out()).contains("TENANT").contains("analytics").contains("search");

      CliRun byHour = CliRun.of("usage", "--state-store", redis.uri(), "--since", "2h", "--by", "hour",
          "--format", "json");
      assertThat(new ObjectMapper().readTree(byHour.out()).path("data")).isNotEmpty();
    }
  }

  @Test
  void saysWhatIsWrongWithItsArguments() throws Exception {
    assertThat(CliRun.of("usage").err()).contains("--state-store");
    CliRun memory = CliRun.of("usage", "--state-store", "memory");
    assertThat(memory.status()).isEqualTo(2);
    assertThat(memory.err()).contains("shared store");
    CliRun scheme = CliRun.of("usage", "--state-store", "mongodb://x:y@h");
    assertThat(scheme.err()).contains("redis").doesNotContain(":y@");
    int closedPort;
    try (var s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    CliRun down = CliRun.of("usage", "--state-store", "redis://127.0.0.1:" + closedPort);
    assertThat(down.status()).isEqualTo(1);
    assertThat(down.err()).contains("cannot be read");
    assertThat(CliRun.of("usage", "--state-store", "redis://127.0.0.1:1", "--by", "week").err())
        .contains("hour, day or month");
  }
}
