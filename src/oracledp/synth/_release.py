"""What the synthesizers that release a distribution over the full domain share."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp._validation import RandomLike, check_rng
from oracledp.synth.domain import Domain
from oracledp.synth.workload import MarginalWorkload, answer_distribution

__all__ = ["DistributionRelease"]


class DistributionRelease:
    """Mixin: answers and samples of a released ``distribution_`` (shape ``domain_.shape``).

    The fitted object holds ``distribution_``, ``domain_``, ``workload_``, ``n_`` and,
    until pickled, the fit's generator ``_rng``.  Everything here is post-processing of
    the release.
    """

    distribution_: NDArray[np.float64]
    domain_: Domain
    workload_: MarginalWorkload
    n_: int
    _rng: np.random.Generator | None

    @staticmethod
    def _encode(data: Any, domain: Domain) -> NDArray[np.int64]:
        """The records as integer codes over the public ``domain`` (checked, never inferred)."""
        if not isinstance(domain, Domain):
            raise TypeError(f"domain must be a Domain, got {type(domain).__name__}")
        if isinstance(data, pd.DataFrame):
            return domain.encode(data)
        if isinstance(data, np.ndarray):
            return domain.check_codes(data, "data")
        raise TypeError(
            "data must be a pandas DataFrame (columns = the domain's attributes) or an "
            f"integer code matrix of shape (n, {len(domain)}), got {type(data).__name__}"
        )

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
        self._check_fitted()
        wl = self.workload_ if workload is None else workload
        if wl.domain != self.domain_:
            raise ValueError("the workload is over a different domain")
        return answer_distribution(wl, self.distribution_)

    def sample_codes(self, n: int | None = None,
                     random_state: RandomLike = None) -> NDArray[np.int64]:
        """``n`` synthetic records (default: the private n) drawn i.i.d. from the release, as codes.

        ``random_state`` None continues the fit's generator; a pickled synthesizer does not
        carry that generator (its state would reveal the fit's noise), so after unpickling
        pass a seed or Generator.
        """
        self._check_fitted()
        if n is None:
            n = self.n_
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or int(n) < 1:
            raise ValueError(f"the number of records to sample must be an integer >= 1, got {n!r}")
        if random_state is not None:
            rng = check_rng(random_state)
        elif getattr(self, "_rng", None) is not None:
            rng = self._rng
        else:
            raise ValueError("this synthesizer was unpickled without its generator (it would "
                             "reveal the fit's noise): pass random_state= to sample")
        flat = self.distribution_.ravel()
        cells = rng.choice(flat.size, size=int(n), p=flat / flat.sum())
        return np.stack(np.unravel_index(cells, self.domain_.shape), axis=1).astype(np.int64)

    def sample(self, n: int | None = None, random_state: RandomLike = None) -> pd.DataFrame:
        """``n`` synthetic records as a DataFrame in the domain's levels (post-processing)."""
        codes = self.sample_codes(n, random_state)  # checks fitted first
        return self.domain_.decode(codes)
