"""Query classes: separator sets (primal, dual, negated, 0/1 loss) and weighted oracles, by brute force."""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest

from oracledp.oracles._base import OracleStatus
from oracledp.query_classes import (
    BruteForceClassOracle,
    ConjunctionsOfLiterals,
    HighsClassOracle,
    IntegerHalfspaces,
    LocalSearchClassOracle,
    LossClass,
    MonotoneConjunctions,
    MonotoneDisjunctions,
    NegatedClass,
    Parities,
    QueryClass,
    make_class_oracle,
)


def _classes(d: int) -> list[QueryClass]:
    return [MonotoneConjunctions(d), MonotoneDisjunctions(d), Parities(d),
            ConjunctionsOfLiterals(d), IntegerHalfspaces(d, B=1),
            IntegerHalfspaces(min(d, 3), B=2), IntegerHalfspaces(d, B=1, domain="pm1")]


ALL = [c for d in (1, 2, 3, 4) for c in _classes(d)]
SMALL = [c for d in (1, 2, 3) for c in _classes(d)]


def _ids(c: QueryClass) -> str:
    return f"{c.name}-d{c.d}-{getattr(c, 'B', '')}{getattr(c, 'domain', '')}"


def _naive(cls: QueryClass, p: np.ndarray, z: np.ndarray) -> int:
    """One query value by a direct loop (independent of the vectorized code)."""
    if isinstance(cls, NegatedClass):
        return 1 - _naive(cls.base, p, z)
    if isinstance(cls, LossClass):
        return _naive(cls.base, p, z[:-1]) ^ int(z[-1])
    if isinstance(cls, IntegerHalfspaces):
        # exact rational arithmetic: <w, z> >= 1
        from fractions import Fraction
        s = sum(int(wj) * Fraction(float(zj)).limit_denominator(1000) for wj, zj in zip(p, z, strict=True))
        return int(s >= 1)
    sel = [int(zj) for sj, zj in zip(p, z, strict=True) if sj == 1]
    if isinstance(cls, MonotoneConjunctions):
        return int(all(sel))
    if isinstance(cls, MonotoneDisjunctions):
        return int(any(sel))
    if isinstance(cls, Parities):
        return sum(sel) % 2
    raise AssertionError(cls)


def _injective(patterns: np.ndarray) -> bool:
    return len(np.unique(patterns, axis=0)) == patterns.shape[0]


# ---------------------------------------------------------------- separators
@pytest.mark.parametrize("cls", ALL, ids=_ids)
def test_separator_separates_class_negation_and_loss(cls: QueryClass) -> None:
    P = cls.enumerate()
    assert len(P) == cls.size == len(np.unique(P, axis=0))
    U = cls.separator()
    # sizes from the spec table
    expected_m = {"monotone-conjunctions": cls.d, "monotone-disjunctions": cls.d,
                  "parities": cls.d, "conjunctions-of-literals": 2 * cls.d,
                  "integer-halfspaces": 2 * getattr(cls, "B", 0) * cls.d}[cls.name]
    assert U.shape == (expected_m, cls.point_dim)
    assert _injective(cls.evaluate(P, U))
    neg = cls.negated()
    assert np.array_equal(neg.separator(), U)
    assert _injective(neg.evaluate(P, neg.separator()))
    assert np.array_equal(neg.evaluate(P, U), 1 - cls.evaluate(P, U))
    loss = cls.zero_one_loss()
    UL = loss.separator()
    assert UL.shape == (expected_m, cls.point_dim + 1) and np.all(UL[:, -1] == 0)
    assert _injective(loss.evaluate(P, UL))
    # the separator is needed: dropping any point breaks injectivity (minimality) for
    # the size-d separators of the boolean classes
    if cls.name != "integer-halfspaces" and len(P) > 1:
        for i in range(len(U)):
            assert not _injective(cls.evaluate(P, np.delete(U, i, axis=0)))


