"""What the synthesizers that release a distribution over the full domain share."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp.synth._base import Synthesizer
from oracledp.synth._domain import Domain
from oracledp.synth._workload import MarginalWorkload, answer_distribution

__all__ = ["DistributionRelease"]


class DistributionRelease(Synthesizer):
    """A :class:`~oracledp.synth._base.Synthesizer` whose release is a distribution.

    Answers and samples come from the released ``distribution_`` (shape ``domain_.shape``).

    The fitted object holds ``distribution_``, ``domain_``, ``workload_``, ``n_`` and,
    until pickled, the fit's generator ``_rng``.  Everything here is post-processing of
    the release.
    """

    distribution_: NDArray[np.float64]
    domain_: Domain
    workload_: MarginalWorkload
    n_: int
    _rng: np.random.Generator | None

    def _store_release(self, n: int, domain: Domain, workload: MarginalWorkload, rounds: int,
                       guarantee: Any, distribution: NDArray[np.float64],
                       rng: np.random.Generator, **fitted: Any) -> None:
        """Store a fit: ``n_``, ``domain_``, ``workload_``, ``rounds_``, then the synthesizer's
        own fitted attributes ``fitted`` (in order), ``guarantee_``, ``distribution_`` and the
        fit's generator (kept to continue sampling; never pickled)."""
        self.n_ = n
        self.domain_ = domain
        self.workload_ = workload
        self.rounds_ = rounds
        for name, value in fitted.items():
            setattr(self, name, value)
        self.guarantee_ = guarantee
        self.distribution_ = distribution
        self._rng = rng

    def _check_fitted(self) -> None:
        if not hasattr(self, "distribution_"):
            raise RuntimeError("call fit(data, domain) first")

    def answer(self, workload: MarginalWorkload | None = None) -> NDArray[np.float64]:
        """Exact answers of a workload (default: the fitted one) under the released distribution."""
        return answer_distribution(self._workload(workload), self.distribution_)

    def _sample_codes(self, n: int, rng: np.random.Generator,
                      sampler: str = "rounded") -> NDArray[np.int64]:
        return self.release_model().sample(n, rng, sampler=sampler)

    def release_model(self) -> Any:
        """The release as the one model type every synthesizer samples through (a
        :class:`~oracledp.synth._graphical.GraphicalModel` of the distribution, one clique)."""
        from oracledp.synth._graphical import model_of_tables

        self._check_fitted()
        cached = self.__dict__.get("_release_model")
        if cached is None or cached[0] is not self.distribution_:  # built once per fit
            shape = self.domain_.shape
            cached = (self.distribution_,
                      model_of_tables(shape, [(tuple(range(len(shape))), self.distribution_)]))
            self.__dict__["_release_model"] = cached
        return cached[1]
