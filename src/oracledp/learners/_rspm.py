"""RSPM: Report Separator-Perturbed Min (Neel, Roth, Wu, FOCS 2019, Section III.A).

For a hypothesis class with a separator set U = (u_1..u_m), RSPM draws
eta_i ~ Lap(2m/eps) and makes one call to a *weighted* optimization oracle
(Definition 5) on the real examples (weight 1 each) plus the separator examples
u_i with weights eta_i (which may be negative):

    h = argmin_h  sum_i loss_h(x_i, y_i)  +  sum_i eta_i loss_h(u_i).

Privacy (Theorem 6): eps-DP (pure) for replace-one neighbours **provided the
oracle returns the exact minimizer**; an uncertified oracle answer raises
:class:`~oracledp._errors.OracleFailure` (or, with ``allow_uncertified=True``,
is returned with a guarantee marked as not holding).  The proof translates
eta_i by 2(1 - 2 loss_h(u_i)); the paper's Lemma 3 text says shifts of at most 1,
but the map uses 2, which is what the scale 2m/eps pays for.  The full proof, with
the separator set below and an exact example showing that half the noise is only
2 eps-DP: ``docs/proofs/rspm-shift.md``.

Halfspaces of the ICML 2020 experiment: W = {-1, 0, 1}^d (integer k with
|k_j| <= 1), 0/1 loss 1[y != sgn(<x, w>)] with sgn(0) = 0.  Separator examples
(e_j, +1) and (-e_j, +1), j = 1..d (m = 2d): their losses are 1[w_j <= 0] and
1[w_j >= 0], whose pattern (1,0), (1,1), (0,1) identifies w_j, so U separates W,
and every subset of it, e.g. the norm-bounded W = {k in {-1, 0, 1}^d : ||k||^2 <= R}
of :func:`rspm_space` ``(d, norm2=R)``: same U, same m, same scale 2m/eps.
A separator example's loss depends on w_j alone, so its weight is exactly a cost
on the value of k_j (:class:`~oracledp.oracles._halfspace.Perturbation`): the
oracle needs no extra rows, and the points +-e_j need not be valid records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp._diagnostics import NonPrivateDiagnostics, check_diagnostics_flag
from oracledp._docstrings import fill_doc
from oracledp._validation import RandomLike, check_epsilon
from oracledp.learners._certify import ExactNoise, release_exact
from oracledp.oracles._base import Oracle
from oracledp.oracles._halfspace import HalfspaceProblem, Perturbation, two_sum
from oracledp.oracles._space import IntegerBall
from oracledp.privacy import _noise as noise
from oracledp.privacy._guarantees import PrivacyGuarantee

SOURCE = "Neel, Roth, Wu (FOCS 2019), RSPM (Section III.A), Theorem 6"


def rspm_space(d: int, norm2: float | None = None) -> IntegerBall:
    """W = {-1, 0, 1}^d, the RSPM parameter space of the ICML 2020 experiment; with ``norm2=R``
    its subset ``{k in {-1, 0, 1}^d : ||k||^2 <= R}`` (at most R nonzero entries).

    Every subset of the box keeps the separator set {+-e_j} and the scale 2m/eps (a class
    that U separates stays separated when points are removed; docs/proofs/rspm-shift.md).

    >>> from oracledp.learners import rspm_space
    >>> rspm_space(5).size(), rspm_space(5, norm2=2).size()  # 3^5; 1 + 5*2 + 10*4
    (243, 51)
    """
    if norm2 is None:
        return IntegerBall(d, bound=1, radius=float(np.sqrt(d)))
    return IntegerBall(d, bound=1, radius=float(np.sqrt(norm2)))


def rspm_scale(epsilon: float, m: int) -> float:
    """Laplace scale 2m/eps of the separator weights (Theorem 6)."""
    return 2.0 * m / check_epsilon(epsilon)


def separator_patterns(K: NDArray[np.integer]) -> NDArray[np.int8]:
    """Losses of the 2d separator examples for each row of K (k in {-1,0,1}^d).

    Columns 0..d-1: (e_j, +1), loss 1[k_j <= 0]; columns d..2d-1: (-e_j, +1),
    loss 1[k_j >= 0].  Shape (len(K), 2d).
    """
    K = np.atleast_2d(np.asarray(K))
    return np.hstack([(K <= 0), (K >= 0)]).astype(np.int8)


def rspm_perturbation(space: IntegerBall, eta: NDArray[np.floating]) -> Perturbation:
    """The separator weights eta (length 2d) as per-coordinate value costs.

    Exact: the cost of ``k_j = 0`` is the real sum ``eta_j + eta_{d+j}``, stored as its
    float plus an exact residual (:func:`~oracledp.oracles._halfspace.two_sum`).
    """
    d = space.d
    eta = np.asarray(eta, dtype=np.float64)
    if eta.shape != (2 * d,):
        raise ValueError(f"eta must have shape ({2 * d},), got {eta.shape}")
    if not np.isfinite(eta).all():
        raise ValueError("eta must be finite (no NaN or infinity)")
    plus, minus = eta[:d], eta[d:]
    # the cost of k_j = 0 is eta_j + eta_{d+j} exactly: its float rounding goes in the
    # residual table, so the oracles' exact tie decisions use the real sum
    both, both_residual = two_sum(plus, minus)
    value_cost = np.column_stack([plus, both, minus])  # k_j = -1, 0, +1
    residual = np.column_stack([np.zeros(d), both_residual, np.zeros(d)])
    return Perturbation(value_cost=value_cost, norm_cost=np.zeros(space.k_norm2_max + 1),
                        value_cost_residual=residual)


def rspm_guarantee(epsilon: float) -> PrivacyGuarantee:
    return PrivacyGuarantee.pure(
        check_epsilon(epsilon), source=SOURCE, requires_exact_oracle=True,
        notes="holds only if the weighted oracle returns the exact minimizer (certified)")


@dataclass(frozen=True)
class RSPMResult:
    """Output of :func:`rspm`: the released vector and what the guarantee covers.

    ``w`` is the released parameter vector, ``scale`` the Laplace scale 2m/eps and
    ``m`` the separator size (public).  The oracle's record (training loss, objective,
    bound, status, wall time) and the timings are in ``diagnostics`` only with
    ``return_diagnostics=True`` (see :class:`~oracledp._diagnostics.NonPrivateDiagnostics`).
    """

    w: NDArray[np.float64]
    guarantee: PrivacyGuarantee
    scale: float
    m: int
    diagnostics: NonPrivateDiagnostics | None = field(default=None, repr=False)
    certified: bool = True
    """Whether the oracle certified the released answer optimal (see :class:`OPDiscResult`)."""


def separator_noise(mechanism: str, key: str, space: IntegerBall,
                    draw: Any, paper_reason: str | None = None) -> ExactNoise:
    """The noise of RSPM and Gaussian RSPM: ``draw(rng)`` gives the 2d separator weights, which
    the weighted oracle reads as value costs (:func:`rspm_perturbation`, which also checks a
    caller-supplied vector)."""
    return ExactNoise(mechanism, key, draw, perturbation=lambda eta: rspm_perturbation(space, eta),
                      weighted=True, paper_reason=paper_reason)


def _check_space(problem: Any) -> None:
    if not isinstance(problem, HalfspaceProblem):
        raise TypeError("problem must be a HalfspaceProblem over rspm_space(d)")
    sp = problem.space
    if sp.k_max != 1 or sp.tau != 1.0:
        raise ValueError(
            "RSPM's separator set {+-e_j} is for subsets of {-1, 0, 1}^d: build the problem "
            f"with rspm_space(d) or rspm_space(d, norm2=R), got {sp}"
        )


@fill_doc
def rspm(
    problem: HalfspaceProblem,
    epsilon: float,
    *,
    oracle: str | Oracle = "highs",
    random_state: RandomLike = None,
    allow_uncertified: bool = False,
    eta: NDArray[np.floating] | None = None,
    return_diagnostics: bool = False,
    **oracle_options: Any,
) -> RSPMResult:
    """Run Laplace RSPM once on 0/1-loss halfspaces over {-1, 0, 1}^d (or a subset of it).

    Privacy: ``epsilon``-DP (pure, fixed in advance) for replace-one neighbours (Neel, Roth,
    Wu, FOCS 2019, Section III.A, Theorem 6), *provided the oracle returns the exact
    minimizer* of the perturbed objective: an uncertified answer raises
    :class:`~oracledp._errors.OracleFailure` (or is released with ``guarantee.holds = False``
    under ``allow_uncertified=True``).  The ``m = 2d`` separator weights are Laplace with scale
    :func:`rspm_scale` ``= 2m / epsilon``, drawn by :func:`oracledp.privacy._noise.laplace`
    (spec ``docs/specs/oracle-query.md`` section 3).

    Parameters
    ----------
    problem:
        A :class:`~oracledp.oracles.HalfspaceProblem` built with :func:`rspm_space`
        (the box, or its subset ``||k||^2 <= R`` with ``norm2=R``).
    epsilon:
        Target eps > 0 (pure DP).
    oracle:
        Weighted-oracle backend name or instance (``highs``: exact tabular
        decomposition; ``brute``: enumeration).  The monolithic backends take
        OPDisc's noise only and are refused here.
    %(exact_random_state)s
    %(exact_allow_uncertified)s
    %(exact_eta_separators)s
    return_diagnostics:
        Attach :class:`~oracledp._diagnostics.NonPrivateDiagnostics` (``oracle``: the
        oracle's record; ``timings``).  For research only: issues a
        :class:`~oracledp._errors.DiagnosticsWarning` and sets
        ``guarantee.diagnostics_released``.

    Privacy
    -------
    eps-DP (pure), replace-one neighbours, Theorem 6 of Neel, Roth, Wu (FOCS 2019);
    requires an exact oracle: uncertified answers raise :class:`OracleFailure`.

    Examples
    --------
    Four labelled records in the plane, W = {-1, 0, 1}^2, the exact brute-force oracle:

    >>> import numpy as np
    >>> from oracledp.learners import rspm, rspm_space
    >>> from oracledp.oracles import HalfspaceProblem
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]])
    >>> problem = HalfspaceProblem.from_data(X, [1, -1, 1, -1], rspm_space(2))
    >>> res = rspm(problem, 1.0, oracle="brute", random_state=0)
    >>> res.w.tolist(), res.m, res.scale
    ([1.0, 0.0], 4, 8.0)
    >>> res.guarantee.describe().split(";")[0]
    '1-DP (pure), replace-one neighbours'
    """
    want_diag = check_diagnostics_flag(return_diagnostics)
    _check_space(problem)
    guarantee = rspm_guarantee(epsilon)
    m = 2 * problem.d
    scale = rspm_scale(epsilon, m)
    rel = release_exact(
        problem, guarantee,
        separator_noise("RSPM", "rspm", problem.space,
                        lambda rng: noise.laplace(rng, scale, size=m)),
        oracle=oracle, oracle_options=oracle_options, random_state=random_state,
        allow_uncertified=allow_uncertified, eta=eta, want_diagnostics=want_diag)
    return RSPMResult(w=np.array(rel.point, dtype=np.float64), guarantee=rel.guarantee,
                      scale=scale, m=m, diagnostics=rel.diagnostics, certified=rel.certified)


def _rspm_sample_explicit(data_loss: NDArray[np.floating], patterns: NDArray[np.integer],
                          epsilon: float, size: int, rng: np.random.Generator, *,
                          scale_factor: float = 1.0) -> NDArray[np.int64]:
    """RSPM over an explicit finite class, vectorized over ``size`` noise draws.

    ``data_loss[q]`` is the (unnormalized) data loss of hypothesis q and
    ``patterns[q, i]`` its loss on separator example u_i (m = patterns.shape[1]).
    Returns the index of the argmin for each draw.  ``scale_factor`` plants a bug
    for the audits' meta-tests.  For tests and audits only.
    """
    patterns = np.asarray(patterns, dtype=np.float64)
    m = patterns.shape[1]
    etas = noise.laplace(rng, scale_factor * rspm_scale(epsilon, m), size=(size, m))
    return (np.asarray(data_loss, dtype=np.float64)[None, :] + etas @ patterns.T).argmin(axis=1)


def _rspm_sample_k(problem: HalfspaceProblem, epsilon: float, size: int,
                   rng: np.random.Generator, *, scale_factor: float = 1.0) -> NDArray[np.int64]:
    """``size`` independent RSPM outputs (integer k) by enumeration of W, for tiny d."""
    from oracledp.oracles._brute import BruteForceOracle

    _check_space(problem)
    K, loss, _ = BruteForceOracle()._tables(problem)
    idx = _rspm_sample_explicit(loss, separator_patterns(K), epsilon, size, rng,
                                scale_factor=scale_factor)
    return K[idx]
