"""Paired comparisons over seeds: the one home of the bench scripts' statistics.

A seed gives every router the same workload, so two routers' results on one seed form a pair, and the spread of
the per-seed differences, not each router's own spread, decides whether one is ahead. This module computes, for
such differences, the mean, the standard deviation and a Student-t confidence interval (95% unless told), and
words the verdicts the scripts print: "ahead" / "level" / "behind" (bench/paired-seeds.py) and "met" / "missed" /
"undecided" against a largest allowed loss (bench/replicas-seeds.py).

Standard library only, so the scripts run on any python3 (3.8 or later) without installing anything: Python's
`statistics` has no t distribution, so the t quantile is computed here, exactly for the integer degrees of freedom
a paired interval has (from the finite series of the t distribution's CDF for integer degrees of freedom,
Abramowitz & Stegun 26.7.3-4, inverted by bisection); tested against published t tables and a textbook paired
example in test_paired_stats.py. Pure functions on immutable values: safe from any thread.
"""
import math
import statistics
from typing import NamedTuple, Sequence

__all__ = ["NotEnoughSeeds", "PairedInterval", "paired_interval", "t_quantile", "relative_changes",
           "AHEAD", "LEVEL", "BEHIND", "MET", "MISSED", "UNDECIDED"]

AHEAD, LEVEL, BEHIND = "ahead", "level", "behind"
MET, MISSED, UNDECIDED = "met", "missed", "undecided"


class NotEnoughSeeds(ValueError):
    """Fewer than two paired values: no spread, so no interval."""


class PairedInterval(NamedTuple):
    """The mean of n paired differences and its two-sided Student-t interval at `confidence`.

    With zero spread (every seed gave the same difference) the interval is the single point `mean`: the t interval
    says nothing more there, and `same_everywhere` lets a report say so instead of printing a bare zero-width range.
    """
    n: int
    mean: float
    sd: float
    low: float
    high: float
    confidence: float

    @property
    def same_everywhere(self) -> bool:
        return self.sd == 0.0

    def verdict(self) -> str:
        """"ahead" when the interval lies above 0, "behind" when below, "level" when it contains 0."""
        return AHEAD if self.low > 0 else BEHIND if self.high < 0 else LEVEL

    def against_largest_loss(self, target: float) -> str:
        """For differences in percent of a baseline: "met" when the largest loss the interval admits (its lower end)
        is smaller than `target` percent, "missed" when even its upper end loses more, "undecided" otherwise."""
        if not target > 0:
            raise ValueError(f"the largest allowed loss must be a positive percentage: {target}")
        return MET if self.low > -target else MISSED if self.high < -target else UNDECIDED


def paired_interval(differences: Sequence[float], confidence: float = 0.95) -> PairedInterval:
    """The mean of `differences` (one per seed) with its two-sided Student-t interval; NotEnoughSeeds below two."""
    values = [float(d) for d in differences]
    if len(values) < 2:
        raise NotEnoughSeeds(f"a paired interval needs at least 2 seeds' differences, got {len(values)}")
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"paired differences must be finite numbers: {values}")
    n = len(values)
    mean = statistics.fmean(values)
    sd = statistics.stdev(values, mean)
    half = t_quantile((1 + confidence) / 2, n - 1) * sd / math.sqrt(n)
    return PairedInterval(n, mean, sd, mean - half, mean + half, confidence)


def relative_changes(values: Sequence[float], baselines: Sequence[float]) -> list:
    """100 * (value / baseline - 1) per pair, in percent; a clear error for unequal lengths or a zero baseline."""
    if len(values) != len(baselines):
        raise ValueError(f"{len(values)} values against {len(baselines)} baselines: pairs must match seed by seed")
    if any(b == 0 for b in baselines):
        raise ValueError("a baseline of 0 has no relative change (a run with zero goodput?)")
    return [100.0 * (v / b - 1.0) for v, b in zip(values, baselines)]


def t_quantile(p: float, df: int) -> float:
    """The p quantile (0.5 < p < 1) of Student's t with `df` (a positive integer) degrees of freedom.

    Costs about 60 evaluations of a series of df/2 terms: milliseconds up to thousands of seeds.
    """
    if isinstance(df, bool) or int(df) != df or df < 1:
        raise ValueError(f"degrees of freedom must be a positive integer: {df}")
    if not 0.5 < p < 1:
        raise ValueError(f"the quantile's probability must lie in (0.5, 1): {p}")
    df = int(df)
    inside = 2 * p - 1  # P(|T| < t) at the wanted t
    high = 1.0
    while _probability_within(high, df) < inside:
        high *= 2
    low = 0.0
    for _ in range(200):  # bisection; stops once the bracket can no longer shrink in floating point
        mid = (low + high) / 2
        if mid in (low, high):
            break
        if _probability_within(mid, df) < inside:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def _probability_within(t: float, df: int) -> float:
    """P(|T| < t) for t >= 0: for integer df the CDF is a finite series in cos(theta), theta = atan(t / sqrt(df))."""
    theta = math.atan(t / math.sqrt(df))
    sin, cos = math.sin(theta), math.cos(theta)
    cos2 = cos * cos
    if df % 2 == 0:  # sin(theta) * (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ... up to cos^(df-2))
        term = total = 1.0
        for k in range(1, df // 2):
            term *= (2 * k - 1) / (2 * k) * cos2
            total += term
        return sin * total
    if df == 1:
        return 2 * theta / math.pi
    # odd df: 2/pi * (theta + sin(theta) * (cos + 2/3 cos^3 + 2*4/(3*5) cos^5 + ... up to cos^(df-2)))
    term = total = cos
    for k in range(2, (df + 1) // 2):
        term *= (2 * k - 2) / (2 * k - 1) * cos2
        total += term
    return 2 / math.pi * (theta + sin * total)

