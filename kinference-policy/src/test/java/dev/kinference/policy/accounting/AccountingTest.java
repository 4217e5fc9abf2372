package dev.kinference.policy.accounting;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.routing.Usage;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class AccountingTest {

  @Test
  void countsPerTenantAndModelAndRendersPrometheusText() {
    Accounting a = new Accounting(InstantSource.fixed(Instant.parse("2025-01-01T00:00:00Z")));
    a.recordRequest("t1", "chat", new Usage(100, 40, 20), 1_500, false);
    a.recordRequest("t1", "chat", new Usage(10, 0, 0), 0, true);
    a.recordRequest("t2", "chat", new Usage(5, 0, 5), 250, false);
    a.recordRejected("t1", "other");
    UsageSnapshot s = a.snapshot();
    assertThat(s.records()).extracting(UsageRecord::tenant, UsageRecord::model)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("t1", "chat"),
            org.assertj.core.groups.Tuple.tuple("t1", "other"), org.assertj.core.groups.Tuple.tuple("t2", "chat"));
    UsageRecord chat = s.query("t1", "chat").get(0);
    assertThat(chat).isEqualTo(new UsageRecord("t1", "chat", 2, 1, 0, 110, 40, 20, 1_500));
    assertThat(chat.cost()).isEqualTo(0.0015);
    assertThat(s.byTenant().get("t1").requests()).isEqualTo(2);
    assertThat(s.byTenant().get("t1").rejected()).isEqualTo(1);
    assertThat(s.byModel().get("chat").inputTokens()).isEqualTo(115);
    assertThat(s.query(null, "chat")).hasSize(2);
    String text = s.toPrometheusText();
    assertThat(text).contains("# TYPE kinference_tenant_requests_total counter",
        "kinference_tenant_requests_total{tenant=\"t1\",model=\"chat\"} 2",
        "kinference_tenant_cached_input_tokens_total{tenant=\"t1\",model=\"chat\"} 40",
        "kinference_tenant_cost_total{tenant=\"t2\",model=\"chat\"} 2.5E-4");
    assertThat(s.at()).isEqualTo(Instant.parse("2025-01-01T00:00:00Z"));
  }

  @Test
  void concurrentRecordingLosesNothing() throws InterruptedException {
    Accounting a = new Accounting();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      threads.add(Thread.ofPlatform().start(() -> {
        for (int i = 0; i < 10_000; i++) {
          a.recordRequest("t", "m", new Usage(2, 1, 3), 7, i % 10 == 0);
        }
      }));
    }
    for (Thread t : threads) {
      t.join();
    }
    UsageRecord r = a.snapshot().records().get(0);
    assertThat(r).isEqualTo(new UsageRecord("t", "m", 40_000, 4_000, 0, 80_000, 40_000, 120_000, 280_000));
  }
}
