#!/usr/bin/env python3
"""Router replicas over many seeds, compared seed by seed (paired).

Runs `kinference bench --router-replicas N` once per seed (`--seed S --repeat 1`, `--threads 1`), keeps each seed's
CSV and printed table under --dir, then reports per workload and router the mean peak goodput of one router (@1),
N independent replicas (@N) and N sharing replicas (@Ns), and the paired change of each against one router: the
per-seed relative difference 100 * (replicas / one - 1), its mean and the 95% t-interval over the seeds (sharing
replicas also against independent ones, "vs @N"), with the mean hit rate and herding the bench printed. The same
seed gives every router the same workload, so the pairs differ only by routing: one router's peak goodput on shared
prefixes ranges 129.5-159.0 requests/min over 100 seeds, while the paired change of replicas scatters far less.

A target "replicas lose at most T%" (--target) is called met when the interval's lower end (the largest loss the
data admit) is above -T, missed when its upper end is below -T, undecided otherwise.

Seeds whose CSV is already in --dir are not run again, so an interrupted run resumes and --analyze-only only reads.

  bench/replicas-seeds.py --seeds 40                      # 40 seeds from 20250611, the section's command each
  bench/replicas-seeds.py --seeds 40 --analyze-only       # the table from what --dir holds
  bench/replicas-seeds.py --seeds 20 --workloads unique --routers kinference-precise --dir /tmp/u
  bench/replicas-seeds.py --seeds 100 --routers kinference-precise --concurrency 64,96,128 --dir bench-results/knee
                                                          # at the knee (the section's 16,32 stops below it)

Needs python3 (standard library only) and the repo's ./kinference launcher (JDK 25: JAVA_HOME).
"""
import argparse
import csv
import math
import os
import re
import subprocess
import sys
import time
from collections import defaultdict

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def t_quantile(p, df):
    """Student's t quantile by bisection on the CDF (Simpson's rule on the density); enough for intervals."""
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)

    def density(x):
        return c * (1 + x * x / df) ** (-(df + 1) / 2)

    def cdf(t):  # t >= 0
        n = 2000
        h = t / n
        s = density(0) + density(t) + sum((4 if k % 2 else 2) * density(k * h) for k in range(1, n))
        return 0.5 + s * h / 3

    lo, hi = 0.0, 100.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if cdf(mid) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def run_seed(args, seed):
    out = os.path.join(args.dir, f"seed-{seed}")
    if os.path.exists(os.path.join(out, f"{args.scenario}.csv")):
        return None
    cmd = [os.path.join(REPO, "kinference"), "bench", "--scenario", args.scenario,
           "--router-replicas", str(args.replicas), "--routers", args.routers, "--workloads", args.workloads,
           "--concurrency", args.concurrency, "--duration", str(args.duration), "--threads", "1",
           "--seed", str(seed), "--repeat", "1", "--no-progress", "--out", out]
    started = time.time()
    with open(out + ".txt", "w") as log:
        code = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=REPO)
    if code != 0:
        sys.exit(f"seed {seed} failed (exit {code}); see {out}.txt")
    return time.time() - started


def read_seed(args, seed):
    """Peak goodput per (workload, router) over the load points; hit rate and herding from the printed table."""
    out = os.path.join(args.dir, f"seed-{seed}")
    peak = {}
    with open(os.path.join(out, f"{args.scenario}.csv")) as f:
        for row in csv.DictReader(f):
            key = (row["workload"], row["router"])
            peak[key] = max(peak.get(key, 0.0), float(row["goodput_per_min"]))
    table_rows = {}
    table = re.compile(r"^(\S+)\s+(\S+)\s+(\d+s?)\s+[\d.]+\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)%")
    with open(out + ".txt") as f:
        for line in f:
            m = table.match(line)
            if m:
                table_rows[(m.group(1), f"{m.group(2)}@{m.group(3)}")] = (float(m.group(4)), float(m.group(5)))
    return peak, table_rows


