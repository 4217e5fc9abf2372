#!/usr/bin/env bash
# Proxy benchmark: the kinference gateway against nginx as a plain reverse proxy, in front of the same three
# simulated vLLM servers on this machine (127.0.0.1 only).
#
#   bench/proxy-bench.sh            # everything (about 15 minutes; PHASES=throughput about 10)
#   DURATION=5 bench/proxy-bench.sh # shorter runs
#   PHASES=throughput bench/proxy-bench.sh | PHASES=streams bench/proxy-bench.sh
#   PROXY_CPUS=0 LOAD_CPUS=1 bench/proxy-bench.sh  # pin the proxy under test (gateway or nginx) apart from the
#                                                  # simulators and wrk (taskset CPU lists)
#
# Phase "throughput": the simulators answer instantly (--instant), so what is measured is the proxy. wrk sends
# non-streamed chat completions: first closed-loop (16 and 64 connections) for the peak requests/s of each path,
# then at 25%, 50% and 75% of the gateway's peak (Poisson arrivals over 16 connections) for latency p50/p99 of
# direct (one server), nginx and the gateway (REPS runs each, medians); "added" is the proxy's median percentile
# minus direct's.
# Phase "streams": the simulators stream slowly (time scale 0.01: a 64-token answer takes minutes), h2load opens
# STREAMS streams over 10 HTTP/2 (h2c) connections to the gateway, and the script samples the gateway's open
# requests, resident memory and heap while they are held.
#
# Installs nginx, wrk and nghttp2-client (h2load) with apt-get when missing. Writes results to bench-results/proxy/ (not committed).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/bench-results/proxy"
WORK="$(mktemp -d /tmp/kinference-proxy-bench.XXXXXX)"
DURATION="${DURATION:-10}"
REPS="${REPS:-3}"
STREAMS="${STREAMS:-10000}"
PHASES="${PHASES:-throughput streams}"
PROXY_CPUS="${PROXY_CPUS:-}"
LOAD_CPUS="${LOAD_CPUS:-}"
WRK_THREADS=2
PIDS=()
mkdir -p "$OUT"

# "taskset -c LIST" for a command's prefix, nothing when LIST is empty; a prefix keeps $! the pinned process's PID.
pin() { [ -z "$1" ] || echo "taskset -c $1"; }

cleanup() {
  for pid in "${PIDS[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  if [ -f "$WORK/nginx.pid" ]; then kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true; fi
  sleep 1
  rm -rf "$WORK"
}
trap cleanup EXIT

need() {
  local missing=()
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
  command -v wrk >/dev/null 2>&1 || missing+=(wrk)
  command -v h2load >/dev/null 2>&1 || missing+=(nghttp2-client)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]}..." >&2
    apt-get install -y -q "${missing[@]}" >/dev/null
  fi
}
need
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"

# The kinference command line (builds the jar on first use).
KINFERENCE="$ROOT/kinference"
"$KINFERENCE" --version >/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_for() { # url
  for _ in $(seq 1 300); do
    if curl -s -o /dev/null "$1"; then return 0; fi
    sleep 0.2
  done
  echo "timed out waiting for $1" >&2
  return 1
}

start_sims() { # extra sim-servers args...
  rm -f "$WORK/sims.txt"
  KINFERENCE_JAVA_OPTS="-Xms512m -Xmx4g" $(pin "$LOAD_CPUS") "$KINFERENCE" sim-servers --count 3 --no-kv-events \
    --urls-file "$WORK/sims.txt" "$@" >"$WORK/sims.log" 2>&1 &
  SIMS_PID=$!
  PIDS+=("$SIMS_PID")
  for _ in $(seq 1 300); do [ -s "$WORK/sims.txt" ] && break; sleep 0.2; done
  mapfile -t SIM_URLS < <(awk '{print $2}' "$WORK/sims.txt")
  for u in "${SIM_URLS[@]}"; do wait_for "$u/health"; done
}

