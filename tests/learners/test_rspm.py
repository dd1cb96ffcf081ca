"""RSPM (Neel, Roth, Wu, FOCS 2019, Section III.A): separator sets, exact laws, audits, contract.

Statistical assertions use alpha = 1e-6 (stated per test) with fixed seeds; every audit is
paired with a planted bug that must fail on the same seed.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from _laplace import laplace_pdf, laplace_sf
from oracledp._errors import OracleFailure
from oracledp.audit import audit
from oracledp.learners._rspm import (
    _rspm_sample_explicit,
    _rspm_sample_k,
    rspm,
    rspm_perturbation,
    rspm_scale,
    rspm_space,
    separator_patterns,
)
from oracledp.oracles import HalfspaceProblem, OracleResult, OracleStatus
from oracledp.oracles._brute import BruteForceOracle
from oracledp.oracles._structured import StructuredOracle

ALPHA = 1e-6


# --- separator set and its encoding (layer 1) -----------------------------------------------


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_separator_separates_every_pair(d: int) -> None:
    """{(e_j,+1), (-e_j,+1)} separates {-1,0,1}^d: the loss patterns of distinct w differ."""
    K = np.array(list(itertools.product([-1, 0, 1], repeat=d)))
    P = separator_patterns(K)
    assert P.shape == (3**d, 2 * d)
    assert len({tuple(row) for row in P}) == len(K)
    # the patterns are the literal 0/1 losses 1[y != sgn(<u, w>)] of the separator examples
    for j in range(d):
        u = np.zeros(d)
        u[j] = 1.0
        assert ((np.sign(K @ u) != 1) == P[:, j]).all()
        assert ((np.sign(K @ -u) != 1) == P[:, d + j]).all()


def test_perturbation_equals_weighted_separator_losses() -> None:
    rng = np.random.default_rng(0)
    space = rspm_space(3)
    K = space.enumerate_k()
    for _ in range(5):
        eta = rng.laplace(0, 3.0, size=6)
        pert = rspm_perturbation(space, eta)
        np.testing.assert_allclose(pert.evaluate_k(K, 1), separator_patterns(K) @ eta, atol=1e-12)


def test_structured_oracle_equals_brute_force_with_separator_weights() -> None:
    rng = np.random.default_rng(1)
    for _ in range(30):
        n = int(rng.integers(5, 80))
        num = rng.integers(-2, 4, size=(n, 2)) / 3
        cat = np.eye(3)[rng.integers(0, 3, size=n)]
        X = np.hstack([num, cat])
        y = np.where(rng.random(n) < 0.5, 1, -1)
        problem = HalfspaceProblem.from_data(X, y, rspm_space(5))
        pert = rspm_perturbation(problem.space, rng.laplace(0, rng.choice([0.1, 3, 30]), size=10))
        a = StructuredOracle().solve(problem, pert)
        b = BruteForceOracle().solve(problem, pert)
        assert a.certified and a.objective == pytest.approx(b.objective, abs=1e-9)


# --- exact laws and audits -----------------------------------------------------------------


def test_scale_golden() -> None:
    assert rspm_scale(1.0, 46) == 92.0  # 2m/eps (Theorem 6), m = 2d for d = 23
    assert rspm_scale(0.5, 2) == 8.0


def _r1(g: int) -> tuple[np.ndarray, np.ndarray]:
    """Spec R1: X = {-1,+1}, Q = {q+, q-}, U = {+1} (m = 1).  With #(+1) = a, #(-1) = a + g:
    data losses (a, a + g) and separator patterns q+(+1) = 1, q-(+1) = 0."""
    a = 10
    return np.array([a, a + g], dtype=float), np.array([[1], [0]])


def test_r1_exact_law_and_tight_audit() -> None:
    """Layers 2-3.  Output q+ iff eta < g.  Balanced data (g=0) vs one -1 turned into +1 (g=-2):
    P[q+] = 1/2 vs e^-eps / 2, exactly e^eps apart.  Exact binomial tests (alpha = 1e-6) and a
    Clopper-Pearson audit (N = 2*10^4, alpha = 1e-6).  Mutant: scale m/eps (half noise) gives
    ratio e^{2 eps} and must fail the audit on the same seed."""
    eps, N = 1.0, 20_000
    rng = np.random.default_rng(11)
    for g in (0, -2, 3):
        loss, pat = _r1(g)
        k = int((_rspm_sample_explicit(loss, pat, eps, N, rng) == 0).sum())
        p = stats.laplace(scale=2.0 / eps).cdf(g)
        assert stats.binomtest(k, N, p).pvalue > ALPHA

    def sampler(g: int, factor: float):
        loss, pat = _r1(g)
        return lambda n, r: _rspm_sample_explicit(loss, pat, eps, n, r, scale_factor=factor)

    def event(out):
        return out == 0

    ok = audit(sampler(0, 1.0), sampler(-2, 1.0), event, N, np.random.default_rng(5),
               claimed_epsilon=eps)
    assert ok.passed, ok.summary()
    assert ok.eps_lb > 0.8  # tight: the true log-ratio is exactly eps
    bad = audit(sampler(0, 0.5), sampler(-2, 0.5), event, N, np.random.default_rng(5),
                claimed_epsilon=eps)
    assert not bad.passed, bad.summary()


def _halfspace_d1(n_pos: int, n_neg: int) -> HalfspaceProblem:
    X = np.ones((max(n_pos + n_neg, 1), 1))
    y = np.array([1] * n_pos + [-1] * n_neg)
    return HalfspaceProblem.from_data(X, y, rspm_space(1))


def _exact_law_d1(n_pos: int, n_neg: int, b: float) -> np.ndarray:
    """P[w = -1, 0, +1] for d = 1 (x = 1 rows): objectives n_pos + e1, n_pos + n_neg + e1 + e2,
    n_neg + e2 with e1, e2 ~ Lap(b); one quadrature over e1.  The Laplace pdf and sf are
    written out (tests/_laplace.py; scipy.stats' frozen calls made the quadrature 100 times
    slower; test_exact_law_d1_matches_scipy_laplace checks the integrals)."""

    def pdf(x: float) -> float:
        return laplace_pdf(x, b)

    def sf(x: float) -> float:
        return laplace_sf(x, b)

    def p_plus(e1: float) -> float:
        return sf(-(e1 + n_pos - n_neg)) if e1 > -n_pos else 0.0  # cdf(x) = sf(-x)

    def p_minus(e1: float) -> float:
        return sf(max(e1 + n_pos - n_neg, -n_neg))

    pts = sorted({-n_pos, n_neg - n_pos, -n_neg})
    P1 = integrate.quad(lambda e: pdf(e) * p_plus(e), -60 * b, 60 * b, points=pts, limit=400)[0]
    Pm = integrate.quad(lambda e: pdf(e) * p_minus(e), -60 * b, 60 * b, points=pts, limit=400)[0]
    return np.array([Pm, 1 - P1 - Pm, P1])


def _exact_law_d1_scipy(n_pos: int, n_neg: int, b: float) -> list[float]:
    """_exact_law_d1's integrals with scipy.stats.laplace (the reference for its closed forms)."""
    L = stats.laplace(scale=b)
    pts = sorted({-n_pos, n_neg - n_pos, -n_neg})
    P1 = integrate.quad(
        lambda e: L.pdf(e) * (float(L.cdf(e + n_pos - n_neg)) if e > -n_pos else 0.0),
        -60 * b, 60 * b, points=pts, limit=400)[0]
    Pm = integrate.quad(lambda e: L.pdf(e) * float(L.sf(max(e + n_pos - n_neg, -n_neg))),
                        -60 * b, 60 * b, points=pts, limit=400)[0]
    return [Pm, 1 - P1 - Pm, P1]


