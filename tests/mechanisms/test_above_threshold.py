"""Tests of InteractiveAboveThreshold, Algorithm 2 of Ligett et al. 2017 (docs/specs/privacy-testing.md 4-7).

Layers (spec section 0): (1) goldens for the noise scales and the ex-post
accounting of Lemma 2.8, state and input contracts; (2) exact laws: for fixed
query values the law of the halting index (including "no halt") is a 1-D
integral over the threshold noise, checked against the implementation by a
chi-square goodness of fit; the same laws give a deterministic *analytic
audit*: the largest log-ratio of the halting law between neighbouring query
vectors (StatDP's input patterns, entries in {0, Delta, 2 Delta}, and every
neighbouring pair of {0, Delta, 2 Delta}^3) must not exceed eps; (3) a Monte
Carlo audit of the implementation on the worst pair found.

Exact law.  With threshold noise r ~ Lap(b_thr) (b_thr = 2 Delta / eps) and
query noise nu_s ~ Lap(b_q) (b_q = 4 Delta / eps), given r the queries fail
independently, query s with probability F(W + r - q_s) (F the Lap(b_q) CDF), so

    P[halt at t] = E_r[ prod_{s<t} F(W + r - q_s) (1 - F(W + r - q_t)) ],
    P[no halt]   = E_r[ prod_{s<T} F(W + r - q_s) ],

computed with scipy.integrate.quad_vec (all T + 1 outcomes in one adaptive pass;
breakpoints at the kinks r = 0 and r = q_s - W; absolute tolerance 1e-13).

Every statistical assertion has false-alarm rate at most ALPHA = 1e-6 (Bonferroni
when one test makes several comparisons) and a fixed seed; every one ships with
planted-bug mutants (non-private SVT variants as in StatDP and DP-Auditorium:
no threshold noise, query noise 2 Delta/eps, threshold redrawn per query, and
others) that the same test must reject on the same seed.  The API releases only
the pass/fail bit (test_only_the_bit_is_released), so StatDP's "noisy value
released" variant cannot be expressed.
"""

from __future__ import annotations

import importlib
import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import integrate, stats

from oracledp.audit import audit
from oracledp.mechanisms import (
    ExPostLoss,
    InteractiveAboveThreshold,
    iat_query_scale,
    iat_threshold_scale,
)
from oracledp.privacy._guarantees import GuaranteeKind, PrivacyGuarantee

iat_module = importlib.import_module("oracledp.mechanisms._above_threshold")

ALPHA = 1e-6  # false-alarm rate of every statistical assertion in this file


# --- exact law of the halting index ----------------------------------------------------------


def _lap_cdf(x: NDArray[np.float64], b: float) -> NDArray[np.float64]:
    return np.where(
        x < 0, 0.5 * np.exp(np.minimum(x, 0.0) / b), 1.0 - 0.5 * np.exp(-np.maximum(x, 0.0) / b)
    )


def _outcomes(below: NDArray[np.float64]) -> NDArray[np.float64]:
    """P[halt at t] for t < T and P[no halt] (index T) for independent failure probabilities."""
    T = below.size
    cp = np.concatenate(([1.0], np.cumprod(below)))
    return np.concatenate((cp[:T] * (1.0 - below), cp[T:]))


def halting_law(
    q: Any, W: float, b_thr: float, b_q: float, *, redraw: bool = False
) -> NDArray[np.float64]:
    """Exact law of the halting index (length T + 1, last entry = no halt).

    ``b_thr = 0``: no threshold noise (closed-form product).  ``redraw``: a fresh
    threshold noise per query (each query's failure probability is its own integral).
    """
    q = np.asarray(q, dtype=float)
    if b_thr == 0:
        return _outcomes(_lap_cdf(W - q, b_q))
    L = 50.0 * max(b_thr, b_q)
    points = sorted({0.0, *(float(x - W) for x in q)})

    def dens(r: float) -> float:
        return 0.5 / b_thr * math.exp(-abs(r) / b_thr)

    opts: dict[str, Any] = {"points": points, "epsabs": 1e-13, "epsrel": 1e-12, "limit": 4000}
    if redraw:
        below = integrate.quad_vec(lambda r: dens(r) * _lap_cdf(W + r - q, b_q), -L, L, **opts)[0]
        return _outcomes(below)
    return integrate.quad_vec(
        lambda r: dens(r) * _outcomes(_lap_cdf(W + r - q, b_q)), -L, L, **opts
    )[0]


