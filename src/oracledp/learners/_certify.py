"""The one rule for releasing an oracle answer under an exact-oracle proof, and the one path
of the exact learners.

* :func:`guarantee_for_release` / :func:`solve_and_release`: an answer without a certificate
  is never released under the proof (every exact-oracle mechanism, RSPM over query classes
  included).
* :func:`release_exact`: perturb -> solve -> certify -> release, the whole run of OPDisc,
  RSPM and Gaussian RSPM after their calibration.  Each model passes only what differs, its
  noise (:class:`ExactNoise`: the calibrated draw and how the oracle reads it) and its
  guarantee.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from oracledp._diagnostics import NonPrivateDiagnostics, release_diagnostics
from oracledp._errors import OracleFailure, PrivacyWarning
from oracledp._validation import RandomLike, check_rng
from oracledp.oracles._base import Oracle
from oracledp.oracles._registry import make_oracle
from oracledp.privacy._guarantees import PrivacyGuarantee

CALLER_NOISE_REASON = "the noise vector was supplied by the caller (eta=), not drawn"

#: The backends that take OPDisc's noise only (no separator weights).
_UNWEIGHTED_BACKENDS = ("highs-monolithic", "cpsat")


def _point(result: Any) -> Any:
    """The answer of an OracleResult (``solution``) or of a class oracle (``params``)."""
    point = getattr(result, "solution", None)
    if point is None:  # query-class oracles call their point "params"
        point = getattr(result, "params", None)
    return point


def guarantee_for_release(result: Any, guarantee: PrivacyGuarantee,
                          allow_uncertified: bool, mechanism: str) -> PrivacyGuarantee:
    """The guarantee a release may carry, or OracleFailure if nothing may be released.

    ``result`` is an :class:`~oracledp.oracles.OracleResult` or a query-class
    oracle result (same fields, the point named ``params``).  A certified answer
    keeps ``guarantee``.  An uncertified one raises
    :class:`OracleFailure` (the proof needs the exact minimizer) unless the caller
    passed ``allow_uncertified=True`` and a point exists; then the guarantee is
    returned marked as not holding.
    """
    if result.certified:
        return guarantee
    # No objective, bound or gap in the message: they are functions of the private data.
    # An oracle's "reason" (e.g. the monolithic MIP's scale refusal) holds no numbers.
    reason = getattr(result, "info", {}).get("reason")
    fix = (f"{reason}." if reason else "Raise the time limit.")
    msg = (
        f"oracle {result.solver!r} did not certify an exact optimum; {mechanism}'s privacy "
        f"proof needs the exact minimizer, so nothing is released. {fix} Or pass "
        "allow_uncertified=True to get the answer with a guarantee marked as not holding. "
        "(That the oracle failed depends on the data: see the README's guarantee section.)"
    )
    if not allow_uncertified or _point(result) is None:
        raise OracleFailure(msg, result=result)
    return guarantee.not_holding("the oracle did not certify an exact optimum")


def check_oracle_accepts(oracle: Any, problem: Any, separable: bool) -> None:
    """Let an oracle refuse a problem it cannot take, before any noise is drawn.

    Oracles that can tell in advance (from public facts: the declared schema,
    the sizes) implement ``check_problem``; others are not asked.
    """
    check = getattr(oracle, "check_problem", None)
    if check is not None:
        check(problem, separable=separable)


class Release(NamedTuple):
    """What :func:`solve_and_release` lets a mechanism release from one exact-oracle call."""

    point: Any
    """The oracle's answer (``solution`` of an OracleResult, ``params`` of a class oracle's)."""
    certified: bool
    guarantee: PrivacyGuarantee
    diagnostics: NonPrivateDiagnostics | None


def solve_and_release(
    solve: Callable[[], Any], t0: float, guarantee: PrivacyGuarantee, *,
    allow_uncertified: bool, mechanism: str, key: str, want_diagnostics: bool,
    stacklevel: int = 3,
) -> Release:
    """Call the oracle (``solve()``, timed), then :func:`guarantee_for_release` and the opt-in
    diagnostics of an exact-oracle run.  ``stacklevel`` (for the diagnostics warning) counts
    from the caller of this function: 3 points at the mechanism's caller.

    ``t0`` is when the mechanism started drawing its noise.  Without ``want_diagnostics`` the
    oracle's record (loss, objective, bound, timings) stays here and is not returned.
    """
    t1 = time.perf_counter()
    result = solve()
    t2 = time.perf_counter()
    guarantee = guarantee_for_release(result, guarantee, allow_uncertified, mechanism)
    point = _point(result)
    assert point is not None  # guarantee_for_release refuses an answer without a point
    diagnostics = None
    if want_diagnostics:
        guarantee = release_diagnostics(guarantee, mechanism, stacklevel=stacklevel)
        diagnostics = NonPrivateDiagnostics(key, {
            "oracle": result,
            "timings": {"noise_s": t1 - t0, "oracle_s": t2 - t1, "total_s": t2 - t0},
        })
    return Release(point, bool(result.certified), guarantee, diagnostics)


def _as_given(eta: NDArray[np.float64]) -> NDArray[np.float64]:
    return eta


@dataclass(frozen=True)
class ExactNoise:
    """What an exact learner's noise is: the only part of the run that differs by model.

    ``draw(rng)`` draws the calibrated noise vector (the only randomness of the run);
    ``perturbation(eta)`` turns it into what the oracle's ``solve(problem, .)`` takes (for
    RSPM, the separator weights as value costs; it checks the shape and finiteness of eta);
    ``check_eta`` validates a caller-supplied vector before anything else (OPDisc), if set.
    ``weighted``: the noise weights separator examples, so the oracle must be a weighted one
    (not the monolithic backends).  ``paper_reason``: why ``calibration='paper'`` is not
    private, when the run uses it (a PrivacyWarning is then issued).
    """

    mechanism: str
    """The mechanism's name in messages (``"OPDisc"``, ``"RSPM"``, ``"Gaussian RSPM"``)."""
    key: str
    """The name of its non-private diagnostics."""
    draw: Callable[[np.random.Generator], NDArray[np.float64]]
    perturbation: Callable[[NDArray[np.float64]], Any] = _as_given
    check_eta: Callable[[Any], NDArray[np.float64]] | None = None
    weighted: bool = False
    paper_reason: str | None = None


