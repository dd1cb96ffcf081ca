"""OracleQuery's per-round calibration and accuracy bound (no randomness).

Holds the pieces of :mod:`oracledp.synth._oracle_query` that plan a run from public
quantities only (n, the domain, epsilon, delta, T): the per-round ``eps0`` (basic or zCDP
composition, Bun-Steinke 2016 Props 1.3-1.4, Lemma 2.3) and the PRSMA rounds'
``(eps0, delta0)`` (advanced composition, Dwork-Rothblum-Vadhan 2010; Neel-Roth-Wu 2019
Thm 8), FTPL's Laplace scale (``specs/oracle-query.md`` 6.2), the accuracy bound of
spec 6.5 used to choose T, and PRSMA's affordability check.  Each calibration is checked
by composing a ledger of T rounds with :func:`oracledp.privacy.compose`, the composition
the released guarantee is built from.  The derivations are in the docstring of
:mod:`oracledp.synth._oracle_query`.
"""

from __future__ import annotations

import math
from typing import Any

from oracledp._errors import BudgetError
from oracledp.learners._prsma import EPS_FACTOR, PRSMAParameters, prsma_parameters
from oracledp.privacy import Spend, advanced_composition_k, compose
from oracledp.synth._domain import Domain

__all__ = ["oracle_query_bound"]

_PRSMA_MAX_EPS0 = 0.5 * EPS_FACTOR  # Theorem 8: eps0 / 62 <= 1/2
_BETA = 0.05


def _calibrate(epsilon: float, delta: float, T: int) -> tuple[float, str]:
    """Per-round eps0 and the composition, such that the T-fold total stays <= epsilon."""
    eps_basic = epsilon / T
    if delta > 0:
        L = math.log(1.0 / delta)
        # sqrt of the zCDP budget (the closed form of oracledp.privacy.zcdp_rho, before its
        # shrinking): rho + 2 sqrt(rho L) = epsilon; the total is checked by compose below
        r = math.sqrt(L + epsilon) - math.sqrt(L)
        eps_z = math.sqrt(2.0 * r * r / T)
        if eps_z > eps_basic:
            eps0, comp = eps_z, "zcdp"
        else:
            eps0, comp = eps_basic, "basic"
    else:
        eps0, comp = eps_basic, "basic"

    def total(e0: float) -> float:
        fake = [Spend("", e0) for _ in range(T)]
        return compose(fake, comp, delta)[0]

    while total(eps0) > epsilon:  # floating-point safety: never overshoot
        eps0 *= 1.0 - 1e-12
    return eps0, comp


def _calibrate_prsma(epsilon: float, delta: float, T: int) -> tuple[float, float, str]:
    """Per-round ``(eps0, delta0)`` of T PRSMA rounds and the composition (module docstring).

    Advanced composition (delta0 = delta/(2T), slack delta/2) or basic composition
    (eps0 = epsilon/T, delta0 = delta/T), whichever gives the larger eps0; eps0 is capped
    at 31 (Theorem 8).  The total recomputed by :func:`oracledp.privacy.compose` never exceeds
    ``(epsilon, delta)``.
    """
    if not 0.0 < delta < 1.0:
        raise ValueError(f"query_player='prsma' needs delta in (0, 1) (PRSMA is "
                         f"(eps, delta)-DP), got delta = {delta!r}")
    d_adv = delta / (2.0 * T)
    slack = delta - T * d_adv

    def adv(e0: float) -> float:  # compose(..., "advanced") in closed form
        return advanced_composition_k(e0, T, slack)

    # adv is increasing and adv(epsilon) > epsilon (sqrt(2 T ln(1/slack)) > 1)
    lo, hi = 0.0, epsilon
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if adv(mid) <= epsilon:
            lo = mid
        else:
            hi = mid
    eps_adv = lo
    eps_basic = epsilon / T
    if eps_adv > eps_basic:
        eps0, delta0, comp = min(eps_adv, _PRSMA_MAX_EPS0), d_adv, "advanced"
    else:
        eps0, delta0, comp = min(eps_basic, _PRSMA_MAX_EPS0), delta / T, "basic"
        while math.fsum([delta0] * T) > delta:
            delta0 *= 1.0 - 1e-12

    def total(e0: float) -> tuple[float, float]:
        fake = [Spend("", e0, delta0) for _ in range(T)]
        return compose(fake, comp, delta)

    while total(eps0)[0] > epsilon:  # floating-point safety: never overshoot
        eps0 *= 1.0 - 1e-12
    return eps0, delta0, comp


