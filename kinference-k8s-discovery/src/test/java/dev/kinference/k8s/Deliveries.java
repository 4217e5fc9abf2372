package dev.kinference.k8s;

import static org.assertj.core.api.Assertions.fail;

import dev.kinference.endpoint.Endpoint;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;

/** Collects what an endpoint source delivers; waits for a set with a given property. */
final class Deliveries implements Consumer<List<Endpoint>> {

  private final LinkedBlockingQueue<List<Endpoint>> queue = new LinkedBlockingQueue<>();
  private volatile List<Endpoint> last = List.of();
  private final java.util.concurrent.atomic.AtomicInteger count = new java.util.concurrent.atomic.AtomicInteger();

  @Override
  public void accept(List<Endpoint> endpoints) {
    last = endpoints;
    count.incrementAndGet();
    queue.add(endpoints);
  }

  List<Endpoint> last() {
    return last;
  }

  int count() {
    return count.get();
  }

  /** The first delivered set (from now on, or already queued) that matches; fails after 15 s. */
  List<Endpoint> await(String what, Predicate<List<Endpoint>> matches) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (System.nanoTime() < deadline) {
      List<Endpoint> next = queue.poll(100, TimeUnit.MILLISECONDS);
      if (next != null && matches.test(next)) {
        return next;
      }
    }
    return fail("no delivery with " + what + "; last was " + last);
  }

  /** Waits for a set whose ids are exactly these, in this (sorted) order. */
  List<Endpoint> awaitIds(String... ids) throws InterruptedException {
    List<String> want = List.of(ids);
    return await("ids " + want, set -> set.stream().map(Endpoint::id).toList().equals(want));
  }
}
