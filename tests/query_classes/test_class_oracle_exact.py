"""Class oracles certify only the exact argmin, near ties included.

The weighted objective ``sum_r w_r q(z_r)`` is compared in exact rational arithmetic
(floats are dyadic rationals) against every member of the class.  Instances are forced
so that the two best queries are 0 to 1e-6 apart (exactly), with duplicated points whose
merged float weights round; the brute-force oracle must return the exact argmin (ties:
first enumerated row) and the MIP oracle, whenever it certifies, the exact argmin (ties:
lexicographically smallest row), both when it decides by enumerating the class and by
the solver tie check (``enumerate_limit=0``).
"""

from __future__ import annotations

import zlib
from fractions import Fraction

import numpy as np
import pytest

from oracledp.query_classes import (
    IntegerHalfspaces,
    MonotoneConjunctions,
    MonotoneDecisionLists,
    Parities,
    QueryClass,
    make_class_oracle,
)
from oracledp.query_classes._base import class_band, exact_class_argmin

DELTAS = [0.0, 2.0**-52, 1e-15, 1e-12, 1e-9, 3e-7, 1e-6]


def _exact_values(cls: QueryClass, Z: np.ndarray, w: np.ndarray, P: np.ndarray) -> list[Fraction]:
    Q = cls.evaluate(P, Z)
    fw = [Fraction(float(x)) for x in w]
    return [sum((fw[r] for r in np.flatnonzero(Q[i])), Fraction(0)) for i in range(len(P))]


def _forced(cls: QueryClass, rng: np.random.Generator, delta: float):
    X = cls.record_universe()
    Z = cls.encode(X[rng.integers(0, len(X), size=int(rng.integers(2, 10)))])
    Z = np.vstack([Z, cls.separator()])
    # duplicates whose merged weights round in float64
    dup = rng.integers(0, len(Z), size=int(rng.integers(1, 4)))
    Z = np.vstack([Z, Z[dup], Z[dup]])
    w = rng.laplace(0.0, float(rng.choice([0.5, 3.0, 40.0])), size=len(Z))
    w[len(Z) - 2 * len(dup):] = rng.normal(0, 1, size=2 * len(dup)) * 0.1 + 1.0 / 3.0
    P = cls.enumerate()
    vals = _exact_values(cls, Z, w, P)
    order = sorted(range(len(P)), key=lambda i: vals[i])
    Q = cls.evaluate(P, Z)
    i1 = order[0]
    for i2 in order[1:4]:
        diff = np.flatnonzero(Q[i1] != Q[i2])
        if len(diff) == 0:
            continue
        r = int(rng.choice(diff))
        # move w_r so that value(i2) - value(i1) = delta exactly (when representable)
        sign = 1 if Q[i2, r] else -1
        target = Fraction(float(w[r])) - sign * (vals[i2] - vals[i1] - Fraction(delta))
        if Fraction(float(target)) == target:
            w = w.copy()
            w[r] = float(target)
            break
    return Z, w


def _reference(cls: QueryClass, Z: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, list[int]]:
    P = cls.enumerate()
    vals = _exact_values(cls, Z, w, P)
    best = min(vals)
    return P, [i for i, v in enumerate(vals) if v == best]


CASES = [MonotoneConjunctions(4), Parities(4), IntegerHalfspaces(3, B=1),
         IntegerHalfspaces(2, B=2), MonotoneDecisionLists(3)]


@pytest.mark.parametrize("certificate", ["enumeration", "solver tie check"])
@pytest.mark.parametrize("cls", CASES, ids=lambda c: f"{c.name}-{c.d}")
def test_near_ties_decided_exactly(cls: QueryClass, certificate: str) -> None:
    rng = np.random.default_rng(zlib.crc32(f"{cls.name}{cls.d}".encode()))
    brute = make_class_oracle(cls, "brute")
    mip = make_class_oracle(cls, "highs", enumerate_limit=(
        1 << 24 if certificate == "enumeration" else 0))
    certified = total = 0
    for delta in DELTAS:
        for _ in range(4):
            Z, w = _forced(cls, rng, delta)
            P, ties = _reference(cls, Z, w)
            a = brute.solve(Z, w)
            assert a.certified
            assert a.params.tolist() == P[ties[0]].tolist()  # first enumerated among ties
            b = mip.solve(Z, w)
            total += 1
            if b.certified:
                certified += 1
                assert b.info["certificate"] == certificate
                lexi = min((P[i] for i in ties), key=lambda p: tuple(int(x) for x in p))
                got = cls.check_params(b.params)[0]
                if len(ties) == 1:
                    assert got.tolist() == lexi.tolist()
                else:  # exact ties: an exact minimizer (the MIP may not see every tie)
                    assert any(got.tolist() == P[i].tolist() for i in ties)
    assert certified >= total - 2  # the tie check settles (at most two refusals)


def test_exact_argmin_beats_float_rounding() -> None:
    """Float sums that round the wrong way: the exact comparison still orders them."""
    cls = Parities(2)
    Z = np.array([[1, 0], [0, 1], [0, 1]], dtype=float)
    P = np.array([[1, 0], [0, 1]])
    # q_(1,0) picks w0; q_(0,1) picks w1 + w2 = 1 + 2^-53 + 2^-53 exactly 1 + 2^-52
    w = np.array([1.0 + 2.0**-52, 1.0, 2.0**-53 * 2])
    assert exact_class_argmin(cls, Z, w, P) == 0  # equal exactly: the earlier row
    w2 = np.array([1.0 + 2.0**-52, 1.0, 2.0**-53])  # 1 + 2^-53 < 1 + 2^-52 exactly
    assert float(w2[1] + w2[2]) == 1.0 + 0.0  # the float sum loses the half ulp...
    assert exact_class_argmin(cls, Z, w2, P) == 1  # ...the exact comparison does not
    assert class_band(3, np.array([1.0, 2.0, -3.0])) == 0.0  # integer weights: exact
    assert class_band(3, w2) > 0.0


def test_prsma_base_enumeration_argmin_is_exact() -> None:
    """PRSMA's class-RSPM base picks its own enumeration argmin exactly: two hypotheses
    whose float values tie (1 and 1 + 2^-53, which rounds to 1) are told apart."""
    from types import SimpleNamespace

    from oracledp.learners._prsma_bases import ClassRSPMBase

    fake = SimpleNamespace(_patterns=np.array([[0, 1, 1], [1, 0, 0]], dtype=np.uint8))
    data_loss = np.array([2.0, 2.0])
    etas = np.array([[1.0, 1.0, 2.0**-53],  # row 0: 2 + 1 + 2^-53 vs 2 + 1: row 1 wins
                     [1.0, 0.5, 0.5 - 2.0**-54]])  # row 0: 3 - 2^-54 < 3: row 0 wins
    floats = data_loss[None, :] + etas @ fake._patterns.T
    assert floats[0, 0] == floats[0, 1]  # the float values tie...
    got = ClassRSPMBase._argmin(fake, data_loss, etas)  # type: ignore[arg-type]
    assert got.tolist() == [1, 0]  # ...the exact ones do not
