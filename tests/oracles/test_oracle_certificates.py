"""Certificates are exact or refused: no oracle may certify a point that is not optimal.

HiGHS's floating-point dual bound is wrong on big-M models with large integer
coefficients (features divided by large public maxima give a large common
denominator Q).  These tests fuzz the exact-oracle backends against brute force
and count *certified but wrong* answers, which must be zero; they also check
that tables with a small Q (like Adult's Q = 7,920) still certify.

Oracles fuzzed (``verify_max_points=0`` turns the enumeration check off, so the
solver's own bound, and for HiGHS the well-scaling rule, is what is tested):

* ``highs``: the default dispatching oracle (structured or monolithic),
* ``highs-monolithic``: the monolithic HiGHS model with its enumeration check,
* ``highs-bound``: the monolithic HiGHS model trusting only the well-scaling rule,
* ``cpsat`` / ``cpsat-bound``: CP-SAT with and without the enumeration check.
"""

from __future__ import annotations

import functools
import importlib.util
import math

import numpy as np
import pytest

from oracledp._errors import OracleFailure
from oracledp.learners._opdisc import opdisc
from oracledp.oracles._base import CERTIFY_ABS_TOL
from oracledp.oracles._brute import BruteForceOracle
from oracledp.oracles._halfspace import HalfspaceProblem
from oracledp.oracles._monolithic import MonolithicMIPOracle
from oracledp.oracles._registry import make_oracle
from oracledp.oracles._space import IntegerBall

HAS_ORTOOLS = importlib.util.find_spec("ortools") is not None
needs_ortools = pytest.mark.skipif(not HAS_ORTOOLS, reason="ortools missing")

# Q regimes: (label, lowest Q, highest Q)
REGIMES = (("small", 1, 1e4), ("mid", 1e4, 1e8), ("large", 1e8, 1e13))
TIME_LIMIT = 300.0  # certifies in well under a second; generous so that load cannot decide


# --------------------------------------------------------------------------------------------
# The repro: 12 rows, 5 columns each divided by a public maximum (Q about 9.7e8)
# --------------------------------------------------------------------------------------------
REPRO_INTS = np.array([
    [80544, 3513, 44, 27, 6], [19933, 1534, 33, 94, 8], [26719, 3621, 47, 91, 10],
    [13962, 3513, 29, 27, 12], [28317, 774, 43, 51, 8], [40953, 704, 42, 71, 3],
    [82448, 2731, 49, 30, 0], [36148, 1824, 82, 22, 8], [74594, 857, 19, 17, 14],
    [84522, 4247, 37, 46, 9], [12681, 1060, 70, 48, 0], [72824, 750, 82, 72, 1],
])
REPRO_MAXIMA = np.array([99999, 4356, 90, 99, 16])
REPRO_Y = np.array([-1, -1, -1, 1, 1, 1, -1, 1, -1, 1, 1, -1])
REPRO_ETA = np.array([-0.0005923871620735037, 0.3863240611480622, -0.35233234656524104,
                      -0.0721265759384891, -0.03772719890965541, 0.44439889211506056])


def repro_problem() -> HalfspaceProblem:
    return HalfspaceProblem.from_data(REPRO_INTS / REPRO_MAXIMA, REPRO_Y, IntegerBall(5))


REPRO_ORACLES = [
    "highs",
    "highs-monolithic",
    "highs-bound",
    pytest.param("cpsat", marks=needs_ortools),
    pytest.param("cpsat-bound", marks=needs_ortools),
]


def build_oracle(name: str):
    if name == "highs":
        return make_oracle("highs", time_limit=TIME_LIMIT)
    solver = "cpsat" if name.startswith("cpsat") else "highs"
    verify = 0 if name.endswith("-bound") else 250_000
    return MonolithicMIPOracle(solver, time_limit=TIME_LIMIT, verify_max_points=verify)


def close(oracle) -> None:
    for o in (oracle, getattr(oracle, "_monolithic", None)):
        if hasattr(o, "close"):
            o.close()


@pytest.mark.parametrize("name", REPRO_ORACLES)
def test_repro_is_exact_or_refused(name):
    problem = repro_problem()
    best = BruteForceOracle().solve(problem, REPRO_ETA)
    oracle = build_oracle(name)
    try:
        res = oracle.solve(problem, REPRO_ETA)
    finally:
        close(oracle)
    if res.certified:
        assert res.objective - best.objective <= CERTIFY_ABS_TOL, res.summary()
        assert res.k.tolist() == best.k.tolist()
    else:  # refused: never the wrong point with a certificate
        assert name == "highs-bound", res.summary()
        assert res.info["certificate"] == "none"


def test_repro_opdisc_releases_true_minimizer_or_refuses():
    problem = repro_problem()
    best = BruteForceOracle().solve(problem, REPRO_ETA)
    for oracle in ("highs", MonolithicMIPOracle("highs", verify_max_points=0)):
        try:
            out = opdisc(problem, 1.0, 1 / 144, oracle=oracle, eta=REPRO_ETA)
        except OracleFailure:
            continue
        assert out.certified
        assert out.w.tolist() == best.solution.tolist()


