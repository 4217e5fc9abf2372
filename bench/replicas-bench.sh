#!/usr/bin/env bash
# Router-replicas benchmark, end to end: real gateway replicas (`kinference serve`) over one real Redis, in front of
# simulated vLLM servers that answer over real HTTP and publish KV events over ZMQ (precise index), under a
# shared-prefix load spread at random over the replicas, as a Kubernetes Service spreads it. What the simulator's
# `--router-replicas` models as NAME@1 / NAME@N / NAME@Ns, measured with the processes themselves:
#
#   one       1 gateway                       (--replicas 1)
#   three     3 gateways, each on its own account of the servers' in-flight prefill (--replicas 3 --no-prefill-sharing)
#   sharing   3 gateways sharing it through Redis at every scrape (--replicas 3; PeerPrefillSharing)
#
#   bench/replicas-bench.sh                    # the three setups twice each, interleaved (about 12 minutes)
#   REPS=1 bench/replicas-bench.sh             # once each
#   CONCURRENCY=24 DURATION=90 PROMPT_GROUPS=16 QUESTION=200 bench/replicas-bench.sh
#   SETUPS="three sharing" bench/replicas-bench.sh
#
# Every run starts from cold servers (the simulators and the gateways are restarted) and sends the same prompts in
# the same order per client (bench/replicas-load.py: CONCURRENCY closed-loop clients, GROUPS system prompts of PREFIX
# tokens, a QUESTION-token question each, OUTPUT tokens out; WARMUP seconds unmeasured, then DURATION measured).
# The defaults put one gateway near its knee on this 2-core machine (32 clients: TTFT p90 about 1.1 s). The simulators
# run in real time, so a busy machine adds to every TTFT: the report gives the load average. The report also gives
# what the replicas count in the servers' prefill (kinference_gateway_endpoint_pending_prefill_tokens): the peers'
# share is 0 unless they share.
#
# Needs redis-server (or valkey-server) and python3. Writes results to bench-results/replicas/ (not committed).
set -euo pipefail

# Settings are environment variables: any argument is a mistake, caught before minutes of runs.
case "${1:-}" in
  "") ;;
  -h|--help) sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;;
  *) echo "bench/replicas-bench.sh takes no arguments (got '$1'); settings are environment variables, see --help" >&2
     exit 2 ;;
esac
for setup in ${SETUPS:-}; do
  case "$setup" in
    one|three|sharing) ;;
    *) echo "bench/replicas-bench.sh: unknown setup '$setup' in SETUPS (one, three, sharing)" >&2; exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/bench-results/replicas"
WORK="$(mktemp -d /tmp/kinference-replicas-bench.XXXXXX)"
SERVERS="${SERVERS:-3}"
GPU_BLOCKS="${GPU_BLOCKS:-4000}"
CONCURRENCY="${CONCURRENCY:-32}"
WARMUP="${WARMUP:-20}"
DURATION="${DURATION:-60}"
GROUPS_N="${PROMPT_GROUPS:-24}"
PREFIX="${PREFIX:-6000}"
QUESTION="${QUESTION:-2000}"
OUTPUT_TOKENS="${OUTPUT:-64}"
SLO="${SLO:-1.0}"
REPS="${REPS:-2}"
SETUPS="${SETUPS:-one three sharing}"
PIDS=()
mkdir -p "$OUT"

for tool in python3 curl; do
  command -v "$tool" >/dev/null 2>&1 || { echo "bench/replicas-bench.sh needs $tool: sudo apt-get install -y $tool" >&2; exit 1; }
done
REDIS_SERVER="$(command -v redis-server || command -v valkey-server || true)"
if [ -z "$REDIS_SERVER" ]; then
  echo "bench/replicas-bench.sh needs redis-server (Redis 7 or Valkey 8) on this machine:" >&2
  echo "  sudo apt-get install -y redis-server" >&2
  exit 1
fi

