"""The trust-region subproblem of CovNR and the shrink into the ball of both algorithms.

CovNR's hypotheses (Algorithm 3, equation 3.1 of Ligett et al. 2017, "Accuracy
First") minimise a quadratic over the ball ``C = {||theta||_2 <= sqrt(1/lambda)}``;
:func:`trust_region_solve` computes that constrained minimiser exactly (Moré and
Sorensen 1983), batched over the privacy levels.  :func:`_shrink_into_ball` keeps
every released or tested hypothesis strictly inside its ball whatever the
rounding, as the query sensitivities (Claims A.5, A.12) assume; OutputNR's
projection onto the M-ball uses it too.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["trust_region_solve"]


def trust_region_solve(
    A: NDArray[np.float64], b: NDArray[np.float64], radius: float
) -> NDArray[np.float64]:
    """``argmin_{||theta||_2 <= radius} theta^T A theta / 2 - <b, theta>`` for symmetric A, batched.

    ``A`` has shape ``(k, p, p)`` (symmetric, possibly indefinite) and ``b``
    ``(k, p)``.  The exact global minimiser of this trust-region subproblem
    (Moré and Sorensen 1983): with ``A = Q diag(d) Q^T`` and ``c = Q^T b``, either
    ``A`` is positive definite and ``||A^-1 b|| <= radius`` (interior solution),
    or ``theta = Q (c / (d + mu))`` with the unique ``mu >= max(0, -d_min)``
    such that ``||theta|| = radius``, found by bisection (keeping the end with
    ``||theta|| <= radius``, so the result is always feasible).  In the "hard case"
    (``c`` orthogonal to the bottom eigenvector of an indefinite A, probability 0
    with continuous noise) the missing norm is added along that eigenvector.
    Rounding: a solution whose computed norm exceeds ``radius (1 - 1e-12)`` is
    rescaled to that norm, so the norm stays below the radius however it is
    computed (a relative change of at most 1e-12).
    """
    k, p = b.shape
    theta = np.empty((k, p))
    # Fast path: where A is positive definite (its Cholesky factorisation exists), the
    # unconstrained minimiser A^-1 b is the answer if it lies in the ball.  Each matrix is
    # classified on its own, so the result of a level never depends on the batch it is in.
    pd = _positive_definite(A)
    ok = np.zeros(k, dtype=bool)
    if pd.any():
        inner = np.linalg.solve(A[pd], b[pd][..., None])[..., 0]
        ok[pd] = np.einsum("ki,ki->k", inner, inner) <= radius**2
        theta[ok] = inner[ok[pd]]
    todo = np.flatnonzero(~ok)
    if todo.size:
        theta[todo] = _trust_region_eigh(A[todo], b[todo], radius)
    return _shrink_into_ball(theta, radius)


def _shrink_into_ball(theta: NDArray[np.float64], radius: float) -> NDArray[np.float64]:
    """Rescale (in place) rows with norm above ``radius (1 - 1e-12)`` to exactly that norm.

    The 1e-12 margin is far above rounding, so ``||theta||_2 <= radius`` holds for
    every way of computing the norm: the sensitivity bounds (Claims A.5, A.12)
    assume it.
    """
    target = radius * (1.0 - 1e-12)
    norms = np.sqrt(np.einsum("ki,ki->k", theta, theta))
    over = norms > target
    if over.any():
        theta[over] *= (target / norms[over])[:, None]
    return theta


def _positive_definite(A: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Per matrix of the batch: does a Cholesky factorisation exist?"""
    try:
        np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        out = np.zeros(A.shape[0], dtype=bool)
        for i in range(A.shape[0]):
            try:
                np.linalg.cholesky(A[i])
            except np.linalg.LinAlgError:
                continue
            out[i] = True
        return out
    return np.ones(A.shape[0], dtype=bool)


def _trust_region_eigh(
    A: NDArray[np.float64], b: NDArray[np.float64], radius: float
) -> NDArray[np.float64]:
    """The trust-region subproblem through the eigendecomposition (see :func:`trust_region_solve`)."""
    d, Q = np.linalg.eigh(A)
    c = np.einsum("kji,kj->ki", Q, b)
    d_min = d[:, 0]
    coef = np.empty_like(c)

    with np.errstate(divide="ignore", invalid="ignore"):
        inner = c / d
    inner_ok = (d_min > 0) & (np.einsum("ki,ki->k", inner, inner) <= radius**2)
    coef[inner_ok] = inner[inner_ok]

    todo = np.flatnonzero(~inner_ok)
    if todo.size:
        dd, cc = d[todo], c[todo]
        lo = np.maximum(0.0, -dd[:, 0])
        hi = lo + np.sqrt(np.einsum("ki,ki->k", cc, cc)) / radius + np.abs(lo) * 1e-15 + 1e-300
        # phi(mu) = ||c / (d + mu)||^2 decreases on (lo, inf); phi(hi) <= radius^2 since
        # d_i + hi >= ||c|| / radius for all i.
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if np.all((mid <= lo) | (mid >= hi)):
                break
            den = dd + mid[:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.where(cc == 0.0, 0.0, cc / den)
            phi = np.einsum("ki,ki->k", t, t)
            big = (phi > radius**2) | ~np.isfinite(phi)
            lo = np.where(big, mid, lo)
            hi = np.where(big, hi, mid)
        den = dd + hi[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            sol = np.where(cc == 0.0, 0.0, cc / den)
        # Hard case (or a bottom component below float resolution): with negative curvature
        # the minimiser is on the sphere, so the bottom-eigenvector coefficient takes the
        # remaining norm, with the sign of c_0 (the sign that decreases -<b, theta>).
        norm2 = np.einsum("ki,ki->k", sol, sol)
        hard = (dd[:, 0] < 0) & (norm2 < radius**2 * (1.0 - 1e-10))
        if hard.any():
            rest = norm2[hard] - sol[hard, 0] ** 2
            sign = np.where(cc[hard, 0] < 0, -1.0, 1.0)
            sol[hard, 0] = sign * np.sqrt(np.maximum(radius**2 - rest, 0.0))
        coef[todo] = sol

    return np.einsum("kij,kj->ki", Q, coef)
