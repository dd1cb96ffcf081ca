"""Tests of OPSamp (Neel et al. ICML 2020, Algorithm 2), its convex oracle and estimator.

docs/specs/privacy-testing.md section 5 "OPSamp" and sections 4, 6, 7.  Layers (section 0):
(1) deterministic goldens, contracts and properties; (2) exact-law tests of the
two noise draws (exponential objective noise, Laplace output noise); (3) the
coupled sensitivity check of Lemma 10 on the S1 instance.  Every statistical
assertion runs at ALPHA = 1e-6 with a fixed seed and comes with a planted-bug
mutant that the same test must reject.

Instances
---------
* S1 (spec): d = 1, W = [-1, 1], l_i(w) = |w - x_i| / 2 (values in [0, 1],
  l1-Lipschitz with G = 1/2), D_inf = D_2 = D_1 = 2.  The perturbed objective
  sum_i |w - x_i|/2 - sigma w is piecewise linear with kinks at the x_i, so a
  brute-force oracle over {-1, 1, x_i} is exact (alpha = 0).
* Corners (section 7 pin of Lemma 9): W = [-1, 1]^d, l_i(w) = (1 + <1, w>/d)/2.
  The oracle's answer is the corner w_j = sign(sigma_j - n/(2d)), so with
  eta = 2 d ln2 / n its coordinates are independent fair signs.

Decision pinned here (module docstring of oracledp.learners._opsamp, (a); docs/proofs/opsamp-theorem11.md): eta
is the RATE of the exponential noise (mean 1/eta), as Lemma 8 (Suggala &
Netrapalli) and the proof of Theorem 7 use it; the spec line "Exp with scale
eta" follows the preliminaries' Exp(z|b) notation, under which bound (7) fails
on S1 (``test_s1_coupled_sensitivity``, mutant).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import stats

from oracledp._errors import BoundsViolation, OracleFailure
from oracledp.estimators._opsamp import OPSampClassifier
from oracledp.learners._opsamp import (
    opsamp,
    opsamp_gamma,
    opsamp_lambda,
    opsamp_parameters,
    opsamp_sensitivity,
)
from oracledp.oracles._convex import ApproxOracleResult, LogisticLinearOracle, LogisticProblem
from oracledp.privacy._guarantees import GuaranteeKind

ALPHA = 1e-6  # false-alarm rate of every statistical assertion in this file


# --- instances ------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class S1Problem:
    """S1: W = [-1, 1], l_i(w) = |w - x_i| / 2; exact loss table on the candidates {-1, 1, x_i}."""

    x: NDArray[np.float64]
    d: int = 1
    lipschitz: float = 0.5
    linf_diameter: float = 2.0
    l2_diameter: float = 2.0
    l1_diameter: float = 2.0
    cand: NDArray[np.float64] = field(init=False)
    loss: NDArray[np.float64] = field(init=False)

    def __post_init__(self) -> None:
        cand = np.unique(np.concatenate([[-1.0, 1.0], self.x]))
        object.__setattr__(self, "cand", cand)
        object.__setattr__(self, "loss", np.abs(cand[:, None] - self.x[None, :]).sum(axis=1) / 2)

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    def contains(self, w: NDArray[np.float64]) -> bool:
        return bool(np.shape(w) == (1,) and abs(float(w[0])) <= 1.0)


class S1BruteOracle:
    """Exact oracle for S1 by enumeration, vectorized over noise rows; records what it is given."""

    name = "s1-brute"
    alpha = 0.0

    def __init__(self) -> None:
        self.seen: list[NDArray[np.float64]] = []

    def solve_batch(
        self, problem: S1Problem, sigmas: NDArray[np.float64]
    ) -> list[ApproxOracleResult]:
        self.seen.append(np.array(sigmas, copy=True))
        obj = problem.loss[None, :] - sigmas[:, :1] * problem.cand[None, :]
        idx = obj.argmin(axis=1)
        return [
            ApproxOracleResult(
                np.array([problem.cand[i]]), float(obj[k, i]), 0.0, 0.0, self.name, 0.0
            )
            for k, i in enumerate(idx)
        ]

    def solve(self, problem: S1Problem, sigma: NDArray[np.float64]) -> ApproxOracleResult:
        return self.solve_batch(problem, np.atleast_2d(sigma))[0]


def s1_data(n: int = 1000) -> tuple[S1Problem, S1Problem]:
    """D: n/2 points at -1, n/10 evenly spaced in [0.8, 0.99], the rest at +1; D' replaces one +1 by -1.

    The exact argmin is the order statistic x_(j*) with j* = floor(n/2 + sigma) + 1 (or w = 1 if
    j* > n).  The gap of 1.8 just above the median is what a too-small sigma exposes: D' moves
    x_(n/2+1) from 0.8 to -1."""
    k, j = n // 2, n // 10
    x = np.concatenate([-np.ones(k), np.linspace(0.8, 0.99, j), np.ones(n - k - j)])
    x2 = x.copy()
    x2[-1] = -1.0
    return S1Problem(x), S1Problem(x2)


@dataclass(frozen=True)
class ConstProblem:
    """Geometry only (for noise-only runs and validation)."""

    n: int = 100
    d: int = 50
    lipschitz: float = 0.5
    linf_diameter: float = 2.0
    l2_diameter: float = 2.0


class ZeroOracle:
    """Always answers w = 0 with a zero certificate: OPSamp's output is then exactly mu."""

    name = "zero"
    alpha = 0.0

    def solve(self, problem: Any, sigma: NDArray[np.float64]) -> ApproxOracleResult:
        return ApproxOracleResult(np.zeros(problem.d), 0.0, 0.0, 0.0, self.name, 0.0)


