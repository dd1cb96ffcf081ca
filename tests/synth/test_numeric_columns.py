"""Numeric columns at the data's own resolution (issue 38, item 2): the private fine
histograms of :mod:`oracledp.synth._numeric`, their accounting inside
:class:`~oracledp.synth.TableSynthesizer`, and what a fit does with them.

Proof: docs/proofs/numeric-histograms.md (with the four defects review found, each now tested
here: the missing level, add-remove neighbours, the last bits, option checks after the noise).
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import json
import math
import pathlib
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest

import oracledp.privacy._noise as noise_mod
import oracledp.synth._numeric as nm
import oracledp.synth._table_synthesizer as tsm
from oracledp import BudgetError
from oracledp.privacy import BudgetAccountant, zcdp_rho
from oracledp.synth import TableDomain, TableSynthesizer
from oracledp.synth._numeric import (
    BRANCHING,
    project_simplex,
    quantile_starts,
    tree_histogram,
    tree_levels,
)
from oracledp.synth._oracle_query_pgm import OracleQueryPGM
from oracledp.tabular import TableSchema
from oracledp.tabular._columns import Column

SIZES = (1, 2, 3, 4, 5, 17, 64, 366, 1024)


def _level_matrix(m: int, b: int) -> np.ndarray:
    """The measured nodes of the tree over m leaves (levels 1..L, leaves last) as 0/1 rows."""
    L = tree_levels(m, b)
    rows = []
    for level in range(1, L + 1):
        block = b ** (L - level)
        for s in range(0, m, block):
            r = np.zeros(m)
            r[s:s + block] = 1.0
            rows.append(r)
    return np.array(rows)


def _gls_operator(m: int, b: int) -> np.ndarray:
    """G with ``estimate - truth = G e`` for the least-squares estimate under ``sum = n``
    (no nonnegativity step), e the nodes' noise: minimise ``||A x - y||`` s.t. ``1'x = n``."""
    A = _level_matrix(m, b)
    M = A.T @ A
    Mi = np.linalg.inv(M)
    one = np.ones(m)
    Mi1 = Mi @ one
    return (np.eye(m) - np.outer(Mi1, one) / (one @ Mi1)) @ Mi @ A.T


class _NoiseLog:
    """Stands for ``oracledp.privacy._noise`` inside :mod:`oracledp.synth._numeric`: the
    same draws, recorded (kind, scale, size, draw)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, float, int, np.ndarray]] = []

    def gaussian(self, rng: np.random.Generator, sigma: float, size: Any = None) -> Any:
        out = noise_mod.gaussian(rng, sigma, size)
        self.calls.append(("gaussian", float(sigma), int(size), np.asarray(out)))
        return out

    def laplace(self, rng: np.random.Generator, scale: float, size: Any = None) -> Any:
        out = noise_mod.laplace(rng, scale, size)
        self.calls.append(("laplace", float(scale), int(size), np.asarray(out)))
        return out


