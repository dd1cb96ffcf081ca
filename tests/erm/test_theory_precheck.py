"""Accuracy First refuses, before any noise, a capped search its theory curve calls hopeless.

:func:`oracledp.erm._theory.check_theory_reachable` (the rule and its public inputs are in its
docstring) and the cap below the test's own epsilon (:func:`~oracledp.erm._theory.cap_levels`)
are the two refusals from public parameters.  A refused fit must draw nothing (a generator
that raises on any draw is passed), and a fit that succeeds today must still run.
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from oracledp._errors import PrivacyWarning
from oracledp._guidance import ACCURACY_FIRST_N
from oracledp.datasets import load_kdd99
from oracledp.erm import LogisticProblem, NoHaltError, outputnr
from oracledp.erm import _theory as theory
from oracledp.erm._framework import records_needed
from oracledp.estimators import AccuracyFirstLogisticRegression, AccuracyFirstRidge

framework = importlib.import_module("oracledp.erm._framework")


class _NoDraws(np.random.Generator):
    """A Generator whose every draw raises: proof that a refusal came before any noise."""

    def __getattribute__(self, name: str) -> Any:
        if not name.startswith("_") and name not in ("bit_generator",):
            raise AssertionError(f"random draw {name!r} before the refusal")
        return super().__getattribute__(name)


def _no_draws() -> _NoDraws:
    return _NoDraws(np.random.PCG64(0))


def _table(n: int, p: int = 24, seed: int = 0) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """A table the size of the reviewer's (rows with ||x||_1 <= 1, a noisy linear label)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, p)) / p
    y = np.where(X @ np.linspace(-1.0, 1.0, p) + 0.02 * rng.standard_normal(n) > 0, 1, 0)
    return X, y


def test_no_draws_spy_catches_a_draw() -> None:
    with pytest.raises(AssertionError, match="random draw"):
        _no_draws().laplace(0.0, 1.0)


def test_hopeless_capped_search_is_refused_before_any_noise(monkeypatch: Any) -> None:
    """The reviewer's case: 15,000 records, alpha 0.1, max_epsilon 2 (OutputNR, the CLI's)."""
    X, y = _table(15_000)
    est = AccuracyFirstLogisticRegression(0.1, max_epsilon=2.0, random_state=_no_draws())
    with pytest.raises(ValueError, match="10,000 times below") as exc:
        est.fit(X, y)
    msg = str(exc.value)
    for public in ("alpha = 0.1", "n = 15,000 records", "max_epsilon = 2"):
        assert public in msg, msg
    assert not hasattr(est, "coef_")
    # Without the check the same fit draws its noise, spends about the whole cap, and refuses.
    monkeypatch.setattr(framework, "check_theory_reachable", lambda *a, **k: None)
    with pytest.raises(NoHaltError) as spent:
        AccuracyFirstLogisticRegression(0.1, max_epsilon=2.0, random_state=0).fit(X, y)
    assert 1.9 < spent.value.epsilon_refusal <= 2.0


def test_cap_below_the_test_names_alpha_n_and_the_cap() -> None:
    """The other refusal from public parameters (CovNR's test alone exceeds the cap)."""
    X, y = _table(15_000)
    y_ridge = np.where(y == 1, 0.5, -0.5)
    for method in ("covnr", "doubling"):
        with pytest.raises(ValueError, match="is below the smallest ex-post loss") as exc:
            AccuracyFirstRidge(0.1, method=method, max_epsilon=0.5,
                               random_state=_no_draws()).fit(X, y_ridge)
        msg = str(exc.value)
        assert "max_epsilon = 0.5" in msg and "alpha = 0.1" in msg and "n = 15,000" in msg


def test_scope_default_grid_and_a_refusal_only() -> None:
    """allow_no_halt=True (theta* instead of a refusal) and explicit grids are not checked."""
    X, y = _table(15_000)
    est = AccuracyFirstLogisticRegression(0.1, max_epsilon=2.0, allow_no_halt=True,
                                          random_state=0)
    with pytest.warns(PrivacyWarning, match="theta\\* was"):
        est.fit(X, y)
    assert est.eps_grid_[-1] < 1e-4
    with pytest.raises(NoHaltError):  # searched as given, then refused
        AccuracyFirstLogisticRegression(0.1, eps_list=[1e-9, 2e-9], random_state=0).fit(X, y)


def test_capped_kdd_search_that_succeeds_is_not_refused() -> None:
    """KDD-99 as in lab/accuracy_first (n = 100,000): with max_epsilon = 2 the cap leaves levels
    below the theory epsilon E, so a rule without margin would refuse; the search halts."""
    ds = load_kdd99(n=100_000, random_state=0)
    problem = LogisticProblem.from_data(ds.X, ds.y)
    E = theory.theory_epsilon("outputnr", 0.1, problem.n, problem.p, problem.lam)
    for seed in range(3):
        res = outputnr(problem, None, 0.1, max_epsilon=2.0, random_state=seed)
        assert res.halted and res.epsilon <= 2.0
        top = float(res.eps_grid[-1])
        assert top < E < theory.THEORY_MARGIN * top


def test_records_needed_is_the_boundary_of_the_refusals() -> None:
    """records_needed(alpha, cap, p): n - 1 records are refused before any noise, n are not."""
    p = 24
    need = records_needed(0.1, 2.0, p)
    X, y = _table(need, p)
    y_pm = np.where(y == 1, 1.0, -1.0)
    with pytest.raises(ValueError):
        outputnr(X[:-1], y_pm[:-1], 0.1, max_epsilon=2.0, random_state=_no_draws())
    try:
        outputnr(X, y_pm, 0.1, max_epsilon=2.0, random_state=0)
    except NoHaltError:
        pass  # passed the checks, drew its noise, found nothing: allowed
    assert records_needed(0.1, 2.0, p) <= records_needed(0.1, 1.0, p)


@pytest.mark.parametrize(("alpha", "cap", "p"), [
    (0.1, 10.0, 30), (0.1, 2.0, 30), (0.05, 1.0, 10), (0.05, 1.0, 100), (0.2, 10.0, 10),
    (0.2, 10.0, 100)])
def test_guidance_formula_matches_the_refusals(alpha: float, cap: float, p: int) -> None:
    """`oracledp models` says n >= ACCURACY_FIRST_N / (alpha x max-epsilon): within 15%."""
    formula = ACCURACY_FIRST_N / (alpha * cap)
    assert math.isclose(records_needed(alpha, cap, p), formula, rel_tol=0.15)
