"""Releases as the one model type they sample through: what the synthesizers that release a
distribution over the full domain share (:class:`DistributionRelease`), and the release of any
fitted synthesizer as a graphical model (:class:`_Release`, what a saved model holds)."""

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


class _Release:
    """The released model: a :class:`~oracledp.synth._graphical.GraphicalModel`, the one model
    type every synthesizer's release is (OracleQueryPGM, MST and AIM estimate one; a released
    distribution, MWEM's or OracleQuery's, is one with a single clique;
    independent marginals one with a clique per attribute).  Saved as the log-potentials of
    its cliques and the cliques of its junction tree, and rebuilt exactly: it samples the
    rows the fitted synthesizer samples for the same seed
    (:meth:`GraphicalModel.sample <oracledp.synth._graphical.GraphicalModel.sample>`).
    """

    def __init__(self, factors: list[tuple[tuple[int, ...], NDArray[np.float64]]],
                 domain: Domain, tree: list[tuple[int, ...]]) -> None:
        from oracledp.synth._graphical import GraphicalModel
        from oracledp.synth._junction_tree import JunctionTree

        for clique, table in factors:
            want = tuple(domain.shape[a] for a in clique)
            if table.shape != want:
                raise ValueError(f"a factor over {clique} has shape {table.shape}, not {want}")
            if not (np.isfinite(table) | np.isneginf(table)).all():  # log 0: no mass
                raise ValueError(f"a factor over {clique} has values that are not finite")
        cliques = [c for c, _ in factors]
        if len(set(cliques)) != len(cliques) or any(list(c) != sorted(set(c)) for c in cliques):
            raise ValueError("the model's cliques must be distinct increasing tuples")
        jt = JunctionTree(domain.shape, tree, nodes=True)
        self.model = GraphicalModel(domain.shape, dict(factors), jt)
        self.factors = list(self.model.potentials.items())
        self.domain = domain

    @property
    def tree(self) -> list[tuple[int, ...]]:
        """The junction tree's cliques."""
        return list(self.model.tree.cliques)

    @classmethod
    def of(cls, synth: Any, domain: Domain) -> _Release:
        """The release of a fitted synthesizer, as the model it samples through."""
        model = getattr(synth, "model_", None)
        result = getattr(synth, "result_", None)
        if model is None and result is not None:
            model = getattr(result, "model", None)  # MST, AIM, MWEM, independent
        if model is None and hasattr(synth, "release_model"):
            model = synth.release_model()  # OracleQuery's released distribution
        if model is None:
            raise TypeError(f"{type(synth).__name__}: its release is not a model that "
                            "TableSynthesizer can save")
        return cls([(tuple(int(a) for a in c), np.asarray(t, dtype=np.float64))
                    for c, t in model.potentials.items()], domain,
                   tree=list(model.tree.cliques))

    def sample_codes(self, n: int, rng: np.random.Generator,
                     sampler: str = "rounded") -> NDArray[np.int64]:
        return self.model.sample(n, rng, sampler=sampler)
