package dev.kinference.gateway;

import java.util.List;

/** The {@code kinference_build_info} gauge: always 1, labelled with the gateway's version and the Java runtime's. */
final class BuildInfo {

  private BuildInfo() {}

  /** The version from the jar's manifest, or {@code development} when run from classes. */
  static String version() {
    String v = BuildInfo.class.getPackage().getImplementationVersion();
    return v == null ? "development" : v;
  }

  static void register(Metrics registry) {
    List<String> labels = List.of(version(), Runtime.version().toString());
    registry.gauge("kinference_build_info", "The gateway's version and the Java runtime it runs on; always 1.",
        out -> out.accept(new Metrics.Gauge.Sample(labels, 1)), "version", "java_version");
  }
}
