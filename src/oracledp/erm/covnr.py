"""CovNR: covariance perturbation with noise reduction for ridge regression (Accuracy First).

Algorithm 3 and Theorem 3.2 of Ligett, Neel, Roth, Waggoner, Wu, "Accuracy
First: Selecting a Differential Privacy Level for Accuracy-Constrained ERM"
(NeurIPS 2017).  This module also holds what CovNR and OutputNR share (the
paper: OutputNR "follows the same structure" as Algorithm 3): the result type
:class:`AccuracyFirstResult`, the refusal :class:`NoHaltError` and the
block-wise InteractiveAboveThreshold search.

The algorithm, for ``L(theta) = ||y - X theta||^2 / (2n) + lambda ||theta||^2 / 2``
over ``C = {||theta||_2 <= sqrt(1/lambda)}``:

1. ``theta* = argmin_C L`` (non-private; inside C by Lemma A.4, so the closed form).
2. Noisy statistics by NoiseReduction (Algorithm 1), each at half the level:
   ``Z^t = NR(X^T X, 2, eps_t/2)``, ``z^t = NR(X^T y, 2, eps_t/2)`` (Lemma A.6:
   each has l1 sensitivity 2; the prefix of both is ``eps_t``-DP).
3. ``theta^t = argmin_C (theta^T Z^t theta - 2 <z^t, theta>) / (2n) + lambda ||theta||^2 / 2``
   (equation 3.1; a trust-region subproblem, solved exactly, see
   :func:`trust_region_solve`).
4. InteractiveAboveThreshold (Algorithm 2) with ``eps_0 = 16 Delta ln(2T/gamma)/alpha``
   (or the optional one-sided calibration, :func:`oracledp.erm.sensitivity.iat_epsilon`),
   threshold ``-alpha/2`` and ``Delta = (sqrt(1/lambda) + 1)^2 / n`` (Claim A.5) on
   the queries ``f^t = L(theta*) - L(theta^t)``; output ``theta^k`` at the first pass.

Privacy (Theorem 3.2): ex-post differential privacy with loss ``eps_0 + eps_k``
when stopping at level k; infinite if theta* is released (refused by default).

Deviation from the authors' code (not from the paper): the authors solve
``(Z^t) theta = z^t`` and project onto C; equation (3.1) asks for the
constrained minimiser, which is what :func:`trust_region_solve` computes.
"""

from __future__ import annotations

import dataclasses
import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from threadpoolctl import ThreadpoolController

from oracledp._validation import RandomLike, check_choice, check_positive, check_rng
from oracledp.diagnostics import (
    NonPrivateDiagnostics,
    check_diagnostics_flag,
    release_diagnostics,
)
from oracledp.erm import sensitivity as sens
from oracledp.erm.sensitivity import _check_gamma
from oracledp.erm.theory import cap_levels, resolve_eps_grid
from oracledp.errors import OracleDPError
from oracledp.guarantees import GuaranteeKind, PrivacyGuarantee
from oracledp.mechanisms import ExPostLoss, InteractiveAboveThreshold, noise_reduction

__all__ = [
    "COVNR_SOURCE",
    "DEFAULT_LAMBDA",
    "AccuracyFirstResult",
    "NoHaltError",
    "RidgeProblem",
    "covnr",
    "trust_region_solve",
]

#: lambda of the paper's experiments (Appendix B.1).
DEFAULT_LAMBDA = 0.005

COVNR_SOURCE = (
    "Ligett et al. 2017 (Accuracy First), Algorithm 3 and Theorem 3.2 "
    "(CovNR; IAT Lemma 2.8, NR Theorem 2.7, sensitivities Claim A.5 and Lemma A.6)"
)

_TOKEN = object()  # problems are built by from_data only (validated data)


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