def release_exact(
    problem: Any, guarantee: PrivacyGuarantee, noise: ExactNoise, *, oracle: str | Oracle,
    oracle_options: dict[str, Any], random_state: RandomLike, allow_uncertified: bool,
    eta: Any, want_diagnostics: bool,
) -> Release:
    """One run of an exact learner after its calibration: perturb -> solve -> certify ->
    release.

    In this order, all before the noise is drawn: the oracle (``oracle`` with
    ``oracle_options``; a weighted noise refuses the monolithic backends), which may refuse
    the problem from public facts (:func:`check_oracle_accepts`); ``random_state`` (type only);
    a caller-supplied ``eta`` (the test hook: ``noise.check_eta``, and the guarantee marked as
    not holding); the PrivacyWarning of ``calibration='paper'``.  Then the noise is drawn
    (unless given), turned into the oracle's perturbation, and one oracle call is released by
    :func:`solve_and_release` (OracleFailure for an uncertified answer unless
    ``allow_uncertified``).  Called by the mechanism itself: the warnings point at its caller.
    """
    orc = make_oracle(oracle, **oracle_options)
    if noise.weighted and getattr(orc, "name", "") in _UNWEIGHTED_BACKENDS:
        raise ValueError(f"{noise.mechanism} needs a weighted oracle: use solver 'highs' or "
                         "'brute'")
    check_oracle_accepts(orc, problem, separable=noise.weighted)
    rng = check_rng(random_state)
    if eta is not None:
        if noise.check_eta is not None:
            eta = noise.check_eta(eta)
        guarantee = guarantee.not_holding(CALLER_NOISE_REASON)
    if noise.paper_reason is not None:
        warnings.warn(
            f"{noise.mechanism} with calibration='paper': {noise.paper_reason}. The release "
            "carries NO differential privacy guarantee (guarantee.holds is False).",
            PrivacyWarning, stacklevel=3)
    t0 = time.perf_counter()
    if eta is None:
        eta = noise.draw(rng)
    pert = noise.perturbation(eta)
    return solve_and_release(lambda: orc.solve(problem, pert), t0, guarantee,
                             allow_uncertified=allow_uncertified, mechanism=noise.mechanism,
                             key=noise.key, want_diagnostics=want_diagnostics, stacklevel=4)
