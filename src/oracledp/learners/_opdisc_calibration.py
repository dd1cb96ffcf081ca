"""OPDisc's noise calibration, proven here (not Theorem 1's sigma).

Proof: ``docs/proofs/opdisc-calibration.md`` (in this repository).  Summary, with
W the tau-separated space, D = max ||w||, u_w = pi(w) the unit vectors of
Section 3, c = 4 G D^2 / tau (the shift of Lemma 4), sigma = m c / eps and
a = c / sigma = eps / m:

* For every replace-one neighbouring pair and every output set S,
  ``P[M(D) in S] - e^eps P[M(D') in S] <= E[g(Mx)]`` with
  ``g(t) = (1 - exp(eps - a t - a^2 / 2))_+`` and ``Mx = max_w <Z, u_w>``,
  ``Z ~ N(0, I_{d+1})`` (Proposition 1 of the proof: Lemma 4's shift applied to
  each output region separately, the density ratio evaluated at the *released* w).
* Layer cake: ``E[g(Mx)] = int_{t0}^inf a exp(eps - a t - a^2/2) P[Mx > t] dt``,
  ``t0 = m - eps / (2 m)``, and ``P[Mx > t] <= B(t) = min(1, H(t), |W| Phi-bar(t))``
  with the hemisphere bound ``H(t) = (P[chi_{d+1} > t] + P[chi_d > t]) / 2``
  (every u_w has a non-negative last coordinate) and the union bound over W.
* On a fixed partition of [0, T] the bound is computed from above as
  ``g(0) + sum_j B(t_{j-1}) (g(t_j) - g(t_{j-1})) + B(T) (1 - g(T))`` in log space, times
  ``1 + SAFETY`` for floating point (Proposition 4); with B non-increasing this is a
  non-negative combination of the g(t_j), each non-increasing in m (Proposition 2), so the
  computed bound is monotone in m.
* The smallest admissible m is found by bisection that keeps the invariant
  ``bound(hi) <= delta`` and returns ``hi`` (never the failing end), starting from the
  closed form of Proposition 3.

Theorem 1's multiplier ``(7/4) sqrt(ln(1/delta))`` (:func:`paper_multiplier`)
is *not* private for wide W (exact counterexamples in
:mod:`oracledp.audit._opdisc_exact`); it is kept only as an explicit opt-in for
reproducing the paper, and its guarantee never holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from oracledp._validation import check_delta, check_epsilon
from oracledp.learners import _calibration as layer_cake
from oracledp.learners._calibration import (
    SAFETY,
    Calibration,
    DeltaBound,
    NoiseCalibration,
    layer_cake_log_bound,
    smallest_admissible,
)

__all__ = [
    "PROOF",
    "SAFETY",
    "Calibration",
    "DeltaBound",
    "OPDiscCalibration",
    "closed_form_multiplier",
    "delta_upper_bound",
    "layer_cake_log_bound",
    "paper_multiplier",
    "proven_multiplier",
    "smallest_admissible",
    "space_size_bound",
]

PROOF = "docs/proofs/opdisc-calibration.md"

#: The terms of B, in the order of :func:`_grid_log_B` (the first wins a tie).
_TERMS = ("hemisphere-chi", "union")


def paper_multiplier(delta: float) -> float:
    """Theorem 1's m = (7/4) sqrt(ln(1/delta)) (sigma = 7 G D^2 sqrt(ln(1/delta)) / (tau eps)).

    Not a privacy calibration: see the module docstring.
    """
    return 1.75 * math.sqrt(math.log(1.0 / check_delta(delta)))


@lru_cache(maxsize=32)
def _grid_log_B(d: int, size: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fixed partition t_j = j h of [0, T] and log B(t_j); cached per (d, |W|).

    B = min(1, hemisphere chi bound, |W| Phi-bar(t)), the hemisphere bound
    ``(P[chi_{d+1} > t] + P[chi_d > t]) / 2``; T = max(sqrt(d+1), sqrt(2 ln|W|)) + 45 makes
    B(T) < e^-1000, below every float delta.  Returns (t, log B(t), the index in
    :data:`_TERMS` of the smaller term).
    """
    log_size = None if size is None else math.log(size)
    t = layer_cake.partition(math.sqrt(d + 1.0), log_size)
    tp = np.maximum(t, 0.0)
    hemi = (np.logaddexp(layer_cake.log_chi_sf(d + 1, tp), layer_cake.log_chi_sf(d, tp))
            - math.log(2.0))
    lb, which = layer_cake.bound_table([hemi, layer_cake.log_union_bound(t, log_size)])
    return t, lb, which


