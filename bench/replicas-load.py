#!/usr/bin/env python3
"""Closed-loop shared-prefix load over several gateway replicas, for bench/replicas-bench.sh.

Each of CONCURRENCY clients sends a streamed chat completion to a gateway drawn at random for every request (as a
Kubernetes Service spreads connections over replicas), waits for the whole answer and sends the next. A prompt is
one of GROUPS system prompts of about PREFIX tokens followed by a question of about QUESTION tokens of its own
(random words, as the simulated servers' tokenizer counts them). Measured are the requests sent between WARMUP and WARMUP + DURATION seconds:
goodput (requests per minute whose first token came within SLO seconds), TTFT median and p90 (a request that got no
first token by the end counts with the time it waited), and the prefix-cache hit rate the servers report
(vllm:prefix_cache_hits / vllm:prefix_cache_queries over the measured window, summed over the servers), and the
uncached prompt tokens the replicas count in the servers' prefill, their own and their peers' as shared through the
state store (kinference_gateway_endpoint_pending_prefill_tokens, summed over replicas and servers, mean of one sample
a second).

Prints one JSON object. Python 3 standard library only.
"""
import argparse
import http.client
import json
import random
import re
import statistics
import sys
import threading
import time
import urllib.parse
import urllib.request

WORDS = ["alpha", "river", "stone", "cloud", "engine", "market", "signal", "forest", "copper", "lantern",
         "harbor", "meadow", "vector", "garden", "thunder", "crystal"]


# The simulated servers' tokenizer makes about 1.18 tokens of each of these words (measured with /tokenize).
TOKENS_PER_WORD = 1.18


def words(rng, tokens):
    """About `tokens` tokens of random words: prompts of different seeds share no prefix beyond a block or two."""
    return " ".join(rng.choice(WORDS) for _ in range(max(1, round(tokens / TOKENS_PER_WORD))))


def scrape(urls):
    """Sum of vllm:prefix_cache_hits_total and vllm:prefix_cache_queries_total over the servers."""
    hits = queries = 0.0
    for u in urls:
        text = urllib.request.urlopen(u + "/metrics", timeout=10).read().decode()
        for line in text.splitlines():
            m = re.match(r"vllm:prefix_cache_(hits|queries)_total(\{[^}]*\})?\s+([0-9.eE+-]+)", line)
            if m:
                if m.group(1) == "hits":
                    hits += float(m.group(3))
                else:
                    queries += float(m.group(3))
    return hits, queries


