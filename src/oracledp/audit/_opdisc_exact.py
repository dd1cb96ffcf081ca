"""Exact output law of OPDisc on the "checkerboard torus", and the privacy loss it realizes.

OPDisc (Neel, Roth, Vietri, Wu, ICML 2020, Algorithm 1) releases
``argmin_{w in W} L(D, w) - <eta, u_w>`` with ``eta ~ N(0, sigma^2 I_{d+1})`` and
``u_w = pi(w) = (w, sqrt(D^2 - |w|^2)) / D``.  With ``c = 4 G D^2 / tau`` (``G = 1/tau``
for 0/1 losses) write ``sigma = m c / eps``; the law below depends on the calibration
only through ``a = c / sigma = eps / m``.  The paper's multiplier is
``m_paper = (7/4) sqrt(ln(1/delta))``.  Everything here is deterministic quadrature
(no sampling); ``tests/audit/test_opdisc_exact_law.py`` checks it against Monte Carlo draws
of the library's OPDisc.

Construction (checkerboard torus)
---------------------------------
``k`` planes, ``N`` points per plane (``N`` even), ``d = 2k``, ``alpha = pi / N``::

    W = {(D/sqrt(k)) (cos t_{i_1}, sin t_{i_1}, ..., cos t_{i_k}, sin t_{i_k}) : i_j in Z_N},
    t_i = 2 pi i / N,     A = {w : i_1 + ... + i_k even}.

Every ``|w| = D``, so ``u_w = (w / D, 0)``.  Two points differing in one plane by one
step are ``(D/sqrt(k)) |e(t_i) - e(t_{i+1})| = 2 (D/sqrt(k)) sin(alpha)`` apart and all
other pairs are farther, so ``tau = 2 (D/sqrt(k)) sin(pi/N)`` and
``c = 4 G D^2 / tau = 4 D^2 / tau^2 = k / sin^2(pi/N)``: D drops out, only ``a`` matters.
``N = 2`` is the hypercube ``{-1, +1}^k`` (the sine coordinates vanish, so it lives in
``d = k`` dimensions).  The losses are ``1_A`` and ``1_{A^c}`` (0/1, hence
``G = 1/tau``-Lipschitz on W).  Dataset D has ``L(D, A) - L(D, A^c) = M`` (``M`` copies of
``1_A``, one more ``1_A`` and one ``1_{A^c}``); its neighbour D' replaces that last record
by ``1_A`` (difference ``M + 2``).  ``M = -1`` (D = two ``1_{A^c}`` and one ``1_A``) is the
one further pair with the same shape that is not a mirror image of an ``M >= 0`` pair
(shifting ``i_1`` by one swaps A and A^c); it is included in the scan.

Law (short proof)
-----------------
Write ``eta = sigma Z`` and ``Z_j in R^2`` for plane j's block.  Up to a constant and the
positive factor ``sigma / sqrt(k)``, OPDisc maximizes
``F(i) = sum_j <Z_j, e(t_{i_j})> - beta 1_A(i)``, ``beta = Delta sqrt(k) / sigma``, where
``Delta = L(A) - L(A^c) >= 0``.  In plane j let ``i*_j`` be the best index (nearest angle)
and ``g_j`` the loss of moving to the second best, which is a neighbour ``i*_j +- 1``.
Every index vector of the other parity changes some plane by an odd offset, so it loses at
least ``min_j g_j`` against ``i* = (i*_j)``, with equality at one neighbour step.  Hence:
if ``i*`` is odd the output is in A^c; if it is even the output is in A iff
``min_j g_j > beta``.  The rotation by ``2 pi / N`` preserves ``N(0, I_2)``, so given
``g_j`` the index ``i*_j`` is uniform on ``Z_N`` and independent across planes; N even
makes the parity of their sum a fair coin.  So
``P[A] = (1/2) (N q)^k`` with ``q = P[i* = 0, g > beta]`` for one plane.
Cell 0 is ``|y| < x tan(alpha)``; for ``y >= 0`` the neighbour is ``i = 1`` and
``g = <Z, e(0) - e(t_1)> = 2 sin(alpha) (x sin(alpha) - y cos(alpha))``, so
``g > beta`` iff ``|y| < (x - h) tan(alpha)`` with ``h = beta / (2 sin^2(alpha))``:
a wedge of half-angle alpha with apex ``(h, 0)``.  Integrating over ``x = h + s``::

    q_N(h) = int_0^inf phi(h + s) (2 Phi(s tan(pi/N)) - 1) ds      (N >= 4),
    q_2(h) = Phi-bar(h)                                             (alpha = pi/2).

With ``sigma = m c / eps`` and ``c = k / sin^2(alpha)``:
``h = Delta sqrt(k) / (2 sigma sin^2(alpha)) = Delta a / (2 sqrt(k))``, so

    P[M(D) in A]  = (N^k / 2) q_N(h)^k,              h = M a / (2 sqrt(k)),
    P[M(D') in A] = (N^k / 2) q_N(h + a / sqrt(k))^k.

(``N = 4``: ``q_4(h) = Phi-bar(h / sqrt 2)^2``, and the torus with ``(N, k) = (4, k)`` has
exactly the law of the hypercube with ``(2, 2k)``.)  Numerically
``q_N(h) = phi(h) I(h)``, ``I(h) = int_0^inf exp(-h s - s^2/2) erf(s tan(alpha)/sqrt 2) ds``,
with a positive integrand and no cancellation, evaluated in log space.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import integrate, special

from oracledp._validation import check_integer

__all__ = [
    "DEFAULT_NS",
    "TorusViolation",
    "torus_c",
    "torus_in_A_prob",
    "torus_log_in_A_prob",
    "torus_log_q",
    "torus_realized_delta",
    "torus_tau",
    "worst_torus",
]

DEFAULT_NS: tuple[int, ...] = (2, 4, 6, 8, 12, 16, 24, 32, 64, 128)
"""Points per plane scanned by :func:`worst_torus` (the violation grows with N)."""

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT2 = math.sqrt(2.0)
# I(h) is integrated over [0, s_max] with h s_max + s_max^2 / 2 = _TAIL: the omitted tail is
# at most exp(-_TAIL) / (h + s_max), relatively negligible (I(h) >~ tan(alpha) / (h + 1)^2).
_TAIL = 80.0
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(128)
_LOG_TINY = math.log(1e-300)  # stop the M scan once P[M(D) in A] is below this
_MAX_M = 50_000_000


def _check_N(N: object) -> int:
    n = check_integer(N, "N")
    if n < 2 or n % 2:
        raise ValueError(f"N (points per plane) must be even and >= 2, got {N!r}")
    return n


def _check_k(k: object) -> int:
    planes = check_integer(k, "k")
    if planes < 1:
        raise ValueError(f"k (number of planes) must be >= 1, got {k!r}")
    return planes


def _check_pos(x: object, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    v = float(x)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {x!r}")
    return v


def torus_tau(k: int, N: int, D: float = 1.0) -> float:
    """Separation of the torus: ``tau = 2 (D / sqrt(k)) sin(pi / N)``."""
    return 2.0 * (D / math.sqrt(_check_k(k))) * math.sin(math.pi / _check_N(N))


def torus_c(k: int, N: int) -> float:
    """Lemma 4's shift ``c = 4 G D^2 / tau`` with ``G = 1/tau``: ``k / sin^2(pi/N)`` (D-free)."""
    return _check_k(k) / math.sin(math.pi / _check_N(N)) ** 2


