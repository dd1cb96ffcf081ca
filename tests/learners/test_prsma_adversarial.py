"""PRSMA + ClassRSPMBase against adversarial oracles (robust privacy, 004 Theorem 8).

Every oracle here misbehaves only when a chosen *poison* record is among the points it
is asked about (or on every call), as in the poison oracle of the test plan.  Whatever
it does (raise, lie about certification, answer outside the class, answer NaN, sleep),
PRSMA on D (no poison record) and on the neighbour D' (one record replaced by the
poison record) must each end in a release or FAIL, never an exception, and a release
must be a valid hypothesis.  At the base level, every answer the base does not FAIL
must be exactly the exact-oracle answer for the same noise (the ``"brute"`` path).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from oracledp._errors import DiagnosticsWarning
from oracledp.learners._prsma import FAIL, prsma
from oracledp.learners._prsma_bases import ClassRSPMBase
from oracledp.oracles._base import OracleStatus
from oracledp.query_classes._base import ClassOracleResult
from oracledp.query_classes._boolean import MonotoneConjunctions

CLS = MonotoneConjunctions(2)
LOSS = CLS.zero_one_loss()
ALL = CLS.enumerate()
POISON = np.array([1.0, 1.0, 0.0])  # the record (z = (1, 1), y = 0) as a loss point
EPS, DELTA = 20.0, 0.9  # K = 14 parts, R = 63 runs: 882 oracle calls per PRSMA run
K = 14


def _neighbours(seed: int = 0, n: int = 6 * K) -> tuple[np.ndarray, np.ndarray]:
    """D without the poison record, D' = D with record 0 replaced by it (n mod K = 0)."""
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 2, size=(n, 2)).astype(float)
    Z[Z.sum(axis=1) == 2] = [1.0, 0.0]
    y = (Z[:, 0] == 1).astype(int)
    D = LOSS.encode(Z, y)
    D2 = D.copy()
    D2[0] = POISON
    return D, D2


def _poisoned(points: Any) -> bool:
    return bool((np.asarray(points) == POISON).all(axis=1).any())


def _exact(points: Any, weights: Any) -> tuple[int, float, np.ndarray]:
    """Index of the exact minimizer over the 4 conjunctions, its objective, all objectives."""
    vals = LOSS._evaluate(ALL, np.asarray(points, dtype=float)).astype(float) @ np.asarray(
        weights, dtype=float)
    i = int(np.argmin(vals))
    return i, float(vals[i]), vals


def _answer(params: Any, objective: Any, bound: Any = None, certified: Any = True,
            status: OracleStatus = OracleStatus.OPTIMAL) -> ClassOracleResult:
    return ClassOracleResult(params, objective, objective if bound is None else bound,
                             certified, status, 0.0, "adversary")


class Adversary:
    """An oracle for LOSS: exact, except ``misbehave(points, weights)`` when triggered."""

    name = "adversary"
    certifiable = True
    query_class = LOSS

    def __init__(self, misbehave: Callable[[Any, Any], Any], always: bool = False) -> None:
        self.misbehave = misbehave
        self.always = always

    def solve(self, points: Any, weights: Any) -> ClassOracleResult:
        if self.always or _poisoned(points):
            return self.misbehave(points, weights)
        i, obj, _ = _exact(points, weights)
        return _answer(ALL[i].copy(), obj)


def _valid(out: Any) -> bool:
    """A release of PRSMA over CLS is one parameter row of the class."""
    row = np.asarray(out)
    return (row.dtype.kind == "i" and row.shape == (2,) and bool(np.isin(row, (0, 1)).all())
            and CLS.check_params(row).shape == (1, 2))


def _prsma_both(base: ClassRSPMBase, seed: int = 1,
                on: tuple[str, ...] = ("D", "D'")) -> dict[str, Any]:
    """PRSMA on D and D' (must not raise); every release must be a valid hypothesis.

    ``on=("D'",)`` skips D: for callers whose adversary misbehaves only on the poison record
    (``always=False``) and that already ran the same base mode with an honest oracle on D at the
    same seed, whose run on D is then the same run, call for call."""
    D, D2 = _neighbours()
    out = {}
    for name, data in (("D", D), ("D'", D2)):
        if name not in on:
            continue
        res = prsma(data, base, EPS, DELTA, random_state=seed)
        assert res.failed == (res.output is FAIL)
        assert res.failed or _valid(res.output), (name, res.output)
        out[name] = res
    return out


