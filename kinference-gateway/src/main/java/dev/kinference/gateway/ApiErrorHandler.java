package dev.kinference.gateway;

import dev.kinference.cloud.translate.ApiErrors;
import dev.kinference.request.ApiFormat;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;

/**
 * Errors Jetty raises before the gateway's handler runs, or for a handler that failed, as error objects of the API
 * called instead of Jetty's HTML page: a request Jetty's parser refused (a garbage request line, headers too large,
 * a request-smuggling attempt: HTTP/1 has no path to go by, so these get the OpenAI shape, the default), a body or
 * headers not received in time (408), an unexpected failure (500). Anthropic's shape on {@code /v1/messages} paths,
 * as {@link GatewayHandler} answers. Stateless and thread-safe.
 */
final class ApiErrorHandler extends ErrorHandler {

  private static final PreEncodedHttpField JSON = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "application/json");

  @Override
  protected void generateResponse(Request request, Response response, int code, @Nullable String message,
      @Nullable Throwable cause, Callback callback) {
    byte[] body = ApiErrors.body(GatewayHandler.formatOf(request), code, describe(code, message), null);
    response.getHeaders().put(JSON);
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
    response.write(true, ByteBuffer.wrap(body), callback);
  }

  private static String describe(int status, @Nullable String message) {
    String standard = HttpStatus.getMessage(status);
    return message == null || message.isBlank() || message.equals(standard) ? standard
        : standard + ": " + message;
  }
}
