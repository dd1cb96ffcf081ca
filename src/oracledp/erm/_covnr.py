"""CovNR: covariance perturbation with noise reduction for ridge regression (Accuracy First).

Algorithm 3 and Theorem 3.2 of Ligett, Neel, Roth, Waggoner, Wu, "Accuracy
First: Selecting a Differential Privacy Level for Accuracy-Constrained ERM"
(NeurIPS 2017).  This module holds :class:`RidgeProblem` and :func:`covnr`; what
CovNR shares with OutputNR (the paper: OutputNR "follows the same structure" as
Algorithm 3), the result type :class:`AccuracyFirstResult`, the refusal
:class:`NoHaltError` and the block-wise InteractiveAboveThreshold search, is in
:mod:`oracledp.erm._framework`, and the exact solver of equation (3.1) in
:mod:`oracledp.erm._trust_region` (both re-exported here).

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
   (or the optional one-sided calibration, :func:`oracledp.erm._sensitivity.iat_epsilon`),
   threshold ``-alpha/2`` and ``Delta = (sqrt(1/lambda) + 1)^2 / n`` (Claim A.5) on
   the queries ``f^t = L(theta*) - L(theta^t)``; output ``theta^k`` at the first pass.

Privacy (Theorem 3.2): ex-post differential privacy with loss ``eps_0 + eps_k``
when stopping at level k; infinite if theta* is released (refused by default).

Deviation from the authors' code (not from the paper): the authors solve
``(Z^t) theta = z^t`` and project onto C; equation (3.1) asks for the
constrained minimiser, which is what :func:`trust_region_solve` computes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

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
    NoHaltError,
    _as_problem,
    _check_block,
    _check_common,
    _finish,
    _iat_search,
    _nr_run,
    _single_blas_thread,
)
from oracledp.erm._trust_region import trust_region_solve
from oracledp.mechanisms import InteractiveAboveThreshold, noise_reduction

__all__ = [
    "COVNR_SOURCE",
    "DEFAULT_LAMBDA",
    "AccuracyFirstResult",
    "NoHaltError",
    "RidgeProblem",
    "covnr",
    "trust_region_solve",
]

COVNR_SOURCE = (
    "Ligett et al. 2017 (Accuracy First), Algorithm 3 and Theorem 3.2 "
    "(CovNR; IAT Lemma 2.8, NR Theorem 2.7, sensitivities Claim A.5 and Lemma A.6)"
)

_TOKEN = object()  # problems are built by from_data only (validated data)


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


@fill_doc
def covnr(
    X: ArrayLike | RidgeProblem,
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
    %(af_alpha)s
    %(af_gamma)s
    lam:
        Regularisation lambda > 0 (default 0.005, Appendix B.1; with a prepared
        problem, None or the problem's lambda).
    eps_list:
        The privacy levels: None (Appendix B: T = 1000 geometric levels from 1/n
        to 4E, E from Theorem 3.1), a tuple ``(eps_min, eps_max, T)``, or an
        explicit strictly increasing list/array.
    %(af_random_state)s
    allow_no_halt:
        If no level passes, Algorithm 3 outputs the non-private theta*.  By
        default this raises :class:`NoHaltError` instead; with True, theta* is
        returned with ``epsilon = inf`` and ``guarantee.holds = False``.
    %(af_calibration)s
    block_size:
        Levels evaluated per block of tests (speed only; the law of the output
        does not depend on it).
    max_epsilon:
        A cap on the ex-post loss: the grid is cut to its longest prefix whose worst
        loss ``eps_0(T) + eps_T`` is at most ``max_epsilon``
        (:func:`~oracledp.erm._theory.cap_levels`), so no run, released or refused, loses
        more.  None (default): no cap.  With the default grid
        %(af_max_epsilon_reachable)s
    %(af_return_diagnostics)s

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
    ``|y_i| <= 1``; n, p, lambda, alpha, gamma and the grid are public.  The proof
    composes NoiseReduction on ``X^T X`` and ``X^T y`` (Algorithm 1, Theorem 2.7; each
    of l1 sensitivity 2 at ``eps_t / 2``, Lemma A.6: the prefix up to ``t`` is
    ``eps_t``-DP) with InteractiveAboveThreshold on queries of sensitivity
    ``Delta = (sqrt(1/lambda) + 1)^2 / n`` (Claim A.5), whose ex-post loss is
    ``eps_0 + eps_k`` (Lemma 2.8).

    Accuracy (Theorem 3.2): with probability >= 1 - gamma,
    ``L(theta) - L(theta*) <= alpha``.

    Raises
    ------
    BoundsViolation
        Data outside the domain (before any randomness is used).
    ValueError, TypeError
        Malformed parameters, a cap below the test's own epsilon, or a capped default grid
        hopeless by the theory curve (all before any randomness is used).
    %(af_raises_no_halt)s

    Examples
    --------
    >>> import numpy as np
    >>> from oracledp.erm import covnr
    >>> gen = np.random.default_rng(0)
    >>> X = gen.uniform(-0.5, 0.5, size=(2000, 2))  # ||x_i||_1 <= 1
    >>> y = np.clip(X @ [0.8, -0.4] + 0.05 * gen.normal(size=2000), -1, 1)  # |y_i| <= 1
    >>> res = covnr(X, y, 0.01, lam=1.0, eps_list=(0.01, 10.0, 20), random_state=0)
    >>> res.halted, str(res.guarantee.kind)
    (True, 'ex-post')
    >>> # ex-post loss eps_0 + eps_k (Theorem 3.2): the test's epsilon plus the stopping level
    >>> res.epsilon == res.epsilon_test + float(res.eps_grid[res.stopping_index])
    True
    >>> print(f"stopped at level {res.stopping_index}: epsilon = {res.epsilon:.2f}")
    stopped at level 4: epsilon = 19.22
    """
    t0 = time.perf_counter()
    # --- validation: nothing random happens before this block ends ---------------------------
    checked = _check_common(alpha, gamma, allow_no_halt, return_diagnostics)
    block = _check_block(block_size)
    calib = check_choice(calibration, "calibration", sens.CALIBRATIONS)
    gen = check_rng(random_state)
    problem: RidgeProblem = _as_problem(RidgeProblem, X, y, lam)
    # Algorithm 3: IAT(D, eps_0, -alpha/2, Delta, .), eps_0 = 16 Delta ln(2T/gamma) / alpha
    run, eps_0 = _nr_run(
        "covnr", problem, checked, calib, eps_list, max_epsilon,
        query_sensitivity=sens.ridge_excess_risk_sensitivity(problem.n, problem.lam),  # Claim A.5
        hypothesis_sensitivity=sens.COVARIANCE_SENSITIVITY,
    )
    t1 = time.perf_counter()

    # Small dense linear algebra: one BLAS thread (many threads on tiny matrices only contend).
    with _single_blas_thread():
        # --- hypotheses: NR on X^T X and X^T y, each with sensitivity 2 at eps_t / 2 (Lemma A.6) ----
        half = run.grid / 2.0
        Z = noise_reduction(problem.gram, sens.COVARIANCE_SENSITIVITY, half, gen)
        z = noise_reduction(problem.xty, sens.COVARIANCE_SENSITIVITY, half, gen)
        t2 = time.perf_counter()

        # --- InteractiveAboveThreshold on f^t = L(theta*) - L(theta^t) ----------------------------
        iat = InteractiveAboveThreshold(eps_0, run.threshold, run.query_sensitivity,
                                        random_state=gen)
        thetas: dict[int, NDArray[np.float64]] = {}

        def excess(start: int, stop: int) -> NDArray[np.float64]:
            block_thetas = _ridge_hypotheses(problem, Z[start:stop], z[start:stop])
            for i in range(stop - start):
                thetas[start + i] = block_thetas[i]
            return problem.excess_risk(block_thetas)

        k = _iat_search(iat, excess, int(run.grid.size), block)
        # the final excess risk is evaluated under the same one-thread limit
        t3 = time.perf_counter()
        return _finish(run, iat, k, thetas[k] if k is not None else None, source=COVNR_SOURCE,
                       y_domain="|y_i| <= 1", times=(t0, t1, t2, t3))