@dataclass(frozen=True)
class CornerProblem:
    n: int
    d: int

    @property
    def lipschitz(self) -> float:
        return 1.0 / (2 * self.d)  # |<1, w - w'>| / (2d) <= ||w - w'||_1 / (2d)

    linf_diameter: float = 2.0

    @property
    def l2_diameter(self) -> float:
        return 2.0 * math.sqrt(self.d)

    @property
    def l1_diameter(self) -> float:
        return 2.0 * self.d


class CornerOracle:
    """Exact argmin of n/2 + (n/(2d)) sum_j w_j - <sigma, w> over [-1, 1]^d."""

    name = "corner"
    alpha = 0.0

    def solve_batch(
        self, problem: CornerProblem, sigmas: NDArray[np.float64]
    ) -> list[ApproxOracleResult]:
        W = np.where(sigmas > problem.n / (2 * problem.d), 1.0, -1.0)
        return [ApproxOracleResult(w, 0.0, 0.0, 0.0, self.name, 0.0) for w in W]

    def solve(self, problem: CornerProblem, sigma: NDArray[np.float64]) -> ApproxOracleResult:
        return self.solve_batch(problem, np.atleast_2d(sigma))[0]


def ks_rejects(sample: NDArray[np.float64], cdf: Any) -> bool:
    """KS goodness of fit at ALPHA (critical value kstwo(n).isf(ALPHA))."""
    n = sample.shape[0]
    return bool(stats.kstest(sample, cdf).statistic > stats.kstwo(n).isf(ALPHA))


def gamma_sum_rejects(total: float, N: int) -> bool:
    """Exact scale test: total ~ Gamma(N, 1) under H0; two-sided at ALPHA."""
    return bool(min(stats.gamma.cdf(total, N), stats.gamma.sf(total, N)) < ALPHA / 2)


# --- layer 1: goldens ---------------------------------------------------------------------


def test_paper_parameters_golden_s1() -> None:
    """Algorithm 2's gamma, m, eta for S1 (n=1000, d=1, eps=1, delta=0.1, G=1/2, D_inf=D_2=2, beta=0.05).

    gamma = sqrt(eps) / (sqrt(n) d^{5/4} sqrt(D_2)) = 1/sqrt(2000)
    m = ceil(ln(2d/delta) / (2 gamma^2)) = ceil(1000 ln 20) = ceil(2995.73227...) = 2996
    eta = sqrt(D_2 sqrt(2d) eps / (250 G^2 d^2 D_inf^2 (1 + ln(2/beta)) n))
        = sqrt(2 sqrt 2 / (250000 (1 + ln 40)))            (40-digit decimal arithmetic)
    lambda at (m, eta), exact oracle (alpha = 0), Lemma 10 with gamma = sqrt(ln 20 / 2996):
        4 * 2 * sqrt(ln 20 / 2996) + 250 eta (1/2) 1 * 4 = 1.0296434713126556
    """
    p = opsamp_parameters(1000, 1, 1.0, 0.1, 0.5, 2.0, 2.0, 0.0, 0.05)
    assert p.gamma == pytest.approx(0.022360679774997897, rel=1e-14)
    assert p.m == 2996
    assert p.eta == pytest.approx(0.0015533451243221083, rel=1e-14)
    assert p.lambda_ == pytest.approx(1.0296434713126556, rel=1e-13)
    assert p.lambda_ == pytest.approx(
        p.sensitivity.lambda_paper, rel=1e-15
    )  # d = 1: bound (7) itself
    assert p.gamma <= 1.0  # Lemma 9's premise


