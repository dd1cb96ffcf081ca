"""Monotone 1-decision lists (spec docs/specs/oracle-query.md section 2, note (a))."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oracledp.oracles._base import OracleStatus
from oracledp.query_classes._base import BruteForceClassOracle, QueryClass
from oracledp.query_classes._decision_lists import (
    MonotoneDecisionLists,
    decision_list_rules,
    fubini,
)
from oracledp.query_classes._mip import HighsClassOracle, make_class_oracle


def _naive(params: np.ndarray, x: np.ndarray, d: int) -> int:
    blocks, default = decision_list_rules(params, d)
    for variables, bit in blocks:
        if any(x[j] == 1 for j in variables):
            return bit
    return default


def _n_distinct_rows(M: np.ndarray) -> int:
    return int(np.unique(M, axis=0).shape[0])


def test_fubini_and_size() -> None:
    assert [fubini(n) for n in range(7)] == [1, 1, 3, 13, 75, 541, 4683]
    for d, size in zip(range(1, 7), (4, 12, 52, 300, 2164, 18732), strict=True):
        cls = MonotoneDecisionLists(d)
        P = cls.enumerate()
        assert cls.size == size == P.shape[0] == _n_distinct_rows(P)
        cls.check_params(P)  # every enumerated row is canonical


@pytest.mark.parametrize("d", [1, 2, 3])
def test_canonical_rows_are_distinct_functions(d: int) -> None:
    cls = MonotoneDecisionLists(d)
    table = cls.evaluate(cls.enumerate(), cls.record_universe())
    assert _n_distinct_rows(table) == cls.size


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_separator_injective_and_zero_needed(d: int) -> None:
    cls = MonotoneDecisionLists(d)
    P = cls.enumerate()
    U = cls.separator()
    assert U.shape == (1 + d + math.comb(d, 2), d)
    assert _n_distinct_rows(cls.evaluate(P, U)) == cls.size
    # dropping the point 0 breaks injectivity (OR of all variables vs the constant 1)
    assert not U[0].any()
    assert _n_distinct_rows(cls.evaluate(P, U[1:])) < cls.size
    # negated and 0/1-loss classes are separated by the same points
    assert _n_distinct_rows(cls.negated().evaluate(P, U)) == cls.size
    loss = cls.zero_one_loss()
    assert _n_distinct_rows(loss.evaluate(P, loss.separator())) == cls.size


@pytest.mark.parametrize("d", [1, 2, 3])
def test_dual_separator_dictators(d: int) -> None:
    cls = MonotoneDecisionLists(d)
    X = cls.record_universe()
    G = cls.dual_separator()
    np.testing.assert_array_equal(cls.evaluate(G, X), X.T.astype(np.uint8))
    assert _n_distinct_rows(cls.evaluate(G, X).T) == X.shape[0]


def test_evaluate_matches_naive_loop() -> None:
    d = 4
    cls = MonotoneDecisionLists(d)
    rng = np.random.default_rng(1)
    P = cls.enumerate()[rng.choice(cls.size, size=60, replace=False)]
    Z = rng.integers(0, 2, size=(25, d)).astype(float)
    got = cls.evaluate(P, Z)
    want = np.array([[_naive(p, z, d) for z in Z] for p in P], dtype=np.uint8)
    np.testing.assert_array_equal(got, want)


def test_rules_readout() -> None:
    # ranks (2, 1, 0), default 0: block 1 = {x_1} -> 0, block 2 = {x_0} -> 1
    assert decision_list_rules([2, 1, 0, 0], 3) == ([([1], 0), ([0], 1)], 0)
    assert decision_list_rules([0, 0, 0, 1], 3) == ([], 1)


@pytest.mark.parametrize("bad", [
    [2, 0, 0, 0],      # gap: block 1 unused
    [1, 3, 0, 0],      # gap: block 2 unused
    [1, 0, 0, 2],      # default not a bit
    [4, 0, 0, 0],      # rank > d
    [-1, 0, 0, 0],     # negative rank
    [0.5, 0, 0, 0],    # not an integer
    [1, 0, 0],         # wrong width
])
def test_check_params_rejects(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        MonotoneDecisionLists(3).check_params(bad)


def test_brute_oracle_on_loss_class() -> None:
    d = 3
    cls = MonotoneDecisionLists(d)
    loss = cls.zero_one_loss()
    rng = np.random.default_rng(2)
    Z = rng.integers(0, 2, size=(30, d)).astype(float)
    y = rng.integers(0, 2, size=30)
    pts = np.vstack([loss.encode(Z, y), loss.separator()])
    w = np.concatenate([np.ones(30), rng.laplace(0, 3.0, size=loss.separator().shape[0])])
    res = make_class_oracle(loss, "brute").solve(pts, w)
    assert res.certified
    P = cls.enumerate()
    vals = loss.evaluate(P, pts).astype(float) @ w
    assert res.objective == pytest.approx(vals.min())
    assert BruteForceClassOracle(cls).solve(Z, np.ones(30)).certified


def _random_points(cls: QueryClass, rng: np.random.Generator) -> np.ndarray:
    """Separator points plus random records (labelled for a 0/1-loss class)."""
    m = int(rng.integers(1, 25))
    extra = rng.integers(0, 2, size=(m, cls.point_dim)).astype(float)
    return np.vstack([cls.separator(), extra])


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_highs_matches_brute_force(d: int) -> None:
    base = MonotoneDecisionLists(d)
    rng = np.random.default_rng(10 + d)
    for variant in (base, base.negated(), base.zero_one_loss()):
        highs = make_class_oracle(variant, "highs")
        brute = make_class_oracle(variant, "brute")
        assert highs.certifiable
        for _ in range(12):
            Z = _random_points(variant, rng)
            w = rng.laplace(0.0, 2.0, size=Z.shape[0])  # weights of both signs
            r = highs.solve(Z, w)
            b = brute.solve(Z, w)
            assert r.certified, r
            assert r.objective == pytest.approx(b.objective, abs=1e-7)
            assert r.bound <= r.objective + 1e-6
            # the returned row is canonical and its recomputed objective is the minimum
            P = variant.check_params(r.params)
            assert float(variant.evaluate(P, Z)[0].astype(float) @ w) == pytest.approx(
                r.objective, abs=1e-9)


def test_highs_recovers_a_planted_list() -> None:
    d = 4
    cls = MonotoneDecisionLists(d)
    U = cls.record_universe()
    for row in cls.enumerate()[:: 37]:
        # weights -1 where the target is 1, +1 where it is 0: the target is the unique minimizer
        w = np.where(cls.evaluate(row, U)[0] == 1, -1.0, 1.0)
        r = make_class_oracle(cls, "highs").solve(U, w)
        assert r.certified
        np.testing.assert_array_equal(r.params, row)


def test_highs_edge_cases() -> None:
    cls = MonotoneDecisionLists(3)
    orc = make_class_oracle(cls, "highs")
    z = np.array([[1, 0, 1], [1, 0, 1], [0, 0, 0]], dtype=float)
    r = orc.solve(z, [1.0, -1.0, -0.5])  # the first two cancel; only q(0) = b counts
    assert r.certified and r.objective == pytest.approx(-0.5)
    assert r.params is not None and r.params[-1] == 1
    empty = orc.solve(z[:2], [1.0, -1.0])
    assert empty.certified and empty.objective == 0.0
    with pytest.raises(TypeError, match="no local search"):
        make_class_oracle(cls, "local-search")


def test_highs_time_limit_is_not_certified() -> None:
    d = 12
    cls = MonotoneDecisionLists(d)
    rng = np.random.default_rng(0)
    Z = rng.integers(0, 2, size=(400, d)).astype(float)
    r = HighsClassOracle(cls, time_limit=1e-4).solve(Z, rng.normal(size=400))
    assert not r.certified
    assert r.status is not OracleStatus.OPTIMAL