stop_pid() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

write_pool() { # dir
  mkdir -p "$1"
  {
    echo "apiVersion: kinference.dev/v1alpha1"
    echo "kind: InferencePool"
    echo "metadata: {name: bench}"
    echo "spec:"
    echo "  model: Qwen/Qwen3-8B"
    echo "  endpoints:"
    i=0
    for u in "${SIM_URLS[@]}"; do echo "    - {id: sim-$i, url: \"$u\"}"; i=$((i+1)); done
  } >"$1/pool.yaml"
}

start_gateway() { # extra serve args...
  write_pool "$WORK/config"
  KINFERENCE_JAVA_OPTS="${GATEWAY_JAVA_OPTS:--Xms512m -Xmx2g}" $(pin "$PROXY_CPUS") "$KINFERENCE" serve \
    --config "$WORK/config" \
    --port 0 $([ -n "${ACCESS_LOG:-}" ] || echo --no-access-log) "$@" >"$WORK/gateway.log" 2>&1 &
  GATEWAY_PID=$!
  PIDS+=("$GATEWAY_PID")
  for _ in $(seq 1 300); do grep -q "kinference gateway on" "$WORK/gateway.log" 2>/dev/null && break; sleep 0.2; done
  GATEWAY_URL="$(grep -o 'kinference gateway on http://[0-9.:]*' "$WORK/gateway.log" | awk '{print $4}')"
  wait_for "$GATEWAY_URL/ready"
  # The Java process itself (the launcher script execs it).
  GATEWAY_JAVA_PID="$GATEWAY_PID"
}

start_nginx() {
  NGINX_PORT="$(free_port)"
  {
    echo "worker_processes auto; pid $WORK/nginx.pid; error_log $WORK/nginx-error.log warn; daemon on;"
    echo "events { worker_connections 16384; }"
    echo "http {"
    echo "  access_log off; client_body_temp_path $WORK/nginx-body; proxy_temp_path $WORK/nginx-proxy;"
    echo "  fastcgi_temp_path $WORK/nginx-fcgi; uwsgi_temp_path $WORK/nginx-uwsgi; scgi_temp_path $WORK/nginx-scgi;"
    echo "  upstream sims { keepalive 256;"
    for u in "${SIM_URLS[@]}"; do echo "    server ${u#http://};"; done
    echo "  }"
    echo "  server { listen 127.0.0.1:$NGINX_PORT;"
    echo "    location / { proxy_pass http://sims; proxy_http_version 1.1; proxy_set_header Connection \"\";"
    echo "      proxy_buffering off; proxy_request_buffering off; } }"
    echo "}"
  } >"$WORK/nginx.conf"
  $(pin "$PROXY_CPUS") "$NGINX" -c "$WORK/nginx.conf" -p "$WORK"
  NGINX_URL="http://127.0.0.1:$NGINX_PORT"
  wait_for "$NGINX_URL/health"
}

BODY='{"model":"Qwen/Qwen3-8B","max_tokens":16,"messages":[{"role":"user","content":"Say something short."}]}'

write_lua() { # total rate in requests/s (0: closed loop)
  # Paced runs are open loop per wrk thread: each thread draws its send times from a Poisson process at its share
  # of the rate, and delay() holds a ready connection until its time (LuaJIT's ffi reads the monotonic clock, since
  # wrk's timers count whole milliseconds). A fixed delay after each answer, as before, fell short of the rate by
  # the answer's latency and, with integral milliseconds, ran 50% and 75% of the peak at the same rate; and
  # connections answered together sent together.
  cat >"$WORK/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
local rate = $1
local mean_gap_ms = rate > 0 and $WRK_THREADS * 1000 / rate or 0
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } kinference_timespec;
int clock_gettime(int clk_id, kinference_timespec *tp);
]]
local ts = ffi.new("kinference_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end
local next_at = nil
function init(args)
  -- each thread its own sequence: identical seeds would send the threads' requests in pairs
  ffi.C.clock_gettime(1, ts)
  math.randomseed(tonumber(ts.tv_nsec) + tonumber(tostring({}):match("0x(%x+)"), 16) % 1000003)
end
function delay()
  if mean_gap_ms == 0 then return 0 end
  local t = now_ms()
  if next_at == nil then next_at = t + math.random() * mean_gap_ms end
  local wait = next_at - t
  next_at = next_at - math.log(1 - math.random()) * mean_gap_ms
  if wait <= 0 then return 0 end
  return math.floor(wait + 0.5)
end
LUA
}