def test_exact_law_d1_matches_scipy_laplace() -> None:
    """The closed-form Laplace terms of _exact_law_d1 give scipy.stats.laplace's integrals."""
    for n_pos, n_neg, b in ((3, 2, 4.0), (1, 0, 1.0), (0, 4, 16.0), (2, 5, 0.5)):
        np.testing.assert_allclose(_exact_law_d1(n_pos, n_neg, b),
                                   _exact_law_d1_scipy(n_pos, n_neg, b), rtol=1e-9, atol=1e-15)


def test_halfspace_d1_exact_law_catches_half_noise() -> None:
    """Layer 2.  On W = {-1,0,1} (m = 2, scale 4/eps) the library sampler's law equals the
    quadrature law (chi-square, alpha = 1e-6, N = 2*10^4); the half-noise sampler is rejected by
    the same test (its law differs: on this class the bound is loose, so only the law shows it)."""
    eps, N = 1.0, 20_000
    problem = _halfspace_d1(3, 2)
    expected = _exact_law_d1(3, 2, rspm_scale(eps, 2))
    for factor, should_pass in ((1.0, True), (0.5, False)):
        k = _rspm_sample_k(problem, eps, N, np.random.default_rng(2), scale_factor=factor)[:, 0]
        counts = np.array([(k == v).sum() for v in (-1, 0, 1)])
        p = stats.chisquare(counts, N * expected).pvalue
        assert bool(p > ALPHA) is should_pass, (factor, counts, N * expected)


