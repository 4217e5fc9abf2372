/**
 * Kinference policy: tenants, model aliases, routing rules, rate limits, budgets and accounting, written as YAML
 * resources and checked offline. Start with {@link dev.kinference.policy.engine.Governance} (authenticate, reserve,
 * evaluate, settle, account) or {@link dev.kinference.policy.config.PolicyLoader} (load and validate).
 */
module dev.kinference.policy {
  requires transitive dev.kinference.core;
  requires static transitive org.jspecify;
  requires org.snakeyaml.engine;
  requires com.google.i18n.phonenumbers.libphonenumber;
  requires org.slf4j;
  requires java.net.http;

  exports dev.kinference.policy.model;
  exports dev.kinference.policy.config;
  exports dev.kinference.policy.engine;
  exports dev.kinference.policy.classify;
  exports dev.kinference.policy.limits;
  exports dev.kinference.policy.accounting;
  exports dev.kinference.policy.check;

  uses dev.kinference.policy.classify.PersonalDataDetector;
  uses dev.kinference.policy.classify.ComplexityClassifier;
  uses dev.kinference.policy.limits.RateLimitStore;
  uses dev.kinference.policy.limits.StateStoreFactory;

  provides dev.kinference.policy.classify.PersonalDataDetector with
      dev.kinference.policy.classify.BuiltinPersonalDataDetector;
  provides dev.kinference.policy.classify.ComplexityClassifier with
      dev.kinference.policy.classify.BuiltinComplexityClassifier;
  provides dev.kinference.policy.limits.RateLimitStore with
      dev.kinference.policy.limits.InMemoryRateLimitStore;
  provides dev.kinference.policy.PolicyEngine with
      dev.kinference.policy.engine.YamlPolicyEngine;
}
