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
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from scipy import special

from oracledp._validation import check_delta, check_epsilon

__all__ = [
    "PROOF",
    "OPDiscCalibration",
    "closed_form_multiplier",
    "delta_upper_bound",
    "paper_multiplier",
    "proven_multiplier",
    "space_size_bound",
]

PROOF = "docs/proofs/opdisc-calibration.md"
SAFETY = 1e-6
"""Relative floating-point safety margin on the computed delta bound."""
_H = 1e-3
"""Step of the fixed partition of [0, T] (smaller: a tighter, still valid, bound)."""
_BISECT_RTOL = 1e-5

Calibration = Literal["proven", "paper"]


def paper_multiplier(delta: float) -> float:
    """Theorem 1's m = (7/4) sqrt(ln(1/delta)) (sigma = 7 G D^2 sqrt(ln(1/delta)) / (tau eps)).

    Not a privacy calibration: see the module docstring.
    """
    return 1.75 * math.sqrt(math.log(1.0 / check_delta(delta)))


def _log_chi_sf(k: int, t: np.ndarray) -> np.ndarray:
    """An upper bound of log P[chi_k > t] = log Q(k/2, t^2/2), for t >= 0.

    Q is the regularized upper incomplete gamma, used where it is a normal float.  Where it
    underflows (Q < 1e-290, so x = t^2/2 > s = k/2), the bound
    ``Gamma(s, x) <= x^{s-1} e^{-x} / (1 - (s-1)/x)`` (s >= 1, x > s - 1; for s < 1 without
    the denominator), from ``(1 + u/x)^{s-1} <= e^{u (s-1)/x}`` in
    ``Gamma(s, x) = x^{s-1} e^{-x} int_0^inf (1 + u/x)^{s-1} e^{-u} du``.
    """
    s = k / 2.0
    x = 0.5 * t * t
    q = special.gammaincc(s, x)
    with np.errstate(divide="ignore", invalid="ignore"):
        logq = np.log(q)
        xs = np.maximum(x, s + 1.0)  # only used where q underflows, i.e. x far above s
        asym = (s - 1.0) * np.log(xs) - xs - special.gammaln(s)
        if s >= 1.0:
            asym = asym - np.log1p(-(s - 1.0) / xs)
    return np.where(q > 1e-290, logq, asym)


def _log_B(t: np.ndarray, d: int, log_size: float | None) -> tuple[np.ndarray, np.ndarray]:
    """log B(t) = log min(1, hemisphere chi bound, |W| Phi-bar(t)) and whether the union term won."""
    tp = np.maximum(t, 0.0)
    hemi = np.logaddexp(_log_chi_sf(d + 1, tp), _log_chi_sf(d, tp)) - math.log(2.0)
    if log_size is None:
        union = np.full_like(t, np.inf)
    else:
        union = log_size + special.log_ndtr(-t)
    out = np.minimum(np.minimum(hemi, union), 0.0)
    return out, union < hemi