_MASS_TOL = 1e-8


def _exact_privacy(epsilons: tuple[float, ...], sizes: range) -> None:
    for eps in epsilons:
        worst, worst_bug = 0.0, 0.0
        for a, b in itertools.product(sizes, range(0, sizes.stop)):
            for factor in (1.0, 0.25):
                s = factor * rspm_scale(eps, 2)
                p, q = _exact_law_d1(a, b, s), _exact_law_d1(a - 1, b + 1, s)
                # masses are exact to about 1e-10 (quadrature): compare only those well above
                if factor == 1.0:  # the real mechanism: every outcome keeps a visible mass
                    assert (p > _MASS_TOL).all() and (q > _MASS_TOL).all(), (eps, a, b)
                    worst = max(worst, np.abs(np.log(p / q)).max())
                else:  # the mutant's smallest masses drown in quadrature error: skipped
                    ok = (p > _MASS_TOL) & (q > _MASS_TOL)
                    worst_bug = max(worst_bug, np.abs(np.log(p[ok] / q[ok])).max())
        assert worst <= eps + 1e-6
        assert worst_bug > eps


def test_halfspace_d1_exact_privacy_and_quarter_noise_violation() -> None:
    """Layer 1 (exact, quadrature to ~1e-10).  Over neighbours (one positive replaced by a
    negative) the log-ratio of every output probability is <= eps; with a quarter of the noise
    it exceeds eps on some pair (a real violation an audit can see)."""
    _exact_privacy((1.0,), range(1, 4))


def test_halfspace_d1_exact_privacy_wide_sweep() -> None:
    """The same exact check over more epsilons and dataset sizes (about 1 s since the
    quadrature's Laplace terms are written out: in the default run, no longer slow)."""
    _exact_privacy((0.25, 0.5, 1.0, 2.0, 4.0), range(1, 7))


# --- contract ------------------------------------------------------------------------------


class _Uncertified:
    name = "fake"

    def solve(self, problem, eta):
        k = np.zeros(problem.d, dtype=np.int64)
        return OracleResult(np.zeros(problem.d), k, 1.0, 0.0, False, OracleStatus.TIME_LIMIT,
                            0.0, self.name, 0)


def test_contract_and_failures() -> None:
    problem = _halfspace_d1(3, 2)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    for bad_eps in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError):
            rspm(problem, bad_eps, oracle="brute", random_state=rng)
    with pytest.raises(ValueError, match=r"\{-1, 0, 1\}\^d"):
        rspm(HalfspaceProblem.from_data(np.ones((3, 4)), [1, -1, 1]), 1.0, random_state=rng)
    with pytest.raises(ValueError, match="weighted oracle"):
        rspm(problem, 1.0, oracle="highs-monolithic", random_state=rng)
    with pytest.raises(ValueError, match="shape"):
        rspm(problem, 1.0, oracle="brute", eta=np.zeros(3))
    with pytest.raises(ValueError, match="finite"):
        rspm(problem, 1.0, oracle="brute", eta=np.array([np.nan, 0.0]))
    assert rng.bit_generator.state == state  # nothing drawn before the refusals
    with pytest.raises(OracleFailure):
        rspm(problem, 1.0, oracle=_Uncertified(), random_state=0)
    out = rspm(problem, 1.0, oracle=_Uncertified(), random_state=0, allow_uncertified=True)
    assert out.guarantee.holds is False
    a = rspm(problem, 1.0, oracle="brute", random_state=3)
    b = rspm(problem, 1.0, oracle="brute", random_state=3)
    assert (a.w == b.w).all() and a.guarantee.is_pure and a.guarantee.requires_exact_oracle


def test_adult_rspm_is_certified_and_useful() -> None:
    from oracledp.datasets import load_adult

    data = load_adult()
    problem = HalfspaceProblem.from_data(data.X, data.y, rspm_space(data.X.shape[1]))
    res = rspm(problem, 1.0, random_state=0)
    assert res.certified and res.m == 46 and res.scale == 92.0
    train_acc = float(np.mean(np.where(data.X @ res.w > 0, 1, -1) == data.y))
    assert train_acc > 0.7
