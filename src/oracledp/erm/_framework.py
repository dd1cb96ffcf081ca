"""The Accuracy First framework shared by CovNR, OutputNR and the DoublingMethod.

Ligett, Neel, Roth, Waggoner, Wu, "Accuracy First: Selecting a Differential
Privacy Level for Accuracy-Constrained ERM" (NeurIPS 2017).  OutputNR "follows
the same structure" as CovNR (Algorithm 3); what the algorithms share lives here:

* :class:`AccuracyFirstResult` (the released hypothesis with its ex-post loss,
  Definition 2.3) and :class:`NoHaltError` (the refusal to release theta*,
  whose loss is infinite, Theorems 3.2, 3.4, A.2);
* the block-wise InteractiveAboveThreshold search (:func:`_iat_search`,
  Algorithm 2) on the excess-risk queries, plain or through certified
  enclosures (:class:`_EnclosedExcess`);
* the public setup of a run (:class:`_Run`: levels, sensitivities, threshold; the levels
  of all three by :func:`_levels`; for CovNR / OutputNR built by :func:`_nr_run`, with
  IAT's ``eps_0``);
* the release gating and accounting of CovNR / OutputNR (:func:`_finish`,
  Lemma 2.8: ex-post loss ``eps_0 + eps_k``), the release of all three algorithms
  (:func:`_released_theta`: the hypothesis, or the refusal to release theta*;
  :func:`_result`) and the ex-post guarantee object (:func:`_ex_post_guarantee`);
* argument checks (:func:`_check_common`, :func:`_as_problem`) and the
  one-BLAS-thread context the algorithms run under.
"""

from __future__ import annotations

import dataclasses
import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray
from threadpoolctl import ThreadpoolController

from oracledp._diagnostics import (
    NonPrivateDiagnostics,
    check_diagnostics_flag,
    release_diagnostics,
)
from oracledp._errors import NoHaltError
from oracledp._validation import check_bool, check_positive
from oracledp.erm import _sensitivity as sens
from oracledp.erm._sensitivity import _check_gamma
from oracledp.erm._theory import cap_levels, check_theory_reachable, resolve_eps_grid
from oracledp.mechanisms import ExPostLoss, InteractiveAboveThreshold
from oracledp.privacy._guarantees import PrivacyGuarantee

__all__ = ["DEFAULT_LAMBDA", "AccuracyFirstResult", "NoHaltError"]

#: lambda of the paper's experiments (Appendix B.1).
DEFAULT_LAMBDA = 0.005


_blas_controller: ThreadpoolController | None = None


def _single_blas_thread() -> Any:
    """Context manager limiting BLAS/LAPACK to one thread.

    The algorithms run many small dense operations (37 x 37 eigendecompositions,
    thin matrix products); multithreaded BLAS only contends on those, badly so on a
    shared 2-core machine.  The controller is created once (scanning the loaded
    libraries costs about a millisecond) and the previous limits are restored on exit.
    """
    global _blas_controller
    if _blas_controller is None:
        _blas_controller = ThreadpoolController()
    return _blas_controller.limit(limits=1, user_api="blas")


