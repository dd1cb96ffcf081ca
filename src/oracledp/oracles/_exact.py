"""Exact comparison of oracle objectives: which of a few points is the exact argmin.

The oracles search in floating point; this module decides, in exact arithmetic, between
the points whose floating-point objectives are too close to be told apart.  See the
module docstring of :mod:`oracledp.oracles._base` for the full argument; in short:

* **The exact objective.**  ``F(k) = L(k) + P(k)`` with ``L`` the integer 0/1 loss.
  For OPDisc's noise vector ``eta`` (floats are exact dyadic rationals) and
  ``K2 = space.max_k_norm2``::

      sqrt(K2) F(k) = sqrt(K2) L(k) - sum_j eta_j k_j - eta_d sqrt(K2 - ||k||^2),

  a rational number plus rational multiples of square roots of integers.  For a general
  :class:`~oracledp.oracles._halfspace.Perturbation` (RSPM's separator weights) the
  table entries *are* the exact values (plus an optional exact residual table).
* **The float band.**  :func:`float_tolerance` bounds, with a margin of more than 64,
  the error of every floating-point evaluation of ``F`` the oracles use (at most
  ``d + cap + 2`` roundings of terms each below the magnitude ``mag``, plus the error of
  the square root near ``||k||^2 = K2``).  A point whose float value exceeds the float
  minimum by more than ``2 tol`` is certainly not the exact minimizer.
* **Exact comparison** (:meth:`ExactObjective.compare`).  The difference of two
  objectives (times ``sqrt(K2)``) is ``A + sum_c q_c sqrt(c)`` with rational ``A, q_c``
  and distinct square-free integers ``c > 1``.  Square roots of distinct square-free
  integers are linearly independent over the rationals, so the difference is zero
  exactly when ``A`` and every ``q_c`` are zero (decided in rational arithmetic);
  otherwise its sign is found by outward-rounded integer square roots
  (``isqrt(c 4^p) / 2^p <= sqrt(c) < (isqrt(c 4^p) + 1) / 2^p``) at 64, 128, ...
  bits, which must terminate for a non-zero number; beyond :data:`MAX_BITS` bits the
  comparison is refused (never seen; the oracle then does not certify).
* **Tie rule.**  Among points with exactly equal objectives (probability zero under
  continuous noise) the lexicographically smallest integer vector ``k`` wins.  Exception:
  a perturbation that is identically zero (no noise, never a private release) makes
  ``F`` the integer loss; the searches then prove the minimum value exactly and return an
  exact minimizer of their choice (enumeration still returns the smallest k).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles._halfspace import Perturbation

MAX_BITS = 4096
"""Largest precision (bits, about 1,230 decimal digits) tried before refusing a comparison."""

_U = 2.0**-53  # unit roundoff of float64
_MARGIN = 2.0**7  # the band is this many times the worst-case evaluation error


@lru_cache(maxsize=4096)
def squarefree(n: int) -> tuple[int, int]:
    """``(s, c)`` with ``n = s^2 c`` and ``c`` square-free (``n >= 0``; ``(0, 1)`` for 0)."""
    if n == 0:
        return 0, 1
    s, c = 1, 1
    m = n
    p = 2
    while p * p <= m:
        e = 0
        while m % p == 0:
            m //= p
            e += 1
        s *= p ** (e // 2)
        if e % 2:
            c *= p
        p += 1 if p == 2 else 2
    c *= m  # the remaining factor is 1 or a prime
    return s, c


def _sign_of_radicals(rational: Fraction, terms: dict[int, Fraction]) -> int | None:
    """Exact sign of ``rational + sum_c q_c sqrt(c)`` (distinct square-free ``c > 1``).

    Zero exactly when every coefficient is zero (linear independence of square roots);
    otherwise refined with outward-rounded integer square roots until the interval
    excludes 0.  ``None`` when :data:`MAX_BITS` does not suffice.
    """
    terms = {c: q for c, q in terms.items() if q != 0}
    if not terms:
        return (rational > 0) - (rational < 0)
    bits = 64
    while bits <= MAX_BITS:
        scale = 1 << bits
        lo = hi = rational * scale
        for c, q in terms.items():
            r = math.isqrt(c << (2 * bits))  # r <= sqrt(c) 2^bits < r + 1 (c not a square)
            if q > 0:
                lo += q * r
                hi += q * (r + 1)
            else:
                lo += q * (r + 1)
                hi += q * r
        if lo > 0:
            return 1
        if hi < 0:
            return -1
        bits *= 2
    return None


def opdisc_noise_magnitude(etas: NDArray[np.floating], k_max: int, K2: int
                           ) -> NDArray[np.float64]:
    """Per row of ``etas``: a bound on the magnitude of OPDisc's noise term and its parts."""
    etas = np.atleast_2d(np.asarray(etas, dtype=np.float64))
    d = etas.shape[1] - 1
    return (np.abs(etas[:, :d]).sum(axis=1) * (k_max / math.sqrt(K2))
            + np.abs(etas[:, d]) * (2.0 + 2.0 * math.sqrt(K2)))


