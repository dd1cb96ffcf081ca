"""Baselines for private contingency-table release: independent marginals and MWEM.

Neighbouring relation: *replace-one* (datasets of the same public size n that
differ in one record), as everywhere in oracledp.  Answers are fractions of n.

Independent 1-way marginals (Laplace)
-------------------------------------
For each attribute ``a`` the histogram ``c_a`` (counts per level) is released
as ``c_a + Lap(2d / epsilon)`` per cell, d = number of attributes.
Sensitivity: replacing one record moves one unit of count from the old level to
the new one in every histogram, so each ``c_a`` moves by at most 2 in l1, and
the concatenation of the d histograms by at most 2d.  The Laplace mechanism
(Dwork, McSherry, Nissim, Smith 2006; Dwork and Roth 2014, Thm 3.6) with
scale 2d/epsilon is epsilon-DP; equivalently, the budget is split evenly,
epsilon/d per attribute with scale 2/(epsilon/d).  Post-processing (free):
negative counts are set to 0 and each histogram is normalized (uniform when
nothing positive is left); synthetic records draw every attribute
independently from its distribution.

MWEM (Hardt, Ligett, McSherry, NeurIPS 2012)
--------------------------------------------
"A simple and practical algorithm for differentially private data release",
Algorithm 1.  Start from the uniform distribution ``p_0`` over the full
domain.  For t = 1..T, with ``eps0 = epsilon / (2T)``:

1. *Select* a query ``q_t`` with the exponential mechanism at ``eps0``,
   probability proportional to ``exp(eps0 * s(q) / 2)``, score
   ``s(q) = n |q(p_{t-1}) - q(S)|`` (in counts);
2. *Measure* ``m_t = q_t(S) + Lap(1 / (eps0 n))`` (a fraction: a count plus
   ``Lap(1/eps0)``, divided by n);
3. *Update* ``p_t(x) ∝ p_{t-1}(x) exp(q_t(x) (m_t - q_t(p_{t-1})) / 2)``
   (the paper's ``exp(q(x)(m - q(A))/(2n))`` with A = n p in counts).

The output is the average of ``p_1..p_T`` (the paper's output, used in its
accuracy theorem); ``output="last"`` returns ``p_T`` instead (equally private,
post-processing).  Privacy: the paper proves MWEM is epsilon-DP (its privacy
theorem; we did not have the text to check the theorem number) by composing
T rounds of (eps0 + eps0).  Under replace-one neighbours a count query
``n q(S)`` moves by at most 1 (so by 1/n as a fraction), the score
``n|q(p) - q(S)|`` by at most 1 for a fixed ``p_{t-1}`` (which depends only on
earlier outputs), so the exponential mechanism (McSherry, Talwar 2007) is
eps0-DP and the Laplace measurement with count scale 1/eps0 is eps0-DP; basic
adaptive composition over 2T steps gives ``2T * eps0 = epsilon``.  We do not
implement the paper's measurement-reuse heuristic (re-applying past updates).

Why MWEM keeps its own multiplicative-weights step (issue 38: one model type and one
estimation loop).  The step ``p_t ∝ p_{t-1} exp(q_t (m_t - q_t(p_{t-1})) / 2)``, one per
round with the fixed rate 1/2, and the average of ``p_1..p_T`` as the output *are* the
published mechanism (Algorithm 1); the paper's accuracy theorem is about that output.  The
package's one estimator (:func:`oracledp.synth._graphical.estimate_model`: mirror descent on
the Gaussian least-squares loss of marginal tables, with a line search) would release another
distribution from the same measurements, so MWEM does not call it and it is not a second
estimation engine: it fits no loss, it applies the paper's update once per measurement.
Everything else is shared: the answers (:func:`~oracledp.synth._workload.answer` and
:func:`~oracledp.synth._workload.answer_distribution`), the exponential mechanism and the
Laplace draw of :mod:`oracledp.privacy._noise`, and the release, which is the one model type
(:class:`~oracledp.synth._graphical.GraphicalModel`, one clique over every attribute, through
:func:`~oracledp.synth._graphical.model_of_tables`) that every synthesizer samples through.
Its measurements are single Laplace-noised cells, not the Gaussian marginal tables of
:class:`~oracledp.synth._estimation.MarginalMeasurement`, so they stay in ``measurements``
(fractions).  The law of the release is the paper's, unchanged.

All guarantees hold under idealized numerics (see :mod:`oracledp.privacy._guarantees`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._diagnostics import (
    NonPrivateDiagnostics,
    check_diagnostics_flag,
    release_diagnostics,
)
from oracledp._validation import RandomLike, check_epsilon, check_rng, check_sample_size
from oracledp.privacy import _noise as noise
from oracledp.privacy._guarantees import PrivacyGuarantee
from oracledp.synth._domain import Domain
from oracledp.synth._workload import (
    MarginalWorkload,
    answer,
    answer_distribution,
    cells_text,
    check_sample_weight,
)

__all__ = [
    "IndependentMarginalsResult",
    "MWEMResult",
    "independent_marginals",
    "mwem",
]

_MAX_CELLS = 50_000_000  # 400 MB of float64: refuse larger full-domain tables


#: Beyond this |exponent| the direct update ``p[q] *= exp(x); p /= p.sum()`` may fail
#: (``exp`` overflows past ~709.78, or the sum overflows or underflows to 0); below it, it
#: cannot for a domain of at most :data:`_MAX_CELLS` cells (e^-700 times 1/_MAX_CELLS is
#: still above the smallest subnormal).
_SAFE_EXPONENT = 700.0


def _mw_update(p: NDArray[np.float64], where: tuple[Any, ...], x: float) -> None:
    """MWEM's step in place: ``p <- p exp(x [cell in where]) / Z`` (a probability vector).

    The direct form (the paper's) is kept whenever it gives a finite probability vector, so
    those releases are unchanged bit for bit; otherwise (huge noise: small n, small epsilon)
    the same update is done in log space, shifting the group that shrinks and subtracting the
    maximum before ``exp``: finite and summing to 1, cells at 0 stay at 0.  Post-processing
    of the noisy measurement only: the privacy analysis is unchanged.
    """
    if abs(x) <= _SAFE_EXPONENT:
        p[where] *= math.exp(x)
        p /= p.sum()
        return
    try:
        factor = math.exp(x)
    except OverflowError:
        factor = math.inf
    if factor < math.inf:
        saved = p[where].copy()
        p[where] *= factor
        total = p.sum()
        if math.isfinite(total) and total > 0.0:
            p /= total
            return
        p[where] = saved
        del saved
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    mask = np.zeros(p.shape, dtype=bool)
    mask[where] = True
    if x > 0.0:  # the other cells shrink by exp(-x)
        logp[~mask] -= x
    else:  # the query's cells shrink by exp(x)
        logp[mask] += x
    logp -= logp.max()
    np.exp(logp, out=p)
    p /= p.sum()


def check_mwem_domain(shape: tuple[int, ...]) -> None:
    """Refuse a domain MWEM cannot hold (public: the domain's shape only).

    MWEM keeps one probability per cell of the full product domain: more than
    50,000,000 cells (400 MB of float64) are refused, before any noise.
    """
    cells = math.prod(int(s) for s in shape)
    if cells > _MAX_CELLS:
        raise ValueError(
            f"MWEM keeps one probability per cell of the full domain, and this one has "
            f"{cells_text(cells)} cells ({len(shape)} columns; at most {_MAX_CELLS:,}): use "
            "the method oracle-query-pgm, mst or independent, or fewer columns or bins. "
            "Nothing was fitted")


class _ModelRelease:
    """A released result that samples through the one model type of every release
    (:func:`~oracledp.synth._graphical.model_of_tables` of its ``_tables()``, built once)."""

    n: int

    def _tables(self) -> tuple[tuple[int, ...], list[tuple[tuple[int, ...], Any]]]:
        raise NotImplementedError

    @property
    def model(self) -> Any:
        """The release as a GraphicalModel: what every synthesizer samples through."""
        from oracledp.synth._graphical import model_of_tables

        model = self.__dict__.get("_model")
        if model is None:
            model = model_of_tables(*self._tables())
            self.__dict__["_model"] = model
        return model

    def sample(self, m: int | None = None, random_state: RandomLike = None, *,
               sampler: str = "rounded") -> NDArray[np.int64]:
        """``m`` synthetic records (default n) drawn from the release
        (:mod:`oracledp.synth._sampling`: ``"rounded"`` or ``"iid"``)."""
        size = check_sample_size(m, self.n)
        return self.model.sample(size, check_rng(random_state), sampler=sampler)


@dataclass(frozen=True)
class IndependentMarginalsResult(_ModelRelease):
    """Noisy 1-way marginals, post-processed to distributions.

    ``marginals[j]`` is a probability vector over ``domain.levels[j]``;
    ``noisy_counts[j]`` the released noisy histogram before post-processing.
    """

    domain: Domain
    n: int
    marginals: tuple[NDArray[np.float64], ...]
    noisy_counts: tuple[NDArray[np.float64], ...]
    noise_scale: float
    guarantee: PrivacyGuarantee

    def answer(self, workload: MarginalWorkload) -> NDArray[np.float64]:
        """Exact answers of the workload under the product distribution (no sampling error)."""
        if workload.domain != self.domain:
            raise ValueError("the workload is over a different domain")
        out = np.empty(len(workload), dtype=np.float64)
        for b, blk in enumerate(workload.blocks):
            table = np.ones(1)
            for a in blk:
                table = np.multiply.outer(table, self.marginals[a]).ravel()
            out[workload.offsets[b] : workload.offsets[b + 1]] = table
        return out

    def _tables(self) -> tuple[tuple[int, ...], list[tuple[tuple[int, ...], Any]]]:
        """One clique per attribute: its released marginal."""
        shape = tuple(len(p) for p in self.marginals)
        return shape, [((a,), p) for a, p in enumerate(self.marginals)]


def independent_marginals(
    codes: ArrayLike,
    domain: Domain,
    epsilon: float,
    random_state: RandomLike = None,
    *,
    noiseless: bool = False,
    sample_weight: ArrayLike | None = None,
) -> IndependentMarginalsResult:
    """epsilon-DP independent 1-way marginals (Laplace, scale 2d/epsilon per cell).

    ``noiseless=True`` is a *non-private* reference (test hook): the exact
    marginals are returned and the guarantee is marked as not holding.
    ``sample_weight``: record counts of the rows (distinct rows); the release equals that
    of the expanded records, each counting once in the privacy analysis.

    Examples
    --------
    >>> import numpy as np
    >>> from oracledp.synth import Domain, independent_marginals
    >>> domain = Domain(("a", "b", "c"), ((0, 1), (0, 1), (0, 1, 2)))
    >>> codes = np.array([[0, 0, 0], [0, 1, 1], [1, 1, 2], [1, 0, 2], [1, 1, 1]] * 20)
    >>> res = independent_marginals(codes, domain, 1.0, random_state=0)
    >>> res.noise_scale, [m.shape for m in res.marginals], res.sample(5, random_state=1).shape
    (6.0, [(2,), (2,), (3,)], (5, 3))
    >>> res.guarantee.describe().split(";")[0]
    '1-DP (pure), replace-one neighbours'
    """
    if not isinstance(domain, Domain):
        raise TypeError(f"domain must be a Domain, got {type(domain).__name__}")
    arr = domain.check_codes(codes)
    eps = check_epsilon(epsilon)
    w = None if sample_weight is None else check_sample_weight(sample_weight, arr.shape[0])
    rng = check_rng(random_state)
    n, d = arr.shape
    if w is not None:  # record counts of distinct rows: the expanded records' histograms
        n = int(w.sum())
    scale = noise.laplace_scale(2.0 * d, eps)  # l1 sensitivity 2 per attribute, d attributes
    noisy: list[NDArray[np.float64]] = []
    margs: list[NDArray[np.float64]] = []
    for j, k in enumerate(domain.shape):
        counts = (np.bincount(arr[:, j], minlength=k).astype(np.float64) if w is None
                  else np.bincount(arr[:, j], weights=w, minlength=k))
        if not noiseless:
            counts = counts + noise.laplace(rng, scale, size=k)
        noisy.append(counts)
        pos = np.maximum(counts, 0.0)
        tot = pos.sum()
        margs.append(pos / tot if tot > 0 else np.full(k, 1.0 / k))
    guarantee = noise.laplace_guarantee(
        eps,
        source="Laplace mechanism (Dwork-Roth 2014, Thm 3.6) on d 1-way histograms, l1 sensitivity 2d",
        notes=f"replace-one: each histogram moves by <= 2 in l1; scale 2d/eps = {scale:g}",
    )
    if noiseless:
        guarantee = guarantee.not_holding("noiseless=True: exact marginals, non-private reference")
    return IndependentMarginalsResult(
        domain, n, tuple(margs), tuple(noisy), 0.0 if noiseless else scale, guarantee
    )


@dataclass(frozen=True)
class MWEMResult(_ModelRelease):
    """MWEM output: a distribution over the full domain, and the round log.

    Everything here is released (the selections and measurements are the outputs of
    the composed mechanisms).  The wall-clock time is a non-private diagnostic:
    ``diagnostics`` (``seconds``) is None unless ``return_diagnostics=True``.
    """

    domain: Domain
    n: int
    distribution: NDArray[np.float64]  # shape domain.shape, sums to 1
    selected: tuple[int, ...]  # workload index chosen in each round
    measurements: tuple[float, ...]  # noisy answers (fractions) of the selected queries
    epsilon_per_step: float
    guarantee: PrivacyGuarantee
    diagnostics: NonPrivateDiagnostics | None = field(default=None, compare=False, repr=False)

    def answer(self, workload: MarginalWorkload) -> NDArray[np.float64]:
        """Exact answers of the workload under the released distribution."""
        if workload.domain != self.domain:
            raise ValueError("the workload is over a different domain")
        return answer_distribution(workload, self.distribution)

    def _tables(self) -> tuple[tuple[int, ...], list[tuple[tuple[int, ...], Any]]]:
        """One clique over every attribute: the released distribution."""
        shape = self.domain.shape
        return shape, [(tuple(range(len(shape))), self.distribution.reshape(shape))]


def mwem(
    codes: ArrayLike,
    domain: Domain,
    workload: MarginalWorkload,
    epsilon: float,
    T: int,
    random_state: RandomLike = None,
    *,
    output: str = "average",
    return_diagnostics: bool = False,
    sample_weight: ArrayLike | None = None,
) -> MWEMResult:
    """epsilon-DP MWEM over the full domain (see the module docstring).

    ``return_diagnostics=True`` attaches the wall-clock time as non-private
    diagnostics (a :class:`~oracledp._errors.DiagnosticsWarning` is issued and the
    guarantee is flagged ``diagnostics_released``).
    ``sample_weight``: record counts of the rows (distinct rows); the release equals that
    of the expanded records, each counting once in the privacy analysis.

    Examples
    --------
    >>> import numpy as np
    >>> from oracledp.synth import Domain, kway_marginal_workload, mwem
    >>> domain = Domain(("a", "b", "c"), ((0, 1), (0, 1), (0, 1, 2)))
    >>> codes = np.array([[0, 0, 0], [0, 1, 1], [1, 1, 2], [1, 0, 2], [1, 1, 1]] * 20)
    >>> workload = kway_marginal_workload(domain, 2)
    >>> res = mwem(codes, domain, workload, 1.0, 5, random_state=0)
    >>> len(res.selected), res.epsilon_per_step, res.distribution.shape
    (5, 0.1, (2, 2, 3))
    >>> res.guarantee.describe().split(";")[0]  # 5 rounds of 2 x eps/10, basic composition
    '1-DP (pure), replace-one neighbours'
    """
    want_diag = check_diagnostics_flag(return_diagnostics)
    if not isinstance(domain, Domain):
        raise TypeError(f"domain must be a Domain, got {type(domain).__name__}")
    if not isinstance(workload, MarginalWorkload):
        raise TypeError(f"workload must be a MarginalWorkload, got {type(workload).__name__}")
    if workload.domain != domain:
        raise ValueError("the workload is over a different domain")
    arr = domain.check_codes(codes)
    eps = check_epsilon(epsilon)
    if isinstance(T, bool) or not isinstance(T, int | np.integer) or int(T) < 1:
        raise ValueError(f"T must be an integer >= 1, got {T!r}")
    T = int(T)
    if output not in ("average", "last"):
        raise ValueError(f"output must be 'average' or 'last', got {output!r}")
    check_mwem_domain(domain.shape)
    w = None if sample_weight is None else check_sample_weight(sample_weight, arr.shape[0])
    rng = check_rng(random_state)
    start = time.perf_counter()

    n = arr.shape[0] if w is None else int(w.sum())
    true = answer(workload, arr, w)
    eps0 = eps / (2 * T)
    p = np.full(domain.shape, 1.0 / domain.size)
    avg = np.zeros(domain.shape) if output == "average" else None
    selected: list[int] = []
    measured: list[float] = []
    for _ in range(T):
        est = answer_distribution(workload, p)
        score = n * np.abs(est - true)
        # Exponential mechanism via the Gumbel-max trick: argmax(eps0 s / 2 + Gumbel);
        # the count score n |q(p) - q(S)| moves by at most 1 (p fixed): sensitivity 1.
        j = noise.exponential_mechanism(rng, score, eps0, 1.0)
        m = float(true[j] + noise.laplace(rng, 1.0 / (eps0 * n)))
        idx: list[slice | int] = [slice(None)] * len(domain)
        for a, c in workload.literals(j):
            idx[a] = c
        _mw_update(p, tuple(idx), (m - est[j]) / 2.0)
        selected.append(j)
        measured.append(m)
        if avg is not None:
            avg += p
    dist = avg / T if avg is not None else p
    dist = dist / dist.sum()
    guarantee = PrivacyGuarantee.pure(
        eps,
        source="Hardt, Ligett, McSherry 2012 (MWEM), privacy theorem; basic composition",
        notes=(
            f"T={T} rounds, each: exponential mechanism eps0={eps0:g} (score sensitivity 1 count) "
            f"+ Laplace count scale 1/eps0; replace-one, n={n} public"
        ),
    )
    diagnostics = None
    if want_diag:
        guarantee = release_diagnostics(guarantee, "MWEM")
        diagnostics = NonPrivateDiagnostics("mwem", {"seconds": time.perf_counter() - start})
    return MWEMResult(
        domain,
        n,
        dist,
        tuple(selected),
        tuple(measured),
        eps0,
        guarantee,
        diagnostics=diagnostics,
    )
