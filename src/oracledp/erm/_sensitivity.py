"""Sensitivities, privacy constants and the data domain of Accuracy First's ERM algorithms.

Ligett, Neel, Roth, Waggoner, Wu, "Accuracy First: Selecting a Differential
Privacy Level for Accuracy-Constrained ERM" (NeurIPS 2017), Section 3 and
Appendix A.  Every function states the lemma or claim it implements; all of
them are for the replace-one neighbouring relation and the domain

* ``||x_i||_1 <= 1`` for every record (Section 3; the proof of Lemma A.6 uses
  the l1 norm; the logistic proofs only need ``||x_i||_2 <= 1``, implied by it),
* ``|y_i| <= 1`` for ridge regression, ``y_i in {-1, +1}`` for logistic
  regression (Section 3.2, Appendix A.4).

The domain checks below raise :class:`~oracledp._errors.BoundsViolation`
naming the bound; nothing is ever clipped.

Note on constants: these are the sensitivities the paper proves.  The authors'
published code uses half of the excess-risk sensitivities (``(M + 1)^2 / (2n)``
for ridge and ``log(1 + e^M) / n`` for logistic regression); we do not.
"""

from __future__ import annotations

import decimal
import math
import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._errors import BoundsViolation
from oracledp._validation import (
    as_dense_float64,
    check_finite_matrix,
    check_open_unit,
    check_positive,
    check_signed_labels,
)

__all__ = [
    "CALIBRATIONS",
    "COVARIANCE_SENSITIVITY",
    "check_l1_rows",
    "check_logistic_labels",
    "check_ridge_targets",
    "doubling_loss",
    "doubling_test_epsilon",
    "doubling_test_scale",
    "iat_epsilon",
    "logistic_excess_risk_sensitivity",
    "logistic_radius",
    "output_l1_sensitivity",
    "output_l2_sensitivity",
    "ridge_excess_risk_sensitivity",
    "ridge_radius",
]

#: l1 sensitivity of each of X^T X and X^T y (Lemma A.6).
COVARIANCE_SENSITIVITY: float = 2.0