def _calibrate_player(epsilon: float, delta: float, T: int, query_player: str) -> tuple[float, str]:
    """Per-round eps0 and composition.  RSPM rounds are 3 pure parts of eps0/3 each."""
    if query_player == "prsma":
        eps0, _, comp = _calibrate_prsma(epsilon, delta, T)
        return eps0, comp
    if query_player == "rspm":
        part, comp = _calibrate(epsilon, delta, 3 * T)
        return 3.0 * part, comp
    return _calibrate(epsilon, delta, T)


def _ftpl_scale(T: int, m2: int, log_domain: float) -> float:
    """Spec 6.2: ``b = sqrt(T m2 / (4 sqrt(2) Lam))``, ``Lam = max(sqrt(m2 L), L)``, L = ln 2|X|."""
    L = log_domain + math.log(2.0)
    lam = max(math.sqrt(m2 * L), L)
    return math.sqrt(T * m2 / (4.0 * math.sqrt(2.0) * lam))


def oracle_query_bound(
    T: int, *, n: int, log_domain: float, n_queries: int, epsilon: float, delta: float,
    beta: float = _BETA, query_player: str = "noisy-min", data_player: str = "hedge",
    m: int = 0, k: int = 1, samples: int = 0,
) -> float:
    """Accuracy bound ``R_T/T + alpha0 (+ gamma)`` used to choose T (module docstring).

    ``n_queries`` is ``|Qbar| = 2|Q|``; ``m`` the number of indicators (RSPM separator
    size m1 and FTPL dual-separator size m2); ``samples`` the FTPL s.  For ``"prsma"``
    alpha0 is the RSPM bound at PRSMA's ``eps'`` on a part of ``n_part`` records
    (infinite when n < K); it ignores failed rounds (about 1/4 even with a perfect oracle).
    """
    if query_player == "prsma":
        e0, d0, _ = _calibrate_prsma(epsilon, delta, T)
        try:
            pp = prsma_parameters(n, e0, d0)
        except ValueError:
            return math.inf
        eps0, n = pp.eps_prime, pp.n_part
    else:
        eps0, _ = _calibrate_player(epsilon, delta, T, query_player)
    if data_player == "ftpl":
        L = log_domain + math.log(2.0)
        regret = 4.76 * math.sqrt(m * max(math.sqrt(m * L), L) / T)
        gamma = math.sqrt(math.log(4.0 * T * n_queries / beta) / (2.0 * samples))
    else:
        regret = math.sqrt(log_domain / (2.0 * T))
        gamma = 0.0
    if query_player in ("rspm", "prsma"):
        b = 6.0 * m / eps0
        alpha0 = (2.0 * k * b * math.log(4.0 * m * T / beta)
                  + (12.0 / eps0) * math.log(4.0 * T / beta)) / n
    else:
        alpha0 = 2.0 * math.log(2.0 * n_queries * T / beta) / (eps0 * n)
    return regret + alpha0 + gamma


def _default_rounds(n: int, domain: Domain, n_queries: int, epsilon: float, delta: float,
                    max_rounds: int, **player: Any) -> int:
    logx = math.log(domain.size) if domain.size > 1 else 1.0
    best_T, best = 1, math.inf
    for T in range(1, max_rounds + 1):
        b = oracle_query_bound(T, n=n, log_domain=logx, n_queries=n_queries,
                               epsilon=epsilon, delta=delta, **player)
        if b < best:
            best_T, best = T, b
    return best_T


def _prsma_plan(n: int, epsilon: float, delta: float, T: int,
                max_calls: int) -> tuple[float, float, str, PRSMAParameters]:
    """Calibrate the T PRSMA rounds and check affordability (no randomness).

    Raises :class:`~oracledp._errors.BudgetError` when n < K or T*K*R > ``max_calls``.
    """
    eps0, delta0, comp = _calibrate_prsma(epsilon, delta, T)
    try:
        pp = prsma_parameters(n, eps0, delta0)
    except ValueError as exc:
        raise BudgetError(
            f"query_player='prsma' is not affordable: each of the T = {T} rounds is "
            f"(eps0 = {eps0:.6g}, delta0 = {delta0:.3g})-DP and {exc}; use a larger epsilon "
            "or delta, or fewer rounds"
        ) from exc
    total = T * pp.calls
    if total > max_calls:
        raise BudgetError(
            f"query_player='prsma' costs {total:.4g} base runs (T = {T} rounds x K = {pp.K} "
            f"parts x R = {pp.R} runs, at eps0 = {eps0:.6g}, delta0 = {delta0:.3g} per round, "
            f"n = {n}) > max_calls = {max_calls}; affordable only with a larger epsilon or "
            "delta, fewer rounds, or a larger max_calls"
        )
    return eps0, delta0, comp, pp
