"""MWEM, independent marginals, MST and AIM as :class:`~oracledp.synth._base.Synthesizer` s.

Each class runs its mechanism function once in ``fit(data, domain)`` (the function's
guarantee is the synthesizer's ``guarantee_``; its result object is ``result_``) and answers
and samples through the common interface.  The functions stay available for scripts:
:func:`~oracledp.synth._baselines.independent_marginals`, :func:`~oracledp.synth._baselines.mwem`,
:func:`~oracledp.synth._peers.mst`, :func:`~oracledp.synth._peers.aim`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from oracledp._validation import RandomLike, check_choice, check_rng
from oracledp.privacy._accountant import begin_release
from oracledp.synth._base import Synthesizer
from oracledp.synth._domain import Domain
from oracledp.synth._workload import (
    MarginalWorkload,
    check_sample_weight,
    kway_marginal_workload,
)

__all__ = ["AIMSynthesizer", "IndependentMarginalsSynthesizer", "MSTSynthesizer",
           "MWEMSynthesizer"]


class _FunctionSynthesizer(Synthesizer):
    """A synthesizer whose ``fit`` calls one mechanism function and keeps its result."""

    epsilon: float
    k: int
    random_state: RandomLike

    def _run(self, codes: NDArray[np.int64], domain: Domain, workload: MarginalWorkload,
             rng: np.random.Generator, weights: NDArray[np.float64] | None) -> Any:
        raise NotImplementedError

    def _begin_release(self, rng: np.random.Generator) -> None:
        """Declare the fit's budget (pure epsilon) to an active BudgetAccountant."""
        begin_release(self, self.epsilon, rng=rng)

    def check_domain(self, domain_shape: tuple[int, ...] | list[int], n: int) -> None:
        """Refuse, before any noise, a domain this method cannot fit (ValueError).

        Reads only public quantities: the domain's shape (levels per attribute; an upper
        bound of the final one is enough: every rule here is monotone in it), the number of
        records ``n`` and the parameters.  :meth:`fit` calls it first; a caller that draws
        noise before ``fit`` (e.g. for the domain itself) calls it before that.
        """
        d = len(domain_shape)
        if isinstance(self.k, bool) or not isinstance(self.k, int) or not 1 <= self.k <= d:
            raise ValueError(f"k must be an integer in [1, {d}], got {self.k!r}")

    def fit(self, data: pd.DataFrame | NDArray[np.integer], domain: Domain, *,
            sample_weight: ArrayLike | None = None) -> Synthesizer:
        """Run the mechanism once on ``data`` over the public ``domain`` (never inferred).

        ``sample_weight``: record counts of distinct rows; the release equals that of the
        expanded records (each record counts once in the privacy analysis).
        """
        for name in ("result_", "n_", "domain_", "workload_", "guarantee_", "_rng"):
            self.__dict__.pop(name, None)  # a refused refit leaves no stale release behind
        codes = self._encode(data, domain)
        w = None if sample_weight is None else check_sample_weight(sample_weight, len(codes))
        self.check_domain(domain.shape, len(codes) if w is None else int(w.sum()))
        workload = kway_marginal_workload(domain, self.k)
        rng = check_rng(self.random_state)
        self._begin_release(rng)  # an active BudgetAccountant: refused here, before any noise
        result = self._run(codes, domain, workload, rng, w)
        self.result_ = result
        self.n_ = result.n
        self.domain_ = domain
        self.workload_ = workload
        self.guarantee_ = result.guarantee
        self._rng = rng
        return self

    def answer(self, workload: MarginalWorkload | None = None) -> NDArray[np.float64]:
        """Answers of a workload (default: all ``k``-way marginals) under the release."""
        wl = self._workload(workload)  # checks fitted first
        return np.asarray(self.result_.answer(wl), dtype=np.float64)

    def _sample_codes(self, n: int, rng: np.random.Generator,
                      sampler: str = "rounded") -> NDArray[np.int64]:
        return np.asarray(self.result_.sample(n, rng, sampler=sampler), dtype=np.int64)