# wrk run -> "rps p50_ms p99_ms errors"
run_wrk() { # url connections rate (0: closed loop)
  write_lua "$3"
  $(pin "$LOAD_CPUS") wrk -t "$WRK_THREADS" -c "$2" -d "${DURATION}s" --latency -s "$WORK/post.lua" "$1/v1/chat/completions" \
    >"$WORK/wrk.txt" 2>&1 || true
  python3 - "$WORK/wrk.txt" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
def ms(v):
    m = re.match(r"([\d.]+)(us|ms|s)", v)
    x = float(m.group(1)); u = m.group(2)
    return x / 1000 if u == "us" else x * 1000 if u == "s" else x
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
p50 = ms(re.search(r"\s50%\s+(\S+)", t).group(1))
p99 = ms(re.search(r"\s99%\s+(\S+)", t).group(1))
err = 0
m = re.search(r"Non-2xx or 3xx responses: (\d+)", t)
if m: err += int(m.group(1))
m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", t)
if m: err += sum(int(x) for x in m.groups())
print(f"{rps:.0f} {p50:.3f} {p99:.3f} {err}")
PY
}

machine() {
  echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(free -g | awk '/Mem:/{print $2}') GB RAM," \
    "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg); $("$NGINX" -v 2>&1 | cut -d/ -f2) nginx, wrk $(wrk -v 2>&1 | head -1 | awk '{print $2}')," \
    "the gateway on $(. "$ROOT/.mvn/select-jdk.sh" >/dev/null 2>&1; "${JAVA_HOME:+$JAVA_HOME/bin/}java" -version 2>&1 | head -1 || true);" \
    "proxy on CPUs ${PROXY_CPUS:-any}, simulators and wrk on CPUs ${LOAD_CPUS:-any}"
}

REPORT="$OUT/proxy-bench-$(date +%Y%m%d-%H%M%S).md"
{
  echo "# Proxy benchmark $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "Machine: $(machine)"
  echo
} >"$REPORT"