def delta_upper_bound(m: float, epsilon: float, d: int, size: int | None = None) -> DeltaBound:
    """A proven upper bound on the delta of OPDisc with sigma = m c / eps (``c = 4 G D^2/tau``).

    The bound is ``E[g(Y)]`` for a variable Y with survival function
    ``B = min(1, hemisphere chi_{d+1}/chi_d, size * Phi-bar)``, ``g(t) = (1 - e^{eps - a t -
    a^2/2})_+``, ``a = eps / m`` (proof, Proposition 1); ``size`` is |W| or an upper bound
    of it (``None``: the chi bound only).  On the fixed partition t_j = j h of [0, T]
    (proof, Proposition 4):
    ``E[g(Y)] <= g(0) + sum_j B(t_{j-1}) (g(t_j) - g(t_{j-1})) + B(T) (1 - g(T))``,
    each term computed in log space, the total times ``1 + SAFETY``.  The partition does not
    depend on m and each g(t_j) is non-increasing in m, so the computed bound is monotone in m.
    """
    eps = check_epsilon(epsilon)
    m = layer_cake.check_multiplier(m, "m")
    t, lb, which = _grid_log_B(_check_d(d), layer_cake.check_size(size))
    return layer_cake.delta_bound_on_grid(t, lb, which, _TERMS, eps, m)


def closed_form_multiplier(epsilon: float, delta: float, d: int, size: int | None = None) -> float:
    """A closed-form admissible m (proof, Proposition 3): ``s + eps / (2 s)`` with
    ``s = min(sqrt(d+1) + sqrt(2 ln(1/delta)), sqrt(2 ln(|W| / (2 delta))))``
    (Laurent-Massart chi tail; Gaussian tail with the union bound)."""
    return layer_cake.closed_form(epsilon, delta, math.sqrt(d + 1.0), size)


_proven_multiplier = layer_cake.cached_smallest(delta_upper_bound, closed_form_multiplier,
                                               "OPDisc")


def proven_multiplier(epsilon: float, delta: float, d: int, size: int | None = None) -> float:
    """The smallest m (to a relative 1e-5, rounded up) whose proven delta bound is <= delta.

    Cached; a few tens of milliseconds on first call.  Any larger m is admissible too.
    """
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    return _proven_multiplier(eps, dlt, _check_d(d), layer_cake.check_size(size))[0]


def _check_d(d: Any) -> int:
    return layer_cake.check_count(d, "d")


_EXACT_COUNT_BUDGET = 3_000_000


def space_size_bound(space: Any) -> tuple[int | None, str]:
    """|W| for the union bound: exact where counting is cheap, else the box bound (2K+1)^d.

    Returns ``(size, how)``; ``size`` is None for a space that offers neither.
    """
    d = int(space.d)
    k_max = getattr(space, "k_max", None)
    cap = getattr(space, "k_norm2_max", None)
    size_fn = getattr(space, "size", None)
    if callable(size_fn) and (k_max is None or cap is None
                              or d * (2 * k_max + 1) * (cap + 1) <= _EXACT_COUNT_BUDGET):
        return int(size_fn()), "exact"
    if k_max is not None:
        return (2 * int(k_max) + 1) ** d, "box bound (2K+1)^d"
    return None, "not used"


@dataclass(frozen=True)
class OPDiscCalibration(NoiseCalibration):
    """The noise scale of one OPDisc run and what it rests on.

    ``sigma = m c / eps`` with ``c = 4 G D^2 / tau``.  ``method='proven'``: m is the
    smallest admissible multiplier of :data:`PROOF`, ``delta_bound`` its proven bound
    (<= delta) and ``bound`` the active term.  ``method='paper'``: Theorem 1's m, which
    is not private for wide W; ``delta_bound`` is then the proven bound *at the paper's m*
    (it may exceed delta) and the guarantee never holds.
    """

    d: int
    c: float
    m: float
    m_paper: float

    @property
    def ratio_to_paper(self) -> float:
        """sigma / (Theorem 1's sigma) = m / m_paper."""
        return self.m / self.m_paper

    def describe(self) -> str:
        return (f"sigma = m c / eps with m = {self.m:.6g} ({self.method}; {self.ratio_to_paper:.4g} x "
                f"Theorem 1's), c = 4 G D^2 / tau = {self.c:.6g}; "
                + self._bound_text(PROOF, f", d = {self.d}"))


def calibrate(epsilon: float, delta: float, space: Any, lipschitz: float,
              calibration: Calibration = "proven") -> OPDiscCalibration:
    """OPDisc's sigma for ``space`` (``d``, ``tau``, ``max_norm``, optionally ``size()``).

    Reads only public parameters; draws nothing.  ``calibration='paper'`` uses Theorem 1's
    multiplier (for reproducing the paper only: not private for wide W).
    """
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    layer_cake.check_calibration(calibration)
    d = _check_d(space.d)
    size, how = space_size_bound(space)
    c = 4.0 * float(lipschitz) * float(space.max_norm) ** 2 / float(space.tau)
    if not (c > 0 and math.isfinite(c)):
        raise ValueError("OPDisc: the shift c = 4 G D^2 / tau must be positive and finite")
    m_paper = paper_multiplier(dlt)
    m, bound_value, bound = layer_cake.choose_multiplier(
        calibration, m_paper, lambda: _proven_multiplier(eps, dlt, d, size),
        lambda m: delta_upper_bound(m, eps, d, size))
    # sigma rounded up: two roundings (m c, / eps) can each lose half an ulp
    sigma = layer_cake.rounded_up(m * c / eps, 2)
    return OPDiscCalibration(epsilon=eps, delta=dlt, d=d, size=size, size_how=how, c=c, m=m,
                             sigma=sigma, delta_bound=bound_value, bound=bound,
                             method=calibration, m_paper=m_paper)
