"""The structured oracle's coupled Lagrangian bound, its choice by the number of numeric
candidates, and the deterministic work limit of both exact formulations.

* The coupled bound is a lower bound on every outer candidate's minimum for ANY
  multipliers (checked against enumeration of W on small random tables with noise), and
  strictly below it by its float allowance where the relaxation is tight; two planted
  mutants (the cells' multiplier term with the wrong sign; no allowance) are caught.
* The count of numeric candidates is exact (equal to enumeration) and decides the
  formulation.
* With a work limit, the work count and the certified / uncertified outcome are the same
  for one and two worker threads; a search stopped by the limit is never certified.
"""

from __future__ import annotations

import numpy as np
import pytest
from _random_tables import random_instances, random_table

from oracledp.oracles import HalfspaceProblem, IntegerBall, OracleStatus, make_oracle
from oracledp.oracles import _structured_tables as tables
from oracledp.oracles._base import check_work_limit
from oracledp.oracles._branch import BranchBoundOracle
from oracledp.oracles._brute import BruteForceOracle
from oracledp.oracles._dispatch import AutoOracle
from oracledp.oracles._halfspace import as_perturbation
from oracledp.oracles._structured import (
    StructuredOracle,
    numeric_candidates,
    structured_applicable,
)


def _inner_minima(problem: HalfspaceProblem, prep, pert) -> np.ndarray:
    """min over u of F(v, u) for every outer candidate v, by enumeration of W."""
    K = problem.space.enumerate_k()
    F = problem.objective_k(K, pert)
    index = {tuple(v): i for i, v in enumerate(prep.V.tolist())}
    out = np.full(len(prep.V), np.inf)
    for k, f in zip(K[:, prep.num_cols].tolist(), F, strict=True):
        i = index[tuple(k)]
        out[i] = min(out[i], f)
    return out


def _violations(seed: int, count: int) -> int:
    """Outer candidates where the coupled bound (random multipliers) exceeds the minimum."""
    bad = 0
    for rng, problem in random_instances(seed, count):
        eta = rng.normal(0.0, 3.0, size=problem.d + 1)
        pert = as_perturbation(problem.space, eta)
        prep = StructuredOracle()._prepare(problem)
        minima = _inner_minima(problem, prep, pert)
        for vi in range(len(prep.V)):
            lin, g, budget, const = tables.terms(problem, prep, vi, pert)
            for scale in (0.0, 1.0, 5.0):
                lam = rng.normal(0.0, scale, size=prep.n_cells)
                b = tables.coupled_bound(problem, prep, vi, lam, lin, g, budget, const)
                bad += b > minima[vi]
    return bad


def test_coupled_bound_is_valid_for_any_multipliers() -> None:
    assert _violations(seed=11, count=25) == 0


def test_coupled_bound_wrong_sign_mutant_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def wrong_sign(f, lam, Tcv, T):  # f_c(t) + lam_c t: the two lam terms no longer cancel
        t = np.arange(-T, T + 1)
        vals = f + lam[:, None] * t[None, :]
        return np.where(np.abs(t)[None, :] <= Tcv[:, None], vals, np.inf)

    monkeypatch.setattr(tables, "_cell_terms", wrong_sign)
    assert _violations(seed=11, count=25) > 0


def _tight_case() -> tuple[HalfspaceProblem, float, float]:
    """One one-hot block of two columns, no numeric column, no noise, lam = 0 and a norm
    budget covering both weights: the cells are independent, so the bound is the minimum."""
    rng = np.random.default_rng(5)
    c = rng.integers(0, 2, size=30)
    X = np.column_stack([(c == 0), (c == 1)]).astype(float)
    y = np.where(rng.random(30) < 0.6, 1, -1)
    problem = HalfspaceProblem.from_data(X, y, IntegerBall(2, bound=1, radius=2.0))
    eta = np.zeros(3)
    pert = as_perturbation(problem.space, eta)
    prep = StructuredOracle()._prepare(problem)
    lin, g, budget, const = tables.terms(problem, prep, 0, pert)
    bound = tables.coupled_bound(problem, prep, 0, np.zeros(prep.n_cells), lin, g, budget, const)
    return problem, bound, float(BruteForceOracle().solve(problem, eta).objective)


