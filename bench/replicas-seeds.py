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

Seeds whose results are already in --dir are not run again, so an interrupted run resumes and --analyze-only only reads.

  bench/replicas-seeds.py --seeds 40                      # 40 seeds from 20250611, the section's command each
  bench/replicas-seeds.py --seeds 40 --analyze-only       # the table from what --dir holds
  bench/replicas-seeds.py --seeds 20 --workloads unique --routers kinference-precise --dir /tmp/u
  bench/replicas-seeds.py --seeds 100 --routers kinference-precise --concurrency 64,96,128 --dir bench-results/knee
                                                          # at the knee (the section's 16,32 stops below it)

Needs python3 (standard library only) and the repo's ./kinference launcher (JDK 25: JAVA_HOME).
"""
import argparse
import os
import re
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the modules beside this script, from any directory
import paired_stats  # noqa: E402
import seed_runs  # noqa: E402


def run_seed(args, seed):
    """Runs the bench for one seed unless it has a result; the wall seconds it took, or None."""
    bench_args = ["--scenario", args.scenario, "--router-replicas", str(args.replicas), "--routers", args.routers,
                  "--workloads", args.workloads, "--concurrency", args.concurrency, "--duration", str(args.duration),
                  "--threads", "1"]
    return seed_runs.run_seed(args.dir, seed, bench_args, ".txt", "replicas-seeds")


def read_seed(args, seed):
    """Peak goodput per (workload, router) over the load points; hit rate and herding from the printed table."""
    out = seed_runs.seed_dir(args.dir, seed)
    peak = {}
    _, _, runs = seed_runs.goodput_runs(os.path.join(out, f"{args.scenario}.json"))
    for workload, router, _, goodput in runs:
        peak[(workload, router)] = max(peak.get((workload, router), 0.0), goodput)
    table_rows = {}
    table = re.compile(r"^(\S+)\s+(\S+)\s+(\d+s?)\s+[\d.]+\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)%")
    with open(out + ".txt") as f:
        for line in f:
            m = table.match(line)
            if m:
                table_rows[(m.group(1), f"{m.group(2)}@{m.group(3)}")] = (float(m.group(4)), float(m.group(5)))
    return peak, table_rows


def paired_change(values, baselines):
    """The per-seed change 100 * (value / baseline - 1) over the seeds both {seed: peak} hold, its 95% interval and
    on how many seeds it was a loss; ValueError saying why when there is no interval (under 2 seeds, a zero peak)."""
    seeds = sorted(set(values) & set(baselines))
    change = paired_stats.relative_changes([values[s] for s in seeds], [baselines[s] for s in seeds])
    return paired_stats.paired_interval(change), sum(1 for c in change if c < 0)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=20, help="number of consecutive seeds (default 20)")
    p.add_argument("--first-seed", type=int, default=20250611, help="first seed (default 20250611, the scenario's)")
    p.add_argument("--dir", default=os.path.join(seed_runs.REPO, "bench-results", "replicas-seeds"),
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
    seeds = [s for s in seeds if seed_runs.has_result(args.dir, s, args.scenario)]
    if len(seeds) < 2:
        sys.exit(f"need at least 2 seeds' results in {args.dir}, found {len(seeds)}")

    peaks, hits, herds = defaultdict(dict), defaultdict(list), defaultdict(list)
    for seed in seeds:
        peak, table_rows = read_seed(args, seed)
        for k, v in peak.items():
            peaks[k][seed] = v
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
                g = list(peaks[key].values())
                mean = statistics.fmean(g)
                sd = f"{statistics.stdev(g, mean):6.1f}" if len(g) > 1 else f"{'-':>6}"
                shown = " ".join(f"{sum(v) / len(v):5.1f}%" if v else "     -" for v in (hits.get(key), herds.get(key)))
                if suffix == "1":
                    print(f"{workload:<14} {router:<20} {suffix:>3} {mean:7.1f} {sd} {shown}")
                    continue
                try:
                    paired, lost = paired_change(peaks[key], one)
                except ValueError as e:
                    print(f"{workload:<14} {router:<20} {suffix:>3} {mean:7.1f} {sd} {shown}  no interval: {e}")
                    continue
                verdict = paired.against_largest_loss(args.target)
                against_independent = ""
                if suffix.endswith("s") and (workload, f"{router}@{n}") in peaks:
                    try:
                        versus, _ = paired_change(peaks[key], peaks[(workload, f"{router}@{n}")])
                        against_independent = (f"   vs @{n}: {versus.mean:+.1f}% "
                                               f"[{versus.low:+.1f}%, {versus.high:+.1f}%]")
                    except ValueError as e:
                        against_independent = f"   vs @{n}: no interval: {e}"
                same = "   (the same change on every seed)" if paired.same_everywhere else ""
                print(f"{workload:<14} {router:<20} {suffix:>3} {mean:7.1f} {sd} {shown} "
                      f"{paired.mean:+6.1f}% [{paired.low:+6.1f}%, {paired.high:+6.1f}%] {lost:>4}/{paired.n:<5}  "
                      f"{verdict:<9}{against_independent}{same}")


if __name__ == "__main__":
    main()
