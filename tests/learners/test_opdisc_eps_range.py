"""OPDisc on W = {-1, +1}: the exact output law under the proven and the paper's calibration.

The proven calibration (``docs/proofs/opdisc-calibration.md``) holds for every eps; the
paper's sigma = 7 G D^2 sqrt(ln(1/delta)) / (tau eps) (Theorem 1, kept as
``calibration='paper'`` for reproduction only, with ``holds=False``) is refused outside
eps <= ln(1/delta), where even its single-w Lemma 3 fails: on W = {-1, +1} the exact
output law violates (25, 1e-5) and (10, 0.3) (``opdisc_large_eps`` repro).

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

from oracledp._errors import PrivacyWarning
from oracledp.estimators import OPDiscClassifier
from oracledp.learners._opdisc import (
    _opdisc_sample_k,
    check_opdisc_range,
    opdisc,
    opdisc_max_epsilon,
    opdisc_sigma,
)
from oracledp.oracles import HalfspaceProblem, IntegerBall

TAU, D_MAX, G = 2.0, 1.0, 0.5  # W = {-1, +1}
DELTAS = (0.9, 0.5, 0.3, 0.1, 1e-2, 1e-5, 1.0 / 15682**2, 1e-30)


def _sigma(eps: float, delta: float, scale: float = 1.0) -> float:
    """The proven calibration's sigma on W = {-1, +1} (d = 1, |W| = 2)."""
    return scale * opdisc_sigma(eps, delta, _two_point_problem())


def _paper_sigma(eps: float, delta: float) -> float:
    """Theorem 1's sigma, by hand (opdisc_sigma refuses it outside eps <= ln(1/delta))."""
    return 7 * G * D_MAX**2 * math.sqrt(math.log(1 / delta)) / (TAU * eps)


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


LARGE_EPS = (5.0, 10.0, 25.0, 60.0)


# --- exact law: the proven calibration, every eps -------------------------------------------


@pytest.mark.parametrize("delta", DELTAS)
def test_proven_sigma_exact_hockey_stick_within_delta(delta: float) -> None:
    """For every eps tried, inside and far outside (0, ln(1/delta)], the worst neighbouring
    pair on W = {-1, +1} has exact hockey-stick divergence <= delta under the proven sigma
    (0/1-loss data included)."""
    for eps in [*_in_range_eps(delta), *LARGE_EPS]:
        sigma = _sigma(eps, delta)
        worst = _worst_pair(sigma, eps)
        assert worst == pytest.approx(_gauss_sup(sigma, eps), rel=1e-6, abs=1e-300)
        assert _worst_pair_counts(sigma, eps) <= worst * (1 + 1e-9) + 1e-300
        assert worst <= delta, f"eps={eps}, delta={delta}: exact H = {worst:.3g} > delta"


def test_paper_sigma_exact_law_inside_its_range() -> None:
    """Theorem 1's sigma on the two-point space is private inside eps <= ln(1/delta) (one w
    per output: Lemma 3 suffices here), which is why the paper mode keeps that range."""
    for delta in DELTAS:
        for eps in _in_range_eps(delta):
            assert _worst_pair(_paper_sigma(eps, delta), eps) <= delta, (eps, delta)


def test_paper_sigma_exact_law_violates_outside_range() -> None:
    """With the paper's sigma, (25, 1e-5) and (10, 0.3) (the repro) violate on the exact law
    even for 0/1-loss data, and eps = 2 ln(1/delta) at delta = 1e-5 violates for real-valued
    losses; the paper mode refuses them, the proven calibration is private there."""
    for eps, delta, worst in (
        (25.0, 1e-5, _worst_pair_counts),
        (10.0, 0.3, _worst_pair_counts),
        (2 * math.log(1e5), 1e-5, _worst_pair),
    ):
        assert worst(_paper_sigma(eps, delta), eps) > delta, (eps, delta)
        with pytest.raises(ValueError, match=r"ln\(1/delta\)"):
            opdisc_sigma(eps, delta, _two_point_problem(), calibration="paper")
        assert worst(_sigma(eps, delta), eps) <= delta, (eps, delta)


