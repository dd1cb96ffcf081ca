"""OracleQuery's players' exact oracles: PrivBR with RSPM, and FTPL's data oracle.

The query player ``"rspm"`` (``specs/oracle-query.md`` 6.3, PrivBR; Neel-Roth-Wu 2019
Thm 6 for RSPM, report-noisy-min for the final choice) and its PRSMA base
(:class:`_PrivBRBase`, Neel-Roth-Wu 2019 Thm 8), with the separator ``u_l = 1 - e_l``
of the k-way conjunctions (:func:`workload_literals`, :func:`separator_patterns`); and the
data player ``"ftpl"``'s exact oracle over the full domain (spec 6.2, dual-separator
perturbation, :func:`_ftpl_samples`).  The Laplace draws go through
:mod:`oracledp.privacy._noise`; the proofs are in :mod:`oracledp.synth._oracle_query`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp.learners._prsma import FAIL
from oracledp.privacy import _noise as noise
from oracledp.synth._domain import Domain
from oracledp.synth._workload import MarginalWorkload, answer

__all__ = ["separator_patterns", "workload_literals"]


def _indicator_offsets(domain: Domain) -> NDArray[np.int64]:
    """``off[a]``: global index of indicator ``(a, level 0)``; ``off[-1]`` = m."""
    return np.concatenate([[0], np.cumsum(domain.shape)]).astype(np.int64)


def workload_literals(workload: MarginalWorkload) -> NDArray[np.int64]:
    """``lit[q]``: the k global indicator indices (``off[a] + level``) of query q's literals.

    Queries are monotone conjunctions over the m one-hot indicators; the separator
    point ``u_l = 1 - e_l`` satisfies ``q(u_l) = 1`` iff ``l`` is not in ``lit[q]``.
    """
    off = _indicator_offsets(workload.domain)
    out = np.empty((len(workload), workload.k), dtype=np.int64)
    for b, blk in enumerate(workload.blocks):
        bshape = workload.block_shape(b)
        cells = np.indices(bshape).reshape(len(blk), -1).T
        out[workload.offsets[b] : workload.offsets[b + 1]] = cells + off[list(blk)]
    return out


def separator_patterns(lit: NDArray[np.int64], m: int) -> NDArray[np.int8]:
    """``P[q, l] = q(u_l) = 1[l not in q]`` for the separator ``u_l = 1 - e_l`` (spec 2)."""
    P = np.ones((lit.shape[0], m), dtype=np.int8)
    P[np.arange(lit.shape[0])[:, None], lit] = 0
    return P


def _privbr_rspm(diff: NDArray[np.float64], lit: NDArray[np.int64], m: int, e3: float,
                 size: int, rng: np.random.Generator, *, scale_factor: float = 1.0,
                 ) -> tuple[NDArray[np.int64], NDArray[np.bool_], NDArray[np.int64],
                            NDArray[np.int64]]:
    """Spec 6.3 PrivBR with RSPM, vectorized over ``size`` independent runs.

    ``diff[q] = n (q(S) - q(D))`` (counts); the objective of ``q`` is ``-diff[q]``
    and that of ``notq`` is ``+diff[q]``; each moves by at most 1 under replace-one.
    (i) RSPM on Q: ``argmin_q -diff[q] + sum_l eta_l q(u_l)``; (ii) RSPM on notQ:
    ``argmin_q diff[q] + sum_l eta'_l notq(u_l)``, eta, eta' iid ``Lap(2m/e3)``;
    (iii) report-noisy-min of the two candidates' exact objectives with
    ``Lap(2/e3)`` noise; ``e3 = eps0/3``, so the round is ``eps0``-DP.  The weighted oracle is exact enumeration of the
    explicit workload.  ``q(u_l) = 1 - 1[l in q]``, so the sum over separator
    points is ``sum(eta) - sum_{l in q} eta_l``; ``sum(eta)`` is the same for every
    q and is dropped (argmin unchanged).  ``scale_factor`` plants a bug in tests.
    Returns (query, negated, candidate of (i), candidate of (ii)).
    """
    b_rspm = scale_factor * 2.0 * m / e3
    b_min = scale_factor * 2.0 / e3
    eta = noise.laplace(rng, b_rspm, size=(size, m))
    q1 = np.argmin(-diff[None, :] - eta[:, lit].sum(axis=2), axis=1)
    eta2 = noise.laplace(rng, b_rspm, size=(size, m))
    q2 = np.argmin(diff[None, :] + eta2[:, lit].sum(axis=2), axis=1)
    v1 = -diff[q1] + noise.laplace(rng, b_min, size=size)
    v2 = diff[q2] + noise.laplace(rng, b_min, size=size)
    neg = v2 < v1
    return np.where(neg, q2, q1), neg, q1, q2


@dataclass(frozen=True, eq=False)
class _PrivBRBase:
    """PRSMA base: ``size`` independent PrivBR-RSPM runs on a part against ``D_t``.

    ``target[q] = q(D_t)``; on a part of ``n_part`` records the scores are the counts
    ``n_part (q(part) - q(D_t))`` (sensitivity 1 under replace-one), and
    :func:`_privbr_rspm` at ``e3 = eps'/3`` makes each run ``eps'``-DP with the exact
    (enumeration) oracle.  ``oracle_failure(part) -> bool`` (test hook) makes the
    oracle fail, signalled as :data:`~oracledp.learners._prsma.FAIL`.  Returns a list of
    ``(query, negated)``.  Picklable unless ``oracle_failure`` is a lambda.
    """

    workload: MarginalWorkload
    lit: NDArray[np.int64]
    m: int
    target: NDArray[np.float64]
    oracle_failure: Callable[[NDArray[np.int64]], bool] | None = None

    def __call__(self, part: NDArray[np.int64], eps_prime: float, rng: np.random.Generator,
                 size: int) -> Any:
        if self.oracle_failure is not None and self.oracle_failure(part):
            return FAIL
        diff = part.shape[0] * (answer(self.workload, part) - self.target)
        q, neg, _, _ = _privbr_rspm(diff, self.lit, self.m, eps_prime / 3.0, size, rng)
        return list(zip(q.tolist(), neg.tolist(), strict=True))


def _ftpl_samples(gain: NDArray[np.float64], xi: NDArray[np.float64],
                  shape: tuple[int, ...]) -> NDArray[np.int64]:
    """Exact data oracle of spec 6.2, one call per row of ``xi`` (shape (s, m)).

    Returns the flat cell index of ``argmax_x gain(x) - sum_j xi_j g_j(x)`` for
    each row, where ``g_j`` are the m one-hot indicators (dictators, the dual
    separator): ``sum_j xi_j g_j(x) = sum_a xi[off[a] + x_a]``.  Enumerates the full
    domain; the separable noise is summed over two attribute groups and broadcast.
    (The sign of xi is immaterial: Laplace noise is symmetric.)
    """
    d = len(shape)
    off = np.concatenate([[0], np.cumsum(shape)])
    h = max(1, d // 2)
    sa, sb = math.prod(shape[:h]), math.prod(shape[h:])

    def group(x: NDArray[np.float64], attrs: range) -> NDArray[np.float64]:
        acc = np.zeros(1)
        for a in attrs:
            acc = np.add.outer(acc, x[off[a]:off[a + 1]]).ravel()
        return acc

    G = gain.reshape(sa, sb)
    out = np.empty(xi.shape[0], dtype=np.int64)
    buf = np.empty((sa, sb))
    for i, x in enumerate(xi):
        np.subtract(G, group(x, range(h))[:, None], out=buf)
        buf -= group(x, range(h, d))[None, :]
        out[i] = int(np.argmax(buf))
    return out
