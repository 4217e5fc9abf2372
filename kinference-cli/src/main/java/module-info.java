/**
 * The {@code kinference} command line: {@code serve}, {@code check}, {@code bench}, {@code demo}, {@code sim-servers},
 * {@code inspect} and {@code usage} over the gateway, the simulator, Kubernetes discovery and the Redis state store.
 * Its commands are not API.
 */
module dev.kinference.cli {
  requires dev.kinference.gateway;
  requires dev.kinference.vllm;
  requires dev.kinference.k8s;
  requires dev.kinference.sim;
  // found by ServiceLoader for redis:// state stores; required so that the module graph always has it
  requires dev.kinference.state.redis;
  requires static org.jspecify;
  requires java.net.http;
  requires info.picocli;
  requires org.slf4j;

  // Nothing is exported: kinference epp (its own jar, on the class path) shares serve's state-store options there.
  // picocli reaches the commands reflectively
  opens dev.kinference.cli to info.picocli;
}