class IndependentMarginalsSynthesizer(_FunctionSynthesizer):
    """epsilon-DP independent 1-way marginals (Laplace), sampled attribute by attribute.

    Privacy: pure ``epsilon``-DP for replace-one neighbours (the function
    :func:`~oracledp.synth._baselines.independent_marginals` states the proof); no oracle.

    >>> import numpy as np
    >>> from oracledp.synth import Domain, IndependentMarginalsSynthesizer
    >>> dom = Domain(("a", "b"), ((0, 1), (0, 1, 2)))
    >>> codes = np.array([[0, 1], [1, 2], [1, 0], [0, 1]])
    >>> syn = IndependentMarginalsSynthesizer(1.0, random_state=0).fit(codes, dom)
    >>> syn.guarantee_.kind, syn.sample_codes(3).shape
    (<GuaranteeKind.PURE: 'pure'>, (3, 2))
    """

    def __init__(self, epsilon: float, *, k: int = 2, random_state: RandomLike = None) -> None:
        self.epsilon = epsilon
        self.k = k
        self.random_state = random_state

    def _run(self, codes: NDArray[np.int64], domain: Domain, workload: MarginalWorkload,
             rng: np.random.Generator, weights: NDArray[np.float64] | None) -> Any:
        from oracledp.synth._baselines import independent_marginals

        return independent_marginals(codes, domain, self.epsilon, rng, sample_weight=weights)


class MWEMSynthesizer(_FunctionSynthesizer):
    """MWEM (Hardt, Ligett, McSherry 2012) on all ``k``-way marginals, ``rounds`` rounds.

    Privacy: pure ``epsilon``-DP for replace-one neighbours by basic composition of its
    ``2 rounds`` steps (:func:`~oracledp.synth._baselines.mwem`); no oracle.

    >>> import numpy as np
    >>> from oracledp.synth import Domain, MWEMSynthesizer
    >>> dom = Domain(("a", "b"), ((0, 1), (0, 1, 2)))
    >>> codes = np.array([[0, 1], [1, 2], [1, 0], [0, 1]])
    >>> syn = MWEMSynthesizer(1.0, k=2, rounds=3, random_state=0).fit(codes, dom)
    >>> syn.guarantee_.epsilon, syn.answer().shape
    (1.0, (6,))
    """

    def __init__(self, epsilon: float, *, k: int = 3, rounds: int = 30,
                 random_state: RandomLike = None) -> None:
        self.epsilon = epsilon
        self.k = k
        self.rounds = rounds
        self.random_state = random_state

    def check_domain(self, domain_shape: tuple[int, ...] | list[int], n: int) -> None:
        """As :meth:`_FunctionSynthesizer.check_domain`; MWEM also refuses a full domain of
        more than 50,000,000 cells (it keeps one probability per cell)."""
        from oracledp.synth._baselines import check_mwem_domain

        super().check_domain(domain_shape, n)
        r = self.rounds
        if isinstance(r, bool) or not isinstance(r, int | np.integer) or int(r) < 1:
            raise ValueError(f"rounds must be an integer >= 1, got {r!r}")
        check_mwem_domain(tuple(domain_shape))

    def _run(self, codes: NDArray[np.int64], domain: Domain, workload: MarginalWorkload,
             rng: np.random.Generator, weights: NDArray[np.float64] | None) -> Any:
        from oracledp.synth._baselines import mwem

        return mwem(codes, domain, workload, self.epsilon, self.rounds, rng,
                    sample_weight=weights)


