"""Accuracy First ERM: CovNR, OutputNR, DoublingMethod, their sensitivities, theory curves, estimators.

Ligett, Neel, Roth, Waggoner, Wu (NeurIPS 2017); test plan: docs/specs/privacy-testing.md
sections 5 ("CovNR / OutputNR / DoublingMethod"), 6 and 7.

Layers (spec section 0): goldens, contracts, sensitivity properties and knob isolation are
deterministic (layer 1); the noise-law and stopping-law tests are exact-law tests (layer 2)
with false-alarm rate ALPHA = 1e-6 per assertion (Bonferroni-split where several share it).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy import optimize, stats
from sklearn.base import clone

from _laplace import laplace_pdf, laplace_sf
from oracledp._errors import BoundsViolation, DiagnosticsWarning, PrivacyWarning
from oracledp.datasets import load_kdd99
from oracledp.erm import (
    AccuracyFirstResult,
    LogisticProblem,
    NoHaltError,
    RidgeProblem,
    covnr,
    doubling,
    outputnr,
)
from oracledp.erm import _sensitivity as sens
from oracledp.erm import _theory as theory
from oracledp.erm._trust_region import trust_region_solve
from oracledp.estimators._accuracy_first import (
    AccuracyFirstLogisticRegression,
    AccuracyFirstRidge,
)
from oracledp.mechanisms import noise_reduction
from oracledp.privacy._guarantees import GuaranteeKind

# The implementation modules (the package exports the functions), for monkeypatching.
covnr_mod = importlib.import_module("oracledp.erm._covnr")
outputnr_mod = importlib.import_module("oracledp.erm._outputnr")
doubling_mod = importlib.import_module("oracledp.erm._doubling")

ALPHA = 1e-6  # false-alarm rate of every statistical assertion in this file
LAM = 0.005


# --- helpers ---------------------------------------------------------------------------------------
def _bounded(rng: np.random.Generator, n: int, p: int) -> NDArray[np.float64]:
    """Rows with ||x||_1 uniform in [0, 1] (some exactly 1)."""
    X = rng.normal(size=(n, p))
    X /= np.abs(X).sum(axis=1, keepdims=True)
    r = rng.random(n)
    r[: max(1, n // 10)] = 1.0
    X *= r[:, None]
    over = np.abs(X).sum(axis=1) > 1.0  # rounding of the normalisation: shrink by a few ulps
    X[over] *= 1.0 - 1e-15
    assert (np.abs(X).sum(axis=1) <= 1.0).all()
    return X


def _ridge_data(seed: int, n: int = 300, p: int = 4) -> tuple[NDArray[np.float64], ...]:
    rng = np.random.default_rng(seed)
    X = _bounded(rng, n, p)
    w = rng.normal(size=p)
    y = np.clip(X @ w + 0.1 * rng.normal(size=n), -1, 1)
    return X, y


def _logistic_data(seed: int, n: int = 300, p: int = 4) -> tuple[NDArray[np.float64], ...]:
    rng = np.random.default_rng(seed)
    X = _bounded(rng, n, p)
    w = 4 * rng.normal(size=p)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    return X, y


def _identity_nr(v: Any, sensitivity: float, eps_list: Any, rng: Any = None) -> NDArray:
    """Noise-off hook: every level releases v exactly."""
    v = np.asarray(v, dtype=np.float64)
    return np.broadcast_to(v, (len(eps_list), *v.shape)).copy()


def _ks_ok(x: NDArray[np.float64], scale: float, alpha: float) -> bool:
    """Exact two-sided KS test against Lap(0, scale) at level alpha."""
    d = stats.kstest(x, "laplace", args=(0.0, scale)).statistic
    return bool(d <= stats.kstwo(x.size).isf(alpha))


def _gamma_scale_ok(x: NDArray[np.float64], scale: float, alpha: float) -> bool:
    """sum |X_i| / b ~ Gamma(N, 1) for Lap(b) samples; two-sided at level alpha."""
    s = float(np.abs(x).sum() / scale)
    n = x.size
    return bool(stats.gamma.ppf(alpha / 2, n) <= s <= stats.gamma.isf(alpha / 2, n))


# =================================================================================================
# Tier 0: goldens (hand-computed numbers, theorem cited)
# =================================================================================================
def test_sensitivity_goldens() -> None:
    n = 100_000
    # Claim A.5: (sqrt(1/lambda) + 1)^2 / n; sqrt(200) + 1 = 15.142135623730951.
    assert sens.ridge_excess_risk_sensitivity(n, LAM) == pytest.approx(
        229.28427124746190 / n, rel=1e-14
    )
    # Claim A.12 / Claim A.11: M = sqrt(2 ln 2 / 0.005) = sqrt(277.2588722239781) = 16.65109...
    M = math.sqrt(2 * math.log(2) / LAM)
    assert sens.logistic_radius(LAM) == pytest.approx(16.651092223153956, rel=1e-14) == M
    printed = 2 * math.log((1 + math.exp(M)) / (1 + math.exp(-M))) / n  # Claim A.12 as printed
    assert sens.logistic_excess_risk_sensitivity(n, LAM) == pytest.approx(printed, rel=1e-13)
    assert sens.logistic_excess_risk_sensitivity(n, LAM) == pytest.approx(2 * M / n, rel=1e-13)
    # not the authors' code's halved values
    assert sens.logistic_excess_risk_sensitivity(n, LAM) > 1.9 * math.log1p(math.exp(M)) / n
    # Lemma A.6 and Lemma A.10
    assert sens.COVARIANCE_SENSITIVITY == 2.0
    assert sens.output_l2_sensitivity(n, LAM) == pytest.approx(2 / 500, rel=1e-15)
    assert sens.output_l1_sensitivity(n, 38, LAM) == pytest.approx(
        2 * 6.164414002968976 / 500, rel=1e-14
    )


def _claim_a12_delta(n: int, lam: float) -> Any:
    """Claim A.12's ``2 M / n``, ``M = sqrt(2 ln 2 / lambda)``, in 80-digit decimal arithmetic
    from the exact value of the float lambda (error far below one double ulp)."""
    import decimal

    with decimal.localcontext(decimal.Context(prec=80)):
        two = decimal.Decimal(2)
        return two * (two * two.ln() / decimal.Decimal(lam)).sqrt() / n


@pytest.mark.parametrize("lam", [1e20, 1e24, 1e30, 1e100, 1e300, 0.5, 1.0, 2.0, 10.0, 1e-6, 1e10])
@pytest.mark.parametrize("n", [1, 3, 400, 2_000, 100_000, 10**12])
def test_logistic_delta_never_below_claim_a12(lam: float, n: int) -> None:
    """Delta >= 2 M / n as real numbers, for every lambda.  The log-ratio
    log(1 + e^M) - log(1 + e^-M) cancels for huge lambda (both terms round near ln 2): it was
    1.6e-5 relative below 2M/n at lambda = 1e24 and 0 at 1e100 (Delta = 0), and an ulp below
    at lambda = 0.5, 1, 2, 10, 1e-6."""
    import decimal

    delta = sens.logistic_excess_risk_sensitivity(n, lam)
    exact = _claim_a12_delta(n, lam)
    assert math.isfinite(delta) and delta > 0
    assert decimal.Decimal(delta) >= exact
    M = sens.logistic_radius(lam)
    assert delta >= 2 * M / n  # the audit's floating-point comparison
    assert decimal.Decimal(delta) <= exact * decimal.Decimal("1.05")  # not absurdly loose
    # OutputNR's and the DoublingMethod's eps_0 stay finite and positive
    assert 0 < sens.iat_epsilon(delta, 0.1, 0.1, 1000) < math.inf


@pytest.mark.parametrize("n", [1, 7, 400, 2_000, 100_000])
def test_logistic_delta_unchanged_where_already_safe(n: int) -> None:
    """At the paper's lambda the floating-point log-ratio is already >= 2M/n: Delta keeps it
    bit for bit (so eps_0, the noise and every release are those of before the guard)."""
    M = sens.logistic_radius(LAM)
    log_ratio = float(np.logaddexp(0.0, M) - np.logaddexp(0.0, -M))
    assert sens.logistic_excess_risk_sensitivity(n, LAM) == 2.0 * log_ratio / n


def test_iat_epsilon_matches_theorems_3_2_and_3_4() -> None:
    n, T, gamma, alpha = 100_000, 1000, 0.1, 0.05
    # Theorem 3.2: eps_0 = 16 (sqrt(1/lambda) + 1)^2 ln(2T/gamma) / (n alpha)
    e32 = 16 * (math.sqrt(1 / LAM) + 1) ** 2 * math.log(2 * T / gamma) / (n * alpha)
    d_r = sens.ridge_excess_risk_sensitivity(n, LAM)
    assert sens.iat_epsilon(d_r, alpha, gamma, T) == pytest.approx(e32, rel=1e-13)
    assert e32 == pytest.approx(7.266285, rel=1e-6)  # 16 * 229.2843 * ln(20000) / 5000
    # Theorem 3.4: eps_0 <= 32 ln(2T/gamma) sqrt(2 ln 2/lambda) / (n alpha) (equality: Delta = 2M/n)
    e34 = 32 * math.log(2 * T / gamma) * math.sqrt(2 * math.log(2) / LAM) / (n * alpha)
    d_l = sens.logistic_excess_risk_sensitivity(n, LAM)
    assert sens.iat_epsilon(d_l, alpha, gamma, T) == pytest.approx(e34, rel=1e-12)


def test_one_sided_calibration_golden_and_exact_failure_probability() -> None:
    """eps_0 of the one-sided calibration is Delta (12 ln(1/gamma) + 8 ln(T/2)) / alpha, below the
    paper's 16 Delta ln(2T/gamma)/alpha, and both keep the exact probability that some query with
    f^t < -alpha passes, P[exists t <= T: nu_t - rho > alpha/2], at most gamma (computed by
    quadrature over the threshold noise rho; deterministic)."""
    from scipy import integrate

    assert sens.iat_epsilon(0.01, 0.05, 0.1, 1000, "one-sided") == pytest.approx(
        0.01 * (12 * math.log(10) + 8 * math.log(500)) / 0.05, rel=1e-14
    )
    for T in (2, 10, 1000, 10_000):
        for gamma in (0.01, 0.1, 0.5):
            eps_p = sens.iat_epsilon(1.0, 1.0, gamma, T)  # Delta = alpha = 1: the law scales
            eps_o = sens.iat_epsilon(1.0, 1.0, gamma, T, "one-sided")
            assert eps_o < eps_p
            for eps in (eps_p, eps_o):
                b_rho, b_nu = 2.0 / eps, 4.0 / eps

                def integrand(
                    r: float, b_rho: float = b_rho, b_nu: float = b_nu, T: int = T
                ) -> float:
                    pass_one = laplace_sf(0.5 + r, b_nu)
                    no_pass = math.exp(T * math.log1p(-pass_one))
                    return laplace_pdf(r, b_rho) * (1.0 - no_pass)

                fail, _ = integrate.quad(integrand, -60 * b_rho, 60 * b_rho, limit=500, points=[0])
                assert fail <= gamma
    assert sens.iat_epsilon(1.0, 1.0, 0.1, 1, "one-sided") == sens.iat_epsilon(1.0, 1.0, 0.1, 1)
    with pytest.raises(ValueError, match="calibration"):
        sens.iat_epsilon(1.0, 1.0, 0.1, 10, "tight")


def test_doubling_loss_goldens() -> None:
    # Theorem A.2: E(k) = 2 k Delta ln(T/gamma) / alpha + (2^k - 1) eps_1.
    # k=3, Delta=0.01, alpha=0.1, gamma=0.1, T=10, eps_1=0.5: 0.6 ln(100) + 3.5
    assert sens.doubling_loss(3, 0.01, 0.1, 0.1, 10, 0.5) == pytest.approx(
        6.2631021115928546, rel=1e-15
    )
    # k=1: one test and one hypothesis: 2 Delta ln(T/gamma)/alpha + eps_1
    assert sens.doubling_loss(1, 0.002, 0.05, 0.2, 4, 0.25) == pytest.approx(
        2 * 0.002 * math.log(20) / 0.05 + 0.25, rel=1e-15
    )
    assert sens.doubling_test_epsilon(0.01, 0.1, 0.1, 10) == pytest.approx(
        0.2 * math.log(100), rel=1e-15
    )
    assert sens.doubling_test_scale(0.1, 0.1, 10) == pytest.approx(0.05 / math.log(100), rel=1e-15)
    with pytest.raises(ValueError, match=r"1\.\.T"):
        sens.doubling_loss(11, 0.01, 0.1, 0.1, 10, 0.5)


def test_theory_curves_invert_their_theorems() -> None:
    n, p = 100_000, 38
    for alpha in (0.005, 0.05, 0.2):
        e = theory.covpert_ridge_epsilon(alpha, n, p, LAM)  # Theorem 3.1
        assert theory.covpert_ridge_excess_bound(e, n, p, LAM) == pytest.approx(alpha, rel=1e-12)
        e = theory.outpert_logistic_epsilon(alpha, n, p, LAM)  # Theorem 3.3
        assert theory.outpert_logistic_excess_bound(e, n, p, LAM) == pytest.approx(alpha, rel=1e-12)
        for printed in (False, True):  # Theorem A.9
            e = theory.outpert_ridge_epsilon(alpha, n, p, LAM, as_printed=printed)
            got = theory.outpert_ridge_excess_bound(e, n, p, LAM, as_printed=printed)
            assert got == pytest.approx(alpha, rel=1e-12)
    # Golden, Theorem 3.1 at alpha=0.05, p=37: 4 sqrt2 (2 sqrt(7400) + 7400) / 5000
    assert theory.covpert_ridge_epsilon(0.05, n, 37, LAM) == pytest.approx(
        4 * math.sqrt(2) * (2 * math.sqrt(7400) + 7400) / 5000, rel=1e-14
    )
    # Golden, Theorem 3.3 keeps both terms: the first-order-only value is smaller.
    first_order = 2 * math.sqrt(2) * p / (n * LAM * 0.05)
    assert theory.outpert_logistic_epsilon(0.05, n, p, LAM) > first_order
    # Theorem A.9 correction: the proof's data term is n times the printed one.
    ratio = theory.outpert_ridge_epsilon(0.05, n, p, LAM) / theory.outpert_ridge_epsilon(
        0.05, n, p, LAM, as_printed=True
    )
    assert ratio == pytest.approx(math.sqrt((1 + LAM) / (1 / n + LAM)), rel=1e-12)


def test_default_grids_appendix_b_corrected() -> None:
    n, p, alpha = 100_000, 38, 0.05
    g = theory.default_eps_grid("outputnr", alpha, n, p, LAM)
    E = theory.outpert_logistic_epsilon(alpha, n, p, LAM)
    # eps_1 = 1/n is the MOST private level, eps_T = 4E the least (Appendix B prints them swapped)
    assert g.size == 1000 and g[0] == 1 / n and g[-1] == 4 * E
    assert (np.diff(g) > 0).all()
    np.testing.assert_allclose(g[1:] / g[:-1], (4 * E * n) ** (1 / 999), rtol=1e-10)
    d = theory.default_eps_grid("doubling-outpert", alpha, n, p, LAM)
    # T = ceil(log2(eps_T / eps_1)) doublings (Appendix B with the ratio the right way up) + 1 levels
    K = math.ceil(math.log2(4 * E * n))
    assert d.size == K + 1
    assert np.array_equal(d, (1 / n) * 2.0 ** np.arange(K + 1))
    assert d[-1] >= 4 * E > d[-2]
    with pytest.raises(ValueError, match="empty"):
        theory.default_eps_grid("covnr", 1e9, 10, 1, LAM)


# =================================================================================================
# Tier 0: sensitivity properties within the declared domain (hypothesis)
# =================================================================================================
def _row(raw: list[float], scale: float) -> NDArray[np.float64]:
    x = np.asarray(raw, dtype=np.float64)
    s = np.abs(x).sum()
    if s > 0:
        # ||x||_1 = scale <= 1 (boundary rows when scale = 1), kept 4 ulps inside the bound so
        # that no summation order (numpy's pairwise/SIMD sums differ by an ulp) pushes it above 1
        x = x / s * scale * (1.0 - 4 * np.finfo(np.float64).eps)
    return x


_scale = st.one_of(st.just(1.0), st.floats(0.0, 1.0))


@st.composite
def _neighbours(draw: Any, max_n: int = 6, max_p: int = 4) -> tuple[Any, ...]:
    n = draw(st.integers(1, max_n))
    p = draw(st.integers(1, max_p))
    fl = st.floats(-1.0, 1.0, allow_nan=False)
    X = np.array([_row(draw(st.lists(fl, min_size=p, max_size=p)), draw(_scale)) for _ in range(n)])
    y = np.array(draw(st.lists(st.floats(-1.0, 1.0), min_size=n, max_size=n)))
    i = draw(st.integers(0, n - 1))
    Z = X.copy()
    Z[i] = _row(draw(st.lists(fl, min_size=p, max_size=p)), draw(_scale))
    y2 = y.copy()
    y2[i] = draw(st.floats(-1.0, 1.0))
    return X, y, Z, y2


@settings(max_examples=150, deadline=None, derandomize=True)
@given(_neighbours())
def test_covariance_statistics_sensitivity_lemma_a6(data: tuple[Any, ...]) -> None:
    """||X^T X - Z^T Z||_1 <= 2 and ||X^T y - Z^T y'||_1 <= 2 for neighbours in the domain."""
    X, y, Z, y2 = data
    assert np.abs(X.T @ X - Z.T @ Z).sum() <= 2.0 + 1e-12
    assert np.abs(X.T @ y - Z.T @ y2).sum() <= 2.0 + 1e-12


