"""Estimating a distribution over a small public domain from noisy marginal measurements.

The Private-PGM estimation problem (McKenna, Sheldon, Miklau 2019, "Graphical-model
based estimation and inference for differential privacy", ICML, problem (2)):
given noisy marginal tables ``y_r`` of the private data over attribute sets ``C_r``
with Gaussian noise of standard deviation ``sigma_r`` (in counts), find a
distribution ``p`` over the full domain minimizing

    L(p) = 1/2 sum_r w_r || M_r p - y_r / n ||_2^2,     w_r = (n / sigma_r)^2,

where ``M_r p`` is the marginal of ``p`` on ``C_r``.  This is post-processing of the
measurements (it never reads the data), so it costs no privacy.

Private-PGM solves it over a graphical model to scale to large domains.  The domains
here (Adult's 8 categorical attributes: 1.3 million cells) fit in memory, so ``p`` is
kept explicitly and the problem is solved by entropic mirror descent on the simplex
(the update ``p <- p exp(-eta grad L(p)) / Z``, started from the uniform distribution,
stays in the exponential family ``p(x) ∝ exp(sum_r theta_r(x_{C_r}))`` of the
graphical model).  Step sizes: Armijo backtracking on the relative-smoothness
inequality ``L(p') <= L(p) + <grad, p' - p> + KL(p' || p) / eta``, which holds for
every ``eta <= 1 / sum_r w_r`` (the Hessian of ``L`` is bounded by ``sum_r w_r`` in the
l1 norm and ``KL >= ||.||_1^2 / 2`` by Pinsker), so backtracking always terminates.
Repeated measurements of one attribute set are first combined by inverse-variance
weighting (the sufficient statistic of independent Gaussian measurements).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

T = TypeVar("T")

__all__ = ["MarginalMeasurement", "combine_measurements", "estimate_distribution",
           "mirror_descent_step"]

#: The step size never exceeds ``1 / smooth`` times this (:func:`mirror_descent_step`).
MAX_STEP_GROWTH = 2.0**30


@dataclass(frozen=True)
class MarginalMeasurement:
    """A noisy marginal table: ``values`` = counts over ``axes`` + N(0, sigma^2) noise per cell.

    The one measurement type of :mod:`oracledp.synth` (OracleQueryPGM, MST, AIM); two
    measurements compare equal when they measured the same attributes with the same noise
    scale (the noisy values are not compared).
    """

    axes: tuple[int, ...]
    values: NDArray[np.float64] = field(repr=False, compare=False)
    sigma: float

    def __post_init__(self) -> None:
        if tuple(sorted(set(self.axes))) != tuple(self.axes) or not self.axes:
            raise ValueError("axes must be a non-empty increasing tuple of distinct attributes")
        if not (math.isfinite(self.sigma) and self.sigma > 0):
            raise ValueError(f"sigma must be finite and > 0, got {self.sigma!r}")
        if not np.all(np.isfinite(self.values)):
            raise ValueError("measurement values must be finite")


def combine_measurements(
    measurements: Iterable[MarginalMeasurement],
) -> list[MarginalMeasurement]:
    """One measurement per attribute set: the inverse-variance weighted mean of its repeats."""
    groups: dict[tuple[int, ...], list[MarginalMeasurement]] = {}
    for m in measurements:
        groups.setdefault(m.axes, []).append(m)
    out = []
    for axes, ms in groups.items():
        prec = np.array([1.0 / m.sigma**2 for m in ms])
        vals = sum(w * m.values for w, m in zip(prec, ms, strict=True)) / prec.sum()
        out.append(MarginalMeasurement(axes, np.asarray(vals, dtype=np.float64),
                                       float(1.0 / math.sqrt(prec.sum()))))
    return out


def mirror_descent_step(eta: float, smooth: float,
                        attempt: Callable[[float], tuple[T, bool] | None]
                        ) -> tuple[float, T | None]:
    """The step rule of every mirror-descent estimator here: ``(eta, accepted candidate)``.

    ``eta`` is the previous step size and ``smooth = sum_r w_r``; ``attempt(eta)`` returns
    the candidate of step ``eta`` and whether it satisfies the relative-smoothness
    inequality, or None when the candidate is not finite (an overflow or underflow).  The
    step first doubles, capped at ``MAX_STEP_GROWTH / smooth`` (finite: tiny weights, as
    with a handful of records, would otherwise accept every step and double the size to
    infinity), then halves until a finite candidate satisfies the inequality or the step is
    ``1 / smooth``, where the inequality holds in exact arithmetic and any finite candidate
    is taken.  It always terminates (at most ``log2(MAX_STEP_GROWTH) + 2`` attempts); the
    candidate is None when even the smallest step is not finite: the caller keeps its
    current iterate and stops.
    """
    eta_min = 1.0 / smooth if smooth > 0.0 else math.inf
    if not (math.isfinite(eta_min) and eta_min > 0.0):
        raise ValueError(f"the estimation's smoothness must be finite and > 0, got {smooth!r}")
    eta_max = min(eta_min * MAX_STEP_GROWTH, 1e300)
    eta = eta * 2.0 if math.isfinite(eta) else eta_max
    eta = min(max(eta, eta_min), eta_max)
    while True:
        got = attempt(eta)
        if got is not None and (got[1] or eta <= eta_min):
            return eta, got[0]
        if eta <= eta_min:
            return eta_min, None
        eta = max(eta / 2.0, eta_min)


class _MarginalOperator:
    """The marginal maps ``p -> M_r p`` of a list of cliques and their adjoint, by matrix products.

    The domain's attributes are split into a leading part (``A`` cells) and a trailing
    part (``B`` cells) and ``p`` is viewed as an ``A x B`` matrix.  For clique ``C`` with
    trailing attributes ``C_hi``, ``p @ R`` (``R``: the ``B x |C_hi|`` 0/1 matrix mapping a
    trailing cell to its ``C_hi`` cell) sums out the other trailing attributes; the leading
    attributes outside ``C`` are then summed on the small ``A x |C_hi|`` result.  All the
    distinct ``R`` are stacked, so one ``A x B x K`` product serves every clique (and one
    product its transpose for the gradient), instead of d passes of strided reductions
    over the full array.
    """

    def __init__(self, shape: tuple[int, ...], cliques: Sequence[tuple[int, ...]]) -> None:
        d = len(shape)
        # trailing part: as many trailing attributes as keep B <= 2048 (at least one)
        h = d - 1
        while h > 0 and math.prod(shape[h - 1:]) <= 2048:
            h -= 1
        self.shape, self.h = shape, h
        self.lo_shape, hi_shape = shape[:h], shape[h:]
        self.A, self.B = math.prod(self.lo_shape), math.prod(hi_shape)
        hi_idx = np.indices(hi_shape).reshape(len(hi_shape), -1)
        cols: dict[tuple[int, ...], slice] = {}
        blocks = []
        k = 0
        self.plan = []
        for c in cliques:
            c_lo = tuple(a for a in c if a < h)
            c_hi = tuple(a - h for a in c if a >= h)
            if c_hi not in cols:
                size = math.prod(hi_shape[a] for a in c_hi)
                col = (np.ravel_multi_index(tuple(hi_idx[a] for a in c_hi),
                                            tuple(hi_shape[a] for a in c_hi))
                       if c_hi else np.zeros(self.B, dtype=np.intp))
                R = np.zeros((self.B, size))
                R[np.arange(self.B), col] = 1.0
                blocks.append(R)
                cols[c_hi] = slice(k, k + size)
                k += size
            drop = tuple(a for a in range(h) if a not in c_lo)
            out_shape = tuple(shape[a] for a in c)
            self.plan.append((cols[c_hi], drop, out_shape, c_lo))
        self.R = np.hstack(blocks)  # B x K

    def marginals(self, p: NDArray[np.float64]) -> list[NDArray[np.float64]]:
        Y = p.reshape(self.A, self.B) @ self.R  # A x K
        out = []
        for sl, drop, out_shape, _ in self.plan:
            part = Y[:, sl].reshape((*self.lo_shape, sl.stop - sl.start))
            out.append(part.sum(axis=drop).reshape(out_shape) if drop else
                       part.reshape(out_shape))
        return out

    def adjoint(self, tables: Sequence[NDArray[np.float64]]) -> NDArray[np.float64]:
        """``G(x) = sum_r tables[r][x_{C_r}]`` over the full domain."""
        U = np.zeros((self.A, self.R.shape[1]))
        h = self.h
        for (sl, _, _, c_lo), t in zip(self.plan, tables, strict=True):
            width = sl.stop - sl.start
            bshape = [self.shape[a] if a in c_lo else 1 for a in range(h)] + [width]
            U[:, sl] += np.broadcast_to(t.reshape(bshape), (*self.lo_shape, width)).reshape(
                self.A, width)
        return (U @ self.R.T).reshape(self.shape)


def estimate_distribution(
    shape: tuple[int, ...],
    measurements: Sequence[MarginalMeasurement],
    n: int,
    *,
    iterations: int = 200,
    p0: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Approximately minimize ``L(p)`` (module docstring) by entropic mirror descent.

    ``n`` is the public number of records (the measurements are counts); ``p0`` a warm
    start (default uniform).  Returns a distribution of shape ``shape``.  The result is
    post-processing of the measurements.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    ms = combine_measurements(measurements)
    if not ms:
        raise ValueError("at least one measurement is needed")
    for m in ms:
        if m.axes[-1] >= len(shape) or m.values.shape != tuple(shape[a] for a in m.axes):
            raise ValueError(f"measurement over axes {m.axes} does not match the domain")
    cliques = [m.axes for m in ms]
    targets = [m.values / n for m in ms]
    weights = [(n / m.sigma) ** 2 for m in ms]
    smooth = float(sum(weights))
    if p0 is None:
        p = np.full(shape, 1.0 / math.prod(shape))
    else:
        p = np.asarray(p0, dtype=np.float64).reshape(shape)
        p = p / p.sum()

    op = _MarginalOperator(tuple(shape), cliques)

    def loss_and_residuals(q: NDArray[np.float64]) -> tuple[float, list[NDArray[np.float64]]]:
        res = [mt - t for mt, t in zip(op.marginals(q), targets, strict=True)]
        return 0.5 * sum(w * float(np.vdot(r, r)) for w, r in zip(weights, res, strict=True)), res

    f, res = loss_and_residuals(p)
    eta = 1.0 / smooth
    for _ in range(iterations):
        grad = op.adjoint([w * r for w, r in zip(weights, res, strict=True)])

        def attempt(eta: float, p: NDArray[np.float64] = p, f: float = f,
                    grad: NDArray[np.float64] = grad
                    ) -> tuple[tuple[NDArray[np.float64], float, list[NDArray[np.float64]]],
                               bool] | None:
            logq = -eta * grad
            live = p > 0
            logq -= logq[live].max()  # cells with p = 0 stay 0: z >= the max cell's p > 0
            with np.errstate(all="ignore"):
                q = p * np.exp(logq)
                z = float(q.sum())
                if not (math.isfinite(z) and z > 0.0):
                    return None
                q /= z
                f_new, res_new = loss_and_residuals(q)
                # Relative smoothness: L(q) <= L(p) + <grad, q - p> + KL(q || p) / eta, with
                # log(q / p) = logq - log z wherever p > 0 (q = 0 where p = 0)
                kl = float(np.vdot(q, logq)) - math.log(z)
                bound = f + float(np.vdot(grad, q - p)) + kl / eta
            if not (math.isfinite(f_new) and math.isfinite(bound) and np.all(np.isfinite(q))):
                return None
            return (q, f_new, res_new), f_new <= bound + 1e-12 * max(1.0, abs(f))

        eta, got = mirror_descent_step(eta, smooth, attempt)
        if got is None:
            break
        p, f, res = got
    return p