def interval(values):
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, float("nan"), float("nan")
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_quantile(0.975, n - 1) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=20, help="number of consecutive seeds (default 20)")
    p.add_argument("--first-seed", type=int, default=20250611, help="first seed (default 20250611, the scenario's)")
    p.add_argument("--dir", default=os.path.join(REPO, "bench-results", "replicas-seeds"),
                   help="where each seed's output goes (default bench-results/replicas-seeds, not committed)")
    p.add_argument("--scenario", default="kinference-paper", help="bench --scenario (default kinference-paper)")
    p.add_argument("--replicas", type=int, default=3, help="bench --router-replicas, at least 2 (default 3)")
    p.add_argument("--routers", default="kinference-precise,kinference-approx",
                   help="bench --routers, plain names (default kinference-precise,kinference-approx)")
    p.add_argument("--workloads", default="shared-prefix,multi-turn,unique",
                   help="bench --workloads (default shared-prefix,multi-turn,unique)")
    p.add_argument("--concurrency", default="16,32", help="bench --concurrency; the peak is taken over it (default 16,32)")
    p.add_argument("--duration", type=int, default=120, help="bench --duration, seconds measured (default 120)")
    p.add_argument("--target", type=float, default=3.0, help="largest loss allowed, percent (default 3)")
    p.add_argument("--analyze-only", action="store_true", help="run nothing; report the seeds found in --dir")
    args = p.parse_args()
    if args.seeds < 2:
        p.error(f"--seeds must be at least 2 for an interval: {args.seeds}")
    if args.replicas < 2:
        p.error(f"--replicas must be at least 2 (one router is the baseline): {args.replicas}")
    if args.duration < 1 or args.target <= 0:
        p.error("--duration and --target must be positive")
    os.makedirs(args.dir, exist_ok=True)

    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    if not args.analyze_only:
        for i, seed in enumerate(seeds):
            wall = run_seed(args, seed)
            if wall is not None:
                print(f"seed {seed} ({i + 1}/{len(seeds)}): {wall:.0f} s wall", file=sys.stderr, flush=True)
    seeds = [s for s in seeds if os.path.exists(os.path.join(args.dir, f"seed-{s}", f"{args.scenario}.csv"))]
    if len(seeds) < 2:
        sys.exit(f"need at least 2 seeds' results in {args.dir}, found {len(seeds)}")

    peaks, hits, herds = defaultdict(list), defaultdict(list), defaultdict(list)
    for seed in seeds:
        peak, table_rows = read_seed(args, seed)
        for k, v in peak.items():
            peaks[k].append(v)
        for k, (hit, herd) in table_rows.items():
            hits[k].append(hit)
            herds[k].append(herd)

    n = args.replicas
    print(f"{len(seeds)} seeds ({seeds[0]}-{seeds[-1]}), peak goodput per minute, paired against @1; "
          f"95% t-interval of the per-seed change; target: lose at most {args.target:g}%")
    print(f"{'workload':<14} {'router':<20} {'@':>3} {'mean':>7} {'sd':>6} {'hit':>6} {'herd':>6} "
          f"{'change':>7} {'95% interval':>17} {'seeds lost':>10}  target")
    for workload in args.workloads.split(","):
        for router in args.routers.split(","):
            one = peaks.get((workload, f"{router}@1"))
            if not one:
                continue
            for suffix in ("1", str(n), f"{n}s"):
                key = (workload, f"{router}@{suffix}")
                if key not in peaks:
                    continue
                g = peaks[key]
                mean = sum(g) / len(g)
                sd = math.sqrt(sum((v - mean) ** 2 for v in g) / (len(g) - 1))
                shown = " ".join(f"{sum(v) / len(v):5.1f}%" if v else "     -" for v in (hits.get(key), herds.get(key)))
                if suffix == "1":
                    print(f"{workload:<14} {router:<20} {suffix:>3} {mean:7.1f} {sd:6.1f} {shown}")
                    continue
                change = [100.0 * (r / o - 1.0) for r, o in zip(g, one)]
                m, lo, hi = interval(change)
                lost = sum(1 for c in change if c < 0)
                verdict = ("met" if lo > -args.target else "missed" if hi < -args.target else "undecided")
                against_independent = ""
                if suffix.endswith("s") and (workload, f"{router}@{n}") in peaks:
                    indep = peaks[(workload, f"{router}@{n}")]
                    m2, lo2, hi2 = interval([100.0 * (r / i - 1.0) for r, i in zip(g, indep)])
                    against_independent = f"   vs @{n}: {m2:+.1f}% [{lo2:+.1f}%, {hi2:+.1f}%]"
                print(f"{workload:<14} {router:<20} {suffix:>3} {mean:7.1f} {sd:6.1f} {shown} "
                      f"{m:+6.1f}% [{lo:+6.1f}%, {hi:+6.1f}%] {lost:>4}/{len(change):<5}  {verdict:<9}"
                      f"{against_independent}")


if __name__ == "__main__":
    main()
