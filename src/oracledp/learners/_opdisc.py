"""OPDisc: objective perturbation over a discrete space (Neel, Roth, Vietri, Wu, ICML 2020).

Algorithm 1: draw eta ~ N(0, sigma^2 I_{d+1}) and output the exact minimizer of
L(D, w) - <eta, pi(w)> over the tau-separated space W_tau (one call to a
normalized linear optimization oracle, Definition 2.2).

The calibration is proven here, not taken from Theorem 1
-------------------------------------------------------
Theorem 1 sets sigma = 7 G D^2 sqrt(ln(1/delta)) / (tau eps) and claims
(eps, delta)-DP.  Its proof is wrong for wide W, and so is the claim: the chain
(3)-(5) removes one bad set of noise from every output at once, but Lemma 3's
set depends on the output w, and the argmin picks the w whose bad event is most
likely.  The exact output law of the "checkerboard torus" (hypercube for N = 2)
violates (eps, delta) at the paper's sigma, e.g. realized delta 0.21 at
(2.3, 0.1) with d = 14 (:mod:`oracledp.audit._opdisc_exact`).

What we ship (proof: ``docs/proofs/opdisc-calibration.md``; code:
:mod:`oracledp.learners._opdisc_calibration`): sigma = m c / eps with Lemma 4's
shift c = 4 G D^2 / tau (the printed 2 G D^2 / tau is too small) and the smallest
m whose proven bound on delta,
``int_{t0}^inf a e^{eps - a t - a^2/2} min(1, hemisphere chi_{d+1}, |W| Phi-bar(t)) dt``
(a = eps/m, t0 = m - eps/(2m)), is at most delta.  It holds for every eps > 0
(no eps <= ln(1/delta) range is needed).  Relative to Theorem 1's sigma it is
0.79-0.95 at d = 8 and 1.03-1.20 on Adult (d = 23, delta = 1/n^2).

Privacy: (eps, delta)-DP for replace-one neighbours **provided the oracle returns
the exact minimizer**.  An oracle answer that is not certified optimal is never
released by default (:class:`~oracledp._errors.OracleFailure`);
``allow_uncertified=True`` returns it with a guarantee marked as not holding.

``calibration="paper"`` uses Theorem 1's sigma, for reproducing the paper only:
the result's guarantee has ``holds=False`` and a :class:`PrivacyWarning` is
issued.  It keeps the range eps <= ln(1/delta) where Lemma 3 itself (one fixed
w) holds (:func:`check_opdisc_range`); the authors' public code used half of
that sigma, which nothing covers.  A caller-supplied noise vector (``eta=``, a
test hook) likewise carries a guarantee that does not hold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from oracledp._diagnostics import NonPrivateDiagnostics, check_diagnostics_flag
from oracledp._docstrings import fill_doc
from oracledp._validation import RandomLike, check_delta, check_epsilon
from oracledp.learners._calibration import calibrated_guarantee
from oracledp.learners._certify import ExactNoise, release_exact
from oracledp.learners._opdisc_calibration import (
    PROOF,
    Calibration,
    OPDiscCalibration,
    calibrate,
)
from oracledp.oracles._base import Oracle
from oracledp.privacy import _noise as noise
from oracledp.privacy._guarantees import PrivacyGuarantee

SOURCE = ("Neel, Roth, Vietri, Wu (ICML 2020), Algorithm 1 OPDisc, with the noise "
          f"calibration proven in {PROOF} (not Theorem 1's sigma)")
SOURCE_PAPER = "Neel, Roth, Vietri, Wu (ICML 2020), Algorithm 1 OPDisc, Theorem 1's sigma"
PAPER_SIGMA_REASON = (
    "Theorem 1's sigma is not proven private (its proof removes one bad set of noise for all "
    f"outputs; exact counterexamples for wide W, see {PROOF}); "
    "calibration='paper' is for reproducing the paper only")


class DiscreteProblem(Protocol):
    """What OPDisc needs from a problem: the space W_tau and the loss's Lipschitz constant."""

    @property
    def space(self) -> Any: ...  # has .tau, .max_norm, .d (and .size() for the union bound)

    @property
    def lipschitz(self) -> float: ...


