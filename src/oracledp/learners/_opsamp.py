"""OPSamp: objective perturbation by sampling (Neel, Roth, Vietri, Wu, ICML 2020, Algorithm 2).

For losses l_i that are G-Lipschitz in l1 over a parameter space W with l_inf
diameter D_inf and l2 diameter D_2, scaled to [0, 1]:

1. draw m independent vectors sigma_k in R^d with i.i.d. exponential entries;
2. w_k = O_alpha(D, sigma_k): an alpha-approximate minimizer of
   L(D, w) - <sigma_k, w> over W (Definition 2.1);
3. release (1/m) sum_k w_k + mu,  mu ~ Lap(lambda / eps)^d.

Privacy (Theorem 11): (eps, delta)-DP for replace-one neighbours when lambda
bounds ||W(D, Sigma) - W(D', Sigma)||_1 except on a set of noise draws of
probability <= delta (Lemma 10), where W(D, Sigma) = (1/m) sum_k O_alpha(D, sigma_k):
condition on that set and apply the Laplace mechanism.  The proof does not need
convexity, nor an exact oracle; it needs every oracle answer to be within the
declared error alpha, which is why every answer must carry a certificate and an
uncertified one raises :class:`~oracledp._errors.OracleFailure`.

How we read the paper, and where we deviate (always towards more noise)
-----------------------------------------------------------------------
The formulas are those of 003 (the ICML text), cross-checked with 001 and 000.
The corrected Theorem 11 and its full proof (Lemma 8 plus Hoeffding on the coupled
differences, without Lemma 9) are in ``docs/proofs/opsamp-theorem11.md``.

(a) **eta is a rate.**  Algorithm 2 samples sigma_k ~ Exp(eta)^d, and the
    preliminaries define Exp(z | b) = (1/b) e^{-z/b} (scale b).  But Lemma 8 is
    Suggala & Netrapalli's (2019) FTPL stability lemma, in which Exp(eta) has
    density eta e^{-eta z} (rate eta): its bound 250 eta G d^2 D_inf^2 *grows*
    with eta, which only makes sense if a larger eta means *less* noise; and
    the utility proof of Theorem 7 bounds the perturbation term by
    D_2 sqrt(2d) / (eta n), i.e. E||sigma||_2 <= sqrt(2d)/eta (rate).  Under
    the scale reading Lemma 8 is false: on the spec's S1 instance, with
    sigma ~ Exp(scale eta) the coupled sensitivity exceeds bound (7) in every
    run (``tests/learners/test_opsamp.py`` pins this).  We therefore draw
    sigma_kj with density eta exp(-eta z), i.e. ``rng.exponential(scale=1/eta)``.
(b) **gamma from m (Lemmas 9-10).**  Algorithm 2 and Lemma 9 write
    m = ln(2d/delta) / (2 gamma^2), Lemma 10 writes m = ln(2d/delta) / gamma^2.
    For a caller-chosen m we use the one that gives the *larger* gamma,
    gamma = sqrt(ln(2d/delta) / m) (Lemma 10).
(c) **Concentration term.**  Lemma 9 claims ||W(D, Sigma) - E O(D, sigma)||_1
    <= 2 D_inf gamma; a per-coordinate Hoeffding bound gives D_inf gamma-type
    deviations *per coordinate*, so the l1 norm can be ~d times larger (a
    counterexample with independent fair corners of a box is in the tests).
    A correct argument for the quantity the privacy proof needs: the
    Y_k = ||O(D, sigma_k) - O(D', sigma_k)||_1 are i.i.d. in [0, D_1] (D_1 the
    l1 diameter of W, at most d D_inf) with mean at most the Lemma 8 bound, so
    by Hoeffding, with probability >= 1 - delta,
    ||W(D, Sigma) - W(D', Sigma)||_1 <= (1/m) sum_k Y_k
                                    <= Lemma 8 + D_1 sqrt(ln(1/delta) / (2m)).
    We use max(4 D_inf gamma, D_1 sqrt(ln(1/delta) / (2m))): the paper's term
    when it is larger (small d), the correct one otherwise.
(d) **D_inf^2 in Lemma 8.**  003 prints 250 eta G d^2 D_inf^2 (= 2 x the
    125 eta L d^2 D of Suggala & Netrapalli, the factor 2 for replace-one
    neighbours, footnote 1).  The square is not scale-invariant (rescaling W
    changes it differently from ||.||_1); we use D_inf * max(D_inf, 1), which
    equals the printed D_inf^2 whenever D_inf >= 1 and never falls below D_inf.
(e) **alpha on the unnormalized objective.**  Definition 2.1 measures alpha
    on (L(D, w) - <sigma, w>) / n, while the alpha / (10 G) of Lemma 8 comes
    from the FTPL objective L(D, w) - <sigma, w> without 1/n.  Oracles here
    declare and certify alpha on the unnormalized objective (n times the
    Definition 2.1 value, so never smaller).

So lambda = max(4 D_inf gamma, D_1 sqrt(ln(1/delta)/(2m)))
            + 250 eta G d^2 D_inf max(D_inf, 1) + alpha / (10 G),
which equals the paper's bound (7) whenever d is small and D_inf >= 1, and
exceeds it otherwise.  :func:`opsamp_sensitivity` returns every term and the
printed bound (7) next to the one used.

The paper's default parameters (:func:`opsamp_parameters`, Algorithm 2):
gamma = sqrt(eps) / (sqrt(n) d^{5/4} sqrt(D_2))  (the whole of
sqrt(n) d^{5/4} sqrt(D_2) is the denominator in 003's layout; it keeps
gamma <= 1 as Lemma 9 requires), m = ceil(ln(2d/delta) / (2 gamma^2)),
eta = sqrt(D_2 sqrt(2d) eps / (250 G^2 d^2 D_inf^2 (1 + ln(2/beta)) n))
(confirmed by the proof of Theorem 7: eta = sqrt(E/B)).  The theoretical m is
usually astronomically large; ``opsamp`` lets the caller choose m and
calibrates lambda for it.
"""

