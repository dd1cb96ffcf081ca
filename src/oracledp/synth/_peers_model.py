"""The graphical model MST and AIM release: exact marginals and exact sampling (numpy, no JAX).

:class:`PGMResult` holds the model ``p(x) ∝ exp(sum_c theta_c(x_c))`` estimated by
Private-PGM (McKenna, Sheldon, Miklau, ICML 2019) and the noisy measurements it was fitted
to; :func:`_model_marginal` evaluates any marginal exactly by a tensor contraction of the
factors, and :meth:`PGMResult.sample` draws records exactly by ancestral sampling along
the reversed elimination order of the model's junction tree (:func:`_elimination_order`).
Everything here is post-processing of the release (see "Evaluation and sampling" in
:mod:`oracledp.synth._peers`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp._diagnostics import NonPrivateDiagnostics
from oracledp._validation import RandomLike, check_rng, check_sample_size
from oracledp.privacy._guarantees import PrivacyGuarantee
from oracledp.synth._domain import Domain
from oracledp.synth._estimation import MarginalMeasurement
from oracledp.synth._workload import MarginalWorkload

__all__ = ["PGMMeasurement", "PGMResult"]

_SAMPLE_CHUNK = 100_000


def _model_marginal(
    factors: Sequence[tuple[tuple[int, ...], NDArray[np.float64]]],
    shape: tuple[int, ...],
    attrs: Sequence[int],
) -> NDArray[np.float64]:
    """The exact marginal probability table over ``attrs`` (in that order).

    The model is ``p(x) ∝ prod_c exp(theta_c(x_c))``; each factor is shifted by its
    maximum (a constant that cancels in the normalisation) and the product is
    contracted over the other attributes.
    """
    operands: list[Any] = []
    for clique, theta in factors:
        operands.append(np.exp(theta - theta.max()))
        operands.append(list(clique))
    for a in attrs:  # attributes in no factor are uniform: keep their axes
        operands.append(np.ones(shape[a]))
        operands.append([a])
    operands.append(list(attrs))
    table = np.einsum(*operands, optimize="greedy")
    total = table.sum()
    if not (np.isfinite(total) and total > 1e-280):
        raise FloatingPointError(
            "the model's marginal underflowed; its potentials are too extreme to "
            "contract in float64"
        )
    return np.asarray(table / total, dtype=np.float64)


#: MST's and AIM's measurements are :class:`~oracledp.synth._estimation.MarginalMeasurement` s,
#: the one measurement type of :mod:`oracledp.synth` (``axes``, the noisy count table in the
#: shape of its attributes, ``sigma``); ``PGMMeasurement`` is its former name.
PGMMeasurement = MarginalMeasurement


@dataclass(frozen=True, eq=False)
class PGMResult:
    """A graphical model estimated by MST or AIM from noisy marginals.

    Attributes
    ----------
    method:
        ``"MST"`` or ``"AIM"``.
    domain, n:
        The domain, and the number of records n of the input (public under
        replace-one neighbours).  None under add-remove neighbours, where n is
        private and not part of the release.
    total:
        The model's total count: n (replace-one) or mbi's estimate from the noisy
        1-way marginals (add-remove).
    rho:
        The zCDP budget spent (the sum of the ledger).
    measurements:
        Every released noisy marginal, in order.
    selected:
        MST: the ``d - 1`` pairs of attribute positions of the spanning tree, in
        selection order.  AIM: the clique selected in each round.
    factors:
        The model's log-potentials, ``(clique, theta)`` with ``theta`` of shape
        ``domain.shape[clique]``: ``p(x) ∝ exp(sum theta(x_clique))``.
    guarantee:
        The privacy statement (see the module docstring).
    diagnostics:
        None unless ``return_diagnostics=True``: then the wall-clock times
        (``seconds`` for the whole fit, ``estimation_seconds`` in mbi) -- non-private.
    """

    method: str
    domain: Domain
    n: int | None
    total: float
    rho: float
    measurements: tuple[MarginalMeasurement, ...]
    selected: tuple[tuple[int, ...], ...]
    factors: tuple[tuple[tuple[int, ...], NDArray[np.float64]], ...] = field(repr=False)
    guarantee: PrivacyGuarantee
    diagnostics: NonPrivateDiagnostics | None = field(default=None, repr=False)

    @property
    def rounds(self) -> int:
        """Number of selection rounds (MST: d - 1 tree edges; AIM: rounds run)."""
        return len(self.selected)

    def marginal(self, attrs: Sequence[int]) -> NDArray[np.float64]:
        """The model's exact marginal distribution over attribute positions ``attrs``.

        Shape ``tuple(domain.shape[a] for a in attrs)``, axes in the given order, sums to 1.
        """
        d = len(self.domain)
        idx = [int(a) for a in attrs]
        if not idx or len(set(idx)) != len(idx) or any(not 0 <= a < d for a in idx):
            raise ValueError(f"attrs must be distinct attribute positions in 0..{d - 1}, "
                             f"got {list(attrs)!r}")
        return _model_marginal(self.factors, self.domain.shape, idx)

    def answer(self, workload: MarginalWorkload) -> NDArray[np.float64]:
        """Exact workload answers of the model (fractions; no sampling error)."""
        if not isinstance(workload, MarginalWorkload):
            raise TypeError(f"workload must be a MarginalWorkload, got {type(workload).__name__}")
        if workload.domain != self.domain:
            raise ValueError("the workload is over a different domain")
        out = np.empty(len(workload), dtype=np.float64)
        for b, blk in enumerate(workload.blocks):
            out[workload.offsets[b] : workload.offsets[b + 1]] = self.marginal(blk).ravel()
        return out

    def sample(self, m: int | None = None, random_state: RandomLike = None) -> NDArray[np.int64]:
        """``m`` records (default n, or the model's total under add-remove), drawn
        i.i.d. and exactly from the model.

        Ancestral sampling along the reversed elimination order of the model's
        junction tree (module docstring); all randomness from ``random_state``.
        """
        size = check_sample_size(m, self.n if self.n is not None else max(1, round(self.total)))
        rng = check_rng(random_state)
        shape = self.domain.shape
        out = np.empty((size, len(shape)), dtype=np.int64)
        for a, parents in reversed(_elimination_order(shape, [c for c, _ in self.factors])):
            joint = _model_marginal(self.factors, shape, [*parents, a])
            cdf = np.cumsum(joint, axis=-1)  # unnormalised conditional CDFs of a | parents
            for s in range(0, size, _SAMPLE_CHUNK):
                e = min(size, s + _SAMPLE_CHUNK)
                rows = cdf[tuple(out[s:e, p] for p in parents)] if parents else cdf[None, :]
                u = rng.random(e - s) * rows[:, -1]
                pick = (rows <= u[:, None]).sum(axis=1)
                out[s:e, a] = np.minimum(pick, shape[a] - 1)
        return out


def _elimination_order(
    shape: tuple[int, ...], cliques: Sequence[tuple[int, ...]]
) -> list[tuple[int, tuple[int, ...]]]:
    """A greedy elimination order of the model graph, each attribute with its parents.

    Attributes are eliminated one at a time (the one whose current neighbourhood has
    the fewest cells first); the parents of ``a`` are its neighbours when it is
    eliminated, all eliminated later, and they are joined pairwise (fill-in).  The
    filled graph is chordal with this perfect elimination order, so under the model
    ``a`` is independent of all later-eliminated attributes given its parents:
    drawing attributes in the reverse order, each from ``p(a | parents)``, draws an
    exact sample of the model.
    """
    d = len(shape)
    nbrs: dict[int, set[int]] = {a: set() for a in range(d)}
    for c in cliques:
        for u, v in itertools.combinations(c, 2):
            nbrs[u].add(v)
            nbrs[v].add(u)
    order: list[tuple[int, tuple[int, ...]]] = []
    while nbrs:
        a = min(nbrs, key=lambda x: (math.prod(shape[y] for y in nbrs[x]) * shape[x], x))
        ns = nbrs.pop(a)
        for u, v in itertools.combinations(sorted(ns), 2):
            nbrs[u].add(v)
            nbrs[v].add(u)
        for u in ns:
            nbrs[u].discard(a)
        order.append((a, tuple(sorted(ns))))
    return order
