#!/usr/bin/env python3
"""Tests of bench/paired_stats.py and of the two scripts that use it (bench/paired-seeds.py, bench/replicas-seeds.py)
with bench/seed_runs.py's per-seed layout.

Run from anywhere: `python3 bench/test_paired_stats.py` (standard library only; about a second). The Maven build runs
it too (kinference-cli's BenchScriptsTest), so `./mvnw verify` covers the scripts.

Expected values come from outside this module: t quantiles from the closed forms for 1 and 2 degrees of freedom and
from published two-sided t tables (3 decimals), and the paired interval of Student's own sleep data (Cushny and
Peebles; R's `t.test(extra ~ group, data = sleep, paired = TRUE)` prints the 95% interval -2.4598858 .. -0.7001142
for group 1 minus group 2).
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest
from statistics import NormalDist

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
import paired_stats  # noqa: E402
from paired_stats import NotEnoughSeeds, paired_interval, relative_changes, t_quantile  # noqa: E402

# Student's sleep data: extra hours of sleep of 10 patients under drug 2 minus drug 1
SLEEP_DIFFERENCES = [1.2, 2.4, 1.3, 1.3, 0.0, 1.0, 1.8, 0.8, 4.6, 1.4]


class TQuantileTest(unittest.TestCase):

    def test_one_and_two_degrees_of_freedom_match_their_closed_forms(self):
        # df 1 is the Cauchy distribution: t = tan(pi (p - 1/2)); df 2: t = (2p - 1) sqrt(2 / (1 - (2p - 1)^2))
        for p in (0.9, 0.95, 0.975, 0.995):
            self.assertAlmostEqual(t_quantile(p, 1), math.tan(math.pi * (p - 0.5)), places=9)
            a = 2 * p - 1
            self.assertAlmostEqual(t_quantile(p, 2), a * math.sqrt(2 / (1 - a * a)), places=9)

    def test_small_and_large_degrees_of_freedom_match_the_published_table(self):
        table_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 9: 2.262, 10: 2.228, 19: 2.093,
                     29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}
        for df, expected in table_975.items():
            self.assertAlmostEqual(t_quantile(0.975, df), expected, delta=0.0005, msg=f"df={df}")
        # other levels, from the same tables: one-sided 95% and two-sided 99%
        self.assertAlmostEqual(t_quantile(0.95, 9), 1.833, delta=0.0005)
        self.assertAlmostEqual(t_quantile(0.995, 9), 3.250, delta=0.0005)
        self.assertAlmostEqual(t_quantile(0.995, 60), 2.660, delta=0.0005)

    def test_untabled_degrees_of_freedom_lie_between_their_tabled_neighbours(self):
        # a table's nearest-row lookup would give 2.021 for df 59; the exact value is just above 2.000
        self.assertTrue(2.000 < t_quantile(0.975, 59) < 2.0015)
        quantiles = [t_quantile(0.975, df) for df in range(1, 200)]
        self.assertEqual(quantiles, sorted(quantiles, reverse=True), "t quantiles fall as df grows")

    def test_very_large_degrees_of_freedom_follow_fishers_expansion_around_the_normal_quantile(self):
        z = NormalDist().inv_cdf(0.975)  # 1.959964
        for df in (1000, 20000):
            # Fisher's expansion: t = z + (z^3 + z) / (4 df) + (5 z^5 + 16 z^3 + 3 z) / (96 df^2) + O(df^-3)
            expansion = z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
            self.assertAlmostEqual(t_quantile(0.975, df), expansion, delta=1e-7, msg=f"df={df}")
        self.assertAlmostEqual(t_quantile(0.975, 1000), 1.962339, places=6)

    def test_bad_arguments_are_refused_with_a_message(self):
        for df in (0, -3, 2.5, True):
            with self.assertRaisesRegex(ValueError, "positive integer"):
                t_quantile(0.975, df)
        for p in (0.5, 1.0, 0.2, 1.5):
            with self.assertRaisesRegex(ValueError, r"\(0.5, 1\)"):
                t_quantile(p, 5)


class PairedIntervalTest(unittest.TestCase):

    def test_students_sleep_data_gives_rs_paired_interval(self):
        paired = paired_interval(SLEEP_DIFFERENCES)
        self.assertEqual(paired.n, 10)
        self.assertAlmostEqual(paired.mean, 1.58, places=12)
        self.assertAlmostEqual(paired.sd, 1.2299955, places=6)
        self.assertAlmostEqual(paired.low, 0.7001142, places=6)
        self.assertAlmostEqual(paired.high, 2.4598858, places=6)
        self.assertEqual(paired.verdict(), "ahead")
        self.assertEqual(paired_interval([-d for d in SLEEP_DIFFERENCES]).verdict(), "behind")

    def test_two_and_three_seeds_use_one_and_two_degrees_of_freedom(self):
        two = paired_interval([1.0, 3.0])  # mean 2, sd sqrt(2): half width t(0.975, 1) * sqrt(2) / sqrt(2)
        self.assertAlmostEqual(two.low, 2 - 12.7062047, places=6)
        self.assertAlmostEqual(two.high, 2 + 12.7062047, places=6)
        self.assertEqual(two.verdict(), "level")
        three = paired_interval([1.0, 2.0, 3.0])  # mean 2, sd 1: half width t(0.975, 2) / sqrt(3) = 2.48
        self.assertAlmostEqual(three.high - three.mean, 4.3026527 / math.sqrt(3), places=6)
        self.assertEqual(three.verdict(), "level")
        self.assertEqual(paired_interval([2.0, 3.0, 4.0]).verdict(), "ahead")  # low end 0.52

    def test_other_confidence_levels(self):
        paired = paired_interval(SLEEP_DIFFERENCES, confidence=0.99)
        self.assertAlmostEqual(paired.high - paired.mean, 3.2498355 * paired.sd / math.sqrt(10), places=6)

    def test_fewer_than_two_seeds_is_a_clear_error(self):
        for values in ([], [4.2]):
            with self.assertRaisesRegex(NotEnoughSeeds, f"at least 2 seeds' differences, got {len(values)}"):
                paired_interval(values)
        self.assertTrue(issubclass(NotEnoughSeeds, ValueError))

    def test_non_finite_differences_are_refused(self):
        with self.assertRaisesRegex(ValueError, "finite"):
            paired_interval([1.0, float("nan"), 2.0])

    def test_zero_spread_is_a_single_point_that_says_so(self):
        level = paired_interval([0.0] * 5)
        self.assertEqual((level.low, level.high, level.sd), (0.0, 0.0, 0.0))
        self.assertTrue(level.same_everywhere)
        self.assertEqual(level.verdict(), "level")
        ahead = paired_interval([2.5, 2.5, 2.5])
        self.assertEqual((ahead.low, ahead.high), (2.5, 2.5))
        self.assertEqual(ahead.verdict(), "ahead")
        self.assertFalse(paired_interval(SLEEP_DIFFERENCES).same_everywhere)

    def test_the_largest_loss_target(self):
        def interval(low, high):
            return paired_stats.PairedInterval(10, (low + high) / 2, 1.0, low, high, 0.95)
        self.assertEqual(interval(-2.9, 1.0).against_largest_loss(3), "met")
        self.assertEqual(interval(-3.0, 1.0).against_largest_loss(3), "undecided")  # admits a 3.0% loss: not above
        self.assertEqual(interval(-5.0, -3.1).against_largest_loss(3), "missed")
        self.assertEqual(interval(-5.0, 0.0).against_largest_loss(3), "undecided")
        with self.assertRaisesRegex(ValueError, "positive percentage"):
            interval(-1, 1).against_largest_loss(0)

    def test_relative_changes(self):
        self.assertEqual(relative_changes([110.0, 90.0], [100.0, 100.0]), [10.000000000000009, -9.999999999999998])
        with self.assertRaisesRegex(ValueError, "baseline of 0"):
            relative_changes([1.0, 2.0], [1.0, 0.0])
        with self.assertRaisesRegex(ValueError, "seed by seed"):
            relative_changes([1.0, 2.0], [1.0])


def run_script(*args, cwd):
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=60)


class ScriptsTest(unittest.TestCase):
    """The scripts import the module from any working directory and print the module's figures."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def test_both_scripts_help_runs_from_another_directory_and_from_bench(self):
        for cwd in (self.tmp.name, BENCH):
            for script, words in (("paired-seeds.py", "summarize"), ("replicas-seeds.py", "--analyze-only")):
                done = run_script(os.path.join(BENCH, script), "--help", cwd=cwd)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertIn(words, done.stdout)

    def write_paired_seeds_run(self, theirs_for_seed):
        """A `paired-seeds.py run` directory: seed-S/x.json with ours and one comparison router at two loads."""
        for i, seed in enumerate(range(7000, 7000 + len(theirs_for_seed))):
            out = os.path.join(self.tmp.name, f"seed-{seed}")
            os.makedirs(out)
            theirs = theirs_for_seed[i]
            runs = [{"workload": "unique", "router": router, "load": load, "goodputPerMin": goodput}
                    for router, goodputs in (("ours-router", (100.0, 90.0)), ("other", (theirs, theirs - 5)))
                    for load, goodput in zip(("c=16", "c=32"), goodputs)]
            with open(os.path.join(out, "kinference-paper.json"), "w") as f:
                json.dump({"seed": seed, "ours": "ours-router", "runs": runs}, f)

    def test_paired_seeds_summarize_prints_the_sleep_data_interval(self):
        self.write_paired_seeds_run([100.0 - d for d in SLEEP_DIFFERENCES])
        done = run_script(os.path.join(BENCH, "paired-seeds.py"), "summarize", self.tmp.name, cwd=self.tmp.name)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "unique         other                n= 10 ours  100.0 theirs   98.4 "
                         "diff  +1.58 [ +0.70,  +2.46] ahead/behind on 9/0 seeds: ahead")

    def test_paired_seeds_summarize_says_when_every_seed_gave_the_same_difference(self):
        self.write_paired_seeds_run([100.0, 100.0, 100.0])
        done = run_script(os.path.join(BENCH, "paired-seeds.py"), "summarize", self.tmp.name, "--markdown",
                          cwd=BENCH)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("| +0.00 (+0.00 .. +0.00) | 0 / 0 | level (the same difference on every seed) |", done.stdout)

    def test_paired_seeds_with_one_seed_prints_no_row_and_bad_seeds_are_refused(self):
        self.write_paired_seeds_run([95.0])
        done = run_script(os.path.join(BENCH, "paired-seeds.py"), "summarize", self.tmp.name, cwd=self.tmp.name)
        self.assertEqual((done.returncode, done.stdout), (0, ""), done.stderr)
        done = run_script(os.path.join(BENCH, "paired-seeds.py"), "run", "--seeds", "7000-3", "--out",
                          os.path.join(self.tmp.name, "never"), "--", "--threads", "1", cwd=self.tmp.name)
        self.assertEqual(done.returncode, 1)
        self.assertIn("seeds must be BASE:COUNT (COUNT >= 1) or S1,S2,...: '7000-3'", done.stderr)
        self.assertNotIn("Traceback", done.stderr)

    def write_replicas_seed(self, seed, peaks):
        """A `replicas-seeds.py` seed: seed-S/kinference-paper.json and the bench's printed replicas table."""
        out = os.path.join(self.tmp.name, f"seed-{seed}")
        os.makedirs(out)
        runs = [{"workload": "unique", "router": f"kinference-precise@{replicas}", "load": load, "goodputPerMin": g}
                for replicas, goodput in peaks.items() for load, g in (("c=16", goodput), ("c=32", goodput - 1))]
        with open(os.path.join(out, "kinference-paper.json"), "w") as f:
            json.dump({"seed": seed, "ours": "kinference-precise", "runs": runs}, f)
        with open(out + ".txt", "w") as f:
            for replicas, goodput in peaks.items():
                f.write(f"unique    kinference-precise   {replicas}   {goodput:.1f}   0.0%   40.0%   40.0%   +0.0%\n")

    def replicas_summary(self, seeds):
        done = run_script(os.path.join(BENCH, "replicas-seeds.py"), "--analyze-only", "--seeds", str(seeds),
                          "--first-seed", "1", "--dir", self.tmp.name, "--workloads", "unique",
                          "--routers", "kinference-precise", cwd=self.tmp.name)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout.splitlines()

    def test_replicas_seeds_prints_the_paired_change_and_target(self):
        # one router 100 on every seed, three replicas 100 minus the sleep data's differences: changes in percent are
        # minus them; sharing replicas 100, so against independent ones 100 * d / (100 - d)
        for seed, d in enumerate(SLEEP_DIFFERENCES, start=1):
            self.write_replicas_seed(seed, {"1": 100.0, "3": 100.0 - d, "3s": 100.0})
        lines = self.replicas_summary(10)
        self.assertEqual(lines[3], "unique         kinference-precise     3    98.4    1.2   0.0%  40.0%   -1.6% "
                         "[  -2.5%,   -0.7%]    9/10     met      ")
        self.assertEqual(lines[4], "unique         kinference-precise    3s   100.0    0.0   0.0%  40.0%   +0.0% "
                         "[  +0.0%,   +0.0%]    0/10     met         vs @3: +1.6% [+0.7%, +2.5%]"
                         "   (the same change on every seed)")

    def test_replicas_seeds_pairs_by_seed_and_says_why_there_is_no_interval(self):
        self.write_replicas_seed(1, {"1": 100.0, "3": 0.0, "3s": 90.0})
        self.write_replicas_seed(2, {"1": 100.0, "3s": 95.0})  # no @3 row on this seed: @3 has one seed only
        lines = self.replicas_summary(2)
        self.assertIn("no interval: a paired interval needs at least 2 seeds' differences, got 1", lines[3])
        self.assertIn("-7.5% [ -39.3%,  +24.3%]", lines[4])  # @3s paired with @1 on both seeds
        self.assertIn("vs @3: no interval: a baseline of 0 has no relative change", lines[4])


if __name__ == "__main__":
    unittest.main()
