#!/usr/bin/env bash
# State-store benchmark: what a shared Redis state store adds to each request's governance path (reserve the rate
# limits and budget, then settle with the real usage) against the in-process memory store, on this machine
# (redis-server on 127.0.0.1, started by the benchmark itself).
#
#   bench/state-store-bench.sh                   # everything (about 2 minutes on 2 cores)
#   PHASES=jmh bench/state-store-bench.sh        # only the JMH benchmark
#   PHASES=roundtrips bench/state-store-bench.sh # only the round trips and the plain p50/p99
#   JMH_ARGS="-wi 1 -i 2" bench/state-store-bench.sh   # extra JMH options (shorter runs, -prof gc, ...)
#
# Phase "jmh": GovernanceStateStoreBenchmark (JMH sample mode, microseconds; 3 warm-up and 5 measured iterations
# of 2 s, one fork), store=memory and store=redis, one thread and four threads (contention on the 2 cores). The
# Redis server runs with appendfsync everysec, as the Helm chart's state store does with persistence on.
# Phase "roundtrips": StateStoreRoundTrips, a plain main class: p50/p99 of 20,000 sequential requests per store
# timed one by one (memory, Redis with appendfsync everysec, and Redis with appendfsync always as the test kit
# starts it), then 10,000 requests over Redis watched with MONITOR and INFO commandstats for the store's round
# trips per request.
#
# Needs redis-server (or valkey-server) and jmh/target/benchmarks.jar. The jar is built when it is missing or
# lacks these benchmarks (./mvnw -q -B -pl jmh -am package -DskipTests; REBUILD=1 forces it). To build the JMH
# module alone against modules already installed in ~/.m2, run ./mvnw -B -q install -DskipTests once, then
# ./mvnw -o -q -pl jmh package -DskipTests. Writes results to bench-results/state-store/ (not committed).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/bench-results/state-store"
JAR="$ROOT/jmh/target/benchmarks.jar"
PHASES="${PHASES:-jmh roundtrips}"
JMH_ARGS="${JMH_ARGS:-}"
REQUESTS="${REQUESTS:-10000}"
LATENCY_REQUESTS="${LATENCY_REQUESTS:-20000}"
mkdir -p "$OUT"

if ! command -v redis-server >/dev/null 2>&1 && [ ! -x /usr/bin/redis-server ] \
    && ! command -v valkey-server >/dev/null 2>&1 && [ ! -x /usr/bin/valkey-server ]; then
  echo "bench/state-store-bench.sh needs redis-server (Redis 7 or Valkey 8) on this machine:" >&2
  echo "  sudo apt-get install -y redis-server" >&2
  exit 1
fi
REDIS_SERVER="$(command -v redis-server || command -v valkey-server || echo /usr/bin/redis-server)"

. "$ROOT/.mvn/select-jdk.sh" >/dev/null 2>&1 || true
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

has_benchmarks() {
  [ -f "$JAR" ] && python3 - "$JAR" <<'PY'
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
sys.exit(0 if {"dev/kinference/jmh/GovernanceStateStoreBenchmark.class",
               "dev/kinference/jmh/StateStoreRoundTrips.class"} <= names else 1)
PY
}
if [ -n "${REBUILD:-}" ] || ! has_benchmarks; then
  echo "building jmh/target/benchmarks.jar..." >&2
  (cd "$ROOT" && ./mvnw -q -B -DskipTests -pl jmh -am package) >&2
fi

machine() {
  echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(free -g | awk '/Mem:/{print $2}') GB RAM," \
    "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg); $("$REDIS_SERVER" --version | awk '{print $3}' | sed 's/v=/redis-server /')" \
    "on 127.0.0.1; $("$JAVA" -version 2>&1 | head -1)"
}

STAMP="$(date +%Y%m%d-%H%M%S)"
REPORT="$OUT/state-store-bench-$STAMP.md"
{
  echo "# State-store benchmark $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "Machine: $(machine)"
  echo
} >"$REPORT"

if [[ " $PHASES " == *" jmh "* ]]; then
  JSON="$OUT/jmh-$STAMP.json"
  # shellcheck disable=SC2086 # JMH_ARGS is a list of options
  "$JAVA" -jar "$JAR" GovernanceStateStoreBenchmark -rf json -rff "$JSON" $JMH_ARGS | tee "$OUT/jmh-$STAMP.txt" >&2
  python3 - "$JSON" >>"$REPORT" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
res = {}
for r in rows:
    method = r["benchmark"].rsplit(".", 1)[1]
    p = r["primaryMetric"]["scorePercentiles"]
    res[(method, r["params"]["store"])] = (r["threads"], r["params"].get("appendfsync", ""), r["primaryMetric"]["score"],
                                          p["50.0"], p["90.0"], p["99.0"], p["99.9"])
print("## GovernanceStateStoreBenchmark: reserve + settle (JMH sample mode, microseconds per request)")
print()
print("| benchmark | threads | store | mean | p50 | p90 | p99 | p99.9 | added p50 | added p99 |")
print("|---|---|---|---|---|---|---|---|---|---|")
verdicts = []
for method in ("oneThread", "fourThreads"):
    base = res.get((method, "memory"))
    for store in ("memory", "redis"):
        v = res.get((method, store))
        if v is None:
            continue
        threads, fsync, mean, p50, p90, p99, p999 = v
        label = store if store == "memory" else f"redis (appendfsync {fsync})"
        added = ("", "")
        if store != "memory" and base is not None:
            added = (f"{p50 - base[3]:.1f}", f"{p99 - base[5]:.1f}")
            verdicts.append(f"{method}: added p99 {p99 - base[5]:.1f} us: "
                            + ("under 1 ms, target met" if p99 - base[5] < 1000 else "1 ms or more, target missed"))
        print(f"| {method} | {threads} | {label} | {mean:.1f} | {p50:.1f} | {p90:.1f} | {p99:.1f} | {p999:.1f} | {added[0]} | {added[1]} |")
print()
for v in verdicts:
    print(f"- {v}")
print()
PY
fi

if [[ " $PHASES " == *" roundtrips "* ]]; then
  "$JAVA" -cp "$JAR" dev.kinference.jmh.StateStoreRoundTrips "$REQUESTS" "$LATENCY_REQUESTS" \
    | tee "$OUT/roundtrips-$STAMP.txt" >&2
  {
    echo "## StateStoreRoundTrips: sequential requests timed one by one, and round trips per request"
    echo
    echo '```'
    grep -v '^RESULT' "$OUT/roundtrips-$STAMP.txt" | sed '/./,$!d'
    echo '```'
    echo
  } >>"$REPORT"
fi

echo >&2
cat "$REPORT"
echo "Report: $REPORT"
