"""One seed's run of `kinference bench` and what it leaves: the one home of the per-seed layout that
bench/paired-seeds.py and bench/replicas-seeds.py share.

Seed S of a run directory DIR has DIR/seed-S/ (the bench's --out: its JSON, CSV and HTML report) and beside it the
log of what the bench printed. A seed whose JSON is there is not run again, so an interrupted run resumes. Each seed
runs in its own JVM (`--repeat 1`), which also keeps a long sweep within the default heap. Standard library only.
"""
import glob
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def seed_dir(directory, seed):
    """Where seed `seed`'s bench output goes: DIR/seed-S."""
    return os.path.join(directory, f"seed-{seed}")


def has_result(directory, seed, scenario=None):
    """Whether seed `seed` left its JSON (the given scenario's, or any)."""
    return bool(glob.glob(os.path.join(seed_dir(directory, seed), f"{scenario or '*'}.json")))


def run_seed(directory, seed, bench_args, log_suffix, program):
    """Runs `./kinference bench BENCH_ARGS --no-progress --seed S --repeat 1 --out DIR/seed-S` with what it prints in
    DIR/seed-S<log_suffix>; its wall seconds, or None when the seed has a result already. Exits saying which seed
    failed and where its log is."""
    if has_result(directory, seed):
        return None
    out = seed_dir(directory, seed)
    command = [os.path.join(REPO, "kinference"), "bench", *bench_args, "--no-progress", "--seed", str(seed),
               "--repeat", "1", "--out", out]
    started = time.time()
    with open(out + log_suffix, "w") as log:
        code = subprocess.call(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    if code != 0:
        sys.exit(f"{program}: seed {seed} failed (exit {code}), see {out}{log_suffix}")
    return time.time() - started


def goodput_runs(path):
    """One bench JSON's seed, our router's name (None if absent) and its runs as (workload, router, load, goodput
    per minute) tuples."""
    with open(path) as f:
        data = json.load(f)
    runs = [(r["workload"], r["router"], r["load"], r["goodputPerMin"]) for r in data["runs"]]
    return data["seed"], data.get("ours"), runs