# =================================================================================================
# Shared by CovNR, OutputNR and the DoublingMethod
# =================================================================================================
class NoHaltError(OracleDPError, RuntimeError):
    """No privacy level passed the accuracy test, and releasing theta* was not allowed.

    The algorithms would then output the non-private optimum theta*, whose ex-post
    loss is infinite (Theorems 3.2, 3.4, A.2).  They refuse instead.  The refusal
    itself reveals only that no level passed: for CovNR/OutputNR that is the
    outcome ``(T, bottom)`` of InteractiveAboveThreshold with every hypothesis
    generated, ex-post loss ``eps_0 + eps_T`` (Lemma 2.8); for the DoublingMethod
    ``T eps_test + sum_i eps_i``.  That number is ``epsilon_refusal``.
    """

    def __init__(self, message: str, *, method: str, epsilon_refusal: float) -> None:
        super().__init__(message)
        self.method = method
        self.epsilon_refusal = epsilon_refusal


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
        ``"one-sided"``, see :func:`oracledp.erm.sensitivity.iat_epsilon`);
        ``"paper"`` for the DoublingMethod (Theorem A.2's test scale).
    diagnostics:
        None unless the caller passed ``return_diagnostics=True``; then a
        :class:`~oracledp.diagnostics.NonPrivateDiagnostics` with ``excess_risk``
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


def _check_bool(value: object, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


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
    g = PrivacyGuarantee(
        epsilon=ex.epsilon,
        delta=0.0,
        kind=GuaranteeKind.EX_POST,
        requires_exact_oracle=False,
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


# =================================================================================================
# Ridge regression
# =================================================================================================
def trust_region_solve(
    A: NDArray[np.float64], b: NDArray[np.float64], radius: float
) -> NDArray[np.float64]:
    """``argmin_{||theta||_2 <= radius} theta^T A theta / 2 - <b, theta>`` for symmetric A, batched.

    ``A`` has shape ``(k, p, p)`` (symmetric, possibly indefinite) and ``b``
    ``(k, p)``.  The exact global minimiser of this trust-region subproblem
    (Moré and Sorensen 1983): with ``A = Q diag(d) Q^T`` and ``c = Q^T b``, either
    ``A`` is positive definite and ``||A^-1 b|| <= radius`` (interior solution),
    or ``theta = Q (c / (d + mu))`` with the unique ``mu >= max(0, -d_min)``
    such that ``||theta|| = radius``, found by bisection (keeping the end with
    ``||theta|| <= radius``, so the result is always feasible).  In the "hard case"
    (``c`` orthogonal to the bottom eigenvector of an indefinite A, probability 0
    with continuous noise) the missing norm is added along that eigenvector.
    Rounding: a solution whose computed norm exceeds ``radius (1 - 1e-12)`` is
    rescaled to that norm, so the norm stays below the radius however it is
    computed (a relative change of at most 1e-12).
    """
    k, p = b.shape
    theta = np.empty((k, p))
    # Fast path: where A is positive definite (its Cholesky factorisation exists), the
    # unconstrained minimiser A^-1 b is the answer if it lies in the ball.  Each matrix is
    # classified on its own, so the result of a level never depends on the batch it is in.
    pd = _positive_definite(A)
    ok = np.zeros(k, dtype=bool)
    if pd.any():
        inner = np.linalg.solve(A[pd], b[pd][..., None])[..., 0]
        ok[pd] = np.einsum("ki,ki->k", inner, inner) <= radius**2
        theta[ok] = inner[ok[pd]]
    todo = np.flatnonzero(~ok)
    if todo.size:
        theta[todo] = _trust_region_eigh(A[todo], b[todo], radius)
    return _shrink_into_ball(theta, radius)


def _shrink_into_ball(theta: NDArray[np.float64], radius: float) -> NDArray[np.float64]:
    """Rescale (in place) rows with norm above ``radius (1 - 1e-12)`` to exactly that norm.

    The 1e-12 margin is far above rounding, so ``||theta||_2 <= radius`` holds for
    every way of computing the norm: the sensitivity bounds (Claims A.5, A.12)
    assume it.
    """
    target = radius * (1.0 - 1e-12)
    norms = np.sqrt(np.einsum("ki,ki->k", theta, theta))
    over = norms > target
    if over.any():
        theta[over] *= (target / norms[over])[:, None]
    return theta


def _positive_definite(A: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Per matrix of the batch: does a Cholesky factorisation exist?"""
    try:
        np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        out = np.zeros(A.shape[0], dtype=bool)
        for i in range(A.shape[0]):
            try:
                np.linalg.cholesky(A[i])
            except np.linalg.LinAlgError:
                continue
            out[i] = True
        return out
    return np.ones(A.shape[0], dtype=bool)


def _trust_region_eigh(
    A: NDArray[np.float64], b: NDArray[np.float64], radius: float
) -> NDArray[np.float64]:
    """The trust-region subproblem through the eigendecomposition (see :func:`trust_region_solve`)."""
    d, Q = np.linalg.eigh(A)
    c = np.einsum("kji,kj->ki", Q, b)
    d_min = d[:, 0]
    coef = np.empty_like(c)

    with np.errstate(divide="ignore", invalid="ignore"):
        inner = c / d
    inner_ok = (d_min > 0) & (np.einsum("ki,ki->k", inner, inner) <= radius**2)
    coef[inner_ok] = inner[inner_ok]

    todo = np.flatnonzero(~inner_ok)
    if todo.size:
        dd, cc = d[todo], c[todo]
        lo = np.maximum(0.0, -dd[:, 0])
        hi = lo + np.sqrt(np.einsum("ki,ki->k", cc, cc)) / radius + np.abs(lo) * 1e-15 + 1e-300
        # phi(mu) = ||c / (d + mu)||^2 decreases on (lo, inf); phi(hi) <= radius^2 since
        # d_i + hi >= ||c|| / radius for all i.
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if np.all((mid <= lo) | (mid >= hi)):
                break
            den = dd + mid[:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.where(cc == 0.0, 0.0, cc / den)
            phi = np.einsum("ki,ki->k", t, t)
            big = (phi > radius**2) | ~np.isfinite(phi)
            lo = np.where(big, mid, lo)
            hi = np.where(big, hi, mid)
        den = dd + hi[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            sol = np.where(cc == 0.0, 0.0, cc / den)
        # Hard case (or a bottom component below float resolution): with negative curvature
        # the minimiser is on the sphere, so the bottom-eigenvector coefficient takes the
        # remaining norm, with the sign of c_0 (the sign that decreases -<b, theta>).
        norm2 = np.einsum("ki,ki->k", sol, sol)
        hard = (dd[:, 0] < 0) & (norm2 < radius**2 * (1.0 - 1e-10))
        if hard.any():
            rest = norm2[hard] - sol[hard, 0] ** 2
            sign = np.where(cc[hard, 0] < 0, -1.0, 1.0)
            sol[hard, 0] = sign * np.sqrt(np.maximum(radius**2 - rest, 0.0))
        coef[todo] = sol

    return np.einsum("kij,kj->ki", Q, coef)


@dataclass(frozen=True, eq=False)
class RidgeProblem:
    """Validated ridge-regression data reduced to sufficient statistics, with theta*.

    Build with :meth:`from_data` (which checks the domain); reuse it across runs
    of :func:`covnr` and :func:`~oracledp.erm.doubling` on the same data: the
    statistics and theta* do not change between trials.  It holds the private
    data's statistics and the non-private optimum: never publish it.

    The objective is ``L(theta) = ||y - X theta||^2 / (2n) + lambda ||theta||^2 / 2``
    (Section 3.1) over ``C = {||theta||_2 <= sqrt(1/lambda)}``.
    """

    n: int
    p: int
    lam: float
    gram: NDArray[np.float64]
    xty: NDArray[np.float64]
    yty: float
    theta_star: NDArray[np.float64]
    radius: float
    _token: object = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self._token is not _TOKEN:
            raise TypeError("build a RidgeProblem with RidgeProblem.from_data(X, y, lam)")

    @classmethod
    def from_data(cls, X: ArrayLike, y: ArrayLike, lam: float = DEFAULT_LAMBDA) -> RidgeProblem:
        """Check the domain (``||x_i||_1 <= 1``, ``|y_i| <= 1``), compute ``X^T X``, ``X^T y`` and theta*.

        Raises BoundsViolation (naming the bound) for data outside the domain,
        ValueError/TypeError for malformed input.  Draws no randomness.
        """
        lam_ = check_positive(lam, "lam")
        Xa = sens.check_l1_rows(X, "X")
        ya = sens.check_ridge_targets(y, Xa.shape[0], "y")
        n, p = Xa.shape
        radius = sens.ridge_radius(lam_)
        with _single_blas_thread():
            gram = Xa.T @ Xa
            gram = 0.5 * (gram + gram.T)
            xty = Xa.T @ ya
            # theta* = argmin_C L (Algorithm 3).  By Lemma A.4 the unconstrained optimum
            # (X^T X + n lambda I)^-1 X^T y has norm <= sqrt(1/lambda), so it is theta*; the
            # exact constrained solver returns it (and stays feasible under rounding).
            H = gram / n + lam_ * np.eye(p)
            theta_star = trust_region_solve(H[None], (xty / n)[None], radius)[0]
        for a in (gram, xty, theta_star):
            a.setflags(write=False)
        return cls(
            n=n,
            p=p,
            lam=lam_,
            gram=gram,
            xty=xty,
            yty=float(ya @ ya),
            theta_star=theta_star,
            radius=radius,
            _token=_TOKEN,
        )

    @property
    def hessian(self) -> NDArray[np.float64]:
        """``H = X^T X / n + lambda I`` (L is the quadratic ``theta^T H theta / 2 - <X^T y / n, theta> + const``)."""
        return self.gram / self.n + self.lam * np.eye(self.p)

    def loss(self, thetas: ArrayLike) -> NDArray[np.float64]:
        """``L(theta)`` for each row of ``thetas`` (shape (k, p)) or a single theta."""
        th = np.atleast_2d(np.asarray(thetas, dtype=np.float64))
        quad = np.einsum("ki,ij,kj->k", th, self.gram, th)
        out = (quad - 2.0 * th @ self.xty + self.yty) / (2.0 * self.n) + 0.5 * self.lam * np.einsum(
            "ki,ki->k", th, th
        )
        return out

    def excess_risk(self, thetas: ArrayLike) -> NDArray[np.float64]:
        """``L(theta) - L(theta*)`` for each row, as the exact quadratic expansion around theta*.

        ``L(theta* + D) - L(theta*) = <H theta* - X^T y/n, D> + D^T H D / 2`` (L is
        quadratic), which avoids the cancellation of subtracting two losses.
        """
        th = np.atleast_2d(np.asarray(thetas, dtype=np.float64))
        H = self.hessian
        D = th - self.theta_star
        grad = H @ self.theta_star - self.xty / self.n
        return 0.5 * np.einsum("ki,ij,kj->k", D, H, D) + D @ grad


def _ridge_hypotheses(
    problem: RidgeProblem, Z: NDArray[np.float64], z: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Equation (3.1): ``argmin_C (theta^T Z theta - 2 <z, theta>)/(2n) + lambda ||theta||^2/2`` per level.

    Only the symmetric part of Z enters ``theta^T Z theta``, so the subproblem has
    ``A = (Z + Z^T)/(2n) + lambda I`` and ``b = z / n``.
    """
    n, lam = problem.n, problem.lam
    A = (Z + np.swapaxes(Z, 1, 2)) / (2.0 * n) + lam * np.eye(problem.p)
    return trust_region_solve(A, z / n, problem.radius)


def _as_ridge_problem(X: Any, y: Any, lam: Any) -> RidgeProblem:
    if isinstance(X, RidgeProblem):
        if y is not None:
            raise ValueError("pass y=None together with a prepared RidgeProblem")
        _check_lam_for_problem(lam, X.lam)
        return X
    return RidgeProblem.from_data(X, y, DEFAULT_LAMBDA if lam is None else lam)


def covnr(
    X: ArrayLike | RidgeProblem,
    y: ArrayLike | None,
    alpha: float,
    *,
    gamma: float = 0.1,
    lam: float | None = None,
    eps_list: ArrayLike | tuple[float, float, int] | None = None,
    rng: RandomLike = None,
    allow_no_halt: bool = False,
    calibration: str = "paper",
    block_size: int = 32,
    return_diagnostics: bool = False,
    max_epsilon: float | None = None,
) -> AccuracyFirstResult:
    """CovNR (Algorithm 3): the most private ridge hypothesis with excess risk <= alpha.

    Parameters
    ----------
    X, y:
        Features with ``||x_i||_1 <= 1`` and targets with ``|y_i| <= 1``; or a
        prepared :class:`RidgeProblem` as ``X`` with ``y=None`` (to reuse the
        statistics and theta* across trials).
    alpha:
        Target excess empirical risk, ``L(theta) - L(theta*) <= alpha``.
    gamma:
        Failure probability of the accuracy guarantee, in (0, 1).
    lam:
        Regularisation lambda > 0 (default 0.005, Appendix B.1; with a prepared
        problem, None or the problem's lambda).
    eps_list:
        The privacy levels: None (Appendix B: T = 1000 geometric levels from 1/n
        to 4E, E from Theorem 3.1), a tuple ``(eps_min, eps_max, T)``, or an
        explicit strictly increasing list/array.
    rng:
        Seed or numpy Generator, the only source of randomness.
    allow_no_halt:
        If no level passes, Algorithm 3 outputs the non-private theta*.  By
        default this raises :class:`NoHaltError` instead; with True, theta* is
        returned with ``epsilon = inf`` and ``guarantee.holds = False``.
    calibration:
        ``"paper"`` (default: ``eps_0 = 16 Delta ln(2T/gamma)/alpha``) or
        ``"one-sided"`` (``eps_0 = Delta (12 ln(1/gamma) + 8 ln(T/2))/alpha``, same
        accuracy guarantee, derivation in
        :func:`oracledp.erm.sensitivity.iat_epsilon`).
    block_size:
        Levels evaluated per block of tests (speed only; the law of the output
        does not depend on it).
    max_epsilon:
        A cap on the ex-post loss: the grid is cut to its longest prefix whose worst
        loss ``eps_0(T) + eps_T`` is at most ``max_epsilon``
        (:func:`~oracledp.erm.theory.cap_levels`), so no run, released or refused, loses
        more.  None (default): no cap.
    return_diagnostics:
        Attach :class:`~oracledp.diagnostics.NonPrivateDiagnostics` (``excess_risk``
        on the training data, ``timings``).  For research only: issues a
        :class:`~oracledp.errors.DiagnosticsWarning` and sets
        ``guarantee.diagnostics_released``.

    Returns
    -------
    AccuracyFirstResult

    Privacy
    -------
    Ex-post differential privacy (Definition 2.3), Theorem 3.2: stopping at level
    ``k`` the loss is ``eps_0 + eps_k`` with
    ``eps_0 = 16 (sqrt(1/lambda) + 1)^2 ln(2T/gamma) / (n alpha)`` (``calibration="paper"``;
    ``Delta (12 ln(1/gamma) + 8 ln(T/2)) / alpha`` with ``"one-sided"``); infinite if
    theta* is released.  Replace-one neighbours, domain ``||x_i||_1 <= 1``,
    ``|y_i| <= 1``; n, p, lambda, alpha, gamma and the grid are public.

    Accuracy (Theorem 3.2): with probability >= 1 - gamma,
    ``L(theta) - L(theta*) <= alpha``.

    Raises
    ------
    BoundsViolation
        Data outside the domain (before any randomness is used).
    ValueError, TypeError
        Malformed parameters (before any randomness is used).
    NoHaltError
        No level passed and ``allow_no_halt`` is False.
    """
    t0 = time.perf_counter()
    # --- validation: nothing random happens before this block ends ---------------------------
    a = check_positive(alpha, "alpha")
    g = _check_gamma(gamma)
    allow = _check_bool(allow_no_halt, "allow_no_halt")
    want_diag = check_diagnostics_flag(return_diagnostics)
    block = _check_block(block_size)
    calib = check_choice(calibration, "calibration", sens.CALIBRATIONS)
    gen = check_rng(rng)
    problem = _as_ridge_problem(X, y, lam)
    n, p, lam_ = problem.n, problem.p, problem.lam
    grid = resolve_eps_grid(eps_list, method="covnr", alpha=a, n=n, p=p, lam=lam_)
    Delta = sens.ridge_excess_risk_sensitivity(n, lam_)  # Claim A.5
    grid = cap_levels(grid, max_epsilon,
                      lambda lv: sens.iat_epsilon(Delta, a, g, lv.size, calib) + float(lv[-1]))
    grid.setflags(write=False)
    T = int(grid.size)
    eps_0 = sens.iat_epsilon(Delta, a, g, T, calib)  # Algorithm 3: 16 Delta ln(2T/gamma) / alpha
    threshold = -a / 2.0  # Algorithm 3: IAT(D, eps_0, -alpha/2, Delta, .)
    t1 = time.perf_counter()

    # Small dense linear algebra: one BLAS thread (many threads on tiny matrices only contend).
    with _single_blas_thread():
        # --- hypotheses: NR on X^T X and X^T y, each with sensitivity 2 at eps_t / 2 (Lemma A.6) ----
        half = grid / 2.0
        Z = noise_reduction(problem.gram, sens.COVARIANCE_SENSITIVITY, half, gen)
        z = noise_reduction(problem.xty, sens.COVARIANCE_SENSITIVITY, half, gen)
        t2 = time.perf_counter()

        # --- InteractiveAboveThreshold on f^t = L(theta*) - L(theta^t) ----------------------------
        iat = InteractiveAboveThreshold(eps_0, threshold, Delta, rng=gen)
        thetas: dict[int, NDArray[np.float64]] = {}

        def excess(start: int, stop: int) -> NDArray[np.float64]:
            block_thetas = _ridge_hypotheses(problem, Z[start:stop], z[start:stop])
            for i in range(stop - start):
                thetas[start + i] = block_thetas[i]
            return problem.excess_risk(block_thetas)

        k = _iat_search(iat, excess, T, block)
        # the final excess risk is evaluated under the same one-thread limit
        t3 = time.perf_counter()
        return _finish(
            method="covnr",
            iat=iat,
            k=k,
            theta=thetas[k] if k is not None else None,
            problem_theta_star=problem.theta_star,
            excess_fn=problem.excess_risk,
            grid=grid,
            allow=allow,
            source=COVNR_SOURCE,
            y_domain="|y_i| <= 1",
            params={"alpha": a, "gamma": g, "lam": lam_, "n": n, "p": p},
            query_sensitivity=Delta,
            hypothesis_sensitivity=sens.COVARIANCE_SENSITIVITY,
            threshold=threshold,
            times=(t0, t1, t2, t3),
            calibration=calib,
            return_diagnostics=want_diag,
        )


def _finish(
    *,
    method: str,
    iat: InteractiveAboveThreshold,
    k: int | None,
    theta: NDArray[np.float64] | None,
    problem_theta_star: NDArray[np.float64],
    excess_fn: Callable[[ArrayLike], NDArray[np.float64]],
    grid: NDArray[np.float64],
    allow: bool,
    source: str,
    y_domain: str,
    params: dict[str, Any],
    query_sensitivity: float,
    hypothesis_sensitivity: float,
    threshold: float,
    times: tuple[float, float, float, float],
    calibration: str,
    return_diagnostics: bool,
) -> AccuracyFirstResult:
    """Release gating and the result of CovNR / OutputNR (Lemma 2.8 accounting)."""
    T = int(grid.size)
    if k is None:
        eps_refusal = iat.epsilon + float(grid[-1])
        if not allow:
            raise NoHaltError(
                f"{method}: InteractiveAboveThreshold did not halt on any of the {T} privacy "
                f"levels (up to eps_T = {float(grid[-1]):g}). The algorithm would now release the "
                "non-private optimum theta*, whose ex-post loss is infinite; refused. Nothing "
                "else was released: the refusal reveals only that no level passed, an ex-post "
                f"loss of eps_0 + eps_T = {eps_refusal:g} (Lemma 2.8). Use a larger eps_max or "
                "alpha, or pass allow_no_halt=True to receive theta* with no guarantee.",
                method=method,
                epsilon_refusal=eps_refusal,
            )
        ex = dataclasses.replace(iat.ex_post_loss(float(grid[-1])), source=source)
        released = np.array(problem_theta_star, dtype=np.float64)
    else:
        if theta is None:  # pragma: no cover - internal invariant
            raise RuntimeError("internal error: no hypothesis recorded at the stopping index")
        # Lemma 2.8 / Theorems 3.2, 3.4: E((k, .)) = eps_0 + eps_k.
        ex = dataclasses.replace(iat.ex_post_loss(float(grid[k])), source=source)
        released = np.array(theta, dtype=np.float64)
    released.setflags(write=False)
    guarantee = _ex_post_guarantee(
        ex,
        extra_notes=_PUBLIC_NOTE.format(y=y_domain),
        released_theta_star=k is None,
    )
    diagnostics = None
    if return_diagnostics:
        guarantee = release_diagnostics(guarantee, method, stacklevel=3)
        t4 = time.perf_counter()
        t0, t1, t2, t3 = times
        diagnostics = NonPrivateDiagnostics(method, {
            "excess_risk": float(excess_fn(released)[0]),
            "timings": {"setup": t1 - t0, "noise": t2 - t1, "search": t3 - t2, "total": t4 - t0},
        })
    return AccuracyFirstResult(
        theta=released,
        stopping_index=k,
        ex_post=ex,
        guarantee=guarantee,
        eps_grid=grid,
        method=method,
        query_sensitivity=query_sensitivity,
        hypothesis_sensitivity=hypothesis_sensitivity,
        threshold=threshold,
        calibration=calibration,
        diagnostics=diagnostics,
        **params,
    )
