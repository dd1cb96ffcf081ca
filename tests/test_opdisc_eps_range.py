"""OPDisc's proven range eps <= ln(1/delta) (issue 11b): exact law on W = {-1, +1} and refusal.

sigma = 7 G D^2 sqrt(ln(1/delta)) / (tau eps) is proven (Lemma 3 / inequality (3) of
Theorem 1, Neel et al. ICML 2020; derivation in the docstring of
``oracledp.learners.opdisc``) only for eps <= ln(1/delta).  Large eps is not covered:
on W = {-1, +1} the exact output law violates (25, 1e-5) and (10, 0.3)
(``/work/shared/repros/opdisc_large_eps.py``).

Exact law on W = {-1, +1} (tau = 2, D = 1, G = 1/tau = 1/2): pi(+-1) = (+-1, 0), so
OPDisc outputs +1 iff eta_1 > -g/2 with g = L(-1) - L(+1), i.e. P[+1] = Phi(g / (2 sigma)).
A record's loss l is G-Lipschitz on W, so |l(-1) - l(+1)| <= G tau = 1 and replacing one
record moves g by at most 2; with real-valued losses in [0, 1] (any DiscreteProblem) g
itself is any real number.  The worst neighbouring pair is therefore (g, g - 2), and its
hockey-stick divergence
    H_eps = max(0, P[+1] - e^eps P'[+1], P[-1] - e^eps P'[-1])
is maximised at g* = 1 - 2 eps sigma^2 (where phi(x) = e^eps phi(x - 1/sigma)); it is
computed there in closed form with scipy.stats.norm and checked against the Gaussian
mechanism formula (shift 1) and against the 0/1-loss data (g an integer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from scipy import stats

from oracledp.estimators import OPDiscClassifier
from oracledp.learners.opdisc import (
    _opdisc_sample_k,
    check_opdisc_range,
    opdisc,
    opdisc_guarantee,
    opdisc_max_epsilon,
    opdisc_sigma,
)
from oracledp.oracles import HalfspaceProblem, IntegerBall

TAU, D_MAX, G = 2.0, 1.0, 0.5  # W = {-1, +1}
DELTAS = (0.9, 0.5, 0.3, 0.1, 1e-2, 1e-5, 1.0 / 15682**2, 1e-30)


def _sigma(eps: float, delta: float, scale: float = 1.0) -> float:
    return scale * opdisc_sigma(eps, delta, G, D_MAX, TAU)


def _hockey(g: float, g2: float, sigma: float, eps: float) -> float:
    """Exact H_eps(P_g || P_g2) of the two-point output law (both events)."""
    out = 0.0
    for sign in (1, -1):  # event {+1}: Phi(g/2s); event {-1}: Phi(-g/2s)
        p = stats.norm.cdf(sign * g / (2 * sigma))
        logq = stats.norm.logcdf(sign * g2 / (2 * sigma))
        out = max(out, p - math.exp(eps + logq))
    return out


def _worst_pair(sigma: float, eps: float) -> float:
    """Worst neighbouring pair over all data (real-valued losses): (g*, g* - 2), exact law."""
    g_star = 1.0 - 2.0 * eps * sigma**2
    return _hockey(g_star, g_star - 2.0, sigma, eps)


def _worst_pair_counts(sigma: float, eps: float) -> float:
    """0/1-loss data: g an integer, neighbours g2 in {g - 2, ..., g + 2}, g near g*."""
    centre = round(1.0 - 2.0 * eps * sigma**2)
    return max(
        _hockey(g, g + s, sigma, eps)
        for g in range(centre - 6, centre + 7)
        for s in (-2, -1, 1, 2)
    )


def _gauss_sup(sigma: float, eps: float) -> float:
    """Gaussian mechanism with shift 1 (Balle & Wang 2018, Thm 8): the same supremum."""
    a, b = 1 / (2 * sigma), eps * sigma
    return stats.norm.cdf(a - b) - math.exp(eps + stats.norm.logcdf(-a - b))


def _in_range_eps(delta: float) -> list[float]:
    top = opdisc_max_epsilon(delta)
    return sorted({min(e, top) for e in (0.01, 0.1, 0.5, 1.0, 2.0)} | {0.5 * top, top})


# --- exact law inside the range ---------------------------------------------------------------


@pytest.mark.parametrize("delta", DELTAS)
def test_exact_hockey_stick_within_delta_in_proven_range(delta: float) -> None:
    """For every eps in (0, ln(1/delta)] tried (edge included), the worst neighbouring pair on
    W = {-1, +1} has exact hockey-stick divergence <= delta (0/1-loss data included).  The edge eps = ln(1/delta) is accepted by opdisc_sigma."""
    for eps in _in_range_eps(delta):
        sigma = _sigma(eps, delta)
        worst = _worst_pair(sigma, eps)
        assert worst == pytest.approx(_gauss_sup(sigma, eps), rel=1e-6, abs=1e-300)
        assert _worst_pair_counts(sigma, eps) <= worst * (1 + 1e-9) + 1e-300
        assert worst <= delta, f"eps={eps}, delta={delta}: exact H = {worst:.3g} > delta"
    assert opdisc_max_epsilon(delta) == -math.log(delta)


def test_exact_law_violates_outside_range() -> None:
    """Why the range exists: with the paper's sigma, (25, 1e-5) and (10, 0.3) (the repro)
    violate on the exact law even for 0/1-loss data, and eps = 2 ln(1/delta) at delta = 1e-5
    violates for real-valued losses, so a check that accepted them (e.g. a limit of
    2 ln(1/delta)) would be wrong.  sigma is computed by hand: opdisc_sigma refuses these eps."""
    for eps, delta, worst in (
        (25.0, 1e-5, _worst_pair_counts),
        (10.0, 0.3, _worst_pair_counts),
        (2 * math.log(1e5), 1e-5, _worst_pair),
    ):
        L = math.log(1 / delta)
        sigma = 7 * G * D_MAX**2 * math.sqrt(L) / (TAU * eps)
        assert worst(sigma, eps) > delta, (eps, delta)
        with pytest.raises(ValueError, match=r"ln\(1/delta\)"):
            opdisc_sigma(eps, delta, G, D_MAX, TAU)


def test_half_sigma_mutant_violates_inside_range() -> None:
    """Planted mutant: half the paper's sigma violates the exact law at some in-range eps
    (so the test above can fail); e.g. eps = 1, delta = 1e-5."""
    bad = [
        (eps, delta)
        for delta in DELTAS
        for eps in _in_range_eps(delta)
        if _worst_pair(_sigma(eps, delta, 0.5), eps) > delta
    ]
    assert bad and (1.0, 1e-5) in bad, bad


def test_range_check_matches_lemma3_tail() -> None:
    """The proof step: at eps = ln(1/delta), t = sigma eps / c - c / (2 sigma) with c = 4 G D^2 / tau
    satisfies Phi-bar(t) <= delta / 2 (inequality (3) needs <= delta)."""
    for delta in DELTAS:
        eps = opdisc_max_epsilon(delta)
        c = 4 * G * D_MAX**2 / TAU
        sigma = _sigma(eps, delta)
        t = sigma * eps / c - c / (2 * sigma)
        assert t >= math.sqrt(2 * math.log(1 / delta))
        assert stats.norm.sf(t) <= delta / 2


# --- refusal before randomness ----------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _TwoPointSpace:
    K = np.array([[-1], [1]])
    tau = TAU
    max_norm = D_MAX
    d = 1

    def enumerate_k(self, max_points: int = 0) -> np.ndarray:
        return self.K

    def contains_k(self, k: np.ndarray) -> np.ndarray:
        k = np.atleast_2d(k)
        return (k[:, None, :] == self.K[None]).all(2).any(1)

    def pi_k(self, k: np.ndarray) -> np.ndarray:
        k = np.asarray(k, dtype=float)
        k2 = np.atleast_2d(k)
        out = np.hstack([k2, np.zeros((len(k2), 1))])
        return out[0] if k.ndim == 1 else out


@dataclass(frozen=True, eq=False)
class _TwoPointProblem:
    base: HalfspaceProblem
    space: Any = _TwoPointSpace()

    @property
    def lipschitz(self) -> float:
        return G

    def loss_k(self, K: np.ndarray) -> np.ndarray:
        return self.base.loss_k(K)


def _two_point_problem() -> _TwoPointProblem:
    X = np.array([[1.0], [-1.0]])
    return _TwoPointProblem(HalfspaceProblem.from_data(X, np.array([1, 1]), IntegerBall(1)))


OUTSIDE = [(25.0, 1e-5), (10.0, 0.3), (math.log(1e5) * (1 + 1e-9), 1e-5), (0.2, 0.9)]


@pytest.mark.parametrize(("eps", "delta"), OUTSIDE)
def test_opdisc_refuses_outside_range_before_randomness(eps: float, delta: float) -> None:
    """opdisc, the vectorized sampler, opdisc_sigma and opdisc_guarantee refuse eps > ln(1/delta)
    with a ValueError naming the rule and the fix; the Generator's state is unchanged."""
    rng = np.random.default_rng(11)
    before = rng.bit_generator.state
    prob = _two_point_problem()
    with pytest.raises(ValueError, match=r"epsilon <= ln\(1/delta\) = .*Use epsilon <="):
        opdisc(prob, eps, delta, oracle="brute", random_state=rng)
    with pytest.raises(ValueError, match="Lemma 3"):
        _opdisc_sample_k(prob, eps, delta, 10, rng)
    for f in (check_opdisc_range, opdisc_guarantee):
        with pytest.raises(ValueError, match=r"ln\(1/delta\)"):
            f(eps, delta)
    assert rng.bit_generator.state == before