@dataclass(frozen=True, eq=False)
class AccuracyFirstResult:
    """The output of one run of CovNR, OutputNR or the DoublingMethod.

    Attributes
    ----------
    theta:
        The released hypothesis (read-only): ``theta^k`` at the stopping index, or
        the non-private ``theta*`` when nothing passed (only with ``allow_no_halt``).
    stopping_index:
        0-based index into ``eps_grid`` of the level that passed, or None.
    ex_post:
        The realised ex-post loss with its breakdown: ``ex_post.epsilon_test``
        (InteractiveAboveThreshold's eps_0, or the doubling tests' total) and
        ``ex_post.epsilon_hypothesis`` (eps_k, or the doubling hypotheses' total).
    guarantee:
        The same loss as a :class:`PrivacyGuarantee` of kind ``EX_POST``;
        ``epsilon = inf`` and ``holds = False`` when theta* was released.
    eps_grid:
        The privacy levels searched (read-only).
    method:
        ``"covnr"``, ``"outputnr"``, ``"doubling-covpert"`` or ``"doubling-outpert"``.
    alpha, gamma, lam, n, p:
        The public parameters of the run.
    query_sensitivity:
        Delta of the excess-risk queries (Claim A.5 or A.12).
    hypothesis_sensitivity:
        l1 sensitivity of the perturbed statistic (Lemma A.6: 2 for each of
        ``X^T X`` and ``X^T y``; Lemma A.10: ``2 sqrt(p) / (n lambda)`` for theta*).
    threshold:
        The public test threshold, ``-alpha/2``.
    calibration:
        How InteractiveAboveThreshold's epsilon was set (``"paper"`` or
        ``"one-sided"``, see :func:`oracledp.erm._sensitivity.iat_epsilon`);
        ``"paper"`` for the DoublingMethod (Theorem A.2's test scale).
    diagnostics:
        None unless the caller passed ``return_diagnostics=True``; then a
        :class:`~oracledp._diagnostics.NonPrivateDiagnostics` with ``excess_risk``
        (``L(theta) - L(theta*)`` on the training data: it reads the data exactly)
        and ``timings`` (wall-clock seconds: ``setup``, ``noise``, ``search``,
        ``total``).  NOT covered by the guarantee; never publish it with the model.
    """

    theta: NDArray[np.float64]
    stopping_index: int | None
    ex_post: ExPostLoss
    guarantee: PrivacyGuarantee
    eps_grid: NDArray[np.float64]
    method: str
    alpha: float
    gamma: float
    lam: float
    n: int
    p: int
    query_sensitivity: float
    hypothesis_sensitivity: float
    threshold: float
    calibration: str = "paper"
    diagnostics: NonPrivateDiagnostics | None = field(default=None, repr=False)

    @property
    def halted(self) -> bool:
        return self.stopping_index is not None

    @property
    def epsilon(self) -> float:
        """The realised ex-post loss (inf when theta* was released)."""
        return self.ex_post.epsilon

    @property
    def epsilon_test(self) -> float:
        return self.ex_post.epsilon_test

    @property
    def epsilon_hypothesis(self) -> float:
        return self.ex_post.epsilon_hypothesis

    def summary(self) -> dict[str, Any]:
        """A JSON-friendly record of the run (without theta).

        ``excess_risk`` and ``timings`` appear only when the run carries its
        (non-private) diagnostics.
        """
        out = {
            "method": self.method,
            "alpha": self.alpha,
            "gamma": self.gamma,
            "lam": self.lam,
            "n": self.n,
            "p": self.p,
            "T": int(self.eps_grid.size),
            "stopping_index": self.stopping_index,
            "epsilon": self.epsilon,
            "epsilon_test": self.epsilon_test,
            "epsilon_hypothesis": self.epsilon_hypothesis,
            "guarantee_holds": self.guarantee.holds,
            "calibration": self.calibration,
            "theta_norm": float(np.linalg.norm(self.theta)),
        }
        if self.diagnostics is not None:
            out["excess_risk"] = self.diagnostics["excess_risk"]
            out["timings"] = dict(self.diagnostics["timings"])
        return out


def _check_block(block_size: object) -> int:
    if isinstance(block_size, bool) or not isinstance(block_size, numbers.Integral):
        raise TypeError(f"block_size must be an int, got {type(block_size).__name__}")
    if int(block_size) < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    return int(block_size)


def _check_lam_for_problem(lam: object, problem_lam: float) -> None:
    if lam is not None and check_positive(lam, "lam") != problem_lam:
        raise ValueError(
            f"lam={lam!r} differs from the prepared problem's lambda {problem_lam!r}; "
            "pass lam=None with a prepared problem"
        )


@dataclass(frozen=True)
class _EnclosedExcess:
    """The excess risks ``L(theta^t) - L(theta*)`` of all levels, known through certified bounds.

    ``lower[t] <= exact([t])[0] <= upper[t]``; ``exact(idx)`` computes the excess risks
    of the levels ``idx`` (a pass over the data).  Called like the plain
    ``excess(start, stop)`` of :func:`_iat_search`.  ``exact`` must be batch-invariant
    (a level's value may not depend on the other levels asked with it, as
    :meth:`~oracledp.erm.LogisticProblem.excess_risk` guarantees): only then are the
    answers those of testing ``exact`` on every level, bit for bit.
    """

    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    exact: Callable[[NDArray[np.intp]], NDArray[np.float64]]

    def __call__(self, start: int, stop: int) -> NDArray[np.float64]:
        return self.exact(np.arange(start, stop))


