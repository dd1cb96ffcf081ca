"""An approximate linear optimization oracle for logistic regression (OPSamp's oracle).

OPSamp (Neel, Roth, Vietri, Wu, ICML 2020, Algorithm 2) calls an
*alpha-approximate linear optimization oracle* (Definition 2.1): given the data
D and a vector sigma it returns w* in W with

    L(D, w*) - <sigma, w*>  <=  inf_{w in W} ( L(D, w) - <sigma, w> ) + alpha.

Definition 2.1 divides both sides by n; here alpha is measured on the
*unnormalized* objective (n times the Definition 2.1 value), because that is
the error of the FTPL objective in Suggala & Netrapalli's stability lemma,
which OPSamp's Lemma 8 imports (see :mod:`oracledp.learners._opsamp` and
``docs/proofs/opsamp-theorem11.md``).

:class:`LogisticProblem` holds the data and the parameter space W (a box
``|w_j| <= r`` or a Euclidean ball ``||w||_2 <= r``), with the losses scaled to
[0, 1] by a *public* constant as OPSamp's analysis assumes (Section 4):

    l_i(w) = log(1 + exp(-y_i <x_i, w>)) / M,   M = log(1 + exp(max_margin)),

where ``max_margin`` bounds |<x, w>| over W for every admissible record
(``||x||_inf <= feature_bound``, ``||x||_1 <= feature_l1_bound``).  The
l1-Lipschitz constant of each scaled loss in w is ``G = feature_bound / M``
(|l(w) - l(w')| <= |<x, w - w'>| / M <= ||x||_inf ||w - w'||_1 / M).  Records
outside the declared bounds are refused with
:class:`~oracledp._errors.BoundsViolation`, never clipped.

:class:`LogisticLinearOracle` minimizes the perturbed objective
``f(w) = sum_i l_i(w) - <sigma, w>`` (L-BFGS-B on the box, SLSQP on the ball)
and reports its error *honestly*: f is convex and differentiable, so for any
feasible w the Frank-Wolfe gap

    g(w) = max_{v in W} <grad f(w), w - v>
         = <grad f(w), w> + r ||grad f(w)||_1     (box)
         = <grad f(w), w> + r ||grad f(w)||_2     (ball)

is an exactly computable upper bound on f(w) - min_W f.  The oracle adds a
worst-case floating-point allowance to g(w) and releases w only if that
certified bound is at most the declared alpha; otherwise it raises
:class:`~oracledp._errors.OracleFailure` (an oracle that does not meet its
contract is a failure, as for OPDisc).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize
from scipy.special import expit

from oracledp._errors import BoundsViolation, OracleFailure
from oracledp._validation import (
    check_choice,
    check_finite_matrix,
    check_positive,
    check_signed_labels,
)

__all__ = [
    "DOMAINS",
    "ApproxOracleResult",
    "LogisticLinearOracle",
    "LogisticProblem",
]

DOMAINS = ("ball", "box")
_U = float(np.finfo(np.float64).eps) / 2.0  # unit roundoff of float64


@dataclass(frozen=True)
class ApproxOracleResult:
    """One answer of an approximate linear optimization oracle.

    Attributes
    ----------
    w:
        The returned point (in W).
    objective:
        f(w) = L(D, w) - <sigma, w> (unnormalized sum of the scaled losses).
    gap:
        A *certified* upper bound on f(w) - min_W f (same units as ``objective``).
    alpha:
        The oracle's declared additive error.
    solver, wall_time, status, info:
        Diagnostics.  They depend on the data: do not publish them.
    """

    w: NDArray[np.float64]
    objective: float
    gap: float
    alpha: float
    solver: str
    wall_time: float
    status: str = "optimal"
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def certified(self) -> bool:
        """Whether the certified suboptimality bound is within the declared alpha."""
        return bool(math.isfinite(self.gap) and self.gap <= self.alpha)


@dataclass(frozen=True, eq=False)
class LogisticProblem:
    """Logistic losses scaled to [0, 1] over a box or a ball (OPSamp's setting, Section 4).

    Build it with :meth:`from_data` (or :meth:`LogisticLinearOracle.problem`).

    Attributes
    ----------
    X, y:
        Features (read-only float64) and labels in {-1, +1} (int8).
    domain, radius:
        W = {|w_j| <= radius} ("box") or {||w||_2 <= radius} ("ball").
    feature_bound:
        Public bound B on ||x||_inf of every admissible record.
    feature_l1_bound:
        Public bound on ||x||_1 (at most d * B; defaults to d * B).
    """

    X: NDArray[np.float64]
    y: NDArray[np.int8]
    domain: str
    radius: float
    feature_bound: float
    feature_l1_bound: float

    def __post_init__(self) -> None:
        """Check every invariant the privacy constants rely on (also for direct construction)."""
        check_choice(self.domain, "domain", DOMAINS)
        r = check_positive(self.radius, "radius")
        B = check_positive(self.feature_bound, "feature_bound")
        X = check_finite_matrix(self.X)
        n, d = X.shape
        y = check_signed_labels(self.y, n)
        l1 = min(check_positive(self.feature_l1_bound, "feature_l1_bound"), d * B)
        # Messages name the columns and the rule, never values, norms or rows (they are data).
        over = np.abs(X) > B
        if over.any():
            cols = np.flatnonzero(over.any(axis=0))[:10].tolist()
            raise BoundsViolation(
                f"X has entries with |x_ij| > feature_bound = {B:g} (in columns {cols}); the "
                "Lipschitz constant G = feature_bound / M of the "
                "privacy proof assumes ||x||_inf <= feature_bound. Rescale X with a public, "
                "data-independent rule, or declare a larger feature_bound."
            )
        row_l1 = np.abs(X).sum(axis=1)
        if float(row_l1.max()) > l1:
            raise BoundsViolation(
                f"some rows have ||x||_1 > feature_l1_bound = {l1:g}; the loss scale M assumes "
                "||x||_1 <= feature_l1_bound. Rescale rows with a public rule or declare a "
                "larger bound."
            )
        X_ro = np.array(X, dtype=np.float64, order="C", copy=True)
        X_ro.setflags(write=False)
        y_ro = np.array(y, dtype=np.int8, copy=True)
        y_ro.setflags(write=False)
        object.__setattr__(self, "X", X_ro)
        object.__setattr__(self, "y", y_ro)
        object.__setattr__(self, "radius", r)
        object.__setattr__(self, "feature_bound", B)
        object.__setattr__(self, "feature_l1_bound", l1)

    @classmethod
    def from_data(
        cls,
        X: ArrayLike,
        y: ArrayLike,
        *,
        domain: str = "box",
        radius: float = 1.0,
        feature_bound: float = 1.0,
        feature_l1_bound: float | None = None,
    ) -> LogisticProblem:
        """Validate and store the data; refuse records outside the declared bounds.

        ``feature_l1_bound=None`` means d * feature_bound (implied by the l_inf bound).

        Raises
        ------
        BoundsViolation
            A feature with |x_ij| > feature_bound, a row with ||x_i||_1 >
            feature_l1_bound, or a label outside {-1, +1}.
        ValueError, TypeError
            Malformed arrays or parameters.
        """
        check_choice(domain, "domain", DOMAINS)
        B = check_positive(feature_bound, "feature_bound")
        X_arr = check_finite_matrix(X)
        l1 = X_arr.shape[1] * B if feature_l1_bound is None else feature_l1_bound
        return cls(
            X=X_arr,
            y=np.asarray(y),
            domain=domain,
            radius=radius,
            feature_bound=B,
            feature_l1_bound=l1,  # type: ignore[arg-type]
        )

    # --- sizes and geometry (public constants: they depend on n, d and the declared bounds) ---
    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    @property
    def max_margin(self) -> float:
        """Largest |<x, w>| over W and over admissible records x (public)."""
        r, B, l1 = self.radius, self.feature_bound, self.feature_l1_bound
        if self.domain == "box":
            return r * l1  # |<x, w>| <= ||x||_1 ||w||_inf
        # ||x||_2^2 <= ||x||_inf ||x||_1, and ||x||_2 <= sqrt(d) ||x||_inf
        return r * min(math.sqrt(self.d) * B, math.sqrt(B * l1))

    @property
    def loss_scale(self) -> float:
        """M = log(1 + exp(max_margin)): the largest logistic loss over W (public)."""
        return float(np.logaddexp(0.0, self.max_margin))

    @property
    def lipschitz(self) -> float:
        """G: l1-Lipschitz constant (in w) of each scaled loss, feature_bound / M."""
        return self.feature_bound / self.loss_scale

    @property
    def linf_diameter(self) -> float:
        """D_inf: l_inf diameter of W (2 r for both the box and the ball)."""
        return 2.0 * self.radius

    @property
    def l2_diameter(self) -> float:
        """D_2: l2 diameter of W (2 r sqrt(d) for the box, 2 r for the ball)."""
        return 2.0 * self.radius * (math.sqrt(self.d) if self.domain == "box" else 1.0)

    @property
    def l1_diameter(self) -> float:
        """D_1: l1 diameter of W (2 r d for the box, 2 r sqrt(d) for the ball)."""
        return 2.0 * self.radius * (self.d if self.domain == "box" else math.sqrt(self.d))

    # --- losses -----------------------------------------------------------------------------
    def contains(self, w: NDArray[np.floating]) -> bool:
        """Whether w lies in W (exactly, no tolerance)."""
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.d,) or not np.isfinite(w).all():
            return False
        if self.domain == "box":
            return bool(np.abs(w).max() <= self.radius)
        return bool(np.dot(w, w) <= self.radius**2)

    def project(self, w: NDArray[np.floating]) -> NDArray[np.float64]:
        """Euclidean projection onto W (used on the solver's iterate, never on data)."""
        w = np.asarray(w, dtype=np.float64)
        r = self.radius
        if self.domain == "box":
            return np.clip(w, -r, r)
        nrm = float(np.linalg.norm(w))
        if nrm <= r:
            return w.copy()
        out = w * (r / nrm)
        while np.dot(out, out) > r * r:  # guard the last ulp
            out = out * (1.0 - 4 * _U)
        return out

    def losses(self, w: NDArray[np.floating]) -> NDArray[np.float64]:
        """Per-example scaled losses l_i(w) in [0, 1] (vector of length n)."""
        z = self.y * (self.X @ np.asarray(w, dtype=np.float64))
        return np.logaddexp(0.0, -z) / self.loss_scale

    def objective(
        self, w: NDArray[np.floating], sigma: NDArray[np.floating]
    ) -> tuple[float, NDArray[np.float64]]:
        """f(w) = sum_i l_i(w) - <sigma, w> and its gradient."""
        w = np.asarray(w, dtype=np.float64)
        M = self.loss_scale
        z = self.y * (self.X @ w)
        f = float(np.logaddexp(0.0, -z).sum() / M - sigma @ w)
        s = expit(-z)  # -d/dz log(1 + e^{-z})
        g = -(self.X.T @ (self.y * s)) / M - sigma
        return f, g

    def frank_wolfe_gap(
        self, w: NDArray[np.floating], sigma: NDArray[np.floating]
    ) -> tuple[float, float]:
        """(g(w), fp_allowance): the Frank-Wolfe gap and a floating-point rounding allowance.

        For convex differentiable f and w in W, f(w) - min_W f <= g(w) (exact
        arithmetic).  The allowance bounds, in the worst case, the rounding error
        of computing g(w) in float64 (dot products of length n and d, the
        logistic derivative), so ``g + allowance`` is a certified bound.
        """
        w = np.asarray(w, dtype=np.float64)
        sigma = np.asarray(sigma, dtype=np.float64)
        n, d, r, M = self.n, self.d, self.radius, self.loss_scale
        _, g = self.objective(w, sigma)
        if self.domain == "box":
            gap = float(g @ w + r * np.abs(g).sum())
        else:
            gap = float(g @ w + r * np.linalg.norm(g))
        # Worst-case rounding: |err(g_j)| <= (n + 2) u (sum_i |x_ij| s_i / M + |sigma_j|)
        # + error propagated from z = X w (|ds/dz| <= 1/4, |err z_i| <= d u max_margin).
        z = self.y * (self.X @ w)
        s = expit(-z)
        absX = np.abs(self.X)
        a = (absX.T @ s) / M + np.abs(sigma)
        prop = (absX.sum(axis=0) / M) * 0.25 * (d + 2) * _U * self.max_margin
        err_g = (n + 4) * _U * a + prop
        weights = np.abs(w) + r
        allowance = 2.0 * float(weights @ err_g) + 4 * (d + 4) * _U * float(weights @ np.abs(g))
        return gap, allowance


def _check_sigma(problem: LogisticProblem, sigma: ArrayLike) -> NDArray[np.float64]:
    s = np.asarray(sigma, dtype=np.float64)
    if s.shape != (problem.d,):
        raise ValueError(f"sigma must have shape ({problem.d},), got {s.shape}")
    if not np.isfinite(s).all():
        raise ValueError("sigma must be finite (no NaN or infinity)")
    return s


class LogisticLinearOracle:
    """Alpha-approximate linear optimization oracle for scaled logistic losses (Definition 2.1).

    Minimizes ``f(w) = sum_i l_i(w) - <sigma, w>`` over W (box: L-BFGS-B with
    bounds; ball: SLSQP with the constraint ||w||^2 <= r^2), then certifies the
    answer with the Frank-Wolfe gap plus a floating-point allowance.  The answer
    is returned only if that certified bound is <= ``alpha``; otherwise
    :class:`~oracledp._errors.OracleFailure` is raised.

    Parameters
    ----------
    domain : {"box", "ball"}
        Shape of W.
    radius : float
        r in ``|w_j| <= r`` or ``||w||_2 <= r``.
    alpha : float, default=1e-4
        Declared additive error on the unnormalized objective f (the privacy
        calibration of OPSamp uses it: lambda contains alpha / (10 G)).
    tol : float, default=1e-10
        Solver tolerance (projected-gradient / precision goal); it only affects
        whether alpha can be certified, never the guarantee.
    max_iter : int, default=10000
        Iteration limit of each solver call.
    """

    name = "logistic-linear"

    def __init__(
        self,
        domain: str = "box",
        radius: float = 1.0,
        *,
        alpha: float = 1e-4,
        tol: float = 1e-10,
        max_iter: int = 10_000,
    ) -> None:
        self.domain = check_choice(domain, "domain", DOMAINS)
        self.radius = check_positive(radius, "radius")
        self.alpha = check_positive(alpha, "alpha")
        self.tol = check_positive(tol, "tol")
        self.max_iter = int(check_positive(max_iter, "max_iter", integer=True))

    def __repr__(self) -> str:
        return (
            f"LogisticLinearOracle(domain={self.domain!r}, radius={self.radius:g}, "
            f"alpha={self.alpha:g}, tol={self.tol:g}, max_iter={self.max_iter})"
        )

    def problem(
        self,
        X: ArrayLike,
        y: ArrayLike,
        *,
        feature_bound: float = 1.0,
        feature_l1_bound: float | None = None,
    ) -> LogisticProblem:
        """The :class:`LogisticProblem` on this oracle's W."""
        return LogisticProblem.from_data(
            X,
            y,
            domain=self.domain,
            radius=self.radius,
            feature_bound=feature_bound,
            feature_l1_bound=feature_l1_bound,
        )

    def _check_problem(self, problem: Any) -> None:
        if not isinstance(problem, LogisticProblem):
            raise TypeError(f"problem must be a LogisticProblem, got {type(problem).__name__}")
        if problem.domain != self.domain or problem.radius != self.radius:
            raise ValueError(
                f"problem's W ({problem.domain}, radius {problem.radius:g}) differs from the "
                f"oracle's ({self.domain}, radius {self.radius:g})"
            )

    def _minimize(
        self, problem: LogisticProblem, sigma: NDArray[np.float64], w0: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], int, str]:
        r = self.radius

        def fun(w: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
            return problem.objective(w, sigma)

        if self.domain == "box":
            res = minimize(
                fun,
                w0,
                jac=True,
                method="L-BFGS-B",
                bounds=[(-r, r)] * problem.d,
                options={"maxiter": self.max_iter, "ftol": 0.0, "gtol": self.tol, "maxcor": 30},
            )
        else:
            cons = {
                "type": "ineq",
                "fun": lambda w: r * r - w @ w,
                "jac": lambda w: -2.0 * w,
            }
            res = minimize(
                fun,
                w0,
                jac=True,
                method="SLSQP",
                constraints=[cons],
                options={"maxiter": self.max_iter, "ftol": self.tol},
            )
        return problem.project(res.x), int(res.get("nit", 0)), str(res.message)

    def solve(self, problem: LogisticProblem, sigma: ArrayLike) -> ApproxOracleResult:
        """An alpha-approximate minimizer of sum_i l_i(w) - <sigma, w> over W, certified.

        Raises
        ------
        OracleFailure
            When the certified suboptimality bound exceeds the declared alpha.
        """
        self._check_problem(problem)
        s = _check_sigma(problem, sigma)
        t0 = time.perf_counter()
        w = np.zeros(problem.d)
        gap = allowance = math.inf
        nit_total, message = 0, ""
        for _ in range(2):  # one warm restart if the first run stops short of alpha
            w, nit, message = self._minimize(problem, s, w)
            nit_total += nit
            gap, allowance = problem.frank_wolfe_gap(w, s)
            if gap + allowance <= self.alpha:
                break
        f, _ = problem.objective(w, s)
        bound = max(gap, 0.0) + allowance
        result = ApproxOracleResult(
            w=w,
            objective=f,
            gap=bound,
            alpha=self.alpha,
            solver=self.name,
            wall_time=time.perf_counter() - t0,
            status="optimal" if bound <= self.alpha else "gap",
            info={
                "iterations": nit_total,
                "message": message,
                "fw_gap": gap,
                "fp_allowance": allowance,
            },
        )
        if not result.certified:
            raise OracleFailure(
                f"LogisticLinearOracle could not certify its declared error alpha = "
                f"{self.alpha:.3g} within max_iter (the certified bound and gap depend on the "
                "data and stay in the attached result). Declare a larger alpha, lower tol or "
                "raise max_iter.",
                result=result,
            )
        return result