class _FitLog:
    """Every tree_histogram call of a fit: its input counts and its noise calls."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, inner: Any = None) -> None:
        self.noise = _NoiseLog()
        self.columns: list[tuple[np.ndarray, list[tuple[str, float, int, np.ndarray]]]] = []
        inner = inner or tree_histogram

        self.outside: list[float | None] = []  # each call's count outside the leaves

        def logged(counts: Any, rng: np.random.Generator, **kw: Any) -> Any:
            start = len(self.noise.calls)
            out = inner(counts, rng, **kw)
            self.columns.append((np.asarray(counts, dtype=np.float64).copy(),
                                 self.noise.calls[start:]))
            self.outside.append(kw.get("outside"))
            return out

        monkeypatch.setattr(nm, "noise", self.noise)
        monkeypatch.setattr(nm, "tree_histogram", logged)


def _violations(ts: TableSynthesizer, log: _FitLog, epsilon: float, delta: float, *,
                exact: bool = False) -> list[str]:
    """The accounting of a fit read from the noise it actually drew (empty: it holds).

    Each refined column: one measurement per level 1..L of the tree over its m fine bins (the
    leaves' level included; with a missing level, each holds the missing count too), all
    with the same noise.  Replace-one moves a level's counts by
    one in at most two cells (squared l2 and l1 sensitivity 2), so a Gaussian level at sigma
    is exactly ``2 / (2 sigma^2)``-zCDP (Bun-Steinke Prop. 1.6: the privacy loss is
    N(Delta^2/(2 sigma^2), Delta^2/sigma^2)) and a Laplace level at scale b is ``2 / b``-DP.
    Their sum and the method's stated spend must fit in the fit's budget: ``exact``, in
    exact arithmetic on the floats used; else up to a relative 1e-12 (the last bits are
    test_the_budget_is_never_overspent_in_the_last_bits's).
    """
    out: list[str] = []
    hist = Fraction(0)
    for (counts, calls), outside in zip(log.columns, log.outside, strict=True):
        m = len(counts)
        L = tree_levels(m, BRANCHING)
        want = [-(-m // BRANCHING ** (L - level)) + (outside is not None)
                for level in range(1, L + 1)]
        if [c[2] for c in calls] != want:
            out.append(f"m={m}: measured level sizes {[c[2] for c in calls]}, want {want}")
        if len({(c[0], c[1]) for c in calls}) > 1:
            out.append(f"m={m}: the levels' noise differs: {[c[:2] for c in calls]}")
        for kind, scale, _, _ in calls:
            hist += (Fraction(2) / (2 * Fraction(scale) ** 2) if kind == "gaussian"
                     else Fraction(2) / Fraction(scale))
    inner = ts.synthesizer_
    if delta > 0:
        budget = Fraction(zcdp_rho(epsilon, delta))
        total = hist + Fraction(tsm._spent_rho(inner))
        what = "rho"
    else:
        budget = Fraction(epsilon)
        total = hist + Fraction(inner.guarantee_.epsilon)
        what = "epsilon"
    if total > (budget if exact else budget * (1 + Fraction(1, 10**12))):
        out.append(f"{what}: spent {float(total)!r} > budget {float(budget)!r}")
    if log.columns and not abs(hist - budget * Fraction(ts.numeric_["fraction"])) <= budget * 1e-9:
        out.append(f"the histograms spent {float(hist)!r}, not numeric_fraction of the budget")
    return out


# --- tables -----------------------------------------------------------------------------------


def _schema(extra: tuple[Column, ...] = (), missing: str | None = None) -> TableSchema:
    kw = {"missing": missing} if missing else {}
    cols = (Column("visits", "numeric", lower=0, upper=365, step=1, **kw),  # 366 grid points
            Column("region", "categorical", levels=("n", "s", "e", "w")), *extra)
    return TableSchema(cols, "y", ("no", "yes"))


def _table(n: int, seed: int = 0, kids: bool = False) -> pd.DataFrame:
    """visits is 0 in 91 % of the rows (in expectation), else uniform on 1..365."""
    rng = np.random.default_rng(seed)
    d = {"visits": np.where(rng.random(n) < 0.91, 0, rng.integers(1, 366, n)),
         "region": rng.choice(list("nsew"), n)}
    if kids:
        d["kids"] = rng.integers(0, 6, n)
    d["y"] = np.where(rng.random(n) < 0.3 + 0.4 * (d["visits"] > 0), "yes", "no")
    return pd.DataFrame(d)


KIDS = (Column("kids", "numeric", lower=0, upper=5, step=1),)  # 6 points <= 10 bins


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return _table(2000)


@pytest.fixture(scope="module")
def fitted(table: pd.DataFrame) -> TableSynthesizer:
    return TableSynthesizer("oracle-query-pgm", epsilon=1.0, random_state=0).fit(table, _schema())


# --- tree_histogram ---------------------------------------------------------------------------


@pytest.mark.parametrize("b", [2, 4])
@pytest.mark.parametrize("m", SIZES)
def test_tree_histogram_exact_without_noise_and_always_a_histogram(m: int, b: int) -> None:
    rng = np.random.default_rng(m * 10 + b)
    x = rng.integers(0, 50, m).astype(float) * (rng.random(m) < 0.6)  # zeros among the counts
    n = x.sum()
    for kw in ({"sigma": 1e-9}, {"laplace_scale": 1e-9}):
        est = tree_histogram(x, np.random.default_rng(1), branching=b, **kw)
        np.testing.assert_allclose(est, x, rtol=0, atol=1e-6)
    for seed in range(3):  # noise far larger than the counts: projections everywhere
        for kw in ({"sigma": 40.0}, {"laplace_scale": 30.0}):
            est = tree_histogram(x, np.random.default_rng(seed), branching=b, **kw)
            assert est.shape == (m,) and np.all(est >= 0)
            assert est.sum() == pytest.approx(n, rel=1e-12, abs=1e-9)
    assert not np.any(tree_histogram(np.zeros(m), np.random.default_rng(0), sigma=5.0,
                                     branching=b))


def test_tree_histogram_input_checks() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        tree_histogram(np.ones(4), np.random.default_rng(0))
    with pytest.raises(ValueError, match="exactly one"):
        tree_histogram(np.ones(4), np.random.default_rng(0), sigma=1.0, laplace_scale=1.0)
    assert [tree_levels(m, 4) for m in (1, 4, 5, 16, 17, 366, 1024)] == [1, 1, 2, 2, 3, 5, 5]
    assert [tree_levels(m, 2) for m in (1, 2, 3, 1024, 1025)] == [1, 1, 2, 10, 11]


@pytest.mark.parametrize(("m", "b"), [(1, 2), (2, 2), (3, 2), (5, 4), (17, 2), (17, 4),
                                      (64, 4), (366, 4)])
def test_tree_histogram_is_the_least_squares_estimate(m: int, b: int,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Counts far from 0 (no projection acts): the estimate is exactly the least-squares fit
    of the measured nodes, with the leaves' noise in it, under sum = n."""
    log = _NoiseLog()
    monkeypatch.setattr(nm, "noise", log)
    x = np.random.default_rng(m).integers(5000, 9000, m).astype(float)
    est = tree_histogram(x, np.random.default_rng(3), sigma=7.0, branching=b)
    e = np.concatenate([c[3] for c in log.calls])
    assert [c[2] for c in log.calls][-1] == m  # the leaves are measured
    np.testing.assert_allclose(est, x + _gls_operator(m, b) @ e, rtol=0, atol=1e-6)


def test_tree_histogram_unbiased_with_the_variance_of_its_noise() -> None:
    """Counts far from 0: the nonnegative projections never act, so the estimate is the
    linear least-squares one: unbiased, covariance sigma^2 G G'.  Seeds 0..399 are fixed (the
    test is deterministic); for seeds chosen independently of the code each |z| > 4 has
    probability about 7e-5 (t with 399 degrees of freedom), 3e-4 for the four statistics, and
    the variance ratio of 64 leaves over 400 draws has a standard error under 0.02."""
    m, b, sigma = 64, 4, 20.0
    x = np.random.default_rng(5).integers(3000, 6000, m).astype(float)
    E = np.array([tree_histogram(x, np.random.default_rng(s), sigma=sigma, branching=b)
                  for s in range(400)]) - x
    stats = {"leaf 0": E[:, 0], "leaf 37": E[:, 37], "prefix 20": E[:, :20].sum(1),
             "range 5..40": E[:, 5:41].sum(1)}
    for name, v in stats.items():
        z = v.mean() / (v.std(ddof=1) / math.sqrt(len(v)))
        assert abs(z) < 4, (name, z)
    G = _gls_operator(m, b)
    theory = sigma**2 * np.einsum("ij,ij->i", G, G)
    ratio = (E.var(0, ddof=1) / theory).mean()
    assert 0.9 < ratio < 1.1, ratio


@pytest.mark.parametrize("b", [2, 4])
def test_tree_beats_a_flat_histogram_on_ranges(b: int) -> None:
    """Why a tree: with the same rho, the tree's sigma is sqrt(L / rho) per level, the flat
    histogram's sqrt(1 / rho); both least squares under sum = n.  On the prefix sums (the
    quantiles the coarse bins are cut at) the tree's variance is a fraction of the flat
    one's at m = 1024.  On single leaves it is not (see the proof note): the tree is for
    ranges."""
    m, rho = 1024, 1.0
    L = tree_levels(m, b)
    G = _gls_operator(m, b)
    C = np.cumsum(G, axis=0)[:-1]  # prefix k = 1..m-1
    tree = (L / rho) * np.einsum("ij,ij->i", C, C)
    k = np.arange(1, m)
    flat = (1.0 / rho) * k * (m - k) / m
    assert tree.mean() < 0.1 * flat.mean()
    assert tree.max() < 0.2 * flat.max()


# --- the flattened shape (tree_histogram's ``flat``, FLAT_KAPPA) ------------------------------


@pytest.mark.parametrize("b", [2, 4])
@pytest.mark.parametrize("m", SIZES)
def test_flattened_estimate_is_a_histogram_beside_the_same_plain_one(m: int, b: int) -> None:
    """Same noise, same plain estimate; the flattened one is a histogram too, exact without
    noise (children within 1e-9 of even are even)."""
    rng = np.random.default_rng(m * 10 + b)
    x = rng.integers(0, 50, m).astype(float) * (rng.random(m) < 0.6)
    n = x.sum()
    for seed in range(3):
        for kw in ({"sigma": 40.0}, {"laplace_scale": 30.0}):
            plain = tree_histogram(x, np.random.default_rng(seed), branching=b, **kw)
            est, flat = tree_histogram(x, np.random.default_rng(seed), branching=b, flat=4.0,
                                       **kw)
            np.testing.assert_array_equal(est, plain)
            assert flat.shape == (m,) and np.all(flat >= 0)
            assert flat.sum() == pytest.approx(n, rel=1e-12, abs=1e-9)
    _, flat = tree_histogram(x, np.random.default_rng(1), sigma=1e-9, branching=b, flat=4.0)
    np.testing.assert_allclose(flat, x, rtol=0, atol=1e-6)


def test_flattening_removes_noise_the_data_do_not_have() -> None:
    """Even counts under noise far larger than their differences (about 1.5 per leaf): the
    flattened estimate is much closer to the counts than the plain one.  Deterministic seeds
    0..19; the plain estimate's L1 error is about 20 times the flattened one's here."""
    m, b = 256, 4
    x = np.full(m, 40.0)
    err_plain, err_flat = [], []
    for seed in range(20):
        est, flat = tree_histogram(x, np.random.default_rng(seed), sigma=30.0, branching=b,
                                   flat=4.0)
        err_plain.append(np.abs(est - x).sum())
        err_flat.append(np.abs(flat - x).sum())
    assert np.mean(err_flat) < 0.2 * np.mean(err_plain), (np.mean(err_flat), np.mean(err_plain))


def test_flattening_keeps_a_spike_and_its_zeros() -> None:
    """A spike of 3,000 among leaves of 20 (noise 30 per node) stays where it is: its node's
    children are far from even, so they are never flattened over."""
    m = 64
    x = np.full(m, 20.0)
    x[37] = 3000.0
    for seed in range(20):
        est, flat = tree_histogram(x, np.random.default_rng(seed), sigma=30.0, flat=4.0)
        assert flat[37] > 2800.0, (seed, flat[37])
        assert flat[37] == pytest.approx(est[37]), seed  # on the spike's path nothing is flat


def test_flat_nodes_split_by_width_and_kept_leaves_stay() -> None:
    """Noise far larger than the counts: the leaves get n in proportion to their widths
    (every node's split within noise), except those past ``keep`` (a missing level's leaf),
    whose plain value stays.  A node's split passes the test unless its noise alone exceeds
    kappa (k - 1) variances: for the root's 2 children here about 5 % (chi-square, 1 degree
    of freedom, above 4), for 4 children under 1 %; so most of 10 fixed seeds, not all, are
    flat everywhere."""
    m = 17
    x = np.full(m, 3.0)
    widths = np.where(np.arange(m) % 2 == 0, 1.0, 2.0)
    checked, everywhere = 0, 0
    for seed in range(10):
        _, flat = tree_histogram(x, np.random.default_rng(seed), sigma=1e5, flat=4.0,
                                 widths=widths)
        everywhere += np.allclose(flat, x.sum() * widths / widths.sum(), rtol=1e-12)
        est, kept = tree_histogram(x, np.random.default_rng(seed), sigma=1e5, flat=4.0,
                                   widths=widths, keep=16)
        assert kept[16] == est[16]  # the root's split is the plain one (it holds leaf 16)
        assert kept.sum() == pytest.approx(x.sum(), rel=1e-12)
        if kept[:16].sum() > 0:  # the node of leaves 0..15 splits by width all the way down
            np.testing.assert_allclose(kept[:16] / kept[:16].sum(),
                                       widths[:16] / widths[:16].sum(), rtol=1e-9)
            checked += 1
    assert checked >= 3 and everywhere >= 8, (checked, everywhere)


@pytest.mark.parametrize("b", [2, 4])
def test_a_kept_leaf_beside_grid_leaves_keeps_its_plain_path(b: int) -> None:
    """A missing level's leaf (past ``keep``) sharing its parent with grid leaves: every node
    holding it splits as the plain estimate does, so its value is the plain one, whatever
    the noise; its siblings' parent is never split evenly.  (Mutants that test the parent's
    start, or allow one leaf past ``keep``, change it in about half the seeds.)"""
    m, keep = 18, 17
    x = np.full(m, 3.0)
    x[17] = 40.0
    for seed in range(20):
        est, flat = tree_histogram(x, np.random.default_rng(seed), sigma=1e3, flat=4.0,
                                   branching=b, keep=keep)
        assert flat[17] == est[17], seed
        L = tree_levels(m, b)
        for block in (b ** (L - lev) for lev in range(1, L + 1)):
            s0 = (17 // block) * block  # the node of this level that holds leaf 17
            assert flat[s0:s0 + block].sum() == pytest.approx(est[s0:s0 + block].sum(),
                                                              rel=1e-12, abs=1e-9), (seed, block)


def test_structure_spread_over_many_nodes_is_kept() -> None:
    """Heaps on every other grid point (whole years on a half-year grid), each node's split
    within its noise (a sum of squares of about 0.8 noise variances per degree of freedom
    here) but the level's splits together far beyond it: the level test keeps the leaves'
    split plain, so the heaps stay heaps.  Without it (LEVEL_Z huge) every split is made
    even and the heaps are smeared half onto the empty points."""
    m = 256
    x = np.tile([60.0, 0.0], m // 2)
    on, off = x > 0, x == 0

    def share_on_heaps(z: float, monkeypatch_z: pytest.MonkeyPatch) -> float:
        monkeypatch_z.setattr(nm, "LEVEL_Z", z)
        got = []
        for seed in range(10):
            _, flat = tree_histogram(x, np.random.default_rng(seed), sigma=40.0, flat=4.0)
            got.append(flat[on].sum() / flat.sum())
        return float(np.mean(got))

    mp = pytest.MonkeyPatch()
    try:
        kept = share_on_heaps(nm.LEVEL_Z, mp)
        smeared = share_on_heaps(1e9, mp)
    finally:
        mp.undo()
    assert kept > 0.8 and smeared < 0.65, (kept, smeared)
    assert off.sum() == on.sum()


def test_a_large_missing_count_leaves_the_grid_flattened() -> None:
    """The missing level's leaf (past ``keep``) holds 600 records beside 17 grid leaves of 30:
    its parent is not testable, so it takes no part in the level test either, and the even
    grid leaves are still flattened (counting it would keep the whole level plain)."""
    m, keep = 18, 17
    x = np.full(m, 30.0)
    x[17] = 600.0
    err_plain, err_flat = [], []
    for seed in range(50):
        est, flat = tree_histogram(x, np.random.default_rng(seed), sigma=8.0, flat=4.0,
                                   keep=keep)
        err_plain.append(np.abs(est - x)[:16].sum())
        err_flat.append(np.abs(flat - x)[:16].sum())
    assert np.mean(err_flat) < 0.5 * np.mean(err_plain), (np.mean(err_flat), np.mean(err_plain))


@pytest.mark.parametrize("b", [2, 4])
def test_the_level_test_runs_with_the_trees_branching(b: int) -> None:
    """Parity (every other leaf empty) within each node's noise but not the level's, for
    branching 2 and 4: the flattened estimate keeps the heaps (the level test read with
    another branching would group the wrong children)."""
    m = 256
    x = np.tile([60.0, 0.0], m // 2)
    shares = [tree_histogram(x, np.random.default_rng(seed), sigma=40.0, flat=4.0,
                             branching=b)[1][::2].sum() / x.sum() for seed in range(10)]
    assert np.mean(shares) > 0.8, shares


def test_level_test_by_hand() -> None:
    assert nm.level_test(np.array([50.0, 52, 49, 51] * 20), np.ones(80), 4, 100.0, [True] * 20)
    assert not nm.level_test(np.array([80.0, 20, 80, 20] * 20), np.ones(80), 4, 100.0,
                             [True] * 20)
    # untestable parents (past keep) are left out; none testable: True
    assert nm.level_test(np.array([80.0, 20, 80, 20]), np.ones(4), 4, 1.0, [False])
    # the threshold: df = 3, 1 + 3 sqrt(2/3) = 3.449 noise variances per degree of freedom
    v = np.array([10.0, 0.0, 10.0, 0.0])  # departures 5 each: 100 = 33.3 var of 1 per df
    assert not nm.level_test(v, np.ones(4), 4, 1.0, [True])
    assert nm.level_test(v, np.ones(4), 4, 10.0, [True])  # 100 / 30 = 3.33 <= 3.449
    # widths: counts in proportion to them are even; branching 2 groups pairs
    w = np.array([1.0, 3.0] * 4)
    assert nm.level_test(np.array([10.0, 30.0] * 4), w, 2, 1e-6, [True] * 4)
    assert not nm.level_test(np.array([20.0, 20.0] * 4), w, 2, 1.0, [True] * 4)


def test_the_flattening_reads_the_laplace_noise_variance(monkeypatch: pytest.MonkeyPatch) -> None:
    """Laplace noise of scale b has variance 2 b^2, and the flattening's tests must read that:
    with the noise drawn as zeros (so the decision depends on the variance alone), a split of
    departures 0, 3, -3, 0 (sum of squares 18) is within kappa (children - 1) var = 4 * 3 * 2
    = 24 of even at scale 1 (flattened), and would not be at a variance of b^2 (12); the
    Gaussian noise of the same variance (sigma = sqrt 2) decides the same."""
    monkeypatch.setattr(nm.noise, "laplace", lambda rng, scale, size: np.zeros(size))
    monkeypatch.setattr(nm.noise, "gaussian", lambda rng, sigma, size: np.zeros(size))
    x = np.array([100.0, 103.0, 97.0, 100.0])  # no bound departs (BOUND_HEAPS)
    rng = np.random.default_rng(0)
    est, flat = tree_histogram(x, rng, laplace_scale=1.0, flat=4.0, branching=4)
    np.testing.assert_allclose(est, x)  # no noise: the plain estimate is the counts
    np.testing.assert_allclose(flat, [100.0] * 4)
    _, gauss = tree_histogram(x, rng, sigma=math.sqrt(2.0), flat=4.0, branching=4)
    np.testing.assert_allclose(gauss, flat)
    # just past the threshold (departures 3.5: 24.5 > 24) the split stays plain
    x2 = np.array([103.5, 96.5, 100.0, 100.0])
    np.testing.assert_allclose(tree_histogram(x2, rng, laplace_scale=1.0, flat=4.0,
                                              branching=4)[1], x2)


@pytest.mark.parametrize("bad", [{"flat": 0.0}, {"flat": -1.0}, {"flat": math.nan},
                                 {"flat": True}, {"flat": "4"},
                                 {"flat": 4.0, "widths": np.ones(3)},
                                 {"flat": 4.0, "widths": np.zeros(4)},
                                 {"flat": 4.0, "keep": 5}])
def test_flattening_input_checks(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        tree_histogram(np.ones(4), np.random.default_rng(0), sigma=1.0, **bad)


def test_flat_test_by_hand() -> None:
    assert nm.flat_test(np.array([52.0, 47, 55, 46]), np.ones(4), 100.0, 4.0)
    assert not nm.flat_test(np.array([600.0, 20, 20, 20]), np.ones(4), 100.0, 4.0)
    # widths: 10, 20 split 1:2 exactly is even
    assert nm.flat_test(np.array([10.0, 20.0]), np.array([1.0, 2.0]), 1e-6, 4.0)
    assert not nm.flat_test(np.array([20.0, 10.0]), np.array([1.0, 2.0]), 1.0, 4.0)
    # the threshold: sum of squares 2 * 6^2 = 72 against kappa (k - 1) var = 4 * 1 * 16 = 64
    assert not nm.flat_test(np.array([16.0, 4.0]), np.ones(2), 16.0, 4.0)
    assert nm.flat_test(np.array([16.0, 4.0]), np.ones(2), 16.0, 5.0)
    assert nm.flat_test(np.array([5.0]), np.ones(1), 1.0, 4.0)


WIDE = (Column("income", "numeric", lower=0, upper=99_999, step=1),)  # 100,000 grid points


def _wide_table(n: int, seed: int = 0) -> pd.DataFrame:
    """income: log-normal, reported to the nearest 5,000 in a third of the rows (heaps)."""
    d = _table(n, seed)
    rng = np.random.default_rng(seed + 1)
    inc = np.exp(rng.normal(10, 0.5, n))
    inc = np.where(rng.random(n) < 1 / 3, np.round(inc / 5000) * 5000, np.round(inc))
    d.insert(2, "income", np.minimum(inc, 99_999).astype(int))
    return d


def _logged_trees(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, dict[str, Any]]]:
    outs: list[tuple[Any, dict[str, Any]]] = []
    inner = nm.tree_histogram

    def logged(counts: Any, rng: np.random.Generator, **kw: Any) -> Any:
        out = inner(counts, rng, **kw)
        outs.append((out, kw))
        return out

    monkeypatch.setattr(nm, "tree_histogram", logged)
    return outs


def test_a_fit_draws_within_bins_from_the_flattened_shape(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The shape a fit keeps for drawing inside coarse bins is the flattened estimate of the
    column's tree (FLAT_KAPPA, widths = grid points per fine bin), on a wide grid and on a
    grid of its own points alike; its coarse bins are cut from the plain estimate of the
    same noise.  A wide grid's round values (multiples of 100 here, and both bounds) are
    fine bins of their own."""
    outs = _logged_trees(monkeypatch)
    ts = TableSynthesizer("oracle-query-pgm", epsilon=1.0, random_state=0).fit(
        _wide_table(3000), _schema(WIDE))
    names = [kw.get("flat") for _, kw in outs]
    assert names == [nm.FLAT_KAPPA, nm.FLAT_KAPPA]  # visits (366 points), income
    (est, flat), kw = outs[1]
    a = ts.table_domain_.attrs[ts.table_domain_.columns.index("income")]
    starts, p = a.within
    assert kw["keep"] == len(starts) == len(est)
    assert not np.allclose(flat / flat.sum(), est / est.sum())  # the premise: they differ
    np.testing.assert_allclose(p, flat / flat.sum(), rtol=1e-12)
    np.testing.assert_array_equal(kw["widths"], np.diff(np.append(starts, 100_000)))
    np.testing.assert_array_equal(a.first, starts[quantile_starts(est, len(a.first))])
    rounds = np.arange(0, 100_000, 100)
    assert set(rounds) | {99_999} <= set(starts.tolist())
    assert set(rounds[1:] + 1) <= set(starts.tolist())  # each its own bin
    # visits (one grid point per fine bin, unit widths): its flattened shape too
    v = ts.table_domain_.attrs[ts.table_domain_.columns.index("visits")]
    (_, v_flat), v_kw = outs[0]
    np.testing.assert_array_equal(v_kw["widths"], np.ones(366))
    np.testing.assert_allclose(v.within[1], v_flat / v_flat.sum(), rtol=1e-12)


def test_a_wide_grid_with_a_missing_level_keeps_the_missing_cells_out_of_the_tree(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """income declared with a missing level: its tree holds the grid's fine bins only, the
    missing count is passed as ``outside`` (its estimate returned after the leaves), every
    node may split evenly, and the shape drawn is the flattened estimate of the leaves."""
    outs = _logged_trees(monkeypatch)
    schema = _schema((Column("income", "numeric", lower=0, upper=99_999, step=1,
                             missing="level"),))
    data = _wide_table(3000)
    data["income"] = data["income"].astype(float)
    data.loc[::10, "income"] = np.nan
    ts = TableSynthesizer("oracle-query-pgm", epsilon=1.0, random_state=0).fit(data, schema)
    (est, flat), kw = outs[1]
    a = ts.table_domain_.attrs[ts.table_domain_.columns.index("income")]
    m = len(a.within[0])
    assert len(est) == m + 1 and kw["keep"] == m and kw["widths"].shape == (m,)
    assert kw["outside"] == 300.0 and outs[0][1]["outside"] is None
    assert flat[m] == est[m] and est.sum() == pytest.approx(3000.0)
    np.testing.assert_allclose(a.within[1], flat[:m] / flat[:m].sum(), rtol=1e-12)


def test_the_outside_count_is_one_more_child_of_the_root() -> None:
    """``outside``: each level's release holds the outside count beside its nodes; its
    estimate is the mean of its L noisy counts, joined to the root's children in the least
    squares under the root n (two levels of 4: the children's ``(4 y_node + sum
    y_children) / 5``, variance 4/5 of a node's; the outside count's 1/2), then their
    nonnegative projection.  Checked against that closed form, draw by draw."""
    x = np.array([300.0, 0, 50, 10, 400, 20, 0, 0, 90, 90, 90, 90, 0, 0, 0, 600])
    n_out = 170.0
    log = _NoiseLog()
    for seed in range(5):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(nm, "noise", log)
            start = len(log.calls)
            est = tree_histogram(x, np.random.default_rng(seed), sigma=3.0, outside=n_out)
        (_, _, k0, top), (_, _, k1, leaf) = log.calls[start:]
        assert (k0, k1) == (5, 17)
        y0, y1 = x.reshape(4, 4).sum(axis=1) + top[:4], x + leaf[:16]
        z0 = (4 * y0 + y1.reshape(4, 4).sum(axis=1)) / 5
        o = n_out + (top[4] + leaf[16]) / 2
        n = x.sum() + n_out
        gap = n - z0.sum() - o
        want = np.append(z0 + 0.8 / 3.7 * gap, o + 0.5 / 3.7 * gap)  # all far above 0
        np.testing.assert_allclose(np.append(est[:16].reshape(4, 4).sum(axis=1), est[16]),
                                   want, rtol=1e-12)
        assert est.sum() == pytest.approx(n)


def test_a_count_spike_survives_wide_bounds() -> None:
    """A count that is 0 in 91 % of the rows, declared 0-10,000: 0 is a fine bin of its own
    (the lower bound), so it keeps its share (it was drawn uniformly over 0..9, about 9 %,
    before).  n = 4,000 at epsilon 1: the share's noise is far below 0.05."""
    schema = TableSchema((Column("days", "numeric", lower=0, upper=10_000, step=1),
                          Column("region", "categorical", levels=("n", "s", "e", "w"))),
                         "y", ("no", "yes"))
    data = _table(4000, seed=2).rename(columns={"visits": "days"})
    data["days"] = np.where(data["days"] > 0, data["days"] % 60 + 1, 0)
    real = float((data["days"] == 0).mean())
    for seed in (0, 1):
        ts = TableSynthesizer("oracle-query-pgm", epsilon=1.0, random_state=seed).fit(
            data, schema)
        fake = ts.sample(4000, random_state=seed)
        assert abs(float((fake["days"] == 0).mean()) - real) < 0.05, seed


def test_project_simplex() -> None:
    assert project_simplex(np.array([3.0, -1.0, 1.0]), 2.0).tolist() == [2.0, 0.0, 0.0]
    assert project_simplex(np.array([1.0, 2.0]), 0.0).tolist() == [0.0, 0.0]
    rng = np.random.default_rng(0)
    for _ in range(50):
        v, t = rng.normal(0, 10, 7), float(rng.uniform(0, 20))
        p = project_simplex(v, t)
        assert np.all(p >= 0) and p.sum() == pytest.approx(t)
        for _ in range(20):  # no point of the simplex is closer
            q = rng.dirichlet(np.ones(7)) * t
            assert np.sum((v - p) ** 2) <= np.sum((v - q) ** 2) + 1e-9


# --- quantile_starts --------------------------------------------------------------------------


@pytest.mark.parametrize(("h", "bins", "want"), [
    ([91, 0, 3, 3, 3], 4, [0, 1, 3, 4]),  # the heavy 0 alone, the rest cut at its thirds
    ([1] * 8, 4, [0, 2, 4, 6]),  # uniform: quartiles
    ([1, 1, 1, 10, 1, 1, 1], 3, [0, 3, 4]),  # a heavy bin in the middle
    ([0, 5, 0, 5, 0, 5, 0], 3, [0, 3, 5]),  # 7 segments merged by least mass
    ([0] * 10, 4, [0, 2, 5, 7]),  # nothing estimated: equal shares
    ([5, 1, 2], 5, [0, 1, 2]),  # more bins than fine bins: one each
    ([3, 3], 1, [0]),
])
def test_quantile_starts_by_hand(h: list[float], bins: int, want: list[int]) -> None:
    got = quantile_starts(np.array(h, dtype=float), bins)
    assert got.tolist() == want and got.dtype == np.int64
    assert quantile_starts(7.5 * np.array(h, dtype=float), bins).tolist() == want  # shape only


def test_quantile_starts_properties() -> None:
    rng = np.random.default_rng(1)
    for trial in range(300):
        m = int(rng.integers(1, 80))
        h = rng.exponential(1.0, m) * (rng.random(m) < 0.5)
        h[rng.integers(0, m, int(rng.integers(0, 3)))] += rng.uniform(0, 3 * h.sum() + 1)
        bins = int(rng.integers(1, 14))
        q = quantile_starts(h, bins)
        assert q[0] == 0 and np.all(np.diff(q) > 0) and q[-1] < m, (trial, q)
        assert len(q) <= bins and (len(q) == min(bins, m) or h.sum() > 0)
        heavy = np.flatnonzero(h >= h.sum() / bins) if h.sum() > 0 else []
        cuts = sorted({0, *(int(f) for f in heavy), *(int(f) + 1 for f in heavy)} - {m})
        if len(cuts) <= bins:  # room for every heavy bin alone: each is a coarse bin
            for f in heavy:
                assert f in q and (f + 1 in q or f + 1 == m), (trial, h, bins, q)
    # a heavy bin cannot always be alone: 4 heavy bins with light ones between, 4 bins
    q = quantile_starts(np.array([0, 10, 0, 10, 0, 10, 0, 10, 0.0]), 4)
    assert len(q) == 4


# --- the fit's accounting ---------------------------------------------------------------------


def _mutant_no_leaf_noise() -> Any:
    """tree_histogram with the leaves' level left unmeasured (its noise call skipped)."""
    src = inspect.getsource(nm.tree_histogram)
    for call in ("noise.gaussian(rng, sigma, size)",
                 "noise.laplace(rng, laplace_scale, size)"):
        assert f"draw = {call}" in src, "the planted mutant no longer applies: update it"
        src = src.replace(f"draw = {call}", f"draw = (np.zeros(size) if block == 1 else {call})")
    ns: dict[str, Any] = {}
    exec(compile(src, "<mutant>", "exec"), nm.__dict__, ns)  # module globals: the noise log
    return ns["tree_histogram"]


def _mutant_sigma_without_levels(counts: Any, rng: np.random.Generator, *,
                                 sigma: float | None = None, laplace_scale: float | None = None,
                                 branching: int = BRANCHING, **kw: Any) -> Any:
    """As if the fit had set sigma = sqrt(1 / rho) (scale 2 / epsilon), ignoring L."""
    L = tree_levels(len(counts), branching)
    if sigma is not None:
        return tree_histogram(counts, rng, sigma=sigma / math.sqrt(L), branching=branching,
                              **kw)
    return tree_histogram(counts, rng, laplace_scale=laplace_scale / L, branching=branching,
                          **kw)


def _whole_budget_to_the_method(monkeypatch: pytest.MonkeyPatch) -> None:
    real = tsm._split_budget

    def split(epsilon: float, *args: Any) -> Any:
        return dataclasses.replace(real(epsilon, *args), method_epsilon=epsilon)

    monkeypatch.setattr(tsm, "_split_budget", split)


MUTANTS = ["none", "no-leaf-noise", "sigma-without-L", "method-gets-whole-epsilon"]


@pytest.mark.parametrize("method", ["oracle-query-pgm", "independent"])
@pytest.mark.parametrize("mutant", MUTANTS)
def test_accounting_from_the_noise_drawn(method: str, mutant: str,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The fit's histograms and method fit in zcdp_rho(epsilon, delta) (zCDP methods) or in
    epsilon (pure ones), read from the noise actually drawn; each planted mutant is caught."""
    inner = {"no-leaf-noise": _mutant_no_leaf_noise() if mutant == "no-leaf-noise" else None,
             "sigma-without-L": _mutant_sigma_without_levels}.get(mutant)
    log = _FitLog(monkeypatch, inner)
    if mutant == "method-gets-whole-epsilon":
        _whole_budget_to_the_method(monkeypatch)
    data = _table(500, seed=1, kids=True)
    ts = TableSynthesizer(method, epsilon=1.0, random_state=0, bins=10).fit(data, _schema(KIDS))
    delta = 1 / 500**2 if method == "oracle-query-pgm" else 0.0
    assert ts.guarantee_.epsilon == 1.0 and ts.guarantee_.delta == delta
    assert [len(c) for c, _ in log.columns] == [366]  # visits only: kids fits in 10 bins
    bad = _violations(ts, log, 1.0, delta)
    if mutant == "none":
        assert bad == []
        assert all(c.sum() == 500 for c, _ in log.columns)  # the public n is the root
    else:
        assert bad, f"the mutant {mutant} went unnoticed"


def _with_missing(name: str, values: np.ndarray, share: float, lower: int, upper: int,
                  rng: np.random.Generator) -> tuple[pd.DataFrame, TableSchema]:
    """A table of one numeric column (``values``, a ``share`` of them made missing; declared
    ``lower``-``upper`` with a missing level), a 4-level region and a binary target."""
    n = len(values)
    values = values.copy()
    values[rng.random(n) < share] = np.nan
    data = pd.DataFrame({name: values, "region": rng.choice(["n", "s", "e", "w"], n),
                         "y": rng.choice(["no", "yes"], n)})
    schema = TableSchema((Column(name, "numeric", lower=lower, upper=upper, step=1,
                                 missing="level"),
                          Column("region", "categorical", levels=("n", "s", "e", "w"))),
                         "y", ("no", "yes"))
    return data, schema


@pytest.mark.parametrize("method", ["oracle-query-pgm", "independent"])
def test_accounting_with_a_missing_level(method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A column of 256 grid points with a missing level: its tree has tree_levels(256) = 4
    levels, each releasing its nodes and the missing count (one more count per level), all
    within the budget (``_violations``); a tree sized for 257 leaves (the missing cells as a
    leaf, 5 levels) would be another accounting."""
    log = _FitLog(monkeypatch)
    rng = np.random.default_rng(4)
    n = 600
    score = rng.integers(0, 256, n).astype(float)
    data, schema = _with_missing("score", score, 0.1, 0, 255, rng)
    delta = 1 / n**2 if method == "oracle-query-pgm" else 0.0
    ts = TableSynthesizer(method, epsilon=1.0, random_state=0, bins=4).fit(data, schema)
    (counts, calls), = log.columns
    assert len(counts) == 256 and log.outside == [float(data["score"].isna().sum())]
    assert [c[2] for c in calls] == [5, 17, 65, 257]  # 4, 16, 64, 256 nodes + missing
    assert _violations(ts, log, 1.0, delta) == []


def test_neighbours_shift_each_level_by_at_most_one_in_two_cells(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact law of one level: for replace-one neighbours (one record's visits 0 -> 365)
    the fit's leaf counts differ by -1 and +1 in two cells; every level's counts (block sums)
    differ by a vector of squared norm 2 and l1 norm 2, so with the same noise N(0, sigma^2)
    the two laws of a level are shifts of each other by that vector: Renyi divergence
    alpha * 2 / (2 sigma^2).  Summed over the L levels this is the column's rho_each."""
    data = _table(500, seed=2)
    i = int(np.flatnonzero(data.visits.to_numpy() == 0)[0])
    other = data.copy()
    other.loc[i, "visits"] = 365
    leaves = []
    for d in (data, other):
        log = _FitLog(monkeypatch)
        ts = TableSynthesizer("oracle-query-pgm", epsilon=1.0, random_state=0).fit(d, _schema())
        ((counts, calls),) = log.columns
        leaves.append(counts)
        sigma = calls[0][1]
    diff = leaves[1] - leaves[0]
    assert sorted(diff[diff != 0].tolist()) == [-1.0, 1.0] and diff[0] == -1 and diff[-1] == 1
    A = _level_matrix(366, BRANCHING)
    L = tree_levels(366)
    rho = Fraction(0)
    start = 0
    for level in range(1, L + 1):
        size = -(-366 // BRANCHING ** (L - level))
        shift = A[start:start + size] @ diff
        start += size
        assert np.sum(shift**2) == 2 and np.sum(np.abs(shift)) == 2
        rho += Fraction(int(np.sum(shift**2))) / (2 * Fraction(sigma) ** 2)
    assert float(rho) == pytest.approx(ts.numeric_["rho_each"], rel=1e-12)


def test_the_tree_holds_the_present_cells_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A column with 30 missing cells of 300: its tree counts the 270 present cells and the
    30 missing ones go beside each level (``outside``), so the root is n (public).  Before,
    the missing cells were one more leaf, sharing the grid's last nodes: the noise of the
    empty top bins took the missing share."""
    data = _table(300, seed=3)
    data["visits"] = data["visits"].astype(float)
    data.loc[:29, "visits"] = np.nan
    log = _FitLog(monkeypatch)
    TableSynthesizer("independent", epsilon=1.0, random_state=0).fit(
        data, _schema(missing="level"))
    assert [c.sum() for c, _ in log.columns] == [270.0] and log.outside == [30.0]


def test_a_missing_level_no_longer_draws_values_at_the_top_of_the_grid() -> None:
    """Blood pressures declared 40-250 (data 74-167, 4 % missing; 2,000 records, epsilon
    1): with the missing cells as the tree's last leaf, the noise of the empty bins sharing
    its nodes drew values at 232-250 (a new user's table: 0.78 % over 8 seeds) and took the
    missing share (3.9 % against 4.35 %; docs/results/synth-missing-level).  Now: below
    0.5 % over 4 seeds of this table."""
    rng = np.random.default_rng(5)
    n = 2000
    bp = np.clip(np.round(rng.normal(120, 15, n)), 74, 167)
    data, schema = _with_missing("bp", bp, 0.0435, 40, 250, rng)
    top = []
    for seed in range(4):
        ts = TableSynthesizer("oracle-query-pgm", epsilon=1.0, random_state=seed).fit(
            data, schema)
        fake = pd.to_numeric(ts.sample(n, random_state=seed)["bp"])
        top.append(float((fake >= 232).mean()))
    assert float(np.mean(top)) < 0.005, top


def test_no_event_separates_all_missing_from_one_present() -> None:
    n = 200
    base = pd.DataFrame({"visits": [np.nan] * n, "region": ["n"] * n, "y": ["no"] * n})
    other = base.copy()
    other.loc[0, "visits"] = 5.0
    uniform = []
    for d in (base, other):
        ts = TableSynthesizer("independent", epsilon=1.0, random_state=0).fit(
            d, _schema(missing="level"))
        p = ts.table_domain_.within["visits"][1]
        uniform.append(bool(np.all(p == p[0])))
    assert uniform[0] == uniform[1]


@pytest.mark.parametrize(("method", "epsilon", "fraction"), [
    ("oracle-query-pgm", 1.15, 0.4), ("independent", 1.0, 0.2)])  # (the latter: defaults)
def test_the_budget_is_never_overspent_in_the_last_bits(
        method: str, epsilon: float, fraction: float, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _FitLog(monkeypatch)
    delta = 1e-6 if method == "oracle-query-pgm" else None
    ts = TableSynthesizer(method, epsilon=epsilon, delta=delta, random_state=0,
                          numeric_fraction=fraction).fit(_table(300, seed=4), _schema())
    assert _violations(ts, log, epsilon, delta or 0.0, exact=True) == []


def test_add_remove_is_refused_before_any_noise(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: Any, **k: Any) -> None:
        raise AssertionError("noise drawn")

    for name in ("gaussian", "laplace", "exponential_mechanism"):
        monkeypatch.setattr(noise_mod, name, boom)
    with pytest.raises(ValueError, match="neighbour"):
        TableSynthesizer("mst", epsilon=1.0, delta=1e-6, random_state=0,
                         options={"neighbouring": "add-remove"}).fit(_table(100), _schema())


def test_a_wrong_option_is_refused_uncharged() -> None:
    with BudgetAccountant(5.0) as acct:
        with pytest.raises(ValueError):
            TableSynthesizer("mwem", epsilon=1.0, random_state=0,
                             options={"rounds": 0}).fit(_table(200), _schema())
    assert acct.spends == ()


# --- TableSynthesizer end to end --------------------------------------------------------------


def test_the_share_of_zero_comes_back(table: pd.DataFrame, fitted: TableSynthesizer) -> None:
    """Seeds fixed (fit 0, sample 1): deterministic.  The share's error is the method's noise
    on the coarse bin '0' (about 0.01 at epsilon 1 and n = 2,000: the zero is a coarse bin of
    its own, being 91 % of the mass) plus sampling (0.002 for 20,000 records); uniform draws
    inside an equal-width bin [0, 36] gave about 0.03."""
    real = float((table.visits == 0).mean())
    assert 0.88 < real < 0.94
    assert fitted.table_domain_.domain.levels[0][0] == "0"  # a coarse bin of its own
    synth = fitted.sample(20000, random_state=1)
    assert abs(float((synth.visits == 0).mean()) - real) < 0.03
    assert set(synth.columns) == set(table.columns)
    assert fitted.numeric_["columns"] == ["visits"]
    assert set(fitted.table_domain_.within) == {"visits"}


def test_saved_model_samples_the_same_rows(fitted: TableSynthesizer, tmp_path: Any) -> None:
    fitted.save(tmp_path)
    loaded = TableSynthesizer.load(tmp_path)
    pd.testing.assert_frame_equal(loaded.sample(500, random_state=3),
                                  fitted.sample(500, random_state=3))
    assert loaded.numeric_ == fitted.numeric_
    assert loaded.guarantee_ == fitted.guarantee_


@pytest.mark.parametrize("sampler", ["rounded", "iid"])
def test_cli_sampler_draws_the_python_rows(fitted: TableSynthesizer, tmp_path: Any,
                                           sampler: str) -> None:
    """`synth sample --sampler S --seed 7` writes the rows TableSynthesizer.sample draws with
    the same sampler and seed (one sampling path); the two samplers differ."""
    import io

    from typer.testing import CliRunner

    from oracledp._cli import app

    fitted.save(tmp_path / "m")
    res = CliRunner().invoke(app, ["synth", "sample", str(tmp_path / "m"), "--rows", "300",
                                   "--seed", "7", "--sampler", sampler])
    assert res.exit_code == 0, res.output
    cli = pd.read_csv(io.StringIO(res.stdout), dtype=str, keep_default_na=False)
    mine = TableSynthesizer.load(tmp_path / "m").sample(300, random_state=7, sampler=sampler)
    pd.testing.assert_frame_equal(cli, mine.astype(str), check_dtype=False)
    other = fitted.sample(300, random_state=7,
                          sampler="iid" if sampler == "rounded" else "rounded")
    assert not other.astype(str).equals(mine.astype(str))


def test_cli_unknown_sampler_is_one_error(fitted: TableSynthesizer, tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from oracledp._cli import app

    fitted.save(tmp_path / "m")
    out = tmp_path / "s.csv"
    res = CliRunner().invoke(app, ["synth", "sample", str(tmp_path / "m"), "--rows", "5",
                                   "--sampler", "exact", "--out", str(out)])
    assert res.exit_code == 2 and not out.exists()
    assert "sampler must be one of 'rounded', 'iid'" in res.output


def test_rounded_decoding_deals_the_fine_histogram(fitted: TableSynthesizer) -> None:
    """sampler="rounded": inside each coarse bin of `visits`, every fine bin's count is within
    one of its expected share of the bin's records (the measured fine histogram's law)."""
    tdom = fitted.table_domain_
    j = tdom.columns.index("visits")
    a = tdom.attrs[j]
    codes = fitted.sample_codes(3000, random_state=5)
    vals = fitted.table_domain_.decode(codes, np.random.default_rng(6), sampler="rounded")
    k = np.round((vals["visits"].to_numpy(dtype=float) - a.lower) / a.step).astype(np.int64)
    starts, p = a.within
    fine = np.searchsorted(starts, k, side="right") - 1
    checked = 0
    for b in np.unique(codes[:, j]):
        rows = codes[:, j] == b
        lo, hi = int(a.first[b]), int(a.last[b])
        f0 = int(np.searchsorted(starts, lo, side="right")) - 1
        f1 = int(np.searchsorted(starts, hi, side="right")) - 1
        w = p[f0:f1 + 1] / p[f0:f1 + 1].sum()  # whole fine bins here (fine cuts = coarse cuts)
        got = np.bincount(fine[rows] - f0, minlength=len(w))
        assert np.all(np.abs(got - rows.sum() * w) < 1.0 + 1e-9), b
        checked += len(w) > 1
    assert checked >= 1  # some coarse bin holds several fine bins


def test_decoding_defaults_to_the_samplers_default(fitted: TableSynthesizer) -> None:
    """TableDomain.decode and TableSynthesizer.sample share their default sampler
    ("rounded"): codes decoded without naming one give sample()'s records, and those differ
    from the "iid" decoding of the same codes (so the comparison can fail)."""
    codes = fitted.sample_codes(500, random_state=np.random.default_rng(3))
    rng = np.random.default_rng(3)
    codes_again = fitted.sample_codes(500, random_state=rng)
    np.testing.assert_array_equal(codes, codes_again)
    plain = fitted.table_domain_.decode(codes, rng)
    via_sample = fitted.sample(500, random_state=np.random.default_rng(3))
    pd.testing.assert_frame_equal(plain, via_sample.reset_index(drop=True))
    rng_iid = np.random.default_rng(3)
    fitted.sample_codes(500, random_state=rng_iid)
    assert not fitted.table_domain_.decode(codes, rng_iid, sampler="iid").equals(plain)


def test_the_accountant_is_charged_once(table: pd.DataFrame) -> None:
    with BudgetAccountant(3.0, 1e-3) as acct:
        ts = TableSynthesizer("oracle-query-pgm", epsilon=1.0, random_state=0).fit(
            table, _schema())
    (charge,) = acct.spends
    assert (charge.epsilon, charge.delta) == (1.0, 1 / 2000**2)
    assert charge.status == "released" and "TableSynthesizer" in charge.label
    assert charge.guarantee == ts.guarantee_


def test_a_failure_after_the_histograms_is_charged(table: pd.DataFrame,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    log = _FitLog(monkeypatch)

    def fails(self: Any, *a: Any, **k: Any) -> None:
        raise RuntimeError("the method broke")

    monkeypatch.setattr(OracleQueryPGM, "fit", fails)
    with BudgetAccountant(3.0, 1e-3) as acct:
        with pytest.raises(RuntimeError, match="the method broke"):
            TableSynthesizer("oracle-query-pgm", epsilon=1.0, random_state=0).fit(
                table, _schema())
    assert log.noise.calls  # the histograms drew noise before the method ran
    (charge,) = acct.spends
    assert (charge.epsilon, charge.delta) == (1.0, 1 / 2000**2)
    assert charge.status.startswith("failed after its mechanism started")


def test_a_refusal_before_noise_is_not_charged(table: pd.DataFrame,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: Any, **k: Any) -> None:
        raise AssertionError("noise drawn before the refusal")

    for name in ("gaussian", "laplace", "exponential_mechanism"):
        monkeypatch.setattr(noise_mod, name, boom)
    with BudgetAccountant(0.5, 1e-3) as acct:
        with pytest.raises(BudgetError, match="refused before any noise"):
            TableSynthesizer("oracle-query-pgm", epsilon=1.0, random_state=0).fit(
                table, _schema())
        with pytest.raises(TypeError, match="nope"):  # the method's constructor, before noise
            TableSynthesizer("independent", epsilon=0.1, random_state=0,
                             options={"nope": 1}).fit(table, _schema())
    assert acct.spends == () and acct.spent == (0.0, 0.0)


def test_equal_width_keeps_the_public_bins(table: pd.DataFrame,
                                           fitted: TableSynthesizer) -> None:
    public = TableDomain(_schema(), 10).domain.levels[0]
    ts = TableSynthesizer("independent", epsilon=1.0, random_state=0, bins=10,
                          bin_edges="equal-width").fit(table, _schema())
    assert ts.table_domain_.domain.levels[0] == public
    assert "visits" in ts.table_domain_.within  # still drawn from the fine histogram: the 0s
    share = float((ts.sample(20000, random_state=1).visits == 0).mean())  # of [0, 36] come back
    assert abs(share - float((table.visits == 0).mean())) < 0.03  # (seeds fixed, as above)
    assert fitted.table_domain_.domain.levels[0] != public  # quantiles: cut where the mass is


def test_a_column_that_fits_its_bins_is_not_refined(monkeypatch: pytest.MonkeyPatch) -> None:
    log = _FitLog(monkeypatch)
    ts = TableSynthesizer("independent", epsilon=1.0, random_state=0, bins=10).fit(
        _table(300, kids=True), _schema(KIDS))
    assert ts.numeric_["columns"] == ["visits"]
    assert set(ts.table_domain_.within) == {"visits"}
    assert [len(c) for c, _ in log.columns] == [366]
    assert ts.table_domain_.domain.levels[2] == ("0", "1", "2", "3", "4", "5")


def test_pure_methods_compose_by_epsilon(monkeypatch: pytest.MonkeyPatch) -> None:
    log = _FitLog(monkeypatch)
    with BudgetAccountant(1.0) as acct:
        ts = TableSynthesizer("independent", epsilon=1.0, random_state=0,
                              numeric_fraction=0.2).fit(_table(300), _schema())
    ((_, calls),) = log.columns
    assert {c[0] for c in calls} == {"laplace"}
    assert ts.numeric_["epsilon_each"] == pytest.approx(0.2)
    assert ts.synthesizer_.guarantee_.epsilon == ts.numeric_["method_epsilon"]
    assert ts.synthesizer_.guarantee_.epsilon == pytest.approx(0.8)
    assert (ts.guarantee_.epsilon, ts.guarantee_.delta) == (1.0, 0.0)
    assert ts.rho_ is None
    assert [(c.epsilon, c.delta) for c in acct.spends] == [(1.0, 0.0)]


def test_auto_fraction_gives_small_budgets_more_for_the_columns() -> None:
    """numeric_fraction='auto' (the default): 0.5 of a small budget (n sqrt(rho) <= 250), 0.2
    of a generous one (>= 1,000), monotone between; the fit records the share it used and
    spends exactly that on the histograms."""
    from oracledp.synth._table_synthesizer import auto_fraction

    def frac(n: int, rho: float) -> float:
        return auto_fraction(n, rho, columns=1, attributes=3)

    assert frac(1000, 0.01) == 0.5 and frac(20_000, 0.01) == 0.2
    xs = [frac(n, 0.01) for n in range(2500, 10_001, 500)]
    assert all(a >= b for a, b in itertools.pairwise(xs)) and 0.2 < xs[3] < 0.5
    ts = TableSynthesizer("independent", epsilon=0.5, random_state=0).fit(_table(300),
                                                                          _schema())
    assert ts.numeric_["fraction"] == frac(300, 0.5**2 / 2) == 0.5  # 1 refined of 3
    assert ts.numeric_["epsilon_each"] == pytest.approx(0.25)


def test_auto_fraction_shrinks_where_numeric_columns_are_few() -> None:
    """A few refined columns among many attributes get a share in proportion (min(1, 6 k /
    d)), so the other columns' 1-way tables keep their budget; a sixth or more: unchanged."""
    from oracledp.synth._table_budget import auto_fraction

    small, big = (1_629, 0.0165), (50_000, 0.05)  # n sqrt(rho) about 209 and 11,180
    for n, rho in (small, big):
        full = auto_fraction(n, rho, columns=2, attributes=12)
        assert full == auto_fraction(n, rho, columns=12, attributes=12)  # a sixth or more
        assert auto_fraction(n, rho, columns=2, attributes=40) == pytest.approx(0.3 * full)
        assert auto_fraction(n, rho, columns=0, attributes=40) == 0.0
    assert auto_fraction(*small, columns=2, attributes=40) == 0.15
    for bad in ((3, 2), (-1, 4), (1, 0)):
        with pytest.raises(ValueError, match="columns <= attributes"):
            auto_fraction(*small, columns=bad[0], attributes=bad[1])
    # a fit: one refined column among 1 + 8 categorical + the target = 10 attributes
    extra = tuple(Column(f"c{j}", "categorical", levels=("a", "b")) for j in range(7))
    df = _table(300).assign(**{f"c{j}": "a" for j in range(7)})
    ts = TableSynthesizer("independent", epsilon=0.5, random_state=0).fit(df, _schema(extra))
    assert ts.numeric_["fraction"] == pytest.approx(0.5 * 6 / 10)


def test_afford_states_each_columns_noise_when_the_budget_is_shared() -> None:
    """plan_'s third figure is sqrt(d) times the whole-budget 1-way figure (the expected TV of
    Gaussian noise, sigma = 1 / sqrt(rho / d) per cell); from SHARED_NOISE_NOTE up, and only
    where pairs are still measured, the summary says weak dependence cannot be reproduced."""
    from oracledp.synth._table_budget import PAIR_NOISE_LIMIT, SHARED_NOISE_NOTE, afford

    note, only = "cannot be reproduced at this budget", "1-way tables only"
    n, shape = 1_000, (2,) * 16 + (3,) * 9  # d = 25, median column 2 cells
    per_cell = math.sqrt(2.0 / math.pi) / (2.0 * n)  # times 1 / sqrt(rho)
    # rho at which the shared figure is exactly the threshold: 2 * 5 * per_cell / sqrt(rho)
    rho_at = (2 * 5 * per_cell / SHARED_NOISE_NOTE) ** 2
    for rho, noted in ((rho_at * 1.01, False), (rho_at / 1.01, True)):
        a = afford(n, shape, 2, columns=0, rho=rho)
        assert a["one_way_noise_tv"] == pytest.approx(2 * per_cell / math.sqrt(rho))
        assert a["shared_one_way_noise_tv"] == pytest.approx(5 * a["one_way_noise_tv"])
        assert (a["shared_one_way_noise_tv"] >= SHARED_NOISE_NOTE) is noted
        assert (note in a["summary"]) is noted and only not in a["summary"]
        assert "25 attributes" in a["summary"] and not a["one_way_only"]
        assert "coarse bins" not in a["summary"]  # no column's bins are the budget's choice
    tiny = afford(12, (2, 2, 3), 2, columns=1, rho=0.04)  # pairs unaffordable: that statement, not the note
    assert tiny["pair_noise_tv"] > PAIR_NOISE_LIMIT and tiny["one_way_only"]
    assert only in tiny["summary"] and note not in tiny["summary"]
    assert "a numeric column gets 2 coarse bins for n and the budget" in tiny["summary"]
    # a method that measures no pair (independent) says that instead of either
    alone = "reproduces no dependence between columns"
    for a in (afford(n, shape, 2, columns=0, rho=rho_at / 1.01, pairs=False),
              afford(12, (2, 2, 3), 2, columns=1, rho=0.04, pairs=False)):
        assert alone in a["summary"] and note not in a["summary"]
        assert "pair" not in a["summary"].replace("reproduces no dependence", "")
    # a fit of many binary columns at a small budget says so in plan_ (and synth fit prints it)
    extra = tuple(Column(f"c{j}", "categorical", levels=("a", "b")) for j in range(30))
    df = _table(300).assign(**{f"c{j}": "a" for j in range(30)})
    ts = TableSynthesizer("independent", epsilon=1.0, random_state=0).fit(df, _schema(extra))
    assert alone in ts.plan_["summary"] and "33 attributes" in ts.plan_["summary"]
    assert "a numeric column gets 2 coarse bins for n and the budget" in ts.plan_["summary"]  # visits, by the rule
    kids = TableSynthesizer("independent", epsilon=1.0, random_state=0, bins=4).fit(
        _table(300, kids=True), _schema(KIDS))  # bins given: the rule chose none
    assert "coarse bins" not in kids.plan_["summary"]


def test_afford_states_the_widest_columns_noise() -> None:
    """A 30-level column among 2- to 8-level ones (1,500 records): its own table's noise,
    the budget shared by the 1-way tables, is 30 / 8 times the median column's, and the
    summary names it (every column tied for the widest); where no column is wider than the
    median, nothing is added; a column already named as mostly noise is not named twice."""
    from oracledp.synth._table_budget import afford

    rho = zcdp_rho(0.9, 1 / 1500**2) * 0.9
    names = ["city", "country", "score", "hours", "pet", "y"]
    a = afford(1500, (30, 5, 8, 8, 4, 2), 2, columns=0, rho=rho, names=names)
    assert a["widest_one_way_noise_tv"] == pytest.approx(30 / 8 * a["shared_one_way_noise_tv"])
    assert "the widest column, 'city' (30 levels), would carry about 0.18" in a["summary"]
    even = afford(1500, (8, 8, 8), 2, columns=0, rho=rho, names=["a", "b", "c"])
    assert "widest" not in even["summary"]
    huge = afford(300, (400, 2, 2), 2, columns=0, rho=rho, names=["id", "a", "b"])
    assert huge["noisy_columns"] == ["id"] and "widest" not in huge["summary"]
    many = afford(10**6, (30, 5, 8, 8, 4, 2), 2, columns=0, rho=rho, names=names)
    assert many["widest_one_way_noise_tv"] < 0.01 and "widest" not in many["summary"]
    # pure methods: Laplace noise, the budget shared by d tables (d times, not sqrt(d))
    pure = afford(1500, (30, 5, 8, 8, 4, 2), 2, columns=0, epsilon=1.0, names=names)
    assert pure["widest_one_way_noise_tv"] == pytest.approx(30 * 6 * 2.0 / (2 * 1500))
    assert "the widest column, 'city' (30 levels)" in pure["summary"]
    # columns tied for the widest are all named
    two = afford(1500, (30, 5, 8, 30, 4, 2), 2, columns=0, rho=rho, names=names)
    assert ("the widest columns, 'city', 'hours' (30 levels each), would carry about "
            in two["summary"]) and "their levels' shares" in two["summary"]


def test_afford_names_a_column_whose_own_table_is_noise() -> None:
    """A column whose 1-way table, the budget shared by the d 1-way tables alone, carries
    noise of WIDE_COLUMN_NOTE or more is named in plan_ and its summary, where the narrowest
    column's does not; one level fewer, just below the note, is not."""
    from oracledp.synth._table_budget import WIDE_COLUMN_NOTE, afford

    n, rho = 2_000, 0.0146
    d = 5  # the median column has 2 levels
    per_level = math.sqrt(2.0 / math.pi) / math.sqrt(rho) / (2.0 * n) * math.sqrt(d)
    edge = WIDE_COLUMN_NOTE / per_level  # levels at which a column reaches the note
    lo, hi = math.floor(edge), math.ceil(edge)
    assert lo * per_level < WIDE_COLUMN_NOTE <= hi * per_level and lo > 2
    a = afford(n, (hi, lo, 2, 2, 2), 2, columns=0, rho=rho,
               names=["wide", "narrow", "b", "c", "y"])
    assert a["noisy_columns"] == ["wide"]
    assert f"'wide' ({hi:,} levels" in a["summary"] and "'narrow'" not in a["summary"]
    assert "leave the column out" in a["summary"]
    # three wide columns of five (the median is wide): all named; a tiny table, where every
    # column is noise, names none (the figures say it)
    three = afford(n, (hi, hi, hi, 2, 2), 2, columns=0, rho=rho,
                   names=["a", "b", "c", "d", "y"])
    assert three["noisy_columns"] == ["a", "b", "c"]
    assert afford(12, (hi, 2, 2), 2, columns=0, rho=rho)["noisy_columns"] == []
    # pure epsilon (Laplace, scale 2 / epsilon a cell; shared: times d, not sqrt(d)):
    # 334 levels * 1 / 2,000 * 3 = 0.501 is named, 333 (0.4995) is not
    assert afford(n, (334, 2, 2), 2, columns=0, epsilon=1.0)["noisy_columns"] == ["0"]
    assert afford(n, (333, 2, 2), 2, columns=0, epsilon=1.0)["noisy_columns"] == []


def _fail_on_noise(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: Any, **k: Any) -> None:
        raise AssertionError("noise drawn before the input was refused")

    for name in ("gaussian", "laplace", "exponential_mechanism"):
        monkeypatch.setattr(noise_mod, name, boom)
    monkeypatch.setattr(tsm, "check_rng", boom)  # randomness starts there, after every check


def test_afford_uses_laplace_noise_for_the_pure_methods_and_refuses_an_underflow(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Pure methods (Laplace, scale 2 / epsilon: expected |noise| 2 / epsilon a cell, and d
    tables sharing epsilon each get epsilon / d) are not described by the Gaussian figures of
    rho = epsilon^2 / 2, which understated their noise about 6-fold on a wide table; a budget
    that underflows is one ValueError before any noise, not a ZeroDivisionError; epsilon
    1e-20 fits (it divided by zero), below 1e-100 is refused before anything is read."""
    from oracledp.synth._table_budget import afford

    n, shape, eps = 300, (5,) * 41, 0.9
    a = afford(n, shape, 2, columns=0, epsilon=eps)
    assert a["one_way_noise_tv"] == pytest.approx(5 * (2 / eps) / (2 * n))
    assert a["shared_one_way_noise_tv"] == pytest.approx(41 * a["one_way_noise_tv"])
    g = afford(n, shape, 2, columns=0, rho=eps**2 / 2)
    assert a["shared_one_way_noise_tv"] > 5 * g["shared_one_way_noise_tv"]
    assert "1 or more (noise only)" in afford(10, shape, 2, columns=0, epsilon=eps)["summary"]
    for kw in ({"rho": 0.0}, {"epsilon": 0.0}, {"rho": -1.0}, {"epsilon": float("nan")}):
        with pytest.raises(ValueError, match="too small to compute with"):
            afford(n, shape, 2, columns=0, **kw)
    with pytest.raises(ValueError, match="exactly one"):
        afford(n, shape, 2, columns=0, rho=1.0, epsilon=1.0)
    only = afford(12, (2, 2, 3), 2, columns=0, epsilon=0.1, fallback=False)
    assert only["one_way_only"] and "this method measures" not in only["summary"]
    # through a fit: the pure method's plan is Laplace's; a vanishing epsilon is refused
    ts = TableSynthesizer("independent", epsilon=1.0, random_state=0).fit(_table(300),
                                                                          _schema())
    m = ts.numeric_["method_epsilon"]
    assert ts.plan_["one_way_noise_tv"] == pytest.approx(2 * (2 / m) / 600)  # median: 2 cells
    for method in ("oracle-query-pgm", "independent", "mst"):  # tiny, but computable
        tiny = TableSynthesizer(method, epsilon=1e-20, random_state=0).fit(_table(300),
                                                                          _schema())
        assert tiny.sample(5, random_state=0).shape == (5, 3)
    _fail_on_noise(monkeypatch)
    for method in ("oracle-query-pgm", "independent", "mst"):
        with pytest.raises(ValueError, match="too small to compute with"):
            TableSynthesizer(method, epsilon=1e-101, random_state=0).fit(_table(300), _schema())


class _Planned(Exception):
    """Raised where randomness would start: the fit has its plan_ and has drawn nothing."""


@pytest.mark.parametrize("table", ["titanic", "biopsy", "health_insurance", "doctor_visits",
                                   "nhefs"])
def test_the_plan_notes_every_bundled_cell_worse_than_independent_marginals(
        table: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What docs/synthetic-data.md and afford's docstring claim, from public facts alone: the
    note (or the 1-way-only statement) is made in every cell where the default's native 2-way
    TV was above exact independent marginals' in docs/results/synth-rounded (all of nhefs, and
    epsilon 0.1 everywhere, biopsy 0.5), and also on biopsy at 1 and 2 and titanic at 0.5;
    nowhere else.  And nhefs's shared figures, 0.052 / 0.026 / 0.013 at 0.5 / 1 / 2."""
    from oracledp.datasets import table_csv, table_schema

    def stop(*a: Any, **k: Any) -> None:
        raise _Planned

    monkeypatch.setattr(tsm, "check_rng", stop)
    path = table_csv(table, tmp_path / f"{table}.csv", split="all")
    noted = {"titanic": {0.1, 0.5}, "biopsy": {0.1, 0.5, 1.0, 2.0}, "nhefs": {0.1, 0.5, 1.0, 2.0},
             "health_insurance": {0.1}, "doctor_visits": {0.1}}[table]
    for eps in (0.1, 0.5, 1.0, 2.0):
        ts = TableSynthesizer("oracle-query-pgm", epsilon=eps, random_state=0)
        with pytest.raises(_Planned):
            ts.fit(path, table_schema(table))
        said = ts.plan_["summary"]
        flagged = "cannot be reproduced at this budget" in said or "1-way tables only" in said
        assert flagged is (eps in noted), (table, eps, said)
        if table == "nhefs" and eps >= 0.5:
            want = {0.5: 0.052, 1.0: 0.026, 2.0: 0.013}[eps]
            assert round(ts.plan_["shared_one_way_noise_tv"], 3) == want


@pytest.mark.parametrize("method", ["independent", "mwem", "oracle-query-pgm"])
def test_a_huge_epsilon_fits(method: str) -> None:
    """epsilon 1e155 (past the CLI's cap, with --allow-large-epsilon) overflowed epsilon^2 / 2
    in the pure methods' bins rule, and at 1e300 the Laplace variance 2 b^2 of the
    histograms underflowed to 0 and divided by zero: both fit now, and the released zeros'
    share is the data's (the noise is negligible)."""
    df = _table(400)
    for eps in (1e155, 1e300):
        ts = TableSynthesizer(method, epsilon=eps, random_state=0).fit(df, _schema())
        out = ts.sample(400, random_state=1)
        assert out.shape == (400, 3)
        if method != "mwem":  # MWEM's few rounds need not reach the data's shares
            assert abs((out["visits"] == 0).mean() - (df["visits"] == 0).mean()) < 0.05


def test_a_subnormal_delta_is_refused_as_such_before_anything(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """delta 1e-320 made zcdp_rho 0 and was refused after the data were read with "raise
    epsilon", which cannot help: now the refusal names delta, before any noise (and the
    smallest delta that computes, 1e-300, fits)."""
    _fail_on_noise(monkeypatch)
    for method in ("oracle-query-pgm", "mst", "aim"):
        with pytest.raises(ValueError, match=r"delta \S+ is too small .* at least 1e-300"):
            TableSynthesizer(method, epsilon=10.0, delta=1e-320).fit(_table(50), _schema())
    with pytest.raises(ValueError, match=r"delta \S+ is too small"):  # before any file is read
        TableSynthesizer(epsilon=10.0, delta=1e-320).fit("/nonexistent/table.csv", _schema())
    monkeypatch.undo()
    ts = TableSynthesizer("oracle-query-pgm", epsilon=1.0, delta=1e-300, random_state=0)
    assert ts.fit(_table(300), _schema()).sample(5, random_state=0).shape == (5, 3)


def test_sample_is_iter_samples_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """sample(n) is iter_sample(n)'s blocks joined, on a model whose decoding draws (a refined
    gridded column: its fine values are dealt at random), so drawing all n at once would give
    other rows; iter_sample checks its arguments at the call."""
    import oracledp.synth._sampling as sampling

    ts = TableSynthesizer("oracle-query-pgm", epsilon=1.0, random_state=0).fit(_table(300),
                                                                               _schema())
    monkeypatch.setattr(sampling, "SAMPLE_CHUNK", 7)
    blocks = list(ts.iter_sample(20, random_state=3))
    assert [len(b) for b in blocks] == [7, 7, 6]
    whole = ts.sample(20, random_state=3)
    pd.testing.assert_frame_equal(pd.concat(blocks, ignore_index=True), whole)
    monkeypatch.setattr(sampling, "SAMPLE_CHUNK", 1000)
    assert not ts.sample(20, random_state=3).equals(whole)  # one block: other draws
    with pytest.raises(ValueError, match="number of records"):
        ts.iter_sample(0, random_state=3)  # at the call, not at the first block


def test_afford_judges_the_smallest_pair_table() -> None:
    """A 20-cell pair beside a 250-level column's 500-cell ones (n 3,000, epsilon 1): the
    smallest pair is affordable (about 0.02 of noise), so pairs are measured; the median pair
    (about 0.54) had made the default measure 1-way tables only."""
    from oracledp.synth._table_budget import PAIR_NOISE_LIMIT, afford

    a = afford(3_000, (2, 10, 250), 2, columns=0, rho=zcdp_rho(1.0, 1 / 3_000**2))
    assert a["pair_noise_tv"] == pytest.approx(0.0216, abs=5e-4) and not a["one_way_only"]
    assert a["pair_noise_tv"] * 500 / 20 > PAIR_NOISE_LIMIT  # the median pair would not be


@pytest.mark.parametrize(("lower", "upper", "step"), [
    (0, 0.7, 0.1), (0.1, 0.7, 0.2), (0, 0.35, 0.05), (0, 3.3, 0.1), (0.05, 0.95, 0.05)])
@pytest.mark.parametrize("method", ["oracle-query-pgm", "independent"])
def test_decimal_grid_whose_last_point_overshoots_in_floating_point(
        lower: float, upper: float, step: float, method: str) -> None:
    """lower + K step lands past upper in floating point on these grids (0 + 7 * 0.1 is
    0.7000000000000001): the fine bins' cut points are grid values, so the fit runs, and the
    synthetic values stay on the grid and within the bounds."""
    K = round((upper - lower) / step)
    assert lower + K * step > upper  # the overshoot this test is about
    rng = np.random.default_rng(0)
    k = np.minimum(rng.geometric(0.4, 300) - 1, K)
    df = pd.DataFrame({"v": np.round(lower + k * step, 2),
                       "y": rng.choice(["a", "b"], 300)})
    schema = TableSchema.from_dict({
        "target": {"name": "y", "labels": ["a", "b"]},
        "columns": [{"name": "v", "type": "numeric", "lower": lower, "upper": upper,
                     "step": step}]})
    fake = TableSynthesizer(method, epsilon=1.0, random_state=0).fit(df, schema).sample(
        500, random_state=1)
    v = fake["v"].to_numpy(dtype=float)
    assert v.min() >= lower and v.max() <= upper
    np.testing.assert_allclose((v - lower) / step, np.round((v - lower) / step), atol=1e-6)


def test_a_heap_does_not_turn_noise_into_heaps_elsewhere_on_its_levels() -> None:
    """501 fine bins, 2,000 records on one and 6 on every other (a new user's column: 40 % at
    one value); the heap fails its levels' test, which keeps their splits plain, and a plain
    split of a parent holding less than its children's noise is noise.  Flattened, such
    parents split evenly: over six seeds at most 60 of the 3,000 other bins exceed 30 (5
    times their count; the plain splits gave 253), and the heap keeps its mass."""
    m, L = 501, nm.tree_levels(501)
    x = np.full(m, 6.0)
    x[123] = 2000.0
    sigma = math.sqrt(L / 0.0008)  # a column's share at 5,000 records, epsilon 1
    high = 0
    for seed in range(6):
        _, flat = nm.tree_histogram(x, np.random.default_rng(seed), sigma=sigma, flat=4.0)
        assert flat[123] > 1800 and flat.sum() == pytest.approx(x.sum())
        high += int((np.delete(flat, 123) > 30).sum())
    assert high <= 60


@pytest.mark.parametrize(("lower", "upper", "step"), [
    (20200101, 20201231, 1), (1_000_000, 1_000_100, 1), (1_000_000.5, 1_000_002.5, 0.1)])
def test_grid_values_of_many_digits_are_distinct_levels(lower: float, upper: float,
                                                        step: float) -> None:
    """Grid values that agree in their first six digits (dates written 20200101, large
    counts) are distinct labels: the fit runs (it was refused: 'lists a level twice') and
    the synthetic values are on the grid."""
    K = round((upper - lower) / step)
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"v": np.round(lower + rng.integers(0, K + 1, 400) * step, 1),
                       "y": rng.choice(["a", "b"], 400)})
    schema = TableSchema.from_dict({
        "target": {"name": "y", "labels": ["a", "b"]},
        "columns": [{"name": "v", "type": "numeric", "lower": lower, "upper": upper,
                     "step": step}]})
    fake = TableSynthesizer("independent", epsilon=1.0, random_state=0).fit(df, schema).sample(
        300, random_state=1)
    v = fake["v"].to_numpy(dtype=float)
    assert v.min() >= lower and v.max() <= upper and len(np.unique(v)) > min(50, K // 2)
    np.testing.assert_allclose((v - lower) / step, np.round((v - lower) / step), atol=1e-6)


def test_released_cut_points_are_grid_values_as_written(tmp_path: pathlib.Path) -> None:
    """A column on 0.05-60.05 by 0.1: the coarse cut points the fit releases (and saves) are
    its grid values written with the step's 2 decimals (6.95, not 6.949999999999999), and the
    saved model samples what the fitted one does."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x": np.round(0.05 + rng.integers(0, 601, 2000) * 0.1, 2),
                         "y": rng.choice(["a", "b"], 2000)})
    schema = TableSchema.from_dict({
        "target": {"name": "y", "labels": ["a", "b"]},
        "columns": [{"name": "x", "type": "numeric", "lower": 0.05, "upper": 60.05,
                     "step": 0.1}]})
    ts = TableSynthesizer("oracle-query-pgm", epsilon=1.0, random_state=0).fit(data, schema)
    ts.save(tmp_path / "m")
    cuts = json.loads((tmp_path / "m" / "synth-model.json").read_text())["params"]["bins"][
        "columns"]["x"]
    assert len(cuts) > 3 and all(c == round(c, 2) and len(repr(c).split(".")[1]) <= 2
                                 for c in cuts), cuts
    again = TableSynthesizer.load(tmp_path / "m")
    pd.testing.assert_frame_equal(ts.sample(300, random_state=4), again.sample(300, random_state=4))
