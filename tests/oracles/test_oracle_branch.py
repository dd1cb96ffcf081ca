"""The branch-and-bound oracle (oracles/branch.py) against brute force: zero certified-but-wrong.

Every certified answer must be the exact minimizer (the same point as the exact brute-force
enumeration, tie rule included: see oracles/base.py) and every reported bound must be a
true lower bound.  Instances cover
OPDisc's noise vector and RSPM's separator weights, mixed-label groups, all-zero rows,
negative features, large common denominators (Q up to ~1e9, where the Cauchy-Schwarz radius
is switched off), declared one-hot blocks next to numeric columns (the cell bound) and noise
scales from loss-dominated to noise-dominated.
"""

from __future__ import annotations

import numpy as np
import pytest

from oracledp.learners._rspm import rspm_perturbation, rspm_space
from oracledp.oracles._base import CERTIFY_ABS_TOL, OracleStatus
from oracledp.oracles._branch import BranchBoundOracle
from oracledp.oracles._brute import BruteForceOracle
from oracledp.oracles._halfspace import FeatureSchema, HalfspaceProblem
from oracledp.oracles._space import IntegerBall


def _instance(rng: np.random.Generator):
    d = int(rng.integers(1, 6))
    n = int(rng.integers(1, 30))
    kind = rng.integers(0, 5)
    schema = None
    if kind >= 3:  # numeric columns plus declared one-hot blocks: the cell bound
        n_num = int(rng.integers(0, 3))
        q = int(rng.choice([1, 3, 7]))
        Xn = rng.integers(-q, q + 1, size=(n, n_num)) / q
        blocks = [np.eye(b)[rng.integers(0, b, n)] for b in rng.integers(1, 4, size=2)]
        X = np.hstack([Xn, *blocks])
        d = X.shape[1]
        schema = FeatureSchema.grid(d, 1 / q, 1.0, binary=np.arange(n_num, d))
        X = np.vstack([X, X[: n // 2]])
    elif kind == 0:  # small grid, possibly negative values, duplicated rows with both labels
        q = int(rng.choice([1, 2, 3, 10]))
        X = rng.integers(-q, q + 1, size=(n, d)) / q
        if rng.random() < 0.5:
            X = np.abs(X)
        X = np.vstack([X, X[: n // 3]])
    elif kind == 1:  # features divided by large public maxima: Q up to ~1e9
        maxima = rng.choice([99999, 4356, 90, 99, 16], size=d)
        X = rng.integers(0, maxima + 1, size=(n, d)) / maxima
    else:  # some all-zero rows (always misclassified)
        X = rng.integers(0, 3, size=(n, d)) / 2
        X[rng.random(n) < 0.3] = 0.0
    y = rng.choice([-1, 1], size=X.shape[0])
    if rng.random() < 0.35:
        space = rspm_space(d)
        problem = HalfspaceProblem.from_data(X, y, space, schema=schema)
        eta = rspm_perturbation(space, rng.laplace(0.0, rng.choice([0.3, 3.0, 30.0]), 2 * d))
    else:
        space = IntegerBall(d, bound=int(rng.integers(1, 4)), radius=float(rng.uniform(1.0, 4.0)))
        if space.size() > 300_000:
            space = IntegerBall(d, bound=1, radius=2.0)
        problem = HalfspaceProblem.from_data(X, y, space, schema=schema)
        eta = rng.normal(0.0, rng.choice([0.1, 1.0, 5.0, 50.0]), d + 1)
    return problem, eta


def _check(seed: int, trials: int) -> int:
    rng = np.random.default_rng(seed)
    brute = BruteForceOracle()
    wrong = 0
    for _ in range(trials):
        problem, eta = _instance(rng)
        oracle = BranchBoundOracle(max_batch=int(rng.choice([1, 3, 128])))
        if rng.random() < 0.3:
            oracle.max_table = 0  # radius bounds computed per batch instead of tabulated
        res = oracle.solve(problem, eta)
        best = brute.solve(problem, eta)
        assert res.certified, res.summary()  # tiny instances: the search always finishes
        assert res.bound <= best.objective + CERTIFY_ABS_TOL  # a true lower bound
        wrong += res.k.tolist() != best.k.tolist()  # certified but not the exact argmin
        assert res.loss == int(problem.loss_k(res.k)[0])
    return wrong


def test_branch_matches_brute_force_fast_slice():
    assert _check(seed=0, trials=300) == 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1, 9))
def test_branch_matches_brute_force_sweep(seed: int):
    assert _check(seed=seed, trials=400) == 0


def test_branch_time_limit_is_never_certified():
    """A search stopped by the time limit reports TIME_LIMIT, a valid bound, no certificate."""
    rng = np.random.default_rng(5)
    d = 12
    X = rng.integers(0, 11, size=(300, d)) / 10
    score = X @ rng.normal(size=d)
    y = np.where(score > np.median(score), 1, -1)
    y[rng.random(300) < 0.3] *= -1  # label noise: a non-trivial search
    problem = HalfspaceProblem.from_data(X, y, IntegerBall(d))
    eta = rng.normal(0.0, 30.0, d + 1)
    res = BranchBoundOracle(time_limit=1e-3).solve(problem, eta)
    assert not res.certified and res.status is OracleStatus.TIME_LIMIT
    full = BranchBoundOracle(time_limit=60).solve(problem, eta)
    assert full.certified and res.bound <= full.objective + CERTIFY_ABS_TOL
    assert res.objective >= full.objective - CERTIFY_ABS_TOL
