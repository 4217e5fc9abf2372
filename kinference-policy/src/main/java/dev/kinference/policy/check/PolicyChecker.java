package dev.kinference.policy.check;

import dev.kinference.policy.config.LoadResult;
import dev.kinference.policy.config.PolicyConfig;
import dev.kinference.policy.config.PolicyLoader;
import dev.kinference.policy.config.Problem;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code kinference check}: loads files and directories with exactly the validation the runtime uses, prints every
 * problem, and says whether the configuration is usable. Stateless; thread-safe.
 */
public final class PolicyChecker {

  private PolicyChecker() {}

  /** Exit status: the configuration is usable (and, when strict, has no warning). */
  public static final int OK = 0;
  /** Exit status: errors (or, when strict, warnings). */
  public static final int PROBLEMS = 1;

  /** Loads and validates {@code paths}. */
  public static LoadResult check(List<Path> paths) {
    return PolicyLoader.load(paths);
  }

  /**
   * Checks {@code paths}, prints each problem as {@code file:line:column: severity: message} to {@code out}, then a
   * summary line, and returns the exit status.
   *
   * @param strict whether warnings (such as shadowed rules) fail the check too
   */
  public static int run(List<Path> paths, boolean strict, PrintWriter out) {
    LoadResult r = check(paths);
    for (Problem p : r.problems()) {
      out.println(p);
    }
    int errors = r.errors().size();
    int warnings = r.warnings().size();
    PolicyConfig config = r.config();
    String files = r.sources().size() + " file" + (r.sources().size() == 1 ? "" : "s");
    if (config != null) {
      out.println("checked " + files + ": " + config.pools().size() + " pools, " + config.aliases().size()
          + " aliases, " + config.providers().size() + " providers, " + config.tenants().size() + " tenants, "
          + config.policies().size() + " policies (" + config.rules().size() + " rules); " + errors + " errors, "
          + warnings + " warnings");
    } else {
      out.println("checked " + files + ": " + errors + " error" + (errors == 1 ? "" : "s") + ", " + warnings
          + " warning" + (warnings == 1 ? "" : "s"));
    }
    out.flush();
    return errors > 0 || (strict && warnings > 0) ? PROBLEMS : OK;
  }
}
