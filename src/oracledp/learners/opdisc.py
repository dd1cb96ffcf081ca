"""OPDisc: objective perturbation over a discrete space (Neel, Roth, Vietri, Wu, ICML 2020).

Algorithm 1: draw eta ~ N(0, sigma^2 I_{d+1}) with
sigma = 7 G D^2 sqrt(ln(1/delta)) / (tau * eps), and output the exact minimizer
of  L(D, w) - <eta, pi(w)>  over the tau-separated space W_tau (one call to a
normalized linear optimization oracle, Definition 2.2).

Privacy (Theorem 1, via Lemmas 2-4): (eps, delta)-DP for replace-one
neighbours **provided the oracle returns the exact minimizer**.  An oracle
answer that is not certified optimal is therefore never released by default
(:class:`~oracledp.errors.OracleFailure`); ``allow_uncertified=True`` returns
it with a guarantee marked as not holding.

The constant is the paper's: the authors' public code used half this sigma,
which the theorem does not cover.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from oracledp._validation import RandomLike, check_delta, check_epsilon, check_rng
from oracledp.guarantees import GuaranteeKind, PrivacyGuarantee
from oracledp.learners._certify import check_oracle_accepts, guarantee_for_release
from oracledp.oracles.base import Oracle, OracleResult
from oracledp.oracles.registry import make_oracle

SOURCE = "Neel, Roth, Vietri, Wu (ICML 2020), Algorithm 1 OPDisc, Theorem 1"


class DiscreteProblem(Protocol):
    """What OPDisc needs from a problem: the space W_tau and the loss's Lipschitz constant."""

    @property
    def space(self) -> Any: ...  # has .tau, .max_norm, .d

    @property
    def lipschitz(self) -> float: ...


def opdisc_sigma(epsilon: float, delta: float, lipschitz: float, max_norm: float, tau: float) -> float:
    """sigma = 7 G D^2 sqrt(ln(1/delta)) / (tau eps)  (Algorithm 1; Lemma 3 of the ICML paper)."""
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    return 7.0 * lipschitz * max_norm**2 * math.sqrt(math.log(1.0 / dlt)) / (tau * eps)


def opdisc_guarantee(epsilon: float, delta: float) -> PrivacyGuarantee:
    return PrivacyGuarantee(
        epsilon=check_epsilon(epsilon),
        delta=check_delta(delta),
        kind=GuaranteeKind.APPROXIMATE,
        requires_exact_oracle=True,
        source=SOURCE,
        notes="holds only if the oracle returns the exact minimizer (certified)",
    )


@dataclass(frozen=True)
class OPDiscResult:
    """Output of :func:`opdisc`: the released parameter vector and everything said about it."""

    w: NDArray[np.float64]
    guarantee: PrivacyGuarantee
    oracle: OracleResult
    sigma: float
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def certified(self) -> bool:
        return self.oracle.certified


def _check_problem(problem: Any) -> None:
    for attr in ("space", "lipschitz"):
        if not hasattr(problem, attr):
            raise TypeError(f"problem must provide .{attr} (e.g. a HalfspaceProblem)")


def opdisc(
    problem: DiscreteProblem,
    epsilon: float,
    delta: float,
    *,
    oracle: str | Oracle = "highs",
    random_state: RandomLike = None,
    allow_uncertified: bool = False,
    eta: NDArray[np.floating] | None = None,
    **oracle_options: Any,
) -> OPDiscResult:
    """Run OPDisc once.

    Parameters
    ----------
    problem:
        A discrete problem, e.g. :class:`~oracledp.oracles.HalfspaceProblem`
        (0/1 loss, G = 1/tau).
    epsilon, delta:
        Target (eps, delta); eps > 0 and 0 < delta < 1.
    oracle:
        Oracle name (see :func:`~oracledp.oracles.available_oracles`) or instance.
    random_state:
        Seed or Generator; the only source of randomness.
    allow_uncertified:
        Release an uncertified oracle answer anyway, with ``guarantee.holds = False``.
    eta:
        Test hook: use this noise vector instead of sampling one.

    Privacy
    -------
    (eps, delta)-DP, replace-one neighbours, Theorem 1 of Neel et al. (ICML 2020);
    requires an exact oracle: uncertified answers raise :class:`OracleFailure`.
    """
    _check_problem(problem)
    guarantee = opdisc_guarantee(epsilon, delta)  # validates eps, delta first
    orc = make_oracle(oracle, **oracle_options)
    check_oracle_accepts(orc, problem, separable=False)
    rng = check_rng(random_state)
    space = problem.space
    sigma = opdisc_sigma(epsilon, delta, problem.lipschitz, space.max_norm, space.tau)
    t0 = time.perf_counter()
    if eta is None:
        eta = rng.normal(0.0, sigma, size=space.d + 1)
    else:
        eta = np.asarray(eta, dtype=np.float64)
        if eta.shape != (space.d + 1,):
            raise ValueError(f"eta must have shape ({space.d + 1},), got {eta.shape}")
        if not np.isfinite(eta).all():
            raise ValueError("eta must be finite (no NaN or infinity)")
    t1 = time.perf_counter()
    res = orc.solve(problem, eta)
    t2 = time.perf_counter()
    guarantee = guarantee_for_release(res, guarantee, allow_uncertified, "OPDisc")
    assert res.solution is not None
    return OPDiscResult(
        w=res.solution,
        guarantee=guarantee,
        oracle=res,
        sigma=sigma,
        timings={"noise_s": t1 - t0, "oracle_s": t2 - t1, "total_s": t2 - t0},
    )


def _opdisc_sample_k(
    problem: Any,
    epsilon: float,
    delta: float,
    size: int,
    rng: np.random.Generator,
    *,
    sigma_scale: float = 1.0,
) -> NDArray[np.int64]:
    """``size`` independent OPDisc outputs (integer coordinates) with the brute-force oracle.

    Vectorized over noise draws, for audits and exact-law tests.  ``sigma_scale``
    plants a bug (e.g. 0.5 = half the noise) for the audits' meta-tests.
    """
    from oracledp.oracles.brute import BruteForceOracle

    space = problem.space
    sigma = sigma_scale * opdisc_sigma(epsilon, delta, problem.lipschitz, space.max_norm, space.tau)
    etas = rng.normal(0.0, sigma, size=(size, space.d + 1))
    return BruteForceOracle().solve_batch(problem, etas)
