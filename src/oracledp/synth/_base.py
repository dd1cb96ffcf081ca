"""The one synthesizer interface: ``fit(data, domain)``, then answers and samples of the release.

Every synthesizer of :mod:`oracledp.synth` is a :class:`Synthesizer`:

* ``fit(data, domain, sample_weight=None)`` runs the mechanism once on the records (a
  DataFrame in the public ``domain``'s levels, or an integer code matrix) and returns
  ``self``; ``sample_weight`` gives a record count per row (distinct rows with their
  multiplicities), and the release is exactly that of the expanded records (each record
  counts once in the privacy analysis);
* ``guarantee_`` is the :class:`~oracledp.privacy._guarantees.PrivacyGuarantee` of the release;
  ``domain_``, ``n_`` and ``workload_`` (the workload it was fitted for) are public;
* ``answer(workload=None)``, ``sample_codes(n=None, random_state=None)`` and
  ``sample(n=None, random_state=None)`` are post-processing of the release.

Every subclass's ``fit`` reports to the active :class:`~oracledp.privacy.BudgetAccountant`
(wrapped when the class is defined; the fit declares its budget just before its mechanism).

A fitted synthesizer pickles without the generator behind its noise (its state would reveal
the noise); after unpickling, pass ``random_state=`` to sample.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp._diagnostics import PicklesWithoutDiagnostics
from oracledp._validation import RandomLike, check_rng, check_sample_size
from oracledp.privacy._accountant import accounted_fit
from oracledp.synth._domain import Domain
from oracledp.synth._sampling import check_sampler
from oracledp.synth._workload import MarginalWorkload

__all__ = ["Synthesizer"]


class Synthesizer(PicklesWithoutDiagnostics):
    """Base of every synthesizer (see the module docstring for the interface).

    >>> import numpy as np
    >>> from oracledp.synth import Domain, MWEMSynthesizer, Synthesizer
    >>> dom = Domain(("a", "b"), ((0, 1), (0, 1, 2)))
    >>> syn = MWEMSynthesizer(1.0, k=2, rounds=2, random_state=0)
    >>> isinstance(syn, Synthesizer)
    True
    >>> syn.fit(np.array([[0, 1], [1, 2], [1, 0]]), dom).sample(2, random_state=1).shape
    (2, 2)
    """

    guarantee_: Any
    domain_: Domain
    workload_: MarginalWorkload
    n_: int
    _rng: np.random.Generator | None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        fit = cls.__dict__.get("fit")
        if fit is not None and not getattr(fit, "__accounted__", False):
            cls.fit = accounted_fit(fit)  # type: ignore[method-assign]
        super().__init_subclass__(**kwargs)

    def fit(self, data: pd.DataFrame | NDArray[np.integer], domain: Domain, *,
            sample_weight: Any = None) -> Synthesizer:
        raise NotImplementedError

    def answer(self, workload: MarginalWorkload | None = None) -> NDArray[np.float64]:
        """Answers of a workload (default: the fitted one) under the release."""
        raise NotImplementedError

    def _sample_codes(self, n: int, rng: np.random.Generator,
                      sampler: str = "rounded") -> NDArray[np.int64]:
        raise NotImplementedError

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

    def _check_fitted(self) -> None:
        if not hasattr(self, "guarantee_"):
            raise RuntimeError("call fit(data, domain) first")

    def _workload(self, workload: MarginalWorkload | None) -> MarginalWorkload:
        self._check_fitted()
        wl = self.workload_ if workload is None else workload
        if wl.domain != self.domain_:
            raise ValueError("the workload is over a different domain")
        return wl

    def sample_codes(self, n: int | None = None, random_state: RandomLike = None, *,
                     sampler: str = "rounded") -> NDArray[np.int64]:
        """``n`` synthetic records (default: the private n) drawn from the release, as codes.

        ``sampler``: ``"rounded"`` (default; every record has the release's law, and the
        counts stay close to the expected ones) or ``"iid"`` (independent records); see
        :mod:`oracledp.synth._sampling`.

        ``random_state`` None continues the fit's generator; a pickled synthesizer does not
        carry that generator (its state would reveal the fit's noise), so after unpickling
        pass a seed or Generator.
        """
        self._check_fitted()
        if n is None and self.n_ is None:
            raise ValueError("the number of records is private under add-remove "
                             "neighbouring (not part of the release): pass n")
        n = check_sample_size(n, self.n_)
        check_sampler(sampler)
        if random_state is not None:
            rng = check_rng(random_state)
        elif getattr(self, "_rng", None) is not None:
            rng = self._rng
        else:
            raise ValueError("this synthesizer was unpickled without its generator (it would "
                             "reveal the fit's noise): pass random_state= to sample")
        return self._sample_codes(n, rng, sampler)

    def sample(self, n: int | None = None, random_state: RandomLike = None, *,
               sampler: str = "rounded") -> pd.DataFrame:
        """``n`` synthetic records as a DataFrame in the domain's levels (post-processing;
        ``sampler`` as in :meth:`sample_codes`)."""
        codes = self.sample_codes(n, random_state, sampler=sampler)  # checks fitted first
        return self.domain_.decode(codes)