def _library_law(q: Any, W: float, eps: float, delta: float) -> NDArray[np.float64]:
    return halting_law(q, W, iat_threshold_scale(eps, delta), iat_query_scale(eps, delta))


def test_quadrature_matches_closed_forms() -> None:
    """Layer 1 check of the test's own reference.  T = 1: P[halt] = P[nu - r >= W - q], and
    nu - r (Laplace scales b1 = b_q != b2 = b_thr) has survival
    S(x) = (b1^2 e^{-x/b1} - b2^2 e^{-x/b2}) / (2 (b1^2 - b2^2)) for x >= 0 (convolution of the
    two densities; S(0) = 1/2).  Agreement to 1e-12; every law sums to 1 to 1e-12."""
    b1, b2 = 4.0, 2.0
    for x in (0.0, 0.5, 3.0, 10.0):
        S = (b1**2 * math.exp(-x / b1) - b2**2 * math.exp(-x / b2)) / (2 * (b1**2 - b2**2))
        law = halting_law([0.0], x, b2, b1)
        assert law[0] == pytest.approx(S, abs=1e-12)
        assert halting_law([x], 0.0, b2, b1)[0] == pytest.approx(1 - S, abs=1e-12)  # symmetry
    for q, W in (([0, 1.5, 3, 1.5, 0], 1.5), ([3, 0, 1.5], 4.5), ([2] * 8, -1.0)):
        for bt, bq, rd in ((2.0, 4.0, False), (0.0, 4.0, False), (2.0, 4.0, True)):
            assert halting_law(q, W, bt, bq, redraw=rd).sum() == pytest.approx(1.0, abs=1e-12)


# === Layer 1: goldens and the ex-post accounting (Lemma 2.8) ====================================


def test_scale_goldens() -> None:
    """Algorithm 2: threshold noise Lap(2 Delta / eps), query noise Lap(4 Delta / eps)."""
    assert iat_threshold_scale(0.5, 3.0) == 12.0
    assert iat_query_scale(0.5, 3.0) == 24.0
    assert iat_threshold_scale(2.0, 1.0) == 1.0
    assert iat_query_scale(2.0, 1.0) == 2.0
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError):
            iat_threshold_scale(bad, 1.0)
        with pytest.raises(ValueError):
            iat_query_scale(1.0, bad)


def test_ex_post_loss_goldens() -> None:
    """Lemma 2.8: halting at t gives ex-post loss eps_A + eps_t; no halt gives infinity
    (Theorems 3.2 / 3.4).  Computed from the public output (stopping index) only."""
    iat = InteractiveAboveThreshold(0.5, 0.0, 1.0, random_state=1)
    assert iat.first_above([-1e9, -1e9, 1e9, 0.0]) == 2
    loss = iat.ex_post_loss(0.25)
    assert (loss.epsilon, loss.epsilon_test, loss.epsilon_hypothesis) == (0.75, 0.5, 0.25)
    assert loss.stopping_index == 2 and loss.halted
    assert iat.ex_post_loss(0.0).epsilon == 0.5  # data-independent queries: plain AboveThreshold
    g = loss.to_guarantee()
    assert isinstance(g, PrivacyGuarantee) and g.kind is GuaranteeKind.EX_POST
    assert g.epsilon == 0.75 and g.delta == 0.0 and "Lemma 2.8" in g.source
    assert "Definition 2.3" in loss.statement and "not an ex-ante" in loss.statement

    never = InteractiveAboveThreshold(0.5, 0.0, 1.0, random_state=1)
    assert never.first_above([-1e9] * 4) is None
    inf_loss = never.ex_post_loss(0.25)
    assert inf_loss.epsilon == math.inf and not inf_loss.halted and inf_loss.stopping_index is None
    gi = inf_loss.to_guarantee()
    assert gi.epsilon == math.inf and gi.kind is GuaranteeKind.EX_POST
    assert "ex-post loss inf" in gi.describe()
    assert "unbounded" in inf_loss.statement and "not an ex-ante" in inf_loss.statement
    never_asked = InteractiveAboveThreshold(1.0, 0.0, 1.0, random_state=1)
    assert never_asked.ex_post_loss(0.1).epsilon == math.inf

    for bad, exc in ((-0.1, ValueError), (math.nan, ValueError), (math.inf, ValueError)):
        with pytest.raises(exc):
            iat.ex_post_loss(bad)
    for bad in ("0.1", None, True):
        with pytest.raises(TypeError):
            iat.ex_post_loss(bad)  # type: ignore[arg-type]