@lru_cache(maxsize=32)
def _grid_log_B(d: int, size: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fixed partition t_j = j h of [0, T] and log B(t_j); cached per (d, |W|).

    T = max(sqrt(d+1), sqrt(2 ln|W|)) + 45 makes B(T) < e^-1000, below every float delta.
    Returns (t, log B(t), whether the union term is the smaller one).
    """
    log_size = None if size is None else math.log(size)
    top = max(math.sqrt(d + 1.0), 0.0 if log_size is None else math.sqrt(2.0 * log_size)) + 45.0
    t = np.arange(0, math.ceil(top / _H) + 1, dtype=np.float64) * _H
    lb, union_won = _log_B(t, d, log_size)
    # P[Mx > t] is non-increasing: the running minimum of the bounds is a bound too, and it
    # makes B non-increasing (needed for the monotonicity in m, Proposition 4)
    lb = np.minimum.accumulate(lb)
    return t, lb, union_won


def layer_cake_log_bound(t: np.ndarray, lb: np.ndarray, eps: float, m: float) -> float:
    """log of ``E[g(Y)]`` bounded from above, for Y with survival function <= B (Proposition 4).

    ``t`` is the fixed partition ``t_j = j h`` of [0, T], ``lb`` = log B(t_j) (non-increasing),
    ``g(t) = (1 - exp(eps - a t - a^2/2))_+`` with ``a = eps / m``.  Returns the log of
    ``g(0) + sum_j B(t_{j-1}) (g(t_j) - g(t_{j-1})) + B(T) (1 - g(T))``, each term in log
    space, plus ``log1p(SAFETY)``.  Shared by OPDisc and Gaussian RSPM
    (``docs/proofs/gaussian-rspm-calibration.md``), whose bounds differ only in B.
    """
    a = eps / m
    t0 = m - eps / (2.0 * m)
    c0 = eps - 0.5 * a * a  # log(1 - g(t)) = c0 - a t where g(t) > 0
    terms = []
    if t0 < 0.0:  # g(0) > 0 (only for tiny m): the first term
        terms.append(math.log(-math.expm1(c0)))
    # bins (t_{j-1}, t_j] with g(t_j) > 0, i.e. t_j > t0
    first = max(int(np.searchsorted(t, t0, side="right")), 1)
    if first < len(t):
        lo, hi = t[first - 1:-1], t[first:]
        with np.errstate(divide="ignore"):
            # g(t_j) - g(t_{j-1}): the whole of g(t_j) for the bin containing t0
            diff = np.where(
                lo > t0,
                c0 - a * lo + np.log(-np.expm1(-a * (hi - lo))),
                np.log(-np.expm1(np.minimum(c0 - a * hi, 0.0))),
            )
        terms.append(float(special.logsumexp(lb[first - 1:-1] + diff)))
    # the last point: B(T) (1 - g(T))
    terms.append(float(lb[-1]) + min(c0 - a * float(t[-1]), 0.0))
    log_total = float(special.logsumexp(terms)) + math.log1p(SAFETY)
    if not math.isfinite(log_total):  # pragma: no cover - all terms are finite by construction
        raise FloatingPointError("delta bound is not finite")
    return log_total


@dataclass(frozen=True)
class DeltaBound:
    """A proven upper bound on OPDisc's delta at multiplier m (see :func:`delta_upper_bound`)."""

    delta: float
    log_delta: float
    bound: str
    """Which term of min(hemisphere chi, union) was active at t0, where the integrand is largest."""


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
    if not (isinstance(m, (int, float, np.floating)) and m > 0 and math.isfinite(m)):
        raise ValueError(f"m must be a positive finite number, got {m!r}")
    d = _check_d(d)
    size = _check_size(size)
    t, lb, union_won = _grid_log_B(d, size)
    log_total = layer_cake_log_bound(t, lb, eps, m)
    t0 = m - eps / (2.0 * m)
    at = min(max(int(np.searchsorted(t, t0)), 0), len(t) - 1)
    bound = "union" if bool(union_won[at]) else "hemisphere-chi"
    return DeltaBound(delta=math.exp(log_total), log_delta=log_total, bound=bound)


def closed_form_multiplier(epsilon: float, delta: float, d: int, size: int | None = None) -> float:
    """A closed-form admissible m (proof, Proposition 3): ``s + eps / (2 s)`` with
    ``s = min(sqrt(d+1) + sqrt(2 ln(1/delta)), sqrt(2 ln(|W| / (2 delta))))``
    (Laurent-Massart chi tail; Gaussian tail with the union bound)."""
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    L = math.log(1.0 / dlt)
    s = math.sqrt(d + 1.0) + math.sqrt(2.0 * L)
    if size is not None and size >= 2:
        s = min(s, math.sqrt(2.0 * (math.log(size) + L - math.log(2.0))))
    return s + eps / (2.0 * s)


def smallest_admissible(bound: Callable[[float], DeltaBound], start: float, delta: float,
                        what: str) -> tuple[float, DeltaBound]:
    """The smallest multiplier (to a relative ``_BISECT_RTOL``, the admissible end) whose
    proven bound ``bound(m)`` is at most ``delta``, searched from the closed form ``start``
    (admissible by the proof: the numeric bound only confirms it, with a few 5% steps up
    allowed), then down by factors of 4 and by bisection.  Every returned value was checked
    with ``bound``; OPDisc and Gaussian RSPM share it."""
    log_target = math.log(delta)

    def ok(m: float) -> DeltaBound | None:
        b = bound(m)
        return b if b.log_delta <= log_target else None

    hi = start
    hi_bound = ok(hi)
    for _ in range(60):  # the closed form is proven; the numeric bound should confirm it
        if hi_bound is not None:
            break
        hi *= 1.05
        hi_bound = ok(hi)
    if hi_bound is None:  # pragma: no cover - would be a bug in the quadrature
        raise FloatingPointError(f"{what} calibration: no admissible multiplier found")
    lo = hi / 4.0
    while (b := ok(lo)) is not None and lo > 1e-6:
        hi, hi_bound = lo, b
        lo /= 4.0
    while (hi - lo) > _BISECT_RTOL * hi:
        mid = 0.5 * (lo + hi)
        b = ok(mid)
        if b is None:
            lo = mid
        else:
            hi, hi_bound = mid, b
    assert hi_bound is not None and hi_bound.log_delta <= log_target
    return hi, hi_bound


@lru_cache(maxsize=4096)
def _proven_multiplier(eps: float, dlt: float, d: int, size: int | None) -> tuple[float, float, str]:
    m, b = smallest_admissible(lambda m: delta_upper_bound(m, eps, d, size),
                               closed_form_multiplier(eps, dlt, d, size), dlt, "OPDisc")
    return m, b.delta, b.bound


def proven_multiplier(epsilon: float, delta: float, d: int, size: int | None = None) -> float:
    """The smallest m (to a relative 1e-5, rounded up) whose proven delta bound is <= delta.

    Cached; a few tens of milliseconds on first call.  Any larger m is admissible too.
    """
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    return _proven_multiplier(eps, dlt, _check_d(d), _check_size(size))[0]


def _check_d(d: Any) -> int:
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    return int(d)


def _check_size(size: Any) -> int | None:
    if size is None:
        return None
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"|W| must be a positive integer, got {size!r}")
    return int(size)


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
class OPDiscCalibration:
    """The noise scale of one OPDisc run and what it rests on.

    ``sigma = m c / eps`` with ``c = 4 G D^2 / tau``.  ``method='proven'``: m is the
    smallest admissible multiplier of :data:`PROOF`, ``delta_bound`` its proven bound
    (<= delta) and ``bound`` the active term.  ``method='paper'``: Theorem 1's m, which
    is not private for wide W; ``delta_bound`` is then the proven bound *at the paper's m*
    (it may exceed delta) and the guarantee never holds.
    """

    epsilon: float
    delta: float
    d: int
    size: int | None
    size_how: str
    c: float
    m: float
    sigma: float
    delta_bound: float
    bound: str
    method: str
    m_paper: float

    @property
    def ratio_to_paper(self) -> float:
        """sigma / (Theorem 1's sigma) = m / m_paper."""
        return self.m / self.m_paper

    @property
    def proven(self) -> bool:
        return self.delta_bound <= self.delta

    def describe(self) -> str:
        size = "" if self.size is None else f", |W| {'=' if self.size_how == 'exact' else '<='} {self.size:.4g}"
        return (f"sigma = m c / eps with m = {self.m:.6g} ({self.method}; {self.ratio_to_paper:.4g} x "
                f"Theorem 1's), c = 4 G D^2 / tau = {self.c:.6g}; proven delta bound "
                f"{self.delta_bound:.4g} ({self.bound} term; layer-cake bound of {PROOF}, d = {self.d}{size})")


