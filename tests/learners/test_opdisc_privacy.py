"""Privacy and reliability tests of OPDisc (docs/specs/privacy-testing.md sections 0, 2-6, 8; OPDisc part of 5).

Layers (section 0): (1) deterministic goldens, properties and input contracts;
(2) exact-law tests on tiny instances against a closed form or quadrature;
(3) audits on neighbouring datasets.  Every statistical assertion runs at
alpha = 1e-6 with a fixed seed, and every one ships with a planted-bug mutant
that must be rejected by the same test on the same N.

Instances
---------
* O1: d = 1, W = {-1, +1} (tau = 2, D = 1, G = 1/tau = 1/2).  oracledp's
  ``IntegerBall`` always contains w = 0, so W = {-1, +1} is given as an explicit
  point set (``ExplicitSpace`` below) that plugs into the library's own
  ``opdisc``, ``_opdisc_sample_k`` and brute-force oracle.  Objective
  F(w) = L(w) - <eta, pi(w)>, pi(+-1) = (+-1, 0), so +1 wins iff
  L(+1) - eta_1 < L(-1) + eta_1, i.e. eta_1 > -g/2 with g = L(-1) - L(+1) (counts):
  P[+1] = Phi(g / (2 sigma)).
* O1-lattice: the same data on ``IntegerBall(1)`` = {-1, 0, +1} (tau = 1, D = 1,
  G = 1); pi(0) = (0, 1), so the three-point law is a 1-D integral (quadrature).
* O2: d = 2, ``IntegerBall(2)`` = {-1, 0, 1}^2 (all 9 points have ||k||^2 <= 2,
  D = sqrt 2; the corners have last pi coordinate exactly 0).
"""

from __future__ import annotations

import dataclasses
import importlib
import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import integrate, stats

from oracledp._errors import BoundsViolation, DiagnosticsWarning, OracleFailure
from oracledp._validation import check_rng
from oracledp.audit import FAILURE, audit, failure_aware_sampler, gaussian_mu_max, is_failure
from oracledp.learners._opdisc import _opdisc_sample_k, opdisc, opdisc_sigma
from oracledp.learners._opdisc_calibration import proven_multiplier
from oracledp.oracles import HalfspaceProblem, IntegerBall, OracleStatus, make_oracle
from oracledp.oracles._base import make_result
from oracledp.oracles._brute import BruteForceOracle

# the implementation module (oracledp.learners.opdisc is the function)
opdisc_module = importlib.import_module("oracledp.learners._opdisc")

ALPHA = 1e-6  # false-alarm rate of every statistical assertion in this file
EPS, DELTA = 1.0, 1e-5
# sigma for O1 (proven calibration, docs/proofs/opdisc-calibration.md): c = 4 G D^2 / tau = 1,
# so sigma = m* = the smallest multiplier with a proven delta bound <= 1e-5 at eps = 1, d = 1,
# |W| = 2 (golden value; the bound itself is checked by mpmath in test_opdisc_calibration.py).
# Theorem 1's sigma would be 1.75 sqrt(ln 1e5) = 5.93787.
SIGMA_O1 = 3.8846027804884535


# --- explicit-W problems (W = {-1, +1} is not an IntegerBall) ---------------------------------


@dataclass(frozen=True, eq=False)
class ExplicitSpace:
    """W given as explicit integer rows K; tau = min pairwise distance, D = max norm (brute force).

    Implements what OPDisc, ``_opdisc_sample_k``, the brute-force oracle and
    ``make_result`` read from a space.  Note: ``make_result`` reports the solution as
    ``tau * k`` (lattice convention of ``IntegerBall``), so with tau = 2 the released
    ``w`` is 2k; the tests read ``k``.
    """

    K: NDArray[np.int64]
    tau: float = field(init=False)
    max_norm: float = field(init=False)

    def __post_init__(self) -> None:
        K = np.asarray(self.K, dtype=np.int64)
        object.__setattr__(self, "K", K)
        dist = [np.linalg.norm(a - b) for a, b in itertools.combinations(K, 2)]
        object.__setattr__(self, "tau", float(min(dist)))
        object.__setattr__(self, "max_norm", float(np.linalg.norm(K, axis=1).max()))

    @property
    def d(self) -> int:
        return self.K.shape[1]

    def enumerate_k(self, max_points: int = 0) -> NDArray[np.int64]:
        return self.K

    def size(self) -> int:
        return len(self.K)

    def contains_k(self, k: NDArray[np.integer]) -> NDArray[np.bool_]:
        k = np.atleast_2d(k)
        return (k[:, None, :] == self.K[None, :, :]).all(axis=2).any(axis=1)

    def pi_k(self, k: NDArray[np.integer]) -> NDArray[np.float64]:
        k = np.asarray(k, dtype=np.float64)
        k2 = np.atleast_2d(k)
        D = self.max_norm
        last = np.sqrt(np.clip(1.0 - (k2**2).sum(axis=1) / D**2, 0.0, None))
        out = np.hstack([k2 / D, last[:, None]])
        return out[0] if k.ndim == 1 else out

    pi = pi_k


@dataclass(frozen=True, eq=False)
class ExplicitProblem:
    """The 0/1 loss of a HalfspaceProblem's data over an explicit W (G = 1/tau)."""

    base: HalfspaceProblem
    space: ExplicitSpace

    @property
    def lipschitz(self) -> float:
        return 1.0 / self.space.tau

    def loss_k(self, K: NDArray[np.integer]) -> NDArray[np.int64]:
        return self.base.loss_k(K)


