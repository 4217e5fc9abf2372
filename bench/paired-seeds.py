#!/usr/bin/env python3
"""Runs one `kinference bench` command once per seed and compares routers seed by seed.

A seed gives every router the same workload (the same clients, prompts and think times), so the difference between
two routers' goodput on one seed is a paired sample; the per-seed spread of a closed-loop run (10-35% between seed
sets) cancels out of it. This script:

  run        runs `./kinference bench BENCH-ARGS --seed S --repeat 1 --out DIR/seed-S` for each seed S (skipping
             seeds whose JSON exists, so an interrupted run resumes), one JVM per seed;
  summarize  reads DIR/seed-*/<scenario>.json (of one or more DIRs) and prints, per workload and comparison router: the peak goodput of
             ours and of that router (the best load point of the mean over seeds, as `--repeat N` reports it), the
             mean of the paired per-seed difference of each seed's own peak (ours minus theirs) with its 95%
             t-interval, and a verdict: "ahead" (interval above 0), "level" (interval contains 0), "behind" (below).

Examples (from the repository root):
  bench/paired-seeds.py run --seeds 7000:30 --out /tmp/kp -- --scenario kinference-paper --tenant-mix --threads 1
  bench/paired-seeds.py summarize /tmp/kp --markdown

Goodput is requests per minute that met the SLO, as in docs/BENCHMARKS.md. Only the standard library is needed
(the statistics are bench/paired_stats.py's, shared with bench/replicas-seeds.py).
"""
import argparse
import collections
import glob
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the modules beside this script, from any directory
import paired_stats  # noqa: E402
import seed_runs  # noqa: E402


def parse_seeds(text):
    """Seeds from "BASE:COUNT" (COUNT consecutive seeds from BASE) or "S1,S2,..."; exits saying the forms otherwise."""
    try:
        if ":" in text:
            base, count = text.split(":")
            if int(count) >= 1:
                return list(range(int(base), int(base) + int(count)))
        else:
            return [int(s) for s in text.split(",")]
    except ValueError:
        pass
    sys.exit(f"paired-seeds: seeds must be BASE:COUNT (COUNT >= 1) or S1,S2,...: {text!r}")


def run(args):
    bench_args = [a for a in args.bench_args if a != "--"]
    for bad in ("--seed", "--repeat", "--out"):
        if any(a == bad or a.startswith(bad + "=") for a in bench_args):
            sys.exit(f"paired-seeds: {bad} is set per seed by this script; leave it out of the bench arguments")
    seeds = parse_seeds(args.seeds)
    os.makedirs(args.out, exist_ok=True)
    for seed in seeds:
        if seed_runs.run_seed(args.out, seed, bench_args, ".log", "paired-seeds") is not None:
            print(f"seed {seed} done", flush=True)


def load(directories):
    """Per (workload, router): {seed: {load: goodput}}, over every seed directory of every given run."""
    goodput = collections.defaultdict(dict)
    ours = None
    paths = sorted(p for d in directories for p in glob.glob(os.path.join(d, "seed-*", "*.json")))
    if not paths:
        sys.exit(f"paired-seeds: no seed-*/*.json under {' '.join(directories)}")
    for path in paths:
        seed, ours, runs = seed_runs.goodput_runs(path)
        for workload, router, load, goodput_per_min in runs:
            by_load = goodput[(workload, router)].setdefault(seed, {})
            if load in by_load and by_load[load] != goodput_per_min:
                sys.exit(f"paired-seeds: seed {seed} ran twice with different results ({path}): mixed setups?")
            by_load[load] = goodput_per_min
    return goodput, ours


def summarize(args):
    goodput, ours = load(args.dirs)
    ours = args.ours or ours
    workloads = list(dict.fromkeys(w for w, _ in goodput))
    rows = []
    for workload in workloads:
        mine = goodput.get((workload, ours))
        if not mine:
            continue
        for (w, router), theirs in goodput.items():
            if w != workload or router == ours or (args.routers and router not in args.routers.split(",")):
                continue
            seeds = sorted(set(mine) & set(theirs))
            if len(seeds) < 2:
                continue
            diffs = [max(mine[s].values()) - max(theirs[s].values()) for s in seeds]
            paired = paired_stats.paired_interval(diffs)
            verdict = paired.verdict() + (" (the same difference on every seed)" if paired.same_everywhere else "")
            rows.append((workload, router, len(seeds), merged_peak(mine, seeds), merged_peak(theirs, seeds),
                         paired.mean, paired.low, paired.high, verdict,
                         sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)))
    rows.sort(key=lambda r: (workloads.index(r[0]), -r[4]))
    if args.markdown:
        print(f"| workload | comparison router | seeds | {ours} peak | its peak | ours - its, per seed "
              "(95% interval) | ours ahead / behind on | verdict |")
        print("|---|---|---|---|---|---|---|---|")
        for w, router, n, mp, tp, mean, lo, hi, verdict, up, down in rows:
            print(f"| {w} | {router} | {n} | {mp:.1f} | {tp:.1f} | {mean:+.2f} ({lo:+.2f} .. {hi:+.2f}) | "
                  f"{up} / {down} | {verdict} |")
    else:
        for w, router, n, mp, tp, mean, lo, hi, verdict, up, down in rows:
            print(f"{w:14} {router:20} n={n:3} ours {mp:6.1f} theirs {tp:6.1f} diff {mean:+6.2f} "
                  f"[{lo:+6.2f}, {hi:+6.2f}] ahead/behind on {up}/{down} seeds: {verdict}")


def merged_peak(by_seed, seeds):
    """The best load point of the mean over seeds: what `--repeat N` prints as the peak."""
    loads = set.intersection(*(set(by_seed[s]) for s in seeds))
    return max(statistics.fmean(by_seed[s][load] for s in seeds) for load in loads)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the bench command once per seed")
    r.add_argument("--seeds", required=True, help="BASE:COUNT (consecutive seeds) or S1,S2,...")
    r.add_argument("--out", required=True, help="directory for seed-S/ outputs and seed-S.log")
    r.add_argument("bench_args", nargs=argparse.REMAINDER, help="-- then the arguments of `kinference bench`")
    s = sub.add_parser("summarize", help="paired per-seed differences and 95%% t-intervals")
    s.add_argument("dirs", nargs="+", metavar="DIR", help="one or more `run --out` directories (seeds pooled)")
    s.add_argument("--ours", help="our router's name (default: the JSON's `ours`)")
    s.add_argument("--routers", help="only these comparison routers (comma-separated)")
    s.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args()
    run(args) if args.command == "run" else summarize(args)


if __name__ == "__main__":
    main()
