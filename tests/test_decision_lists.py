"""Monotone 1-decision lists (spec oracle-query.md section 2, note (a))."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oracledp.classes.base import BruteForceClassOracle
from oracledp.classes.decision_lists import (
    MonotoneDecisionLists,
    decision_list_rules,
    fubini,
)
from oracledp.classes.mip import make_class_oracle


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


def test_brute_oracle_on_loss_class_and_no_mip() -> None:
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
    with pytest.raises(TypeError, match="no MIP formulation"):
        make_class_oracle(cls, "highs")