def test_ex_post_loss_is_consistent() -> None:
    """ExPostLoss refuses inconsistent records: total != eps_A + eps_t, a finite loss without
    a stopping index, eps_A <= 0, negative eps_t, negative or bool index."""
    ExPostLoss(1.5, 1.0, 0.5, 3)
    ExPostLoss(math.inf, 1.0, 0.5, None)
    for args in (
        (1.4, 1.0, 0.5, 3),
        (1.5, 1.0, 0.5, None),
        (math.inf, 1.0, 0.5, 3),
        (0.5, 0.0, 0.5, 0),
        (0.5, 1.0, -0.5, 0),
        (1.5, 1.0, 0.5, -1),
        (1.5, 1.0, 0.5, True),
    ):
        with pytest.raises(ValueError):
            ExPostLoss(*args)  # type: ignore[arg-type]


def test_halting_state_and_indices() -> None:
    """test() and first_above() share one counter; first_above returns the index within its
    block and halted_at the global index; after halting every query raises RuntimeError and
    consumes no randomness; queries after the pass are not counted (never answered)."""
    rng = np.random.default_rng(5)
    iat = InteractiveAboveThreshold(1.0, 0.0, 1.0, random_state=rng)
    assert iat.first_above([]) is None and iat.n_queries == 0
    assert iat.test(-1e9) is False
    assert iat.first_above([-1e9, -1e9]) is None
    assert iat.n_queries == 3 and iat.halted_at is None and not iat.halted
    assert iat.first_above([-1e9, 1e9, 1e9, -1e9]) == 1
    assert iat.halted_at == 4 and iat.n_queries == 5 and iat.halted
    before = rng.bit_generator.state
    with pytest.raises(RuntimeError):
        iat.test(0.0)
    with pytest.raises(RuntimeError):
        iat.first_above([0.0])
    with pytest.raises(RuntimeError):
        iat.first_above([])
    assert rng.bit_generator.state == before and iat.n_queries == 5
    assert iat.ex_post_loss(0.5).stopping_index == 4

    iat2 = InteractiveAboveThreshold(1.0, 0.0, 1.0, random_state=6)
    assert iat2.test(-1e9) is False and iat2.test(1e9) is True and iat2.halted_at == 1
    with pytest.raises(RuntimeError):
        iat2.test(1e9)
    assert "noisy" not in repr(iat2).lower()


def test_only_the_bit_is_released() -> None:
    """test() returns a plain bool, first_above an int or None: no noisy value leaves the
    object (StatDP's "noisy value released" variant is impossible through the API)."""
    iat = InteractiveAboveThreshold(1.0, 0.0, 1.0, random_state=2)
    r = iat.test(np.float64(-1e9))
    assert type(r) is bool
    k = iat.first_above(np.array([-1e9, 1e9]))
    assert type(k) is int and k == 1


def test_reproducible() -> None:
    def run(seed: int) -> list[int | None]:
        return [
            InteractiveAboveThreshold(1.0, 0.0, 1.0, random_state=g).first_above(
                [0.0, 1.0, 0.5, 2.0])
            for g in [np.random.default_rng(seed)]
            for _ in range(50)
        ]

    assert run(3) == run(3)
    assert run(3) != run(4)


# === Layer 2: exact law vs implementation (chi-square goodness of fit) ==========================

EPS_GOF, DELTA_GOF = 0.8, 1.5
GOF_CONFIGS = {
    # (query values, threshold W); expected counts >= 500 in every cell at N = 20,000
    "A": ((0.0, 1.5, 3.0, 1.5, 0.0), 1.5),
    "B": ((0.0, 1.5, 3.0), 4.5),
}
N_GOF = 20_000

Factory = Callable[..., InteractiveAboveThreshold]


def _sample_first_above(factory: Factory, q: Any, W: float, n: int, rng: np.random.Generator):
    """n independent runs (fresh instance each) through first_above; no halt -> T."""
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        k = factory(EPS_GOF, W, DELTA_GOF, random_state=rng).first_above(q)
        out[i] = len(q) if k is None else k
    return out