def pending_prefill(urls):
    """Sum over the gateways and endpoints of kinference_gateway_endpoint_pending_prefill_tokens, by source."""
    out = {"own": 0.0, "peers": 0.0}
    for u in urls:
        try:
            text = urllib.request.urlopen(u + "/metrics", timeout=5).read().decode()
        except OSError:
            continue
        for line in text.splitlines():
            m = re.match(r'kinference_gateway_endpoint_pending_prefill_tokens\{[^}]*source="(own|peers)"[^}]*\}\s+'
                         r'([0-9.eE+-]+)', line)
            if m:
                out[m.group(1)] += float(m.group(2))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gateways", required=True, help="comma-separated base URLs of the gateway replicas")
    p.add_argument("--servers", required=True, help="comma-separated base URLs of the vLLM servers (for /metrics)")
    p.add_argument("--model", default="Qwen/Qwen3-8B")
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--warmup", type=float, default=30)
    p.add_argument("--duration", type=float, default=90)
    p.add_argument("--groups", type=int, default=16)
    p.add_argument("--prefix", type=int, default=6000)
    p.add_argument("--question", type=int, default=200)
    p.add_argument("--output", type=int, default=64)
    p.add_argument("--slo", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=20250611)
    a = p.parse_args()
    gateways = [urllib.parse.urlsplit(u) for u in a.gateways.split(",")]
    servers = a.servers.split(",")
    rng = random.Random(a.seed)
    prefixes = [f"You are assistant {g}. " + words(rng, a.prefix) for g in range(a.groups)]

    t0 = time.monotonic()
    start_measure, end_measure = t0 + a.warmup, t0 + a.warmup + a.duration
    records = []  # (sent, ttft or None, ok, prompt tokens, cached tokens)
    lock = threading.Lock()
    errors = []

    def client(i):
        r = random.Random(a.seed * 1000 + i)
        n = 0
        conns = {}
        while time.monotonic() < end_measure:
            g = r.randrange(a.groups)
            question = f"Question {n} of client {i}: " + words(r, a.question)
            n += 1
            body = json.dumps({"model": a.model, "stream": True, "stream_options": {"include_usage": True},
                               "max_tokens": a.output, "messages": [
                                   {"role": "system", "content": prefixes[g]},
                                   {"role": "user", "content": question}]})
            gw = r.choice(gateways)
            sent = time.monotonic()
            ttft = None
            ok = False
            prompt = cached = 0
            try:
                c = conns.get(gw.netloc)
                if c is None:
                    c = conns[gw.netloc] = http.client.HTTPConnection(gw.hostname, gw.port, timeout=300)
                c.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
                resp = c.getresponse()
                if resp.status != 200:
                    resp.read()
                    raise RuntimeError(f"HTTP {resp.status}")
                for raw in resp:
                    line = raw.strip()
                    if not line.startswith(b"data:"):
                        continue
                    data = line[5:].strip()
                    if data == b"[DONE]":
                        ok = True
                        continue
                    ev = json.loads(data)
                    if ttft is None and any((ch.get("delta") or {}).get("content") for ch in ev.get("choices") or []):
                        ttft = time.monotonic() - sent
                    u = ev.get("usage")
                    if u:
                        prompt = u.get("prompt_tokens") or 0
                        cached = ((u.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0
            except Exception as e:  # a failed request counts as not good; the connection is renewed
                conns.pop(gw.netloc, None)
                with lock:
                    errors.append(str(e))
            with lock:
                records.append((sent, ttft, ok, prompt, cached))

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(a.concurrency)]
    for t in threads:
        t.start()
    time.sleep(max(0.0, start_measure - time.monotonic()))
    h0, q0 = scrape(servers)
    # what the replicas count in the servers' prefill, own and shared, sampled every second of the measured window
    samples = []
    while time.monotonic() < end_measure - 1:
        samples.append(pending_prefill([g.geturl() for g in gateways]))
        time.sleep(1)
    time.sleep(max(0.0, end_measure - time.monotonic()))
    h1, q1 = scrape(servers)
    censor_at = time.monotonic() + 60  # requests still waiting for a first token after this are censored
    for t in threads:
        t.join(max(0.0, censor_at - time.monotonic()))
    now = time.monotonic()
    with lock:
        done = list(records)
        err = list(errors)
    measured = [r for r in done if start_measure <= r[0] < end_measure]
    # requests sent in the window but never recorded (still running at the censoring time)
    unfinished = sum(1 for t in threads if t.is_alive())
    ttfts = sorted([r[1] if r[1] is not None else now - r[0] for r in measured] + [now - end_measure] * unfinished)
    good = sum(1 for r in measured if r[2] and r[1] is not None and r[1] <= a.slo)
    out = {
        "gateways": len(gateways), "concurrency": a.concurrency, "duration_s": a.duration,
        "requests": len(measured) + unfinished, "finished": sum(1 for r in measured if r[2]),
        "goodput_per_min": round(good * 60 / a.duration, 1),
        "ttft_p50_s": round(statistics.median(ttfts), 3) if ttfts else None,
        "ttft_p90_s": round(ttfts[min(len(ttfts) - 1, int(0.9 * len(ttfts)))], 3) if ttfts else None,
        "hit_rate": round((h1 - h0) / (q1 - q0), 3) if q1 > q0 else None,
        "cached_share_usage": round(sum(r[4] for r in measured) / max(1, sum(r[3] for r in measured)), 3),
        "pending_prefill_own_mean": round(statistics.mean(x["own"] for x in samples)) if samples else None,
        "pending_prefill_peers_mean": round(statistics.mean(x["peers"] for x in samples)) if samples else None,
        "errors": len(err), "first_error": err[0] if err else None,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    sys.exit(main())