cleanup() {
  for pid in "${PIDS[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  sleep 1
  rm -rf "$WORK"
}
trap cleanup EXIT

KINFERENCE="$ROOT/kinference"
"$KINFERENCE" --version >/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_for() { # url
  for _ in $(seq 1 600); do
    if curl -s -o /dev/null "$1"; then return 0; fi
    sleep 0.2
  done
  echo "timed out waiting for $1" >&2
  return 1
}

stop_pid() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

REDIS_PORT="$(free_port)"
"$REDIS_SERVER" --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" \
  >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
PIDS+=("$REDIS_PID")
for _ in $(seq 1 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $REDIS_PORT), 1)" 2>/dev/null && break
  sleep 0.1
done
REDIS_URI="redis://127.0.0.1:$REDIS_PORT"

start_sims() {
  rm -f "$WORK/sims.txt"
  mkdir -p "$WORK/config"
  rm -f "$WORK/config/pool.yaml"
  KINFERENCE_JAVA_OPTS="-Xms512m -Xmx2g" "$KINFERENCE" sim-servers --count "$SERVERS" --gpu-blocks "$GPU_BLOCKS" \
    --urls-file "$WORK/sims.txt" --pool-file "$WORK/config/pool.yaml" >"$WORK/sims.log" 2>&1 &
  SIMS_PID=$!
  PIDS+=("$SIMS_PID")
  for _ in $(seq 1 600); do [ -s "$WORK/sims.txt" ] && break; sleep 0.2; done
  mapfile -t SIM_URLS < <(awk '{print $2}' "$WORK/sims.txt")
  for u in "${SIM_URLS[@]}"; do wait_for "$u/health"; done
}

start_gateways() { # count, extra serve args...
  local n=$1; shift
  GATEWAY_PIDS=(); GATEWAY_URLS=()
  for i in $(seq 1 "$n"); do
    KINFERENCE_JAVA_OPTS="-Xms256m -Xmx1g" HOSTNAME="replica-$i" "$KINFERENCE" serve --config "$WORK/config" \
      --port 0 --no-access-log --index precise --state-store "$REDIS_URI" "$@" >"$WORK/gateway-$i.log" 2>&1 &
    GATEWAY_PIDS+=($!)
    PIDS+=($!)
  done
  for i in $(seq 1 "$n"); do
    for _ in $(seq 1 600); do grep -q "kinference gateway on" "$WORK/gateway-$i.log" 2>/dev/null && break; sleep 0.2; done
    url="$(grep -o 'kinference gateway on http://[0-9.:]*' "$WORK/gateway-$i.log" | awk '{print $4}')"
    [ -n "$url" ] || { echo "gateway $i did not start:" >&2; cat "$WORK/gateway-$i.log" >&2; exit 1; }
    wait_for "$url/ready"
    GATEWAY_URLS+=("$url")
  done
}

run_setup() { # setup rep
  local setup=$1
  start_sims
  case "$setup" in
    one) start_gateways 1 --replicas 1 ;;
    three) start_gateways 3 --replicas 3 --no-prefill-sharing ;;
    sharing) start_gateways 3 --replicas 3 ;;
    *) echo "unknown setup $setup (one, three, sharing)" >&2; exit 2 ;;
  esac
  grep -h "replicas:" "$WORK"/gateway-*.log | sort | uniq -c | sed 's/^/  /' >&2 || true
  local load
  load="$(cut -d' ' -f1-3 /proc/loadavg)"
  python3 "$ROOT/bench/replicas-load.py" --gateways "$(IFS=,; echo "${GATEWAY_URLS[*]}")" \
    --servers "$(IFS=,; echo "${SIM_URLS[*]}")" --concurrency "$CONCURRENCY" --warmup "$WARMUP" \
    --duration "$DURATION" --groups "$GROUPS_N" --prefix "$PREFIX" --question "$QUESTION" --output "$OUTPUT_TOKENS" \
    --slo "$SLO" >"$WORK/result.json"
  python3 - "$setup" "$2" "$load" "$(cut -d' ' -f1-3 /proc/loadavg)" "$WORK/result.json" >>"$WORK/rows.jsonl" <<'PY'