def test_paper_parameters_golden_d4() -> None:
    """n=10^4, d=4, eps=0.5, delta=1e-5, G=1/4, D_inf=2, D_2=4, alpha=1e-3, beta=0.1.

    gamma = sqrt(0.5) / (100 * 4^{5/4} * 2) = (1/sqrt 2) / (800 sqrt 2) = 1/1600
    m = ceil(ln(8 * 10^5) / (2 / 1600^2)) = ceil(17398229.768...) = 17398230
    eta = sqrt(4 sqrt 8 * 0.5 / (250 * 1/16 * 16 * 4 * (1 + ln 20) * 10^4)) = 3.7626108529953647e-4
    """
    p = opsamp_parameters(10_000, 4, 0.5, 1e-5, 0.25, 2.0, 4.0, 1e-3, 0.1)
    assert p.gamma == pytest.approx(1 / 1600, rel=1e-14)
    assert p.m == 17_398_230
    assert p.eta == pytest.approx(3.7626108529953647e-4, rel=1e-14)
    # lambda by hand (Lemma 10 gamma for this m; d = 4 so the printed concentration term wins):
    g = math.sqrt(math.log(8 / 1e-5) / 17_398_230)
    lam = 4 * 2 * g + 250 * p.eta * 0.25 * 16 * 4 + 1e-3 / (10 * 0.25)
    assert p.lambda_ == pytest.approx(lam, rel=1e-13)


def test_gamma_uses_the_conservative_lemma10_relation() -> None:
    """gamma(m) = sqrt(ln(2d/delta)/m) (Lemma 10), sqrt 2 larger than Algorithm 2's inversion."""
    g = opsamp_gamma(400, 1, 0.1)
    assert g == pytest.approx(0.08654091913011427, rel=1e-14)  # sqrt(ln 20 / 400)
    assert g == pytest.approx(math.sqrt(2) * math.sqrt(math.log(20) / (2 * 400)), rel=1e-14)


def test_lambda_golden_s1() -> None:
    """Bound (7) on S1 at m=400, eta=0.002, delta=0.1, alpha=0 (Lemma 10):
    4 D_inf gamma + 250 eta G d^2 D_inf^2 = 8 sqrt(ln 20 / 400) + 250 * 0.002 * 0.5 * 4 = 1.6923273530409141.
    The Hoeffding term D_1 sqrt(ln(1/delta)/(2m)) = 2 sqrt(ln 10 / 800) = 0.10729830131446736 is smaller."""
    s = opsamp_sensitivity(
        m=400,
        eta=0.002,
        d=1,
        delta=0.1,
        lipschitz=0.5,
        linf_diameter=2.0,
        alpha=0.0,
        l1_diameter=2.0,
    )
    assert s.lambda_ == pytest.approx(1.6923273530409141, rel=1e-14)
    assert s.lambda_paper == s.lambda_
    assert s.concentration_hoeffding == pytest.approx(0.10729830131446736, rel=1e-14)
    assert s.stability == pytest.approx(1.0, rel=1e-15)


def test_lambda_corrections_large_d_and_small_diameter() -> None:
    """Module notes (c) and (d): for d = 50 the Hoeffding term replaces 4 D_inf gamma; for D_inf < 1
    the stability term uses D_inf (not D_inf^2).  Both only ever increase lambda over bound (7)."""
    d, m, dlt, eta, G, a = 50, 100, 0.01, 1e-6, 0.01, 1e-3
    s = opsamp_sensitivity(m=m, eta=eta, d=d, delta=dlt, lipschitz=G, linf_diameter=2.0, alpha=a)
    conc_paper = 4 * 2 * math.sqrt(math.log(2 * d / dlt) / m)  # = 2.4279...
    hoeff = 2 * d * math.sqrt(math.log(1 / dlt) / (2 * m))  # D_1 = d D_inf = 100: 15.174...
    stab = 250 * eta * G * d**2 * 4
    assert s.concentration_paper == pytest.approx(conc_paper, rel=1e-14)
    assert s.concentration_hoeffding == pytest.approx(hoeff, rel=1e-14)
    assert s.lambda_ == pytest.approx(hoeff + stab + a / (10 * G), rel=1e-14)
    assert s.lambda_paper == pytest.approx(conc_paper + stab + a / (10 * G), rel=1e-14)
    assert s.lambda_ > s.lambda_paper

    s2 = opsamp_sensitivity(
        m=10_000, eta=0.01, d=2, delta=0.01, lipschitz=1.0, linf_diameter=0.5, alpha=0.0
    )
    assert s2.stability_paper == pytest.approx(250 * 0.01 * 1 * 4 * 0.25, rel=1e-14)
    assert s2.stability == pytest.approx(250 * 0.01 * 1 * 4 * 0.5, rel=1e-14)
    assert s2.lambda_ >= s2.lambda_paper
    assert (
        opsamp_lambda(
            m=10_000, eta=0.01, d=2, delta=0.01, lipschitz=1.0, linf_diameter=0.5, alpha=0.0
        )
        == s2.lambda_
    )