def test_untrusted_bound_is_refused_without_data_values():
    problem = repro_problem()
    res = MonolithicMIPOracle("highs", verify_max_points=0).solve(problem, REPRO_ETA)
    assert not res.certified and res.info["certificate"] == "none"
    reason = res.info["reason"]
    assert "cpsat" in reason
    assert not any(ch.isdigit() for ch in reason)  # no Q, norm, bound or objective


def test_enumeration_replaces_a_wrong_solver_point():
    problem = repro_problem()
    best = BruteForceOracle().solve(problem, REPRO_ETA)
    res = MonolithicMIPOracle("highs").solve(problem, REPRO_ETA)
    assert res.certified and res.info["certificate"] == "enumeration"
    assert res.k.tolist() == best.k.tolist()
    assert abs(res.objective - best.objective) <= 1e-12


def test_verify_max_points_validated():
    with pytest.raises(ValueError, match="verify_max_points"):
        MonolithicMIPOracle(verify_max_points=-1)
    orc = MonolithicMIPOracle(verify_max_points=7)
    assert "verify_max_points=7" in repr(orc)


# --------------------------------------------------------------------------------------------
# Fuzzing against brute force
# --------------------------------------------------------------------------------------------
def random_instance(rng: np.random.Generator, q_lo: float, q_hi: float
                    ) -> tuple[HalfspaceProblem, np.ndarray]:
    """d in 2..5, 5..15 rows, each column divided by a public maximum; Q in [q_lo, q_hi]."""
    top = math.log10(q_hi)
    while True:
        d = int(rng.integers(2, 6))
        n = int(rng.integers(5, 16))
        if rng.random() < 0.2:  # one column with a huge denominator (up to 1e12)
            exps = np.append(rng.uniform(0, min(top, 4), d - 1), rng.uniform(0, min(top, 12)))
        else:
            exps = rng.uniform(0, min(top, 5.5), d)
        maxima = np.maximum(1, (10**exps).astype(np.int64))
        Q = math.lcm(*(int(m) for m in maxima))
        if not q_lo <= Q <= q_hi:
            continue
        ints = rng.integers(-maxima, maxima + 1, size=(n, d))
        if rng.random() < 0.5:
            ints = np.abs(ints)
        if n >= 8 and rng.random() < 0.5:
            ints[n - 3 :] = ints[0]  # repeated rows mixing labels
        X = ints / maxima
        y = rng.choice([-1, 1], size=n)
        try:
            problem = HalfspaceProblem.from_data(X, y, IntegerBall(d), max_denominator=10**12)
        except ValueError:
            continue
        # OPDisc's sigma = 7 G D^2 sqrt(ln(1/delta)) / (tau eps) with G = tau = 1, D^2 = d,
        # delta = 1/n^2, eps in [0.1, 2]; and smaller scales, where the loss matters more
        opdisc_sigma = 7.0 * d * math.sqrt(math.log(n * n)) / rng.uniform(0.1, 2.0)
        sigma = float(rng.choice([0.3, 1.0, 3.0, 30.0, opdisc_sigma]))
        return problem, rng.normal(0.0, sigma, d + 1)


@functools.cache
def instances(seed: int, count: int, regime: str) -> list[tuple[HalfspaceProblem, np.ndarray]]:
    index = [r[0] for r in REGIMES].index(regime)
    _, q_lo, q_hi = REGIMES[index]
    rng = np.random.default_rng([seed, index])
    return [random_instance(rng, q_lo, q_hi) for _ in range(count)]


@functools.cache
def brute_minimum(seed: int, count: int, regime: str) -> list[list[int]]:
    """The exact argmin of each instance (brute force decides near ties exactly)."""
    brute = BruteForceOracle()
    return [brute.solve(p, eta).k.tolist() for p, eta in instances(seed, count, regime)]


def fuzz(name: str, seed: int, counts: dict[str, int]) -> dict[str, tuple[int, int, int]]:
    """Per regime: (instances, certified, certified but wrong)."""
    oracle = build_oracle(name)
    out = {}
    try:
        for regime, count in counts.items():
            certified = wrong = 0
            for (p, eta), best in zip(instances(seed, count, regime),
                                      brute_minimum(seed, count, regime), strict=True):
                res = oracle.solve(p, eta)
                if res.certified:
                    certified += 1
                    # the objective is recomputed exactly from the returned point
                    assert res.objective == p.objective_k(res.k, eta)[0]
                    wrong += res.k.tolist() != best  # certified but not the exact argmin
            out[regime] = (count, certified, wrong)
    finally:
        close(oracle)
    print(f"\n{name}: " + ", ".join(f"Q {r}: {c}/{n} certified, {w} wrong"
                                      for r, (n, c, w) in out.items()))
    return out


FUZZ_ORACLES = REPRO_ORACLES
# certified fraction floors on small-Q tables (the fix must not just refuse everything)
SMALL_Q_FLOOR = {"highs": 0.95, "highs-monolithic": 0.95, "highs-bound": 0.9,
                 "cpsat": 0.95, "cpsat-bound": 0.95}