def _iat_search(
    iat: InteractiveAboveThreshold,
    excess: Callable[[int, int], NDArray[np.float64]] | _EnclosedExcess,
    T: int,
    block_size: int,
) -> int | None:
    """Ask IAT the queries ``f^t = L(theta*) - L(theta^t) = -excess(t)`` in blocks; the halting index.

    ``excess(start, stop)`` returns ``L(theta^t) - L(theta*)`` for levels
    ``start..stop-1``.  Blocks are answered with ``first_above`` (same law as
    asking one at a time); levels after the halt are computed in the last block
    but never queried or released.  An :class:`_EnclosedExcess` is answered with
    ``first_above_enclosed`` (same answers and noise as ``first_above`` on the exact
    values), which computes only the levels whose test its bounds leave open.
    """
    start = 0
    while start < T:
        stop = min(T, start + block_size)
        if isinstance(excess, _EnclosedExcess):
            # f^t = -excess, so its enclosure is [-upper, -lower]
            k = iat.first_above_enclosed(
                -excess.upper[start:stop],
                -excess.lower[start:stop],
                lambda idx, s=start: -excess.exact(s + idx),
            )
        else:
            k = iat.first_above(-excess(start, stop))
        if k is not None:
            return start + k
        start = stop
    return None


def _ex_post_guarantee(
    ex: ExPostLoss,
    *,
    extra_notes: str,
    released_theta_star: bool,
    statement: str | None = None,
) -> PrivacyGuarantee:
    """The ex-post loss as a PrivacyGuarantee of kind EX_POST (not holding if theta* was released)."""
    g = PrivacyGuarantee.ex_post(
        ex.epsilon,
        source=ex.source,
        notes=f"{ex.statement if statement is None else statement} {extra_notes}",
    )
    if released_theta_star:
        g = g.not_holding(
            "no level passed the accuracy test and the non-private optimum theta* was released "
            "(allow_no_halt=True): infinite ex-post loss"
        )
    return g


_PUBLIC_NOTE = (
    "n, p, lambda, alpha, gamma and the epsilon grid are treated as public. Data domain: "
    "||x_i||_1 <= 1 and {y}. Idealized numerics (exact real arithmetic for the noise and the "
    "optimisation)."
)


class _Problem(Protocol):
    """What the release needs of a RidgeProblem / LogisticProblem."""

    n: int
    p: int
    lam: float
    theta_star: NDArray[np.float64]

    def excess_risk(self, thetas: ArrayLike) -> NDArray[np.float64]: ...


def _as_problem(cls: Any, X: Any, y: Any, lam: Any) -> Any:
    """``X`` itself if it is a prepared ``cls`` (then ``y`` must be None and ``lam`` None or its
    lambda), else ``cls.from_data(X, y, lam)`` (lambda 0.005 by default, Appendix B.1)."""
    if isinstance(X, cls):
        if y is not None:
            raise ValueError(f"pass y=None together with a prepared {cls.__name__}")
        _check_lam_for_problem(lam, X.lam)
        return X
    return cls.from_data(X, y, DEFAULT_LAMBDA if lam is None else lam)


def _check_common(
    alpha: object, gamma: object, allow_no_halt: object, return_diagnostics: object
) -> tuple[float, float, bool, bool]:
    """``(alpha, gamma, allow_no_halt, return_diagnostics)`` checked, in this order (alpha > 0,
    gamma in (0, 1), two bools); the first checks of every algorithm, before any randomness."""
    return (
        check_positive(alpha, "alpha"),
        _check_gamma(gamma),
        check_bool(allow_no_halt, "allow_no_halt"),
        check_diagnostics_flag(return_diagnostics),
    )


@dataclass(frozen=True, eq=False)
class _Run:
    """The public setup of one run of CovNR, OutputNR or the DoublingMethod.

    Fixed before any randomness is used and public (n, p, lambda, alpha, gamma, the grid,
    the sensitivities, the threshold), except ``problem``: the prepared data with theta*,
    which is released only when no level passes and the caller allowed it.
    """

    method: str
    problem: _Problem
    alpha: float
    gamma: float
    allow: bool
    want_diag: bool
    grid: NDArray[np.float64]
    query_sensitivity: float
    hypothesis_sensitivity: float
    threshold: float
    calibration: str = "paper"


def _levels(
    method: str, n: int, p: int, lam: float, alpha: float, allow: bool, eps_list: Any,
    max_epsilon: float | None, worst_loss: Callable[[NDArray[np.float64]], float],
) -> NDArray[np.float64]:
    """The levels a run of any of the three algorithms searches (read-only), from public
    parameters only.

    ``eps_list`` (or Appendix B's default) cut by ``max_epsilon`` on ``worst_loss(levels)``, the
    worst ex-post loss of a run over ``levels``
    (:func:`~oracledp.erm._theory.cap_levels`), then, for the default grid and unless
    ``allow``, checked against the theory curve
    (:func:`~oracledp.erm._theory.check_theory_reachable`).  Raises ValueError for the
    refusals before any noise.
    """
    grid = resolve_eps_grid(eps_list, method=method, alpha=alpha, n=n, p=p, lam=lam)
    grid = cap_levels(grid, max_epsilon, worst_loss,
                      f" with alpha = {alpha:g} and n = {n:,} records")
    if eps_list is None and not allow:  # the derived grid, a refusal if nothing passes
        check_theory_reachable(grid, method=method, alpha=alpha, n=n, p=p, lam=lam,
                               max_epsilon=max_epsilon)
    grid.setflags(write=False)
    return grid