def test_covariance_sensitivity_attained_by_e1_e2_pair() -> None:
    """The bound of Lemma A.6 is tight: (x=e1, y=1) vs (x=e2, y=-1) shift both by exactly 2."""
    base = np.array([[0.25, -0.5], [0.125, 0.5]])  # dyadic: the arithmetic is exact
    X = np.vstack([base, [1.0, 0.0]])
    Z = np.vstack([base, [0.0, 1.0]])
    y = np.array([0.5, -0.25, 1.0])
    y2 = np.array([0.5, -0.25, -1.0])
    assert np.abs(X.T @ X - Z.T @ Z).sum() == 2.0
    assert np.abs(X.T @ y - Z.T @ y2).sum() == 2.0


@settings(max_examples=60, deadline=None, derandomize=True)
@given(_neighbours(), st.sampled_from([0.05, 0.5, 2.0]), st.integers(0, 2**31))
def test_ridge_query_sensitivity_claim_a5(data: tuple[Any, ...], lam: float, seed: int) -> None:
    """|f_D(theta) - f_D'(theta)| <= (sqrt(1/lambda) + 1)^2 / n for theta in C (Claim A.5)."""
    X, y, Z, y2 = data
    n = X.shape[0]
    P, Q = RidgeProblem.from_data(X, y, lam), RidgeProblem.from_data(Z, y2, lam)
    rng = np.random.default_rng(seed)
    th = rng.normal(size=(20, X.shape[1]))
    th *= (P.radius * rng.random(20) ** 0.3 / np.linalg.norm(th, axis=1))[:, None]
    th[0] *= P.radius / np.linalg.norm(th[0]) * (1 - 1e-15)  # a boundary point
    diff = np.abs(P.excess_risk(th) - Q.excess_risk(th))
    assert (diff <= sens.ridge_excess_risk_sensitivity(n, lam) * (1 + 1e-9)).all()