if [[ " $PHASES " == *" throughput "* ]]; then
  start_sims --instant
  start_nginx
  start_gateway --queue 0
  url_of() { case $1 in direct) echo "${SIM_URLS[0]}";; nginx) echo "$NGINX_URL";; gateway) echo "$GATEWAY_URL";; esac; }
  median() { python3 -c "import statistics,sys; print(statistics.median([float(x) for x in sys.argv[1:]]))" "$@"; }
  # Warm up: JIT compilation of the gateway and the simulators (the machine may be shared and slow).
  for target in gateway nginx direct gateway; do run_wrk "$(url_of $target)" 32 0 >/dev/null; done
  echo "## Peak (closed loop, wrk -t$WRK_THREADS, ${DURATION}s per run, median of $REPS interleaved runs)" >>"$REPORT"
  echo >>"$REPORT"
  echo "| path | connections | requests/s | p50 ms | p99 ms | errors |" >>"$REPORT"
  echo "|---|---|---|---|---|---|" >>"$REPORT"
  declare -A RPS L50 L99 ERR PEAK
  for rep in $(seq 1 "$REPS"); do
    for c in 16 64; do
      for target in direct nginx gateway; do
        read -r rps p50 p99 err < <(run_wrk "$(url_of $target)" "$c" 0)
        RPS[$target,$c]="${RPS[$target,$c]:-} $rps"; L50[$target,$c]="${L50[$target,$c]:-} $p50"
        L99[$target,$c]="${L99[$target,$c]:-} $p99"; ERR[$target,$c]=$(( ${ERR[$target,$c]:-0} + err ))
        echo "  run $rep: $target c=$c $rps/s p50 $p50 ms p99 $p99 ms" >&2
      done
    done
  done
  for target in direct nginx gateway; do
    PEAK[$target]=0
    for c in 16 64; do
      rps=$(median ${RPS[$target,$c]}); rps=${rps%.*}
      echo "| $target | $c | $rps | $(median ${L50[$target,$c]}) | $(median ${L99[$target,$c]}) | ${ERR[$target,$c]} |" >>"$REPORT"
      if [ "$rps" -gt "${PEAK[$target]}" ]; then PEAK[$target]=$rps; fi
    done
  done
  echo >>"$REPORT"
  echo "Gateway peak ${PEAK[gateway]} requests/s; nginx peak ${PEAK[nginx]} requests/s; ratio" \
    "$(python3 -c "print(f'{${PEAK[gateway]}/${PEAK[nginx]}:.2f}')")." >>"$REPORT"
  echo >>"$REPORT"
  echo "## Latency at fixed rates (Poisson arrivals over 16 connections, paced by wrk's delay(); median of $REPS interleaved runs)" >>"$REPORT"
  echo >>"$REPORT"
  echo "| rate (share of gateway peak) | path | achieved requests/s | p50 ms | p99 ms | added p50 ms | added p99 ms | errors |" >>"$REPORT"
  echo "|---|---|---|---|---|---|---|---|" >>"$REPORT"
  for share in 25 50 75; do
    rate=$(( PEAK[gateway] * share / 100 ))
    # rate 0 would make the paced runs closed loop
    if [ "$rate" -le 0 ]; then echo "no gateway peak measured; see $WORK/gateway.log" >&2; exit 1; fi
    # One p99 of one 10 s run moves by milliseconds on a shared machine: each path is run REPS times, interleaved
    # with the others, and the medians are compared.
    declare -A PR P50 P99 PE
    for target in direct nginx gateway; do PR[$target]=""; P50[$target]=""; P99[$target]=""; PE[$target]=0; done
    for rep in $(seq 1 "$REPS"); do
      for target in direct nginx gateway; do
        read -r rps p50 p99 err < <(run_wrk "$(url_of $target)" 16 "$rate")
        PR[$target]="${PR[$target]} $rps"; P50[$target]="${P50[$target]} $p50"; P99[$target]="${P99[$target]} $p99"
        PE[$target]=$(( PE[$target] + err ))
        echo "  $share% run $rep: $target $rps/s p50 $p50 p99 $p99" >&2
      done
    done
    for target in direct nginx gateway; do
      rps=$(median ${PR[$target]}); rps=${rps%.*}; p50=$(median ${P50[$target]}); p99=$(median ${P99[$target]})
      if [ "$target" = direct ]; then
        d50=$p50; d99=$p99
        echo "| $rate/s ($share%) | $target | $rps | $p50 | $p99 | | | ${PE[$target]} |" >>"$REPORT"
      else
        a50=$(python3 -c "print(f'{$p50-$d50:.3f}')"); a99=$(python3 -c "print(f'{$p99-$d99:.3f}')")
        echo "| $rate/s ($share%) | $target | $rps | $p50 | $p99 | $a50 | $a99 | ${PE[$target]} |" >>"$REPORT"
      fi
    done
  done
  echo >>"$REPORT"
  stop_pid "$GATEWAY_PID"; kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true; rm -f "$WORK/nginx.pid"; stop_pid "$SIMS_PID"
fi

