"""Discrete parameter spaces W_tau (Definition 2.4 of Neel et al., ICML 2020).

``IntegerBall(d, bound=B, radius=D, tau=tau)`` is the set of vectors
``w = tau * k`` with ``k`` an integer vector, ``|w_j| <= B`` and
``||w||_2 <= D``.  Distinct points are at l2 distance >= tau, so it is
tau-separated.  The paper's experiment uses tau = 1, B = floor(sqrt(d)),
D = sqrt(d).

The privacy calibration of OPDisc needs D = the largest norm of a point of W
(not the box bound); :attr:`IntegerBall.max_norm` computes it exactly.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from oracledp._validation import check_positive

_EPS_NORM = 1e-9  # slack when comparing a squared norm with radius^2 given as a float


@dataclass(frozen=True)
class IntegerBall:
    """Integer lattice points (spacing tau) in a box of half-width B inside an l2 ball of radius D."""

    d: int
    bound: float | None = None
    radius: float | None = None
    tau: float = 1.0
    _cache: dict = field(default_factory=dict, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if isinstance(self.d, bool) or not isinstance(self.d, (int, np.integer)) or self.d < 1:
            raise ValueError(f"d must be a positive integer, got {self.d!r}")
        tau = check_positive(self.tau, "tau")
        bound = math.floor(math.sqrt(self.d)) if self.bound is None else self.bound
        radius = math.sqrt(self.d) if self.radius is None else self.radius
        check_positive(bound, "bound")
        check_positive(radius, "radius")
        object.__setattr__(self, "d", int(self.d))
        object.__setattr__(self, "tau", tau)
        object.__setattr__(self, "bound", float(bound))
        object.__setattr__(self, "radius", float(radius))
        if self.k_max < 1:
            raise ValueError(
                f"bound {bound} < tau {tau}: W would contain only the zero vector"
            )

    # --- integer coordinates k (w = tau * k) -------------------------------------------------
    @property
    def k_max(self) -> int:
        """Largest |k_j|: floor(min(B, D) / tau)."""
        return math.floor(min(self.bound, self.radius) / self.tau + 1e-12)

    @property
    def k_norm2_max(self) -> int:
        """Largest allowed ||k||^2: floor(D^2 / tau^2)."""
        return math.floor((self.radius / self.tau) ** 2 + _EPS_NORM)

    def contains_k(self, k: NDArray[np.integer]) -> NDArray[np.bool_]:
        k = np.atleast_2d(k)
        return (np.abs(k).max(axis=1) <= self.k_max) & (
            (k.astype(np.int64) ** 2).sum(axis=1) <= self.k_norm2_max
        )

    @property
    def _reachable_norm2(self) -> int:
        """The largest ||k||^2 worth tracking: the norm cap, or d K^2 where the box binds
        (no point of W has more), so a huge norm cap costs nothing."""
        return min(self.k_norm2_max, self.d * self.k_max**2)

    @cached_property
    def max_k_norm2(self) -> int:
        """The largest ||k||^2 attained by a point of W (exact, by dynamic programming)."""
        cap = self._reachable_norm2
        reach = np.zeros(cap + 1, dtype=bool)
        reach[0] = True
        squares = [a * a for a in range(self.k_max + 1)]
        for _ in range(self.d):
            new = np.zeros_like(reach)
            for s in squares:
                if s <= cap:
                    new[s:] |= reach[: cap + 1 - s]
            if (new == reach).all():
                break
            reach = new
        return int(np.flatnonzero(reach).max())

    @property
    def max_norm(self) -> float:
        """D used by OPDisc and pi: the largest l2 norm of a point of W."""
        return self.tau * math.sqrt(self.max_k_norm2)

    def size(self) -> int:
        """|W| (exact count by dynamic programming over the squared norm)."""
        cap = self._reachable_norm2
        ways = np.zeros(cap + 1, dtype=object)
        ways[0] = 1
        for _ in range(self.d):
            new = np.zeros_like(ways)
            for a in range(-self.k_max, self.k_max + 1):
                s = a * a
                if s <= cap:
                    new[s:] = new[s:] + ways[: cap + 1 - s]
            ways = new
        return int(ways.sum())

    def enumerate_k(self, max_points: int = 2_000_000) -> NDArray[np.int64]:
        """All integer coordinate vectors k of W, as rows (only for small W)."""
        n = self.size()
        if n > max_points:
            raise ValueError(f"W has {n} points; refusing to enumerate more than {max_points}")
        rng = range(-self.k_max, self.k_max + 1)
        pts = np.array(list(itertools.product(rng, repeat=self.d)), dtype=np.int64)
        return pts[(pts**2).sum(axis=1) <= self.k_norm2_max]

    # --- normalization pi ------------------------------------------------------------------
    def pi(self, w: NDArray[np.floating]) -> NDArray[np.float64]:
        """Normalization of Section 3: pi(w) = (w, D sqrt(1 - ||w||^2/D^2)) / D, a unit vector in R^{d+1}.

        D is :attr:`max_norm`.  Accepts one vector or a matrix of row vectors.
        """
        w = np.asarray(w, dtype=np.float64)
        single = w.ndim == 1
        w2 = np.atleast_2d(w)
        D = self.max_norm
        D2 = self.tau**2 * self.max_k_norm2  # D^2 from the exact integer, not (sqrt)^2
        r = np.clip(1.0 - (w2**2).sum(axis=1) / D2, 0.0, None)  # clip only rounding below 0
        out = np.hstack([w2 / D, np.sqrt(r)[:, None]])
        return out[0] if single else out

    def pi_k(self, k: NDArray[np.integer]) -> NDArray[np.float64]:
        """pi(tau * k), computed from the exact integer squared norm."""
        k = np.asarray(k, dtype=np.int64)
        single = k.ndim == 1
        k2 = np.atleast_2d(k)
        nk2 = (k2**2).sum(axis=1)
        D2k = self.max_k_norm2  # D^2 / tau^2
        last = np.sqrt(np.clip(1.0 - nk2 / D2k, 0.0, None))
        out = np.hstack([k2 / math.sqrt(D2k), last[:, None]])
        return out[0] if single else out
