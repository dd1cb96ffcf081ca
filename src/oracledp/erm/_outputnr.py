"""OutputNR: output perturbation with noise reduction for l2-regularised logistic regression.

Algorithm 5 and Theorem 3.4 of Ligett, Neel, Roth, Waggoner, Wu, "Accuracy
First" (NeurIPS 2017), for
``L(theta) = (1/n) sum_i log(1 + exp(-y_i <theta, x_i>)) + lambda ||theta||^2 / 2``,
``||x_i||_1 <= 1``, ``y_i in {-1, +1}``:

1. ``theta* = argmin_{R^p} L`` (non-private; ``||theta*||_2 <= M = sqrt(2 ln 2 / lambda)``, Claim A.11).
2. ``{theta~^t} = NR(theta*, 2 sqrt(p) / (n lambda), {eps_t})`` (Algorithm 1; Lemma A.10).
3. Project: ``theta^t = theta~^t * min(1, M / ||theta~^t||_2)``.
4. InteractiveAboveThreshold with ``eps_0 = 16 Delta ln(2T/gamma) / alpha``,
   threshold ``-alpha/2`` and ``Delta = 2 ln((1 + e^M)/(1 + e^-M)) / n`` (Claim A.12)
   on ``f^t = L(theta*) - L(theta^t)``; output ``theta^k`` at the first pass.

Corrections to the printed Algorithm 5 (each is what Theorem 3.4's proof needs):

* Projection condition: the text rescales when ``||theta^t||_2 <= M``; Claim A.12
  bounds the query sensitivity only for ``||theta||_2 <= M``, so the projection
  must apply when ``||theta^t||_2 > M`` (a projection onto the M-ball).
* Projection radius: the text also defines ``C`` with radius ``sqrt(1/lambda)``
  but never uses it; the radius that makes Claim A.12 (and hence Delta) valid and
  that contains theta* (Claim A.11) is ``M = sqrt(2 ln 2 / lambda)``.
* Threshold sign: the text instantiates IAT with threshold ``+alpha/2``; the
  queries ``f^t = L(theta*) - L(theta^t)`` are <= 0, so that would almost never
  halt (and release theta* with infinite loss).  The accuracy argument of
  Theorems 3.2/3.4 (IAT halts only if ``f^t >= -alpha/2 - alpha/2 = -alpha``,
  Theorem A.1) needs ``-alpha/2``, as in CovNR (Algorithm 3).
* Delta: the printed ``2 log(1 + exp(M))/(1 + exp(-M))/(n)`` is
  mis-parenthesised; Claim A.12's ``2 log((1 + e^M)/(1 + e^-M)) / n`` is used
  (it equals ``2M/n``, matching Theorem 3.4's ``eps_0``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse
from scipy.special import expit

from oracledp._docstrings import fill_doc
from oracledp._validation import (
    RandomLike,
    check_choice,
    check_positive,
    check_rng,
)
from oracledp.erm import _sensitivity as sens
from oracledp.erm._framework import (
    DEFAULT_LAMBDA,
    AccuracyFirstResult,
    _as_problem,
    _check_block,
    _check_common,
    _EnclosedExcess,
    _finish,
    _iat_search,
    _nr_run,
    _single_blas_thread,
)
from oracledp.erm._trust_region import _shrink_into_ball
from oracledp.mechanisms import InteractiveAboveThreshold, noise_reduction

__all__ = ["OUTPUTNR_SOURCE", "SEARCHES", "LogisticProblem", "outputnr", "project_to_ball"]

#: How :func:`outputnr` answers its tests: ``"enclosed"`` (certified bounds decide most tests;
#: fast; the number of passes over the data is not a function of the release) or
#: ``"exhaustive"`` (every tested level's exact excess risk; the number of passes is a
#: function of the released stopping index).  The releases are the same bit for bit.
SEARCHES = ("enclosed", "exhaustive")

OUTPUTNR_SOURCE = (
    "Ligett et al. 2017 (Accuracy First), Algorithm 5 and Theorem 3.4 "
    "(OutputNR; IAT Lemma 2.8, NR Theorem 2.7, sensitivities Lemma A.10 and Claim A.12)"
)

_TOKEN = object()
# log1p(exp(z)) is evaluated directly when |z| stays below this (no overflow); see _softplus.
_DIRECT_LIMIT = 700.0
# Rounding allowance of LogisticProblem.excess_risk_enclosure: a multiple of the worst-case
# relative error of the sums involved (Higham's gamma_m ~ m 2^-53 for m terms), plus 1e-12 for
# the closed forms of _remainder_factors.  It makes the bounds hold for the *computed* excess
# risk and costs nothing measurable: IAT's query noise has scale alpha / (4 ln(2T/gamma)).
_ENCLOSURE_SAFETY = 64.0
_FACTOR_RTOL = 1e-12
# Beyond this R, b(R) >= e^40 / 1600 ~ 1.5e14 and the data-free cap R^2 / 8 (always valid) is used.
_R_CAP = 40.0


def project_to_ball(thetas: ArrayLike, radius: float) -> NDArray[np.float64]:
    """Rows scaled by ``min(1, radius / ||theta||_2)``: the l2 projection onto the ball.

    Rows outside are scaled to norm ``radius (1 - 1e-12)`` (a margin far above
    rounding, so the norm stays below the radius however it is computed).
    """
    th = np.array(thetas, dtype=np.float64, ndmin=2)
    return _shrink_into_ball(th, radius)


def _softplus_inplace(z: NDArray[np.float64], bound: float) -> NDArray[np.float64]:
    """``log(1 + exp(z))`` in place; direct formula when ``|z| <= bound < 700`` (no overflow)."""
    if bound <= _DIRECT_LIMIT:
        np.exp(z, out=z)
        np.log1p(z, out=z)
        return z
    return np.logaddexp(0.0, z, out=z)


@dataclass(frozen=True, eq=False)
class LogisticProblem:
    """Validated logistic-regression data with the non-private optimum theta*.

    Build with :meth:`from_data`; reuse it across runs of :func:`outputnr` and
    the DoublingMethod on the same data (theta* and the compressed data do not
    change between trials).  It holds the private data and theta*: never publish it.

    The loss depends on a record only through ``u_i = y_i x_i``; identical
    ``u_i`` are merged with integer multiplicities (``weights = count / n``),
    which leaves ``L`` unchanged and makes evaluating many hypotheses cheaper
    (KDD-99 has many duplicate records).

    theta* is computed by damped Newton's method until ``||grad L(theta)||_2 <= tol``;
    by lambda-strong convexity the computed point is within ``tol / lambda`` of
    the exact minimiser (``theta_star_error_bound``).  The privacy analysis
    (Lemma A.10) is about the exact minimiser (idealized numerics).

    :meth:`loss` and :meth:`excess_risk` are batch-invariant: each theta's value is
    computed on its own, in a fixed order of floating-point operations (see
    :func:`_fixed_order_loss`), so it is the same bit for bit whatever other thetas
    are evaluated with it, in which order, and however many BLAS threads run.  The
    tests of OutputNR compare these values with noise, so the release cannot depend
    on how the levels were grouped.
    """

    n: int
    p: int
    lam: float
    rows: NDArray[np.float64]
    weights: NDArray[np.float64]
    theta_star: NDArray[np.float64]
    loss_star: float
    radius: float
    grad_norm: float
    newton_iterations: int
    _token: object = field(default=None, repr=False, compare=False)
    # rows as a CSR matrix with sorted column indices: fixes the order of each margin's sum
    _margins: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self._token is not _TOKEN:
            raise TypeError("build a LogisticProblem with LogisticProblem.from_data(X, y, lam)")

    @property
    def theta_star_error_bound(self) -> float:
        """``||theta_computed - theta*||_2 <= ||grad|| / lambda`` (strong convexity)."""
        return self.grad_norm / self.lam

    @classmethod
    def from_data(
        cls,
        X: ArrayLike,
        y: ArrayLike,
        lam: float = DEFAULT_LAMBDA,
        *,
        tol: float = 1e-11,
        max_iter: int = 100,
    ) -> LogisticProblem:
        """Check the domain (``||x_i||_1 <= 1``, ``y_i in {-1, +1}``), compress, and solve for theta*.

        Raises BoundsViolation (naming the bound) for data outside the domain,
        ValueError/TypeError for malformed input, RuntimeError if Newton's method
        does not reach ``tol``.  Draws no randomness.
        """
        lam_ = check_positive(lam, "lam")
        tol_ = check_positive(tol, "tol")
        Xa = sens.check_l1_rows(X, "X")
        n, p = Xa.shape
        ya = sens.check_logistic_labels(y, n, "y")
        U = Xa * ya[:, None]
        rows, counts = np.unique(U, axis=0, return_counts=True)
        weights = counts.astype(np.float64) / n
        radius = sens.logistic_radius(lam_)
        with _single_blas_thread():
            theta, gnorm, its = _newton(rows, weights, lam_, tol_, max_iter)
        # Claim A.11: ||theta*|| <= M.  A computed optimum outside would break Claim A.12.
        if np.linalg.norm(theta) > radius:  # pragma: no cover - impossible for the exact optimum
            raise RuntimeError(
                f"computed theta* has norm > M = {radius!r} (Claim A.11); refusing"
            )
        margins = _margin_matrix(rows)
        loss_star = _fixed_order_loss(margins, weights, lam_, theta)
        for a in (rows, weights, theta):
            a.setflags(write=False)
        return cls(
            n=n,
            p=p,
            lam=lam_,
            rows=rows,
            weights=weights,
            theta_star=theta,
            loss_star=loss_star,
            radius=radius,
            grad_norm=gnorm,
            newton_iterations=its,
            _token=_TOKEN,
            _margins=margins,
        )

    def loss(self, thetas: ArrayLike) -> NDArray[np.float64]:
        """``L(theta)`` for each row of ``thetas`` (shape (k, p)) or a single theta.

        Batch-invariant: row ``t`` of the result depends on ``thetas[t]`` only (one
        pass over the data per row, in the fixed order of :func:`_fixed_order_loss`).
        """
        th = np.atleast_2d(np.asarray(thetas, dtype=np.float64))
        if th.ndim != 2 or th.shape[1] != self.p:
            raise ValueError(f"thetas must have shape (k, {self.p}), got {th.shape}")
        out = np.empty(th.shape[0])
        for t in range(th.shape[0]):
            out[t] = _fixed_order_loss(self._margins, self.weights, self.lam, th[t])
        return out

    def excess_risk(self, thetas: ArrayLike) -> NDArray[np.float64]:
        """``L(theta) - L(theta*)`` for each row; batch-invariant like :meth:`loss`.

        OutputNR's tests use these values whichever way the levels are searched
        (``search="enclosed"`` asks for a few levels at a time, ``"exhaustive"`` for
        whole blocks): the same level gets the same value bit for bit, so a test decided
        by one ulp is decided the same way by both.
        """
        return self.loss(thetas) - self.loss_star

    def excess_risk_enclosure(
        self, thetas: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Certified ``(lower, upper)`` with ``lower <= excess_risk(theta) <= upper`` per row.

        Costs O(p^2) per theta instead of a pass over the data.  OutputNR's test uses
        it to answer the queries the bounds decide and computes :meth:`excess_risk`
        only for the others (:meth:`InteractiveAboveThreshold.first_above_enclosed`).

        Derivation, with ``d = theta - theta*``: along ``s -> theta* + s d`` the data
        term ``phi(s) = sum_j w_j l(m_j + s delta_j)`` (``l(m) = log(1 + e^-m)``,
        ``m_j = <u_j, theta*>``, ``delta_j = <u_j, d>``) has
        ``phi''(s) = sum_j w_j l''(m_j + s delta_j) delta_j^2``.  ``l'' = sigma (1 - sigma)``
        satisfies ``|l'''| <= l''`` and ``l'' <= 1/4``, so ``l''(m + t) / l''(m)`` lies in
        ``[e^-|t|, e^|t|]``.  With ``|delta_j| <= R = min(max_j ||u_j||_1 ||d||_inf,
        max_j ||u_j||_2 ||d||_2)`` and ``Q = d^T H d`` (``H``: the data Hessian at
        theta*), ``phi''(s)`` lies in ``[e^{-sR} Q, e^{sR} Q]`` and below
        ``sum_j w_j delta_j^2 / 4 <= R^2 / 4``.  Taylor's formula
        ``phi(1) = phi(0) + phi'(0) + int_0^1 (1 - s) phi''(s) ds`` and the exact
        regulariser ``lambda <theta*, d> + lambda ||d||^2 / 2`` give

            ``L(theta) - L(theta*) = <grad L(theta*), d> + lambda ||d||^2 / 2 + rem``,
            ``Q a(R) <= rem <= min(Q b(R), R^2 / 8)``,

        ``a(R) = (e^-R - 1 + R) / R^2``, ``b(R) = (e^R - 1 - R) / R^2``, and
        ``|<grad L(theta*), d>| <= ||grad L(theta*)||_2 ||d||_2``.

        Rounding: ``grad_norm``, ``Q``, ``L(theta)`` and ``L(theta*)`` are computed
        sums of at most ``m = rows + p`` terms; each gets its worst-case error bound
        (``gamma = 2 (m + 8) 2^-53`` times the sum of the absolute terms) times
        ``_ENCLOSURE_SAFETY``, so the bounds hold for the *computed* excess risk.
        """
        th = np.atleast_2d(np.asarray(thetas, dtype=np.float64))
        hessian, hessian_abs, l1_max, l2_max = self._enclosure_constants
        gamma = 2.0 * (self.rows.shape[0] + self.p + 8) * 2.0**-53
        d = th - self.theta_star
        dist = np.sqrt(np.einsum("ki,ki->k", d, d))
        R = np.minimum(l1_max * np.max(np.abs(d), axis=1, initial=0.0), l2_max * dist)
        a, b = _remainder_factors(R)
        quad = np.einsum("ki,ki->k", d @ hessian, d)
        absd = np.abs(d)
        quad_err = _ENCLOSURE_SAFETY * gamma * np.einsum("ki,ki->k", absd @ hessian_abs, absd)
        cap = R**2 / 8.0
        rem_lo = a * np.maximum(quad - quad_err, 0.0)  # Q >= 0: H is positive semidefinite
        rem_hi = np.where(R <= _R_CAP, np.minimum(b * np.maximum(quad + quad_err, 0.0), cap), cap)
        ridge = 0.5 * self.lam * dist**2
        star_norm = float(np.linalg.norm(self.theta_star))
        # grad_norm was computed: its error is below gamma (l2_max + lambda ||theta*||)
        grad = self.grad_norm + _ENCLOSURE_SAFETY * gamma * (l2_max + self.lam * star_norm)
        lower = ridge - grad * dist + rem_lo
        upper = ridge + grad * dist + rem_hi
        # L(theta) and L(theta*) sum softplus terms whose arguments are at most
        # l2_max ||theta|| in size, with ||theta|| <= ||theta*|| + ||d||.
        scale = 1.0 + abs(self.loss_star) + np.abs(lower) + np.abs(upper)
        scale += l2_max * (2.0 * star_norm + dist)
        slack = (_ENCLOSURE_SAFETY * gamma + _FACTOR_RTOL) * scale
        return lower - slack, upper + slack

    @cached_property
    def _enclosure_constants(
        self,
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], float, float]:
        """``(H, |H|, max_j ||u_j||_1, max_j ||u_j||_2)`` for :meth:`excess_risk_enclosure`.

        ``H = sum_j w_j l''(m_j) u_j u_j^T`` and ``|H| = sum_j w_j l''(m_j) |u_j| |u_j|^T``
        (which bounds H's rounding).  One pass over the data, once per problem (cached
        on the instance, which is reused across trials).
        """
        s = expit(self.rows @ self.theta_star)
        curv = self.weights * s * (1.0 - s)  # w_j l''(m_j)
        hessian = (self.rows.T * curv) @ self.rows
        absrows = np.abs(self.rows)
        hessian_abs = (absrows.T * curv) @ absrows
        l1_max = float(absrows.sum(axis=1).max())
        l2_max = float(np.sqrt(np.einsum("ji,ji->j", self.rows, self.rows).max()))
        return hessian, hessian_abs, l1_max, l2_max


