package dev.kinference.policy.config;

import dev.kinference.policy.model.InferencePolicy;
import dev.kinference.policy.model.InferencePolicy.Action;
import dev.kinference.policy.model.InferencePolicy.Match;
import dev.kinference.policy.model.InferencePolicy.PoolCondition;
import dev.kinference.policy.model.InferencePolicy.Range;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Which rules' matches contain which, and when an earlier rule leaves a later one nothing to do: the analysis behind
 * {@code kinference check}'s shadowed-rule warnings and local-only route errors. Conservative: "covers" is claimed
 * only when every request matching one match provably matches the other. Stateless.
 */
final class RuleCoverage {

  private RuleCoverage() {}

  /** Why {@code earlier} leaves {@code later} nothing to do, or null when {@code later} can have an effect. */
  static @Nullable String shadows(InferencePolicy.Rule earlier, InferencePolicy.Rule later) {
    if (!covers(earlier.match(), later.match())) {
      return null;
    }
    Action a = earlier.action();
    if (a.reject() != null) {
      return "rejects all of them first";
    }
    if (earlier.stop()) {
      return "stops evaluation for all of them";
    }
    Action b = later.action();
    if (b.reject() != null) {
      return null;
    }
    boolean covered = (b.route() == null || a.route() != null)
        && (b.rewriteModel() == null || a.rewriteModel() != null)
        && (b.fallback() == null || a.fallback() != null || Boolean.TRUE.equals(a.requireLocal()))
        && (!Boolean.TRUE.equals(b.requireLocal()) || Boolean.TRUE.equals(a.requireLocal()))
        && (b.onSaturation() == null || a.onSaturation() != null)
        && (b.admitBelow() == null || a.admitBelow() != null)
        && (b.setPriority() == null || a.setPriority() != null);
    return covered ? "already decides everything it would (the first rule to set a decision wins)" : null;
  }

  /** Whether every request matching {@code b} also matches {@code a}. */
  static boolean covers(Match a, Match b) {
    return coversList(a.tenants(), b.tenants())
        && coversModels(a.models(), b.models())
        && coversRange(a.promptTokens(), b.promptTokens())
        && coversRange(a.maxTokens(), b.maxTokens())
        && coversRange(a.priority(), b.priority())
        && (a.trafficClass() == null || a.trafficClass() == b.trafficClass())
        && (a.personalData() == null || a.personalData().equals(b.personalData())
            || (a.personalData() && !b.personalDataKinds().isEmpty()))
        && coversList(a.personalDataKinds(), b.personalDataKinds())
        && coversList(a.complexity(), b.complexity())
        && coversList(a.topics(), b.topics())
        && coversPool(a.pool(), b.pool());
  }

  private static <T> boolean coversList(List<T> a, List<T> b) {
    return a.isEmpty() || (!b.isEmpty() && a.containsAll(b));
  }

  private static boolean coversModels(List<String> a, List<String> b) {
    if (a.isEmpty()) {
      return true;
    }
    if (b.isEmpty()) {
      return false;
    }
    for (String m : b) {
      boolean any = false;
      for (String pattern : a) {
        if (pattern.equals(m) || (!m.contains("*") && InferencePolicy.globMatches(pattern, m)) || pattern.equals("*")) {
          any = true;
          break;
        }
      }
      if (!any) {
        return false;
      }
    }
    return true;
  }

  private static boolean coversRange(@Nullable Range a, @Nullable Range b) {
    return a == null || (b != null && a.covers(b));
  }

  private static boolean coversPool(@Nullable PoolCondition a, @Nullable PoolCondition b) {
    if (a == null) {
      return true;
    }
    // A condition on "the current pool" depends on earlier routes, so only an explicit, equal pool compares.
    return b != null && a.name() != null && a.name().equals(b.name())
        && (a.saturated() == null || a.saturated().equals(b.saturated()))
        && coversRange(a.queueDepth(), b.queueDepth())
        && coversRange(a.kvUtilization(), b.kvUtilization())
        && coversRange(a.predictedTtftMs(), b.predictedTtftMs());
  }
}