def _check_n(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or int(n) < 1:
        raise ValueError(f"n must be a whole number >= 1, got {n!r}")
    return int(n)


def _check_gamma(gamma: object) -> float:
    return check_open_unit(gamma, "gamma", label="gamma (failure probability)")


def _check_T(T: object) -> int:
    if isinstance(T, bool) or not isinstance(T, numbers.Integral) or int(T) < 1:
        raise ValueError(f"T (number of privacy levels) must be a whole number >= 1, got {T!r}")
    return int(T)


# --- radii of the hypothesis sets ----------------------------------------------------------------
def ridge_radius(lam: float) -> float:
    """``sqrt(1/lambda)``: bound on the norm of the ridge optimum (Lemma A.4); radius of C."""
    return math.sqrt(1.0 / check_positive(lam, "lam"))


def logistic_radius(lam: float) -> float:
    """``M = sqrt(2 ln 2 / lambda)``: bound on the norm of the logistic optimum (Claim A.11).

    OutputNR (Algorithm 5) projects its hypotheses onto the ball of this radius
    so that Claim A.12 applies to them.
    """
    return math.sqrt(2.0 * math.log(2.0) / check_positive(lam, "lam"))


# --- sensitivities of the excess-risk queries ----------------------------------------------------
def ridge_excess_risk_sensitivity(n: int, lam: float) -> float:
    """``Delta = (sqrt(1/lambda) + 1)^2 / n`` of ``f(D) = L(theta*, D) - L(theta, D)`` (Claim A.5).

    For every ``theta`` in ``C = {||theta||_2 <= M}``, ``M = sqrt(1/lambda)``
    (Algorithm 3).  Check of the constant: one record's squared loss
    ``(y - <theta, x>)^2 / 2`` lies in ``[0, (M + 1)^2 / 2]`` because
    ``|<theta, x>| <= ||theta||_2 ||x||_2 <= M`` and ``|y| <= 1``; so ``L(theta, .)``
    moves by at most ``(M + 1)^2 / (2n)`` and so does ``min_C L``; the query moves
    by at most the sum, ``(M + 1)^2 / n``.
    """
    n_ = _check_n(n)
    return (ridge_radius(lam) + 1.0) ** 2 / n_


def logistic_excess_risk_sensitivity(n: int, lam: float) -> float:
    """``Delta = 2 ln((1 + e^M) / (1 + e^-M)) / n`` with ``M = sqrt(2 ln 2 / lambda)`` (Claim A.12).

    The sensitivity of ``f(D) = L(D, theta*) - L(D, theta)`` for ``||theta||_2 <= M``
    used by OutputNR (Algorithm 5, where the printed formula is mis-parenthesised;
    this is Claim A.12's).  Note ``(1 + e^M) / (1 + e^-M) = e^M``, so
    ``Delta = 2M / n``; the log-ratio is evaluated stably with ``logaddexp``.
    Check of the constant: one record's loss ``log(1 + exp(-y <theta, x>))`` lies
    in ``[log(1 + e^-M), log(1 + e^M)]`` (``|<theta, x>| <= M``), so each of the two
    terms of ``f`` moves by at most ``M / n`` (``theta*`` has norm <= M, Claim A.11).

    Rounding: the returned float is never below the real number
    ``2 sqrt(2 ln 2 / lambda) / n``.  The floating-point log-ratio alone can fall below
    it: by an ulp for moderate lambda (e.g. 0.5, 1, 10), by a growing fraction for huge
    lambda, where ``log(1 + e^M)`` and ``log(1 + e^-M)`` both round near ``ln 2`` and
    their difference cancels (1.6e-5 relative at ``lambda = 1e24``, 0 from about
    ``1e33`` on).  It is kept where it is at least the formula (so the value, and
    every release, is unchanged where it was already safe; an overestimate only adds
    noise) and otherwise replaced by the formula rounded up
    (:func:`_logistic_delta_upper`).
    """
    n_ = _check_n(n)
    lam_ = check_positive(lam, "lam")
    M = logistic_radius(lam_)
    log_ratio = float(np.logaddexp(0.0, M) - np.logaddexp(0.0, -M))
    return max(2.0 * log_ratio / n_, _logistic_delta_upper(n_, lam_))


def _logistic_delta_upper(n: int, lam: float) -> float:
    """The smallest float ``>=`` a certified upper bound of ``2 sqrt(2 ln 2 / lambda) / n``.

    Evaluated in 50-digit decimal arithmetic from the exact values of the float ``lambda``
    and the integer ``n`` (``ln`` and ``sqrt`` are correctly rounded there, division to 50
    digits: a relative error below ``1e-48``), inflated by ``1e-40`` relative, then rounded
    up to a float.  So the result exceeds the real formula by at most one ulp (plus 1e-40).
    """
    with decimal.localcontext(decimal.Context(prec=50, rounding=decimal.ROUND_HALF_EVEN)):
        two = decimal.Decimal(2)
        value = two * (two * two.ln() / decimal.Decimal(lam)).sqrt() / decimal.Decimal(n)
        bound = value * (1 + decimal.Decimal("1e-40"))
        out = float(bound)  # correctly rounded to nearest
        if decimal.Decimal(out) < bound:
            out = math.nextafter(out, math.inf)
    return out


def output_l2_sensitivity(n: int, lam: float) -> float:
    """``||theta*(D) - theta*(D')||_2 <= 2 / (n lambda)`` for l2-regularised logistic regression.

    Lemma A.10, via Chaudhuri, Monteleoni, Sarwate (2011), Corollary 8: the
    logistic loss is 1-Lipschitz in theta when ``||x||_2 <= 1`` (Claim A.13) and
    the regulariser ``lambda/2 ||theta||^2`` is lambda-strongly convex.
    """
    return 2.0 / (_check_n(n) * check_positive(lam, "lam"))


def output_l1_sensitivity(n: int, p: int, lam: float) -> float:
    """``||theta*(D) - theta*(D')||_1 <= 2 sqrt(p) / (n lambda)`` (Lemma A.10); OutputNR's NR sensitivity."""
    p_ = _check_n(p)
    return math.sqrt(p_) * output_l2_sensitivity(n, lam)


# --- privacy parameters of the tests -------------------------------------------------------------
CALIBRATIONS = ("paper", "one-sided")


def iat_epsilon(
    sensitivity: float, alpha: float, gamma: float, T: int, calibration: str = "paper"
) -> float:
    """InteractiveAboveThreshold's epsilon for CovNR/OutputNR (threshold ``-alpha/2``).

    ``calibration="paper"`` (default): ``eps_0 = 16 Delta ln(2T / gamma) / alpha``,
    Algorithms 3 and 5 (Theorems 3.2 and 3.4).  This makes IAT
    ``(alpha/2, gamma)``-accurate by Theorem A.1
    (``8 Delta ln(2T/gamma) / eps_0 = alpha / 2``), so a halt at ``t`` implies
    ``L(theta_t) - L(theta*) <= alpha`` except with probability gamma.

    ``calibration="one-sided"``: ``eps_0 = Delta (12 ln(1/gamma) + 8 ln(T/2)) / alpha``
    (for ``T >= 2``; about half the paper's value at T = 1000, gamma = 0.1),
    with the same accuracy guarantee.  Derivation: the output is inaccurate only
    if IAT halts at some t with ``f^t < -alpha``; halting needs
    ``f^t + nu_t >= -alpha/2 + rho`` (``rho ~ Lap(2 Delta/eps)`` the threshold noise,
    ``nu_t ~ Lap(4 Delta/eps)`` the query noise), hence ``nu_t - rho > alpha/2``.
    For any split ``0 <= a <= alpha/2`` that needs ``rho < -a`` or ``nu_t > alpha/2 - a``,
    so by a union bound over the T queries (only the upper tail of nu and the
    lower tail of rho matter, unlike Theorem A.1's two-sided bound)

        ``P[fail] <= exp(-a u / 2) / 2 + (T/2) exp(-(alpha/2 - a) u / 4)``,  ``u = eps / Delta``.

    The two terms are equal at ``a* = alpha/6 - 4 ln(T/2) / (3u)``, where the bound
    is ``exp(-a* u / 2)``; setting it to gamma gives
    ``u = (12 ln(1/gamma) + 8 ln(T/2)) / alpha``, and then
    ``a* = 2 ln(1/gamma) / u`` lies in ``(0, alpha/2)``.  Privacy is unaffected:
    IAT is ``eps_0 + eps_t`` ex-post private for any eps_0 (Lemma 2.8).  For
    ``T = 1`` the paper's calibration is used.
    """
    delta = check_positive(sensitivity, "sensitivity")
    a = check_positive(alpha, "alpha")
    g = _check_gamma(gamma)
    t = _check_T(T)
    if not isinstance(calibration, str) or calibration not in CALIBRATIONS:
        raise ValueError(f"unknown calibration {calibration!r}; valid: {', '.join(CALIBRATIONS)}")
    if calibration == "one-sided" and t >= 2:
        return delta * (12.0 * math.log(1.0 / g) + 8.0 * math.log(t / 2.0)) / a
    return 16.0 * delta * math.log(2.0 * t / g) / a


def doubling_test_scale(alpha: float, gamma: float, T: int) -> float:
    """``alpha / (2 ln(T / gamma))``: Laplace scale of each test of the DoublingMethod (Algorithm 4).

    ``P[w >= alpha/2] = exp(-ln(T/gamma)) / 2 = gamma / (2T)``, so by a union bound
    over the T tests the method is ``1 - gamma`` accurate (Theorem A.2).
    """
    a = check_positive(alpha, "alpha")
    g = _check_gamma(gamma)
    t = _check_T(T)
    return a / (2.0 * math.log(t / g))


def doubling_test_epsilon(sensitivity: float, alpha: float, gamma: float, T: int) -> float:
    """``2 Delta ln(T / gamma) / alpha``: epsilon of one DoublingMethod test (Laplace mechanism)."""
    delta = check_positive(sensitivity, "sensitivity")
    a = check_positive(alpha, "alpha")
    g = _check_gamma(gamma)
    t = _check_T(T)
    return 2.0 * delta * math.log(t / g) / a


def doubling_loss(
    k: int, sensitivity: float, alpha: float, gamma: float, T: int, eps_1: float
) -> float:
    """Theorem A.2: ``E(k) = 2 k Delta ln(T / gamma) / alpha + (2^k - 1) eps_1``.

    The ex-post loss of the DoublingMethod when it stops at its k-th test
    (``k = 1..T``, 1-based as in the paper) on the grid ``eps_i = 2^(i-1) eps_1``:
    k Laplace tests plus k independent hypotheses ``sum_i 2^(i-1) eps_1``,
    composed with the privacy filter of Rogers et al. (2016), Theorem 3.6.
    """
    t = _check_T(T)
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= int(k) <= t:
        raise ValueError(f"k must be a whole number in 1..T={t}, got {k!r}")
    Delta = check_positive(sensitivity, "sensitivity")
    a = check_positive(alpha, "alpha")
    g = _check_gamma(gamma)
    e1 = check_positive(eps_1, "eps_1")
    k_ = int(k)
    return 2 * k_ * Delta * math.log(t / g) / a + (2**k_ - 1) * e1


# --- the data domain -----------------------------------------------------------------------------
def check_l1_rows(X: ArrayLike, name: str = "X") -> NDArray[np.float64]:
    """A finite 2-D float array whose rows all satisfy ``||x_i||_1 <= 1``.

    Raises BoundsViolation naming the bound and the fix, never the offending rows
    or their norms (they are data).  Nothing is clipped.
    """
    arr = check_finite_matrix(X, name)
    _refuse_above_one(
        np.abs(arr).sum(axis=1), name, "||x_i||_1 <= 1 for every row", "Lemma A.6, Claim A.12",
        "rows", "Rescale each row with a data-independent rule, e.g. x / max(1, ||x||_1), and "
        "call again.",
    )
    return arr


def check_ridge_targets(y: ArrayLike, n: int, name: str = "y") -> NDArray[np.float64]:
    """A finite 1-D float target of length n with ``|y_i| <= 1`` (Section 3, Lemma A.6)."""
    arr = as_dense_float64(y, name, must_be="a 1-D array of real numbers",
                           sparse="sparse input is")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} values but X has {n} rows")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    _refuse_above_one(np.abs(arr), name, "|y_i| <= 1", "Lemma A.6, Claim A.5", "values",
                      "Rescale y by a public constant and call again.")
    return arr


def _refuse_above_one(
    magnitudes: NDArray[np.float64], name: str, bound: str, lemmas: str, items: str, fix: str
) -> None:
    """BoundsViolation if any magnitude exceeds 1: names the bound and the fix, never the data."""
    if (magnitudes > 1.0).any():
        raise BoundsViolation(
            f"{name}: the privacy proofs assume {bound} (Ligett et al. 2017, Section 3, "
            f"{lemmas}), and some {items} violate it. {fix}"
        )


def check_logistic_labels(y: ArrayLike, n: int, name: str = "y") -> NDArray[np.float64]:
    """Labels exactly in {-1, +1} (Section 3.2, Appendix A.4), as float64."""
    return check_signed_labels(y, n, name).astype(np.float64)
