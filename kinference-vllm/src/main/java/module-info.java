/**
 * Kinference for vLLM: what each vLLM server holds and how busy it is, read from its real wire formats. Metrics
 * scraping ({@link dev.kinference.vllm.metrics}), KV-cache event subscription over ZeroMQ
 * ({@link dev.kinference.vllm.kvevents}), and tokenizers that reproduce the server's token ids
 * ({@link dev.kinference.vllm.tokenizer}).
 */
module dev.kinference.vllm {
  requires transitive dev.kinference.core;
  requires static transitive org.jspecify;
  requires org.slf4j;
  requires org.zeromq.jeromq;
  requires transitive java.net.http;

  exports dev.kinference.vllm;
  exports dev.kinference.vllm.kvevents;
  exports dev.kinference.vllm.metrics;
}