def _base_agrees_with_exact(base: ClassRSPMBase, data: np.ndarray, size: int = 20,
                            seed: int = 7) -> Any:
    """The base's answer is FAIL or exactly the brute path's for the same noise."""
    got = base(data, 0.5, np.random.default_rng(seed), size)
    if got is not FAIL:
        want = ClassRSPMBase(CLS, oracle="brute")(data, 0.5, np.random.default_rng(seed), size)
        np.testing.assert_array_equal(got, want)
    return got


# ------------------------------------------------------------------------ (1) exceptions
def _raise_memory(points: Any, weights: Any) -> Any:
    np.empty(1 << 50, dtype=np.uint8)  # a real MemoryError (1 PiB: allocation fails)


def _raise_recursion(points: Any, weights: Any) -> Any:
    def down(k: int) -> int:
        return down(k + 1) + 1
    return down(0)  # a real RecursionError


class _Custom(Exception):
    pass


def _raise(exc: BaseException) -> Callable[[Any, Any], Any]:
    def misbehave(points: Any, weights: Any) -> Any:
        raise exc
    return misbehave


RAISERS = [_raise_memory, _raise_recursion, _raise(ValueError("x")),
           _raise(ZeroDivisionError()), _raise(_Custom()), _raise(KeyError(3)),
           lambda p, w: 1 / 0, lambda p, w: None.params]


def test_oracle_raising_on_a_record_is_fail_not_an_escape() -> None:
    D, D2 = _neighbours()
    for misbehave in RAISERS:
        base = ClassRSPMBase(CLS, oracle=Adversary(misbehave))
        res = _prsma_both(base)
        assert not res["D"].failed  # harmless without the poison record (seed 1)
        assert base(D2[:6], 0.5, np.random.default_rng(0), 3) is FAIL
        assert base(D[:6], 0.5, np.random.default_rng(0), 3) is not FAIL
        always = ClassRSPMBase(CLS, oracle=Adversary(misbehave, always=True))
        assert all(r.failed for r in _prsma_both(always).values())


def test_repro_crashing_oracle_memory_error() -> None:
    """The audit's repro (an oracle that raises MemoryError on one record), small."""
    base = ClassRSPMBase(CLS, oracle=Adversary(_raise(MemoryError("solver crashed"))))
    for seed in range(3):
        _prsma_both(base, seed=seed)


def test_keyboard_interrupt_is_not_swallowed() -> None:
    base = ClassRSPMBase(CLS, oracle=Adversary(_raise(KeyboardInterrupt()), always=True))
    with pytest.raises(KeyboardInterrupt):
        base(_neighbours()[0][:6], 0.5, np.random.default_rng(0), 1)


# ------------------------------------------------------------------------ (2) lies
def _worst(points: Any, weights: Any) -> ClassOracleResult:
    """Certified, self-consistent, but the *worst* hypothesis (objective and bound = its own)."""
    _, _, vals = _exact(points, weights)
    j = int(np.argmax(vals))
    return _answer(ALL[j].copy(), float(vals[j]))


def _worst_with_min_objective(points: Any, weights: Any) -> ClassOracleResult:
    """Certified, reports the true minimum as objective and bound, returns the worst point."""
    _, obj, vals = _exact(points, weights)
    return _answer(ALL[int(np.argmax(vals))].copy(), obj)


def _right_point_wrong_objective(points: Any, weights: Any) -> ClassOracleResult:
    i, obj, _ = _exact(points, weights)
    return _answer(ALL[i].copy(), obj - 5.0)


def _bound_above_objective(points: Any, weights: Any) -> ClassOracleResult:
    i, obj, _ = _exact(points, weights)
    return _answer(ALL[i].copy(), obj, bound=obj + 5.0)


LIARS = [_worst, _worst_with_min_objective, _right_point_wrong_objective,
         _bound_above_objective]


def test_oracle_lying_about_certification_is_fail() -> None:
    D, D2 = _neighbours()
    for misbehave in LIARS:
        base = ClassRSPMBase(CLS, oracle=Adversary(misbehave))
        assert not _prsma_both(base)["D"].failed
        assert _base_agrees_with_exact(base, D2[:8]) is FAIL
        np.testing.assert_array_equal(_base_agrees_with_exact(base, D[:8]).shape, (20, 2))
        always = ClassRSPMBase(CLS, oracle=Adversary(misbehave, always=True))
        assert all(r.failed for r in _prsma_both(always).values())


