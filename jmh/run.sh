#!/bin/sh
# Runs Kinference's JMH benchmarks and writes their results as JSON.
#
#   jmh/run.sh                          every benchmark, quick settings (about 2 hours on 2 cores)
#   jmh/run.sh RouteBench               one class (any JMH regex and options work)
#   jmh/run.sh RouteBench.decide -p promptTokens=8192 -p endpoints=64 -prof gc
#
# Builds jmh/target/benchmarks.jar first when it is missing or sources changed, then runs it with
# -rf json -rff $KINFERENCE_JMH_JSON (default jmh/target/jmh-result.json). Extra arguments go to JMH
# (-h lists them). The benchmarks' own annotations set warmup, iterations and forks; see docs/PERFORMANCE.md.
set -eu
KINFERENCE_HOME="$(cd "$(dirname "$0")/.." && pwd)"
. "$KINFERENCE_HOME/.mvn/select-jdk.sh"
JAR="$KINFERENCE_HOME/jmh/target/benchmarks.jar"
JSON="${KINFERENCE_JMH_JSON:-$KINFERENCE_HOME/jmh/target/jmh-result.json}"
stale() {
  [ ! -f "$JAR" ] && return 0
  [ -n "$(find "$KINFERENCE_HOME" -path "$KINFERENCE_HOME/.git" -prune -o \( -name '*.java' -o -name 'pom.xml' \) \
    -newer "$JAR" -print -quit 2>/dev/null)" ]
}
if stale; then
  echo "jmh/run.sh: building jmh/target/benchmarks.jar..." >&2
  (cd "$KINFERENCE_HOME" && ./mvnw -q -B -DskipTests -pl jmh -am package) >&2
fi
if [ -n "${JAVA_HOME-}" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi
mkdir -p "$(dirname "$JSON")"
echo "jmh/run.sh: results go to $JSON" >&2
exec "$JAVA" -jar "$JAR" -rf json -rff "$JSON" "$@"
