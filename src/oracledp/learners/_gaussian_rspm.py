"""Gaussian RSPM (Neel, Roth, Wu, FOCS 2019, Theorem 7), with a calibration proven here.

RSPM (:mod:`oracledp.learners._rspm`) with Gaussian separator weights: draw
``eta ~ N(0, sigma^2 I_m)`` for the ``m = 2d`` separator examples (e_j, +1), (-e_j, +1) of
W = {-1, 0, 1}^d and make one call to an exact weighted oracle:

    w = argmin_w  sum_i loss_w(x_i, y_i)  +  sum_j eta_j loss_w(u_j).

The calibration is proven here, not taken from Theorem 7
--------------------------------------------------------
Theorem 7 claims (eps, delta)-DP with error ``O(m sqrt(m ln(m/beta) ln(1/delta)) / (eps n))``,
the rate of the Gaussian mechanism for one fixed shift of norm 2 sqrt(m):
``sigma = 2 sqrt(2 m ln(1.25/delta)) / eps`` (its Appendix B4 is not in our copy; this is
the calibration that rate corresponds to).  But the shift that undoes a replaced record,
``2 (1 - 2 pi(w_hat))``, depends on the released output, and the argmin picks the output
whose privacy loss is largest: the bad set of noise is output-dependent, the flaw of OPDisc's
Theorem 1.  On parities the exact output law violates (1, 0.1)-DP at that sigma (realized
delta 0.40 with m = 40; :mod:`oracledp.audit._gaussian_rspm_exact`).

What we ship (proof: ``docs/proofs/gaussian-rspm-calibration.md``; code:
:mod:`oracledp.learners._gaussian_rspm_calibration`): ``sigma = 2 sqrt(m) mu / eps`` with the
smallest mu whose proven delta bound,
``int_{t0}^inf a e^{eps - a t - a^2/2} min(1, |W| Phi-bar(t), P[chi_m > t], C(t)) dt``
(``a = eps / mu``, ``t0 = mu - eps / (2 mu)``, C a Chernoff bound of ``||Z||_1 / sqrt(m)``),
is at most delta.  It reads only public parameters: eps, delta, m = 2d and |W| = 3^d.

Privacy: (eps, delta)-DP for replace-one neighbours **provided the oracle returns the exact
minimizer**; an uncertified answer raises :class:`~oracledp._errors.OracleFailure` (or, with
``allow_uncertified=True``, is returned with a guarantee marked as not holding).
``calibration="paper"`` uses the Gaussian-mechanism sigma, for reproducing the paper only:
the guarantee has ``holds=False`` and a :class:`~oracledp._errors.PrivacyWarning` is issued.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp._diagnostics import NonPrivateDiagnostics, check_diagnostics_flag
from oracledp._docstrings import fill_doc
from oracledp._validation import RandomLike
from oracledp.learners._calibration import calibrated_guarantee
from oracledp.learners._certify import release_exact
from oracledp.learners._gaussian_rspm_calibration import (
    PROOF,
    Calibration,
    GaussianRSPMCalibration,
    calibrate,
)
from oracledp.learners._opdisc_calibration import space_size_bound
from oracledp.learners._rspm import _check_space, separator_noise
from oracledp.oracles._base import Oracle
from oracledp.oracles._halfspace import HalfspaceProblem
from oracledp.privacy import _noise as noise
from oracledp.privacy._guarantees import PrivacyGuarantee

SOURCE = ("Neel, Roth, Wu (FOCS 2019), Gaussian RSPM (Theorem 7's mechanism), with the noise "
          f"calibration proven in {PROOF} (not the Gaussian-mechanism sigma)")
SOURCE_PAPER = ("Neel, Roth, Wu (FOCS 2019), Gaussian RSPM with the Gaussian-mechanism sigma of "
                "Theorem 7's rate")
PAPER_SIGMA_REASON = (
    "the Gaussian-mechanism sigma of Theorem 7's rate is not private (the shift that undoes a "
    "replaced record depends on the released output; exact counterexample on parities, see "
    f"{PROOF}); calibration='paper' is for reproducing the paper only")


def gaussian_rspm_calibration(epsilon: float, delta: float, problem: HalfspaceProblem, *,
                              calibration: Calibration = "proven") -> GaussianRSPMCalibration:
    """sigma and what it rests on, from public parameters only: eps, delta, the separator
    size ``m = 2d`` and |W| of ``problem.space`` (no data, no randomness)."""
    _check_space(problem)
    size, how = space_size_bound(problem.space)
    return calibrate(epsilon, delta, 2 * problem.d, size, calibration, size_how=how)


def gaussian_rspm_guarantee(cal: GaussianRSPMCalibration) -> PrivacyGuarantee:
    """The (eps, delta)-DP statement of a run with calibration ``cal`` (holds only for
    ``method='proven'``, and only with an exact oracle)."""
    return calibrated_guarantee(
        cal, source=SOURCE, source_paper=SOURCE_PAPER,
        notes="holds only if the weighted oracle returns the exact minimizer (certified)",
        paper_reason=PAPER_SIGMA_REASON)


@dataclass(frozen=True)
class GaussianRSPMResult:
    """Output of :func:`gaussian_rspm`: the released vector and what the guarantee covers.

    ``w`` is the released parameter vector, ``sigma`` the standard deviation of the separator
    weights and ``m`` the separator size (both public); ``calibration`` records how sigma was
    chosen.  The oracle's record is in ``diagnostics`` only with ``return_diagnostics=True``.
    """

    w: NDArray[np.float64]
    guarantee: PrivacyGuarantee
    sigma: float
    m: int
    calibration: GaussianRSPMCalibration = field(repr=False)
    diagnostics: NonPrivateDiagnostics | None = field(default=None, repr=False)
    certified: bool = True
    """Whether the oracle certified the released answer optimal (see :class:`OPDiscResult`)."""


@fill_doc
def gaussian_rspm(
    problem: HalfspaceProblem,
    epsilon: float,
    delta: float,
    *,
    oracle: str | Oracle = "highs",
    random_state: RandomLike = None,
    allow_uncertified: bool = False,
    calibration: Calibration = "proven",
    eta: NDArray[np.floating] | None = None,
    return_diagnostics: bool = False,
    **oracle_options: Any,
) -> GaussianRSPMResult:
    """Run Gaussian RSPM once on 0/1-loss halfspaces over {-1, 0, 1}^d.

    Privacy: ``(epsilon, delta)``-DP (approximate, fixed in advance, not ex-post) for
    replace-one neighbours, *provided the oracle returns the exact minimizer*: an answer
    without a certificate raises :class:`~oracledp._errors.OracleFailure` (or, with
    ``allow_uncertified=True``, is released with ``guarantee.holds = False``).  The ``m = 2d``
    separator weights are ``N(0, sigma^2)``, drawn by :func:`oracledp.privacy._noise.gaussian`,
    with sigma from the bound proven in ``docs/proofs/gaussian-rspm-calibration.md`` (the
    Gaussian-mechanism sigma of Theorem 7's rate is not private).

    Parameters
    ----------
    problem:
        A :class:`~oracledp.oracles.HalfspaceProblem` built with
        :func:`~oracledp.learners.rspm_space`.
    %(exact_epsilon_delta)s
    oracle:
        Weighted-oracle backend name or instance (``highs``, ``brute``), as for
        :func:`~oracledp.learners.rspm`.
    %(exact_random_state)s
    %(exact_allow_uncertified)s
    calibration:
        ``"proven"`` (default) or ``"paper"`` (the Gaussian-mechanism sigma; NOT private:
        ``guarantee.holds`` is False and a PrivacyWarning is issued).
    %(exact_eta_separators)s
    return_diagnostics:
        Attach :class:`~oracledp._diagnostics.NonPrivateDiagnostics` (NOT private; issues a
        :class:`~oracledp._errors.DiagnosticsWarning`).

    Privacy
    -------
    (eps, delta)-DP, replace-one neighbours, with the calibration proven in
    ``docs/proofs/gaussian-rspm-calibration.md``; requires an exact oracle: uncertified
    answers raise :class:`OracleFailure`.  ``guarantee.calibration`` records m, |W|, mu,
    sigma and the proven delta bound.

    Examples
    --------
    >>> import numpy as np
    >>> from oracledp.learners import gaussian_rspm, rspm_space
    >>> from oracledp.oracles import HalfspaceProblem
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]])
    >>> problem = HalfspaceProblem.from_data(X, [1, -1, 1, -1], rspm_space(2))
    >>> res = gaussian_rspm(problem, 1.0, 1e-3, oracle="brute", random_state=0)
    >>> res.m, round(res.sigma, 2), res.guarantee.holds
    (4, 12.64, True)
    >>> res.guarantee.describe().split(";")[0]
    '(1, 0.001)-DP, replace-one neighbours'
    """
    want_diag = check_diagnostics_flag(return_diagnostics)
    _check_space(problem)
    # validates eps, delta and the calibration before anything else; reads no data
    cal = gaussian_rspm_calibration(epsilon, delta, problem, calibration=calibration)
    m = 2 * problem.d
    rel = release_exact(
        problem, gaussian_rspm_guarantee(cal),
        separator_noise("Gaussian RSPM", "gaussian_rspm", problem.space,
                        lambda rng: noise.gaussian(rng, cal.sigma, size=m),
                        paper_reason=PAPER_SIGMA_REASON if cal.method == "paper" else None),
        oracle=oracle, oracle_options=oracle_options, random_state=random_state,
        allow_uncertified=allow_uncertified, eta=eta, want_diagnostics=want_diag)
    return GaussianRSPMResult(w=np.array(rel.point, dtype=np.float64), guarantee=rel.guarantee,
                              sigma=cal.sigma, m=m, calibration=cal, diagnostics=rel.diagnostics,
                              certified=rel.certified)


def _gaussian_rspm_sample_explicit(data_loss: NDArray[np.floating],
                                   patterns: NDArray[np.integer], sigma: float, size: int,
                                   rng: np.random.Generator) -> NDArray[np.int64]:
    """Gaussian RSPM over an explicit finite class, vectorized over ``size`` noise draws.

    ``data_loss[q]`` is hypothesis q's data loss and ``patterns[q, i]`` its loss on separator
    example u_i.  Returns the argmin's index for each draw.  For tests and audits only.
    """
    patterns = np.asarray(patterns, dtype=np.float64)
    etas = noise.gaussian(rng, sigma, size=(size, patterns.shape[1]))
    return (np.asarray(data_loss, dtype=np.float64)[None, :] + etas @ patterns.T).argmin(axis=1)