def test_coupled_bound_keeps_its_float_allowance() -> None:
    _, bound, minimum = _tight_case()
    assert bound < minimum  # strictly: the allowance is subtracted
    assert minimum - bound < 1e-9  # and it is tiny


def test_coupled_bound_without_allowance_mutant_is_caught(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tables, "_float_allowance", lambda n_terms, mag: 0.0)
    _, bound, minimum = _tight_case()
    assert not bound < minimum


@pytest.mark.parametrize("scale", [0.5, 3.0])
def test_coupled_bound_on_and_off_give_the_brute_force_answer(scale: float) -> None:
    brute = BruteForceOracle()
    on, off = StructuredOracle(coupled_bound=True), StructuredOracle(coupled_bound=False)
    for rng, problem in random_instances(seed=int(scale * 7) + 3, count=20):
        eta = rng.normal(0.0, scale, size=problem.d + 1)
        expected = brute.solve(problem, eta)
        for oracle in (on, off):
            got = oracle.solve(problem, eta)
            assert got.certified
            assert got.k.tolist() == expected.k.tolist()


def test_numeric_candidates_are_counted_exactly() -> None:
    for k in range(0, 5):
        for kmax in (1, 2, 3):
            for cap in (0, 1, 4, 9, 13):
                assert tables.count_ball(k, kmax, cap) == len(tables._enumerate_ball(k, kmax, cap))


def test_formulation_is_chosen_by_the_number_of_numeric_candidates() -> None:
    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, size=(30, 6)) / 4  # six numeric columns
    y = np.where(rng.random(30) < 0.5, 1, -1)
    small = HalfspaceProblem.from_data(X, y, IntegerBall(6, bound=1, radius=2.0))
    big = HalfspaceProblem.from_data(X, y, IntegerBall(6, bound=3, radius=6.0))
    n_small = numeric_candidates(small)
    assert n_small == len(tables._enumerate_ball(6, 1, 4))  # 1 + 12 + 60 + 160 + 240
    assert structured_applicable(small) and not structured_applicable(big)
    assert not structured_applicable(small, max_candidates=n_small - 1)
    assert AutoOracle(workers=1).formulation_for(small) == "structured"
    assert AutoOracle(workers=1).formulation_for(big) == "branch"
    with pytest.raises(ValueError, match="numeric candidates"):
        StructuredOracle().solve(big, np.zeros(7))
    eta = rng.normal(0.0, 1.0, size=7)  # six numeric columns, exact through the decomposition
    got = StructuredOracle().solve(small, eta)
    assert got.certified
    assert got.k.tolist() == BruteForceOracle().solve(small, eta).k.tolist()