def _nr_levels(
    method: str, n: int, p: int, lam: float, alpha: float, gamma: float, allow: bool,
    calibration: str, eps_list: Any, max_epsilon: float | None, Delta: float,
) -> NDArray[np.float64]:
    """The levels CovNR / OutputNR search (read-only), from public parameters only.

    Those of :func:`_levels` with the worst loss ``eps_0(T) + eps_T`` (Lemma 2.8).
    """
    return _levels(
        method, n, p, lam, alpha, allow, eps_list, max_epsilon,
        lambda lv: sens.iat_epsilon(Delta, alpha, gamma, lv.size, calibration) + float(lv[-1]),
    )


def records_needed(
    alpha: float, max_epsilon: float, p: int, *, method: str = "outputnr",
    lam: float = DEFAULT_LAMBDA, gamma: float = 0.1, calibration: str = "paper",
) -> int:
    """The smallest n for which CovNR / OutputNR with the default grid is not refused before noise.

    Both refusals from public parameters are applied as a fit would apply them
    (:func:`_nr_levels`: the cap below the test's own epsilon,
    :func:`~oracledp.erm._theory.cap_levels`, and the theory-curve check,
    :func:`~oracledp.erm._theory.check_theory_reachable`) to
    ``n`` records of ``p`` features; the answer is found by bisection on n (both checks get
    easier as n grows: the test's epsilon and E both fall as 1/n).  Passing them does not
    promise a release: the search may still refuse after its noise.
    """
    if method not in ("covnr", "outputnr"):
        raise ValueError(f"method must be 'covnr' or 'outputnr', got {method!r}")
    delta = (sens.ridge_excess_risk_sensitivity if method == "covnr"
             else sens.logistic_excess_risk_sensitivity)

    def passes(n: int) -> bool:
        try:
            _nr_levels(method, n, p, lam, alpha, gamma, False, calibration, None, max_epsilon,
                       delta(n, lam))
        except ValueError:
            return False
        return True

    lo, hi = 1, 2
    while not passes(hi):
        lo, hi = hi, hi * 2
        if hi > 2**40:
            raise ValueError("no n up to 2^40 passes: alpha or max_epsilon is too small")
    while hi - lo > 1:  # passes(hi), and not passes(lo) unless lo == 1
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if passes(mid) else (mid, hi)
    return 1 if passes(1) else hi


def _nr_run(
    method: str,
    problem: _Problem,
    checked: tuple[float, float, bool, bool],
    calibration: str,
    eps_list: Any,
    max_epsilon: float | None,
    *,
    query_sensitivity: float,
    hypothesis_sensitivity: float,
) -> tuple[_Run, float]:
    """The run of CovNR / OutputNR and the ``eps_0`` of its InteractiveAboveThreshold (all public).

    The levels are those of :func:`_nr_levels` (``eps_list`` or Appendix B's default, cut by
    ``max_epsilon``, checked against the theory curve); ``eps_0 = 16 Delta ln(2T/gamma)/alpha``
    (Algorithms 3 and 5, ``calibration="paper"``; see :func:`~oracledp.erm._sensitivity.iat_epsilon`) and the
    threshold ``-alpha/2`` (Algorithm 3: IAT(D, eps_0, -alpha/2, Delta, .); Algorithm 5 with
    the sign corrected).  ``query_sensitivity`` is Delta (Claim A.5 or A.12).
    """
    a, g, allow, want_diag = checked
    Delta = query_sensitivity
    grid = _nr_levels(method, problem.n, problem.p, problem.lam, a, g, allow, calibration,
                      eps_list, max_epsilon, Delta)
    eps_0 = sens.iat_epsilon(Delta, a, g, int(grid.size), calibration)
    run = _Run(method, problem, a, g, allow, want_diag, grid, Delta, hypothesis_sensitivity,
               -a / 2.0, calibration)
    return run, eps_0


