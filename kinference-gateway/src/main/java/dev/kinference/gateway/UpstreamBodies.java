package dev.kinference.gateway;

import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.Invocable.InvocationType;

/**
 * Bounded readers of an upstream's whole body (a complete response or an error), one for each HTTP client the
 * gateway uses: Jetty's for local servers, {@code java.net.http} for providers. Each instance reads one body on the
 * client's threads.
 */
final class UpstreamBodies {

  private UpstreamBodies() {}

  /**
   * Reads a local server's whole body up to a limit, then hands it on; beyond the limit, the rest is discarded. On a
   * failure it stops: the request's completion listener reports it.
   */
  static final class LocalBody implements Runnable {
    private final Content.Source source;
    private final int limit;
    private final java.util.function.Consumer<byte[]> whenDone;
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    LocalBody(Content.Source source, int limit, java.util.function.Consumer<byte[]> whenDone) {
      this.source = source;
      this.limit = limit;
      this.whenDone = whenDone;
    }

    @Override
    public void run() {
      while (true) {
        Content.Chunk chunk = source.read();
        if (chunk == null) {
          source.demand(Invocable.from(InvocationType.NON_BLOCKING, this));
          return;
        }
        if (Content.Chunk.isFailure(chunk)) {
          return;
        }
        ByteBuffer b = chunk.getByteBuffer();
        int n = Math.min(b.remaining(), limit - bytes.size());
        if (n > 0) {
          if (b.hasArray()) {
            bytes.write(b.array(), b.arrayOffset() + b.position(), n);
          } else {
            byte[] part = new byte[n];
            b.get(part);
            bytes.writeBytes(part);
          }
        }
        boolean last = chunk.isLast();
        chunk.release();
        if (last) {
          whenDone.accept(bytes.toByteArray());
          return;
        }
      }
    }
  }

  /** Collects a body up to a limit, then hands it on; beyond the limit, the rest is discarded. */
  static final class Collector implements HttpResponse.BodySubscriber<Void> {
    private final int limit;
    private final java.util.function.Consumer<byte[]> whenDone;
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final CompletableFuture<Void> result = new CompletableFuture<>();

    Collector(int limit, java.util.function.Consumer<byte[]> whenDone) {
      this.limit = limit;
      this.whenDone = whenDone;
    }

    @Override
    public java.util.concurrent.CompletionStage<Void> getBody() {
      return result;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
      s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(List<ByteBuffer> item) {
      for (ByteBuffer b : item) {
        int n = Math.min(b.remaining(), limit - bytes.size());
        if (n > 0) {
          byte[] chunk = new byte[n];
          b.get(chunk);
          bytes.writeBytes(chunk);
        }
      }
    }

    @Override
    public void onError(Throwable t) {
      result.completeExceptionally(t);
    }

    @Override
    public void onComplete() {
      try {
        whenDone.accept(bytes.toByteArray());
      } finally {
        result.complete(null);
      }
    }
  }
}