def _work_problem(seed: int, n: int, n_num: int, blocks: list[int],
                  radius: float) -> tuple[HalfspaceProblem, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = random_table(rng, n, n_num, blocks)
    w = rng.normal(size=X.shape[1])
    y = np.where(X @ w + rng.normal(0.0, 1.0, n) > 0, 1, -1)
    problem = HalfspaceProblem.from_data(X, y, IntegerBall(X.shape[1], bound=1, radius=radius))
    return problem, rng.normal(0.0, 2.0, size=problem.d + 1)


_WORK_CASES = [(0, 80, 2, [3, 2], 2.0), (4, 80, 2, [3, 2], 2.0), (4, 150, 1, [3, 3, 2], 2.5)]


@pytest.mark.parametrize("case", _WORK_CASES)
def test_work_limit_outcome_does_not_depend_on_the_workers(case) -> None:
    problem, eta = _work_problem(*case)
    full = StructuredOracle(work_limit=10**9, workers=1).solve(problem, eta)
    assert full.certified
    total = full.info["work"]
    assert total >= 3
    for limit in sorted({1, total // 2, total - 1, total, total + 5}):
        one = StructuredOracle(work_limit=limit, workers=1).solve(problem, eta)
        two = StructuredOracle(work_limit=limit, workers=2).solve(problem, eta)
        assert (one.info["work"], one.certified, one.status) == (
            two.info["work"], two.certified, two.status), limit
        if one.certified:
            assert one.k.tolist() == full.k.tolist() == two.k.tolist()
        else:
            assert one.status is OracleStatus.WORK_LIMIT
    # (HiGHS counts some nodes of its own heuristics against its node limit: near the limit
    # the search may stop a little earlier than the count alone says, identically everywhere)
    assert StructuredOracle(work_limit=4 * total, workers=2).solve(problem, eta).certified
    assert not StructuredOracle(work_limit=1, workers=1).solve(problem, eta).certified


def test_branch_work_limit_counts_nodes() -> None:
    problem, eta = _work_problem(*_WORK_CASES[0])
    full = BranchBoundOracle().solve(problem, eta)
    assert full.certified and full.info["work"] == full.info["nodes"] > 1
    again = BranchBoundOracle(work_limit=full.info["nodes"]).solve(problem, eta)
    assert again.certified and again.k.tolist() == full.k.tolist()
    cut = BranchBoundOracle(work_limit=1).solve(problem, eta)
    assert not cut.certified and cut.status is OracleStatus.WORK_LIMIT


def test_work_limit_is_checked_and_plumbed() -> None:
    assert check_work_limit(None) is None and check_work_limit(5) == 5
    with pytest.raises(ValueError, match="work_limit"):
        check_work_limit(0)
    with pytest.raises(TypeError, match="work_limit"):
        check_work_limit(2.5)
    with pytest.raises(TypeError, match="work_limit"):
        check_work_limit(True)
    oracle = make_oracle("highs", work_limit=7)
    assert oracle._structured.work_limit == 7 and oracle._branch.work_limit == 7
    with pytest.raises(ValueError, match="monolithic"):
        AutoOracle(formulation="monolithic", work_limit=7)


def test_registry_passes_the_work_limit() -> None:
    from oracledp._registry import make_estimator
    from oracledp.tabular import TableSchema

    schema = TableSchema.from_dict({
        "target": {"name": "y", "labels": ["no", "yes"]},
        "columns": [{"name": "x", "type": "numeric", "lower": 0, "upper": 4, "step": 1},
                    {"name": "c", "type": "categorical", "levels": ["a", "b"]}]})
    for model in ("opdisc", "rspm"):
        assert make_estimator(model, schema, 1.0, work_limit=123).work_limit == 123
        assert make_estimator(model, schema, 1.0).work_limit is None


@pytest.mark.slow
def test_work_limit_outcome_on_adult_does_not_depend_on_the_workers() -> None:
    """On Adult's encoding (OPDisc noise at eps = 1), with the work limit at the full count
    and below it, one and two workers do the same work and reach the same outcome."""
    from oracledp.datasets import load_adult
    from oracledp.learners._opdisc import opdisc_sigma

    data = load_adult()
    problem = HalfspaceProblem.from_data(np.asarray(data.X), np.asarray(data.y),
                                         schema=data.feature_schema)
    sigma = opdisc_sigma(1.0, 1.0 / problem.n**2, problem)
    eta = np.random.default_rng(2).normal(0.0, sigma, size=problem.d + 1)
    full = StructuredOracle(work_limit=10**9, workers=1, time_limit=600).solve(problem, eta)
    assert full.certified
    for limit in (full.info["work"] // 2, 4 * full.info["work"]):
        got = [StructuredOracle(work_limit=limit, workers=w, time_limit=600).solve(problem, eta)
               for w in (1, 2)]
        assert len({(r.info["work"], r.certified, r.status) for r in got}) == 1, limit
    assert got[0].certified and got[0].k.tolist() == full.k.tolist()
