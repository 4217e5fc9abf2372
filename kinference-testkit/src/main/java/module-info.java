/** Compatibility tests (abstract JUnit 5 classes) that every plugin implementation must pass. */
module dev.kinference.testkit {
  requires transitive dev.kinference.core;
  requires transitive org.junit.jupiter.api;
  requires org.assertj.core;

  exports dev.kinference.testkit;
  exports dev.kinference.testkit.vllm;
}