def _remainder_factors(R: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``a <= int_0^1 (1-s) e^{-sR} ds`` and ``b >= int_0^1 (1-s) e^{sR} ds``, elementwise.

    Closed forms for ``R >= 1e-3`` (relative rounding below ``_FACTOR_RTOL`` there);
    below, the series ``1/2 -+ R/6 + R^2/24 -+ ...`` cut to a lower bound (alternating)
    and to an upper bound (tail ``<= R^2/24 e^R <= R^2/12``), which also avoids 0/0.
    ``b`` is computed at ``min(R, _R_CAP)`` (no overflow): beyond, it is not a bound and
    the caller uses the cap instead.
    """
    small = R < 1e-3
    r = np.where(small, 1.0, R)
    a = np.where(small, 0.5 - R / 6.0, (np.expm1(-r) + r) / r**2)
    rb = np.minimum(r, _R_CAP)
    b = np.where(small, 0.5 + R / 6.0 + R**2 / 12.0, (np.expm1(rb) - rb) / rb**2)
    return a, b


def _margin_matrix(rows: NDArray[np.float64]) -> sparse.csr_array:
    """``rows`` in CSR form with sorted column indices (and no explicit zeros)."""
    margins = sparse.csr_array(rows)
    margins.sum_duplicates()  # sorts the indices of each row
    if not margins.has_canonical_format:  # pragma: no cover - guaranteed by sum_duplicates
        raise RuntimeError("internal error: CSR matrix not in canonical format")
    return margins


def _fixed_order_loss(
    margins: sparse.csr_array, weights: NDArray[np.float64], lam: float, theta: ArrayLike
) -> float:
    """``L(theta) = sum_j w_j log(1 + exp(-<u_j, theta>)) + lambda ||theta||^2 / 2`` for one theta.

    A fixed sequence of floating-point operations on arrays whose shapes depend only on
    the data, never on which other thetas are being evaluated (batch-invariant):

    * margin ``-<u_j, theta>``: SciPy's CSR matrix-vector product, for each ``j`` the
      sequential sum ``((0 + u_{j,i1} (-theta_{i1})) + u_{j,i2} (-theta_{i2})) + ...`` over
      the nonzero entries of ``u_j`` in increasing column order (exact zeros add nothing);
      no BLAS, so no dependence on the BLAS kernel, thread count or memory alignment;
    * ``log(1 + exp(.))`` elementwise on that 1-D array (direct formula when ``||theta||_2``,
      a bound on every margin, is at most 700, else ``logaddexp``: decided per theta);
    * the weighted sum: ``np.add.reduce`` (NumPy's pairwise summation, whose order
      depends only on the length) of ``w_j * softplus_j``, and ``||theta||^2`` likewise.
    """
    t = np.array(theta, dtype=np.float64)  # a 1-D copy
    sq = float(np.add.reduce(t * t))
    z = margins @ np.negative(t)
    z = _softplus_inplace(z, math.sqrt(sq))
    z *= weights
    return float(np.add.reduce(z)) + 0.5 * lam * sq


def _loss(
    rows: NDArray[np.float64], weights: NDArray[np.float64], lam: float, th: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``sum_j w_j log(1 + exp(-<u_j, theta>)) + lambda ||theta||^2 / 2`` per row of th.

    Newton's method only (fast BLAS products; *not* batch-invariant).  The losses the
    tests compare with noise come from :func:`_fixed_order_loss`.
    """
    sq = np.einsum("ki,ki->k", th, th)
    # |<u_j, theta>| <= ||u_j||_2 ||theta||_2 <= ||theta||_2 since ||x||_2 <= ||x||_1 <= 1.
    z = rows @ (-th.T)
    z = _softplus_inplace(z, float(np.sqrt(sq.max())) if sq.size else 0.0)
    return weights @ z + 0.5 * lam * sq


def _newton(
    rows: NDArray[np.float64],
    weights: NDArray[np.float64],
    lam: float,
    tol: float,
    max_iter: int,
) -> tuple[NDArray[np.float64], float, int]:
    """Damped Newton's method for the strongly convex logistic objective; (theta, ||grad||, iterations)."""
    p = rows.shape[1]
    theta = np.zeros(p)
    f = float(_loss(rows, weights, lam, theta[None])[0])
    eye = np.eye(p)
    for it in range(max_iter + 1):
        s = expit(-(rows @ theta))  # = -d/dm log(1 + e^-m) at m = <u, theta>
        grad = -(rows.T @ (weights * s)) + lam * theta
        gnorm = float(np.linalg.norm(grad))
        if gnorm <= tol:
            return theta, gnorm, it
        if it == max_iter:
            break
        h = weights * s * (1.0 - s)
        H = (rows.T * h) @ rows + lam * eye
        step = np.linalg.solve(H, grad)
        decrement = float(grad @ step)
        if gnorm < 1e-6:  # quadratic-convergence region: full Newton steps
            theta = theta - step
            f = float(_loss(rows, weights, lam, theta[None])[0])
            continue
        t = 1.0
        while True:
            cand = theta - t * step
            fc = float(_loss(rows, weights, lam, cand[None])[0])
            if fc <= f - 1e-4 * t * decrement or t < 1e-10:
                break
            t *= 0.5
        theta, f = cand, fc
    raise RuntimeError(
        f"Newton's method did not reach ||grad L|| <= {tol:g} in {max_iter} iterations; "
        "theta* is needed exactly for the privacy analysis, so nothing "
        "is released"
    )


@fill_doc
def outputnr(
    X: ArrayLike | LogisticProblem,
    y: ArrayLike | None,
    alpha: float,
    *,
    gamma: float = 0.1,
    lam: float | None = None,
    eps_list: ArrayLike | tuple[float, float, int] | None = None,
    random_state: RandomLike = None,
    allow_no_halt: bool = False,
    calibration: str = "paper",
    block_size: int = 32,
    search: str = "enclosed",
    return_diagnostics: bool = False,
    max_epsilon: float | None = None,
) -> AccuracyFirstResult:
    """OutputNR (Algorithm 5, corrected): the most private logistic hypothesis with excess risk <= alpha.

    Parameters
    ----------
    X, y:
        Features with ``||x_i||_1 <= 1`` and labels in {-1, +1}; or a prepared
        :class:`LogisticProblem` as ``X`` with ``y=None`` (reuses theta*).
    %(af_alpha)s
    %(af_gamma)s
    lam:
        Regularisation lambda > 0 (default 0.005, Appendix B.1).
    eps_list:
        None (Appendix B: T = 1000 geometric levels from 1/n to 4E, E from
        Theorem 3.3), a tuple ``(eps_min, eps_max, T)``, or explicit levels.
    %(af_random_state)s
    allow_no_halt:
        Release theta* (``epsilon = inf``, ``guarantee.holds = False``) when no
        level passes, instead of raising :class:`~oracledp.erm.NoHaltError`.
    %(af_calibration)s
    block_size:
        Levels evaluated per block of tests (speed only).
    search:
        How the tests are answered (the releases are the same bit for bit; see Timing
        below).  ``"enclosed"`` (default): certified O(p^2) bounds on each level's
        excess risk decide almost every test and the data are read only for the levels
        they leave open (a few per run).  ``"exhaustive"``: every level of every block
        up to the halting block is evaluated exactly (one pass over the data per level:
        about 600 passes per run on KDD-99 with n = 100,000, 0.35 s instead of 0.015 s),
        so the number of passes is a function of the released stopping index and
        ``block_size``.
    %(af_return_diagnostics)s

    max_epsilon:
        A cap on the ex-post loss: the grid is cut to its longest prefix whose worst
        loss ``eps_0(T) + eps_T`` is at most ``max_epsilon``
        (:func:`~oracledp.erm._theory.cap_levels`), so no run loses
        more.  None (default): no cap.  With the default grid
        %(af_max_epsilon_reachable)s

    Returns
    -------
    AccuracyFirstResult

    Privacy
    -------
    Ex-post differential privacy (Definition 2.3), Theorem 3.4: stopping at level
    ``k`` the loss is ``eps_0 + eps_k`` with
    ``eps_0 = 16 Delta ln(2T/gamma) / alpha = 32 M ln(2T/gamma) / (n alpha)``,
    ``M = sqrt(2 ln 2 / lambda)`` (``calibration="paper"``; ``Delta (12 ln(1/gamma) +
    8 ln(T/2)) / alpha`` with ``"one-sided"``); infinite if theta* is released.  Replace-one
    neighbours, domain ``||x_i||_1 <= 1``, ``y_i in {-1, +1}``.  The proof composes
    NoiseReduction on theta* (Theorem 2.7, l1 sensitivity ``2 sqrt(p) / (n lambda)``,
    Lemma A.10) with InteractiveAboveThreshold (Lemma 2.8) on queries of sensitivity
    ``Delta = 2 ln((1 + e^M)/(1 + e^-M)) / n`` (Claim A.12, valid for hypotheses in the
    M-ball).  The printed Algorithm 5 is corrected as that proof needs (module
    docstring of :mod:`oracledp.erm._outputnr`): hypotheses outside the M-ball,
    ``M = sqrt(2 ln 2 / lambda)``, are projected onto it (the printed condition rescales
    those inside), the test threshold is ``-alpha/2`` (the text has ``+alpha/2``) and
    Delta is Claim A.12's (the printed formula is mis-parenthesised).

    Accuracy (Theorem 3.4): with probability >= 1 - gamma,
    ``L(theta) - L(theta*) <= alpha``.

    Timing
    ------
    The guarantee covers the released output, not the running time.  With
    ``search="enclosed"`` the number of exact passes over the data is a function of
    the private data and of noise that is never released (see
    :meth:`~oracledp.mechanisms.InteractiveAboveThreshold.first_above_enclosed`), so
    the wall time can reveal it.  ``search="exhaustive"`` makes that number
    ``min(T, block_size * ceil((k + 1) / block_size))`` (``T`` with no halt), a function
    of the release.  Other costs stay data-dependent in both modes (not covered
    either): building the problem (the number of distinct records ``y_i x_i``, which
    sets the cost of a pass, and Newton's iteration count for theta*) and
    ``log(1 + exp)``'s formula switch for hypotheses of norm above 700 (``lambda`` below
    about 2.8e-6).

    Raises
    ------
    BoundsViolation, ValueError, TypeError
        Before any randomness is used (also a cap below the test's own epsilon, or a capped
        default grid hopeless by the theory curve).
    %(af_raises_no_halt)s

    Examples
    --------
    A prepared problem (theta* computed once) searched with two seeds: the ex-post loss
    ``eps_0 + eps_k`` (Theorem 3.4) depends on the level ``k`` where each run stopped.

    >>> import numpy as np
    >>> from oracledp.erm import LogisticProblem, outputnr
    >>> gen = np.random.default_rng(1)
    >>> X = gen.uniform(-0.5, 0.5, size=(2000, 2))  # ||x_i||_1 <= 1
    >>> y = np.where(X[:, 0] - X[:, 1] + 0.1 * gen.normal(size=2000) > 0, 1, -1)
    >>> problem = LogisticProblem.from_data(X, y, lam=1.0)
    >>> runs = [outputnr(problem, None, 0.01, eps_list=(0.01, 10.0, 20), random_state=s)
    ...         for s in (0, 1)]
    >>> [(r.stopping_index, round(r.epsilon, 2)) for r in runs]
    [(2, 11.31), (3, 11.32)]
    >>> str(runs[0].guarantee.kind), runs[0].threshold  # the test at -alpha/2 (corrected sign)
    ('ex-post', -0.005)
    """
    t0 = time.perf_counter()
    # --- validation: nothing random happens before this block ends ---------------------------
    checked = _check_common(alpha, gamma, allow_no_halt, return_diagnostics)
    block = _check_block(block_size)
    calib = check_choice(calibration, "calibration", sens.CALIBRATIONS)
    mode = check_choice(search, "search", SEARCHES)
    gen = check_rng(random_state)
    problem: LogisticProblem = _as_problem(LogisticProblem, X, y, lam)
    n, p, lam_ = problem.n, problem.p, problem.lam
    # Algorithm 5 / Theorem 3.4: eps_0 = 16 Delta ln(2T/gamma) / alpha; threshold -alpha/2
    # (corrected sign, module docstring)
    run, eps_0 = _nr_run(
        "outputnr", problem, checked, calib, eps_list, max_epsilon,
        query_sensitivity=sens.logistic_excess_risk_sensitivity(n, lam_),  # Claim A.12
        hypothesis_sensitivity=sens.output_l1_sensitivity(n, p, lam_),  # Lemma A.10
    )
    M = problem.radius  # sqrt(2 ln 2 / lambda), Claim A.11
    t1 = time.perf_counter()

    # Small dense linear algebra: one BLAS thread (many threads on tiny matrices only contend).
    with _single_blas_thread():
        # --- hypotheses: NR on theta* (l1 sensitivity 2 sqrt(p)/(n lambda), Lemma A.10), then the
        # projection onto the M-ball (corrected condition) -----------------------------------------
        raw = noise_reduction(problem.theta_star, run.hypothesis_sensitivity, run.grid, gen)
        thetas = project_to_ball(raw, M)
        t2 = time.perf_counter()

        # --- InteractiveAboveThreshold on f^t = L(theta*) - L(theta^t) ----------------------------
        iat = InteractiveAboveThreshold(eps_0, run.threshold, run.query_sensitivity,
                                        random_state=gen)
        excess: Callable[[int, int], NDArray[np.float64]] | _EnclosedExcess
        if mode == "enclosed":
            # Certified O(p^2) bounds on each level's excess risk decide almost every test;
            # the data are read only for the levels they leave open.  The answers and the
            # noise are those of testing the exact excess risks (first_above_enclosed), only
            # cheaper; excess_risk is batch-invariant, so the exact values are the ones the
            # exhaustive search computes, bit for bit.
            lower, upper = problem.excess_risk_enclosure(thetas)
            excess = _EnclosedExcess(lower, upper, lambda idx: problem.excess_risk(thetas[idx]))
        else:
            # Every level of each block, exactly: the passes over the data are a function of
            # the released stopping index (see Timing above).
            def exact_block(start: int, stop: int) -> NDArray[np.float64]:
                return problem.excess_risk(thetas[start:stop])

            excess = exact_block
        k = _iat_search(iat, excess, int(run.grid.size), block)
        # the final excess risk is evaluated under the same one-thread limit
        t3 = time.perf_counter()
        return _finish(run, iat, k, thetas[k] if k is not None else None, source=OUTPUTNR_SOURCE,
                       y_domain="y_i in {-1, +1}", times=(t0, t1, t2, t3))
