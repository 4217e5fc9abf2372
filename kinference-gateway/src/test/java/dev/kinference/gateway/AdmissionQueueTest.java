package dev.kinference.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kinference.request.TrafficClass;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class AdmissionQueueTest {

  record W(String name, String group, String tenant, int priority, TrafficClass trafficClass, long deadlineNanos)
      implements AdmissionQueue.Waiter {
    static W of(String name, String tenant, int priority) {
      return new W(name, "m", tenant, priority, TrafficClass.INTERACTIVE, Long.MAX_VALUE);
    }
  }

  static List<String> drainAll(AdmissionQueue<W> q) {
    List<String> order = new ArrayList<>();
    q.drain(w -> true, w -> order.add(w.name()));
    return order;
  }

  @Test
  void higherPriorityFirstBatchLastAndTenantsTakeTurns() {
    AdmissionQueue<W> q = new AdmissionQueue<>(100);
    q.offer(new W("batch", "m", "a", 100, TrafficClass.BATCH, Long.MAX_VALUE));
    q.offer(W.of("a1", "a", 0));
    q.offer(W.of("a2", "a", 0));
    q.offer(W.of("a3", "a", 0));
    q.offer(W.of("b1", "b", 0));
    q.offer(W.of("c1", "c", 0));
    q.offer(W.of("b2", "b", 0));
    q.offer(W.of("urgent", "c", 5));
    assertThat(q.size()).isEqualTo(8);
    assertThat(drainAll(q)).containsExactly("urgent", "a1", "b1", "c1", "a2", "b2", "a3", "batch");
    assertThat(q.size()).isZero();
  }

  @Test
  void aFullQueueRefusesAndExpiredWaitersLeave() {
    AdmissionQueue<W> q = new AdmissionQueue<>(2);
    assertThat(q.offer(new W("old", "m", "a", 0, TrafficClass.INTERACTIVE, 100))).isTrue();
    assertThat(q.offer(new W("new", "m", "a", 0, TrafficClass.INTERACTIVE, 1_000))).isTrue();
    assertThat(q.offer(W.of("third", "a", 0))).isFalse();
    assertThat(q.expire(500)).extracting(W::name).containsExactly("old");
    assertThat(q.size()).isEqualTo(1);
    assertThat(drainAll(q)).containsExactly("new");
  }

  @Test
  void aBlockedModelDoesNotHoldBackAnotherAndKeepsItsPlace() {
    AdmissionQueue<W> q = new AdmissionQueue<>(10);
    W blocked1 = new W("x1", "busy-model", "a", 0, TrafficClass.INTERACTIVE, Long.MAX_VALUE);
    W blocked2 = new W("x2", "busy-model", "a", 0, TrafficClass.INTERACTIVE, Long.MAX_VALUE);
    W free = new W("y1", "free-model", "b", 0, TrafficClass.INTERACTIVE, Long.MAX_VALUE);
    q.offer(blocked1);
    q.offer(blocked2);
    q.offer(free);
    List<String> went = new ArrayList<>();
    int n = q.drain(w -> !w.group().equals("busy-model"), w -> went.add(w.name()));
    assertThat(n).isEqualTo(1);
    assertThat(went).containsExactly("y1");
    assertThat(drainAll(q)).containsExactly("x1", "x2");
  }

  @Test
  void aWaiterWhoseClientLeftIsRemoved() {
    AdmissionQueue<W> q = new AdmissionQueue<>(10);
    W a = W.of("a", "t", 0);
    q.offer(a);
    q.offer(W.of("b", "t", 0));
    assertThat(q.remove(a)).isTrue();
    assertThat(q.remove(a)).isFalse();
    assertThat(drainAll(q)).containsExactly("b");
  }
}