def test_mutants_violate() -> None:
    """Planted mutants are caught by the exact law: half the proven sigma violates at
    (1, 1e-5), and so does half the paper's sigma."""
    bad = [
        (eps, delta)
        for delta in DELTAS
        for eps in _in_range_eps(delta)
        if _worst_pair(_sigma(eps, delta, 0.5), eps) > delta
    ]
    assert bad and (1.0, 1e-5) in bad, bad
    assert _worst_pair(0.5 * _paper_sigma(1.0, 1e-5), 1.0) > 1e-5


def test_range_check_matches_lemma3_tail() -> None:
    """The paper mode's range: at eps = ln(1/delta), t = sigma eps / c - c / (2 sigma) with
    c = 4 G D^2 / tau satisfies Phi-bar(t) <= delta / 2 (single-w Lemma 3 needs <= delta)."""
    for delta in DELTAS:
        eps = opdisc_max_epsilon(delta)
        c = 4 * G * D_MAX**2 / TAU
        sigma = _paper_sigma(eps, delta)
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

    def size(self) -> int:
        return 2

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
def test_paper_mode_refuses_outside_range_before_randomness(eps: float, delta: float) -> None:
    """opdisc, the vectorized sampler, opdisc_sigma and check_opdisc_range refuse
    calibration='paper' with eps > ln(1/delta), naming the rule; the Generator's state is
    unchanged.  The proven calibration releases there, with a guarantee that holds."""
    rng = np.random.default_rng(11)
    before = rng.bit_generator.state
    prob = _two_point_problem()
    with pytest.raises(ValueError, match=r"epsilon <= ln\(1/delta\) = .*proven"):
        opdisc(prob, eps, delta, oracle="brute", random_state=rng, calibration="paper")
    with pytest.raises(ValueError, match="Lemma 3"):
        _opdisc_sample_k(prob, eps, delta, 10, rng, calibration="paper")
    with pytest.raises(ValueError, match=r"ln\(1/delta\)"):
        check_opdisc_range(eps, delta)
    assert rng.bit_generator.state == before
    res = opdisc(prob, eps, delta, oracle="brute", random_state=rng)
    assert res.guarantee.holds and res.guarantee.epsilon == eps
    assert res.calibration.delta_bound <= delta


def test_paper_mode_at_edge_does_not_hold() -> None:
    """eps = ln(1/delta) is inside the paper's range: it runs with Theorem 1's sigma, warns,
    and the guarantee says it does not hold, with the reason."""
    delta = 1e-5
    eps = math.log(1 / delta)
    with pytest.warns(PrivacyWarning, match="NO differential privacy guarantee"):
        res = opdisc(_two_point_problem(), eps, delta, oracle="brute", random_state=0,
                     calibration="paper")
    assert not res.guarantee.holds
    assert "not proven private" in res.guarantee.notes
    assert "Theorem 1's sigma" in res.guarantee.source
    assert res.sigma == pytest.approx(_paper_sigma(eps, delta), rel=1e-12)


def test_estimator_paper_mode_refuses_at_fit_before_randomness() -> None:
    """OPDiscClassifier(calibration='paper').fit refuses eps > ln(1/delta) before any noise,
    including the default delta = 1/n^2 (n = 4: limit 2 ln 4 = 2.77 < 3); no model is left
    behind.  The proven calibration fits the same table at eps = 3."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5], [0.5, -1.0]])
    y = np.array([1, 1, -1, -1])
    rng = np.random.default_rng(12)
    before = rng.bit_generator.state
    clf = OPDiscClassifier(epsilon=3.0, oracle="brute", feature_grid=0.5, random_state=rng,
                           calibration="paper")
    with pytest.raises(ValueError, match=r"ln\(1/delta\)"):
        clf.fit(X, y)
    assert rng.bit_generator.state == before
    assert not hasattr(clf, "coef_")
    ok = OPDiscClassifier(epsilon=3.0, oracle="brute", feature_grid=0.5,
                          random_state=rng).fit(X, y)
    assert ok.guarantee_.holds
    assert ok.calibration_.method == "proven" and ok.calibration_.delta_bound <= 1 / 16