@settings(max_examples=60, deadline=None, derandomize=True)
@given(_neighbours(max_p=3), st.sampled_from([0.05, 0.5, 2.0]), st.data())
def test_logistic_sensitivities_lemma_a10_claim_a12(
    data: tuple[Any, ...], lam: float, more: Any
) -> None:
    """||theta*(D) - theta*(D')||_2 <= 2/(n lambda) (Lemma A.10) and the excess-risk query moves
    by at most 2 ln((1+e^M)/(1+e^-M))/n on the M-ball (Claim A.12)."""
    X, _, Z, _ = data
    n = X.shape[0]
    y = np.array(more.draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=n, max_size=n)))
    y2 = y.copy()
    y2[-1] = more.draw(st.sampled_from([-1.0, 1.0]))
    # neighbours differ in one record: the same row as in _neighbours, or the last label
    i = int(np.flatnonzero((X != Z).any(axis=1))[0]) if (X != Z).any() else n - 1
    if i != n - 1:
        y2 = y.copy()
        y2[i] = more.draw(st.sampled_from([-1.0, 1.0]))
    P, Q = LogisticProblem.from_data(X, y, lam), LogisticProblem.from_data(Z, y2, lam)
    slack = 2 * (P.grad_norm + Q.grad_norm) / lam  # computed optima are within grad/lambda
    assert np.linalg.norm(P.theta_star - Q.theta_star) <= sens.output_l2_sensitivity(n, lam) + slack
    M = sens.logistic_radius(lam)
    assert np.linalg.norm(P.theta_star) <= M and np.linalg.norm(Q.theta_star) <= M  # Claim A.11
    rng = np.random.default_rng(more.draw(st.integers(0, 2**31)))
    th = rng.normal(size=(20, X.shape[1]))
    th *= (M * rng.random(20) ** 0.3 / np.linalg.norm(th, axis=1))[:, None]
    diff = np.abs(P.excess_risk(th) - Q.excess_risk(th))
    assert (diff <= sens.logistic_excess_risk_sensitivity(n, lam) * (1 + 1e-9)).all()


