"""Composition and conversions of privacy losses: the only place their formulas live.

* :func:`basic_composition`: ``(sum eps_t, sum delta_t)`` (Dwork-Roth, Theorem 3.16).
* :func:`advanced_composition`: adaptive composition of ``eps_t``-DP steps with slack
  ``delta'`` in the per-step form ``sqrt(2 ln(1/delta') sum eps_t^2) + sum eps_t (e^eps_t - 1)``
  (Dwork, Rothblum, Vadhan 2010; Dwork-Roth, Theorem 3.20 and its heterogeneous form);
  :func:`advanced_composition_k` is the k-fold homogeneous statement
  ``sqrt(2 k ln(1/delta')) eps + k eps (e^eps - 1)``.
* zCDP (Bun, Steinke 2016): ``eps``-DP implies ``eps^2/2``-zCDP (Prop. 1.4,
  :func:`pure_to_zcdp`); zCDP composes by adding ``rho`` (Lemma 1.7); ``rho``-zCDP implies
  ``(rho + 2 sqrt(rho ln(1/delta)), delta)``-DP (Prop. 1.3, :func:`zcdp_epsilon`), inverted
  by :func:`zcdp_rho`.  These two are the only conversions between zCDP and
  ``(epsilon, delta)``: every zCDP mechanism (OracleQuery's zCDP composition, OracleQueryPGM,
  MST, AIM) plans its budget with :func:`zcdp_rho` and states its loss with
  :func:`zcdp_epsilon`.
* :func:`gaussian_delta`: the exact privacy profile of the Gaussian mechanism (Balle, Wang
  2018, Theorem 8), used by audits.

The Renyi accountant of DP-SGD is in :mod:`oracledp.privacy._rdp`.  Every function returns the
loss of the composed mechanism; none draws randomness.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from oracledp._validation import check_delta, check_epsilon

__all__ = [
    "MIN_ZCDP_EPSILON",
    "advanced_composition",
    "advanced_composition_k",
    "basic_composition",
    "gaussian_delta",
    "pure_to_zcdp",
    "zcdp_epsilon",
    "zcdp_rho",
]


def basic_composition(epsilons: Iterable[float], deltas: Iterable[float] = ()
                      ) -> tuple[float, float]:
    """``(sum eps_t, sum delta_t)``, summed exactly (``math.fsum``): Dwork-Roth Thm 3.16.

    >>> basic_composition([0.1, 0.2, 0.3], [1e-6, 1e-6])
    (0.6, 2e-06)
    """
    return math.fsum(epsilons), math.fsum(deltas)


def advanced_composition(epsilons: Iterable[float], slack: float) -> float:
    """The epsilon of the adaptive composition of ``eps_t``-DP steps, at slack ``delta'``.

    ``sqrt(2 ln(1/delta') sum eps_t^2) + sum eps_t (e^eps_t - 1)`` (Dwork, Rothblum,
    Vadhan 2010, in the per-step form of Dwork-Roth Thm 3.20); the composition is
    ``(that, delta' + sum delta_t)``-DP when step t is ``(eps_t, delta_t)``-DP.

    >>> round(advanced_composition([0.1] * 100, 1e-6), 6)
    6.308231
    """
    if not 0.0 < slack < 1.0:
        raise ValueError(f"advanced composition needs a slack delta' in (0, 1), got {slack!r}")
    eps = list(epsilons)
    sq = math.fsum(e**2 for e in eps)
    lin = math.fsum(e * math.expm1(e) for e in eps)
    return math.sqrt(2.0 * math.log(1.0 / slack) * sq) + lin


def advanced_composition_k(epsilon: float, k: int, slack: float) -> float:
    """k-fold advanced composition: ``sqrt(2 k ln(1/delta')) eps + k eps (e^eps - 1)``.

    Dwork-Roth Theorem 3.20 (the k steps are ``eps``-DP; the result holds with
    ``delta = delta'``); ``inf`` when ``e^eps`` overflows (eps >= 700).

    >>> round(advanced_composition_k(0.1, 100, 1e-6), 6)
    6.308231
    """
    if not 0.0 < slack < 1.0:
        raise ValueError(f"advanced composition needs a slack delta' in (0, 1), got {slack!r}")
    growth = math.expm1(epsilon) if epsilon < 700.0 else math.inf
    return math.sqrt(2.0 * k * math.log(1.0 / slack)) * epsilon + k * epsilon * growth


def pure_to_zcdp(epsilon: float) -> float:
    """``eps^2 / 2``: an ``eps``-DP mechanism is ``eps^2/2``-zCDP (Bun-Steinke 2016, Prop. 1.4).

    >>> pure_to_zcdp(0.2)
    0.020000000000000004
    """
    return epsilon**2 / 2.0


def zcdp_epsilon(rho: float, delta: float) -> float:
    """``rho + 2 sqrt(rho ln(1/delta))``: rho-zCDP implies this epsilon at ``delta``.

    Bun, Steinke 2016, Prop. 1.3.

    >>> round(zcdp_epsilon(0.01, 1e-6), 6)
    0.753384
    """
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


#: :func:`zcdp_rho` refuses a smaller epsilon: its rho (about ``epsilon^2 / (4 ln(1/delta))``)
#: underflows near 1e-160, and the mechanisms divide it further among their steps and take
#: ``1 / rho`` for their noise, which then leaves floating-point range.
MIN_ZCDP_EPSILON = 1e-100


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The zCDP budget of a target ``(epsilon, delta)``: the largest ``rho`` with
    ``zcdp_epsilon(rho, delta) <= epsilon``.

    Solving Prop. 1.3 of Bun-Steinke 2016 for ``rho`` gives
    ``sqrt(rho) = sqrt(L + eps) - sqrt(L)``, ``L = ln(1/delta)``; the closed form is shrunk
    if floating point would make the recomputed epsilon exceed the target.  ``epsilon`` must
    be finite and at least :data:`MIN_ZCDP_EPSILON` (1e-100), ``delta`` in (0, 1).

    >>> zcdp_epsilon(zcdp_rho(1.0, 1e-6), 1e-6) <= 1.0
    True
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if epsilon < MIN_ZCDP_EPSILON:
        raise ValueError(f"epsilon {epsilon:g} is too small to compute with: below "
                         f"{MIN_ZCDP_EPSILON:g} a zCDP mechanism's noise leaves floating-point "
                         "range; raise epsilon")
    L = math.log(1.0 / delta)
    rho = (math.sqrt(L + epsilon) - math.sqrt(L)) ** 2
    for _ in range(1000):  # floating-point safety: never overshoot
        if rho > 0.0 and zcdp_epsilon(rho, delta) <= epsilon:
            return rho
        rho *= 1.0 - 1e-12
    # Only a tiny epsilon gets here: the difference of square roots cancels (at 1e-15 its
    # relative error is about 1e-1, which steps of 1e-12 did not undo in any reasonable
    # time).  The same value without cancellation, eps / (sqrt(L + eps) + sqrt(L)), then
    # shrunk by steps that double.
    rho = (epsilon / (math.sqrt(L + epsilon) + math.sqrt(L))) ** 2
    step = 1e-12
    while zcdp_epsilon(rho, delta) > epsilon:
        rho *= 1.0 - step
        step = min(2.0 * step, 0.5)
    return rho


def gaussian_delta(epsilon: float, mu: float) -> float:
    """The exact delta(epsilon) of a Gaussian mechanism with shift/sigma = mu.

    Balle & Wang (2018), Theorem 8: delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).
    Used by audits to compare with a claimed (epsilon, delta).

    >>> round(gaussian_delta(1.0, 1.0), 6)
    0.126937
    """
    from scipy.stats import norm

    if mu <= 0:
        return 0.0
    return float(
        norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2)
    )
