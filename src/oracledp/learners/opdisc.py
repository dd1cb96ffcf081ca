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

Proven range: eps <= ln(1/delta)  (equivalently delta <= exp(-eps))
-------------------------------------------------------------------
Theorem 1 states no range, but its proof only holds for eps small against
ln(1/delta); outside the range :func:`opdisc`, :func:`opdisc_sigma` and
:func:`opdisc_guarantee` raise ``ValueError`` before any noise is drawn.  Where
the range comes from (write L = ln(1/delta), Phi-bar the standard normal tail):

* Lemma 4 maps the noise eta to g_w(eta) = eta + c pi(w) with
  c = 4 G D^2 / tau: its contradiction "c tau < 4 G D^2" needs that c (the
  "2 G D^2 / tau" printed in the definition of g is too small; on W = {-1, +1}
  a shift of exactly 4 G D^2 / tau = 1 is needed).  ||pi(w)|| = 1, so the
  shift has length c.
* Lemma 3 (bounded ratio), for a fixed w and u = pi(w):
  ``p(r) / p(g_w(r)) = exp((c <r, u> + c^2 / 2) / sigma^2) <= e^eps``
  iff ``<r, u> <= sigma^2 eps / c - c / 2``; so the bad set C has
  ``Pr[eta in C] = Phi-bar(t)``, ``t = sigma eps / c - c / (2 sigma)``, and
  inequality (3) of Theorem 1 ("C is chosen such that Pr[eta in C] < delta")
  needs Phi-bar(t) <= delta.  With sigma = 7 G D^2 sqrt(L) / (tau eps) = (7/4) c sqrt(L) / eps:
  ``t = (7/4) sqrt(L) - (2/7) eps / sqrt(L)``.
  The second term grows linearly in eps: for eps large against L, t falls
  below the delta-quantile and (3) fails (exactly: Lemma 3 holds iff
  eps <= (7 sqrt(L) / 2) ((7/4) sqrt(L) - Phi-bar^{-1}(delta)); the exact
  output law on W = {-1, +1} is not (eps, delta)-DP e.g. at (25, 1e-5) or (10, 0.3)).
* If eps <= L then t >= (7/4 - 2/7) sqrt(L) = (41/28) sqrt(L) > sqrt(2 L), and
  the Gaussian tail bound Phi-bar(t) <= exp(-t^2 / 2) / 2 (t >= 0) gives
  Pr[eta in C] <= delta / 2 < delta: Lemma 3 and inequality (3) hold, for
  every delta in (0, 1), with no further condition such as eps <= 1.

Note: the chain (3)-(5) of Theorem 1 uses one set C for every output, while
Lemma 3's C depends on w; the factor 1/2 above covers two sets (e.g. the two
antipodal points of W = {-1, +1}), not a union over a large W.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from oracledp._validation import RandomLike, check_delta, check_epsilon, check_rng
from oracledp.diagnostics import NonPrivateDiagnostics, check_diagnostics_flag
from oracledp.guarantees import GuaranteeKind, PrivacyGuarantee
from oracledp.learners._certify import check_oracle_accepts, release_oracle_answer
from oracledp.oracles.base import Oracle
from oracledp.oracles.registry import make_oracle

SOURCE = "Neel, Roth, Vietri, Wu (ICML 2020), Algorithm 1 OPDisc, Theorem 1"


class DiscreteProblem(Protocol):
    """What OPDisc needs from a problem: the space W_tau and the loss's Lipschitz constant."""

    @property
    def space(self) -> Any: ...  # has .tau, .max_norm, .d

    @property
    def lipschitz(self) -> float: ...


def opdisc_max_epsilon(delta: float) -> float:
    """Largest eps for which OPDisc's calibration is proven at this delta: ln(1/delta).

    See the module docstring: eps <= ln(1/delta) gives Pr[eta in C] <= delta / 2 in
    Lemma 3 / inequality (3) of Theorem 1 (Neel et al., ICML 2020).
    """
    return -math.log(check_delta(delta))


