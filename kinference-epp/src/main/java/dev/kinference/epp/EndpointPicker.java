package dev.kinference.epp;

import com.google.protobuf.ByteString;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.kinference.cloud.translate.ApiErrors;
import dev.kinference.endpoint.Endpoint;
import dev.kinference.policy.model.Tenant;
import dev.kinference.gateway.CallerIdentity;
import dev.kinference.gateway.SessionHints;
import dev.kinference.gateway.RequestGuard;
import dev.kinference.gateway.RequestReservation;
import dev.kinference.request.ApiFormat;
import dev.kinference.request.InferenceRequest;
import dev.kinference.request.InvalidRequestException;
import dev.kinference.request.RequestParser;
import dev.kinference.routing.RequestRejectedException;
import dev.kinference.routing.Router;
import dev.kinference.routing.RoutingDecision;
import dev.kinference.routing.RoutingException;
import dev.kinference.routing.Usage;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HeaderMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.HeadersResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ImmediateResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.type.v3.HttpStatus;
import io.envoyproxy.envoy.type.v3.StatusCode;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Endpoint Picker Protocol of the Gateway API Inference Extension over Envoy's ext_proc v3: one gRPC stream per
 * HTTP request. The request's headers and body (buffered, or streamed full duplex as the reference picker runs) are
 * read, the caller authenticated and admitted by the {@link RequestGuard} (tenants, limits, budgets), and the {@link
 * Router} chooses among the local endpoints, within the proxy's subset hint when it gives one. The chosen endpoint and
 * its ordered fallbacks go back as {@code ip:port,ip:port,...} in the {@value #DESTINATION} header and in the dynamic
 * metadata {@value #LB_NAMESPACE}; a refusal as an {@link ImmediateResponse} with the API's error body and status (503
 * when no endpoint is available, 429 when limits say so). The response's headers and body are observed, never
 * changed, to report the first token, the end and the usage to the router and to accounting.
 *
 * <p>Thread-safe: each stream's calls are serialized by gRPC, and streams share only thread-safe parts.
 */
public final class EndpointPicker extends ExternalProcessorGrpc.ExternalProcessorImplBase {

  private static final Logger log = LoggerFactory.getLogger(EndpointPicker.class);

  /** The header naming a request's InferenceObjective (Gateway API Inference Extension). */
  public static final String OBJECTIVE_HEADER = "x-gateway-inference-objective";

  /** The header, and the key in the dynamic metadata, naming the chosen endpoints. */
  public static final String DESTINATION = "x-gateway-destination-endpoint";
  /** The dynamic metadata namespace of the chosen endpoint. */
  public static final String LB_NAMESPACE = "envoy.lb";
  /** The filter metadata namespace in which the proxy may give the subset to pick from. */
  public static final String SUBSET_NAMESPACE = "envoy.lb.subset_hint";
  /** The key of the subset in {@link #SUBSET_NAMESPACE}. */
  public static final String SUBSET_KEY = "x-gateway-destination-endpoint-subset";
  /** The key in {@link #LB_NAMESPACE} naming the endpoint that served, in the response's metadata context. */
  public static final String SERVED_KEY = "x-gateway-destination-endpoint-served";

  private final Router router;
  private final RequestGuard guard;
  private final RequestParser parser;
  private final @Nullable String tenantHeader;
  private final BodySendMode defaultMode;
  private final @Nullable Function<String, @Nullable Integer> objectives;
  final LongAdder picked = new LongAdder();
  final LongAdder refused = new LongAdder();

  private EndpointPicker(Builder b) {
    this.router = Objects.requireNonNull(b.router, "router");
    this.guard = b.guard;
    this.parser = b.parser;
    this.tenantHeader = b.tenantHeader;
    this.defaultMode = b.bodyMode;
    this.objectives = b.objectives;
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public StreamObserver<ProcessingRequest> process(StreamObserver<ProcessingResponse> out) {
    return new Stream(out);
  }

  private @Nullable Integer objectivePriority(@Nullable String name) {
    Function<String, @Nullable Integer> lookup = objectives;
    if (lookup == null || name == null || name.isBlank()) {
      return null;
    }
    Integer p = lookup.apply(name.strip());
    return p == null ? null
        : Math.max(Tenant.Traffic.MIN_PRIORITY, Math.min(Tenant.Traffic.MAX_PRIORITY, p));
  }

  /** {@code ip:port} of an endpoint's URI (the scheme's default port when it names none). */
  public static String hostPort(Endpoint e) {
    URI u = e.uri();
    int port = u.getPort() != -1 ? u.getPort() : "https".equalsIgnoreCase(u.getScheme()) ? 443 : 80;
    return u.getHost() + ":" + port;
  }

  static ApiFormat formatOf(@Nullable String path) {
    if (path == null) {
      return ApiFormat.OPENAI_CHAT;
    }
    int q = path.indexOf('?');
    String p = q < 0 ? path : path.substring(0, q);
    if (p.endsWith("/messages")) {
      return ApiFormat.ANTHROPIC_MESSAGES;
    }
    if (p.endsWith("/responses")) {
      return ApiFormat.OPENAI_RESPONSES;
    }
    if (p.endsWith("/completions") && !p.endsWith("/chat/completions")) {
      return ApiFormat.OPENAI_COMPLETIONS;
    }
    return ApiFormat.OPENAI_CHAT;
  }

  /** One HTTP request's exchange with the proxy. */
  private final class Stream implements StreamObserver<ProcessingRequest> {
    private final StreamObserver<ProcessingResponse> out;
    private final Map<String, String> headers = new HashMap<>();
    private final ByteArrayOutputStream body = new ByteArrayOutputStream();
    private BodySendMode requestMode = defaultMode;
    private BodySendMode responseMode = defaultMode;
    private @Nullable Set<String> subset;
    private ApiFormat format = ApiFormat.OPENAI_CHAT;
    private boolean answered; // the request phase has its answer (a destination or a refusal)
    private boolean closed;
    private @Nullable RoutingDecision decision;
    private @Nullable RequestReservation reservation;
    private @Nullable ResponseObserver observer;
    private int status = 200;
    private boolean firstToken;

    Stream(StreamObserver<ProcessingResponse> out) {
      this.out = out;
    }

    @Override
    public void onNext(ProcessingRequest r) {
      if (closed) {
        return;
      }
      try {
        if (r.hasProtocolConfig()) {
          requestMode = known(r.getProtocolConfig().getRequestBodyMode(), requestMode);
          responseMode = known(r.getProtocolConfig().getResponseBodyMode(), responseMode);
        }
        if (r.hasMetadataContext()) {
          readSubset(r);
        }
        switch (r.getRequestCase()) {
          case REQUEST_HEADERS -> requestHeaders(r.getRequestHeaders());
          case REQUEST_BODY -> requestBody(r.getRequestBody());
          case REQUEST_TRAILERS -> send(ProcessingResponse.newBuilder().setRequestTrailers(
              io.envoyproxy.envoy.service.ext_proc.v3.TrailersResponse.getDefaultInstance()).build());
          case RESPONSE_HEADERS -> responseHeaders(r);
          case RESPONSE_BODY -> responseBody(r.getResponseBody());
          case RESPONSE_TRAILERS -> send(ProcessingResponse.newBuilder().setResponseTrailers(
              io.envoyproxy.envoy.service.ext_proc.v3.TrailersResponse.getDefaultInstance()).build());
          case REQUEST_NOT_SET -> { }
        }
      } catch (RuntimeException e) {
        log.warn("ext_proc message failed", e);
        if (!answered) {
          refuse(500, "endpoint picker failed: " + e, null);
        }
      }
    }

    private BodySendMode known(BodySendMode m, BodySendMode fallback) {
      return m == BodySendMode.UNRECOGNIZED ? fallback : m;
    }

    private void readSubset(ProcessingRequest r) {
      Struct hint = r.getMetadataContext().getFilterMetadataMap().get(SUBSET_NAMESPACE);
      if (hint == null || !hint.containsFields(SUBSET_KEY)) {
        return;
      }
      Value v = hint.getFieldsOrThrow(SUBSET_KEY);
      Set<String> s = new HashSet<>();
      if (v.hasListValue()) {
        for (Value item : v.getListValue().getValuesList()) {
          addEndpoints(item.getStringValue(), s);
        }
      } else {
        addEndpoints(v.getStringValue(), s);
      }
      subset = s;
    }

    private void addEndpoints(String list, Set<String> into) {
      for (String part : list.split(",")) {
        String t = part.trim();
        if (!t.isEmpty()) {
          into.add(t);
        }
      }
    }

    private void requestHeaders(HttpHeaders h) {
      for (HeaderValue hv : h.getHeaders().getHeadersList()) {
        String value = hv.getValue().isEmpty() ? hv.getRawValue().toStringUtf8() : hv.getValue();
        headers.put(hv.getKey().toLowerCase(Locale.ROOT), value);
      }
      format = formatOf(headers.get(":path"));
      if (h.getEndOfStream()) {
        refuse(400, "an inference request needs a JSON body", null);
        return;
      }
      if (requestMode == BodySendMode.NONE) {
        // The proxy will not send the body, so there is nothing to route on: its configuration is wrong.
        refuse(500, "the endpoint picker needs the request body: configure the ext_proc filter's "
            + "processing_mode.request_body_mode as FULL_DUPLEX_STREAMED or BUFFERED", null);
        return;
      }
      if (requestMode != BodySendMode.FULL_DUPLEX_STREAMED) {
        // Buffered: the body follows only once the headers are answered; the destination goes with the body's answer.
        send(ProcessingResponse.newBuilder().setRequestHeaders(HeadersResponse.newBuilder()
            .setResponse(CommonResponse.getDefaultInstance())).build());
      }
    }

    private void requestBody(HttpBody b) {
      if (answered) {
        return;
      }
      ByteString chunk = b.getBody();
      if (body.size() + (long) chunk.size() > parser.maxBodyBytes()) {
        refuse(413, "request body larger than " + parser.maxBodyBytes() + " bytes", null);
        return;
      }
      body.writeBytes(chunk.toByteArray());
      if (b.getEndOfStream()) {
        pick();
      } else if (requestMode == BodySendMode.STREAMED || requestMode == BodySendMode.BUFFERED_PARTIAL) {
        // Chunks answered one by one; the destination can only go with the last.
        send(ProcessingResponse.newBuilder().setRequestBody(BodyResponse.getDefaultInstance()).build());
      }
    }

    private void pick() {
      byte[] bytes = body.toByteArray();
      CallerIdentity caller;
      String named = tenantHeader == null ? null : headers.get(tenantHeader);
      if (named != null && !named.isBlank()) {
        caller = CallerIdentity.of(named.trim()); // the proxy in front authenticated the caller
      } else {
        try {
          caller = guard.authenticate(format, headers::get);
        } catch (RequestRejectedException e) {
          refuse(e.httpStatus(), e.getMessage(), null);
          return;
        }
      }
      InferenceRequest parsed;
      try {
        parsed = parser.parse(format, bytes);
      } catch (InvalidRequestException e) {
        refuse(e.httpStatus(), e.getMessage(), null);
        return;
      }
      InferenceRequest.Builder rb = parsed.toBuilder().tenant(caller.tenant());
      SessionHints.apply(headers::get, rb);
      var traffic = guard.traffic(caller);
      Integer objective = objectivePriority(headers.get(OBJECTIVE_HEADER));
      rb.priority(objective != null ? objective
          : parsed.body() != null && Objects.requireNonNull(parsed.body()).hasNonNull("priority")
          ? traffic.clampPriority(parsed.priority()) : traffic.priority());
      rb.trafficClass(traffic.classFor(null));
      String requestId = headers.get("x-request-id");
      if (requestId != null) {
        rb.header("x-request-id", requestId);
      }
      InferenceRequest request = rb.build();
      RequestReservation admitted;
      try {
        admitted = guard.admit(caller, request);
      } catch (RequestRejectedException e) {
        refuse(e.httpStatus(), e.getMessage(), e.retryAfter().orElse(null));
        return;
      }
      Set<String> allowed = subset;
      if (allowed != null && allowed.isEmpty()) {
        admitted.release();
        refuse(503, "the proxy's endpoint subset is empty", Duration.ofSeconds(1));
        return;
      }
      Predicate<Endpoint> within = allowed == null
          ? e -> !e.isExternal()
          : e -> !e.isExternal() && allowed.contains(hostPort(e));
      RoutingDecision d;
      try {
        d = router.route(admitted.request(), within);
      } catch (RoutingException e) {
        admitted.release();
        Duration retry = e instanceof RequestRejectedException rr ? rr.retryAfter().orElse(null) : null;
        refuse(e.httpStatus(), e.getMessage(), retry == null && e.httpStatus() == 503 ? Duration.ofSeconds(1) : retry);
        return;
      } catch (RuntimeException e) {
        admitted.release(); // answered 500 by onNext; nothing stays reserved
        throw e;
      }
      reservation = admitted;
      decision = d;
      StringBuilder dest = new StringBuilder(hostPort(d.endpoint()));
      for (Endpoint alt : d.alternates()) {
        dest.append(',').append(hostPort(alt));
      }
      String destination = dest.toString();
      byte[] forwarded = rewritten(parsed, d.request(), bytes);
      boolean changed = forwarded.length != bytes.length || !java.util.Arrays.equals(forwarded, bytes);
      HeaderMutation.Builder mutation = HeaderMutation.newBuilder().addSetHeaders(header(DESTINATION, destination));
      if (changed) {
        mutation.addSetHeaders(header("content-length", Integer.toString(forwarded.length)));
      }
      Struct metadata = Struct.newBuilder().putFields(LB_NAMESPACE, Value.newBuilder().setStructValue(
          Struct.newBuilder().putFields(DESTINATION, Value.newBuilder().setStringValue(destination).build())).build())
          .build();
      answered = true;
      picked.increment();
      if (requestMode == BodySendMode.FULL_DUPLEX_STREAMED) {
        send(ProcessingResponse.newBuilder()
            .setRequestHeaders(HeadersResponse.newBuilder().setResponse(CommonResponse.newBuilder()
                .setHeaderMutation(mutation).setClearRouteCache(true)))
            .setDynamicMetadata(metadata).build());
        send(ProcessingResponse.newBuilder().setRequestBody(BodyResponse.newBuilder().setResponse(
            CommonResponse.newBuilder().setBodyMutation(BodyMutation.newBuilder().setStreamedResponse(
                io.envoyproxy.envoy.service.ext_proc.v3.StreamedBodyResponse.newBuilder()
                    .setBody(ByteString.copyFrom(forwarded)).setEndOfStream(true))))).build());
      } else {
        CommonResponse.Builder common = CommonResponse.newBuilder().setHeaderMutation(mutation)
            .setClearRouteCache(true);
        if (changed) {
          common.setBodyMutation(BodyMutation.newBuilder().setBody(ByteString.copyFrom(forwarded)));
        }
        send(ProcessingResponse.newBuilder().setRequestBody(BodyResponse.newBuilder().setResponse(common))
            .setDynamicMetadata(metadata).build());
      }
    }

    /** The body to forward: the original, or with the model the policy chose (an alias resolved, a rewrite). */
    private byte[] rewritten(InferenceRequest parsed, InferenceRequest routed, byte[] original) {
      var json = parsed.body();
      if (routed.model().equals(parsed.model()) || json == null) {
        return original;
      }
      var copy = json.deepCopy();
      copy.put("model", routed.model());
      return copy.toString().getBytes(StandardCharsets.UTF_8);
    }

    private void responseHeaders(ProcessingRequest r) {
      for (HeaderValue hv : r.getResponseHeaders().getHeaders().getHeadersList()) {
        String key = hv.getKey().toLowerCase(Locale.ROOT);
        String value = hv.getValue().isEmpty() ? hv.getRawValue().toStringUtf8() : hv.getValue();
        if (key.equals(":status")) {
          try {
            status = Integer.parseInt(value.trim());
          } catch (NumberFormatException e) {
            status = 502;
          }
        } else if (key.equals("content-type")) {
          observer = new ResponseObserver(value.toLowerCase(Locale.ROOT).contains("text/event-stream"));
        }
      }
      followServed(r);
      send(ProcessingResponse.newBuilder().setResponseHeaders(HeadersResponse.newBuilder()
          .setResponse(CommonResponse.getDefaultInstance())).build());
      if (r.getResponseHeaders().getEndOfStream()) {
        finish();
      }
    }

    /** The proxy tried the fallbacks in order: the decision follows it to the endpoint that served. */
    private void followServed(ProcessingRequest r) {
      RoutingDecision d = decision;
      Struct lb = r.getMetadataContext().getFilterMetadataMap().get(LB_NAMESPACE);
      if (d == null || lb == null || !lb.containsFields(SERVED_KEY)) {
        return;
      }
      String served = lb.getFieldsOrThrow(SERVED_KEY).getStringValue().trim();
      List<Endpoint> order = d.alternates();
      if (served.equals(hostPort(d.endpoint())) || order.stream().noneMatch(e -> hostPort(e).equals(served))) {
        return;
      }
      RoutingDecision at = d;
      while (at != null && !hostPort(at.endpoint()).equals(served)) {
        at = at.retryOnNextAlternate();
      }
      if (at != null) {
        decision = at;
      }
    }

    private void responseBody(HttpBody b) {
      ByteString chunk = b.getBody();
      RoutingDecision d = decision;
      if (d != null && !firstToken && !chunk.isEmpty() && status < 400) {
        firstToken = true;
        d.reportFirstToken();
      }
      ResponseObserver o = observer;
      if (o == null) {
        o = new ResponseObserver(chunk.startsWith(ByteString.copyFromUtf8("data:"))
            || chunk.startsWith(ByteString.copyFromUtf8("event:")));
        observer = o;
      }
      if (!chunk.isEmpty()) {
        o.feed(chunk.toByteArray());
      }
      if (responseMode == BodySendMode.FULL_DUPLEX_STREAMED) {
        // Observed, not modified: the same bytes go back.
        send(ProcessingResponse.newBuilder().setResponseBody(BodyResponse.newBuilder().setResponse(
            CommonResponse.newBuilder().setBodyMutation(BodyMutation.newBuilder().setStreamedResponse(
                io.envoyproxy.envoy.service.ext_proc.v3.StreamedBodyResponse.newBuilder().setBody(chunk)
                    .setEndOfStream(b.getEndOfStream()))))).build());
      } else {
        send(ProcessingResponse.newBuilder().setResponseBody(BodyResponse.getDefaultInstance()).build());
      }
      if (b.getEndOfStream()) {
        finish();
      }
    }

    /** The response ended: the router and the accounting learn how it went. */
    private void finish() {
      RoutingDecision d = decision;
      RequestReservation res = reservation;
      decision = null;
      reservation = null;
      if (d == null) {
        return;
      }
      ResponseObserver o = observer;
      Usage usage = o == null ? Usage.UNKNOWN : o.finish();
      boolean failed = status >= 400;
      if (failed) {
        d.reportFailed();
      } else {
        d.reportFinished(usage);
      }
      if (res != null) {
        res.settle(usage, d.endpoint(), 0.0, failed);
      }
    }

    /** The stream ended before the response did: what was counted is released. */
    private void abandon() {
      RoutingDecision d = decision;
      RequestReservation res = reservation;
      decision = null;
      reservation = null;
      if (d != null) {
        d.reportFailed();
        if (res != null) {
          res.settle(Usage.UNKNOWN, d.endpoint(), 0.0, true);
        }
      } else if (res != null) {
        res.release();
      }
    }

    private void refuse(int code, @Nullable String message, @Nullable Duration retryAfter) {
      answered = true;
      refused.increment();
      byte[] errorBody = ApiErrors.body(format, code, message == null ? "error" : message, null);
      HeaderMutation.Builder h = HeaderMutation.newBuilder().addSetHeaders(header("content-type", "application/json"));
      if (retryAfter != null) {
        h.addSetHeaders(header("retry-after", Long.toString(Math.max(1, (retryAfter.toMillis() + 999) / 1000))));
      }
      StatusCode sc = StatusCode.forNumber(code);
      send(ProcessingResponse.newBuilder().setImmediateResponse(ImmediateResponse.newBuilder()
          .setStatus(HttpStatus.newBuilder().setCode(sc == null ? StatusCode.InternalServerError : sc))
          .setHeaders(h).setBody(ByteString.copyFrom(errorBody))
          .setDetails("kinference_epp_" + code)).build());
    }

    private void send(ProcessingResponse response) {
      if (!closed) {
        out.onNext(response);
      }
    }

    @Override
    public void onError(Throwable t) {
      closed = true;
      abandon();
    }

    @Override
    public void onCompleted() {
      if (decision != null) {
        abandon();
      } else if (reservation != null) {
        abandon();
      }
      closed = true;
      out.onCompleted();
    }
  }

  private static HeaderValueOption header(String name, String value) {
    return HeaderValueOption.newBuilder().setHeader(HeaderValue.newBuilder().setKey(name)
        .setRawValue(ByteString.copyFromUtf8(value))).build();
  }

  /** Configures an {@link EndpointPicker}; not thread-safe. */
  public static final class Builder {
    private @Nullable Router router;
    private RequestGuard guard = RequestGuard.OPEN;
    private RequestParser parser = RequestParser.defaults();
    private @Nullable String tenantHeader;
    private BodySendMode bodyMode = BodySendMode.FULL_DUPLEX_STREAMED;
    private @Nullable Function<String, @Nullable Integer> objectives;

    private Builder() {}

    /**
     * The priorities of the Gateway API Inference Extension's InferenceObjectives, by name: a request naming one in
     * {@value #OBJECTIVE_HEADER} gets its priority (written by operators, so not limited by the tenant's
     * {@code maxPriority}; kept within [{@value Tenant.Traffic#MIN_PRIORITY}, {@value Tenant.Traffic#MAX_PRIORITY}]),
     * in place of the body's {@code priority} and the tenant's default. Unknown objectives change nothing. Default:
     * none.
     */
    public Builder objectives(@Nullable Function<String, @Nullable Integer> priorities) {
      this.objectives = priorities;
      return this;
    }

    /** The router that decides. Required. */
    public Builder router(Router router) {
      this.router = Objects.requireNonNull(router, "router");
      return this;
    }

    /** Authentication, admission (limits, budgets) and accounting; default: everyone, unlimited. */
    public Builder guard(RequestGuard guard) {
      this.guard = Objects.requireNonNull(guard, "guard");
      return this;
    }

    public Builder parser(RequestParser parser) {
      this.parser = Objects.requireNonNull(parser, "parser");
      return this;
    }

    /**
     * A header naming the tenant, set by a trusted proxy in front after its own authentication: when a request carries
     * it, its value is the tenant (limits, budgets and policy apply to it) and the request's own credentials are not
     * checked. The proxy must remove the header from what clients send. Default: none (API keys only).
     */
    public Builder tenantHeader(@Nullable String name) {
      this.tenantHeader = name == null || name.isBlank() ? null : name.trim().toLowerCase(Locale.ROOT);
      return this;
    }

    /**
     * The body mode the proxy is configured with, when its messages do not say ({@code protocol_config}): {@code
     * FULL_DUPLEX_STREAMED} (the reference picker's, default) or {@code BUFFERED}.
     */
    public Builder bodyMode(BodySendMode mode) {
      this.bodyMode = Objects.requireNonNull(mode, "mode");
      return this;
    }

    public EndpointPicker build() {
      return new EndpointPicker(this);
    }
  }
}
