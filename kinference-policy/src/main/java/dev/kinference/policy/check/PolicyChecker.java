package dev.kinference.policy.check;

/** Placeholder. */
public final class PolicyChecker {
  private PolicyChecker() {}
}
