"""gaussian_rspm: exactness of the released argmin, the guarantee
record, the paper mode, refusals before any randomness (the estimator:
``tests/estimators/test_gaussian_rspm_estimator.py``).

The calibration's proof checks are in ``test_gaussian_rspm_calibration.py`` and the exact-law
counterexample in ``tests/audit/test_gaussian_rspm_exact_law.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from oracledp._errors import OracleFailure, PrivacyWarning
from oracledp.learners import gaussian_rspm, gaussian_rspm_calibration, rspm_space
from oracledp.learners._rspm import separator_patterns
from oracledp.oracles import HalfspaceProblem, IntegerBall
from oracledp.oracles._brute import BruteForceOracle


def _problem(rng: np.random.Generator, d: int) -> HalfspaceProblem:
    n = int(rng.integers(4, 40))
    X = rng.integers(-2, 3, size=(n, d)) / 2
    y = np.where(rng.random(n) < 0.5, 1, -1)
    return HalfspaceProblem.from_data(X, y, rspm_space(d))


def test_released_argmin_is_exact_by_enumeration() -> None:
    """On random small problems (d = 1..4), with the mechanism's own sigma and noise supplied
    through the eta hook, both oracles release the unique minimizer of
    ``data loss + <eta, separator losses>`` found by enumerating {-1, 0, 1}^d."""
    rng = np.random.default_rng(3)
    for _ in range(30):
        d = int(rng.integers(1, 5))
        problem = _problem(rng, d)
        sigma = gaussian_rspm_calibration(1.0, 1e-3, problem).sigma
        scale = float(rng.choice([0.05, 1.0])) * sigma  # also small noise: data-driven argmins
        eta = rng.normal(0.0, scale, size=2 * d)
        K, loss, _ = BruteForceOracle()._tables(problem)
        objective = loss + separator_patterns(K) @ eta
        best = K[int(np.argmin(objective))]
        assert np.sort(objective)[1] > objective.min()  # unique (probability 1)
        for oracle in ("brute", "highs"):
            res = gaussian_rspm(problem, 1.0, 1e-3, oracle=oracle, eta=eta)
            assert res.certified and (res.w == best).all(), (oracle, res.w, best)
            assert res.guarantee.holds is False  # caller-supplied noise


def test_guarantee_record_and_reproducibility() -> None:
    problem = _problem(np.random.default_rng(0), 3)
    res = gaussian_rspm(problem, 0.5, 1e-6, oracle="brute", random_state=11)
    g = res.guarantee
    assert g.holds and g.requires_exact_oracle and not g.is_pure
    assert (g.epsilon, g.delta, str(g.kind)) == (0.5, 1e-6, "approximate")
    assert "gaussian-rspm-calibration.md" in g.source
    assert "|W| = 27" in g.calibration and "m = 6" in g.calibration
    assert f"{res.sigma:.6g}" in g.calibration
    cal = res.calibration
    assert cal.m == res.m == 6 and cal.size == 27 and cal.size_how == "exact"
    assert res.sigma == cal.sigma and cal.proven and cal.delta_bound <= 1e-6
    assert res.sigma >= 2 * math.sqrt(6) * cal.mu / 0.5
    again = gaussian_rspm(problem, 0.5, 1e-6, oracle="brute", random_state=11)
    assert (again.w == res.w).all()
    # the noise is N(0, sigma^2): same draws as the generator's normal at that scale
    rng = np.random.default_rng(11)
    eta = rng.normal(0.0, res.sigma, size=6)
    assert (gaussian_rspm(problem, 0.5, 1e-6, oracle="brute", eta=eta).w == res.w).all()


def test_paper_mode_warns_and_does_not_hold() -> None:
    problem = _problem(np.random.default_rng(1), 2)
    with pytest.warns(PrivacyWarning, match="NO differential privacy guarantee"):
        res = gaussian_rspm(problem, 1.0, 1e-5, oracle="brute", random_state=0,
                            calibration="paper")
    assert res.guarantee.holds is False and "not private" in res.guarantee.notes + str(
        res.guarantee.to_dict())
    assert res.sigma == pytest.approx(2 * math.sqrt(2 * 4 * math.log(1.25e5)), rel=1e-12)
    assert res.calibration.method == "paper"


def test_refusals_before_any_randomness(uncertified_oracle) -> None:
    problem = _problem(np.random.default_rng(2), 2)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    for eps, delta in ((0.0, 1e-5), (-1.0, 1e-5), (math.nan, 1e-5), (1.0, 0.0), (1.0, 1.0),
                       (1.0, -0.1), (1.0, math.nan)):
        with pytest.raises(ValueError):
            gaussian_rspm(problem, eps, delta, oracle="brute", random_state=rng)
    with pytest.raises(ValueError, match="calibration must"):
        gaussian_rspm(problem, 1.0, 1e-5, oracle="brute", random_state=rng,
                      calibration="analytic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"\{-1, 0, 1\}\^d"):
        gaussian_rspm(HalfspaceProblem.from_data(np.ones((3, 4)), [1, -1, 1], IntegerBall(4)),
                      1.0, 1e-5, random_state=rng)
    with pytest.raises(TypeError):
        gaussian_rspm("not a problem", 1.0, 1e-5, random_state=rng)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="weighted oracle"):
        gaussian_rspm(problem, 1.0, 1e-5, oracle="highs-monolithic", random_state=rng)
    with pytest.raises(ValueError, match="shape"):
        gaussian_rspm(problem, 1.0, 1e-5, oracle="brute", eta=np.zeros(3))
    with pytest.raises(ValueError, match="finite"):
        gaussian_rspm(problem, 1.0, 1e-5, oracle="brute", eta=np.array([np.nan, 0, 0, 0]))
    assert rng.bit_generator.state == state  # nothing drawn before the refusals
    with pytest.raises(OracleFailure):
        gaussian_rspm(problem, 1.0, 1e-5, oracle=uncertified_oracle, random_state=0)
    out = gaussian_rspm(problem, 1.0, 1e-5, oracle=uncertified_oracle, random_state=0,
                        allow_uncertified=True)
    assert out.guarantee.holds is False and not out.certified