def test_logistic_problem_constants() -> None:
    """M = log(1 + e^{max margin}) over W, G = B/M, diameters of the box and the ball."""
    X = np.array([[0.5, -1.0, 0.25], [1.0, 0.0, -0.5]])
    y = np.array([1, -1])
    box = LogisticProblem.from_data(X, y, domain="box", radius=2.0, feature_bound=1.0)
    assert box.max_margin == 2.0 * 3  # r ||x||_1 <= r d B
    assert box.loss_scale == pytest.approx(math.log1p(math.exp(6.0)), rel=1e-15)
    assert box.lipschitz == pytest.approx(1.0 / math.log1p(math.exp(6.0)), rel=1e-15)
    assert (box.linf_diameter, box.l2_diameter, box.l1_diameter) == pytest.approx(
        (4.0, 4.0 * math.sqrt(3), 12.0)
    )
    ball = LogisticProblem.from_data(
        X, y, domain="ball", radius=2.0, feature_bound=1.0, feature_l1_bound=2.0
    )
    assert ball.max_margin == pytest.approx(2.0 * math.sqrt(2.0))  # ||x||_2^2 <= B ||x||_1
    assert (ball.linf_diameter, ball.l2_diameter) == (4.0, 4.0)
    # losses scaled to [0, 1] at the extreme points of W
    for P in (box, ball):
        for w in (
            np.full(3, 2.0),
            -np.full(3, 2.0),
            np.array([2.0, -2.0, 2.0]) / (1 if P is box else 2),
        ):
            w = P.project(w)
            assert P.contains(w)
            assert ((P.losses(w) >= 0) & (P.losses(w) <= 1)).all()


# --- layer 2: noise laws --------------------------------------------------------------------


def test_s1_objective_noise_is_exponential_with_rate_eta() -> None:
    """sigma_k ~ Exp(rate eta): KS (n = 5000) and the exact Gamma test of sum(eta sigma) ~ Gamma(N, 1).

    Mutant: Exp(scale eta) (the preliminaries' reading) must be rejected by both tests."""
    D, _ = s1_data(200)
    eta, m = 0.05, 5000
    orc = S1BruteOracle()
    opsamp(D, 1.0, 0.1, m=m, eta=eta, oracle=orc, random_state=11)
    sig = np.concatenate(orc.seen)[:, 0]
    assert sig.shape == (m,)
    assert not ks_rejects(sig, stats.expon(scale=1 / eta).cdf)
    assert not gamma_sum_rejects(float(eta * sig.sum()), m)
    assert sig.mean() == pytest.approx(1 / eta, rel=0.1)
    mutant = np.random.default_rng(11).exponential(scale=eta, size=m)
    assert ks_rejects(mutant, stats.expon(scale=1 / eta).cdf)
    assert gamma_sum_rejects(float(eta * mutant.sum()), m)


def test_output_noise_is_laplace_lambda_over_eps() -> None:
    """Noise-only run (oracle answers 0): the output is mu ~ Lap(lambda/eps)^d.

    d = 200 coordinates from each of 100 runs (N = 20,000, as 400 runs of d = 50 gave: the
    per-run cost is OPSamp's fixed overhead): KS on all 20,000 coordinates (it took the first
    5,000) and the exact scale test sum|X|/b ~ Gamma(N, 1), each at ALPHA.
    Mutant: half the noise scale must be rejected."""
    P, orc, eps, dlt = ConstProblem(d=200), ZeroOracle(), 0.7, 1e-3
    rng = np.random.default_rng(5)
    outs = np.concatenate(
        [opsamp(P, eps, dlt, m=2, eta=0.01, oracle=orc, random_state=rng).w for _ in range(100)]
    )
    b = (
        opsamp_lambda(m=2, eta=0.01, d=P.d, delta=dlt, lipschitz=0.5, linf_diameter=2.0,
                      alpha=0.0)
        / eps
    )
    assert outs.shape == (20_000,)
    assert not ks_rejects(outs, stats.laplace(scale=b).cdf)
    assert not gamma_sum_rejects(float(np.abs(outs).sum() / b), outs.size)
    half = outs / 2
    assert ks_rejects(half, stats.laplace(scale=b).cdf)
    assert gamma_sum_rejects(float(np.abs(half).sum() / b), half.size)


