package dev.kinference.gateway;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A small Prometheus registry: counters, histograms and callback gauges with label sets, rendered in the text
 * exposition format. Updates are lock-free (adders in concurrent maps); rendering reads each series once and may
 * interleave with updates, as Prometheus clients do.
 */
final class Metrics {

  /** Latency buckets, seconds: from a cache-hit first token to a long generation. */
  static final double[] SECONDS = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
  /** The OpenTelemetry GenAI semantic conventions' buckets for {@code gen_ai.client.token.usage}. */
  static final double[] TOKENS = {1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304,
      16777216, 67108864};
  /** The conventions' buckets for the client operation and the server request durations. */
  static final double[] GEN_AI_DURATION = {0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
      40.96, 81.92};
  /** The conventions' buckets for {@code gen_ai.server.time_to_first_token}. */
  static final double[] GEN_AI_TTFT = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
      7.5, 10.0};
  /** The conventions' buckets for {@code gen_ai.server.time_per_output_token}. */
  static final double[] GEN_AI_TPOT = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5};
  /** Routing-decision latency, seconds: a decision takes microseconds unless a plugin or tokenizer is slow. */
  static final double[] ROUTING_SECONDS = {0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
      0.01, 0.025, 0.05, 0.1};

  private final List<Family> families = new ArrayList<>();

  abstract static class Family {
    final String name;
    final String help;
    final String type;
    final String[] labelNames;

    Family(String name, String help, String type, String... labelNames) {
      this.name = name;
      this.help = help;
      this.type = type;
      this.labelNames = labelNames;
    }

    abstract void render(StringBuilder sb);

    void labels(StringBuilder sb, List<String> values, @Nullable String extraName, @Nullable String extraValue) {
      if (values.isEmpty() && extraName == null) {
        return;
      }
      sb.append('{');
      boolean first = true;
      for (int i = 0; i < values.size(); i++) {
        if (!first) {
          sb.append(',');
        }
        first = false;
        sb.append(labelNames[i]).append("=\"");
        escape(sb, values.get(i));
        sb.append('"');
      }
      if (extraName != null) {
        if (!first) {
          sb.append(',');
        }
        sb.append(extraName).append("=\"").append(extraValue).append('"');
      }
      sb.append('}');
    }

    List<String> key(String... values) {
      if (values.length != labelNames.length) {
        throw new IllegalArgumentException(name + " takes labels " + List.of(labelNames));
      }
      return List.of(values);
    }
  }

  static void escape(StringBuilder sb, String v) {
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      switch (c) {
        case '\\' -> sb.append("\\\\");
        case '"' -> sb.append("\\\"");
        case '\n' -> sb.append("\\n");
        default -> sb.append(c);
      }
    }
  }

  static String number(double v) {
    if (Double.isNaN(v)) {
      return "NaN";
    }
    if (Double.isInfinite(v)) {
      return v > 0 ? "+Inf" : "-Inf";
    }
    if (v == Math.rint(v) && Math.abs(v) < 1e15) {
      return Long.toString((long) v);
    }
    return Double.toString(v);
  }

  /** A monotonically increasing sum per label set. */
  static final class Counter extends Family {
    private final Map<List<String>, DoubleAdder> series = new ConcurrentHashMap<>();

    Counter(String name, String help, String... labelNames) {
      super(name, help, "counter", labelNames);
    }

    void inc(String... labels) {
      add(1, labels);
    }

    void add(double amount, String... labels) {
      if (amount == 0) {
        series.computeIfAbsent(key(labels), k -> new DoubleAdder());
        return;
      }
      series.computeIfAbsent(key(labels), k -> new DoubleAdder()).add(amount);
    }

    double get(String... labels) {
      DoubleAdder a = series.get(key(labels));
      return a == null ? 0 : a.sum();
    }

    /** The sum over every label set whose values match the non-null entries. */
    double sum(@Nullable String... pattern) {
      double total = 0;
      outer:
      for (var e : series.entrySet()) {
        for (int i = 0; i < pattern.length; i++) {
          if (pattern[i] != null && !pattern[i].equals(e.getKey().get(i))) {
            continue outer;
          }
        }
        total += e.getValue().sum();
      }
      return total;
    }

    @Override
    void render(StringBuilder sb) {
      for (var e : sorted(series)) {
        sb.append(name);
        labels(sb, e.getKey(), null, null);
        sb.append(' ').append(number(e.getValue().sum())).append('\n');
      }
    }
  }

  /** Cumulative buckets, sum and count per label set. */
  static final class Histogram extends Family {
    private final double[] bounds;
    private final Map<List<String>, Series> series = new ConcurrentHashMap<>();

    private static final class Series {
      final LongAdder[] buckets;
      final DoubleAdder sum = new DoubleAdder();
      final LongAdder count = new LongAdder();

      Series(int n) {
        buckets = new LongAdder[n];
        for (int i = 0; i < n; i++) {
          buckets[i] = new LongAdder();
        }
      }
    }

    Histogram(String name, String help, double[] bounds, String... labelNames) {
      super(name, help, "histogram", labelNames);
      this.bounds = bounds.clone();
    }

    void observe(double value, String... labels) {
      Series s = series.computeIfAbsent(key(labels), k -> new Series(bounds.length));
      for (int i = 0; i < bounds.length; i++) {
        if (value <= bounds[i]) {
          s.buckets[i].increment();
          break;
        }
      }
      s.sum.add(value);
      s.count.increment();
    }

    long count(String... labels) {
      Series s = series.get(key(labels));
      return s == null ? 0 : s.count.sum();
    }

    @Override
    void render(StringBuilder sb) {
      for (var e : sorted(series)) {
        Series s = e.getValue();
        long cumulative = 0;
        for (int i = 0; i < bounds.length; i++) {
          cumulative += s.buckets[i].sum();
          sb.append(name).append("_bucket");
          labels(sb, e.getKey(), "le", number(bounds[i]));
          sb.append(' ').append(cumulative).append('\n');
        }
        long count = s.count.sum();
        sb.append(name).append("_bucket");
        labels(sb, e.getKey(), "le", "+Inf");
        sb.append(' ').append(Math.max(count, cumulative)).append('\n');
        sb.append(name).append("_sum");
        labels(sb, e.getKey(), null, null);
        sb.append(' ').append(number(s.sum.sum())).append('\n');
        sb.append(name).append("_count");
        labels(sb, e.getKey(), null, null);
        sb.append(' ').append(Math.max(count, cumulative)).append('\n');
      }
    }
  }

  /** Values read when scraped. */
  static final class Gauge extends Family {
    /** Receives one sample: label values and the value. */
    interface Sampler {
      void sample(Consumer<Sample> out);
    }

    record Sample(List<String> labels, double value) {}

    private final Sampler sampler;

    Gauge(String name, String help, Sampler sampler, String... labelNames) {
      this(name, help, "gauge", sampler, labelNames);
    }

    Gauge(String name, String help, String type, Sampler sampler, String... labelNames) {
      super(name, help, type, labelNames);
      this.sampler = sampler;
    }

    @Override
    void render(StringBuilder sb) {
      List<Sample> samples = new ArrayList<>();
      sampler.sample(samples::add);
      samples.sort(Comparator.comparing(s -> String.join("\u0000", s.labels())));
      for (Sample s : samples) {
        sb.append(name);
        labels(sb, s.labels(), null, null);
        sb.append(' ').append(number(s.value())).append('\n');
      }
    }
  }

  private static <V> List<Map.Entry<List<String>, V>> sorted(Map<List<String>, V> map) {
    List<Map.Entry<List<String>, V>> entries = new ArrayList<>(map.entrySet());
    entries.sort(Comparator.comparing(e -> String.join("\u0000", e.getKey())));
    return entries;
  }

  Counter counter(String name, String help, String... labels) {
    return register(new Counter(name, help, labels));
  }

  Histogram histogram(String name, String help, double[] bounds, String... labels) {
    return register(new Histogram(name, help, bounds, labels));
  }

  Gauge gauge(String name, String help, Gauge.Sampler sampler, String... labels) {
    return register(new Gauge(name, help, sampler, labels));
  }

  /** A counter kept elsewhere, read when scraped. */
  Gauge observedCounter(String name, String help, Gauge.Sampler sampler, String... labels) {
    return register(new Gauge(name, help, "counter", sampler, labels));
  }

  private synchronized <F extends Family> F register(F family) {
    for (Family f : families) {
      if (f.name.equals(family.name)) {
        throw new IllegalArgumentException("metric registered twice: " + family.name);
      }
    }
    families.add(family);
    return family;
  }

  /** The text exposition format (version 0.0.4). */
  synchronized String render() {
    StringBuilder sb = new StringBuilder(8192);
    for (Family f : families) {
      sb.append("# HELP ").append(f.name).append(' ').append(f.help.replace("\n", " ")).append('\n');
      sb.append("# TYPE ").append(f.name).append(' ').append(f.type).append('\n');
      f.render(sb);
    }
    return sb.toString();
  }

  static String format(double v) {
    return String.format(Locale.ROOT, "%.6f", v);
  }
}
