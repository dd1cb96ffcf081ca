"""The graphical model MST and AIM release: exact marginals and exact sampling (numpy, no JAX).

:class:`PGMResult` holds the model ``p(x) ∝ exp(sum_c theta_c(x_c))`` estimated by
Private-PGM (McKenna, Sheldon, Miklau, ICML 2019) as a
:class:`~oracledp.synth._graphical.GraphicalModel` (the one model type of
:mod:`oracledp.synth`: junction tree, exact marginals, exact forward sampling) and the noisy
measurements it was fitted to; its marginals, answers and samples are the model's.
Everything here is post-processing of the release (see "Evaluation and sampling" in
:mod:`oracledp.synth._peers`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from oracledp._diagnostics import NonPrivateDiagnostics
from oracledp._validation import RandomLike, check_rng, check_sample_size
from oracledp.privacy._guarantees import PrivacyGuarantee
from oracledp.synth._domain import Domain
from oracledp.synth._estimation import MarginalMeasurement
from oracledp.synth._graphical import GraphicalModel
from oracledp.synth._workload import MarginalWorkload

__all__ = ["PGMMeasurement", "PGMResult"]


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
    model:
        The estimated :class:`~oracledp.synth._graphical.GraphicalModel` (its ``factors``
        are :attr:`factors`).
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
    model: GraphicalModel = field(repr=False)
    guarantee: PrivacyGuarantee
    diagnostics: NonPrivateDiagnostics | None = field(default=None, repr=False)

    @property
    def rounds(self) -> int:
        """Number of selection rounds (MST: d - 1 tree edges; AIM: rounds run)."""
        return len(self.selected)

    @property
    def factors(self) -> tuple[tuple[tuple[int, ...], NDArray[np.float64]], ...]:
        """The model's log-factors ``(clique, theta)``, ``theta`` of shape
        ``domain.shape[clique]``: ``p(x) = prod exp(theta(x_clique))`` (see
        :attr:`GraphicalModel.factors <oracledp.synth._graphical.GraphicalModel.factors>`)."""
        return self.model.factors

    def marginal(self, attrs: Sequence[int]) -> NDArray[np.float64]:
        """The model's exact marginal distribution over attribute positions ``attrs``.

        Shape ``tuple(domain.shape[a] for a in attrs)``, axes in the given order, sums to 1.
        """
        return self.model.marginal(attrs)

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

    def sample(self, m: int | None = None, random_state: RandomLike = None, *,
               sampler: str = "rounded") -> NDArray[np.int64]:
        """``m`` records (default n, or the model's total under add-remove), drawn exactly
        from the model (:meth:`GraphicalModel.sample
        <oracledp.synth._graphical.GraphicalModel.sample>`, forward sampling along its
        junction tree, ``sampler`` ``"rounded"`` or ``"iid"``); all randomness from
        ``random_state``.
        """
        size = check_sample_size(m, self.n if self.n is not None else max(1, round(self.total)))
        return self.model.sample(size, check_rng(random_state), sampler=sampler)