def _log_I_gauss(t: float, h: NDArray[np.float64]) -> NDArray[np.float64]:
    """log I(h) for an array h >= 0 (128-node Gauss-Legendre on [0, s_max(h)])."""
    smax = 2.0 * _TAIL / (np.sqrt(h * h + 2.0 * _TAIL) + h)  # root of h s + s^2/2 = _TAIL
    s = 0.5 * smax[:, None] * (1.0 + _GL_NODES[None, :])
    f = np.exp(-h[:, None] * s - 0.5 * s * s) * special.erf(s * (t / _SQRT2))
    return np.log(0.5 * smax * (f @ _GL_WEIGHTS))


def _log_I_quad(t: float, h: float) -> float:
    """log I(h) for one h >= 0 by adaptive quadrature (scipy.integrate.quad)."""
    smax = 2.0 * _TAIL / (math.sqrt(h * h + 2.0 * _TAIL) + h)

    def f(s: float) -> float:
        return math.exp(-h * s - 0.5 * s * s) * math.erf(s * t / _SQRT2)

    # the integrand's scale is min(1, 1/h): split there so quad sees its bulk
    knee = min(smax, 8.0 / max(h, 1.0))
    val = 0.0
    for lo, hi in ((0.0, knee), (knee, smax)):
        if hi > lo:
            part, _ = integrate.quad(f, lo, hi, epsabs=0.0, epsrel=1e-13, limit=200)
            val += part
    return math.log(val)