# with the enumeration check on, every instance here (|W| <= 333) is certified exactly
ALWAYS_CERTIFIED = {"highs-monolithic", "cpsat"}


def check_stats(name: str, stats: dict[str, tuple[int, int, int]]) -> None:
    assert all(w == 0 for _, _, w in stats.values()), stats
    n, c, _ = stats["small"]
    assert c >= SMALL_Q_FLOOR[name] * n, stats
    if name in ALWAYS_CERTIFIED:
        assert all(c == n for n, c, _ in stats.values()), stats


@pytest.mark.parametrize("name", FUZZ_ORACLES)
def test_fuzz_no_certified_wrong_answer(name):
    counts = {"small": 80, "mid": 50, "large": 70}
    if name.startswith("cpsat"):
        counts = {"small": 40, "mid": 30, "large": 50}
    check_stats(name, fuzz(name, 1, counts))


@pytest.mark.slow
@pytest.mark.parametrize("name", FUZZ_ORACLES)
def test_fuzz_no_certified_wrong_answer_big_sweep(name):
    counts = {"small": 600, "mid": 600, "large": 800}
    if name.startswith("cpsat"):
        counts = {"small": 300, "mid": 300, "large": 400}
    check_stats(name, fuzz(name, 2, counts))


def test_adult_like_small_q_still_certifies_with_solver_bound():
    # Q = 7,920 (Adult's numeric columns / their public maxima), d = 6 > 4 numeric columns:
    # the monolithic model, with the enumeration check off, certifies by the scaling rule
    rng = np.random.default_rng(3)
    maxima = np.array([90, 16, 99, 99, 99, 8])  # lcm = 7,920
    X = rng.integers(0, maxima + 1, size=(60, 6)) / maxima
    y = np.where(X @ rng.normal(size=6) + rng.normal(0.0, 0.3, 60) > 0, 1, -1)
    problem = HalfspaceProblem.from_data(X, y, IntegerBall(6))
    assert problem.Q == 7920
    orc = MonolithicMIPOracle("highs", verify_max_points=0)
    brute = BruteForceOracle()
    for sigma in (0.5, 5.0, 50.0):
        eta = rng.normal(0.0, sigma, 7)
        res = orc.solve(problem, eta)
        assert res.certified and res.info["certificate"] == "solver bound", res.summary()
        assert res.objective - brute.solve(problem, eta).objective <= CERTIFY_ABS_TOL


def test_badly_scaled_schema_refused_before_noise_when_w_cannot_be_enumerated():
    """Whether HiGHS's bound may be trusted is decided from the schema (public), not from the
    data: a schema allowing huge integer scores on a W too large to enumerate is refused
    before any randomness; a well-scaled schema is not."""
    from oracledp.oracles import FeatureSchema
    from oracledp.oracles._monolithic import highs_scale_trusted_by_schema

    d = 10  # |W| = 327,829 > the enumeration budget
    rng = np.random.default_rng(0)
    X = rng.integers(0, 100, (12, d)) / 99
    y = rng.choice([-1, 1], 12)
    maxima = np.array((99999, 4356, 90, 99, 16) * 2)  # public maxima: Q about 9.7e8
    big = FeatureSchema(binary=(False,) * d, denominators=tuple(maxima.tolist()),
                        bounds=(1.0,) * d)
    small = FeatureSchema.grid(d, 1 / 99, 1.0)
    Xb = rng.integers(0, maxima + 1, (12, d)) / maxima
    p_big = HalfspaceProblem.from_data(Xb, y, IntegerBall(d), schema=big)
    p_small = HalfspaceProblem.from_data(X, y, IntegerBall(d), schema=small)
    assert highs_scale_trusted_by_schema(p_big) is False
    assert highs_scale_trusted_by_schema(p_small) is True
    assert highs_scale_trusted_by_schema(HalfspaceProblem.from_data(X, y)) is None
    gen = np.random.default_rng(1)
    state = gen.bit_generator.state
    with pytest.raises(ValueError, match="cpsat") as info:
        opdisc(p_big, 1.0, 1e-6, oracle="highs-monolithic", random_state=gen)
    assert not any(ch.isdigit() for ch in str(info.value))
    assert gen.bit_generator.state == state
    make_oracle("highs").check_problem(p_small, separable=False)  # no refusal
    # the default oracle takes the badly scaled table with the branch-and-bound (integer
    # bounds at any scale, no solver tolerance involved): no refusal, and exact
    make_oracle("highs").check_problem(p_big, separable=False)
    eta = np.random.default_rng(3).normal(0.0, 3.0, d + 1)
    res = make_oracle("highs").solve(p_big, eta)
    assert res.certified and res.solver == "branch-bound"
    assert res.objective - BruteForceOracle().solve(p_big, eta).objective <= CERTIFY_ABS_TOL
    make_oracle("cpsat").check_problem(p_big)  # exact integer arithmetic: no refusal