def _finish(
    run: _Run,
    iat: InteractiveAboveThreshold,
    k: int | None,
    theta: NDArray[np.float64] | None,
    *,
    source: str,
    y_domain: str,
    times: tuple[float, float, float, float],
) -> AccuracyFirstResult:
    """Release gating and the result of CovNR / OutputNR (Lemma 2.8 accounting).

    Called by covnr / outputnr.
    """
    grid, T = run.grid, int(run.grid.size)

    def refusal() -> NoHaltError:
        eps_refusal = iat.epsilon + float(grid[-1])
        return _no_halt_error(
            run, f"InteractiveAboveThreshold did not halt on any of the {T} privacy levels",
            "Nothing else was released: the refusal reveals only that no level passed, an "
            f"ex-post loss of eps_0 + eps_T = {eps_refusal:g} (Lemma 2.8).",
            eps_refusal, fix=" to receive theta* with no guarantee",
        )

    released = _released_theta(run, k, theta, refusal)
    # Lemma 2.8 / Theorems 3.2, 3.4: E((k, .)) = eps_0 + eps_k (inf when no level passed).
    ex = dataclasses.replace(iat.ex_post_loss(float(grid[-1] if k is None else grid[k])),
                             source=source)
    t0, t1, t2, t3 = times
    return _result(
        run, released, k, ex,
        extra_notes=_PUBLIC_NOTE.format(y=y_domain),
        timings=lambda t4: {"setup": t1 - t0, "noise": t2 - t1, "search": t3 - t2,
                            "total": t4 - t0},
        stacklevel=3,  # _finish <- covnr/outputnr <- the caller
    )


def _no_halt_error(
    run: _Run, failed: str, reveals: str, epsilon_refusal: float, *, fix: str = ""
) -> NoHaltError:
    """The refusal to release theta* (infinite ex-post loss) when no level passed: what failed,
    what the refusal itself reveals (its own ex-post loss ``epsilon_refusal``), and the way out."""
    return NoHaltError(
        f"{run.method}: {failed} (up to eps_T = {float(run.grid[-1]):g}). The algorithm would "
        "now release the non-private optimum theta*, whose ex-post loss is infinite; refused. "
        f"{reveals} Use a larger eps_max or alpha, or pass allow_no_halt=True{fix}.",
        method=run.method,
        epsilon_refusal=epsilon_refusal,
    )


def _released_theta(
    run: _Run, k: int | None, theta: NDArray[np.float64] | None,
    refusal: Callable[[], NoHaltError],
) -> NDArray[np.float64]:
    """What the algorithm releases (read-only): ``theta``, the hypothesis at the stopping index
    ``k``; when no level passed (``k`` None), theta* (infinite loss) if the caller allowed it,
    else ``refusal()`` (a NoHaltError stating the refusal's own ex-post loss) is raised."""
    if k is None:
        if not run.allow:
            raise refusal()
        released = np.array(run.problem.theta_star, dtype=np.float64)
    else:
        if theta is None:  # pragma: no cover - internal invariant
            raise RuntimeError("internal error: no hypothesis recorded at the stopping index")
        released = np.array(theta, dtype=np.float64)
    released.setflags(write=False)
    return released


def _result(
    run: _Run,
    released: NDArray[np.float64],
    k: int | None,
    ex: ExPostLoss,
    *,
    extra_notes: str,
    timings: Callable[[float], dict[str, float]],
    stacklevel: int,
    statement: str | None = None,
) -> AccuracyFirstResult:
    """The :class:`AccuracyFirstResult` of any of the three algorithms: ``released`` with its
    ex-post loss ``ex`` as an EX_POST guarantee (not holding if theta* was released, ``k`` None).

    With diagnostics requested, ``timings(t4)`` gives their wall-clock split (t4: now) and
    ``stacklevel`` counts from the caller of this function to the user's call (where the
    DiagnosticsWarning points).
    """
    guarantee = _ex_post_guarantee(
        ex, statement=statement, extra_notes=extra_notes, released_theta_star=k is None
    )
    diagnostics = None
    if run.want_diag:
        guarantee = release_diagnostics(guarantee, run.method, stacklevel=stacklevel + 1)
        t4 = time.perf_counter()
        diagnostics = NonPrivateDiagnostics(run.method, {
            "excess_risk": float(run.problem.excess_risk(released)[0]),
            "timings": timings(t4),
        })
    problem = run.problem
    return AccuracyFirstResult(
        theta=released,
        stopping_index=k,
        ex_post=ex,
        guarantee=guarantee,
        eps_grid=run.grid,
        method=run.method,
        alpha=run.alpha,
        gamma=run.gamma,
        lam=problem.lam,
        n=problem.n,
        p=problem.p,
        query_sensitivity=run.query_sensitivity,
        hypothesis_sensitivity=run.hypothesis_sensitivity,
        threshold=run.threshold,
        calibration=run.calibration,
        diagnostics=diagnostics,
    )
