"""The one rule for releasing an oracle answer under an exact-oracle proof."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

from oracledp._diagnostics import NonPrivateDiagnostics, release_diagnostics
from oracledp._errors import OracleFailure
from oracledp.privacy._guarantees import PrivacyGuarantee


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
) -> Release:
    """Call the oracle (``solve()``, timed), then :func:`guarantee_for_release` and the opt-in
    diagnostics of an exact-oracle run.

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
        guarantee = release_diagnostics(guarantee, mechanism, stacklevel=3)
        diagnostics = NonPrivateDiagnostics(key, {
            "oracle": result,
            "timings": {"noise_s": t1 - t0, "oracle_s": t2 - t1, "total_s": t2 - t0},
        })
    return Release(point, bool(result.certified), guarantee, diagnostics)
