package dev.kinference.examples.customscorer;

import dev.kinference.endpoint.Endpoint;
import dev.kinference.request.InferenceRequest;
import dev.kinference.routing.Router;
import java.util.List;

/** Builds a router that selects the scorer by name and prints where a zoned request goes. */
public final class ModulePathCheck {

  private ModulePathCheck() {}

  public static void main(String[] args) {
    Router router = Router.builder()
        .endpoints(List.of(
            Endpoint.of("us-0", "http://127.0.0.1:8000", "m").withLabel("zone", "us"),
            Endpoint.of("eu-0", "http://127.0.0.1:8001", "m").withLabel("zone", "eu")))
        .scorer("predicted-ttft", 1.0)
        .scorer("zone-affinity", 0.5)
        .build();
    InferenceRequest request = InferenceRequest.builder("m").user("hello").header("x-zone", "eu").build();
    System.out.println("module=" + ModulePathCheck.class.getModule().getName() + " scorers="
        + String.join(",", router.scorerNames()) + " chosen=" + router.route(request).endpoint().id());
  }
}
