"""What a :class:`~oracledp.synth.TableSynthesizer` fit's budget affords, from public facts only.

``n`` (public under replace-one neighbours), the budget and the public domain decide the coarse
bins of gridded numeric columns (:func:`auto_bins`), the share of the budget their fine
histograms get (:func:`auto_fraction`), whether pairs are worth measuring (:func:`afford`) and
the split between the histograms and the method that never overspends in floating point
(:func:`_split_budget`, :class:`_Plan`; proof: docs/proofs/numeric-histograms.md).  Nothing here
reads a record.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from oracledp.synth._table import DEFAULT_BINS

__all__ = ["AUTO_BINS_SCALE", "MODEL_BINS", "NUMERIC_SHARE_RATIO", "PAIR_NOISE_LIMIT", "SHARED_NOISE_NOTE",
           "afford", "auto_bins", "auto_fraction"]


@dataclass(frozen=True)
class _Plan:
    """How a fit's budget is split between the fine numeric histograms and the method."""

    columns: int
    method_epsilon: float
    numeric_rho_each: float | None  # zCDP methods: each refined column's rho
    numeric_eps_each: float | None  # pure methods: each refined column's epsilon

    @property
    def numeric_rho(self) -> float:
        return math.fsum([self.numeric_rho_each or 0.0] * self.columns)

    def describe(self, names: list[str]) -> dict[str, Any]:
        """The public plan, as saved with the model."""
        out: dict[str, Any] = {"columns": names, "method_epsilon": self.method_epsilon}
        if self.numeric_rho_each is not None:
            out["rho_each"] = self.numeric_rho_each
        if self.numeric_eps_each is not None:
            out["epsilon_each"] = self.numeric_eps_each
        return out

    def guarantee(self, inner: Any, epsilon: float, names: list[str]) -> Any:
        """The release's guarantee: the method's composed with the histograms."""
        from dataclasses import replace

        if not self.columns:
            return inner
        if self.numeric_rho_each is not None:
            share = (f"{self.numeric_rho_each:.6g}-zCDP each; zCDP composition, Bun-Steinke "
                     "2016 Lemma 2.3, then Prop. 1.3 at the same delta")
        else:
            share = f"{self.numeric_eps_each:.6g}-DP each; basic composition"
        note = (f"the numeric columns {', '.join(names)} were also measured as private "
                f"hierarchical histograms at fine resolution ({share}); the method ran at "
                f"epsilon {self.method_epsilon:.6g}")
        notes = f"{inner.notes}; {note}" if inner.notes else note
        return replace(inner, epsilon=float(epsilon), notes=notes,
                       source=f"{inner.source} + private fine histograms of the numeric columns")


#: auto_bins: the coarse bins a gridded numeric column gets, ``sqrt(AUTO_BINS_SCALE n
#: sqrt(rho))`` rounded down, between 2 and :data:`~oracledp.synth._table.DEFAULT_BINS`.
AUTO_BINS_SCALE = 0.025


def auto_bins(n: int, rho: float) -> int:
    """The coarse bins per numeric column a budget affords, from public facts only: ``n``
    (public under replace-one neighbours) and the zCDP budget ``rho`` (``epsilon^2 / 2`` for
    the pure methods).  A 2-way table of two such columns has ``B^2`` cells, each measured
    with noise of standard deviation proportional to ``1 / sqrt(rho)``; its total noise
    relative to n stays about constant when ``B^2`` grows as ``n sqrt(rho)``.  The constant
    was calibrated on benchmarks/synth_health_panel.py (13,781 rows, epsilon 1: 6 bins).

    >>> auto_bins(13_781, 0.0128), auto_bins(1_629, 0.0164), auto_bins(10**6, 0.0128)
    (6, 2, 10)
    >>> auto_bins(1_000, math.inf)
    10
    """
    x = AUTO_BINS_SCALE * n * math.sqrt(max(rho, 0.0))
    if not x < (DEFAULT_BINS + 1) ** 2:  # also an infinite rho (a huge pure epsilon)
        return DEFAULT_BINS
    return max(2, min(DEFAULT_BINS, math.floor(math.sqrt(x))))


