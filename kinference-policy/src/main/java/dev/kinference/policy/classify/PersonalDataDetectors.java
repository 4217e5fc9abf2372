package dev.kinference.policy.classify;

import dev.kinference.plugin.Plugins;
import dev.kinference.request.InferenceRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * Composes personal-data detectors: every one runs, and their findings are united. A detector that fails makes the
 * whole detection fail with a {@link PersonalDataDetectorException} after the others have run (the request is then
 * treated as personal).
 */
public final class PersonalDataDetectors {

  private PersonalDataDetectors() {}

  /** All of {@code detectors} as one (the detector itself when there is one). */
  public static PersonalDataDetector of(List<? extends PersonalDataDetector> detectors) {
    if (detectors.isEmpty()) {
      throw new IllegalArgumentException("no personal-data detector");
    }
    return detectors.size() == 1 ? detectors.get(0) : new All(List.copyOf(detectors));
  }

  /**
   * The detectors found: those registered with {@link java.util.ServiceLoader} ({@code builtin} at least), then a
   * {@link PresidioAnalyzerDetector} when {@code KINFERENCE_PRESIDIO_URL} is set (see {@link
   * PresidioAnalyzerDetector#fromEnvironment}).
   *
   * @param env the environment (or system properties) lookup
   */
  public static List<PersonalDataDetector> discover(Function<String, @Nullable String> env) {
    List<PersonalDataDetector> list = new ArrayList<>(Plugins.load(PersonalDataDetector.class).providers());
    if (list.stream().noneMatch(d -> d instanceof BuiltinPersonalDataDetector)) {
      list.add(0, new BuiltinPersonalDataDetector());
    }
    PresidioAnalyzerDetector presidio = PresidioAnalyzerDetector.fromEnvironment(env);
    if (presidio != null) {
      list.add(presidio);
    }
    return list;
  }

  /** {@link #discover} over the process environment, then system properties ({@code kinference.presidio.url}). */
  public static PersonalDataDetector fromEnvironment() {
    return of(discover(PresidioAnalyzerDetector::processSetting));
  }

  /** Several detectors as one. */
  private static final class All implements PersonalDataDetector {
    private final List<PersonalDataDetector> detectors;
    private final String name;

    All(List<PersonalDataDetector> detectors) {
      this.detectors = detectors;
      this.name = detectors.stream().map(PersonalDataDetector::name).collect(Collectors.joining("+"));
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public PersonalData detect(CharSequence text) {
      return run(d -> d.detect(text));
    }

    @Override
    public PersonalData detect(InferenceRequest request) {
      return run(d -> d.detect(request));
    }

    private PersonalData run(Function<PersonalDataDetector, PersonalData> each) {
      PersonalData all = PersonalData.NONE;
      PersonalDataDetectorException failed = null;
      for (PersonalDataDetector d : detectors) {
        try {
          all = all.plus(each.apply(d));
        } catch (RuntimeException e) {
          PersonalDataDetectorException f = e instanceof PersonalDataDetectorException p ? p
              : new PersonalDataDetectorException(d.name(), "error", e.getClass().getSimpleName(), e);
          if (failed == null) {
            failed = f;
          } else {
            failed.addSuppressed(f);
          }
        }
      }
      if (failed != null) {
        throw failed;
      }
      return all;
    }

    @Override
    public String toString() {
      return name;
    }
  }
}