def test_uncertified_flag_or_status_is_fail() -> None:
    D = _neighbours()[0][:8]

    def honest(points: Any, weights: Any, **kw: Any) -> ClassOracleResult:
        i, obj, _ = _exact(points, weights)
        return _answer(ALL[i].copy(), obj, **kw)

    for kw in ({"certified": False}, {"certified": 1}, {"certified": "yes"},
               {"status": OracleStatus.TIME_LIMIT}):
        base = ClassRSPMBase(CLS, oracle=Adversary(lambda p, w, kw=kw: honest(p, w, **kw),
                                                   always=True))
        assert base(D, 0.5, np.random.default_rng(0), 3) is FAIL


# ------------------------------------------------------------------------ (3) out of space
BAD_PARAMS = [np.array([2, 0]), np.array([-1, 1]), np.array([0.5, 1.0]), np.array([1, 0, 1]),
              np.array([[1, 0]]), np.array([], dtype=np.int64), np.array(["1", "0"]),
              np.array([1, 0], dtype=object), [1, [0]], "10", 7, None,
              np.array([np.iinfo(np.int64).min, 0]), np.array([2**64 - 1, 0], dtype=np.uint64),
              np.array([1e300, 0.0])]


def test_out_of_space_answers_are_fail() -> None:
    D2 = _neighbours()[1]
    for k, bad in enumerate(BAD_PARAMS):
        def misbehave(points: Any, weights: Any, bad: Any = bad) -> Any:
            return _answer(bad, _exact(points, weights)[1])
        base = ClassRSPMBase(CLS, oracle=Adversary(misbehave))
        assert base(D2[:6], 0.5, np.random.default_rng(0), 3) is FAIL
        if k < 3:  # full PRSMA runs for a few (each costs about 0.1 s)
            assert not _prsma_both(base)["D"].failed
        always = ClassRSPMBase(CLS, oracle=Adversary(misbehave, always=True))
        assert all(r.failed for r in _prsma_both(always).values())
    # not a ClassOracleResult at all
    for answer in (None, ALL[0], {"params": ALL[0]}, (ALL[0], 0.0), "FAIL"):
        base = ClassRSPMBase(CLS, oracle=Adversary(lambda p, w, a=answer: a, always=True))
        assert all(r.failed for r in _prsma_both(base).values())


# ------------------------------------------------------------------------ (4) NaN / inf
def test_nan_and_infinite_answers_are_fail() -> None:
    D2 = _neighbours()[1]
    nan = float("nan")

    def variants(points: Any, weights: Any) -> list[ClassOracleResult]:
        i, obj, _ = _exact(points, weights)
        row = ALL[i].astype(float)
        return [_answer(np.array([nan, 0.0]), obj), _answer(np.array([np.inf, 1.0]), obj),
                _answer(row, nan), _answer(row, np.inf), _answer(row, -np.inf, bound=-np.inf),
                _answer(row, obj, bound=nan), _answer(row, np.float64(nan)),
                _answer(row, np.array([obj])), _answer(row, "0.0")]

    for k in range(9):
        base = ClassRSPMBase(CLS, oracle=Adversary(lambda p, w, k=k: variants(p, w)[k]))
        assert base(D2[:6], 0.5, np.random.default_rng(0), 3) is FAIL
        if k in (0, 2, 5):  # full PRSMA runs for a few (each costs about 0.1 s)
            assert not _prsma_both(base)["D"].failed
        always = ClassRSPMBase(CLS, oracle=Adversary(lambda p, w, k=k: variants(p, w)[k],
                                                     always=True))
        assert all(r.failed for r in _prsma_both(always).values())


# ------------------------------------------------------------------------ (5) sleep
def _sleepy(delay: float, answer: Callable[[Any, Any], Any] | None = None
            ) -> Callable[[Any, Any], Any]:
    def misbehave(points: Any, weights: Any) -> Any:
        time.sleep(delay)
        if answer is not None:
            return answer(points, weights)
        i, obj, _ = _exact(points, weights)
        return _answer(ALL[i].copy(), obj)
    return misbehave


