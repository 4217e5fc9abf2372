#!/usr/bin/env bash
# Endpoint picker benchmark: the round trip of kinference-epp's ext_proc picker as Envoy sees it, over gRPC on a
# loopback port, 64 endpoints, p50/p99 with tokenization excluded (prompt as token ids) and included (chat text,
# the default approximate tokenizer). See EppBench's comment for what is timed.
#
#   bench/epp-bench.sh                                  # 10,000 warm-up and 20,000 timed requests per workload
#   JAVA_OPTS="-Drequests=5000 -Dtokens=8192" bench/epp-bench.sh
#
# Builds the module and what it needs (./mvnw -q -pl kinference-epp -am test-compile; -o when OFFLINE=1) and runs
# dev.kinference.epp.EppBench on its test class path.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
CP_FILE="$ROOT/kinference-epp/target/bench-classpath.txt"
MVN_OFFLINE=()
if [ "${OFFLINE:-0}" = 1 ]; then
  MVN_OFFLINE=(-o)
fi
# With -am every module writes the file; kinference-epp comes last in the reactor, so its class path stays.
./mvnw -q "${MVN_OFFLINE[@]}" -pl kinference-epp -am test-compile dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile="$CP_FILE"
. "$ROOT/.mvn/select-jdk.sh" # JAVA_HOME: a JDK 21+ (as ./mvnw and ./kinference find it)
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
CP="$ROOT/kinference-epp/target/test-classes:$ROOT/kinference-epp/target/classes:$(cat "$CP_FILE")"
# shellcheck disable=SC2086
exec "$JAVA" -Xms512m -Xmx512m ${JAVA_OPTS:-} -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$CP" \
  dev.kinference.epp.EppBench