#: The coarse bins the default method's model holds for a numeric column whose count is the
#: budget's choice (:func:`auto_bins`) when that choice is smaller: its tables are then
#: candidates both on these bins and on the budget's, which are unions of them (OracleQueryPGM's
#: ``pair_resolution="select"``), so the selection pays for the finer table only where it
#: measures better.  Chosen with tuning seeds 100-102 (docs/results/synth-pair-resolution):
#: mean native 2-way TV on doctor_visits 0.0575 -> 0.0509 at epsilon 0.5 and 0.0394 -> 0.0326 at
#: 1 (16 bins: 0.0525 and 0.0354), health_insurance unchanged within noise (0.0327 -> 0.0322,
#: 0.0193 -> 0.0197), the health-panel stand-in at epsilon 1 (seeds 100-105) 0.0242 -> 0.0248
#: at the octiles and 0.0197 / 0.0269 / 0.0354 -> 0.0191 / 0.0252 / 0.0352 at 5 / 10 / 16
#: quantiles; the same 10 bins held *and measured* (``bins=10``) had cost the panel at every
#: resolution (docs/results/synth-bins-tried).
MODEL_BINS = DEFAULT_BINS

#: auto_fraction: where fewer than one attribute in NUMERIC_SHARE_RATIO is a refined numeric
#: column, the numeric histograms' share shrinks in proportion.
NUMERIC_SHARE_RATIO = 6


def auto_fraction(n: int, rho: float, *, columns: int, attributes: int) -> float:
    """The share of the budget the numeric histograms get, from public facts only.

    By the budget: 0.2 where ``n sqrt(rho)`` is at least 1,000 (a generous budget: the
    method's measurements need the rest), 0.5 where it is at most 250 (a small one: the
    columns' own distributions are then what a release can still get right), log-linear
    between.  Chosen with tuning seeds 100-102 on health_insurance and doctor_visits (``n
    sqrt(rho)`` about 250 at epsilon 0.1, 2,500 at 1), not the benchmark's seeds:
    docs/results/synth-native-tuning/, from benchmarks/synth_native.py --first-seed 100 with
    and without --set numeric_fraction=...

    By the table's shape: that share is multiplied by ``min(1, 6 columns / attributes)``
    (``columns`` refined numeric columns among the model's ``attributes``, the target
    included).  Every other attribute's 1-way table comes out of the method's share, so a
    few numeric columns among many others must not take half of the budget: on nhefs (2 of
    40 attributes, 1,629 records) the unscaled share left each categorical column's 1-way
    table a 200th of a numeric column's budget.  Chosen on nhefs with tuning seeds 100-102:
    shares of 0.05, 0.075 and 0.15 (ratios 1.7, 3 and 6) lowered the native 2-way TV alike
    (from 0.141 / 0.082 / 0.049 to about 0.12 / 0.07 / 0.046 at epsilon 0.5 / 1 / 2), and
    0.15 cost the two numeric columns' 1-way TV least.  Checked on seeds 103-105
    (docs/results/synth-numeric-share): 2-way TV 0.137 / 0.077 / 0.046 before, 0.112 /
    0.070 / 0.041 after; the 38 other columns' mean 1-way TV fell from 0.076 / 0.042 /
    0.022 to 0.058 / 0.035 / 0.017, and the two numeric columns' ranged 0.043-0.254
    instead of 0.027-0.148.  Where numeric columns are a sixth of the attributes or more
    (every other bundled table, and the tables the budget rule was tuned on) nothing
    changes.  Public: the refined columns and the attributes come from the schema and n.

    >>> auto_fraction(22_272, 1.25e-4, columns=5, attributes=12)
    0.5
    >>> auto_fraction(13_781, 0.0128, columns=5, attributes=12)
    0.2
    >>> auto_fraction(1_629, 0.0165, columns=2, attributes=40)
    0.15
    """
    if not (isinstance(columns, int) and isinstance(attributes, int)
            and 0 <= columns <= attributes and attributes >= 1):
        raise ValueError("auto_fraction needs 0 <= columns <= attributes, attributes >= 1")
    x = n * math.sqrt(max(rho, 0.0))
    if x >= 1000.0:
        by_budget = 0.2
    elif x <= 250.0:
        by_budget = 0.5
    else:
        by_budget = 0.5 - 0.3 * math.log(x / 250.0) / math.log(4.0)
    shape = min(1.0, NUMERIC_SHARE_RATIO * columns / attributes)
    return by_budget * shape


#: afford: above this total-variation noise, even one pair table measured with the method's
#: whole budget says nothing about the pair: the default method measures 1-way tables only.
PAIR_NOISE_LIMIT = 0.5

#: afford: from this total-variation noise of each column's 1-way table (the budget shared by
#: the 1-way tables alone) up, the summary says that weak dependence cannot be reproduced.
SHARED_NOISE_NOTE = 0.01

