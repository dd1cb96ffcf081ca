"""Gaussian RSPM's noise calibration, proven here (not the sigma behind FOCS 2019 Theorem 7).

Proof: ``docs/proofs/gaussian-rspm-calibration.md`` (in this repository).  Summary, with Q the
class searched by the argmin (|Q| = |W| hypotheses), m the separator size, pi(q) in {0,1}^m
the separator losses of q, the weights ``eta ~ N(0, sigma^2 I_m)`` and the multiplier mu,
``sigma = 2 sqrt(m) mu / eps`` and ``a = 2 sqrt(m) / sigma = eps / mu``:

* Replacing one record is undone by the output-dependent translation
  ``eta -> eta + 2 (1 - 2 pi(q_hat))`` (``docs/proofs/rspm-shift.md``, Lemma C), of l2 norm
  2 sqrt(m).  Its density ratio at ``eta = sigma Z`` is ``exp(a <Z, u_q> + a^2/2)`` with the
  unit vector ``u_q = (1 - 2 pi(q)) / sqrt(m)``.  Applying it to each output region separately
  (Proposition 1 of the proof) gives, for every replace-one pair and every output set S,
  ``P[M(S) in S] - e^eps P[M(S') in S] <= E[g(Mx)]``, ``g(t) = (1 - exp(eps - a t - a^2/2))_+``,
  ``Mx = max_q <Z, u_q>``: the maximum over the class, because the argmin picks q_hat.
* Layer cake: ``E[g(Mx)] = int_{t0}^inf a exp(eps - a t - a^2/2) P[Mx > t] dt``,
  ``t0 = mu - eps / (2 mu)``, with ``P[Mx > t] <= B(t) = min(1, |Q| Phi-bar(t),
  P[chi_m > t], C(t))``: the union bound over Q, ``<Z, u> <= ||Z||_2``, and
  ``<Z, u> <= ||Z||_1 / sqrt(m)`` with the Chernoff bound
  ``C(t) = inf_l exp(m (l^2/2 + ln(2 Phi(l)) - l t / sqrt(m)))`` (any l >= 0 gives a bound).
* Computed from above on a fixed partition of [0, T] exactly as OPDisc's
  (:func:`~oracledp.learners._opdisc_calibration.layer_cake_log_bound`), monotone in mu, and
  the smallest admissible mu found by a bisection that returns the admissible end.

The paper-style sigma ``2 sqrt(2 m ln(1.25/delta)) / eps`` (:func:`paper_sigma`, the Gaussian
mechanism for one fixed shift of norm 2 sqrt(m): Theorem 7's rate; Appendix B4 itself is not in
our copy) is *not* private: it treats the output-dependent shift as a fixed one.  The parity
class violates it exactly (:mod:`oracledp.audit._gaussian_rspm_exact`).  It is kept only as an
explicit opt-in for reproducing the paper, and its guarantee never holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import special

from oracledp._validation import check_delta, check_epsilon
from oracledp.learners import _calibration as layer_cake
from oracledp.learners._calibration import (
    Calibration,
    DeltaBound,
    NoiseCalibration,
)

__all__ = [
    "PROOF",
    "Calibration",
    "DeltaBound",
    "GaussianRSPMCalibration",
    "calibrate",
    "closed_form_multiplier",
    "delta_upper_bound",
    "paper_multiplier",
    "paper_sigma",
    "proven_multiplier",
]

PROOF = "docs/proofs/gaussian-rspm-calibration.md"
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def paper_multiplier(delta: float) -> float:
    """The paper-style multiplier ``sqrt(2 ln(1.25/delta))`` (sigma = 2 sqrt(m) mu / eps).

    Not a privacy calibration (see the module docstring)."""
    return math.sqrt(2.0 * math.log(1.25 / check_delta(delta)))


def paper_sigma(epsilon: float, delta: float, m: int) -> float:
    """``2 sqrt(2 m ln(1.25/delta)) / eps``: the classical Gaussian mechanism for one fixed
    shift of l2 norm ``2 sqrt(m)`` (Theorem 7's rate).  NOT private for wide classes."""
    m = _check_m(m)
    return 2.0 * math.sqrt(m) * paper_multiplier(delta) / check_epsilon(epsilon)


def _log_l1_sf(m: int, t: np.ndarray) -> np.ndarray:
    """An upper bound of ``log P[||Z||_1 / sqrt(m) > t]``, Z ~ N(0, I_m) (Chernoff).

    ``E exp(l |Z_1|) = 2 exp(l^2/2) Phi(l)``, so for every l >= 0
    ``P[||Z||_1 > sqrt(m) t] <= exp(m (l^2/2 + ln(2 Phi(l)) - l r))`` with ``r = t / sqrt(m)``.
    l approximates the root of ``h(l) = l + phi(l)/Phi(l) - r`` (the minimizer) by safeguarded
    Newton steps from ``r - sqrt(2/pi)``, kept in [0, r]; an inexact root only loosens the
    bound, never invalidates it.  For ``r <= sqrt(2/pi)`` (the mean of |Z_1|) the bound is 1.
    """
    r = np.maximum(t, 0.0) / math.sqrt(m)
    lam = np.maximum(r - _SQRT_2_OVER_PI, 0.0)
    half_log_2pi = 0.5 * math.log(2 * math.pi)
    for _ in range(12):
        # R = phi/Phi as exp(log phi - log Phi), accurate for every lam >= 0; h' = 1 - R (lam + R)
        R = np.exp(-0.5 * lam * lam - half_log_2pi - special.log_ndtr(lam))
        slope = np.maximum(1.0 - R * (lam + R), 1e-3)
        lam = np.clip(lam - (lam + R - r) / slope, 0.0, r)
    val = m * (0.5 * lam * lam + math.log(2.0) + special.log_ndtr(lam) - lam * r)
    return np.where(r > _SQRT_2_OVER_PI, np.minimum(val, 0.0), 0.0)


_TERMS = ("union", "chi", "l1-chernoff")


@lru_cache(maxsize=32)
def _grid_log_B(m: int, size: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fixed partition t_j = j h of [0, T], log B(t_j) and the active term's index.

    T = max(sqrt(m), sqrt(2 ln|Q|)) + 45 makes B(T) < e^-1000, below every float delta.
    """
    log_size = None if size is None else math.log(size)
    t = layer_cake.partition(math.sqrt(float(m)), log_size)
    lb, which = layer_cake.bound_table([layer_cake.log_union_bound(t, log_size),
                                        layer_cake.log_chi_sf(m, t), _log_l1_sf(m, t)])
    return t, lb, which


def delta_upper_bound(mu: float, epsilon: float, m: int, size: int | None = None) -> DeltaBound:
    """A proven upper bound on the delta of Gaussian RSPM with ``sigma = 2 sqrt(m) mu / eps``.

    ``E[g(Y)]`` with ``P[Y > t] <= B(t) = min(1, size Phi-bar(t), P[chi_m > t], C(t))``
    (proof, Proposition 1 and Lemma 2), computed from above on the fixed partition of [0, T]
    (Proposition 4); ``size`` is |Q| or an upper bound of it (None: no union bound).
    Non-increasing in mu.
    """
    eps = check_epsilon(epsilon)
    mu = layer_cake.check_multiplier(mu, "mu")
    t, lb, which = _grid_log_B(_check_m(m), layer_cake.check_size(size))
    return layer_cake.delta_bound_on_grid(t, lb, which, _TERMS, eps, mu)


def closed_form_multiplier(epsilon: float, delta: float, m: int, size: int | None = None) -> float:
    """A closed-form admissible mu (proof, Proposition 3): ``s + eps / (2 s)`` with
    ``s = min(sqrt(2/pi) sqrt(m) + sqrt(2 ln(1/delta)), sqrt(2 ln(|Q| / (2 delta))))``
    (Gaussian concentration of the 1-Lipschitz ``||Z||_1 / sqrt(m)``; union bound)."""
    eps, dlt = check_epsilon(epsilon), check_delta(delta)  # checked before m, as always
    return layer_cake.closed_form(eps, dlt, _SQRT_2_OVER_PI * math.sqrt(_check_m(m)), size)


_proven_multiplier = layer_cake.cached_smallest(delta_upper_bound, closed_form_multiplier,
                                               "Gaussian RSPM")


def proven_multiplier(epsilon: float, delta: float, m: int, size: int | None = None) -> float:
    """The smallest mu (to a relative 1e-5, the admissible end) whose proven delta bound is
    <= delta.  Cached; tens of milliseconds on first call.  Every larger mu is admissible."""
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    return _proven_multiplier(eps, dlt, _check_m(m), layer_cake.check_size(size))[0]


def _check_m(m: Any) -> int:
    return layer_cake.check_count(m, "m (the separator size)")


@dataclass(frozen=True)
class GaussianRSPMCalibration(NoiseCalibration):
    """The noise scale of one Gaussian RSPM run and what it rests on.

    ``sigma = 2 sqrt(m) mu / eps``.  ``method='proven'``: mu is the smallest admissible
    multiplier of :data:`PROOF`, ``delta_bound`` its proven bound (<= delta) and ``bound``
    the active term.  ``method='paper'``: the paper-style ``mu = sqrt(2 ln(1.25/delta))``, not
    private for wide classes; ``delta_bound`` is then the proven bound *at that mu* (it may
    exceed delta) and the guarantee never holds.
    """

    m: int
    mu: float
    mu_paper: float

    @property
    def sigma_paper(self) -> float:
        """The paper-style sigma ``2 sqrt(2 m ln(1.25/delta)) / eps`` (not private)."""
        return 2.0 * math.sqrt(self.m) * self.mu_paper / self.epsilon

    @property
    def ratio_to_paper(self) -> float:
        """sigma / the paper-style sigma = mu / mu_paper."""
        return self.mu / self.mu_paper

    def describe(self) -> str:
        return (f"sigma = 2 sqrt(m) mu / eps = {self.sigma:.6g} with m = {self.m} separator "
                f"weights, mu = {self.mu:.6g} ({self.method}; {self.ratio_to_paper:.4g} x the "
                "Gaussian-mechanism sigma of Theorem 7's rate); " + self._bound_text(PROOF))


def calibrate(epsilon: float, delta: float, m: int, size: int | None,
              calibration: Calibration = "proven", *, size_how: str = "exact") -> GaussianRSPMCalibration:
    """Gaussian RSPM's sigma from public parameters only: eps, delta, the separator size m
    and |W| (``size``, or an upper bound of it; None: no union bound).  Draws nothing.

    ``calibration='paper'`` uses the paper-style multiplier (for reproducing the paper only:
    not private for wide classes).
    """
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    layer_cake.check_calibration(calibration)
    m, size = _check_m(m), layer_cake.check_size(size)
    mu_paper = paper_multiplier(dlt)
    mu, bound_value, bound = layer_cake.choose_multiplier(
        calibration, mu_paper, lambda: _proven_multiplier(eps, dlt, m, size),
        lambda mu: delta_upper_bound(mu, eps, m, size))
    # sigma rounded up: three roundings (sqrt, products, / eps) each lose at most half an ulp
    sigma = layer_cake.rounded_up(2.0 * math.sqrt(m) * mu / eps, 3)
    return GaussianRSPMCalibration(epsilon=eps, delta=dlt, m=m, size=size,
                                   size_how=size_how if size is not None else "not used",
                                   mu=mu, sigma=sigma, delta_bound=bound_value, bound=bound,
                                   method=calibration, mu_paper=mu_paper)