from __future__ import annotations

import math
import numbers
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from numpy.typing import NDArray
from threadpoolctl import ThreadpoolController

from oracledp._diagnostics import NonPrivateDiagnostics, check_diagnostics_flag, release_diagnostics
from oracledp._errors import OracleFailure
from oracledp._validation import (
    RandomLike,
    check_delta,
    check_epsilon,
    check_open_unit,
    check_positive,
    check_rng,
)
from oracledp.oracles._convex import ApproxOracleResult
from oracledp.privacy import _noise as noise
from oracledp.privacy._guarantees import PrivacyGuarantee

__all__ = [
    "SOURCE",
    "OPSampParameters",
    "OPSampResult",
    "OPSampSensitivity",
    "opsamp",
    "opsamp_gamma",
    "opsamp_guarantee",
    "opsamp_lambda",
    "opsamp_parameters",
    "opsamp_sensitivity",
]

SOURCE = "Neel, Roth, Vietri, Wu (ICML 2020), Algorithm 2 OPSamp, Theorem 11"


class LipschitzProblem(Protocol):
    """What OPSamp needs from a problem: sizes and public geometry constants."""

    @property
    def n(self) -> int: ...

    @property
    def d(self) -> int: ...

    @property
    def lipschitz(self) -> float: ...  # G: l1-Lipschitz constant of each loss (losses in [0, 1])

    @property
    def linf_diameter(self) -> float: ...  # D_inf

    @property
    def l2_diameter(self) -> float: ...  # D_2


class ApproxLinearOracle(Protocol):
    """An alpha-approximate linear optimization oracle (Definition 2.1, unnormalized alpha)."""

    alpha: float

    def solve(self, problem: Any, sigma: NDArray[np.float64]) -> ApproxOracleResult: ...


# --- parameters -----------------------------------------------------------------------------


def _pos(value: object, name: str) -> float:
    return check_positive(value, name)