class _PeerSynthesizer(_FunctionSynthesizer):
    """MST and AIM: ``(epsilon, delta)``-DP by zCDP; estimation on the numpy junction-tree
    estimator (default ``backend="numpy"``) or on ``mbi`` (``backend="mbi"``, optional
    ``peers`` extra)."""

    _DEFAULT_K = 2

    def __init__(self, epsilon: float, delta: float = 1e-6, *, k: int | None = None,
                 neighbouring: str = "replace-one", backend: str = "numpy",
                 random_state: RandomLike = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.k = self._DEFAULT_K if k is None else k
        self.neighbouring = neighbouring
        self.backend = backend
        self.random_state = random_state

    def check_domain(self, domain_shape: tuple[int, ...] | list[int], n: int) -> None:
        """As :meth:`_FunctionSynthesizer.check_domain`; also the neighbouring relation and
        the backend's name."""
        from oracledp.synth._peers_accounting import _NEIGHBOURS

        super().check_domain(domain_shape, n)
        check_choice(self.neighbouring, "neighbouring", _NEIGHBOURS)
        check_choice(self.backend, "backend", ("numpy", "mbi"))

    def _begin_release(self, rng: np.random.Generator) -> None:
        """Declare ``(epsilon, delta)``, planned in zCDP, to an active BudgetAccountant."""
        begin_release(self, self.epsilon, self.delta, rng=rng, zcdp=True,
                      neighbouring=self.neighbouring)


class MSTSynthesizer(_PeerSynthesizer):
    """MST (McKenna, Miklau, Sheldon 2021); estimation in numpy or on ``mbi`` (``backend``).

    Privacy: ``(epsilon, delta)``-DP by zCDP for ``neighbouring`` neighbours
    (:func:`~oracledp.synth._peers.mst`); under add-remove neighbours n is private, so pass
    the number of records to :meth:`sample_codes`.  ``k`` (default 2) only sets the
    workload :meth:`answer` defaults to.

    >>> from oracledp.synth import MSTSynthesizer
    >>> MSTSynthesizer(1.0, random_state=0).k
    2
    """

    def check_domain(self, domain_shape: tuple[int, ...] | list[int], n: int) -> None:
        """As :meth:`_FunctionSynthesizer.check_domain`; MST also needs 2 attributes."""
        super().check_domain(domain_shape, n)
        if len(domain_shape) < 2:
            raise ValueError("MST needs at least 2 attributes (it selects a spanning tree of "
                             "pairs)")

    def _run(self, codes: NDArray[np.int64], domain: Domain, workload: MarginalWorkload,
             rng: np.random.Generator, weights: NDArray[np.float64] | None) -> Any:
        from oracledp.synth._peers import mst

        return mst(codes, domain, self.epsilon, self.delta, rng, neighbouring=self.neighbouring,
                   sample_weight=weights, backend=self.backend)


class AIMSynthesizer(_PeerSynthesizer):
    """AIM (McKenna, Mullins, Sheldon, Miklau 2022) for all ``k``-way marginals, on ``mbi``.

    Privacy: ``(epsilon, delta)``-DP by zCDP for ``neighbouring`` neighbours
    (:func:`~oracledp.synth._peers.aim`); ``backend="mbi"`` needs the optional ``peers``
    extra.  ``k`` defaults to 3.

    >>> from oracledp.synth import AIMSynthesizer
    >>> AIMSynthesizer(1.0, 1e-6, random_state=0).k
    3
    """

    _DEFAULT_K = 3

    def check_domain(self, domain_shape: tuple[int, ...] | list[int], n: int) -> None:
        """As :meth:`_FunctionSynthesizer.check_domain`; AIM also refuses an all ``k``-way
        workload with more than 5,000 candidate marginals (its subsets included: e.g. more
        than 30 columns at k = 3), whose rounds would take too long."""
        from oracledp.synth._peers_aim import aim_candidates, check_aim_candidates

        super().check_domain(domain_shape, n)
        d = len(domain_shape)
        check_aim_candidates(d, aim_candidates(d, k=self.k), self.k)

    def _run(self, codes: NDArray[np.int64], domain: Domain, workload: MarginalWorkload,
             rng: np.random.Generator, weights: NDArray[np.float64] | None) -> Any:
        from oracledp.synth._peers import aim

        return aim(codes, domain, self.epsilon, self.delta, rng, workload,
                   neighbouring=self.neighbouring, sample_weight=weights, backend=self.backend)