def torus_log_q(N: int, h: ArrayLike, *, method: str = "gauss") -> NDArray[np.float64]:
    """``log q_N(h)`` for ``h >= 0`` (vectorized): the one-plane probability of cell 0 and a
    gap above the threshold (module docstring).

    ``N = 2``: ``log Phi-bar(h)`` (``scipy.special.log_ndtr``).  ``N >= 4``:
    ``log phi(h) + log I(h)``; ``method="gauss"`` uses a fixed 128-node Gauss-Legendre rule
    (fast, for scans), ``method="quad"`` uses ``scipy.integrate.quad`` point by point.
    """
    n = _check_N(N)
    harr = np.asarray(h, dtype=np.float64)
    flat = np.atleast_1d(harr).ravel()
    if not np.all(np.isfinite(flat)) or np.any(flat < 0):
        raise ValueError("h must be finite and >= 0")
    if n == 2:
        out = special.log_ndtr(-flat)
    else:
        t = math.tan(math.pi / n)
        if method == "gauss":
            logI = _log_I_gauss(t, flat)
        elif method == "quad":
            logI = np.array([_log_I_quad(t, float(x)) for x in flat])
        else:
            raise ValueError(f"method must be 'gauss' or 'quad', got {method!r}")
        out = -0.5 * flat * flat - _LOG_SQRT_2PI + logI
    return out.reshape(harr.shape)


def torus_log_in_A_prob(k: int, N: int, h: ArrayLike, *, method: str = "quad") -> NDArray[np.float64]:
    """``log P[output in A] = log(1/2) + k (log N + log q_N(h))`` for loss difference
    ``L(A) - L(A^c) = 2 sqrt(k) h / a >= 0`` (vectorized over h)."""
    kk = _check_k(k)
    n = _check_N(N)
    return -math.log(2.0) + kk * (math.log(n) + torus_log_q(n, h, method=method))


def torus_in_A_prob(k: int, N: int, h: float) -> float:
    """``P[output in A] = (N^k / 2) q_N(h)^k`` (exact up to quadrature error ~1e-13 relative).

    ``h = M a / (2 sqrt(k))`` for dataset D and ``h + a / sqrt(k)`` for D' (module
    docstring).  For N >= 4 the integral is done by ``scipy.integrate.quad`` in log space,
    so tiny probabilities (1e-12 and far below) and k up to hundreds are accurate.
    """
    return float(np.exp(torus_log_in_A_prob(k, N, float(h), method="quad")))


@dataclass(frozen=True)
class TorusViolation:
    """The largest hockey-stick divergence the checkerboard torus realizes.

    ``realized_delta = max(0, P[M(first) in S] - e^eps P[M(second) in S])`` maximized over
    the loss difference ``M`` of D (D' has ``M + 2``), the output set ``S`` ("A" or "A^c")
    and the ``order`` ("D,D'" or "D',D").  ``p_first`` and ``p_second`` are the two
    probabilities of S at the maximizer.  OPDisc at this multiplier is not
    ``(epsilon, delta)``-DP for any ``delta < realized_delta``.
    """

    realized_delta: float
    M: int
    N: int
    k: int
    d: int
    S: str
    order: str
    epsilon: float
    multiplier: float
    p_first: float
    p_second: float


def _four(eps: float, lp: float | NDArray, lp2: float | NDArray) -> NDArray:
    """Hockey sticks (rows: A (D,D'), A^c (D',D), A^c (D,D'), A (D',D)) from
    lp = log P_D[A], lp2 = log P_D'[A]."""
    lp = np.asarray(lp, dtype=np.float64)
    lp2 = np.asarray(lp2, dtype=np.float64)
    p, p2 = np.exp(lp), np.exp(lp2)
    ee = math.exp(eps)
    with np.errstate(over="ignore"):
        a_fwd = p * -np.expm1(eps + lp2 - lp)  # p - e^eps p2 without cancellation
    return np.stack([a_fwd, (1.0 - p2) - ee * (1.0 - p), (1.0 - p) - ee * (1.0 - p2),
                     p2 - ee * p])


_COMBOS = (("A", "D,D'"), ("A^c", "D',D"), ("A^c", "D,D'"), ("A", "D',D"))


def _probs_of(combo: int, p: float, p2: float) -> tuple[float, float]:
    S, order = _COMBOS[combo]
    pa, pb = (p, p2) if order == "D,D'" else (p2, p)
    return (pa, pb) if S == "A" else (1.0 - pa, 1.0 - pb)


def _exact_at(k: int, N: int, a: float, eps: float, M: int) -> tuple[NDArray, float, float]:
    """The four hockey sticks at one M (quad), with P_D[A] and P_D'[A]."""
    b = a / math.sqrt(k)
    if M >= 0:
        hs = np.array([M * b / 2.0, (M + 2) * b / 2.0])
        lp, lp2 = torus_log_in_A_prob(k, N, hs, method="quad")
        p, p2 = math.exp(lp), math.exp(lp2)
        return _four(eps, lp, lp2), p, p2
    # M = -1: difference -1 against +1; P_{-1}[A] = 1 - P_{+1}[A] (shift of i_1 swaps A, A^c)
    p1 = float(np.exp(torus_log_in_A_prob(k, N, b / 2.0, method="quad")))
    p, p2 = 1.0 - p1, p1
    return _four(eps, math.log(p), math.log(p2)), p, p2


