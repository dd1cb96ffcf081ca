"""Exact output laws of Gaussian RSPM on parities (oracledp.audit._gaussian_rspm_exact).

* The closed-form law matches Monte Carlo draws of the mechanism with a brute-force argmin over
  the explicit class (2^m hypotheses, m = 6), per output, for both pairs.
* At the paper-style sigma (the Gaussian mechanism for a fixed shift: Theorem 7's rate) the
  exact law violates (eps, delta)-DP (the counterexample), at high precision.
* At the proven sigma it satisfies (eps, delta)-DP on both pairs, over a grid of (m, eps, delta).
* Planted mutants are caught by the same exact law: half the proven sigma, and the calibration
  that bounds the privacy loss of one fixed output (|W| = 1 in the union bound), which is the
  flawed proof's step.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from oracledp.audit._gaussian_rspm_exact import parity_law, parity_realized_delta, realized_delta
from oracledp.learners._gaussian_rspm import _gaussian_rspm_sample_explicit
from oracledp.learners._gaussian_rspm_calibration import calibrate, paper_sigma, proven_multiplier


def _parity_class(m: int) -> tuple[np.ndarray, np.ndarray]:
    A = np.array(list(itertools.product((0, 1), repeat=m)), dtype=np.int64)
    return A, A.sum(axis=1) % 2  # patterns pi(a) = a; parity(a)


@pytest.mark.parametrize("pair", ["flip", "add"])
def test_closed_form_law_matches_brute_force_draws(pair: str) -> None:
    """Monte Carlo of the mechanism (explicit class, argmin by enumeration) against the exact
    law: the parity frequencies within a 1e-6 binomial band, and every output of one parity
    equally likely (chi-square test), as the symmetry argument says."""
    m, sigma, n = 6, 1.3, 60_000
    A, par = _parity_class(m)
    loss_s = {"flip": par, "add": np.zeros_like(par)}[pair]
    loss_t = {"flip": 1 - par, "add": par}[pair]
    rng = np.random.default_rng(7)
    for loss, law in zip((loss_s, loss_t), parity_law(sigma, m, pair), strict=True):
        idx = _gaussian_rspm_sample_explicit(loss, A, sigma, n, rng)
        odd = int(par[idx].sum())
        p_odd = float(law[0])
        lo, hi = stats.binom.ppf([1e-6, 1 - 1e-6], n, p_odd)
        assert lo <= odd <= hi, (pair, odd / n, p_odd)
        counts = np.bincount(idx, minlength=2**m)
        for parity in (0, 1):
            c = counts[par == parity]
            if c.sum() > 2_000:
                assert stats.chisquare(c).pvalue > 1e-6


def test_paper_sigma_violates_exactly() -> None:
    """The counterexample: at the paper-style sigma the exact law on the "flip" pair violates
    (eps, delta)-DP, by a wide margin (50 digits; no sampling)."""
    for m, eps, delta, realized in ((40, 1.0, 0.1, 0.4045), (100, 1.0, 0.1, 0.6898),
                                    (200, 1.0, 1e-5, 0.4218), (400, 1.0, 1e-5, 0.6431)):
        sigma = paper_sigma(eps, delta, m)
        got = parity_realized_delta(sigma, m, eps)
        assert float(got) == pytest.approx(realized, abs=1e-4)
        assert got > delta
    # and with the calibration object of the library's paper mode
    cal = calibrate(1.0, 0.1, 40, 2**40, "paper")
    assert not cal.proven and parity_realized_delta(cal.sigma, 40, 1.0) > 0.1


@pytest.mark.parametrize("pair", ["flip", "add"])
def test_proven_sigma_satisfies_exactly(pair: str) -> None:
    for m, eps, delta in itertools.product((1, 16, 40, 200), (0.1, 1.0, 3.0), (0.3, 1e-5)):
        cal = calibrate(eps, delta, m, 2**m)
        assert cal.proven
        assert parity_realized_delta(cal.sigma, m, eps, pair) <= delta, (m, eps, delta)


def test_planted_mutants_are_caught() -> None:
    """Half the proven sigma, and the one-output calibration (the union bound over a single
    hypothesis: the step that the paper's proof takes), both violate on the "flip" pair."""
    for m, eps, delta in ((40, 1.0, 0.1), (100, 1.0, 0.1), (200, 1.0, 1e-5)):
        sigma = calibrate(eps, delta, m, 2**m).sigma
        assert parity_realized_delta(sigma / 2, m, eps) > delta
        single = 2 * math.sqrt(m) * proven_multiplier(eps, delta, m, 1) / eps
        assert parity_realized_delta(single, m, eps) > delta


def test_realized_delta_is_a_hockey_stick() -> None:
    """realized_delta: 0 for equal laws, the total variation at eps = 0, symmetric."""
    p, q = parity_law(10.0, 8, "flip")
    assert realized_delta(p, p, 0.5) == 0
    tv = abs(p[0] - q[0])
    assert realized_delta(p, q, 0.0) == pytest.approx(tv)
    assert realized_delta(p, q, 0.3) == realized_delta(q, p, 0.3)
    with pytest.raises(ValueError, match="pair"):
        parity_law(1.0, 3, "swap")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="m must"):
        parity_law(1.0, 0)
    with pytest.raises(ValueError, match="sigma"):
        parity_law(0.0, 3)