def test_sleeping_oracle_valid_answers_work_slow_ones_fail() -> None:
    D, D2 = _neighbours()
    # brief sleeps then a valid answer: accepted (with or without a time limit)
    for limit in (None, 5.0):
        base = ClassRSPMBase(CLS, oracle=Adversary(_sleepy(0.001), always=True), time_limit=limit)
        got = _base_agrees_with_exact(base, D[:8], size=5)
        assert got is not FAIL
    # over the limit: FAIL, even though the answer is right
    # (limits far above an honest call's time, so a loaded machine does not fail D's calls)
    slow = ClassRSPMBase(CLS, oracle=Adversary(_sleepy(0.8)), time_limit=0.5)
    assert slow(D2[:6], 0.5, np.random.default_rng(0), 3) is FAIL
    assert slow(D[:6], 0.5, np.random.default_rng(0), 3) is not FAIL
    assert not prsma(D, slow, EPS, DELTA, random_state=1).failed  # D: no call sleeps
    _prsma_both(ClassRSPMBase(CLS, oracle=Adversary(_sleepy(0.05)), time_limit=0.02))
    # slow and then invalid or raising: FAIL, no escape
    for answer in (_worst, _raise(MemoryError())):
        base = ClassRSPMBase(CLS, oracle=Adversary(_sleepy(0.05, answer)), time_limit=0.02)
        _prsma_both(base)
        base = ClassRSPMBase(CLS, oracle=Adversary(_sleepy(0.002, answer)))  # no limit
        _prsma_both(base)
    with pytest.raises(ValueError, match="time_limit"):
        ClassRSPMBase(CLS, oracle=Adversary(_worst), time_limit=0.0)


# ------------------------------------------------------------------------ large-class modes
def test_unverifiable_by_enumeration_needs_a_certificate_the_base_checks() -> None:
    """verify_limit=0 forces the large-class path: pointwise certificate or (opt-in) bound."""
    D, D2 = _neighbours()
    honest = Adversary(_worst, always=False)
    pointwise = ClassRSPMBase(CLS, oracle=honest, verify_limit=0)
    assert pointwise.verification == "pointwise"
    got = [_base_agrees_with_exact(pointwise, D[:8], size=1, seed=s) for s in range(20)]
    assert any(g is not FAIL for g in got)  # accepted when provably optimal (here often)
    _prsma_both(pointwise)
    trusted = ClassRSPMBase(CLS, oracle=honest, verify_limit=0, trust_oracle_bound=True)
    assert trusted.verification == "pointwise+oracle-bound"
    got = _base_agrees_with_exact(trusted, D[:8], size=30)
    assert got is not FAIL  # an honest oracle's bound is accepted
    assert not _prsma_both(trusted)["D"].failed
    for misbehave in LIARS[1:] + RAISERS[:3]:  # checkable lies and crashes are still FAIL
        for verify in (pointwise, trusted):
            base = ClassRSPMBase(CLS, oracle=Adversary(misbehave), verify_limit=0,
                                 trust_oracle_bound=verify.trust_oracle_bound)
            assert base(D2[:8], 0.5, np.random.default_rng(0), 5) is FAIL
            # on D (no poison record) the adversary is the honest oracle: that run is the
            # honest `verify` base's above (same mode, same seed)
            _prsma_both(base, on=("D'",))
    # the worst point, certified with its own (false) bound, is refused without trust
    always_worst = ClassRSPMBase(CLS, oracle=Adversary(_worst, always=True), verify_limit=0)
    assert always_worst(D[:8], 0.5, np.random.default_rng(0), 5) is FAIL


# ------------------------------------------------------------------------ PRSMA safety net
def test_prsma_counts_a_raising_user_base_as_a_failed_part() -> None:
    """A user-written base that lets its oracle's exception through fails its part."""
    D, D2 = _neighbours()
    exact = ClassRSPMBase(CLS, oracle="brute")

    def user_base(part: Any, eps: float, rng: np.random.Generator, size: int) -> Any:
        if _poisoned(part):
            raise MemoryError("oracle crashed")
        return exact(part, eps, rng, size)

    for data in (D, D2):
        with pytest.warns(DiagnosticsWarning):
            res = prsma(data, user_base, EPS, DELTA, random_state=1, return_diagnostics=True)
        assert res.failed or _valid(res.output)
        errors = [e for e in res.diagnostics.part_errors if e is not None]
        assert errors == ([] if data is D else ["MemoryError"])
        assert res.diagnostics.n_passing == K - len(errors)


def test_wrong_data_format_raises_before_any_part() -> None:
    base = ClassRSPMBase(CLS, oracle=Adversary(_worst))
    with pytest.raises(ValueError, match="shape"):
        prsma(np.zeros((6 * K, 2)), base, EPS, DELTA, random_state=0)  # no label column