def torus_realized_delta(k: int, N: int, m: float, epsilon: float) -> TorusViolation:
    """Largest ``P[M(D) in S] - e^eps P[M(D') in S]`` on the checkerboard torus, exactly.

    ``k`` planes of ``N`` points (N even; ``N = 2`` is the hypercube ``{-1,+1}^k`` in
    ``d = k`` dimensions, otherwise ``d = 2k``), multiplier ``m`` (``sigma = m c / eps``,
    so ``a = eps / m``), privacy parameter ``epsilon``.  Maximizes over ``M >= -1`` (all
    M for which the divergence can still exceed the best so far: every candidate is at
    most ``P[M(D) in A]``, which decreases in M), over ``S in {A, A^c}`` and both orders.
    The construction, its separation ``tau = 2 (D / sqrt(k)) sin(pi / N)`` (hence
    ``c = k / sin^2(pi / N)``) and the derivation of the law are in the module docstring.

    The scan uses a fixed Gauss-Legendre rule; the reported values at the maximizer are
    recomputed with ``scipy.integrate.quad``.
    """
    kk = _check_k(k)
    n = _check_N(N)
    mm = _check_pos(m, "m")
    eps = _check_pos(epsilon, "epsilon")
    a = eps / mm
    half_b = a / (2.0 * math.sqrt(kk))  # h step per unit of M
    # M = -1 first (scalar), then M = 0, 1, 2, ... in vectorized chunks
    vals_m1, _, _ = _exact_at(kk, n, a, eps, -1)
    j = int(np.argmax(vals_m1))
    best_val, best_M, best_combo = float(vals_m1[j]), -1, j
    chunk = 4096
    start = 0
    while True:
        Ms = np.arange(start, start + chunk + 2, dtype=np.float64)
        lP = -math.log(2.0) + kk * (math.log(n) + torus_log_q(n, Ms * half_b, method="gauss"))
        vals = _four(eps, lP[:-2], lP[2:])
        flat = int(np.argmax(vals))
        combo, idx = divmod(flat, chunk)
        if vals[combo, idx] > best_val:
            best_val, best_M, best_combo = float(vals[combo, idx]), start + idx, combo
        # every candidate at M' >= start + chunk is <= P_D[A](M') <= exp(lP[chunk])
        if lP[chunk] <= max(_LOG_TINY, math.log(best_val) if best_val > 0 else -math.inf):
            break
        start += chunk
        if start > _MAX_M:
            raise ValueError(f"M scan exceeded {_MAX_M} (a = eps/m = {a:g} too small)")
    vals, p, p2 = _exact_at(kk, n, a, eps, best_M)
    # the quad re-evaluation may change which combination wins at this M (rounding only)
    best_combo = int(np.argmax(vals))
    pa, pb = _probs_of(best_combo, p, p2)
    S, order = _COMBOS[best_combo]
    return TorusViolation(
        realized_delta=max(0.0, float(vals[best_combo])), M=int(best_M), N=n, k=kk,
        d=kk if n == 2 else 2 * kk, S=S, order=order, epsilon=eps, multiplier=mm,
        p_first=pa, p_second=pb)


def worst_torus(
    d: int,
    m: float | Callable[[int, int], float],
    epsilon: float,
    Ns: Sequence[int] = DEFAULT_NS,
) -> TorusViolation:
    """The largest :func:`torus_realized_delta` over checkerboard tori that fit in R^d.

    For ``N = 2`` the hypercube ``{-1, +1}^d`` (``k = d``); for even ``N >= 4`` the torus
    with ``k = d // 2`` planes (``2k <= d``; for odd d the last coordinate is unused).
    ``m`` is the multiplier, or a function ``m(N, k)`` of the torus (e.g. a calibration
    that depends on ``|W| = N**k``).  Ties go to the first N in ``Ns``.
    """
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or int(d) < 1:
        raise ValueError(f"d must be an integer >= 1, got {d!r}")
    dd = int(d)
    best: TorusViolation | None = None
    for N in Ns:
        n = _check_N(N)
        k = dd if n == 2 else dd // 2
        if k < 1:
            continue
        mult = m(n, k) if callable(m) else m
        res = torus_realized_delta(k, n, mult, epsilon)
        res = TorusViolation(**{**res.__dict__, "d": dd})
        if best is None or res.realized_delta > best.realized_delta:
            best = res
    if best is None:
        raise ValueError(f"no torus fits in d = {dd} for Ns = {tuple(Ns)}")
    return best