def test_opdisc_accepts_edge() -> None:
    """eps = ln(1/delta) exactly is inside the range: opdisc runs and reports the paper's sigma."""
    delta = 1e-5
    eps = math.log(1 / delta)
    res = opdisc(_two_point_problem(), eps, delta, oracle="brute", random_state=0)
    assert res.guarantee.holds and res.guarantee.epsilon == eps
    assert res.sigma == pytest.approx(7 * G * math.sqrt(math.log(1e5)) / (TAU * eps), rel=1e-12)


@pytest.mark.parametrize(("eps", "delta"), [(25.0, 1e-5), (3.0, None)])
def test_estimator_refuses_at_fit_before_randomness(eps: float, delta: float | None) -> None:
    """OPDiscClassifier.fit refuses eps > ln(1/delta) before any noise is drawn, including the
    default delta = 1/n^2 (n = 4: limit 2 ln 4 = 2.77 < 3); no model is left behind."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5], [0.5, -1.0]])
    y = np.array([1, 1, -1, -1])
    rng = np.random.default_rng(12)
    before = rng.bit_generator.state
    clf = OPDiscClassifier(epsilon=eps, delta=delta, solver="brute", feature_grid=0.5,
                           random_state=rng)
    with pytest.raises(ValueError, match=r"ln\(1/delta\)"):
        clf.fit(X, y)
    assert rng.bit_generator.state == before
    assert not hasattr(clf, "coef_")
    ok = OPDiscClassifier(epsilon=2 * math.log(4), solver="brute", feature_grid=0.5,
                          random_state=rng).fit(X, y)
    assert ok.guarantee_.holds