#: afford: from this total-variation noise of a column's own 1-way table (the budget shared
#: by the 1-way tables alone) up, the summary names the column: its distribution is mostly
#: noise at this budget (a 300-level column among five of 2,000 records at epsilon 1: about
#: 1).
WIDE_COLUMN_NOTE = 0.5


def afford(n: int, shape: Sequence[int], bins: int, *, columns: int, rho: float | None = None,
           epsilon: float | None = None, fallback: bool = True,
           names: Sequence[str] | None = None, pairs: bool = True) -> dict[str, Any]:
    """What a budget affords, from public facts only: ``n``, the method's budget (``rho`` for
    a zCDP method, Gaussian noise; ``epsilon`` for a pure one, Laplace noise: exactly one of
    them), an upper bound of the model domain's ``shape`` (one entry per attribute) and the
    coarse ``bins`` chosen for the ``columns`` numeric columns whose count is the budget's
    choice (the summary names the bins only where there are such columns).  ``fallback``:
    the method measures 1-way tables only when pairs are not worth measuring (the default
    method does).  ``pairs=False``: the method never measures a table of two or more columns
    (``independent``); the summary says so instead of the notes on pairs and dependence
    (that exact independent marginals may come closer than any release is always true of it:
    a new user read the note as news).

    Three figures of the expected total-variation noise of a raw measured table (half its
    expected l1 noise over n):

    * ``one_way_noise_tv``: one 1-way table of the median column, measured with the whole
      budget;
    * ``pair_noise_tv``: the same for one pair table of the smallest size; pairs are worth
      measuring only while it is at most :data:`PAIR_NOISE_LIMIT` (else ``one_way_only``).
      The smallest, not the median: one small pair table that is affordable is worth
      measuring however large the others are (a 20-cell pair beside a 250-level column's
      500-cell ones), and the default method's selection weighs each table's noise.  On
      biopsy at epsilon 0.5 (pairs of 20 to 100 cells), where the median had said 1-way
      only, the default's native 2-way TV fell from 0.3532 to 0.2926 (tuning seeds 100-105)
      and from 0.3586 to 0.3148 on seeds 106-117 (docs/results/synth-afford-smallest);
    * ``shared_one_way_noise_tv``: each median column's 1-way table when the budget is shared
      equally by the d attributes' 1-way tables alone, the least any model of every column
      must measure: sqrt(d) times the first for Gaussian noise (zCDP composes by sum of rho),
      d times for Laplace noise (epsilon composes by sum).  From :data:`SHARED_NOISE_NOTE`
      up the summary says that dependence between columns weaker than this cannot be
      reproduced, and that exact independent marginals of the real rows (not private) may
      come closer than any release.  On nhefs (40 attributes, 1,629 records) it is 0.052,
      0.026 and 0.013 at epsilon 0.5, 1 and 2 for the default method, where its native
      2-way TV was 0.112, 0.070 and 0.041 against 0.028 for those marginals (seeds 103-105,
      docs/results/synth-numeric-share).  On the five bundled tables at epsilon 0.1, 0.5, 1
      and 2, every cell where the default's 2-way TV was above the exact independent
      marginals' (docs/results/synth-rounded) gets this note or the 1-way-only one (biopsy
      at 0.1), and so do biopsy at 1 and 2 and titanic at 0.5, where it was below.

    ``widest_one_way_noise_tv``: the same shared figure for the widest column's own table;
    the summary names that column where it is wider than the median one and the figure is
    at least :data:`SHARED_NOISE_NOTE` (on a new user's 1,500 records, a 30-level city
    beside narrower columns at epsilon 1: about 0.21 against 0.021; every column tied for the
    widest is named).

    ``noisy_columns``: the attributes (their ``names``, else positions) whose own 1-way
    table, the budget shared as in the third figure, carries noise of at least
    :data:`WIDE_COLUMN_NOTE` in total variation, where the narrowest one's does not: columns
    of many levels for their n, whose distribution no release can reproduce at this budget;
    the summary names them (where every column is that noisy, a tiny table, the figures
    above say it).

    ``independent_note``: whether the summary says that exact independent marginals may come
    as close as a release or closer (the 1-way-only, shared-noise and ``pairs=False`` notes;
    never for one column), so that ``synth fit`` does not say it twice.

    A release measures more tables than these, which raises its noise; its fitting keeps
    counts nonnegative and sums to n, which trims noise larger than the counts: the figures
    are guides, not bounds.  Gaussian noise with sigma per cell (sigma = 1 / sqrt(rho):
    squared sensitivity 2) has expected absolute value ``sigma sqrt(2 / pi)``, Laplace noise
    of scale b (b = 2 / epsilon: l1 sensitivity 2) has ``b``.  A budget so small that it
    underflows (rho or epsilon not above 0 in floating point, or noise that overflows) is
    refused (ValueError) before any noise.

    >>> [afford(n, (2, 2, 3), 2, columns=0, rho=rho)["one_way_only"]
    ...  for n, rho in ((12, 0.04), (20_000, 0.01))]
    [True, False]
    >>> round(afford(1_629, (2,) * 40, 2, columns=2, rho=0.0165)["shared_one_way_noise_tv"], 3)
    0.024
    >>> round(afford(300, (5,) * 41, 2, columns=0, epsilon=0.9)["shared_one_way_noise_tv"], 2)
    0.76
    >>> afford(2_000, (300, 2, 3, 2), 2, columns=0, rho=0.0146,
    ...        names=["id", "a", "b", "y"])["noisy_columns"]
    ['id']
    """
    if rho is not None and epsilon is None:
        budget = float(rho)
        per_cell = math.sqrt(2.0 / math.pi) / math.sqrt(budget) if budget > 0 else math.inf
    elif epsilon is not None and rho is None:
        budget = float(epsilon)
        per_cell = 2.0 / budget if budget > 0 else math.inf
    else:
        raise ValueError("afford needs exactly one of rho (zCDP) and epsilon (pure)")
    per_cell /= 2.0 * max(n, 1)
    if not math.isfinite(per_cell):
        raise ValueError(
            f"the budget is too small to compute with: the method's "
            f"{'zCDP rho' if rho is not None else 'epsilon'} ({budget:.3g}) leaves noise "
            "beyond floating-point range; raise epsilon. Nothing was fitted")
    cols = sorted(int(s) for s in shape)
    one = cols[len(cols) // 2] * per_cell
    # the smallest pair table (the selection may pick it); one attribute: its 1-way table
    pair = min((a * b for i, a in enumerate(cols) for b in cols[i + 1:]), default=cols[0])
    pair *= per_cell
    spread = math.sqrt(len(cols)) if rho is not None else len(cols)
    shared = one * spread
    only = pair > PAIR_NOISE_LIMIT
    label = list(names) if names is not None else [str(j) for j in range(len(shape))]
    # named where some column is not that noisy (where every one is, a tiny table, the
    # figures above say it; the median is no guide: three wide columns of five are named)
    noisy = ([(label[j], int(k), int(k) * per_cell * spread) for j, k in enumerate(shape)
              if int(k) * per_cell * spread >= WIDE_COLUMN_NOTE]
             if cols[0] * per_cell * spread < WIDE_COLUMN_NOTE else [])

    def tv(x: float) -> str:
        return f"about {x:.2g}" if x < 1.0 else "1 or more (noise only)"

    cut = (f"{'a numeric column gets' if columns == 1 else f'{columns} numeric columns get'} "
           f"{bins} coarse bins for n and the budget (the model may hold more); "
           if columns else "")
    # the widest column, where it is wider than the median one: its own table's noise
    j_wide = max(range(len(shape)), key=lambda j: int(shape[j]))
    wide = int(shape[j_wide]) * per_cell * spread
    said = (f"n = {n:,} records: {cut}with the whole budget on it, the 1-way table of a "
            f"median column ({cols[len(cols) // 2]:,} levels) would carry noise of {tv(one)} "
            f"in total variation" + (f" and the smallest pair table {tv(pair)}" if pairs
                                     else "") + "; "
            f"with the budget shared by the {len(cols)} attributes' 1-way tables alone, each "
            f"would carry {tv(shared)}" + (" (a release measures more tables)" if pairs
                                           else ""))
    if len(cols) == 1:  # one column: no pair, no sharing (sweep 12's wording)
        said = (f"n = {n:,} records: {cut}with the whole budget on it, the table's one column "
                f"({cols[0]:,} levels) would carry noise of {tv(one)} in total variation")
    elif not pairs:
        said += ("; this method measures each column's 1-way table only and reproduces no "
                 "dependence between columns: exact independent marginals of the real rows "
                 "(not private; synth evaluate reports them) are the most it can approach")
    elif only:
        said += ("; pairs cannot be measured usefully at this budget"
                 + (": this method measures 1-way tables only" if fallback else "")
                 + ", and no method can be expected to beat independent marginals")
    elif shared >= SHARED_NOISE_NOTE:
        said += ("; columns that depend on each other less than that cannot be reproduced at "
                 "this budget: exact independent marginals of the real rows (not private; "
                 "synth evaluate reports them) may come closer than any release")
    tied = [label[j] for j in range(len(shape)) if int(shape[j]) == int(shape[j_wide])
            and not any(name == label[j] for name, _, _ in noisy)]
    if int(shape[j_wide]) > cols[len(cols) // 2] and wide >= SHARED_NOISE_NOTE and tied:
        names = ", ".join(repr(name) for name in tied[:5]) + (
            f" and {len(tied) - 5} more" if len(tied) > 5 else "")
        said += (f"; shared so, the widest column{'s' if len(tied) > 1 else ''}, {names} "
                 f"({int(shape[j_wide]):,} levels{' each' if len(tied) > 1 else ''}), "
                 f"would carry {tv(wide)}{' each' if len(tied) > 1 else ''}: "
                 f"{'its' if len(tied) == 1 else 'their'} levels' shares"
                 + (f", and {'its' if len(tied) == 1 else 'their'} pairs," if pairs else "")
                 + " are that much less certain")
    if noisy:
        which = ", ".join(f"{name!r} ({k:,} levels: {tv(x)})" for name, k, x in noisy[:5])
        which += f" and {len(noisy) - 5} more" if len(noisy) > 5 else ""
        said += (f"; shared so, the 1-way table of {which} would carry noise of "
                 f"{WIDE_COLUMN_NOTE:g} or more in total variation: "
                 f"{'its' if len(noisy) == 1 else 'their'} distribution is mostly noise at "
                 "this budget (merge levels, or leave the column out)")
    return {"coarse_bins": bins, "one_way_noise_tv": one, "pair_noise_tv": pair,
            "shared_one_way_noise_tv": shared, "widest_one_way_noise_tv": wide,
            "one_way_only": only,
            # the summary said that exact independent marginals may come as close or closer
            "independent_note": len(cols) > 1 and (not pairs or only
                                                   or shared >= SHARED_NOISE_NOTE),
            "noisy_columns": [name for name, _, _ in noisy], "summary": said}


def _level_sigma(levels: int, rho: float) -> float:
    """The Gaussian sigma of each of ``levels`` count tables (squared sensitivity 2: each
    ``1 / sigma^2``-zCDP) that spend at most ``rho`` together in exact arithmetic on the
    floats: ``sqrt(levels / rho)``, raised by ulps until ``levels / sigma^2 <= rho``."""
    from fractions import Fraction

    sigma = math.sqrt(levels / rho)
    while Fraction(levels) / Fraction(sigma) ** 2 > Fraction(rho):
        sigma = math.nextafter(sigma, math.inf)
    return sigma


def _level_scale(levels: int, epsilon: float) -> float:
    """The Laplace scale of each of ``levels`` count tables (l1 sensitivity 2: each
    ``2 / scale``-DP) that spend at most ``epsilon`` together, exactly (as
    :func:`_level_sigma`)."""
    from fractions import Fraction

    scale = 2.0 * levels / epsilon
    while 2 * Fraction(levels) / Fraction(scale) > Fraction(epsilon):
        scale = math.nextafter(scale, math.inf)
    return scale


def _split_budget(epsilon: float, delta: float, rho: float | None, fraction: float,
                  columns: int) -> _Plan:
    """``fraction`` of the budget to ``columns`` fine histograms (equal shares), the rest to
    the method, with floating point never overspending: zCDP methods, ``sum rho_j +
    zcdp_rho(method_epsilon, delta) <= zcdp_rho(epsilon, delta)``; pure methods, ``sum eps_j +
    method_epsilon <= epsilon``; both in exact arithmetic on the floats, the zCDP method's
    share shrunk by a relative 1e-9 more, as the sum of its rounds' rho may round up."""
    from fractions import Fraction

    from oracledp.privacy._composition import zcdp_epsilon, zcdp_rho

    if not columns:
        return _Plan(0, epsilon, None, None)
    if rho is not None:
        each = fraction * rho / columns
        eps2 = zcdp_epsilon((rho - columns * each) * (1.0 - 2e-9), delta)
        slack = 1 + Fraction(1, 10**9)  # for the method's own rounding of its rounds' sum
        while columns * Fraction(each) + Fraction(zcdp_rho(eps2, delta)) * slack > Fraction(rho):
            eps2 = math.nextafter(eps2, 0.0)
        return _Plan(columns, eps2, each, None)
    each = fraction * epsilon / columns
    eps2 = epsilon - columns * each
    while columns * Fraction(each) + Fraction(eps2) > Fraction(epsilon):
        eps2 = math.nextafter(eps2, 0.0)
    return _Plan(columns, eps2, None, each)