@pytest.mark.parametrize("cls", ALL, ids=_ids)
def test_dual_separator_separates_records(cls: QueryClass) -> None:
    G = cls.dual_separator()
    assert G.shape == (cls.d, cls.param_dim)
    X = cls.record_universe()
    Z = cls.encode(X)
    assert len(X) == 2 ** cls.d
    assert _injective(cls.evaluate(G, Z).T)  # x -> (g_j(x))_j
    neg = cls.negated()
    assert _injective(neg.evaluate(neg.dual_separator(), Z).T)
    # the dual separator functions are dictators x_j (on {0,1}) / 1[x_j >= 1] (on {-1,1})
    assert np.array_equal(cls.evaluate(G, Z).T, (X >= 1).astype(np.uint8))


def test_conjunction_separator_points_are_not_records() -> None:
    cls = ConjunctionsOfLiterals(3)
    enc = {tuple(r) for r in cls.encode(cls.record_universe())}
    assert not any(tuple(u) in enc for u in cls.separator())


# ---------------------------------------------------------------- evaluation
@pytest.mark.parametrize("cls", SMALL, ids=_ids)
def test_evaluate_matches_naive_loop(cls: QueryClass) -> None:
    rng = np.random.default_rng(1)
    P = cls.enumerate()
    Z = np.vstack([cls.encode(cls.record_universe()), cls.separator()])
    for c in (cls, cls.negated()):
        E = c.evaluate(P, Z)
        assert E.dtype == np.uint8 and E.shape == (len(P), len(Z))
        naive = np.array([[_naive(c, p, z) for z in Z] for p in P])
        assert np.array_equal(E, naive)
    loss = cls.zero_one_loss()
    ZL = np.hstack([Z, rng.integers(0, 2, size=(len(Z), 1))])
    naive = np.array([[_naive(loss, p, z) for z in ZL] for p in P])
    assert np.array_equal(loss.evaluate(P, ZL), naive)


def test_halfspace_separator_reads_weights() -> None:
    cls = IntegerHalfspaces(2, B=3)
    w = np.array([[3, -2]])
    pat = cls.evaluate(w, cls.separator())[0]
    # (+e_j/v): 1[w_j >= v]; (-e_j/v): 1[w_j <= -v], v = 1..3, j = 0..1
    plus = [int(w[0, j] >= v) for v in (1, 2, 3) for j in (0, 1)]
    minus = [int(w[0, j] <= -v) for v in (1, 2, 3) for j in (0, 1)]
    assert pat.tolist() == plus + minus