def check_opdisc_range(epsilon: float, delta: float) -> tuple[float, float]:
    """Validate (eps, delta) and refuse eps > ln(1/delta), where OPDisc is not proven private.

    Raises ``ValueError`` (``TypeError`` for non-numbers); draws nothing.
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    limit = opdisc_max_epsilon(dlt)
    # Lemma 3 / inequality (3) of Theorem 1: Pr[eta in C] = Phi-bar(t) with
    # t = (7/4) sqrt(ln(1/delta)) - (2/7) eps / sqrt(ln(1/delta)) <= delta needs eps small
    # against ln(1/delta); eps <= ln(1/delta) gives t > sqrt(2 ln(1/delta)), i.e. <= delta / 2.
    if eps > limit:
        small = math.exp(-eps)
        small_txt = f"{small:.3g}" if small > 0 else f"exp(-{eps:g}), below the smallest float"
        raise ValueError(
            f"OPDisc: epsilon={eps:g} with delta={dlt:g} is outside the range where the "
            f"calibration sigma = 7 G D^2 sqrt(ln(1/delta)) / (tau eps) is proven "
            f"(Neel et al. ICML 2020, Theorem 1 via the Gaussian tail step of Lemma 3): "
            f"it needs epsilon <= ln(1/delta) = {limit:.6g}, i.e. delta <= exp(-epsilon).  "
            f"Use epsilon <= {limit:.6g}, or a smaller delta (delta <= {small_txt})."
        )
    return eps, dlt


def opdisc_sigma(epsilon: float, delta: float, lipschitz: float, max_norm: float, tau: float) -> float:
    """sigma = 7 G D^2 sqrt(ln(1/delta)) / (tau eps)  (Algorithm 1; Lemma 3 of the ICML paper).

    Only for epsilon <= ln(1/delta) (the proven range, see the module docstring);
    raises ``ValueError`` outside it.
    """
    eps, dlt = check_opdisc_range(epsilon, delta)
    return 7.0 * lipschitz * max_norm**2 * math.sqrt(math.log(1.0 / dlt)) / (tau * eps)


def opdisc_guarantee(epsilon: float, delta: float) -> PrivacyGuarantee:
    eps, dlt = check_opdisc_range(epsilon, delta)  # no guarantee outside eps <= ln(1/delta)
    return PrivacyGuarantee(
        epsilon=eps,
        delta=dlt,
        kind=GuaranteeKind.APPROXIMATE,
        requires_exact_oracle=True,
        source=SOURCE,
        notes="holds only if the oracle returns the exact minimizer (certified)",
    )


@dataclass(frozen=True)
class OPDiscResult:
    """Output of :func:`opdisc`: the released vector and what the guarantee covers.

    ``w`` is the released parameter vector, ``guarantee`` its privacy statement and
    ``sigma`` the noise scale (a function of public parameters).  The oracle's record
    (training loss of w, objective, bound, gap, status, wall time) and the timings
    read the data: they are in ``diagnostics`` (a
    :class:`~oracledp.diagnostics.NonPrivateDiagnostics` with entries ``oracle``, the
    :class:`~oracledp.oracles.OracleResult`, and ``timings``) only when the caller
    passed ``return_diagnostics=True``; otherwise ``diagnostics`` is None.
    """

    w: NDArray[np.float64]
    guarantee: PrivacyGuarantee
    sigma: float
    diagnostics: NonPrivateDiagnostics | None = field(default=None, repr=False)

    @property
    def certified(self) -> bool:
        """Whether the released answer was certified optimal (refused otherwise, unless
        ``allow_uncertified=True``, which marks the guarantee as not holding)."""
        return self.guarantee.holds


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
    return_diagnostics: bool = False,
    **oracle_options: Any,
) -> OPDiscResult:
    """Run OPDisc once.

    Parameters
    ----------
    problem:
        A discrete problem, e.g. :class:`~oracledp.oracles.HalfspaceProblem`
        (0/1 loss, G = 1/tau).
    epsilon, delta:
        Target (eps, delta); 0 < delta < 1 and 0 < eps <= ln(1/delta) (the range where
        the paper's calibration is proven, see the module docstring); outside it a
        ``ValueError`` is raised before any noise is drawn.
    oracle:
        Oracle name (see :func:`~oracledp.oracles.available_oracles`) or instance.
    random_state:
        Seed or Generator; the only source of randomness.
    allow_uncertified:
        Release an uncertified oracle answer anyway, with ``guarantee.holds = False``.
    eta:
        Test hook: use this noise vector instead of sampling one.
    return_diagnostics:
        Attach :class:`~oracledp.diagnostics.NonPrivateDiagnostics` (the oracle's
        record: training loss of w, objective, bound, status, wall time; timings).
        For research only: issues a :class:`~oracledp.errors.DiagnosticsWarning` and
        sets ``guarantee.diagnostics_released``; the diagnostics are not private.

    Privacy
    -------
    (eps, delta)-DP, replace-one neighbours, Theorem 1 of Neel et al. (ICML 2020);
    requires an exact oracle: uncertified answers raise :class:`OracleFailure`.
    The result holds only ``w``, ``sigma`` and the guarantee unless
    ``return_diagnostics=True``.
    """
    want_diag = check_diagnostics_flag(return_diagnostics)
    _check_problem(problem)
    guarantee = opdisc_guarantee(epsilon, delta)  # validates eps, delta, eps <= ln(1/delta) first
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
    guarantee, diagnostics = release_oracle_answer(
        res, guarantee, allow_uncertified=allow_uncertified, mechanism="OPDisc",
        key="opdisc", want_diagnostics=want_diag, times=(t0, t1, t2))
    assert res.solution is not None
    return OPDiscResult(w=np.array(res.solution, dtype=np.float64), guarantee=guarantee,
                        sigma=sigma, diagnostics=diagnostics)


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