# =================================================================================================
# The exact constrained solver of equation (3.1)
# =================================================================================================
def test_trust_region_solver_satisfies_the_kkt_conditions() -> None:
    """Global optimality of min theta^T A theta/2 - <b,theta> s.t. ||theta|| <= R (Moré-Sorensen):
    feasible, (A + mu I) theta = b, A + mu I PSD, mu >= 0, mu (R - ||theta||) = 0."""
    rng = np.random.default_rng(11)
    k, p, R = 400, 5, 1.3
    A = rng.laplace(size=(k, p, p)) * rng.choice([0.05, 1.0, 5.0], size=(k, 1, 1))
    A = 0.5 * (A + np.swapaxes(A, 1, 2)) + rng.choice([0.0, 3.0], size=(k, 1, 1)) * np.eye(p)
    b = rng.laplace(size=(k, p)) * rng.choice([0.01, 1.0, 10.0], size=(k, 1))
    th = trust_region_solve(A, b, R)
    norms = np.linalg.norm(th, axis=1)
    assert (norms <= R).all()
    for j in range(k):
        w = np.linalg.eigvalsh(A[j])
        if norms[j] < R * (1 - 1e-9):  # interior: A PD and A theta = b
            assert w[0] > 0
            np.testing.assert_allclose(A[j] @ th[j], b[j], atol=1e-8 * (1 + np.abs(b[j]).max()))
        else:
            r = b[j] - A[j] @ th[j]
            mu = float(r @ th[j]) / norms[j] ** 2
            assert mu >= -1e-9
            np.testing.assert_allclose(r, mu * th[j], atol=1e-7 * (1 + np.abs(b[j]).max()))
            assert w[0] + mu >= -1e-7 * (1 + abs(mu))
    # the hard case (b orthogonal to the bottom eigenvector of an indefinite A)
    A1 = np.diag([-1.0, 2.0])[None]
    b1 = np.array([[0.0, 1.0]])
    t1 = trust_region_solve(A1, b1, 1.0)[0]
    assert np.linalg.norm(t1) == pytest.approx(1.0, rel=1e-9)
    assert t1[1] == pytest.approx(1 / 3, rel=1e-9)  # (A + mu I) theta = b with mu = 1