def test_input_validation() -> None:
    c = MonotoneConjunctions(3)
    with pytest.raises(ValueError, match="shape"):
        c.evaluate([[1, 0, 1]], np.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"\{0,1\}"):
        c.evaluate([[1, 0, 1]], np.full((2, 3), 0.5))
    with pytest.raises(ValueError, match="indicator"):
        c.evaluate([[2, 0, 1]], np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        c.evaluate([[1, 0, 1]], np.full((1, 3), np.nan))
    with pytest.raises(ValueError, match="encode"):
        ConjunctionsOfLiterals(3).evaluate(np.zeros((1, 6), dtype=int), np.zeros((2, 3)))
    h = IntegerHalfspaces(2, B=2)
    with pytest.raises(ValueError, match=r"\[-2, 2\]"):
        h.evaluate([[3, 0]], np.zeros((1, 2)))
    with pytest.raises(ValueError, match="rational"):
        h.evaluate([[1, 0]], np.array([[np.pi, 0.0]]))
    with pytest.raises(ValueError, match="enumeration limit"):
        Parities(30).enumerate()
    with pytest.raises(ValueError, match="0 and 1"):
        c.zero_one_loss().encode(np.zeros((2, 3)), np.array([-1, 1]))
    with pytest.raises(ValueError, match="positive integer"):
        Parities(0)
    with pytest.raises(ValueError, match="domain"):
        IntegerHalfspaces(2, domain="01x")
    with pytest.raises(ValueError, match="finite"):
        BruteForceClassOracle(c).solve(np.zeros((2, 3)), [1.0, np.inf])


# ---------------------------------------------------------------- oracles
def _random_instance(cls: QueryClass, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = cls.record_universe()
    Z = cls.encode(X[rng.integers(0, len(X), size=int(rng.integers(1, 12)))])
    Z = np.vstack([Z, cls.separator()])
    w = rng.normal(size=len(Z)) * rng.choice([0.3, 1.0, 5.0])
    if rng.random() < 0.3:
        w = np.round(w)  # ties and zero weights
    return Z, w


ORACLE_CASES = [MonotoneConjunctions(4), MonotoneDisjunctions(4), Parities(4),
                ConjunctionsOfLiterals(2), IntegerHalfspaces(3, B=1), IntegerHalfspaces(2, B=2),
                IntegerHalfspaces(3, B=1, domain="pm1")]


@pytest.mark.parametrize("cls", ORACLE_CASES, ids=_ids)
def test_highs_oracle_equals_brute_force(cls: QueryClass) -> None:
    rng = np.random.default_rng(zlib.crc32(_ids(cls).encode()))
    for c in (cls, cls.negated(), cls.zero_one_loss()):
        brute = make_class_oracle(c, "brute")
        mip = make_class_oracle(c, "highs")
        assert mip.certifiable and brute.certifiable
        for _ in range(12):
            Z, w = _random_instance(cls, rng)
            if isinstance(c, LossClass):
                Z = np.hstack([Z, rng.integers(0, 2, size=(len(Z), 1))])
            a, b = brute.solve(Z, w), mip.solve(Z, w)
            assert a.certified and b.certified, (a, b)
            assert b.status is OracleStatus.OPTIMAL
            assert b.objective == pytest.approx(a.objective, abs=1e-9)
            # objective is the exact value of the returned parameters
            direct = float(c.evaluate(b.params, Z)[0].astype(float) @ w)
            assert b.objective == pytest.approx(direct, abs=1e-9)
            assert b.bound <= b.objective + 1e-6
            # the brute-force minimum really is the minimum over the class
            allv = c.evaluate(c.enumerate(), Z).astype(float) @ w
            assert a.objective == pytest.approx(allv.min(), abs=1e-9)


def test_oracle_aggregates_duplicate_points() -> None:
    cls = Parities(3)
    z = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1]], dtype=float)
    r = HighsClassOracle(cls).solve(z, [1.0, -1.0, -0.5])  # the first two cancel
    assert r.certified and r.objective == pytest.approx(-0.5)
    assert r.info["n_points"] == 1
    empty = HighsClassOracle(cls).solve(z[:2], [1.0, -1.0])
    assert empty.certified and empty.objective == 0.0


def test_time_limit_is_not_certified() -> None:
    cls = Parities(14)
    rng = np.random.default_rng(0)
    Z = rng.integers(0, 2, size=(400, 14)).astype(float)
    r = HighsClassOracle(cls, time_limit=1e-4).solve(Z, rng.normal(size=400))
    assert not r.certified
    assert r.status is not OracleStatus.OPTIMAL


def test_heuristic_oracle_is_not_certifiable() -> None:
    cls = IntegerHalfspaces(3, B=2)
    orc = LocalSearchClassOracle(cls)
    assert orc.certifiable is False
    rng = np.random.default_rng(3)
    Z, w = _random_instance(cls, rng)
    r = orc.solve(Z, w)
    assert not r.certified and r.status is OracleStatus.GAP
    best = BruteForceClassOracle(cls).solve(Z, w).objective
    assert r.objective >= best - 1e-9
    assert make_class_oracle(cls.negated(), "local-search").certifiable is False


def test_class_equality_and_bad_oracle_kind() -> None:
    assert MonotoneConjunctions(3) == MonotoneConjunctions(3)
    assert MonotoneConjunctions(3) != MonotoneDisjunctions(3)
    assert MonotoneConjunctions(3).negated().negated() == MonotoneConjunctions(3)
    with pytest.raises(ValueError, match="unknown oracle kind"):
        make_class_oracle(Parities(2), "gurobi")
    for a, b in itertools.combinations([Parities(2), IntegerHalfspaces(2, B=1)], 2):
        assert a != b


