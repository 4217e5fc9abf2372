/**
 * The vLLM fleet simulator: a model of one vLLM V1 engine ({@link dev.kinference.sim.engine}), a deterministic
 * virtual-time fleet run with workloads and comparison routers, and the routing benchmark with its reports.
 */
module dev.kinference.sim {
  requires transitive dev.kinference.core;
  requires static transitive org.jspecify;
  requires transitive HdrHistogram;
  requires org.slf4j;
  requires org.eclipse.jetty.server;
  requires org.zeromq.jeromq;
  requires java.net.http;

  exports dev.kinference.sim.engine;
  exports dev.kinference.sim.fleet;
  exports dev.kinference.sim.workload;
  exports dev.kinference.sim.bench;
  exports dev.kinference.sim.server;
  exports dev.kinference.sim.demo;
}