def _sample_test_loop(factory: Factory, q: Any, W: float, n: int, rng: np.random.Generator):
    """n independent runs through repeated test() calls; no halt -> T."""
    out = np.full(n, len(q), dtype=np.int64)
    for i in range(n):
        iat = factory(EPS_GOF, W, DELTA_GOF, random_state=rng)
        for t, x in enumerate(q):
            if iat.test(x):
                out[i] = t
                break
    return out


def _gof_pvalues(factory: Factory, seed: int) -> dict[str, float]:
    """Chi-square GOF of the halting index (T + 1 cells incl. no halt) against the exact law
    with the library's scales, for each configuration; N = 20,000 runs each."""
    rng = np.random.default_rng(seed)
    pvals = {}
    for name, (q, W) in GOF_CONFIGS.items():
        law = _library_law(q, W, EPS_GOF, DELTA_GOF)
        counts = np.bincount(_sample_first_above(factory, q, W, N_GOF, rng), minlength=len(q) + 1)
        pvals[name] = float(stats.chisquare(counts, N_GOF * law).pvalue)
    return pvals


def test_halting_law_matches_quadrature() -> None:
    """Layer 2 (spec section 5, IAT exact law).  Two configurations, each p-value compared
    with ALPHA / 2 (Bonferroni): false alarm <= 1e-6."""
    pvals = _gof_pvalues(InteractiveAboveThreshold, 707)
    assert min(pvals.values()) >= ALPHA / len(GOF_CONFIGS), pvals


class _RedrawThreshold(InteractiveAboveThreshold):
    """Mutant: a fresh threshold noise for every query (not private: the ratio compounds)."""

    def first_above(self, values: Any) -> int | None:
        arr = np.asarray(values, dtype=float)
        thr = self.threshold + self._rng.laplace(
            0.0, iat_threshold_scale(self.epsilon, self.sensitivity), arr.size
        )
        noise = self._rng.laplace(0.0, iat_query_scale(self.epsilon, self.sensitivity), arr.size)
        idx = np.flatnonzero(arr + noise >= thr)
        return int(idx[0]) if idx.size else None


class _BelowThreshold(InteractiveAboveThreshold):
    """Mutant: halts when the noisy value is *below* the noisy threshold (direction flipped)."""

    def first_above(self, values: Any) -> int | None:
        arr = np.asarray(values, dtype=float)
        noise = self._rng.laplace(0.0, iat_query_scale(self.epsilon, self.sensitivity), arr.size)
        idx = np.flatnonzero(arr + noise < self._noisy_threshold)
        return int(idx[0]) if idx.size else None


SCALE_MUTANTS: dict[str, tuple[str, Callable[[float, float], float]]] = {
    "no_threshold_noise": ("iat_threshold_scale", lambda e, d: 0.0),
    "threshold_scale_Delta_over_eps": ("iat_threshold_scale", lambda e, d: d / e),
    "query_scale_2Delta_over_eps": ("iat_query_scale", lambda e, d: 2.0 * d / e),
    "query_scale_swapped_eps_Delta": ("iat_query_scale", lambda e, d: 4.0 * e / d),
}


# Runs per configuration for the scale mutants: their laws are exact (halting_law with the
# mutated scales), so the GOF's power is the noncentral chi-square's.  At 5,000 runs the
# probability that a mutant passes both configurations is 8.8e-8 for
# threshold_scale_Delta_over_eps and below 1e-70 for the other three.
N_GOF_SCALE_MUTANT = 5_000