W_PM1 = ExplicitSpace(np.array([[-1], [1]]))


def _data_1d(xs: list[int], ys: list[int]) -> HalfspaceProblem:
    return HalfspaceProblem.from_data(
        np.array(xs, dtype=float)[:, None], np.array(ys), IntegerBall(1)
    )


def _o1_problem() -> ExplicitProblem:
    """12 points with y = x (six at x = +1, six at x = -1): L(+1) = 0, L(-1) = 12, g = 12."""
    xs = [1] * 6 + [-1] * 6
    return ExplicitProblem(_data_1d(xs, xs), W_PM1)


def _o1p_pair() -> tuple[ExplicitProblem, ExplicitProblem]:
    """O1': D = two points with y = x and one with y = -x (g = +1); D' flips an agreeing
    label (g = -1).  Replace-one neighbours."""
    d = _data_1d([1, 1, 1], [1, 1, -1])
    d2 = _data_1d([1, 1, 1], [1, -1, -1])
    return ExplicitProblem(d, W_PM1), ExplicitProblem(d2, W_PM1)


def _binom_reject(k: int, n: int, p: float) -> bool:
    return stats.binomtest(k, n, p).pvalue < ALPHA


def _mutant_sample_k(
    problem: Any,
    eps: float,
    delta: float,
    n: int,
    rng: np.random.Generator,
    *,
    sigma_scale: float = 1.0,
    loss_scale: float = 1.0,
    use_pi: bool = True,
) -> NDArray[np.int64]:
    """OPDisc with a planted bug: scaled noise, scaled/negated loss, or noise in d dims on w
    without the normalization pi.  Used only for meta-tests (each must be rejected)."""
    sp = problem.space
    K = sp.enumerate_k()
    sigma = sigma_scale * opdisc_sigma(eps, delta, problem)
    loss = loss_scale * problem.loss_k(K).astype(float)
    if use_pi:
        etas = rng.normal(0.0, sigma, size=(n, sp.d + 1))
        obj = loss[None, :] - etas @ sp.pi_k(K).T
    else:
        etas = rng.normal(0.0, sigma, size=(n, sp.d))
        obj = loss[None, :] - etas @ (sp.tau * K).T
    return K[obj.argmin(axis=1)]


def _k(res: Any, problem: Any) -> NDArray[np.int64]:
    """Integer coordinates k = w / tau of a released OPDisc vector."""
    return np.rint(np.asarray(res.w) / problem.space.tau).astype(np.int64)


def _with_diagnostics(problem: Any, *args: Any, **kw: Any) -> Any:
    """``opdisc`` with its non-private diagnostics (oracle record), which warns."""
    with pytest.warns(DiagnosticsWarning):
        return opdisc(problem, *args, return_diagnostics=True, **kw)


def _public_sample_k(
    problem: Any, eps: float, delta: float, n: int, seed: int
) -> NDArray[np.int64]:
    """n independent public ``opdisc`` calls (brute oracle), one spawned SeedSequence each."""
    children = np.random.SeedSequence(seed).spawn(n)
    return np.array(
        [_k(opdisc(problem, eps, delta, oracle="brute", random_state=c), problem)
         for c in children]
    )


# === O1: closed form on W = {-1, +1} ===========================================================


def test_o1_sigma_and_decision_rule_via_noise_hook() -> None:
    """Layer 1.  On O1, opdisc's reported sigma equals the golden value 3.88460 (D = 1, tau = 2,
    G = 1/2), and with the noise hook the output is +1 iff eta_1 > -g/2 = -6, whatever eta_2
    (pi(+-1) has last coordinate 0).  Catches a wrong sigma formula, an argmax, a loss scaled
    by 1/n (threshold -0.5) and a mis-normalized pi."""
    prob = _o1_problem()
    assert prob.loss_k(np.array([[1], [-1]])).tolist() == [0, 12]
    assert (W_PM1.tau, W_PM1.max_norm, prob.lipschitz) == (2.0, 1.0, 0.5)
    rng = np.random.default_rng(5)
    e1 = np.concatenate([rng.normal(-6, 3, 150), [-6.5, -5.5, -6.001, -5.999]])
    for a in e1:
        eta = np.array([a, rng.normal(0, 50)])
        res = opdisc(prob, EPS, DELTA, oracle="brute", eta=eta)
        assert res.sigma == pytest.approx(SIGMA_O1, rel=1e-12)
        # certified, but the noise came from the caller: the guarantee must not hold
        assert res.certified and not res.guarantee.holds
        assert "supplied by the caller" in res.guarantee.notes
        assert int(_k(res, prob)[0]) == (1 if a > -6 else -1), a


def test_o1_exact_law_vectorized_sampler() -> None:
    """Layer 2 (exact law).  P[+1] = Phi(12 / (2 * 3.88460)) = 0.93877 on O1; exact binomial
    test on N = 5,000 draws of ``_opdisc_sample_k``, two-sided, false-alarm rate 1e-6.
    Meta-tests (same N, same seed) that must be rejected: half noise (P = 0.9990), loss
    divided by n with the noise unchanged (P = 0.551), argmax instead of argmin (P = 0.061)."""
    prob = _o1_problem()
    p = stats.norm.cdf(12 / (2 * SIGMA_O1))
    assert p == pytest.approx(0.9387736, abs=1e-6)
    N = 5000
    k = _opdisc_sample_k(prob, EPS, DELTA, N, np.random.default_rng(101))[:, 0]
    assert set(np.unique(k)) <= {-1, 1}
    hits = int((k == 1).sum())
    assert not _binom_reject(hits, N, p), (
        f"P[+1] = {hits}/{N}, expected {p:.5f}; exact binomial p-value < {ALPHA} (false-alarm rate)"
    )
    half = _opdisc_sample_k(prob, EPS, DELTA, N, np.random.default_rng(101), sigma_scale=0.5)
    assert _binom_reject(int((half[:, 0] == 1).sum()), N, p)
    for kwargs in ({"loss_scale": 1 / 12}, {"loss_scale": -1.0}, {"sigma_scale": 0.5}):
        mut = _mutant_sample_k(prob, EPS, DELTA, N, np.random.default_rng(101), **kwargs)
        assert _binom_reject(int((mut[:, 0] == 1).sum()), N, p), kwargs