def _nonneg(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return v


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    v = int(value)
    if v < 1:
        raise ValueError(f"{name} must be >= 1, got {value!r}")
    return v


def _beta(value: object) -> float:
    return check_open_unit(value, "beta", label="beta (utility failure probability)",
                           number="a number")


def opsamp_gamma(m: int, d: int, delta: float) -> float:
    """gamma = sqrt(ln(2d/delta) / m): Lemma 10's m = ln(2d/delta)/gamma^2 solved for gamma.

    Algorithm 2 / Lemma 9 print m = ln(2d/delta)/(2 gamma^2), which gives a gamma
    smaller by sqrt(2); we take the larger (conservative) one.
    """
    m_ = _count(m, "m")
    d_ = _count(d, "d")
    dlt = check_delta(delta)
    return math.sqrt(math.log(2 * d_ / dlt) / m_)


@dataclass(frozen=True)
class OPSampSensitivity:
    """The l1-sensitivity bound lambda of OPSamp, term by term (Lemmas 8-10).

    Attributes
    ----------
    gamma:
        sqrt(ln(2d/delta)/m) (Lemma 10).
    concentration_paper:
        4 D_inf gamma (Lemma 10, via Lemma 9 on D and D').
    concentration_hoeffding:
        D_1 sqrt(ln(1/delta)/(2m)): Hoeffding on the i.i.d. Y_k = ||O(D,s_k) - O(D',s_k)||_1 in [0, D_1].
    stability_paper:
        250 eta G d^2 D_inf^2 (Lemma 8 as printed).
    stability:
        250 eta G d^2 D_inf max(D_inf, 1) (used; >= the printed term when D_inf >= 1).
    approximation:
        alpha / (10 G) (Lemma 8), alpha on the unnormalized objective.
    lambda_paper:
        The printed bound (7): concentration_paper + stability_paper + approximation.
    lambda_:
        The bound used: max(concentration_paper, concentration_hoeffding) + stability + approximation.
    """

    gamma: float
    concentration_paper: float
    concentration_hoeffding: float
    stability_paper: float
    stability: float
    approximation: float
    lambda_paper: float
    lambda_: float


def opsamp_sensitivity(
    *,
    m: int,
    eta: float,
    d: int,
    delta: float,
    lipschitz: float,
    linf_diameter: float,
    alpha: float,
    l1_diameter: float | None = None,
) -> OPSampSensitivity:
    """lambda for m oracle calls with exponential noise of rate eta (module docstring (a)-(e))."""
    m_, d_, dlt, eta_ = _count(m, "m"), _count(d, "d"), check_delta(delta), _pos(eta, "eta")
    return _sensitivity(m_, eta_, d_, dlt,
                        *_check_bounds(lipschitz, linf_diameter, alpha, l1_diameter))


def _check_bounds(lipschitz: object, linf_diameter: object, alpha: object,
                  l1_diameter: object) -> tuple[float, float, float, float | None]:
    """The checked Lipschitz constant G, l_inf diameter, alpha and l1 diameter (None: none
    declared) of :func:`opsamp_sensitivity` and :func:`opsamp_parameters`."""
    return (_pos(lipschitz, "lipschitz"), _pos(linf_diameter, "linf_diameter"),
            _nonneg(alpha, "alpha"),
            None if l1_diameter is None else _pos(l1_diameter, "l1_diameter"))


def _sensitivity(m_: int, eta_: float, d_: int, dlt: float, G: float, Dinf: float, a: float,
                 l1: float | None) -> OPSampSensitivity:
    """:func:`opsamp_sensitivity` of validated parameters."""
    D1 = d_ * Dinf if l1 is None else l1
    D1 = min(D1, d_ * Dinf)  # ||v||_1 <= d ||v||_inf
    gamma = opsamp_gamma(m_, d_, dlt)
    conc_paper = 4.0 * Dinf * gamma  # Lemma 10: 2 D_inf gamma on each of D and D'
    conc_hoeffding = D1 * math.sqrt(math.log(1.0 / dlt) / (2.0 * m_))
    stab_paper = 250.0 * eta_ * G * d_**2 * Dinf**2  # Lemma 8 as printed in 003
    stab = 250.0 * eta_ * G * d_**2 * Dinf * max(Dinf, 1.0)
    approx = a / (10.0 * G)  # Lemma 8
    return OPSampSensitivity(
        gamma=gamma,
        concentration_paper=conc_paper,
        concentration_hoeffding=conc_hoeffding,
        stability_paper=stab_paper,
        stability=stab,
        approximation=approx,
        lambda_paper=conc_paper + stab_paper + approx,
        lambda_=max(conc_paper, conc_hoeffding) + stab + approx,
    )


def opsamp_lambda(**parameters: Any) -> float:
    """The l1-sensitivity bound lambda used by :func:`opsamp`:
    ``opsamp_sensitivity(**parameters).lambda_``, for the keyword parameters of
    :func:`opsamp_sensitivity` (``m``, ``eta``, ``d``, ``delta``, ``lipschitz``,
    ``linf_diameter``, ``alpha``, optionally ``l1_diameter``)."""
    return opsamp_sensitivity(**parameters).lambda_


@dataclass(frozen=True)
class OPSampParameters:
    """The paper's default parameters of Algorithm 2 for given (n, d, eps, delta, G, D_inf, D_2, alpha, beta).

    ``gamma`` and ``m`` are Algorithm 2's (gamma = sqrt(eps)/(sqrt(n) d^{5/4} sqrt(D_2)),
    m = ceil(ln(2d/delta)/(2 gamma^2))), ``eta`` its noise rate; ``lambda_`` is
    the lambda :func:`opsamp` would use with that m and eta (``sensitivity`` has
    the terms and the printed bound (7)).
    """

    n: int
    d: int
    epsilon: float
    delta: float
    lipschitz: float
    linf_diameter: float
    l2_diameter: float
    alpha: float
    beta: float
    gamma: float
    m: int
    eta: float
    lambda_: float
    sensitivity: OPSampSensitivity


def _paper_eta(n: int, d: int, eps: float, G: float, Dinf: float, D2: float, beta: float) -> float:
    # Algorithm 2: eta = sqrt(D_2 sqrt(2d) eps / (250 G^2 d^2 D_inf^2 (1 + log(2/beta)) n))
    return math.sqrt(
        D2
        * math.sqrt(2.0 * d)
        * eps
        / (250.0 * G**2 * d**2 * Dinf**2 * (1.0 + math.log(2.0 / beta)) * n)
    )


def opsamp_parameters(
    n: int,
    d: int,
    epsilon: float,
    delta: float,
    lipschitz: float,
    linf_diameter: float,
    l2_diameter: float,
    alpha: float,
    beta: float,
    *,
    l1_diameter: float | None = None,
) -> OPSampParameters:
    """The default gamma, m, eta of Algorithm 2 (and the lambda they imply)."""
    n_, d_ = _count(n, "n"), _count(d, "d")
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    G, Dinf, a, D1 = _check_bounds(lipschitz, linf_diameter, alpha, l1_diameter)
    D2 = _pos(l2_diameter, "l2_diameter")
    b = _beta(beta)
    # Algorithm 2: gamma = sqrt(eps) / (sqrt(n) d^{5/4} sqrt(D_2)); m = ln(2d/delta) / (2 gamma^2)
    gamma = math.sqrt(eps) / (math.sqrt(n_) * d_**1.25 * math.sqrt(D2))
    m = math.ceil(math.log(2 * d_ / dlt) / (2.0 * gamma**2))
    eta = _paper_eta(n_, d_, eps, G, Dinf, D2, b)
    sens = _sensitivity(_count(m, "m"), _pos(eta, "eta"), d_, dlt, G, Dinf, a, D1)
    return OPSampParameters(
        n=n_,
        d=d_,
        epsilon=eps,
        delta=dlt,
        lipschitz=G,
        linf_diameter=Dinf,
        l2_diameter=D2,
        alpha=a,
        beta=b,
        gamma=gamma,
        m=m,
        eta=eta,
        lambda_=sens.lambda_,
        sensitivity=sens,
    )


def opsamp_guarantee(epsilon: float, delta: float, alpha: float) -> PrivacyGuarantee:
    """(eps, delta)-DP of OPSamp (Theorem 11), conditional on the oracle meeting its declared alpha."""
    return PrivacyGuarantee.approximate(
        check_epsilon(epsilon), check_delta(delta), source=SOURCE,
        notes=(
            f"holds provided every oracle answer is within its declared additive error "
            f"alpha = {alpha:.3g} on L(D, w) - <sigma, w> (each answer's certificate is checked; "
            "an uncertified answer raises OracleFailure); lambda from Lemmas 8-10 with the "
            "conservative readings proven in docs/proofs/opsamp-theorem11.md (exponential noise of rate eta)"
        ),
    )


# --- the mechanism --------------------------------------------------------------------------


@dataclass(frozen=True)
class OPSampResult:
    """Output of :func:`opsamp`: the released vector and everything public said about it.

    Attributes
    ----------
    w:
        (1/m) sum_k w_k + mu, mu ~ Lap(lambda_/eps)^d.
    guarantee:
        (eps, delta)-DP, Theorem 11; ``requires_exact_oracle=False`` but it depends
        on the oracle's error being at most the declared ``alpha``.
    lambda_, gamma, eta, m, alpha:
        l1-sensitivity bound, Lemma 10's gamma for this m, the exponential noise
        *rate*, the number of oracle calls, the oracle's declared error.
    sensitivity:
        The terms of lambda_ (and the printed bound (7)).
    diagnostics:
        None, or with ``return_diagnostics=True`` a
        :class:`~oracledp._diagnostics.NonPrivateDiagnostics` holding ``timings``
        (wall-clock seconds of noise, oracle calls, total): NOT private.

    The oracle answers themselves (w_k, their objectives and certificates) depend
    on the data and are never part of the result.
    """

    w: NDArray[np.float64]
    guarantee: PrivacyGuarantee
    lambda_: float
    gamma: float
    eta: float
    m: int
    alpha: float
    sensitivity: OPSampSensitivity
    diagnostics: NonPrivateDiagnostics | None = field(default=None, repr=False)


def _check_problem(problem: Any) -> tuple[int, int, float, float, float, float | None]:
    for attr in ("n", "d", "lipschitz", "linf_diameter", "l2_diameter"):
        if not hasattr(problem, attr):
            raise TypeError(f"problem must provide .{attr} (e.g. a LogisticProblem)")
    n = _count(problem.n, "problem.n")
    d = _count(problem.d, "problem.d")
    G = _pos(problem.lipschitz, "problem.lipschitz")
    Dinf = _pos(problem.linf_diameter, "problem.linf_diameter")
    D2 = _pos(problem.l2_diameter, "problem.l2_diameter")
    D1 = getattr(problem, "l1_diameter", None)
    D1 = None if D1 is None else _pos(D1, "problem.l1_diameter")
    return n, d, G, Dinf, D2, D1


def _check_oracle(oracle: Any) -> float:
    if not callable(getattr(oracle, "solve", None)):
        raise TypeError(
            "oracle must have a solve(problem, sigma) method (e.g. LogisticLinearOracle)"
        )
    if not hasattr(oracle, "alpha"):
        raise TypeError("oracle must declare its additive error as .alpha")
    return _nonneg(oracle.alpha, "oracle.alpha")


def _check_n_jobs(n_jobs: object) -> int:
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or int(n_jobs) == 0:
        raise ValueError(f"n_jobs must be a non-zero integer (-1 = all cores), got {n_jobs!r}")
    return int(n_jobs)


def _check_hook(
    arr: Any, shape: tuple[int, ...], name: str, *, nonneg: bool
) -> NDArray[np.float64]:
    a = np.asarray(arr, dtype=np.float64)
    if a.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be finite (no NaN or infinity)")
    if nonneg and (a < 0).any():
        raise ValueError(f"{name} must be >= 0 (exponential draws)")
    return a


#: This process's thread-pool controller and the number of imported modules when it was
#: made: scanning the loaded libraries takes about 10 ms, limiting them through a controller
#: about 0.03 ms, so the scan is redone only after an import (which may load a library).
_CONTROLLER: tuple[int, ThreadpoolController] | None = None


def _single_threaded() -> Any:
    """A context in which every loaded thread pool (BLAS, OpenMP) runs one thread."""
    global _CONTROLLER
    if _CONTROLLER is None or _CONTROLLER[0] != len(sys.modules):
        _CONTROLLER = (len(sys.modules), ThreadpoolController())
    return _CONTROLLER[1].limit(limits=1)


def _solve_chunk(
    oracle: Any, problem: Any, sigmas: NDArray[np.float64]
) -> list[ApproxOracleResult]:
    """Solve one block of noise rows (single-threaded BLAS, so results do not depend on n_jobs)."""
    with _single_threaded():
        batch = getattr(oracle, "solve_batch", None)
        if callable(batch):
            return list(batch(problem, sigmas))
        return [oracle.solve(problem, s) for s in sigmas]


def _check_answer(res: Any, d: int, alpha: float, problem: Any, k: int) -> NDArray[np.float64]:
    w = np.asarray(getattr(res, "w", None), dtype=np.float64)
    if w.shape != (d,) or not np.isfinite(w).all():
        raise OracleFailure(f"oracle answer {k} is not a finite vector of shape ({d},)", result=res)
    gap = float(getattr(res, "gap", math.inf))
    if not (gap <= alpha):  # NaN fails too
        raise OracleFailure(
            f"oracle answer {k} is not certified within the declared alpha = {alpha:.3g}; "
            "OPSamp's privacy calibration needs every answer "
            "within alpha, so nothing is released.",
            result=res,
        )
    contains = getattr(problem, "contains", None)
    if callable(contains) and not contains(w):
        raise OracleFailure(f"oracle answer {k} lies outside W", result=res)
    return w


def opsamp(
    problem: LipschitzProblem,
    epsilon: float,
    delta: float,
    *,
    m: int,
    oracle: ApproxLinearOracle,
    eta: float | None = None,
    beta: float = 0.05,
    n_jobs: int = 1,
    random_state: RandomLike = None,
    sigma: NDArray[np.floating] | None = None,
    mu: NDArray[np.floating] | None = None,
    return_diagnostics: bool = False,
) -> OPSampResult:
    """Run OPSamp once (Algorithm 2 with the calibration of the module docstring).

    Privacy: ``(epsilon, delta)``-DP (approximate, fixed in advance) for replace-one
    neighbours (Neel, Roth, Vietri, Wu, ICML 2020, Theorem 11, with lambda from Lemmas 8-10),
    *provided every oracle answer is within its declared additive error alpha*: each answer's
    certificate (its gap) is checked and an uncertified answer raises
    :class:`~oracledp._errors.OracleFailure`; the oracle need not be exact.  The perturbations
    are exponential (rate eta) and Laplace (scale lambda/eps), drawn by
    :mod:`oracledp.privacy._noise`.  The conservative readings of the paper that the
    calibration uses are listed, with their reasons, in the docstring of the implementation
    module :mod:`oracledp.learners._opsamp`; the proof is ``docs/proofs/opsamp-theorem11.md``.

    Parameters
    ----------
    problem:
        Provides ``n``, ``d``, ``lipschitz`` (G, l1-Lipschitz constant of each
        loss, losses in [0, 1]), ``linf_diameter`` (D_inf), ``l2_diameter`` (D_2),
        optionally ``l1_diameter`` (D_1, else d D_inf) and ``contains(w)``;
        e.g. :class:`~oracledp.oracles._convex.LogisticProblem`.
    epsilon, delta:
        Target (eps, delta); eps > 0, 0 < delta < 1.
    m:
        Number of oracle calls (caller's choice; lambda is calibrated for it).
    oracle:
        Declares ``alpha`` (additive error on L(D, w) - <sigma, w>, unnormalized)
        and has ``solve(problem, sigma)`` returning an
        :class:`~oracledp.oracles._convex.ApproxOracleResult` with a certified
        ``gap``; optional ``solve_batch(problem, sigmas)``.
    eta:
        Rate of the exponential noise (mean 1/eta).  ``None``: Algorithm 2's
        eta = sqrt(D_2 sqrt(2d) eps / (250 G^2 d^2 D_inf^2 (1 + ln(2/beta)) n)).
    beta:
        Utility failure probability, used only by the default eta.
    n_jobs:
        Parallel oracle calls (joblib).  The noise is drawn up front from
        ``random_state``, so the output does not depend on ``n_jobs``.
    random_state:
        Seed or Generator; the only source of randomness.
    sigma, mu:
        Test hooks: use this (m, d) matrix of exponential draws / this Laplace
        vector instead of sampling them.  The result's guarantee then does not hold
        (the noise was not drawn by the mechanism).
    return_diagnostics:
        Attach :class:`~oracledp._diagnostics.NonPrivateDiagnostics` (``timings``).
        For research only: issues a :class:`~oracledp._errors.DiagnosticsWarning` and
        sets ``guarantee.diagnostics_released``.

    Privacy
    -------
    (eps, delta)-DP for replace-one neighbours (Theorem 11 of Neel et al., ICML
    2020), provided every oracle answer is within the declared alpha; the oracle
    must certify it, otherwise :class:`~oracledp._errors.OracleFailure` is raised
    and nothing is released.  All inputs are validated before any noise is drawn.

    Examples
    --------
    Logistic loss on four records, W = [-1, 1]^2, m = 5 certified oracle calls:

    >>> import numpy as np
    >>> from oracledp.learners import opsamp
    >>> from oracledp.oracles._convex import LogisticLinearOracle, LogisticProblem
    >>> X = np.array([[0.5, 0.0], [0.0, 0.5], [0.5, 0.5], [-0.5, 0.0]])
    >>> problem = LogisticProblem.from_data(X, [1, -1, 1, -1], radius=1.0)
    >>> res = opsamp(problem, 1.0, 1e-3, m=5, oracle=LogisticLinearOracle("box", 1.0),
    ...              random_state=0)
    >>> res.w.shape, res.m
    ((2,), 5)
    >>> res.guarantee.epsilon, res.guarantee.delta, res.guarantee.requires_exact_oracle
    (1.0, 0.001, False)
    """
    # 1. Validation (no randomness yet).
    want_diag = check_diagnostics_flag(return_diagnostics)
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    n, d, G, Dinf, D2, D1 = _check_problem(problem)
    alpha = _check_oracle(oracle)
    m_ = _count(m, "m")
    b = _beta(beta)
    eta_ = _pos(_paper_eta(n, d, eps, G, Dinf, D2, b) if eta is None else eta, "eta")
    jobs = _check_n_jobs(n_jobs)
    sigma_hook = None if sigma is None else _check_hook(sigma, (m_, d), "sigma", nonneg=True)
    mu_hook = None if mu is None else _check_hook(mu, (d,), "mu", nonneg=False)
    rng = check_rng(random_state)
    sens = _sensitivity(m_, eta_, d, dlt, G, Dinf, alpha, D1)
    lam = sens.lambda_
    guarantee = opsamp_guarantee(eps, dlt, alpha)
    if sigma_hook is not None or mu_hook is not None:
        guarantee = guarantee.not_holding(
            "the noise was supplied by the caller (sigma= or mu=), not drawn")

    # 2. All noise, up front: sigma_kj with density eta e^{-eta z} (rate eta, module note (a)),
    #    then mu ~ Lap(lambda/eps)^d.  Nothing here depends on the data.
    t0 = time.perf_counter()
    sig = (noise.exponential(rng, 1.0 / eta_, size=(m_, d)) if sigma_hook is None
           else sigma_hook)
    mu_ = noise.laplace(rng, lam / eps, size=d) if mu_hook is None else mu_hook
    t1 = time.perf_counter()

    # 3. m oracle calls (Algorithm 2, w_k = O_alpha(D, sigma_k)), in parallel if asked.
    workers = min(m_, effective_n_jobs(jobs))
    if workers <= 1:
        answers = _solve_chunk(oracle, problem, sig)
    else:
        blocks = np.array_split(sig, workers)
        parts = Parallel(n_jobs=workers)(
            delayed(_solve_chunk)(oracle, problem, blk) for blk in blocks
        )
        answers = [a for part in parts for a in part]
    if len(answers) != m_:
        raise OracleFailure(f"oracle returned {len(answers)} answers for {m_} noise vectors")
    W = np.stack([_check_answer(res, d, alpha, problem, k) for k, res in enumerate(answers)])
    t2 = time.perf_counter()

    # 4. Output perturbation: (1/m) sum_k w_k + mu.
    w_out = W.mean(axis=0) + mu_
    diagnostics = None
    if want_diag:
        guarantee = release_diagnostics(guarantee, "OPSamp")
        diagnostics = NonPrivateDiagnostics("opsamp", {"timings": {
            "noise_s": t1 - t0, "oracle_s": t2 - t1, "total_s": time.perf_counter() - t0}})
    return OPSampResult(w=w_out, guarantee=guarantee, lambda_=lam, gamma=sens.gamma, eta=eta_,
                        m=m_, alpha=alpha, sensitivity=sens, diagnostics=diagnostics)