def band_tolerance(n_terms: int, max_loss: float | NDArray[np.floating],
                   noise_mag: float | NDArray[np.floating]) -> Any:
    """The float band ``tol`` (see :meth:`ExactObjective.tolerance`), vectorized."""
    return _MARGIN * n_terms * _U * (1.0 + max_loss + noise_mag)


def _lex_less(a: NDArray[np.integer], b: NDArray[np.integer]) -> bool:
    return tuple(int(x) for x in a) < tuple(int(x) for x in b)


class ExactObjective:
    """The exact objective of one oracle call (a problem and a noise vector or perturbation).

    ``eta``: OPDisc's noise vector (length d + 1), or a
    :class:`~oracledp.oracles._halfspace.Perturbation` (exact from its ``eta`` when it was
    built by :meth:`~oracledp.oracles._halfspace.Perturbation.from_eta`, else from its
    tables and residual).
    """

    def __init__(self, problem: Any, eta: NDArray[np.floating] | Perturbation) -> None:
        space = problem.space
        self.problem = problem
        self.space = space
        k_max = getattr(space, "k_max", None)
        K2 = getattr(space, "max_k_norm2", None)
        cap = getattr(space, "k_norm2_max", None)
        if k_max is None or K2 is None or cap is None:
            # another space type (tests): its points, D^2 = the largest squared norm
            K = np.asarray(space.enumerate_k(), dtype=np.int64)
            k_max = int(np.abs(K).max(initial=0))
            K2 = cap = int((K * K).sum(axis=1).max(initial=0))
        self.k_max = int(k_max)
        self.K2 = int(K2)
        self._cap = int(cap)
        self.pert: Perturbation | None = None
        if isinstance(eta, Perturbation):
            self.pert = eta
            self.eta = None if eta.eta is None else np.asarray(eta.eta, dtype=np.float64)
        else:
            self.eta = np.asarray(eta, dtype=np.float64)
        #: the perturbation is identically zero (no noise): F = L, an integer, so every
        #: float value is exact; the searches then prove the minimum value and keep any
        #: exact minimizer instead of enumerating the (typically huge) set of equal losses
        self.zero_noise = self._is_zero()
        n = getattr(problem, "n", None)
        self._n = None if n is None else int(n)
        self._noise_mag = self._noise_magnitude()
        self._terms = len(self.eta) if self.eta is not None else int(space.d) + 1
        self._terms += self._cap + 16

    def _is_zero(self) -> bool:
        if self.eta is not None:
            return not self.eta.any()
        assert self.pert is not None
        res = self.pert.value_cost_residual
        return not (self.pert.value_cost.any() or self.pert.norm_cost.any()
                    or (res is not None and res.any()))

    # ------------------------------------------------------------------ float band
    def _noise_magnitude(self) -> float:
        mag = 0.0
        if self.eta is not None:
            mag += float(opdisc_noise_magnitude(self.eta[None, :], self.k_max, self.K2)[0])
        if self.pert is not None:
            mag += float(np.abs(self.pert.value_cost).max(axis=1).sum())
            mag += float(np.abs(self.pert.norm_cost).max(initial=0.0))
            if self.pert.value_cost_residual is not None:
                mag += float(np.abs(self.pert.value_cost_residual).max(axis=1).sum())
        return mag

    def tolerance(self, max_loss: float | None = None) -> float:
        """Bound (with a margin of 128) on the error of any float evaluation of F used by
        the oracles; ``max_loss`` defaults to the problem's number of examples."""
        loss = self._n if max_loss is None else max_loss
        if loss is None:
            raise ValueError("the problem has no size n: pass max_loss")
        return float(band_tolerance(self._terms, float(loss), self._noise_mag))

    @property
    def tol(self) -> float:
        return self.tolerance()

    # ------------------------------------------------------------------ exact values
    def _loss(self, k: NDArray[np.int64]) -> int:
        return int(self.problem.loss_k(np.asarray(k, dtype=np.int64)[None, :])[0])

    def compare(self, k1: NDArray[np.integer], k2: NDArray[np.integer],
                loss1: int | None = None, loss2: int | None = None) -> int | None:
        """Exact sign of F(k1) - F(k2): -1, 0 or 1 (``None``: undecided at MAX_BITS)."""
        k1 = np.asarray(k1, dtype=np.int64)
        k2 = np.asarray(k2, dtype=np.int64)
        dl = (self._loss(k1) if loss1 is None else int(loss1)) - (
            self._loss(k2) if loss2 is None else int(loss2))
        if self.eta is not None:
            return self._compare_eta(k1, k2, dl)
        return self._compare_tables(k1, k2, dl)

    def _compare_eta(self, k1: NDArray[np.int64], k2: NDArray[np.int64], dl: int) -> int | None:
        # sqrt(K2) (F1 - F2) = dl sqrt(K2) - <eta, k1 - k2> - eta_d (sqrt(m1) - sqrt(m2))
        eta = self.eta
        assert eta is not None
        d = len(eta) - 1
        rational = Fraction(0)
        for j in np.flatnonzero(k1 != k2):
            rational -= Fraction(float(eta[j])) * int(k1[j] - k2[j])
        terms: dict[int, Fraction] = {}

        def add(coef: Fraction, n: int) -> None:
            nonlocal rational
            if coef == 0 or n == 0:
                return
            s, c = squarefree(n)
            if c == 1:
                rational += coef * s
            else:
                terms[c] = terms.get(c, Fraction(0)) + coef * s

        add(Fraction(dl), self.K2)
        e_last = Fraction(float(eta[d]))
        m1 = self.K2 - int((k1 * k1).sum())
        m2 = self.K2 - int((k2 * k2).sum())
        if m1 != m2:
            add(-e_last, max(m1, 0))
            add(e_last, max(m2, 0))
        return _sign_of_radicals(rational, terms)

    def _compare_tables(self, k1: NDArray[np.int64], k2: NDArray[np.int64], dl: int) -> int:
        pert = self.pert
        assert pert is not None
        km = self.k_max
        total = Fraction(dl)
        res = pert.value_cost_residual
        for j in np.flatnonzero(k1 != k2):
            a, b = int(k1[j]) + km, int(k2[j]) + km
            total += Fraction(float(pert.value_cost[j, a])) - Fraction(float(pert.value_cost[j, b]))
            if res is not None:
                total += Fraction(float(res[j, a])) - Fraction(float(res[j, b]))
        r1, r2 = int((k1 * k1).sum()), int((k2 * k2).sum())
        if r1 != r2:
            total += Fraction(float(pert.norm_cost[r1])) - Fraction(float(pert.norm_cost[r2]))
        return (total > 0) - (total < 0)

    def better(self, k1: NDArray[np.integer], k2: NDArray[np.integer],
               loss1: int | None = None, loss2: int | None = None) -> bool | None:
        """Whether k1 precedes k2 in the exact order (objective, then lexicographic k)."""
        s = self.compare(k1, k2, loss1, loss2)
        if s is None:
            return None
        return s < 0 or (s == 0 and _lex_less(k1, k2))

    # ------------------------------------------------------------------ argmin
    def argmin(self, K: NDArray[np.integer], values: NDArray[np.floating],
               losses: NDArray[np.integer] | None = None,
               tol: float | None = None) -> tuple[int | None, int]:
        """Index of the exact minimizer among the rows of K (tie rule: smallest k).

        ``values``: float objectives of the rows (any evaluation within ``tol`` of the
        exact value).  Returns ``(index, near)``: ``near`` is how many rows were within the
        float band of the minimum (1: no exact arithmetic was needed); ``index`` is None
        when an exact comparison was undecided (refuse to certify).
        """
        values = np.asarray(values, dtype=np.float64)
        i0 = int(np.argmin(values))
        if tol is None:
            tol = self.tolerance(None if self._n is not None else (
                float(np.max(losses)) if losses is not None else float(self._loss_bound(K))))
        near = np.flatnonzero(values <= values[i0] + 2.0 * tol)
        if len(near) <= 1:
            return i0, 1
        K = np.asarray(K, dtype=np.int64)
        loss = [None if losses is None else int(losses[i]) for i in near]
        best = 0
        for t in range(1, len(near)):
            b = self.better(K[near[t]], K[near[best]], loss[t], loss[best])
            if b is None:
                return None, len(near)
            if b:
                best = t
        return int(near[best]), len(near)

    def _loss_bound(self, K: NDArray[np.integer]) -> int:
        return int(np.max(self.problem.loss_k(np.asarray(K, dtype=np.int64))))
