"""The DoublingMethod baseline of Accuracy First (Algorithm 4, Theorem A.2).

Ligett, Neel, Roth, Waggoner, Wu, "Accuracy First" (NeurIPS 2017), Appendix A.2.
For privacy levels ``eps_1 < eps_2 < ...`` with ``eps_i = 2 eps_(i-1)``:

    for t = 1..T:
        theta_t <- M(D) at level eps_t          (fresh, independent noise)
        f^t = L(theta*) - L(theta_t)
        w_t ~ Lap(alpha / (2 ln(T / gamma)))
        if f^t + w_t >= -alpha/2: output (t, theta_t); halt
    output (T + 1, theta*)

``M`` is covariance perturbation for ridge regression (Theorem 3.1: every entry
of ``X^T X`` and ``X^T y`` gets ``Lap(4/eps)``, then equation 3.1 over the
``sqrt(1/lambda)``-ball) or output perturbation for logistic regression
(Theorem 3.3: ``theta* + Lap(2 sqrt(p)/(n lambda eps))``, then projected onto the
``sqrt(2 ln 2/lambda)``-ball so the query sensitivity holds, Remark A.3).  The
printed algorithm outputs ``(t, f^t)``; what is released is the hypothesis
``theta_t`` (the proof and the experiments release it), never the noisy test value.

Privacy (Theorem A.2): stopping at the k-th test (1-based) the ex-post loss is
``E(k) = 2 k Delta ln(T/gamma) / alpha + (2^k - 1) eps_1`` (k Laplace tests of
epsilon ``2 Delta ln(T/gamma)/alpha`` each plus the k hypotheses, composed with
the privacy filter of Rogers et al. 2016, Theorem 3.6); releasing theta* is
infinite.  For a general increasing list the hypothesis part is
``sum_{i <= k} eps_i``; this implementation always reports that sum (equal to
``(2^k - 1) eps_1`` on a doubling grid).

T: Appendix B prints ``T = ceil(log2(eps_1 / eps_T))`` with the ends swapped;
the default grid is :func:`~oracledp.erm._theory.doubling_grid` from ``1/n`` to
``4E``, ``T = ceil(log2(4E n)) + 1`` levels (see there).
"""

from __future__ import annotations

import math
import time

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._docstrings import fill_doc
from oracledp._validation import RandomLike, check_choice, check_rng
from oracledp.erm import _sensitivity as sens
from oracledp.erm._covnr import RidgeProblem, _ridge_hypotheses
from oracledp.erm._framework import (
    AccuracyFirstResult,
    NoHaltError,
    _as_problem,
    _check_common,
    _levels,
    _no_halt_error,
    _released_theta,
    _result,
    _Run,
    _single_blas_thread,
)
from oracledp.erm._outputnr import LogisticProblem, project_to_ball
from oracledp.mechanisms import ExPostLoss
from oracledp.privacy import _noise as noise

__all__ = ["DOUBLING_SOURCE", "doubling"]

DOUBLING_SOURCE = (
    "Ligett et al. 2017 (Accuracy First), Algorithm 4 and Theorem A.2 (DoublingMethod; "
    "composition by the privacy filter of Rogers et al. 2016, Theorem 3.6)"
)

#: l1 sensitivity of the pair (X^T X, X^T y) for covariance perturbation (Theorem 3.1: 2 + 2).
COVPERT_JOINT_SENSITIVITY = 2.0 * sens.COVARIANCE_SENSITIVITY