import json, sys
r = json.load(open(sys.argv[5]))
r.update(setup=sys.argv[1], rep=int(sys.argv[2]), load_before=sys.argv[3], load_after=sys.argv[4])
print(json.dumps(r))
PY
  tail -1 "$WORK/rows.jsonl" >&2
  for pid in "${GATEWAY_PIDS[@]}"; do stop_pid "$pid"; done
  stop_pid "$SIMS_PID"
  # each run's shares lapse (three intervals) before the next starts
  sleep 1
}

machine() {
  echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(free -g | awk '/Mem:/{print $2}') GB RAM," \
    "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg); $("$REDIS_SERVER" --version | awk '{print $3}' | sed 's/v=/redis-server /')" \
    "on 127.0.0.1; $(. "$ROOT/.mvn/select-jdk.sh" >/dev/null 2>&1; "${JAVA_HOME:+$JAVA_HOME/bin/}java" -version 2>&1 | head -1 || true)"
}

REPORT="$OUT/replicas-bench-$(date +%Y%m%d-%H%M%S).md"
{
  echo "# Router-replicas benchmark $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "Machine: $(machine)"
  echo
  echo "$SERVERS simulated servers (real time, $GPU_BLOCKS KV blocks each), $CONCURRENCY closed-loop clients, each request" \
    "to a random replica; $GROUPS_N groups of a $PREFIX-token system prompt + $QUESTION-token question, $OUTPUT_TOKENS" \
    "tokens out; ${WARMUP} s warm-up, ${DURATION} s measured; goodput = requests per minute with TTFT <= ${SLO} s."
  echo
} >"$REPORT"

: >"$WORK/rows.jsonl"
for rep in $(seq 1 "$REPS"); do
  for setup in $SETUPS; do
    echo "run $rep: $setup" >&2
    run_setup "$setup" "$rep"
  done
done
cp "$WORK/rows.jsonl" "${REPORT%.md}.jsonl"

python3 - "$WORK/rows.jsonl" >>"$REPORT" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
names = {"one": "1 replica", "three": "3 replicas, own accounts (--no-prefill-sharing)",
         "sharing": "3 replicas sharing in-flight prefill"}
print("| setup | goodput/min per run | mean | vs one | TTFT p50 s | TTFT p90 s | hit rate | finished | "
      "pending prefill own / peers (mean tokens) | errors |")
print("|---|---|---|---|---|---|---|---|---|---|")
base = None
for setup in ("one", "three", "sharing"):
    rs = [r for r in rows if r["setup"] == setup]
    if not rs:
        continue
    mean = statistics.mean(r["goodput_per_min"] for r in rs)
    if setup == "one":
        base = mean
    vs = f"{(mean / base - 1) * 100:+.1f}%" if base and setup != "one" else ""
    print(f"| {names[setup]} | {' / '.join(str(r['goodput_per_min']) for r in rs)} | {mean:.1f} | {vs} | "
          f"{' / '.join(str(r['ttft_p50_s']) for r in rs)} | {' / '.join(str(r['ttft_p90_s']) for r in rs)} | "
          f"{' / '.join(str(r['hit_rate']) for r in rs)} | {' / '.join(str(r['finished']) for r in rs)} | "
          f"{'; '.join(str(r.get('pending_prefill_own_mean')) + ' / ' + str(r.get('pending_prefill_peers_mean')) for r in rs)} | "
          f"{sum(r['errors'] for r in rs)} |")
print()
print("Load average before / after each run: " + "; ".join(
    f"{r['setup']} {r['rep']}: {r['load_before']} / {r['load_after']}" for r in rows))
PY

echo >&2
cat "$REPORT"
echo "Report: $REPORT"