# --- layer 3: coupled sensitivity (Lemma 10) -----------------------------------------------


def _coupled_exceedances(
    sigma_law: str, N: int, m: int, eta: float, dlt: float
) -> tuple[int, float, float]:
    D, Dp = s1_data(1000)
    orc = S1BruteOracle()
    exceed, mean_y, lam = 0, 0.0, 0.0
    for t in range(N):
        hook = None
        if sigma_law == "scale":  # the mutant: Exp(scale eta) through the noise hook
            hook = np.random.default_rng(10_000 + t).exponential(scale=eta, size=(m, 1))
        r1 = opsamp(
            D, 1.0, dlt, m=m, eta=eta, oracle=orc, random_state=t, mu=np.zeros(1), sigma=hook
        )
        r2 = opsamp(
            Dp, 1.0, dlt, m=m, eta=eta, oracle=orc, random_state=t, mu=np.zeros(1), sigma=hook
        )
        diff = float(np.abs(r1.w - r2.w).sum())  # same Sigma on D and D' (same seed / same hook)
        exceed += diff > r1.lambda_
        mean_y += diff / N
        lam = r1.lambda_
    return exceed, mean_y, lam


def test_s1_coupled_sensitivity() -> None:
    """||W(D, Sigma) - W(D', Sigma)||_1 may exceed bound (7) in at most a delta fraction of Sigma.

    S1 with n = 1000, m = 400, eta = 0.002 (rate), delta = 0.1: bound (7) = 1.692 < 2 = D_1, so
    the check is not vacuous.  Exact binomial test of H0: P[exceed] <= delta at ALPHA (the
    false-alarm rate, exact at any N).
    Power: the proven constants (250) make the bound loose for a correct mechanism (0 of 150
    seeds exceed; mean l1 difference 0.004); with N = 60 the test rejects at k >= 20, so with
    probability 0.88 a mechanism exceeding in 40% of the runs, 0.997 at 50%, 1 at 60% (N = 150
    rejected at k >= 36: 0.96 at 30%).  The planted mutant (Exp(scale eta), the scale/rate
    confusion) exceeds in every run: its 10 runs give P = 0.1^10 < ALPHA, and up to 2 of the 10
    could stay within the bound (P[Bin(10, 0.1) >= 8] = 3.7e-7) and it would still be caught.
    Also checks the empirical mean of the l1 difference against the Lemma 8 bound
    250 eta G d^2 D_inf^2 = 1."""
    N, N_mut, m, eta, dlt = 60, 10, 400, 0.002, 0.1
    k, mean_y, lam = _coupled_exceedances("rate", N, m, eta, dlt)
    assert lam == pytest.approx(1.6923273530409141, rel=1e-14)
    assert stats.binom.sf(k - 1, N, dlt) >= ALPHA
    assert mean_y <= 1.0
    k_mut, _, _ = _coupled_exceedances("scale", N_mut, m, eta, dlt)
    assert stats.binom.sf(k_mut - 1, N_mut, dlt) < ALPHA


def test_lemma9_l1_claim_fails_in_high_dimension() -> None:
    """Section 7 pin: Lemma 9's ||W(D, Sigma) - E O(D, sigma)||_1 <= 2 D_inf gamma, with
    m = ln(2d/delta)/(2 gamma^2), is false for large d.  Corners instance, d = 50, E O = 0:
    the claim must hold with probability >= 1 - delta/2, but fails in (nearly) every run.
    This is why lambda uses max(4 D_inf gamma, D_1 sqrt(ln(1/delta)/(2m))) (module note (c))."""
    n, d, m, dlt, N = 1000, 50, 200, 0.01, 60
    P = CornerProblem(n, d)
    eta = 2 * d * math.log(2) / n  # P[sigma_j > n/(2d)] = 1/2
    gamma9 = math.sqrt(math.log(2 * d / dlt) / (2 * m))
    fails = 0
    for t in range(N):
        r = opsamp(P, 1.0, dlt, m=m, eta=eta, oracle=CornerOracle(), random_state=t, mu=np.zeros(d))
        fails += float(np.abs(r.w).sum()) > 2 * 2.0 * gamma9
        assert r.sensitivity.concentration_hoeffding > r.sensitivity.concentration_paper
    assert stats.binom.sf(fails - 1, N, dlt / 2) < ALPHA


# --- oracle contract ---------------------------------------------------------------------


def _logistic_data(n: int, d: int, seed: int) -> tuple[NDArray[np.float64], NDArray[np.int8]]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1, -1).astype(np.int8)
    return X, y