if [[ " $PHASES " == *" streams "* ]]; then
  per_server=$(( (STREAMS + 2) / 3 + 64 ))
  start_sims --time-scale "${SIM_TIME_SCALE:-0.01}" --output-tokens 64 --max-num-seqs "$per_server" --gpu-blocks $(( per_server * 16 ))
  # The simulators accept with Java's default listen backlog (50): a burst of thousands of new connections
  # waits on SYN retransmissions, hence the long connect timeout.
  GATEWAY_JAVA_OPTS="${STREAM_JAVA_OPTS:--Xms512m -Xmx3g}" start_gateway --queue 0 --max-streams 2000 \
    --connect-timeout 60s --first-token-timeout 900s --idle-timeout 900s
  echo "$BODY" | sed 's/"max_tokens":16,/"stream":true,/' >"$WORK/stream.json"
  conns=10
  per_conn=$(( (STREAMS + conns - 1) / conns ))
  h2load -c "$conns" -m "$per_conn" -n "$STREAMS" -t 2 -d "$WORK/stream.json" \
    -H 'content-type: application/json' "$GATEWAY_URL/v1/chat/completions" >"$WORK/h2load.txt" 2>&1 &
  H2_PID=$!
  PIDS+=("$H2_PID")
  max_open=0; rss_at_max=0; samples="$WORK/samples.txt"; : >"$samples"
  for t in $(seq 1 240); do
    sleep 1
    open=$(curl -s "$GATEWAY_URL/metrics" | awk '/^kinference_gateway_active_requests /{print $2}')
    open=${open%.*}; open=${open:-0}
    rss=$(awk '/VmRSS/{print $2}' "/proc/$GATEWAY_JAVA_PID/status" 2>/dev/null || echo 0)
    echo "$t $open $rss" >>"$samples"
    if [ "$open" -gt "$max_open" ]; then
      max_open=$open; rss_at_max=$rss
      # heap in use at the peak, after a full collection, as jcmd reports it
      HEAP=$(jcmd "$GATEWAY_JAVA_PID" GC.heap_info 2>/dev/null | awk '/used/{print; exit}' | sed 's/^ *//' || true)
    fi
    if ! kill -0 "$H2_PID" 2>/dev/null; then break; fi
    if [ "$max_open" -ge "$STREAMS" ] && [ "$t" -gt 30 ]; then break; fi
  done
  kill -INT "$H2_PID" 2>/dev/null || true
  sleep 1
  curl -s "$GATEWAY_URL/metrics" >"$OUT/streams-gateway-metrics.txt" || true
  cp "$WORK/h2load.txt" "$OUT/streams-h2load.txt" 2>/dev/null || true
  tail -50 "$WORK/sims.log" >"$OUT/streams-sims-log.txt" 2>/dev/null || true
  grep -v " status=200 " "$WORK/gateway.log" | tail -200 >"$OUT/streams-gateway-log.txt" 2>/dev/null || true
  fds=$(ls "/proc/$GATEWAY_JAVA_PID/fd" 2>/dev/null | wc -l)
  {
    echo "## Concurrent streams (h2load: $conns h2c connections x $per_conn streams, simulators streaming at time scale ${SIM_TIME_SCALE:-0.01})"
    echo
    echo "Most open requests held by the gateway at once: **$max_open** of $STREAMS (resident memory then:" \
      "$(( rss_at_max / 1024 )) MiB; heap then: ${HEAP:-n/a})."
    echo "Errors recorded by the gateway: $(grep '^kinference_gateway_errors_total' "$OUT/streams-gateway-metrics.txt" | tr '\n' ' ')"
    echo "Gateway file descriptors at the end of sampling: $fds."
    echo
    echo "Samples (second, open requests, RSS KiB): $(tr '\n' ';' <"$samples" | head -c 2000)"
    echo
  } | tee -a "$REPORT"
  stop_pid "$GATEWAY_PID"; stop_pid "$SIMS_PID"
fi

echo "Report: $REPORT"