def opdisc_max_epsilon(delta: float) -> float:
    """Largest eps for the *paper's* calibration at this delta: ln(1/delta).

    Only ``calibration='paper'`` is limited to it: there Lemma 3's single-w step,
    Pr[eta in C] = Phi-bar(t) with t = (7/4) sqrt(L) - (2/7) eps / sqrt(L), L = ln(1/delta),
    needs eps small against L (eps <= L gives t > sqrt(2L), so Phi-bar(t) <= delta / 2).
    The proven calibration holds for every eps.
    """
    return -math.log(check_delta(delta))


def check_opdisc_range(epsilon: float, delta: float) -> tuple[float, float]:
    """Validate (eps, delta) for ``calibration='paper'``: refuse eps > ln(1/delta).

    Raises ``ValueError`` (``TypeError`` for non-numbers); draws nothing.
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    limit = opdisc_max_epsilon(dlt)
    if eps > limit:
        small = math.exp(-eps)
        small_txt = f"{small:.3g}" if small > 0 else f"exp(-{eps:g}), below the smallest float"
        raise ValueError(
            f"OPDisc with calibration='paper': epsilon={eps:g} with delta={dlt:g} is outside "
            f"the range where even Lemma 3 of Theorem 1 (one fixed w) holds: it needs "
            f"epsilon <= ln(1/delta) = {limit:.6g}, i.e. delta <= {small_txt}.  The proven "
            "calibration (the default) has no such range."
        )
    return eps, dlt


def opdisc_calibration(epsilon: float, delta: float, problem: DiscreteProblem, *,
                       calibration: Calibration = "proven") -> OPDiscCalibration:
    """sigma and what it rests on, from public parameters only (no data, no randomness).

    ``calibration='proven'`` (default): the smallest multiplier m with a proven delta
    bound (:mod:`oracledp.learners._opdisc_calibration`).  ``'paper'``: Theorem 1's, which
    is not private for wide W (refused outside eps <= ln(1/delta)).
    """
    _check_problem(problem)
    if calibration == "paper":
        check_opdisc_range(epsilon, delta)
    return calibrate(epsilon, delta, problem.space, problem.lipschitz, calibration)


def opdisc_sigma(epsilon: float, delta: float, problem: DiscreteProblem, *legacy: Any,
                 calibration: Calibration = "proven") -> float:
    """OPDisc's noise scale sigma = m c / eps (see :func:`opdisc_calibration`).

    The former signature ``opdisc_sigma(eps, delta, G, D, tau)`` (Theorem 1's sigma from
    the constants alone) is refused with a ``TypeError``: the proven calibration also needs
    the space's dimension and size, and Theorem 1's sigma is not private for wide W.
    """
    if legacy or isinstance(problem, (int, float)):
        raise TypeError(
            "opdisc_sigma(epsilon, delta, problem): pass the problem (its space gives d, |W|, "
            "D and tau). The former opdisc_sigma(eps, delta, G, D, tau) returned Theorem 1's "
            "sigma, which is not private for wide W (docs/proofs/opdisc-calibration.md); "
            "calibration='paper' reproduces it, with a guarantee that does not hold.")
    return opdisc_calibration(epsilon, delta, problem, calibration=calibration).sigma


def opdisc_guarantee(cal: OPDiscCalibration) -> PrivacyGuarantee:
    """The (eps, delta)-DP statement of a run with calibration ``cal``.

    It holds only for ``method='proven'`` (and only with an exact oracle); the
    paper's calibration gives a guarantee marked as not holding.
    """
    return calibrated_guarantee(
        cal, source=SOURCE, source_paper=SOURCE_PAPER,
        notes="holds only if the oracle returns the exact minimizer (certified)",
        paper_reason=PAPER_SIGMA_REASON)


def opdisc_noise(cal: OPDiscCalibration) -> ExactNoise:
    """OPDisc's noise: ``eta ~ N(0, sigma^2 I_{d+1})``, added to the objective as
    ``-<eta, pi(w)>`` (the oracle takes eta itself)."""
    size = cal.d + 1

    def check_eta(eta: Any) -> NDArray[np.float64]:
        eta = np.asarray(eta, dtype=np.float64)
        if eta.shape != (size,):
            raise ValueError(f"eta must have shape ({size},), got {eta.shape}")
        if not np.isfinite(eta).all():
            raise ValueError("eta must be finite (no NaN or infinity)")
        return eta

    return ExactNoise("OPDisc", "opdisc", lambda rng: noise.gaussian(rng, cal.sigma, size=size),
                      check_eta=check_eta,
                      paper_reason=PAPER_SIGMA_REASON if cal.method == "paper" else None)


@dataclass(frozen=True)
class OPDiscResult:
    """Output of :func:`opdisc`: the released vector and what the guarantee covers.

    ``w`` is the released parameter vector, ``guarantee`` its privacy statement and
    ``sigma`` the noise scale (a function of public parameters).  The oracle's record
    (training loss of w, objective, bound, gap, status, wall time) and the timings
    read the data: they are in ``diagnostics`` (a
    :class:`~oracledp._diagnostics.NonPrivateDiagnostics` with entries ``oracle``, the
    :class:`~oracledp.oracles.OracleResult`, and ``timings``) only when the caller
    passed ``return_diagnostics=True``; otherwise ``diagnostics`` is None.
    """

    w: NDArray[np.float64]
    guarantee: PrivacyGuarantee
    sigma: float
    diagnostics: NonPrivateDiagnostics | None = field(default=None, repr=False)
    calibration: OPDiscCalibration | None = field(default=None, repr=False)
    """How sigma was chosen (public parameters only): multiplier, proven delta bound, bound used."""
    certified: bool = True
    """Whether the oracle certified the released answer optimal.  Uncertified answers are
    refused unless ``allow_uncertified=True``, which also marks the guarantee as not holding,
    so this says nothing beyond ``guarantee``.  The guarantee holds only if ``certified``
    and the calibration is the proven one and the noise was drawn by the mechanism:
    read ``guarantee.holds``."""


def _check_problem(problem: Any) -> None:
    for attr in ("space", "lipschitz"):
        if not hasattr(problem, attr):
            raise TypeError(f"problem must provide .{attr} (e.g. a HalfspaceProblem)")


@fill_doc
def opdisc(
    problem: DiscreteProblem,
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
) -> OPDiscResult:
    """Run OPDisc once (Neel, Roth, Vietri, Wu, ICML 2020, Algorithm 1).

    Privacy: ``(epsilon, delta)``-DP (approximate, fixed in advance, not ex-post) for
    replace-one neighbours, *provided the oracle returns the exact minimizer*: an answer
    without a certificate raises :class:`~oracledp._errors.OracleFailure` (or, with
    ``allow_uncertified=True``, is released with ``guarantee.holds = False``).  The noise is
    ``eta ~ N(0, sigma^2 I)`` drawn by :func:`oracledp.privacy._noise.gaussian`, with sigma from
    :func:`opdisc_sigma`: the bound proven in ``docs/proofs/opdisc-calibration.md`` (the
    paper's Theorem 1 sigma is not private for wide W).  The result carries the
    :class:`~oracledp.privacy._guarantees.PrivacyGuarantee`.

    Parameters
    ----------
    problem:
        A discrete problem, e.g. :class:`~oracledp.oracles.HalfspaceProblem`
        (0/1 loss, G = 1/tau).
    %(exact_epsilon_delta)s
    oracle:
        Oracle name (see :func:`~oracledp.oracles.available_oracles`) or instance.
    %(exact_random_state)s
    %(exact_allow_uncertified)s
    calibration:
        ``"proven"`` (default): sigma from the bound proven in
        ``docs/proofs/opdisc-calibration.md``.  ``"paper"``: Theorem 1's sigma, for
        reproducing the paper only; NOT private for wide W: the guarantee has
        ``holds=False`` and a :class:`~oracledp._errors.PrivacyWarning` is issued.
    eta:
        Test hook: use this noise vector instead of sampling one.  The result's
        guarantee then does not hold (the noise was not drawn by the mechanism).
    return_diagnostics:
        Attach :class:`~oracledp._diagnostics.NonPrivateDiagnostics` (the oracle's
        record: training loss of w, objective, bound, status, wall time; timings).
        For research only: issues a :class:`~oracledp._errors.DiagnosticsWarning` and
        sets ``guarantee.diagnostics_released``; the diagnostics are not private.

    Privacy
    -------
    (eps, delta)-DP, replace-one neighbours, with the calibration proven in
    ``docs/proofs/opdisc-calibration.md`` (Algorithm 1 of Neel et al., ICML 2020, with a
    larger or smaller sigma than Theorem 1's, depending on d and |W|); requires an exact
    oracle: uncertified answers raise :class:`OracleFailure`.  ``guarantee.calibration``
    records the multiplier, the proven delta bound and the bound used.  The result holds
    only ``w``, ``sigma``, the calibration and the guarantee unless
    ``return_diagnostics=True``.

    Examples
    --------
    Four labelled records in the plane, W = {-1, 0, 1}^2, the exact brute-force oracle:

    >>> import numpy as np
    >>> from oracledp.learners import opdisc
    >>> from oracledp.oracles import HalfspaceProblem, IntegerBall
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]])
    >>> problem = HalfspaceProblem.from_data(X, [1, -1, 1, -1], IntegerBall(2))
    >>> res = opdisc(problem, 1.0, 1e-3, oracle="brute", random_state=0)
    >>> res.w.tolist(), res.certified
    ([1.0, 0.0], True)
    >>> res.guarantee.epsilon, res.guarantee.delta, res.guarantee.holds
    (1.0, 0.001, True)
    """
    want_diag = check_diagnostics_flag(return_diagnostics)
    _check_problem(problem)
    # validates eps, delta (and the paper's range) before anything else; reads no data
    cal = opdisc_calibration(epsilon, delta, problem, calibration=calibration)
    rel = release_exact(problem, opdisc_guarantee(cal), opdisc_noise(cal), oracle=oracle,
                        oracle_options=oracle_options, random_state=random_state,
                        allow_uncertified=allow_uncertified, eta=eta,
                        want_diagnostics=want_diag)
    return OPDiscResult(w=np.array(rel.point, dtype=np.float64), guarantee=rel.guarantee,
                        sigma=cal.sigma, diagnostics=rel.diagnostics, calibration=cal,
                        certified=rel.certified)


def _opdisc_sample_k(
    problem: Any,
    epsilon: float,
    delta: float,
    size: int,
    rng: np.random.Generator,
    *,
    sigma_scale: float = 1.0,
    calibration: Calibration = "proven",
) -> NDArray[np.int64]:
    """``size`` independent OPDisc outputs (integer coordinates) with the brute-force oracle.

    Vectorized over noise draws, for audits and exact-law tests.  ``sigma_scale``
    plants a bug (e.g. 0.5 = half the noise) for the audits' meta-tests.
    """
    from oracledp.oracles._brute import BruteForceOracle

    space = problem.space
    sigma = sigma_scale * opdisc_sigma(epsilon, delta, problem, calibration=calibration)
    etas = noise.gaussian(rng, sigma, size=(size, space.d + 1))
    return BruteForceOracle().solve_batch(problem, etas)