@pytest.mark.parametrize("domain", ["box", "ball"])
@pytest.mark.parametrize("sigma_scale", [0.0, 5.0, 200.0])
def test_convex_oracle_alpha_is_a_true_upper_bound(domain: str, sigma_scale: float) -> None:
    """A deliberately loose solve (few iterations) reports a certificate >= its true suboptimality,
    measured against a high-precision solve (whose own certificate is ~1e-9)."""
    X, y = _logistic_data(300, 4, seed=2)
    sigma = (
        np.random.default_rng(3).exponential(sigma_scale, size=4) if sigma_scale else np.zeros(4)
    )
    precise = LogisticLinearOracle(domain, 1.5, alpha=1e-7, tol=1e-13)
    P = precise.problem(X, y)
    best = precise.solve(P, sigma)
    f_star_lower = best.objective - best.gap  # certified lower bound on min_W f
    loose = LogisticLinearOracle(domain, 1.5, alpha=1e3, tol=1e-2, max_iter=2)
    res = loose.solve(P, sigma)
    assert P.contains(res.w) and P.contains(best.w)
    subopt = res.objective - best.objective
    assert subopt >= -1e-9
    assert subopt <= res.gap
    assert res.objective - f_star_lower <= res.gap + best.gap
    assert res.certified and best.certified and best.gap <= 1e-7


def test_convex_oracle_refuses_an_alpha_it_cannot_certify() -> None:
    X, y = _logistic_data(300, 4, seed=2)
    orc = LogisticLinearOracle("box", 1.5, alpha=1e-12, tol=1e-2, max_iter=1)
    with pytest.raises(OracleFailure, match="could not certify") as info:
        orc.solve(orc.problem(X, y), np.ones(4))
    assert isinstance(info.value.result, ApproxOracleResult)
    assert not info.value.result.certified
    # ... and OPSamp releases nothing.
    with pytest.raises(OracleFailure):
        opsamp(orc.problem(X, y), 1.0, 1e-3, m=2, oracle=orc, random_state=0)


class LyingOracle:
    """Returns answers whose certificate exceeds the declared alpha without raising, or points outside W."""

    name = "liar"
    alpha = 1e-6

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def solve(self, problem: Any, sigma: NDArray[np.float64]) -> ApproxOracleResult:
        if self.mode == "gap":
            return ApproxOracleResult(np.zeros(problem.d), 0.0, 1e-3, self.alpha, self.name, 0.0)
        if self.mode == "nan":
            return ApproxOracleResult(
                np.full(problem.d, np.nan), 0.0, 0.0, self.alpha, self.name, 0.0
            )
        return ApproxOracleResult(np.full(problem.d, 5.0), 0.0, 0.0, self.alpha, self.name, 0.0)


@pytest.mark.parametrize("mode", ["gap", "nan", "outside"])
def test_opsamp_refuses_uncertified_or_invalid_answers(mode: str) -> None:
    X, y = _logistic_data(50, 3, seed=0)
    P = LogisticProblem.from_data(X, y, radius=1.0)
    with pytest.raises(OracleFailure):
        opsamp(P, 1.0, 1e-3, m=3, oracle=LyingOracle(mode), random_state=0)


# --- contracts, reproducibility, guarantee -----------------------------------------------


def _state(rng: np.random.Generator) -> Any:
    return rng.bit_generator.state


@pytest.mark.parametrize(
    ("kwargs", "exc"),
    [
        ({"epsilon": 0.0}, ValueError),
        ({"epsilon": float("nan")}, ValueError),
        ({"epsilon": float("inf")}, ValueError),
        ({"delta": 0.0}, ValueError),
        ({"delta": 1.0}, ValueError),
        ({"m": 0}, ValueError),
        ({"m": 2.5}, TypeError),
        ({"m": True}, TypeError),
        ({"eta": -1.0}, ValueError),
        ({"eta": float("nan")}, ValueError),
        ({"beta": 1.0}, ValueError),
        ({"n_jobs": 0}, ValueError),
        ({"sigma": np.ones((3, 2))}, ValueError),
        ({"sigma": -np.ones((2, 1))}, ValueError),
        ({"mu": np.array([np.nan])}, ValueError),
        ({"oracle": object()}, TypeError),
        ({"problem": object()}, TypeError),
    ],
)
def test_opsamp_validates_before_drawing_noise(
    kwargs: dict[str, Any], exc: type[Exception]
) -> None:
    D, _ = s1_data(100)
    args: dict[str, Any] = {
        "problem": D,
        "epsilon": 1.0,
        "delta": 0.1,
        "m": 2,
        "oracle": S1BruteOracle(),
    }
    args.update(kwargs)
    rng = np.random.default_rng(0)
    before = _state(rng)
    with pytest.raises(exc):
        opsamp(
            args.pop("problem"), args.pop("epsilon"), args.pop("delta"), random_state=rng, **args
        )
    assert _state(rng) == before