@pytest.mark.parametrize("mutant", sorted(SCALE_MUTANTS))
def test_gof_rejects_scale_mutants(mutant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Meta-test: the library with one wrong constant (patched into the module) fails the GOF
    on the same seed (the reference law keeps the correct scales, computed before patching);
    N_GOF_SCALE_MUTANT runs per configuration (power stated there)."""
    laws = {k: _library_law(q, W, EPS_GOF, DELTA_GOF) for k, (q, W) in GOF_CONFIGS.items()}
    attr, fn = SCALE_MUTANTS[mutant]
    monkeypatch.setattr(iat_module, attr, fn)
    rng = np.random.default_rng(707)
    pvals = []
    for k, (q, W) in GOF_CONFIGS.items():
        n = N_GOF_SCALE_MUTANT
        x = _sample_first_above(InteractiveAboveThreshold, q, W, n, rng)
        pvals.append(stats.chisquare(np.bincount(x, minlength=len(q) + 1), n * laws[k]).pvalue)
    assert min(pvals) < ALPHA / len(GOF_CONFIGS), pvals


@pytest.mark.parametrize("cls", [_RedrawThreshold, _BelowThreshold], ids=["redraw", "below"])
def test_gof_rejects_logic_mutants(cls: Factory) -> None:
    pvals = _gof_pvalues(cls, 707)
    assert min(pvals.values()) < ALPHA / len(GOF_CONFIGS), pvals


class _HalfNoiseBlock(InteractiveAboveThreshold):
    """Mutant: the vectorized path uses query noise 2 Delta/eps (test() stays correct)."""

    def first_above(self, values: Any) -> int | None:
        arr = np.asarray(values, dtype=float)
        noise = self._rng.laplace(0.0, 2.0 * self.sensitivity / self.epsilon, arr.size)
        idx = np.flatnonzero(arr + noise >= self._noisy_threshold)
        return int(idx[0]) if idx.size else None


def _homogeneity_pvalue(factory: Factory, seed: int, n: int = N_GOF) -> float:
    """first_above vs repeated test() on configuration A: chi-square homogeneity of the two
    halting-index samples (2 x 6 table), n runs each (default N = 20,000)."""
    q, W = GOF_CONFIGS["A"]
    rng_a, rng_b = np.random.default_rng(seed).spawn(2)
    a = np.bincount(_sample_first_above(factory, q, W, n, rng_a), minlength=len(q) + 1)
    b = np.bincount(_sample_test_loop(factory, q, W, n, rng_b), minlength=len(q) + 1)
    return float(stats.chi2_contingency(np.vstack([a, b])).pvalue)


def test_first_above_and_test_have_the_same_law() -> None:
    """Layer 2.  The block path and the one-query path give the same halting law: p-value
    >= ALPHA (false alarm <= 1e-6).  Mutant: a block path with half the query noise, on
    10,000 runs per side (its law is exact: it passes with probability 9e-23, noncentral
    chi-square)."""
    assert _homogeneity_pvalue(InteractiveAboveThreshold, 808) >= ALPHA
    assert _homogeneity_pvalue(_HalfNoiseBlock, 808, n=10_000) < ALPHA


# === Layer 2: analytic audit (exact max log-ratio between neighbouring query vectors) ============

EPS_AUDIT, DELTA_AUDIT = 0.7, 2.0
TOL = 1e-6  # on the log-ratio; outcomes with probability < 1e-9 on either side are skipped
P_MIN = 1e-9


def statdp_patterns(T: int) -> dict[str, tuple[int, ...]]:
    """StatDP's input patterns (hypotest generators) in units of Delta, each a neighbour of the
    reference (1, ..., 1): every entry moves by at most 1."""
    h = T // 2
    return {
        "one_below": (0,) + (1,) * (T - 1),
        "one_above": (2,) + (1,) * (T - 1),
        "one_above_rest_below": (2,) + (0,) * (T - 1),
        "one_below_rest_above": (0,) + (2,) * (T - 1),
        "rest_above_last_below": (2,) * (T - 1) + (0,),
        "rest_below_last_above": (0,) * (T - 1) + (2,),
        "half_half": (2,) * h + (0,) * (T - h),
        "half_half_reversed": (0,) * h + (2,) * (T - h),
        "all_above": (2,) * T,
        "all_below": (0,) * T,
        "x_shape": tuple(2 if i % 2 else 0 for i in range(T)),
        "x_shape_reversed": tuple(0 if i % 2 else 2 for i in range(T)),
    }


def _max_log_ratio_of(laws: dict[tuple[int, ...], NDArray[np.float64]], pairs) -> tuple[float, Any]:
    best: tuple[float, Any] = (-math.inf, None)
    for a, b in pairs:
        pa, pb = laws[a], laws[b]
        ok = (pa >= P_MIN) & (pb >= P_MIN)
        lr = np.log(pa[ok]) - np.log(pb[ok])
        i = int(np.argmax(lr))
        if lr[i] > best[0]:
            best = (float(lr[i]), (a, b, int(np.flatnonzero(ok)[i])))
    return best


LawFn = Callable[[Any, float], NDArray[np.float64]]


def analytic_audit(law_fn: LawFn) -> tuple[float, Any]:
    """Max over thresholds W in {0, Delta, 2 Delta}, over (a) StatDP patterns with T = 8 against
    the reference (1,...,1), both directions, and (b) all ordered neighbouring pairs of
    {0, Delta, 2 Delta}^3, of max_o ln(P_a[o] / P_b[o]).  Returns (value, witness)."""
    best: tuple[float, Any] = (-math.inf, None)
    for w in (0, 1, 2):
        W = w * DELTA_AUDIT
        T = 8
        ref = (1,) * T
        vecs = [ref, *statdp_patterns(T).values()]
        laws = {v: law_fn(np.array(v) * DELTA_AUDIT, W) for v in vecs}
        pairs = [(ref, p) for p in vecs[1:]] + [(p, ref) for p in vecs[1:]]
        r = _max_log_ratio_of(laws, pairs)
        if r[0] >= best[0]:
            best = (r[0], ("T=8", f"W={w}Delta", *r[1]))
        cube = list(itertools.product((0, 1, 2), repeat=3))
        laws3 = {v: law_fn(np.array(v) * DELTA_AUDIT, W) for v in cube}
        pairs3 = [
            (a, b)
            for a in cube
            for b in cube
            if max(abs(x - y) for x, y in zip(a, b, strict=True)) <= 1
        ]
        r = _max_log_ratio_of(laws3, pairs3)
        if r[0] >= best[0]:
            best = (r[0], ("T=3", f"W={w}Delta", *r[1]))
    return best


def _law_fn(b_thr: float, b_q: float, redraw: bool = False) -> LawFn:
    return lambda q, W: halting_law(q, W, b_thr, b_q, redraw=redraw)


def test_analytic_audit_halting_law_is_eps_private() -> None:
    """Layer 2, deterministic (spec section 5): with the library's scales the exact max
    log-ratio over all audited neighbouring pairs is <= eps (tolerance 1e-6; quadrature error
    ~1e-13).  AboveThreshold's halting index is eps-DP (Dwork and Roth 2014, Theorem 3.23;
    Lemma 2.8's eps_A).  The worst case approaches eps as T grows (0.99 eps at T = 8)."""
    b_thr = iat_threshold_scale(EPS_AUDIT, DELTA_AUDIT)
    b_q = iat_query_scale(EPS_AUDIT, DELTA_AUDIT)
    worst, witness = analytic_audit(_law_fn(b_thr, b_q))
    assert worst <= EPS_AUDIT + TOL, (worst, witness)
    assert worst > 0.9 * EPS_AUDIT, (worst, witness)  # the patterns do stress the mechanism


@pytest.mark.parametrize(
    ("name", "b_thr_factor", "b_q_factor", "redraw"),
    [
        ("no_threshold_noise", 0.0, 4.0, False),
        ("query_noise_2Delta_over_eps", 2.0, 2.0, False),
        ("threshold_redrawn_per_query", 2.0, 4.0, True),
        ("threshold_noise_Delta_over_eps", 1.0, 4.0, False),
    ],
)
def test_analytic_audit_rejects_svt_mutants(
    name: str, b_thr_factor: float, b_q_factor: float, redraw: bool
) -> None:
    """Meta-test: each non-private SVT variant has an audited pair with log-ratio > eps."""
    b = DELTA_AUDIT / EPS_AUDIT
    worst, witness = analytic_audit(_law_fn(b_thr_factor * b, b_q_factor * b, redraw))
    assert worst > EPS_AUDIT + TOL, (name, worst, witness)


N_MC = 20_000


def test_monte_carlo_audit_on_worst_pair() -> None:
    """Layer 3 (spec section 5, "Monte Carlo audit on the worst pair").  eps = 1, Delta = 1,
    W = -1, T = 5: q = (1,1,1,1,1) vs q' = (2,2,2,2,0) (StatDP's rest-above-last-below), event
    {halt at index 4}: exact probabilities 0.0162 vs 0.0066, log-ratio 0.903 (the largest over
    the T = 5 patterns).  N = 20,000 per side with the implementation; each direction errs
    with probability <= 1e-6.  This is a smoke test: at this N no SVT mutant is detectable
    black-box (best expected margin over eps was 0.03, from an exact power search), which is
    why the layer-2 tests above carry the mutants."""
    q1 = np.ones(5)
    q2 = np.array([2.0, 2.0, 2.0, 2.0, 0.0])
    law1 = _library_law(q1, -1.0, 1.0, 1.0)
    law2 = _library_law(q2, -1.0, 1.0, 1.0)
    assert math.log(law1[4] / law2[4]) == pytest.approx(0.903, abs=1e-3)

    def sampler(q: NDArray[np.float64]):
        def sample(n: int, rng: np.random.Generator) -> NDArray[np.int64]:
            out = np.empty(n, dtype=np.int64)
            for i in range(n):
                k = InteractiveAboveThreshold(1.0, -1.0, 1.0, random_state=rng).first_above(q)
                out[i] = -1 if k is None else k  # "no halt" is an outcome, never dropped
            return out

        return sample

    res = audit(sampler(q1), sampler(q2), lambda o: o == 4, N_MC, 909, claimed_epsilon=1.0)
    assert res.passed, res.summary()
    assert abs(res.p_d - law1[4]) < 0.005 and abs(res.p_d2 - law2[4]) < 0.005, res.summary()


# === Input contract: rejected before any noise is drawn =========================================


def _bad_constructor_args() -> list[tuple[str, dict[str, Any], type[Exception]]]:
    cases: list[tuple[str, dict[str, Any], type[Exception]]] = []
    for e in (0.0, -1.0, math.nan, math.inf):
        cases.append((f"epsilon={e}", {"epsilon": e}, ValueError))
    for e in ("1", None, True):
        cases.append((f"epsilon={e!r}", {"epsilon": e}, TypeError))
    for w in (math.nan, math.inf, -math.inf):
        cases.append((f"threshold={w}", {"threshold": w}, ValueError))
    for w in ("0", None, True, [0.0]):
        cases.append((f"threshold={w!r}", {"threshold": w}, TypeError))
    for s in (0.0, -1.0, math.nan, math.inf):
        cases.append((f"sensitivity={s}", {"sensitivity": s}, ValueError))
    cases.append(("sensitivity=None", {"sensitivity": None}, TypeError))
    cases.append(("random_state=1.5", {"random_state": 1.5}, TypeError))
    return cases


@pytest.mark.parametrize(
    ("name", "override", "exc"), _bad_constructor_args(), ids=lambda x: str(x)[:28]
)
def test_constructor_rejects_before_drawing_noise(
    name: str, override: dict[str, Any], exc: type
) -> None:
    rng = np.random.default_rng(9)
    before = rng.bit_generator.state
    kwargs: dict[str, Any] = {"epsilon": 1.0, "threshold": 0.0, "sensitivity": 1.0,
                              "random_state": rng}
    kwargs.update(override)
    with pytest.raises(exc):
        InteractiveAboveThreshold(
            kwargs.pop("epsilon"), kwargs.pop("threshold"), kwargs.pop("sensitivity"), **kwargs
        )
    assert rng.bit_generator.state == before, name


@pytest.mark.parametrize(
    ("method", "value", "exc"),
    [
        ("test", math.nan, ValueError),
        ("test", math.inf, ValueError),
        ("test", -math.inf, ValueError),
        ("test", "1", TypeError),
        ("test", True, TypeError),
        ("test", None, TypeError),
        ("test", [1.0], TypeError),
        ("first_above", [0.0, math.nan], ValueError),
        ("first_above", [0.0, math.inf], ValueError),
        ("first_above", [[0.0, 1.0]], ValueError),
        ("first_above", 1.0, ValueError),
        ("first_above", ["a", "b"], TypeError),
        ("first_above", [True, False], TypeError),
        ("first_above", [0.0, None], TypeError),
    ],
    ids=lambda x: str(x)[:20],
)
def test_queries_reject_before_drawing_noise(method: str, value: Any, exc: type) -> None:
    """NaN/inf query values (a data-dependent NaN would never pass: a leak), wrong shapes and
    non-numbers are refused; no randomness consumed and nothing counted."""
    rng = np.random.default_rng(9)
    iat = InteractiveAboveThreshold(1.0, 0.0, 1.0, random_state=rng)
    before = rng.bit_generator.state
    with pytest.raises(exc):
        getattr(iat, method)(value)
    assert rng.bit_generator.state == before
    assert iat.n_queries == 0 and iat.halted_at is None


