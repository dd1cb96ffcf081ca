"""Confidence bounds used by the privacy audits (spec ``docs/specs/privacy-testing.md``, section 3).

Every bound here is exact (Clopper-Pearson, from ``scipy.stats.beta``), so an
audit that compares it with a claimed privacy loss has a false-alarm rate of
at most the stated ``alpha`` and needs no extra slack.

Conventions
-----------
* :func:`clopper_pearson_lower` / :func:`clopper_pearson_upper` are *one-sided*
  at level ``alpha``: ``P[p < lower] <= alpha`` and ``P[p > upper] <= alpha``
  for every true ``p``.
* The audit bounds (:func:`epsilon_lower_bound`, :func:`mu_lower_bound`) take
  the alpha *of the whole assertion* and spend ``alpha / 2`` on each of the two
  binomial bounds (union bound), so the assertion errs with probability at most
  ``alpha``.  The default ``alpha = 1e-6`` is :data:`ALPHA`.
"""

from __future__ import annotations

import math
import numbers

from scipy import optimize, stats

from oracledp.privacy._composition import gaussian_delta

ALPHA = 1e-6
"""Default false-alarm rate of one audit assertion (OpenDP uses the same constant)."""


def _check_counts(k: object, n: object, name: str = "k") -> tuple[int, int]:
    for value, label in ((k, name), (n, "n")):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{label} must be an integer count, got {type(value).__name__}")
    k, n = int(k), int(n)  # type: ignore[call-overload]
    if n < 1:
        raise ValueError(f"n must be >= 1 trials, got {n}")
    if not 0 <= k <= n:
        raise ValueError(f"{name} must satisfy 0 <= {name} <= n = {n}, got {k}")
    return k, n


def _check_alpha(alpha: object) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"alpha must be a real number, got {type(alpha).__name__}")
    a = float(alpha)
    if not 0.0 < a < 1.0:  # NaN fails too
        raise ValueError(f"alpha must be in the open interval (0, 1), got {alpha!r}")
    return a


def clopper_pearson_lower(k: int, n: int, alpha: float) -> float:
    """One-sided lower confidence bound for a binomial proportion: ``P[p < bound] <= alpha``.

    The ``alpha`` quantile of Beta(k, n - k + 1); 0 when ``k = 0``.
    """
    k, n = _check_counts(k, n)
    a = _check_alpha(alpha)
    if k == 0:
        return 0.0
    return float(stats.beta.ppf(a, k, n - k + 1))


def clopper_pearson_upper(k: int, n: int, alpha: float) -> float:
    """One-sided upper confidence bound for a binomial proportion: ``P[p > bound] <= alpha``.

    The ``1 - alpha`` quantile of Beta(k + 1, n - k); 1 when ``k = n``.  Never 0:
    for ``k = 0`` it is ``1 - alpha**(1/n)``.
    """
    k, n = _check_counts(k, n)
    a = _check_alpha(alpha)
    if k == n:
        return 1.0
    return float(stats.beta.isf(a, k + 1, n - k))


def clopper_pearson_interval(k: int, n: int, alpha: float) -> tuple[float, float]:
    """Two-sided interval with coverage >= 1 - alpha (alpha/2 in each tail)."""
    a = _check_alpha(alpha)
    return clopper_pearson_lower(k, n, a / 2), clopper_pearson_upper(k, n, a / 2)


def epsilon_lower_bound(
    k: int, N: int, k2: int, N2: int, alpha: float = ALPHA, delta: float = 0.0
) -> float:
    """Lower bound on epsilon from one event: ``ln((p_lo - delta) / p'_hi)``.

    ``k`` of ``N`` runs on D fell in the event, ``k2`` of ``N2`` runs on D'.
    ``p_lo`` is the Clopper-Pearson lower bound of ``k/N`` and ``p'_hi`` the
    upper bound of ``k2/N2``, each at level ``alpha / 2``, so with probability
    at least ``1 - alpha`` the true ratio ``(P_D[E] - delta) / P_D'[E]`` is at
    least ``exp(result)``.  A mechanism that is (eps, delta)-DP therefore gives
    a result > eps with probability at most ``alpha``.  Returns ``-inf`` when
    ``p_lo <= delta`` (the event says nothing).
    """
    a = _check_alpha(alpha)
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise TypeError(f"delta must be a real number, got {type(delta).__name__}")
    dlt = float(delta)
    if not 0.0 <= dlt < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    p_lo = clopper_pearson_lower(k, N, a / 2)
    p2_hi = clopper_pearson_upper(k2, N2, a / 2)
    if p_lo <= dlt:
        return -math.inf
    return math.log((p_lo - dlt) / p2_hi)


def mu_lower_bound(k: int, N: int, k2: int, N2: int, alpha: float = ALPHA) -> float:
    """Gaussian-form lower bound ``Phi^-1(p_lo) - Phi^-1(p'_hi)`` (bounds at ``alpha / 2`` each).

    When the event is a threshold of a Gaussian statistic whose mean moves by
    ``shift`` between D and D' (OPDisc, Gaussian RSPM), ``P_D[E] = Phi(a)`` and
    ``P_D'[E] = Phi(a - mu)`` with ``mu = shift / sigma``; since ``Phi^-1`` is
    increasing, the result is <= mu with probability at least ``1 - alpha``.
    Returns ``-inf`` when ``k = 0``.
    """
    a = _check_alpha(alpha)
    p_lo = clopper_pearson_lower(k, N, a / 2)
    p2_hi = clopper_pearson_upper(k2, N2, a / 2)
    if p_lo <= 0.0 or p2_hi >= 1.0:
        return -math.inf
    return float(stats.norm.ppf(p_lo) - stats.norm.ppf(p2_hi))


def gaussian_mu_max(epsilon: float, delta: float) -> float:
    """The largest mu = shift/sigma whose Gaussian mechanism is (epsilon, delta)-DP.

    Solves ``gaussian_delta(epsilon, mu) = delta`` (Balle & Wang 2018, Theorem 8;
    delta(eps) increases with mu) to 1e-12.  For example mu_max(1, 1e-5) = 0.2681.
    """
    if not (isinstance(epsilon, numbers.Real) and math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if not (isinstance(delta, numbers.Real) and 0.0 < delta < 1.0):
        raise ValueError(f"delta must be in the open interval (0, 1), got {delta!r}")
    eps, dlt = float(epsilon), float(delta)
    hi = 1.0
    while gaussian_delta(eps, hi) < dlt:
        hi *= 2.0
    return float(optimize.brentq(lambda m: gaussian_delta(eps, m) - dlt, 1e-12, hi, xtol=1e-13))