def test_o1_exact_law_public_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Layer 2 (exact law) through the public ``opdisc`` (its own noise draw, spawned seeds):
    same closed form and test as above, N = 5,000, false-alarm rate 1e-6.  Catches a noise
    draw in ``opdisc`` that disagrees with the vectorized sampler.  Meta-test: the module's
    calibration patched to return half the sigma must be rejected; 1,000 draws suffice for it
    (P[+1] = 0.99900 against 0.93877: the test at 1e-6 accepts 899..972 hits of 1,000, which
    the mutant reaches with probability < 1e-15)."""
    prob = _o1_problem()
    p = stats.norm.cdf(12 / (2 * SIGMA_O1))
    N = 5000
    hits = int((_public_sample_k(prob, EPS, DELTA, N, 202)[:, 0] == 1).sum())
    assert not _binom_reject(hits, N, p), f"public opdisc P[+1] = {hits}/{N}, expected {p:.5f}"
    real = opdisc_module.calibrate
    monkeypatch.setattr(opdisc_module, "calibrate",
                        lambda *a: dataclasses.replace(real(*a), sigma=0.5 * real(*a).sigma))
    N_MUT = 1000
    half = int((_public_sample_k(prob, EPS, DELTA, N_MUT, 202)[:, 0] == 1).sum())
    assert _binom_reject(half, N_MUT, p)


def _lattice_law(L_minus: float, L_zero: float, L_plus: float, sigma: float) -> NDArray[np.float64]:
    """Exact law of argmin over W = {-1, 0, +1} (pi = (-1,0), (0,1), (1,0)):
    +1 iff e1 > (L+ - L-)/2 and e2 < L0 - L+ + e1;  -1 iff e1 < (L+ - L-)/2 and e2 < L0 - L- - e1."""
    t = (L_plus - L_minus) / 2
    phi = stats.norm(0, sigma)
    p_plus = integrate.quad(
        lambda e: phi.pdf(e) * phi.cdf(L_zero - L_plus + e), t, np.inf, epsabs=1e-13, epsrel=1e-12
    )[0]
    p_minus = integrate.quad(
        lambda e: phi.pdf(e) * phi.cdf(L_zero - L_minus - e), -np.inf, t, epsabs=1e-13, epsrel=1e-12
    )[0]
    return np.array([p_minus, 1.0 - p_plus - p_minus, p_plus])


def test_o1_lattice_exact_law_integer_ball() -> None:
    """Layer 2 (exact law by quadrature) on the library's own types: HalfspaceProblem over
    IntegerBall(1) = {-1, 0, 1} (sigma = 4 m* = 15.890, proven), O1 data (L = 12, 12, 0).
    Chi-square goodness of fit over the 3 outcomes, N = 5,000, reject iff p < 1e-6
    (false-alarm rate 1e-6, asymptotic; all expected counts > 700).  Meta-tests that must
    be rejected: half noise; noise on w in d dims without pi (w = 0 then never wins)."""
    prob = _data_1d([1] * 6 + [-1] * 6, [1] * 6 + [-1] * 6)
    K = prob.space.enumerate_k()
    assert K[:, 0].tolist() == [-1, 0, 1] and prob.loss_k(K).tolist() == [12, 12, 0]
    sigma = opdisc_sigma(EPS, DELTA, prob)
    assert sigma == pytest.approx(15.8897312433022, rel=1e-9)
    law = _lattice_law(12, 12, 0, sigma)
    assert (law > 0.14).all() and law.sum() == pytest.approx(1.0)
    N = 5000

    def pvalue(k: NDArray[np.int64]) -> float:
        counts = np.array([(k[:, 0] == v).sum() for v in (-1, 0, 1)])
        return float(stats.chisquare(counts, N * law).pvalue)

    pv = pvalue(_opdisc_sample_k(prob, EPS, DELTA, N, np.random.default_rng(303)))
    assert pv >= ALPHA, (
        f"OPDisc law on IntegerBall(1) rejected, p = {pv:.3g} (false-alarm rate {ALPHA})"
    )
    assert (
        pvalue(_opdisc_sample_k(prob, EPS, DELTA, N, np.random.default_rng(303), sigma_scale=0.5))
        < ALPHA
    )
    assert (
        pvalue(_mutant_sample_k(prob, EPS, DELTA, N, np.random.default_rng(303), use_pi=False))
        < ALPHA
    )


# === O1': Gaussian-form audit ====================================================================


def _o1p_samplers(sigma_scale: float):
    d, d2 = _o1p_pair()

    def s(problem: ExplicitProblem):
        def sample(n: int, rng: np.random.Generator) -> NDArray[np.int64]:
            return _opdisc_sample_k(problem, EPS, DELTA, n, rng, sigma_scale=sigma_scale)[:, 0]

        return sample

    return s(d), s(d2)


def _plus(o: NDArray[np.int64]) -> NDArray[np.bool_]:
    return o == 1


def test_o1p_white_box_mu_audit() -> None:
    """Layer 3 (white-box Gaussian audit), N = 2*10^4 per side.  On O1' the event {+1} has
    P = Phi(1/(2 sigma)) on D and Phi(-1/(2 sigma)) on D', so mu = 1/sigma = 0.2573.
    FAIL iff mu_lb = Phi^-1(p_lo) - Phi^-1(p'_hi) > 1/sigma_reported or eps_lb > 1
    (false-alarm rate <= 1e-6 per direction).  Meta-test: half noise (true mu = 0.515) must FAIL on the same N and seed."""
    d, _ = _o1p_pair()
    sigma = opdisc(d, EPS, DELTA, oracle="brute", random_state=0).sigma
    assert sigma == pytest.approx(SIGMA_O1, rel=1e-12)
    claim_mu = 1 / sigma
    res = audit(
        *_o1p_samplers(1.0),
        _plus,
        20_000,
        404,
        claimed_epsilon=EPS,
        claimed_delta=DELTA,
        claimed_mu=claim_mu,
        label="O1' correct",
    )
    assert res.passed, res.summary()
    assert 0.0 < res.mu_lb_forward <= claim_mu and res.mu_lb_backward < 0
    bad = audit(
        *_o1p_samplers(0.5),
        _plus,
        20_000,
        404,
        claimed_epsilon=EPS,
        claimed_delta=DELTA,
        claimed_mu=claim_mu,
        label="O1' half noise",
    )
    assert not bad.passed, bad.summary()
    assert bad.mu_lb_forward > claim_mu
    assert bad.eps_lb <= EPS  # the plain eps audit cannot see it (section 0)


def test_o1p_mu_against_claimed_gaussian_curve() -> None:
    """Layer 3 (Delta-Siege style), N = 10^5 per side (vectorized, < 1 s).  mu_lb must stay
    below mu_max(1, 1e-5) = 0.2681, the largest shift/sigma of a Gaussian mechanism that is
    (1, 1e-5)-DP; false-alarm rate <= 1e-6 per direction.  Half noise (mu = 0.515) must FAIL.  Caveat: this is a statement about the calibration -- a
    Gaussian mechanism with this mu would violate the claim; the binary output of this tiny
    instance alone has log-ratio only ~0.27 even with half noise."""
    mu_max = gaussian_mu_max(EPS, DELTA)
    res = audit(
        *_o1p_samplers(1.0),
        _plus,
        100_000,
        505,
        claimed_epsilon=EPS,
        claimed_delta=DELTA,
        claimed_mu=mu_max,
    )
    assert res.passed, res.summary()
    bad = audit(
        *_o1p_samplers(0.5),
        _plus,
        100_000,
        505,
        claimed_epsilon=EPS,
        claimed_delta=DELTA,
        claimed_mu=mu_max,
    )
    assert not bad.passed and bad.mu_lb_forward > mu_max, bad.summary()


# === O2: d = 2, IntegerBall(2) ===================================================================


def _o2_data() -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    rng = np.random.default_rng(2)
    X = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=(15, 2))
    y = np.where(rng.random(15) < 0.5, -1, 1)
    return X, y


def _reference_opdisc(
    X: NDArray, y: NDArray, eta: NDArray, bound: float, radius: float, tau: float
) -> tuple[NDArray[np.float64], float]:
    """Algorithm 1 of Neel et al. (ICML 2020), written from the paper over an explicit W:
    W = {tau k : |tau k_j| <= B, ||tau k|| <= radius}, D = max ||w||, pi(w) = (w/D, sqrt(1-||w||^2/D^2)),
    output argmin_w  sum_i 1[y_i != sgn(<x_i, w>)] - <eta, pi(w)>."""
    d = X.shape[1]
    m = int(bound / tau)
    W = [tau * np.array(k, dtype=float) for k in itertools.product(range(-m, m + 1), repeat=d)]
    W = [w for w in W if np.abs(w).max() <= bound and w @ w <= radius**2 + 1e-12]
    D2 = max(w @ w for w in W)  # D^2 kept exact: sqrt(D)^2 may exceed it by an ulp

    def pi(w: NDArray) -> NDArray:
        return np.append(w / math.sqrt(D2), math.sqrt(max(0.0, 1.0 - (w @ w) / D2)))

    def loss(w: NDArray) -> int:
        return sum(int(yi != np.sign(xi @ w)) for xi, yi in zip(X, y, strict=True))

    objs = [loss(w) - eta @ pi(w) for w in W]
    i = int(np.argmin(objs))
    return W[i], float(objs[i])


def test_o2_noise_injection_equivalence() -> None:
    """Layer 1 (exact, noise hook).  On O2, ``opdisc(..., oracle="brute", eta=eta)`` returns the
    same w (and objective to 1e-9) as the reference implementation of Algorithm 1 above, for
    300 noise vectors at scales 0.3 to sigma (so both the loss and pi matter).  Catches a
    wrong pi (corners: last coordinate 0), a wrong D, a sgn(0) slip and a wrong argmin."""
    X, y = _o2_data()
    prob = HalfspaceProblem.from_data(X, y, IntegerBall(2))
    assert prob.space.size() == 9 and prob.space.max_norm == pytest.approx(math.sqrt(2))
    sigma = opdisc_sigma(EPS, DELTA, prob)
    rng = np.random.default_rng(606)
    seen = set()
    for i in range(300):
        scale = (0.3, 1.0, 3.0, sigma, 2 * sigma)[i % 5]
        eta = rng.normal(0, scale, size=3)
        res = _with_diagnostics(prob, EPS, DELTA, oracle="brute", eta=eta)
        w_ref, obj_ref = _reference_opdisc(X, y, eta, bound=1, radius=math.sqrt(2), tau=1)
        np.testing.assert_array_equal(res.w, w_ref)
        assert res.diagnostics.oracle.objective == pytest.approx(obj_ref, abs=1e-9)
        assert np.isfinite(res.diagnostics.oracle.objective)
        seen.add(tuple(res.w))
    assert len(seen) == 9  # every point of W, corners included, was selected


def _merged_table(a: NDArray[np.int64], b: NDArray[np.int64], min_total: int = 10) -> NDArray:
    """2 x c contingency table over outcomes; columns with total < min_total merged into one."""
    keys = sorted({tuple(r) for r in a} | {tuple(r) for r in b})
    ca = np.array([(a == k).all(axis=1).sum() for k in keys])
    cb = np.array([(b == k).all(axis=1).sum() for k in keys])
    small = (ca + cb) < min_total
    table = np.vstack([ca[~small], cb[~small]])
    if small.any():
        table = np.hstack([table, [[ca[small].sum()], [cb[small].sum()]]])
    return table


def test_o2_law_homogeneity_sampler_vs_public() -> None:
    """Layer 2 (two-sample homogeneity).  N = 3,000 draws of ``_opdisc_sample_k`` vs 3,000
    public ``opdisc`` calls with spawned seeds on O2 at eps = 4 (sigma = 9.51, a law that
    depends on the data); chi-square contingency over the 9 outcomes (columns with < 10
    draws merged so expected counts >= 5), reject iff p < 1e-6 (false-alarm rate 1e-6,
    asymptotic).  Catches a public path whose noise or objective differs from the sampler's.
    Meta-test: the sampler at half noise must be rejected against the same public draws."""
    X, y = _o2_data()
    prob = HalfspaceProblem.from_data(X, y, IntegerBall(2))
    N, eps = 3000, 4.0
    pub = _public_sample_k(prob, eps, DELTA, N, 707)
    vec = _opdisc_sample_k(prob, eps, DELTA, N, np.random.default_rng(708))
    pv = stats.chi2_contingency(_merged_table(vec, pub)).pvalue
    assert pv >= ALPHA, (
        f"sampler and public opdisc laws differ, p = {pv:.3g} (false-alarm rate {ALPHA})"
    )
    half = _opdisc_sample_k(prob, eps, DELTA, N, np.random.default_rng(708), sigma_scale=0.5)
    assert stats.chi2_contingency(_merged_table(half, pub)).pvalue < ALPHA


# === Deterministic goldens and properties (section 6) ===========================================


def test_opdisc_sigma_golden() -> None:
    """Layer 1.  sigma = m c / eps with c = 4 G D^2 / tau: golden values of the proven m on the
    paper's space (d = 23, |W| counted exactly) and the scaling in G, D, tau; Theorem 1's sigma
    (7 G D^2 sqrt(ln(1/delta)) / (tau eps) = 546.2843041654165 at eps = 1, delta = 1e-5,
    G = 1, D = sqrt(23), tau = 1, 40-digit decimal arithmetic) only with calibration='paper'."""
    prob = HalfspaceProblem.from_data(np.eye(23), np.ones(23), IntegerBall(23))
    cal = opdisc_module.opdisc_calibration(1.0, 1e-5, prob)
    assert cal.size == IntegerBall(23).size() and cal.size_how == "exact"
    assert cal.c == pytest.approx(4 * 23, rel=1e-14)
    assert cal.sigma == pytest.approx(cal.m * 92, rel=1e-14) and cal.sigma >= cal.m * 92
    assert cal.delta_bound <= 1e-5 and cal.method == "proven"
    assert opdisc_sigma(1.0, 1e-5, prob, calibration="paper") == pytest.approx(
        546.2843041654165, rel=1e-12)
    assert 1.0 < cal.ratio_to_paper < 1.25
    # m depends on (eps, delta, d, |W|) only; sigma scales as c / eps for fixed m
    ref = ExplicitProblem(_data_1d([1], [1]), W_PM1)
    base = opdisc_sigma(1.0, 1e-5, ref)
    assert base == pytest.approx(SIGMA_O1, rel=1e-12)
    wide = ExplicitProblem(_data_1d([1], [1]), ExplicitSpace(np.array([[-2], [2]])))
    assert wide.space.tau == 4.0 and wide.space.max_norm == 2.0  # c = 4 (1/4) 4 / 4 = 1
    assert opdisc_sigma(1.0, 1e-5, wide) == pytest.approx(base, rel=1e-12)
    # the paper's experiment space for d = 23 has D = sqrt(23) exactly
    assert IntegerBall(23).max_norm == pytest.approx(math.sqrt(23), rel=1e-15)


@pytest.mark.parametrize(
    ("space", "D"),
    [
        (IntegerBall(2, bound=1, radius=1.5), math.sqrt(2)),  # not the radius 1.5
        (IntegerBall(3, bound=1, radius=1.5), math.sqrt(2)),  # not sqrt 3 (box corner)
        (
            IntegerBall(2, bound=2, radius=2.5),
            math.sqrt(5),
        ),  # (2, 1): 6 is not a sum of 2 squares <= 4
        (IntegerBall(2, bound=1, radius=1, tau=0.5), 1.0),  # k = (2, 0)
        (IntegerBall(1), 1.0),
        (IntegerBall(2), math.sqrt(2)),
        (IntegerBall(4, bound=1, radius=1.9), math.sqrt(3)),
    ],
)
def test_max_norm_is_largest_point_norm(space: IntegerBall, D: float) -> None:
    """Layer 1.  D used by OPDisc is the largest norm over W (hand value and brute force), not
    the box bound or the radius; tau is the minimum pairwise distance (brute force); and
    opdisc's sigma uses that D."""
    W = space.tau * space.enumerate_k().astype(float)
    assert len(W) == space.size()
    assert space.max_norm == pytest.approx(D, rel=1e-14)
    assert space.max_norm == pytest.approx(np.linalg.norm(W, axis=1).max(), rel=1e-14)
    dists = np.linalg.norm(W[:, None, :] - W[None, :, :], axis=2)
    assert dists[np.triu_indices(len(W), 1)].min() == pytest.approx(space.tau, rel=1e-14)
    X = np.eye(space.d)
    prob = HalfspaceProblem.from_data(X, np.ones(space.d, dtype=int), space)
    res = opdisc(prob, 2.0, 1e-6, oracle="brute", random_state=1)
    m = proven_multiplier(2.0, 1e-6, space.d, space.size())
    expected = m * 4 * (1 / space.tau) * D**2 / (space.tau * 2.0)
    assert res.sigma == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "space",
    [
        IntegerBall(1),
        IntegerBall(2),
        IntegerBall(3),
        IntegerBall(2, bound=1, radius=1.5),
        IntegerBall(2, bound=2, radius=2.5),
        IntegerBall(2, bound=1, radius=1, tau=0.5),
        IntegerBall(3, bound=1.4, radius=1.6, tau=0.7),
    ],
)
def test_pi_unit_norm_and_separation(space: IntegerBall) -> None:
    """Layer 1 (property over all points and pairs of small spaces): ||pi(w)|| = 1,
    ||pi(w) - pi(w')||^2 >= ||w - w'||^2 / D^2, pi(tau k) = pi_k(k), no NaN, and points of
    norm D (e.g. corners of {-1,0,1}^2) have last coordinate exactly 0 in ``pi_k`` (the form
    the oracles use).  The float form ``pi(w)`` agrees to 1e-7 only: see
    test_pi_float_path_exact_at_max_norm."""
    K = space.enumerate_k()
    W = space.tau * K.astype(float)
    P, Pw = space.pi_k(K), space.pi(W)
    assert np.isfinite(P).all() and np.isfinite(Pw).all()
    np.testing.assert_allclose(P, Pw, rtol=0, atol=1e-7)
    np.testing.assert_allclose(np.linalg.norm(Pw, axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(P, axis=1), 1.0, rtol=0, atol=1e-12)
    D = space.max_norm
    lhs = ((P[:, None, :] - P[None, :, :]) ** 2).sum(axis=2)
    rhs = ((W[:, None, :] - W[None, :, :]) ** 2).sum(axis=2) / D**2
    assert (lhs >= rhs - 1e-12).all()
    on_sphere = (K**2).sum(axis=1) == space.max_k_norm2
    assert on_sphere.any() and (P[on_sphere, -1] == 0.0).all()
    np.testing.assert_array_equal(space.pi_k(K[0]), P[0])  # single vector form


def test_pi_float_path_exact_at_max_norm() -> None:
    """Layer 1.  The spec (section 5, O2) wants the last pi coordinate exactly 0 at the corners of
    {-1,0,1}^2.  ``pi`` once computed D^2 as max_norm**2 = 2.0000000000000004 and returned
    sqrt(2.2e-16) = 1.49e-8 there; both paths now use the exact integer D^2 / tau^2."""
    space = IntegerBall(2)
    assert space.pi_k(np.array([1, 1]))[-1] == 0.0
    assert space.pi(np.array([1.0, 1.0]))[-1] == 0.0


# === Input contract (section 6): rejected before any noise is drawn =============================


def _small_problem() -> HalfspaceProblem:
    X, y = _o2_data()
    return HalfspaceProblem.from_data(X, y, IntegerBall(2))


def _bad_opdisc_calls() -> list[tuple[str, dict[str, Any], type[Exception]]]:
    cases: list[tuple[str, dict[str, Any], type[Exception]]] = []
    for e in (0.0, -1.0, float("nan"), float("inf"), -float("inf")):
        cases.append((f"eps={e}", {"epsilon": e}, ValueError))
    for e in ("1", True, None):
        cases.append((f"eps={e!r}", {"epsilon": e}, TypeError))
    for dl in (0.0, 1.0, -1e-5, float("nan"), 1.5, float("inf")):
        cases.append((f"delta={dl}", {"delta": dl}, ValueError))
    cases.append(("delta=True", {"delta": True}, TypeError))
    for shape in ((2,), (4,), (1, 3), ()):
        cases.append((f"eta shape {shape}", {"eta": np.zeros(shape)}, ValueError))
    cases.append(("problem=object()", {"problem": object()}, TypeError))
    cases.append(("problem=ndarray", {"problem": np.zeros((3, 2))}, TypeError))
    cases.append(("oracle='nope'", {"oracle": "nope"}, ValueError))
    cases.append(("oracle=42", {"oracle": 42}, TypeError))
    return cases


@pytest.mark.parametrize(
    ("name", "override", "exc"), _bad_opdisc_calls(), ids=lambda v: str(v)[:30]
)
def test_opdisc_rejects_before_drawing_noise(
    name: str, override: dict, exc: type[Exception]
) -> None:
    """Layer 1.  Every bad argument raises (ValueError/TypeError) and the Generator's state is
    unchanged: no randomness is consumed by a rejected call."""
    rng = np.random.default_rng(9)
    before = rng.bit_generator.state
    kwargs: dict[str, Any] = {
        "problem": _small_problem(),
        "epsilon": 1.0,
        "delta": 1e-5,
        "oracle": "brute",
        "random_state": rng,
    }
    kwargs.update(override)
    problem, eps, dlt = kwargs.pop("problem"), kwargs.pop("epsilon"), kwargs.pop("delta")
    with pytest.raises(exc):
        opdisc(problem, eps, dlt, **kwargs)
    assert rng.bit_generator.state == before, name


@pytest.mark.parametrize(
    ("X", "y", "exc"),
    [
        ([[0.5, float("nan")], [1.0, 0.0]], [1, -1], ValueError),
        ([[0.5, float("inf")], [1.0, 0.0]], [1, -1], ValueError),
        ([0.5, 1.0], [1, -1], ValueError),  # 1-D X
        ([[[0.5, 1.0]]], [1], ValueError),  # 3-D X
        (np.zeros((0, 2)), [], ValueError),  # empty data
        (np.zeros((2, 0)), [1, -1], ValueError),  # no features
        ([[0.5, 1.0], [1.0, 0.0]], [1, 0], BoundsViolation),  # {0, 1} labels
        ([[0.5, 1.0], [1.0, 0.0]], [0, 1], BoundsViolation),
        ([[0.5, 1.0], [1.0, 0.0]], [1, 2], BoundsViolation),
        ([[0.5, 1.0], [1.0, 0.0]], [1.0, -0.5], BoundsViolation),
        ([[0.5, 1.0], [1.0, 0.0]], ["a", "b"], BoundsViolation),
        ([[0.5, 1.0], [1.0, 0.0]], [1, float("nan")], ValueError),
        ([[0.5, 1.0], [1.0, 0.0]], [1, -1, 1], ValueError),  # mismatched lengths
        ([[0.5, 1.0], [1.0, 0.0]], [1], ValueError),
        ([[0.5, 1.0], [1.0, 0.0]], [[1, -1]], ValueError),  # 2-D y
    ],
)
def test_from_data_rejects_bad_data(X: Any, y: Any, exc: type[Exception]) -> None:
    """Layer 1.  NaN/inf features, wrong shapes, empty data, labels outside {-1, +1}
    (including {0, 1}: never mapped silently) and mismatched lengths are refused."""
    with pytest.raises(exc):
        HalfspaceProblem.from_data(X, y, IntegerBall(2))


def test_from_data_rejects_space_dimension_mismatch() -> None:
    with pytest.raises(ValueError, match="d = 3"):
        HalfspaceProblem.from_data([[0.5, 1.0]], [1], IntegerBall(3))


def test_make_oracle_unknown_name_lists_valid_names() -> None:
    with pytest.raises(ValueError, match="unknown solver 'gurobi-typo'") as info:
        make_oracle("gurobi-typo")
    for name in ("brute", "highs", "highs-monolithic", "cpsat"):
        assert name in str(info.value)


def test_check_rng_contract() -> None:
    """None/int/np.integer/SeedSequence/Generator accepted (a Generator passes through);
    bool, float, RandomState, str and negative ints refused."""
    g = np.random.default_rng(3)
    assert check_rng(g) is g
    for ok in (None, 0, 7, np.int64(7), np.random.SeedSequence(7)):
        assert isinstance(check_rng(ok), np.random.Generator)
    assert (
        check_rng(7).random()
        == check_rng(np.int64(7)).random()
        == np.random.default_rng(7).random()
    )
    for bad, exc in (
        (True, TypeError),
        (False, TypeError),
        (1.0, TypeError),
        ("7", TypeError),
        (np.random.RandomState(0), TypeError),
        (-1, ValueError),
    ):
        with pytest.raises(exc):
            check_rng(bad)  # type: ignore[arg-type]


def test_opdisc_reproducibility() -> None:
    """Same seed same output (w and objective); different seeds differ (the noise, seen in
    the objective, differs almost surely)."""
    prob = _small_problem()

    def objective(seed: Any) -> float:
        res = _with_diagnostics(prob, EPS, DELTA, oracle="brute", random_state=seed)
        return float(res.diagnostics.oracle.objective)

    a = opdisc(prob, EPS, DELTA, oracle="brute", random_state=123)
    b = opdisc(prob, EPS, DELTA, oracle="brute", random_state=123)
    np.testing.assert_array_equal(a.w, b.w)
    assert objective(123) == objective(123)
    assert len({objective(s) for s in range(10)}) == 10
    g = np.random.default_rng(5)  # a shared Generator draws fresh noise on each call
    assert objective(g) != objective(g)


# === Oracle failures (sections 2, 5 mutants, 6 oracle contract) =================================


class FakeOracle:
    """Returns the brute-force optimum but with a chosen status / bound, or no point at all."""

    name = "fake"

    def __init__(self, status: OracleStatus, bound_offset: float = 0.0, point: bool = True) -> None:
        self.status, self.bound_offset, self.point = status, bound_offset, point
        self.calls = 0

    def solve(self, problem: Any, eta: NDArray[np.floating]):
        self.calls += 1
        best = BruteForceOracle().solve(problem, eta)
        k = best.k if self.point else None
        return make_result(
            problem, eta, k, best.objective - self.bound_offset, self.status, 0.0, self.name
        )


@pytest.mark.parametrize(
    "fake",
    [
        FakeOracle(OracleStatus.TIME_LIMIT, bound_offset=0.5),  # incumbent at the time limit
        FakeOracle(OracleStatus.OPTIMAL, bound_offset=0.5),  # "optimal" with a positive gap
        FakeOracle(OracleStatus.TIME_LIMIT, bound_offset=0.0),  # zero gap but not proven optimal
    ],
    ids=["time_limit", "optimal_with_gap", "time_limit_zero_gap"],
)
def test_uncertified_oracle_raises_or_is_marked(fake: FakeOracle) -> None:
    """Layer 1.  An uncertified answer is never released by default (OracleFailure with the
    result attached); allow_uncertified=True returns it with guarantee.holds == False."""
    prob = _small_problem()
    with pytest.raises(OracleFailure) as info:
        opdisc(prob, EPS, DELTA, oracle=fake, random_state=1)
    assert info.value.result is not None and not info.value.result.certified
    res = opdisc(prob, EPS, DELTA, oracle=fake, random_state=1, allow_uncertified=True)
    assert not res.certified and not res.guarantee.holds
    assert "DOES NOT HOLD" in res.guarantee.describe()
    assert fake.calls == 2


def test_oracle_without_point_always_raises() -> None:
    fake = FakeOracle(OracleStatus.INFEASIBLE, point=False)
    for allow in (False, True):
        with pytest.raises(OracleFailure):
            opdisc(
                _small_problem(), EPS, DELTA, oracle=fake, random_state=1, allow_uncertified=allow
            )


def test_certified_fake_is_accepted() -> None:
    res = opdisc(
        _small_problem(), EPS, DELTA, oracle=FakeOracle(OracleStatus.OPTIMAL), random_state=1
    )
    assert res.certified and res.guarantee.holds and res.guarantee.requires_exact_oracle


class PoisonOracle:
    """Exact on data without the record z = (x = -1, y = +1); fails (no certified point) on data
    containing it -- a data-dependent oracle failure (spec section 5, P1 adapted to OPDisc)."""

    name = "poison"

    def __init__(self) -> None:
        self._brute = BruteForceOracle()

    def solve(self, problem: ExplicitProblem, eta: NDArray[np.floating]):
        b = problem.base
        if ((b.N[:, 0] == -b.Q) & (b.n_pos > 0)).any():
            return make_result(problem, eta, None, -math.inf, OracleStatus.ERROR, 0.0, self.name)
        return self._brute.solve(problem, eta)


def _poison_pair() -> tuple[ExplicitProblem, ExplicitProblem]:
    """D = O1 data (12 points, y = x); D' replaces one (x=-1, y=-1) by z = (x=-1, y=+1)."""
    xs = [1] * 6 + [-1] * 6
    d2_y = [1] * 6 + [-1] * 5 + [1]
    return _o1_problem(), ExplicitProblem(_data_1d(xs, d2_y), W_PM1)


def test_poison_oracle_failure_is_raised_and_visible() -> None:
    """Layer 3 on failure outcomes.  With the poison oracle, opdisc raises OracleFailure on every
    run on D' and never on D.  Mapped to the FAILURE outcome (never dropped), the failure event
    separates D' from D perfectly: eps_lb = 4.92 at N = 2,000, so a caller who publishes the
    failure leaks -- which is why the guarantee requires an exact oracle."""
    d, d2 = _poison_pair()
    oracle = PoisonOracle()

    def run(problem: ExplicitProblem):
        return failure_aware_sampler(
            lambda rng: int(
                _k(opdisc(problem, EPS, DELTA, oracle=oracle, random_state=rng), problem)[0]
            )
        )

    with pytest.raises(OracleFailure):
        opdisc(d2, EPS, DELTA, oracle=oracle, random_state=0)
    res = audit(run(d2), run(d), is_failure, 2000, 808, claimed_epsilon=EPS, claimed_delta=DELTA)
    assert (res.k_d, res.k_d2) == (2000, 0)
    assert res.eps_lb_forward == pytest.approx(4.9225, abs=1e-3) and not res.passed


def test_fallback_to_default_mutant_fails_audit() -> None:
    """Layer 3 meta-test (section 5 mutant).  A wrapper that catches OracleFailure and releases
    the default w = -1 hides the failure inside an ordinary output: on D' it outputs -1 always,
    on D only with P = 1 - Phi(12/(2 sigma)) = 0.061.  The audit on the event {-1}, N = 2,000,
    must FAIL (expected eps_lb ~ 2.3 > 1)."""
    d, d2 = _poison_pair()
    oracle = PoisonOracle()

    def fallback(problem: ExplicitProblem):
        def sample(n: int, rng: np.random.Generator) -> NDArray[np.int64]:
            out = np.empty(n, dtype=np.int64)
            for i in range(n):
                try:
                    out[i] = _k(opdisc(problem, EPS, DELTA, oracle=oracle, random_state=rng),
                                problem)[0]
                except OracleFailure:
                    out[i] = -1
            return out

        return sample

    res = audit(
        fallback(d2),
        fallback(d),
        lambda o: o == -1,
        2000,
        909,
        claimed_epsilon=EPS,
        claimed_delta=DELTA,
    )
    assert res.k_d == 2000 and 0.04 < res.p_d2 < 0.09
    assert not res.passed and res.eps_lb_forward > EPS, res.summary()
    assert FAILURE not in set(fallback(d2)(5, np.random.default_rng(0)).tolist())
