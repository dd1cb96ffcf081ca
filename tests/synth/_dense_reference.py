"""A dense reference for the one estimator: mirror descent with one probability per cell.

:func:`estimate_distribution` keeps ``p`` over the whole product domain and runs the entropic
mirror descent of :mod:`oracledp.synth._estimation` on it directly (``p <- p exp(-eta grad
L(p)) / Z``, the step rule :func:`~oracledp.synth._estimation.mirror_descent_step`).  It was
``OracleQueryPGM``'s ``estimator="explicit"`` until issue 38 left one estimation loop,
:func:`oracledp.synth._graphical.estimate_model`, in the package; the tests keep it to check
that the junction-tree iterates are these dense ones (up to rounding) on small domains.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from oracledp.synth._estimation import (
    MarginalMeasurement,
    expand,
    loss_terms,
    mirror_descent_step,
    project,
)
from oracledp.synth._graphical import _MarginalOperator

__all__ = ["estimate_distribution"]


def estimate_distribution(
    shape: tuple[int, ...],
    measurements: Sequence[MarginalMeasurement],
    n: int,
    *,
    iterations: int = 200,
    p0: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Approximately minimize ``L(p)`` (:mod:`oracledp.synth._estimation`) by entropic mirror
    descent on the dense vector ``p``.

    ``n`` is the public number of records (the measurements are counts); ``p0`` a warm
    start (default uniform).  Returns a distribution of shape ``shape``.
    """
    terms = loss_terms(shape, measurements, n)
    cliques = [m.axes for m in terms]
    targets = [m.values / n for m in terms]
    weights = [(n / m.sigma) ** 2 for m in terms]
    smooth = float(sum(weights))
    if p0 is None:
        p = np.full(shape, 1.0 / math.prod(shape))
    else:
        p = np.asarray(p0, dtype=np.float64).reshape(shape)
        p = p / p.sum()

    op = _MarginalOperator(tuple(shape), cliques)

    def loss_and_residuals(q: NDArray[np.float64]) -> tuple[float, list[NDArray[np.float64]]]:
        res = [project(mt, m.maps) - t
               for mt, m, t in zip(op.marginals(q), terms, targets, strict=True)]
        return 0.5 * sum(w * float(np.vdot(r, r)) for w, r in zip(weights, res, strict=True)), res

    f, res = loss_and_residuals(p)
    eta = 1.0 / smooth
    for _ in range(iterations):
        grad = op.adjoint([expand(w * r, m.maps)
                           for m, w, r in zip(terms, weights, res, strict=True)])

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