# =================================================================================================
# Knob isolation: noise off -> the non-private optimum (spec section 5)
# =================================================================================================
def test_covnr_noise_off_releases_the_closed_form_ridge_optimum(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    X, y = _ridge_data(1)
    n, p = X.shape
    monkeypatch.setattr(covnr_mod, "noise_reduction", _identity_nr)
    res = covnr(X, y, 0.01, random_state=3)
    closed = np.linalg.solve(X.T @ X + n * LAM * np.eye(p), X.T @ y)
    assert np.linalg.norm(closed) <= 1 / math.sqrt(LAM)  # Lemma A.4: inside C
    np.testing.assert_allclose(res.theta, closed, rtol=1e-10, atol=1e-12)
    excess = RidgeProblem.from_data(X, y).excess_risk(res.theta)[0]
    assert res.halted and abs(excess) < 1e-14
    assert res.epsilon == res.ex_post.epsilon_test + res.eps_grid[res.stopping_index]


def test_outputnr_noise_off_releases_the_logistic_optimum(monkeypatch: pytest.MonkeyPatch) -> None:
    X, y = _logistic_data(2)
    n, p = X.shape

    def L(w: NDArray[np.float64]) -> float:
        return float(np.mean(np.logaddexp(0, -y * (X @ w))) + LAM / 2 * w @ w)

    def grad(w: NDArray[np.float64]) -> NDArray[np.float64]:
        s = 1 / (1 + np.exp(y * (X @ w)))
        return -(X.T @ (y * s)) / n + LAM * w

    ref = optimize.minimize(L, np.zeros(p), jac=grad, method="BFGS", options={"gtol": 1e-13})
    monkeypatch.setattr(outputnr_mod, "noise_reduction", _identity_nr)
    res = outputnr(X, y, 0.01, random_state=3)
    np.testing.assert_allclose(res.theta, ref.x, atol=1e-8)
    # ||theta*|| < M: the corrected projection leaves it alone (the printed condition
    # "if ||theta|| <= M then rescale to M" would have stretched it to norm M).
    assert np.linalg.norm(res.theta) < sens.logistic_radius(LAM)
    np.testing.assert_array_equal(res.theta, LogisticProblem.from_data(X, y).theta_star)
    excess = LogisticProblem.from_data(X, y).excess_risk(res.theta)[0]
    assert res.halted and abs(excess) < 1e-14


def test_outputnr_projects_only_hypotheses_outside_the_m_ball(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    X, y = _logistic_data(3)
    M = sens.logistic_radius(LAM)

    def far(v: Any, s: float, eps: Any, rng: Any = None) -> NDArray:
        out = _identity_nr(v, s, eps)
        out[0] = 10 * M * np.ones_like(v) / math.sqrt(v.size)  # first level far outside
        return out

    monkeypatch.setattr(outputnr_mod, "noise_reduction", far)
    seen: list[NDArray] = []
    real_search = outputnr_mod._iat_search

    def spy(iat: Any, excess: Callable, T: int, block: int) -> int | None:
        seen.append(np.asarray(excess(0, 2)))
        return real_search(iat, excess, T, block)

    monkeypatch.setattr(outputnr_mod, "_iat_search", spy)
    prob = LogisticProblem.from_data(X, y)
    outputnr(prob, None, 0.01, random_state=0, eps_list=[0.5, 1.0], allow_no_halt=True)
    projected = M * np.ones(4) / 2 * (1 - 1e-12)
    np.testing.assert_allclose(seen[0][0], prob.excess_risk(projected)[0], rtol=1e-12)
    assert seen[0][1] == pytest.approx(0.0, abs=1e-15)  # theta* itself: unchanged


# =================================================================================================
# Data zero -> the noise scales of the spec (KS + Gamma, ALPHA split over the assertions)
# =================================================================================================
def _recording(store: list[tuple[Any, ...]]) -> Callable:
    def rec(v: Any, s: float, eps: Any, rng: Any = None) -> NDArray:
        out = noise_reduction(v, s, eps, rng)
        store.append((np.array(v), s, np.array(eps), out))
        return out

    return rec


def test_covnr_noise_on_zero_data_is_laplace_4_over_eps(monkeypatch: pytest.MonkeyPatch) -> None:
    """X = 0, y = 0: Z^t and z^t are pure noise, Lap(4/eps_t) per entry (NR with Delta = 2 at
    eps_t/2).  Per level one KS and one Gamma test on 5,100 entries; 3 levels -> 6 assertions at
    ALPHA/6.  A mutant that forgets the halving (Lap(2/eps_t)) fails the Gamma test."""
    n, p, grid = 20, 50, [0.5, 1.0, 2.0]
    store: list[tuple[Any, ...]] = []
    monkeypatch.setattr(covnr_mod, "noise_reduction", _recording(store))
    prob = RidgeProblem.from_data(np.zeros((n, p)), np.zeros(n))
    for seed in (1, 2):
        covnr(prob, None, 0.05, random_state=seed, eps_list=grid, allow_no_halt=True)
    assert len(store) == 4
    for v, s, eps, _ in store:
        assert s == 2.0 and np.array_equal(eps, np.array(grid) / 2) and not v.any()
    a = ALPHA / 6
    for t, e in enumerate(grid):
        x = np.concatenate([out[t].ravel() for *_, out in store])
        assert x.size == 2 * (p * p + p)
        assert _ks_ok(x, 4 / e, a), f"level {t}: KS rejects Lap(4/eps_t) (false alarm <= {a:g})"
        assert _gamma_scale_ok(x, 4 / e, a), f"level {t}: scale is not 4/eps_t"
        assert not _gamma_scale_ok(x, 2 / e, a)  # the missing-halving mutant is caught


def test_outputnr_noise_on_zero_data_is_laplace(monkeypatch: pytest.MonkeyPatch) -> None:
    """X = 0: theta* = 0 and theta~^t ~ Lap(2 sqrt(p)/(n lambda eps_t)) per coordinate (Lemma A.10).
    5,000 coordinates per level, 3 levels x (KS + Gamma) at ALPHA/6."""
    n, p, lam, grid = 10, 500, 0.5, [0.5, 1.0, 2.0]
    store: list[tuple[Any, ...]] = []
    monkeypatch.setattr(outputnr_mod, "noise_reduction", _recording(store))
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    prob = LogisticProblem.from_data(np.zeros((n, p)), y, lam)
    assert not prob.theta_star.any()
    released = []
    for seed in range(10):
        r = outputnr(prob, None, 0.05, random_state=seed, eps_list=grid, allow_no_halt=True)
        released.append(r)
    a = ALPHA / 6
    for t, e in enumerate(grid):
        x = np.concatenate([out[t] for *_, out in store])
        b = 2 * math.sqrt(p) / (n * lam * e)
        assert store[0][1] == pytest.approx(2 * math.sqrt(p) / (n * lam), rel=1e-15)
        assert _ks_ok(x, b, a) and _gamma_scale_ok(x, b, a)
    # nothing passes here (every hypothesis is projected to the M-ball, excess ~ lambda M^2/2)
    assert all(not r.halted and r.epsilon == math.inf for r in released)


# =================================================================================================
# Release gating when nothing halts (spec section 5)
# =================================================================================================
@pytest.mark.parametrize("which", ["covnr", "outputnr", "doubling-ridge", "doubling-logistic"])
def test_no_halt_is_refused_unless_allowed(which: str) -> None:
    tiny = [1e-9, 2e-9, 4e-9]
    if which in ("covnr", "doubling-ridge"):
        prob: Any = RidgeProblem.from_data(*_ridge_data(4))
    else:
        prob = LogisticProblem.from_data(*_logistic_data(4))
    run: Callable[..., AccuracyFirstResult] = {
        "covnr": covnr,
        "outputnr": outputnr,
        "doubling-ridge": doubling,
        "doubling-logistic": doubling,
    }[which]
    with pytest.raises(NoHaltError, match="refused") as exc:
        run(prob, None, 0.002, random_state=0, eps_list=tiny)
    res = run(prob, None, 0.002, random_state=0, eps_list=tiny, allow_no_halt=True)
    assert res.stopping_index is None and not res.halted
    np.testing.assert_array_equal(res.theta, prob.theta_star)
    assert res.epsilon == math.inf and res.guarantee.epsilon == math.inf
    assert res.guarantee.holds is False and "DOES NOT HOLD" in res.guarantee.notes
    assert res.guarantee.kind is GuaranteeKind.EX_POST
    # the refusal's own loss: (T, bottom) of IAT = eps_0 + eps_T (Lemma 2.8), or T tests + T
    # hypotheses for doubling (Theorem A.2)
    expect = res.ex_post.epsilon_test + (tiny[-1] if which in ("covnr", "outputnr") else sum(tiny))
    assert exc.value.epsilon_refusal == pytest.approx(expect, rel=1e-12)


def test_estimator_warns_when_theta_star_is_released() -> None:
    X, y = _ridge_data(5)
    est = AccuracyFirstRidge(0.002, eps_list=[1e-9, 2e-9], allow_no_halt=True, random_state=0)
    with pytest.warns(PrivacyWarning, match="NO differential privacy"):
        est.fit(X, y)
    assert est.epsilon_ == math.inf and not est.guarantee_.holds


# =================================================================================================
# Input contract: every rejection happens before any randomness (spec section 6)
# =================================================================================================
def _contract_cases() -> list[tuple[str, Callable[[np.random.Generator], Any], type, str]]:
    Xr, yr = _ridge_data(6, n=20)
    Xl, yl = _logistic_data(6, n=20)
    big = Xr.copy()
    big[3] *= 1.5 / np.abs(big[3]).sum()
    nan = Xr.copy()
    nan[0, 0] = np.nan
    y_big = yr.copy()
    y_big[2] = 1.01
    y01 = (yl > 0).astype(float)
    # Section 7 decision: the logistic domain is ||x||_1 <= 1 (as stated in A.4), not the weaker
    # ||x||_2 <= 1 its proofs need: a row with l2 norm 0.9 but l1 norm 1.27 is refused.
    l2ok = Xl.copy()
    l2ok[0] = [0.9 / math.sqrt(2), 0.9 / math.sqrt(2), 0.0, 0.0]
    rp = RidgeProblem.from_data(Xr, yr)
    cases: list[tuple[str, Callable[[np.random.Generator], Any], type, str]] = []
    for name, fn, X, y in (("covnr", covnr, Xr, yr), ("outputnr", outputnr, Xl, yl)):
        cases += [
            (
                f"{name} l1 norm",
                lambda g, f=fn, y=y: f(big, y, 0.1, random_state=g),
                BoundsViolation,
                r"\|\|x_i\|\|_1 <= 1",
            ),
            (f"{name} NaN X", lambda g, f=fn, y=y: f(nan, y, 0.1, random_state=g), ValueError,
             "NaN"),
            (f"{name} alpha 0", lambda g, f=fn, X=X, y=y: f(X, y, 0.0, random_state=g), ValueError,
             "alpha"),
            (
                f"{name} alpha nan",
                lambda g, f=fn, X=X, y=y: f(X, y, math.nan, random_state=g),
                ValueError,
                "alpha",
            ),
            (
                f"{name} alpha inf",
                lambda g, f=fn, X=X, y=y: f(X, y, math.inf, random_state=g),
                ValueError,
                "alpha",
            ),
            (
                f"{name} gamma 1",
                lambda g, f=fn, X=X, y=y: f(X, y, 0.1, gamma=1.0, random_state=g),
                ValueError,
                "gamma",
            ),
            (
                f"{name} gamma 0",
                lambda g, f=fn, X=X, y=y: f(X, y, 0.1, gamma=0.0, random_state=g),
                ValueError,
                "gamma",
            ),
            (
                f"{name} lam",
                lambda g, f=fn, X=X, y=y: f(X, y, 0.1, lam=-1.0, random_state=g),
                ValueError,
                "lam",
            ),
            (
                f"{name} eps order",
                lambda g, f=fn, X=X, y=y: f(X, y, 0.1, eps_list=[1.0, 0.5], random_state=g),
                ValueError,
                "increasing",
            ),
            (
                f"{name} eps negative",
                lambda g, f=fn, X=X, y=y: f(X, y, 0.1, eps_list=[-1.0, 0.5], random_state=g),
                ValueError,
                "> 0",
            ),
            (
                f"{name} eps nan",
                lambda g, f=fn, X=X, y=y: f(X, y, 0.1, eps_list=[0.1, math.nan], random_state=g),
                ValueError,
                "finite",
            ),
            (
                f"{name} eps tuple T",
                lambda g, f=fn, X=X, y=y: f(X, y, 0.1, eps_list=(0.1, 1.0, 5.0), random_state=g),
                TypeError,
                "int T",
            ),
            (
                f"{name} eps range",
                lambda g, f=fn, X=X, y=y: f(X, y, 0.1, eps_list=(1.0, 0.1, 5), random_state=g),
                ValueError,
                "eps_min < eps_max",
            ),
            (
                f"{name} block",
                lambda g, f=fn, X=X, y=y: f(X, y, 0.1, block_size=0, random_state=g),
                ValueError,
                "block_size",
            ),
            (
                f"{name} allow",
                lambda g, f=fn, X=X, y=y: f(X, y, 0.1, allow_no_halt="yes", random_state=g),
                TypeError,
                "allow_no_halt",
            ),
            (
                f"{name} shape",
                lambda g, f=fn, X=X, y=y: f(X, y[:-1], 0.1, random_state=g),
                ValueError,
                "rows",
            ),
            (
                f"{name} empty",
                lambda g, f=fn: f(np.zeros((0, 3)), np.zeros(0), 0.1, random_state=g),
                ValueError,
                "empty",
            ),
            (
                f"{name} 1-D X",
                lambda g, f=fn, y=y: f(np.zeros(20), y, 0.1, random_state=g),
                ValueError,
                "2-D",
            ),
        ]
    cases += [
        ("covnr calibration", lambda g: covnr(Xr, yr, 0.1, calibration="tight", random_state=g), ValueError, "calibration"),
        ("outputnr l2 <= 1 but l1 > 1", lambda g: outputnr(l2ok, yl, 0.1, random_state=g), BoundsViolation, r"\|\|x_i\|\|_1 <= 1"),
        ("estimator doubling calibration", lambda g: AccuracyFirstRidge(0.1, method="doubling", calibration="one-sided", random_state=g).fit(Xr, yr), ValueError, "noise-reduction"),
        ("covnr |y| > 1", lambda g: covnr(Xr, y_big, 0.1, random_state=g), BoundsViolation, r"\|y_i\| <= 1"),
        ("covnr inf y", lambda g: covnr(Xr, np.full(20, np.inf), 0.1, random_state=g), ValueError, "NaN or infinite"),
        ("outputnr labels 0/1", lambda g: outputnr(Xl, y01, 0.1, random_state=g), BoundsViolation, r"-1 and \+1"),
        ("outputnr labels 0.5", lambda g: outputnr(Xl, yl * 0.5, 0.1, random_state=g), BoundsViolation, r"-1 and \+1"),
        ("problem with y", lambda g: covnr(rp, yr, 0.1, random_state=g), ValueError, "y=None"),
        ("problem lam", lambda g: covnr(rp, None, 0.1, lam=0.1, random_state=g), ValueError, "lam"),
        ("doubling task", lambda g: doubling(Xr, yr, 0.1, random_state=g), ValueError, "task"),
        ("doubling task mismatch", lambda g: doubling(rp, None, 0.1, task="logistic", random_state=g), ValueError, "does not match"),
        ("doubling l1", lambda g: doubling(big, yr, 0.1, task="ridge", random_state=g), BoundsViolation, r"\|\|x_i\|\|_1"),
        ("doubling labels", lambda g: doubling(Xl, y01, 0.1, task="logistic", random_state=g), BoundsViolation, "-1"),
        ("doubling 3-tuple", lambda g: doubling(rp, None, 0.1, eps_list=(0.1, 1.0, 5), random_state=g), ValueError, "tuple"),
        ("doubling gamma", lambda g: doubling(rp, None, 0.1, gamma=2.0, random_state=g), ValueError, "gamma"),
        ("estimator l1", lambda g: AccuracyFirstRidge(0.1, random_state=g).fit(big, yr), BoundsViolation, r"\|\|x_i\|\|_1"),
        ("estimator method", lambda g: AccuracyFirstRidge(0.1, method="sgd", random_state=g).fit(Xr, yr), ValueError, "method"),
        ("estimator classes", lambda g: AccuracyFirstLogisticRegression(0.1, classes=[-1, 2], random_state=g).fit(Xl, yl), BoundsViolation, "outside the declared"),
        ("estimator 3 classes", lambda g: AccuracyFirstLogisticRegression(0.1, random_state=g).fit(Xl, np.arange(20) % 3), ValueError, "binary"),
    ]  # fmt: skip
    return cases


@pytest.mark.parametrize("case", _contract_cases(), ids=lambda c: c[0])
def test_input_contract_rejections_consume_no_randomness(case: tuple[Any, ...]) -> None:
    _, call, exc, match = case
    g = np.random.default_rng(123)
    before = g.bit_generator.state
    with pytest.raises(exc, match=match):
        call(g)
    assert g.bit_generator.state == before


def test_problems_are_built_only_from_validated_data() -> None:
    with pytest.raises(TypeError, match="from_data"):
        RidgeProblem(1, 1, 0.1, np.eye(1), np.zeros(1), 0.0, np.zeros(1), 1.0)
    with pytest.raises(TypeError, match="from_data"):
        LogisticProblem(1, 1, 0.1, np.eye(1), np.ones(1), np.zeros(1), 0.5, 1.0, 0.0, 0)


# =================================================================================================
# Reproducibility, exactness of the block evaluation, guarantee objects
# =================================================================================================
def test_same_seed_same_output_block_size_irrelevant_different_seeds_differ() -> None:
    rp = RidgeProblem.from_data(*_ridge_data(7))
    lp = LogisticProblem.from_data(*_logistic_data(7))
    for run, prob in ((covnr, rp), (outputnr, lp)):
        base = run(prob, None, 0.02, random_state=42)
        for block in (1, 5, 1000):
            again = run(prob, None, 0.02, random_state=42, block_size=block)
            assert again.stopping_index == base.stopping_index
            np.testing.assert_array_equal(again.theta, base.theta)
        other = run(prob, None, 0.02, random_state=43)
        assert not np.array_equal(other.theta, base.theta)
    for prob in (rp, lp):
        a = doubling(prob, None, 0.02, random_state=42)
        b = doubling(prob, None, 0.02, random_state=np.random.default_rng(42))
        assert a.stopping_index == b.stopping_index
        np.testing.assert_array_equal(a.theta, b.theta)


def test_global_numpy_random_is_never_used(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: Any, **k: Any) -> None:
        raise AssertionError("global np.random used")

    for name in ("laplace", "random", "rand", "normal", "uniform", "choice"):
        monkeypatch.setattr(np.random, name, boom)
    covnr(*_ridge_data(8, n=50), 0.05, random_state=1)
    outputnr(*_logistic_data(8, n=50), 0.05, random_state=1)
    doubling(*_ridge_data(8, n=50), 0.05, task="ridge", random_state=1)


@pytest.mark.parametrize("method", ["covnr", "outputnr"])
def test_guarantee_is_eps0_plus_eps_k(method: str) -> None:
    n = 300
    if method == "covnr":
        res = covnr(*_ridge_data(9, n=n), 0.03, random_state=5)
        Delta = (math.sqrt(1 / LAM) + 1) ** 2 / n
    else:
        res = outputnr(*_logistic_data(9, n=n), 0.03, random_state=5)
        M = math.sqrt(2 * math.log(2) / LAM)
        Delta = 2 * math.log((1 + math.exp(M)) / (1 + math.exp(-M))) / n
    T = res.eps_grid.size
    eps_0 = 16 * Delta * math.log(2 * T / 0.1) / 0.03
    k = res.stopping_index
    assert k is not None
    assert res.ex_post.epsilon_test == pytest.approx(eps_0, rel=1e-12)
    assert res.ex_post.epsilon_hypothesis == res.eps_grid[k]
    assert res.epsilon == pytest.approx(eps_0 + res.eps_grid[k], rel=1e-12)
    g = res.guarantee
    assert g.kind is GuaranteeKind.EX_POST and g.delta == 0 and g.holds
    assert g.epsilon == res.epsilon
    assert ("Theorem 3.2" if method == "covnr" else "Theorem 3.4") in g.source
    assert "ex-post" in g.notes.lower() and "public" in g.notes
    assert res.threshold == -0.015  # -alpha/2 for both (OutputNR's printed +alpha/2 corrected)
    assert res.query_sensitivity == pytest.approx(Delta, rel=1e-12)
    assert res.diagnostics is None and not g.diagnostics_released
    assert "excess_risk" not in res.summary() and "timings" not in res.summary()
    assert res.calibration == "paper"
    # the one-sided calibration: same hypotheses (same seed), smaller test epsilon
    run = covnr if method == "covnr" else outputnr
    data = _ridge_data(9, n=n) if method == "covnr" else _logistic_data(9, n=n)
    one = run(*data, 0.03, random_state=5, calibration="one-sided")
    assert one.calibration == "one-sided"
    assert one.ex_post.epsilon_test == pytest.approx(
        Delta * (12 * math.log(10) + 8 * math.log(T / 2)) / 0.03, rel=1e-12
    )
    assert one.ex_post.epsilon_test < 0.6 * res.ex_post.epsilon_test


def test_accuracy_holds_with_probability_one_minus_gamma() -> None:
    """Theorems 3.2/3.4: P[L(theta) - L(theta*) > alpha] <= gamma.  60 seeded runs each; the
    failure count must not exceed the Binomial(60, 0.1) upper ALPHA/2-quantile."""
    rp = RidgeProblem.from_data(*_ridge_data(10, n=200))
    lp = LogisticProblem.from_data(*_logistic_data(10, n=200))
    limit = stats.binom.isf(ALPHA / 2, 60, 0.1)
    for run, prob in ((covnr, rp), (outputnr, lp)):
        fails = sum(prob.excess_risk(run(prob, None, 0.05, random_state=s).theta)[0] > 0.05
                    for s in range(60))
        assert fails <= limit


# =================================================================================================
# DoublingMethod: stopping law and "never below Theorem A.2"
# =================================================================================================
def test_doubling_stopping_index_law(monkeypatch: pytest.MonkeyPatch) -> None:
    """With fixed hypotheses (excess e_t), the tests are independent Laplace tests:
    P[stop at t] = prod_{j<t} (1 - q_j) q_t, q_t = P[-e_t + w >= -alpha/2], w ~ Lap(b).
    Chi-square goodness of fit over the 5 outcomes (incl. no halt), N = 3,000, level ALPHA."""
    X, y = _ridge_data(11, n=50, p=1)
    prob = RidgeProblem.from_data(X, y)
    alpha, gamma, grid = 0.1, 0.1, [1.0, 2.0, 4.0, 8.0]
    b = sens.doubling_test_scale(alpha, gamma, len(grid))
    c = np.array([2.0, 1.0, 0.3, -0.5])  # e_t = alpha/2 + b c_t
    e = alpha / 2 + b * c
    H = prob.hessian[0, 0]
    deltas = np.sqrt(2 * e / H)  # excess of theta* + d is H d^2 / 2 (theta* interior)
    fixed = {g: prob.theta_star + d for g, d in zip(grid, deltas, strict=True)}
    monkeypatch.setattr(
        doubling_mod, "_hypothesis", lambda problem, eps, gen: fixed[eps][None].copy()
    )
    np.testing.assert_allclose(prob.excess_risk(np.array([fixed[g] for g in grid])), e, rtol=1e-9)
    q = np.where(c >= 0, 0.5 * np.exp(-np.abs(c)), 1 - 0.5 * np.exp(-np.abs(c)))
    probs = [*(np.prod(1 - q[:t]) * q[t] for t in range(4)), np.prod(1 - q)]
    N = 3_000
    gen = np.random.default_rng(2024)
    counts = np.zeros(5)
    for _ in range(N):
        r = doubling(prob, None, alpha, gamma=gamma, eps_list=grid, random_state=gen,
                     allow_no_halt=True)
        counts[4 if r.stopping_index is None else r.stopping_index] += 1
    expected = N * np.array(probs)
    assert expected.min() >= 5
    assert stats.chisquare(counts, expected).pvalue >= ALPHA


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    alpha=st.floats(0.005, 0.3),
    gamma=st.floats(0.01, 0.5),
    seed=st.integers(0, 2**31),
    task=st.sampled_from(["ridge", "logistic"]),
)
def test_doubling_never_reports_below_theorem_a2(
    alpha: float, gamma: float, seed: int, task: str
) -> None:
    n = 120
    if task == "ridge":
        X, y = _ridge_data(seed % 1000, n=n, p=3)
        Delta = (math.sqrt(1 / LAM) + 1) ** 2 / n
    else:
        X, y = _logistic_data(seed % 1000, n=n, p=3)
        M = math.sqrt(2 * math.log(2) / LAM)
        Delta = 2 * math.log((1 + math.exp(M)) / (1 + math.exp(-M))) / n
    res = doubling(X, y, alpha, task=task, gamma=gamma, random_state=seed, allow_no_halt=True)
    T, eps_1 = res.eps_grid.size, float(res.eps_grid[0])
    assert np.array_equal(res.eps_grid, eps_1 * 2.0 ** np.arange(T))  # doubling grid
    if res.stopping_index is None:
        assert res.epsilon == math.inf
        return
    k = res.stopping_index + 1
    E_k = 2 * k * Delta * math.log(T / gamma) / alpha + (2**k - 1) * eps_1  # Theorem A.2
    assert res.epsilon >= E_k * (1 - 1e-13)
    assert res.epsilon == pytest.approx(E_k, rel=1e-12)
    assert res.ex_post.epsilon_hypothesis == (2**k - 1) * eps_1


# =================================================================================================
# End-to-end smoke on a 2,000-row KDD-99 subsample, both tasks
# =================================================================================================
@pytest.fixture(scope="module")
def kdd_logistic() -> Any:
    return load_kdd99(n=2_000, random_state=0)


@pytest.fixture(scope="module")
def kdd_ridge() -> Any:
    return load_kdd99(n=2_000, random_state=0, task="ridge")


@pytest.mark.filterwarnings(r"ignore:.*above 10 \(the cap the command line:oracledp._errors.PrivacyWarning")
def test_end_to_end_kdd_logistic(kdd_logistic: Any) -> None:
    ds = kdd_logistic
    alpha = 0.05
    prob = LogisticProblem.from_data(ds.X, ds.y)
    for method in ("outputnr", "doubling"):
        est = AccuracyFirstLogisticRegression(alpha, method=method, random_state=1).fit(ds.X, ds.y)
        r = est.result_
        assert r.halted and math.isfinite(est.epsilon_) and est.guarantee_.holds
        assert est.guarantee_.kind is GuaranteeKind.EX_POST
        assert prob.excess_risk(est.coef_)[0] <= alpha
        assert np.linalg.norm(est.coef_) <= sens.logistic_radius(LAM)
        assert est.epsilon_ == est.ex_post_.epsilon_test + est.ex_post_.epsilon_hypothesis
        # better than predicting the majority class (80% attacks)
        assert est.score(ds.X, ds.y) > max(np.mean(ds.y == 1), np.mean(ds.y == -1))
        proba = est.predict_proba(ds.X[:5])
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # explicit label mapping: string classes map sorted -> (-1, +1)
    labels = np.where(ds.y == 1, "attack", "normal")
    est = AccuracyFirstLogisticRegression(alpha, random_state=1).fit(ds.X, labels)
    assert list(est.classes_) == ["attack", "normal"]
    ref = AccuracyFirstLogisticRegression(alpha, random_state=1).fit(ds.X, -ds.y)
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    assert set(est.predict(ds.X)) <= {"attack", "normal"}
    est2 = clone(est).set_params(classes=["normal", "attack"]).fit(ds.X, labels)
    np.testing.assert_array_equal(est2.coef_, est.coef_)


@pytest.mark.filterwarnings(r"ignore:.*above 10 \(the cap the command line:oracledp._errors.PrivacyWarning")
def test_end_to_end_kdd_ridge(kdd_ridge: Any) -> None:
    ds = kdd_ridge
    alpha = 0.02
    prob = RidgeProblem.from_data(ds.X, ds.y)
    for method in ("covnr", "doubling"):
        with pytest.warns(DiagnosticsWarning):
            est = AccuracyFirstRidge(alpha, method=method, random_state=2,
                                     keep_diagnostics=True).fit(ds.X, ds.y)
        r = est.result_
        assert r.halted and est.guarantee_.holds and math.isfinite(est.epsilon_)
        assert est.guarantee_.diagnostics_released and r.diagnostics is None
        excess = est.diagnostics_["excess_risk"]
        assert excess <= alpha
        assert excess == pytest.approx(prob.excess_risk(est.coef_)[0], rel=1e-9)
        assert set(est.diagnostics_["timings"]) == {"setup", "noise", "search", "total"}
        assert np.linalg.norm(est.coef_) <= 1 / math.sqrt(LAM)
        assert est.predict(ds.X[:3]).shape == (3,)
    # refitting clears the old fit when the new one is refused
    with pytest.raises(NoHaltError):
        est.set_params(eps_list=[1e-9, 2e-9], alpha=1e-4).fit(ds.X, ds.y)
    assert not hasattr(est, "coef_")


# =================================================================================================
# One spelling per concept: rng= still works (FutureWarning), random_state= is the signature's
# =================================================================================================
def test_diagnostics_warning_points_at_the_caller() -> None:
    """The DiagnosticsWarning names the caller's file."""
    X, y = _ridge_data(13, n=80)
    for run in (
        lambda: covnr(X, y, 0.5, random_state=1, allow_no_halt=True, return_diagnostics=True),
        lambda: doubling(X, y, 0.5, task="ridge", random_state=1, allow_no_halt=True,
                         return_diagnostics=True),
    ):
        with pytest.warns(DiagnosticsWarning) as rec:
            run()
        assert rec[0].filename == __file__