@pytest.mark.parametrize(
    ("X", "y", "kw", "exc"),
    [
        ([[0.5, 1.5]], [1], {}, BoundsViolation),  # |x| > feature_bound
        ([[0.9, 0.9]], [1], {"feature_l1_bound": 1.0}, BoundsViolation),
        ([[0.5, 0.5]], [0], {}, BoundsViolation),  # labels must be -1/+1
        ([[np.nan, 0.5]], [1], {}, ValueError),
        ([[0.5, 0.5]], [1], {"domain": "simplex"}, ValueError),
        ([[0.5, 0.5]], [1], {"radius": 0.0}, ValueError),
    ],
)
def test_logistic_problem_refuses_out_of_bounds(
    X: Any, y: Any, kw: dict[str, Any], exc: type[Exception]
) -> None:
    with pytest.raises(exc):
        LogisticProblem.from_data(X, y, **kw)


def test_logistic_problem_direct_construction_is_validated_too() -> None:
    """The bounds are invariants of the dataclass, not only of from_data (no bypass)."""
    X = np.array([[0.5, 2.0]])
    with pytest.raises(BoundsViolation):
        LogisticProblem(
            X=X, y=np.array([1]), domain="box", radius=1.0, feature_bound=1.0, feature_l1_bound=2.0
        )
    P = LogisticProblem.from_data([[0.5, 0.5]], [1], feature_l1_bound=10.0)
    assert P.feature_l1_bound == 2.0  # capped at d * B
    assert not P.X.flags.writeable


def test_results_do_not_depend_on_n_jobs_and_seed_reproduces() -> None:
    X, y = _logistic_data(200, 3, seed=4)
    orc = LogisticLinearOracle("box", 1.0)
    P = orc.problem(X, y)
    a = opsamp(P, 1.0, 1e-4, m=6, oracle=orc, random_state=123, n_jobs=1)
    b = opsamp(P, 1.0, 1e-4, m=6, oracle=orc, random_state=123, n_jobs=2)
    c = opsamp(P, 1.0, 1e-4, m=6, oracle=orc, random_state=123)
    d = opsamp(P, 1.0, 1e-4, m=6, oracle=orc, random_state=124)
    assert np.array_equal(a.w, b.w) and np.array_equal(a.w, c.w)
    assert not np.array_equal(a.w, d.w)


def test_guarantee_and_result_fields() -> None:
    X, y = _logistic_data(100, 3, seed=1)
    orc = LogisticLinearOracle("ball", 2.0, alpha=1e-5)
    P = orc.problem(X, y)
    r = opsamp(P, 0.5, 1e-6, m=4, oracle=orc, random_state=0)
    g = r.guarantee
    assert (g.epsilon, g.delta, g.kind) == (0.5, 1e-6, GuaranteeKind.APPROXIMATE)
    assert g.requires_exact_oracle is False and g.holds
    assert "Algorithm 2" in g.source and "Theorem 11" in g.source
    assert "alpha = 1e-05" in g.notes
    assert r.alpha == 1e-5 and r.m == 4
    assert r.gamma == pytest.approx(math.sqrt(math.log(2 * 3 / 1e-6) / 4))
    # default eta is Algorithm 2's (beta = 0.05)
    p = opsamp_parameters(
        100, 3, 0.5, 1e-6, P.lipschitz, P.linf_diameter, P.l2_diameter, 1e-5, 0.05
    )
    assert r.eta == pytest.approx(p.eta, rel=1e-15)
    assert r.lambda_ == pytest.approx(
        opsamp_lambda(
            m=4,
            eta=r.eta,
            d=3,
            delta=1e-6,
            lipschitz=P.lipschitz,
            linf_diameter=P.linf_diameter,
            alpha=1e-5,
            l1_diameter=P.l1_diameter,
        ),
        rel=1e-15,
    )
    assert r.diagnostics is None and not r.guarantee.diagnostics_released
    with pytest.raises(AttributeError):
        r.w = np.zeros(3)  # type: ignore[misc]


# --- estimator ----------------------------------------------------------------------------


