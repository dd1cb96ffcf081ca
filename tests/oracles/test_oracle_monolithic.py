"""MonolithicMIPOracle (HiGHS and CP-SAT big-M MIP) against the brute-force oracle.

CP-SAT runs in the oracle's private worker process (the default): highspy and
OR-Tools 9.15 each ship a ``libhighs.so.1`` of a different HiGHS version, so
loading both in one process fails in either order.  Tests that load OR-Tools'
CP-SAT library directly do so in a subprocess, never in the pytest process.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from oracledp._errors import OracleFailure
from oracledp.learners._opdisc import opdisc
from oracledp.oracles._base import OracleStatus
from oracledp.oracles._brute import BruteForceOracle
from oracledp.oracles._halfspace import HalfspaceProblem
from oracledp.oracles._monolithic import MonolithicMIPOracle
from oracledp.oracles._registry import make_oracle
from oracledp.oracles._space import IntegerBall

HAS_ORTOOLS = importlib.util.find_spec("ortools") is not None
SOLVERS = [
    "highs",
    pytest.param("cpsat", marks=pytest.mark.skipif(not HAS_ORTOOLS, reason="ortools missing")),
]


@pytest.fixture(scope="module")
def oracles():
    made: dict[str, MonolithicMIPOracle] = {}

    def get(solver: str) -> MonolithicMIPOracle:
        if solver not in made:
            made[solver] = MonolithicMIPOracle(solver, time_limit=30.0)
        return made[solver]

    yield get
    for o in made.values():
        o.close()


def random_problem(rng: np.random.Generator) -> HalfspaceProblem:
    d = int(rng.integers(1, 5))
    n = int(rng.integers(3, 22))
    k_max = int(rng.integers(1, 3))
    r2 = int(rng.integers(k_max**2, d * k_max**2 + 1))  # the ball often cuts the box
    space = IntegerBall(d, bound=k_max, radius=float(np.sqrt(r2)))
    X = rng.integers(-8, 9, size=(n, d)) / 4  # small rationals of both signs
    if n >= 6:
        X[n // 2 : n // 2 + 3] = X[0]  # repeated rows: groups mixing labels
        X[-1] = 0.0  # a row that every w misclassifies
    y = rng.choice([-1, 1], size=n)
    return HalfspaceProblem.from_data(X, y, space)


def etas(rng: np.random.Generator, d: int) -> list[np.ndarray]:
    return [
        np.zeros(d + 1),  # ties
        rng.normal(0.0, 0.5, d + 1),
        rng.normal(0.0, 4.0, d + 1),
        -np.abs(rng.normal(0.0, 30.0, d + 1)),  # eta_last < 0: concave sqrt term
        np.abs(rng.normal(0.0, 30.0, d + 1)),
    ]


@pytest.mark.parametrize("solver", SOLVERS)
def test_matches_brute_force(oracles, solver):
    rng = np.random.default_rng(20240601)
    orc, brute = oracles(solver), BruteForceOracle()
    for _ in range(40):
        problem = random_problem(rng)
        for eta in etas(rng, problem.d):
            res, ref = orc.solve(problem, eta), brute.solve(problem, eta)
            assert res.certified, res.summary()
            assert res.status is OracleStatus.OPTIMAL
            assert res.solver == orc.name
            assert abs(res.objective - ref.objective) <= 1e-9, (res.summary(), ref.objective)
            assert problem.space.contains_k(res.k)[0]
            assert res.objective - res.bound <= 1e-6


def sgn_zero_problem() -> HalfspaceProblem:
    # Unique optimum k = (1, 1): loss 2 + 2, with (1, -1) exactly on the hyperplane
    # (an error although labelled -1) and the all-zero row wrong for both of its labels.
    X = np.array([[1, 0], [1, 0], [1, 0], [1, 1], [1, -1], [0, 1], [0, 0], [0, 0]]) / 4
    y = np.array([1, 1, 1, -1, -1, 1, 1, -1])
    return HalfspaceProblem.from_data(X, y, IntegerBall(2))


@pytest.mark.parametrize("solver", SOLVERS)
def test_sign_zero_convention(oracles, solver):
    problem = sgn_zero_problem()
    orc, brute = oracles(solver), BruteForceOracle()
    for eta in (np.zeros(3), np.array([0.05, -0.03, 0.02])):
        res = orc.solve(problem, eta)
        assert res.certified
        assert res.k.tolist() == [1, 1] == brute.solve(problem, eta).k.tolist()
        assert res.loss == 4
        scores = problem.scores_k(res.k)[:, 0]
        on_plane = scores == 0
        assert (problem.n_pos[on_plane] + problem.n_neg[on_plane]).sum() == 3


def hard_problem(n: int = 400, d: int = 6) -> HalfspaceProblem:
    rng = np.random.default_rng(7)
    X = rng.integers(-8, 9, size=(n, d)) / 4
    y = np.where(X @ rng.normal(size=d) + rng.normal(0.0, 2.0, n) > 0, 1, -1)
    return HalfspaceProblem.from_data(X, y)


@pytest.mark.parametrize("solver", SOLVERS)
def test_time_limit_is_never_certified(solver):
    problem = hard_problem()
    orc = MonolithicMIPOracle(solver, time_limit=1e-3)
    try:
        res = orc.solve(problem, np.zeros(problem.d + 1))
    finally:
        orc.close()
    assert res.status is OracleStatus.TIME_LIMIT
    assert not res.certified
    assert res.k is not None and problem.space.contains_k(res.k)[0]  # an incumbent (or k = 0)
    assert res.objective == problem.objective_k(res.k, np.zeros(problem.d + 1))[0]


def test_opdisc_refuses_uncertified_answer():
    problem = hard_problem()
    with pytest.raises(OracleFailure) as info:
        opdisc(problem, 1.0, 1e-5, oracle=MonolithicMIPOracle(time_limit=1e-3), random_state=0)
    assert info.value.result.status is OracleStatus.TIME_LIMIT
    out = opdisc(problem, 1.0, 1e-5, oracle=MonolithicMIPOracle(time_limit=1e-3),
                 random_state=0, allow_uncertified=True)
    assert not out.guarantee.holds
    assert not out.certified
    assert problem.space.contains_k(np.rint(out.w / problem.space.tau).astype(np.int64))[0]


def test_opdisc_certified_run():
    problem = sgn_zero_problem()
    eta = np.array([0.3, -1.2, 0.7])
    out = opdisc(problem, 1.0, 1e-5, oracle=MonolithicMIPOracle(), eta=eta)
    assert out.certified and not out.guarantee.holds  # caller's eta: no guarantee
    assert out.w.tolist() == BruteForceOracle().solve(problem, eta).solution.tolist()


@pytest.mark.parametrize("solver", SOLVERS)
def test_model_reuse_matches_fresh_model(oracles, solver):
    rng = np.random.default_rng(5)
    orc = oracles(solver)
    X = rng.integers(-6, 7, size=(40, 3)) / 4
    y = rng.choice([-1, 1], size=40)
    problem = HalfspaceProblem.from_data(X, y, IntegerBall(3, bound=2, radius=2.5))
    draws = [rng.normal(0.0, 5.0, 4) for _ in range(4)]
    reused = [orc.solve(problem, eta) for eta in draws]
    assert [r.info["model_reused"] for r in reused] == [False, True, True, True]
    for eta, r in zip(draws, reused, strict=True):
        fresh = orc.solve(dataclasses.replace(problem), eta)  # same data, new identity
        assert not fresh.info["model_reused"]
        assert r.certified and fresh.certified
        assert r.k.tolist() == fresh.k.tolist()
        assert r.objective == fresh.objective
        assert abs(r.objective - BruteForceOracle().solve(problem, eta).objective) <= 1e-9


def test_highs_thread_count_can_change():
    # HiGHS sizes one global scheduler at the first solve; the oracle resets it when needed
    problem = sgn_zero_problem()
    eta = np.array([0.2, 0.1, -0.4])
    results = [MonolithicMIPOracle(threads=t).solve(problem, eta) for t in (1, 2, 1)]
    assert all(r.certified and r.k.tolist() == [1, 1] for r in results)


def test_rejects_bad_arguments():
    with pytest.raises(ValueError, match="cpsat, highs"):
        MonolithicMIPOracle("gurobi")
    with pytest.raises(ValueError, match="time_limit"):
        MonolithicMIPOracle(time_limit=0)
    with pytest.raises(ValueError, match="threads"):
        MonolithicMIPOracle(threads=0)
    problem = sgn_zero_problem()
    with pytest.raises(ValueError, match="shape"):
        MonolithicMIPOracle().solve(problem, np.zeros(2))
    with pytest.raises(ValueError, match="finite"):
        MonolithicMIPOracle().solve(problem, np.array([0.0, np.nan, 0.0]))


def test_registry_names_and_pickling():
    orc = make_oracle("highs-monolithic", time_limit=5.0)
    assert isinstance(orc, MonolithicMIPOracle) and orc.name == "highs-monolithic"
    clone = pickle.loads(pickle.dumps(orc))
    assert clone.time_limit == 5.0 and clone.solver == "highs"
    problem = sgn_zero_problem()
    assert clone.solve(problem, np.zeros(3)).certified
    if HAS_ORTOOLS:
        cp = make_oracle("cpsat")
        assert cp.name == "cpsat"
        cp.close()


@pytest.mark.skipif(not HAS_ORTOOLS, reason="ortools missing")
@pytest.mark.parametrize("first", ["highspy", "ortools"])
def test_both_solvers_in_one_process(first):
    """Whichever library the process loads first, both oracles still work (in a subprocess)."""
    script = textwrap.dedent(
        f"""
        import numpy as np
        if {first!r} == "ortools":
            from ortools.sat.python import cp_model  # loads ortools' libhighs.so.1
        else:
            import highspy  # loads highspy's libhighs.so.1
        from oracledp.oracles._brute import BruteForceOracle
        from oracledp.oracles._halfspace import HalfspaceProblem
        from oracledp.oracles._monolithic import MonolithicMIPOracle
        rng = np.random.default_rng(0)
        X = rng.integers(-4, 5, size=(25, 3)) / 4
        p = HalfspaceProblem.from_data(X, rng.choice([-1, 1], size=25))
        eta = rng.normal(0.0, 3.0, 4)
        best = BruteForceOracle().solve(p, eta).objective
        for solver, isolate in (("highs", None), ("cpsat", None), ("cpsat", {first == "highspy"})):
            o = MonolithicMIPOracle(solver, isolate=isolate)
            r = o.solve(p, eta)
            o.close()
            assert r.certified and abs(r.objective - best) <= 1e-9, r.summary()
            print(solver, isolate, bool(r.info.get("isolated")))
        from oracledp.oracles._monolithic import _highspy_loadable
        print(_highspy_loadable())
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    # HiGHS runs in-process unless highspy cannot load next to an OR-Tools loaded first (a
    # clash of their libhighs copies that depends on the two wheels' versions)
    loadable = lines[3] == "True"
    assert loadable or first == "ortools"
    assert lines[0] == f"highs None {not loadable}"
    assert lines[1] == "cpsat None True"


@pytest.mark.parametrize("backend", ["highs", "highs-monolithic", "cpsat", "class-mip"])
def test_solvers_print_nothing_unless_verbose(backend):
    """No banner or log reaches stdout/stderr (highspy >= 1.16 prints one at its first Highs())."""
    script = textwrap.dedent(
        f"""
        import numpy as np
        from oracledp.oracles._halfspace import HalfspaceProblem
        from oracledp.oracles._registry import make_oracle
        rng = np.random.default_rng(0)
        if {backend!r} == "class-mip":
            from oracledp.query_classes import MonotoneConjunctions
            from oracledp.query_classes._mip import make_class_oracle
            o = make_class_oracle(MonotoneConjunctions(3))
            r = o.solve(rng.integers(0, 2, size=(6, 3)), rng.normal(size=6))
        else:
            X = rng.integers(-4, 5, size=(25, 3)) / 4
            p = HalfspaceProblem.from_data(X, rng.choice([-1, 1], size=25))
            o = make_oracle({backend!r})
            r = o.solve(p, rng.normal(0.0, 3.0, 4))
            o.close() if hasattr(o, "close") else None
        assert r.certified
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "" and out.stderr == "", (out.stdout, out.stderr)