def calibrate(epsilon: float, delta: float, space: Any, lipschitz: float,
              calibration: Calibration = "proven") -> OPDiscCalibration:
    """OPDisc's sigma for ``space`` (``d``, ``tau``, ``max_norm``, optionally ``size()``).

    Reads only public parameters; draws nothing.  ``calibration='paper'`` uses Theorem 1's
    multiplier (for reproducing the paper only: not private for wide W).
    """
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    if calibration not in ("proven", "paper"):
        raise ValueError(f"calibration must be 'proven' or 'paper', got {calibration!r}")
    d = _check_d(space.d)
    size, how = space_size_bound(space)
    c = 4.0 * float(lipschitz) * float(space.max_norm) ** 2 / float(space.tau)
    if not (c > 0 and math.isfinite(c)):
        raise ValueError("OPDisc: the shift c = 4 G D^2 / tau must be positive and finite")
    m_paper = paper_multiplier(dlt)
    if calibration == "proven":
        m, bound_value, bound = _proven_multiplier(eps, dlt, d, size)
    else:
        m = m_paper
        b = delta_upper_bound(m, eps, d, size)
        bound_value, bound = b.delta, b.bound
    # sigma rounded up: two roundings (m c, / eps) can each lose half an ulp
    sigma = math.nextafter(math.nextafter(m * c / eps, math.inf), math.inf)
    return OPDiscCalibration(epsilon=eps, delta=dlt, d=d, size=size, size_how=how, c=c, m=m,
                             sigma=sigma, delta_bound=bound_value, bound=bound,
                             method=calibration, m_paper=m_paper)