def test_estimator_validates_before_noise_and_maps_labels() -> None:
    X, y = _logistic_data(60, 3, seed=6)
    labels = np.where(y > 0, "yes", "no")
    rng = np.random.default_rng(0)
    before = _state(rng)
    with pytest.raises(BoundsViolation):
        OPSampClassifier(1.0, random_state=rng).fit(X * 3, labels)
    with pytest.raises(BoundsViolation):
        OPSampClassifier(1.0, classes=["no", "maybe"], random_state=rng).fit(X, labels)
    with pytest.raises(ValueError):
        OPSampClassifier(1.0, m=0, random_state=rng).fit(X, labels)
    assert _state(rng) == before
    clf = OPSampClassifier(1.0, classes=["yes", "no"], random_state=0).fit(X, labels)
    assert list(clf.classes_) == ["no", "yes"]
    assert set(clf.predict(X)) <= {"no", "yes"}
    assert clf.coef_.shape == (1, 3) and clf.intercept_ == 0.0
    assert clf.guarantee_.delta == pytest.approx(1 / 60**2)


def test_estimator_knob_isolation_negligible_noise_learns() -> None:
    """With eps huge (Laplace scale ~1e-12) and eta = 100 (objective noise of mean 0.01) the fit is
    the average of m near-exact logistic solutions: it must match the non-private minimizer over
    the same W (catches a sign flip of the linear term, a wrong label mapping, a lost scaling)."""
    X, y = _logistic_data(400, 3, seed=8)
    clf = OPSampClassifier(1e9, 0.01, m=4, eta=100.0, radius=5.0, random_state=0).fit(X, y)
    orc = LogisticLinearOracle("box", 5.0, alpha=1e-8, tol=1e-12)
    w_star = orc.solve(orc.problem(X, y), np.zeros(3)).w
    assert np.abs(clf.coef_[0] - w_star).max() < 0.2
    acc_star = float((np.where(X @ w_star > 0, 1, -1) == y).mean())
    assert clf.score(X, y) == pytest.approx(acc_star, abs=0.01)
    assert acc_star > 0.8


def test_estimator_adult_smoke() -> None:
    """Adult (balanced train file), n = 2,000 random rows, d = 23, box r = 1, ||x||_1 <= 7
    (public encoding bound), eps = 1, delta = 1/n^2, m = 20; accuracy on the 7,692-row test split.
    Reported, not asserted above chance: at these sizes lambda/eps ~ 90 per coordinate, so the
    released vector is dominated by the Laplace noise (observed ~0.6)."""
    from oracledp.datasets import load_adult

    train, test = load_adult(), load_adult(split="test")
    idx = np.random.default_rng(0).choice(train.n_samples, 2000, replace=False)
    t0 = time.perf_counter()
    clf = OPSampClassifier(1.0, m=20, feature_l1_bound=7.0, random_state=0)
    clf.fit(train.X[idx], train.y[idx])
    elapsed = time.perf_counter() - t0
    acc = float(clf.score(test.X, test.y))
    print(
        f"\nOPSamp Adult n=2000 eps=1 m=20: accuracy {acc:.4f}, lambda {clf.lambda_:.3g}, "
        f"eta {clf.eta_:.3g}, fit {elapsed:.2f}s"
    )
    assert 0.0 <= acc <= 1.0
    assert clf.coef_.shape == (1, 23)
    assert clf.lambda_ > 0 and clf.m_ == 20
    assert clf.guarantee_.epsilon == 1.0 and clf.guarantee_.delta == pytest.approx(1 / 2000**2)


class _ThreadsSeenOracle(ZeroOracle):
    """Records the BLAS thread counts each solve runs under."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def solve(self, problem: Any, sigma: NDArray[np.float64]) -> ApproxOracleResult:
        from threadpoolctl import threadpool_info

        self.seen.extend(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
        return super().solve(problem, sigma)


def test_every_solve_runs_with_single_threaded_blas() -> None:
    """The oracle runs under one BLAS thread (so its answers cannot depend on n_jobs), on the
    first call and on later ones (the controller is reused), and after an import (which may
    load a library: the controller is made again); outside, the limits are restored.  The
    pools are set to 2 threads around it, so that without the limit the oracle would see 2
    on any machine."""
    import importlib

    from threadpoolctl import threadpool_info, threadpool_limits

    def blas() -> list[int]:
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    P = CornerProblem(n=50, d=2)
    with threadpool_limits(limits=2, user_api="blas"):
        before = blas()
        assert before and set(before) == {2}
        for round_ in range(3):
            orc = _ThreadsSeenOracle()
            opsamp(P, 1.0, 1e-4, m=3, oracle=orc, random_state=round_, n_jobs=1)
            assert orc.seen and set(orc.seen) == {1}
            if round_ == 1:  # sys.modules may grow: the next call scans again
                importlib.import_module("oracledp.synth._table_budget")
        assert blas() == before