@fill_doc
def doubling(
    X: ArrayLike | RidgeProblem | LogisticProblem,
    y: ArrayLike | None,
    alpha: float,
    *,
    task: str | None = None,
    gamma: float = 0.1,
    lam: float | None = None,
    eps_list: ArrayLike | tuple[float, float] | None = None,
    random_state: RandomLike = None,
    allow_no_halt: bool = False,
    return_diagnostics: bool = False,
    max_epsilon: float | None = None,
) -> AccuracyFirstResult:
    """DoublingMethod (Algorithm 4): double epsilon until a Laplace test accepts the hypothesis.

    Parameters
    ----------
    X, y:
        The data (``||x_i||_1 <= 1``; ``|y_i| <= 1`` for ridge, ``y_i in {-1, +1}``
        for logistic) or a prepared :class:`RidgeProblem` / :class:`LogisticProblem`
        with ``y=None``.
    alpha, gamma, lam:
        Target excess risk, failure probability in (0, 1), regularisation (0.005).
    task:
        ``"ridge"`` (covariance perturbation) or ``"logistic"`` (output
        perturbation); required with arrays, inferred from a prepared problem.
    eps_list:
        None (doubling grid from 1/n to 4E, E from Theorem 3.1 or 3.3), a tuple
        ``(eps_min, eps_max)`` (:func:`~oracledp.erm._theory.doubling_grid`), or
        explicit strictly increasing levels.
    %(af_random_state)s
    allow_no_halt:
        Release theta* (``epsilon = inf``, ``guarantee.holds = False``) when no test
        passes, instead of raising :class:`~oracledp.erm.NoHaltError`.
    %(af_return_diagnostics)s
    max_epsilon:
        A cap on the ex-post loss: the grid is cut to its longest prefix whose worst
        loss ``E(T)`` is at most ``max_epsilon`` (:func:`~oracledp.erm._theory.cap_levels`),
        so no run loses more.  None (default): no cap.  With the default grid
        %(af_max_epsilon_reachable)s

    Returns
    -------
    AccuracyFirstResult
        ``method`` is ``"doubling-covpert"`` or ``"doubling-outpert"``;
        ``ex_post.epsilon_test`` is the k tests' total and
        ``ex_post.epsilon_hypothesis`` the k hypotheses' total.

    Privacy
    -------
    Ex-post differential privacy, Theorem A.2: stopping at the k-th level (1-based)
    the loss is ``2 k Delta ln(T/gamma)/alpha + sum_{i<=k} eps_i``
    (``= E(k)`` with ``(2^k - 1) eps_1`` on a doubling grid): k Laplace tests
    ``Lap(alpha / (2 ln(T/gamma)))`` on queries of sensitivity Delta (Claim A.5 or
    A.12), each ``2 Delta ln(T/gamma)/alpha``-DP, plus the k independent eps_i-DP
    hypotheses (covariance perturbation, Theorem 3.1 and Lemma A.6; output
    perturbation, Theorem 3.3 and Lemma A.10), composed with the privacy filter of
    Rogers et al. 2016, Theorem 3.6.  Infinite if theta* is released.  What is
    released is the hypothesis ``theta_t``, never the noisy test value.  Accuracy: with
    probability >= 1 - gamma, ``L(theta) - L(theta*) <= alpha``.

    Examples
    --------
    >>> import numpy as np
    >>> from oracledp.erm import doubling
    >>> gen = np.random.default_rng(0)
    >>> X = gen.uniform(-0.5, 0.5, size=(2000, 2))  # ||x_i||_1 <= 1
    >>> y = np.clip(X @ [0.8, -0.4] + 0.05 * gen.normal(size=2000), -1, 1)  # |y_i| <= 1
    >>> res = doubling(X, y, 0.01, task="ridge", lam=1.0, eps_list=(0.01, 10.0), random_state=0)
    >>> res.method, str(res.guarantee.kind), res.stopping_index
    ('doubling-covpert', 'ex-post', 2)
    >>> # Theorem A.2: k = 3 Laplace tests plus the hypotheses at 0.01, 0.02 and 0.04
    >>> print(f"{res.epsilon_test:.4f} + {res.epsilon_hypothesis:.2f} = {res.epsilon:.4f}")
    5.6406 + 0.07 = 5.7106
    """
    t0 = time.perf_counter()
    # --- validation: nothing random happens before this block ends ---------------------------
    a, g, allow, want_diag = _check_common(alpha, gamma, allow_no_halt, return_diagnostics)
    gen = check_rng(random_state)
    if isinstance(X, RidgeProblem):
        task_ = "ridge"
    elif isinstance(X, LogisticProblem):
        task_ = "logistic"
    elif task is None:
        raise ValueError("task must be 'ridge' or 'logistic' when X is an array")
    else:
        task_ = check_choice(task, "task", ("ridge", "logistic"))
    if task is not None and check_choice(task, "task", ("ridge", "logistic")) != task_:
        raise ValueError(f"task={task!r} does not match the prepared {type(X).__name__}")
    problem: RidgeProblem | LogisticProblem
    if task_ == "ridge":
        problem = _as_problem(RidgeProblem, X, y, lam)
        method = "doubling-covpert"
        Delta = sens.ridge_excess_risk_sensitivity(problem.n, problem.lam)  # Claim A.5
        hyp_sensitivity = COVPERT_JOINT_SENSITIVITY
    else:
        problem = _as_problem(LogisticProblem, X, y, lam)
        method = "doubling-outpert"
        Delta = sens.logistic_excess_risk_sensitivity(problem.n, problem.lam)  # Claim A.12
        hyp_sensitivity = sens.output_l1_sensitivity(problem.n, problem.p, problem.lam)
    n, p, lam_ = problem.n, problem.p, problem.lam
    grid = _levels(method, n, p, lam_, a, allow, eps_list, max_epsilon,
                   # E(T) of Theorem A.2: T tests and T hypotheses
                   lambda lv: 2 * lv.size * Delta * math.log(lv.size / g) / a
                   + math.fsum(lv.tolist()))
    T = int(grid.size)
    test_scale = sens.doubling_test_scale(a, g, T)  # Algorithm 4: Lap(alpha / (2 ln(T/gamma)))
    threshold = -a / 2.0
    t1 = time.perf_counter()

    # Small dense linear algebra: one BLAS thread (many threads on tiny matrices only contend).
    with _single_blas_thread():
        # --- the loop of Algorithm 4 ----------------------------------------------------------------
        k: int | None = None
        theta: NDArray[np.float64] | None = None
        noise_time = 0.0
        for t in range(T):
            s = time.perf_counter()
            cand = _hypothesis(problem, float(grid[t]), gen)
            noise_time += time.perf_counter() - s
            f_t = -float(problem.excess_risk(cand)[0])  # f^t = L(theta*) - L(theta_t)
            # The test query f^t has sensitivity Delta (Claim A.5 / A.12), so this Laplace test
            # is 2 Delta ln(T/gamma)/alpha-DP (Theorem A.2).
            w_t = float(noise.laplace(gen, test_scale))
            if f_t + w_t >= threshold:
                k, theta = t, cand[0]
                break
    t3 = time.perf_counter()

    # --- accounting (Theorem A.2) ---------------------------------------------------------------
    stopped = T if k is None else k + 1  # number of tests run (the paper's k, 1-based)
    # Same expression as Theorem A.2 / sens.doubling_loss: 2 k Delta ln(T/gamma) / alpha.
    eps_test = 2 * stopped * Delta * math.log(T / g) / a
    eps_hyp = math.fsum(grid[:stopped].tolist())  # = (2^k - 1) eps_1 on a doubling grid
    run = _Run(method, problem, a, g, allow, want_diag, grid, Delta, hyp_sensitivity, threshold)

    def refusal() -> NoHaltError:
        refused = eps_test + eps_hyp
        return _no_halt_error(
            run, f"none of the {T} doubling tests passed",
            f"The refusal reveals only that every test failed: ex-post loss {refused:g} "
            "(T tests plus T hypotheses, Theorem A.2).", refused,
        )

    released = _released_theta(run, k, theta, refusal)
    if k is None:
        ex = ExPostLoss(math.inf, eps_test, eps_hyp, None, DOUBLING_SOURCE)
        statement = (
            "No doubling test passed and theta* was released: the ex-post privacy loss is "
            "unbounded (infinity); nothing is promised for this output."
        )
    else:
        ex = ExPostLoss(eps_test + eps_hyp, eps_test, eps_hyp, k, DOUBLING_SOURCE)
        statement = (
            f"Ex-post privacy loss {ex.epsilon:g} for this realised output (stopped at test "
            f"{k + 1} of {T}): {k + 1} Laplace tests, {ex.epsilon_test:g} in total, plus the "
            f"{k + 1} independent hypotheses, {ex.epsilon_hypothesis:g} in total (Theorem A.2). "
            "This is an ex-post loss (Definition 2.3 of Ligett et al. 2017), not an ex-ante "
            "epsilon-DP guarantee: it depends on the data through the stopping index."
        )
    y_domain = "|y_i| <= 1" if task_ == "ridge" else "y_i in {-1, +1}"
    return _result(
        run, released, k, ex,
        statement=statement,
        extra_notes=(
            "n, p, lambda, alpha, gamma and the epsilon grid are treated as public. Data domain: "
            f"||x_i||_1 <= 1 and {y_domain}. Idealized numerics."
        ),
        timings=lambda t4: {"setup": t1 - t0, "noise": noise_time,
                            "search": (t3 - t1) - noise_time, "total": t4 - t0},
        stacklevel=2,  # doubling <- the caller
    )


def _hypothesis(
    problem: RidgeProblem | LogisticProblem, eps: float, gen: np.random.Generator
) -> NDArray[np.float64]:
    """One fresh eps-DP hypothesis (shape (1, p)) for the DoublingMethod."""
    p = problem.p
    if isinstance(problem, RidgeProblem):
        # Theorem 3.1: every entry of B and b ~ Lap(4 / eps) ((Z, z) has l1 sensitivity 4, Lemma A.6).
        scale = noise.laplace_scale(COVPERT_JOINT_SENSITIVITY, eps)
        Z = problem.gram + noise.laplace(gen, scale, size=(p, p))
        z = problem.xty + noise.laplace(gen, scale, size=p)
        return _ridge_hypotheses(problem, Z[None], z[None])
    # Theorem 3.3: theta* + Lap(2 sqrt(p) / (n lambda eps)) per coordinate (Lemma A.10),
    # then the projection onto the M-ball (Remark A.3) so Claim A.12 bounds the test's sensitivity.
    scale = noise.laplace_scale(sens.output_l1_sensitivity(problem.n, p, problem.lam), eps)
    raw = problem.theta_star + noise.laplace(gen, scale, size=p)
    return project_to_ball(raw[None], problem.radius)
