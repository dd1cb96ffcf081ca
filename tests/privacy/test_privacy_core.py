"""The privacy core (:mod:`oracledp.privacy`): noise laws, DP facts, composition, the ledger.

Distribution tests use a stated false-alarm rate: each test's p-value threshold is 1e-4 with a
fixed seed, so a correct sampler fails with probability 1e-4 per seed (and, the seed being
fixed, the outcome is deterministic); a sampler with the wrong scale (a mutant below) fails.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import stats

import oracledp.privacy as privacy
from oracledp.privacy import (
    GuaranteeKind,
    PrivacyGuarantee,
    Spend,
    advanced_composition,
    advanced_composition_k,
    basic_composition,
    compose,
    exponential_mechanism_rho,
    gaussian_multiplier_rho,
    gaussian_rho,
    gaussian_zcdp_sigma,
    ledger_guarantee,
    pure_to_zcdp,
    select_measure_rho,
    zcdp_epsilon,
    zcdp_rho,
)
from oracledp.privacy import _noise as noise
from oracledp.privacy._composition import MIN_ZCDP_EPSILON

ALPHA = 1e-4  # false-alarm rate of each distribution test
N = 20_000
SRC = Path(__file__).resolve().parents[2] / "src" / "oracledp"


# --- noise laws ------------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [0.5, 3.0])
def test_laplace_law(scale: float) -> None:
    x = noise.laplace(np.random.default_rng(1), scale, size=N)
    assert stats.kstest(x, stats.laplace(scale=scale).cdf).pvalue > ALPHA
    # mutant: half the scale is detected by the same test
    assert stats.kstest(x / 2, stats.laplace(scale=scale).cdf).pvalue < ALPHA


@pytest.mark.parametrize("sigma", [0.5, 3.0])
def test_gaussian_law(sigma: float) -> None:
    x = noise.gaussian(np.random.default_rng(2), sigma, size=N)
    assert stats.kstest(x, stats.norm(scale=sigma).cdf).pvalue > ALPHA
    assert stats.kstest(x / 2, stats.norm(scale=sigma).cdf).pvalue < ALPHA


def test_exponential_law() -> None:
    x = noise.exponential(np.random.default_rng(3), 2.0, size=N)
    assert stats.kstest(x, stats.expon(scale=2.0).cdf).pvalue > ALPHA


def test_exponential_mechanism_law() -> None:
    """Selection frequencies match exp(eps s / (2 Delta)) / Z (chi-square, rate ALPHA)."""
    scores = np.array([0.0, 1.0, 2.0, 4.0])
    eps, sens = 1.0, 2.0
    rng = np.random.default_rng(4)
    picks = np.array([noise.exponential_mechanism(rng, scores, eps, sens) for _ in range(N)])
    p = np.exp(eps * scores / (2 * sens))
    p /= p.sum()
    counts = np.bincount(picks, minlength=scores.size)
    assert stats.chisquare(counts, N * p).pvalue > ALPHA
    # the same counts are far from the law with a wrong (halved) sensitivity
    q = np.exp(eps * scores / sens)
    q /= q.sum()
    assert stats.chisquare(counts, N * q).pvalue < ALPHA


def test_poisson_subsample_rate() -> None:
    idx = noise.poisson_subsample(np.random.default_rng(5), N, 0.1)
    assert idx.dtype == np.int64 and idx.ndim == 1
    assert np.all(np.diff(idx) > 0) and 0 <= idx[0] and idx[-1] < N  # sorted, distinct
    assert stats.binomtest(idx.size, N, 0.1).pvalue > ALPHA


def _subset_counts(draw: Any, n: int, draws: int) -> NDArray[np.int64]:
    """How often each subset of range(n) (coded as a bit mask) was drawn."""
    rng = np.random.default_rng(8)
    codes = [int(np.sum(1 << np.asarray(draw(rng), dtype=np.int64))) for _ in range(draws)]
    return np.bincount(codes, minlength=2**n)


def test_poisson_subsample_exact_law() -> None:
    """Every subset S of range(5) is drawn with probability q^|S| (1-q)^(5-|S|).

    The law of independent q-coins, checked on all 32 subsets at once (chi-square, false-alarm
    rate ALPHA; every expected count is >= 5).  Planted mutants, each a plausible wrong
    O(batch) sampler, fail the same test: the size drawn right but the members with
    replacement, a fixed batch size round(q n), and a size uniform on 0..n.  The mutants'
    laws are exact (surjection counts for the first), so their power is the noncentral
    chi-square's: on 5,000 draws each (expected counts >= 12) the subtlest, "with
    replacement", passes with probability < 1e-16.
    """
    n, q, draws, mutant_draws = 5, 0.3, 20_000, 5_000
    sizes = np.array([bin(code).count("1") for code in range(2**n)])
    law = q**sizes * (1 - q) ** (n - sizes)
    assert math.isclose(law.sum(), 1.0) and mutant_draws * law.min() >= 5

    def pvalue(draw: Any, m: int = draws) -> float:
        return float(stats.chisquare(_subset_counts(draw, n, m), m * law).pvalue)

    assert pvalue(lambda rng: noise.poisson_subsample(rng, n, q)) > ALPHA
    mutants = {
        "with replacement": lambda rng: np.unique(rng.choice(n, rng.binomial(n, q))),
        "fixed size": lambda rng: rng.choice(n, round(q * n), replace=False),
        "uniform size": lambda rng: rng.choice(n, rng.integers(n + 1), replace=False),
    }
    for name, mutant in mutants.items():
        assert pvalue(mutant, mutant_draws) < ALPHA, name


def test_poisson_subsample_costs_the_batch_not_n() -> None:
    """A batch of ~10 out of 10^8 records allocates kilobytes (the coins would take 800 MB)."""
    import tracemalloc

    rng = np.random.default_rng(9)
    tracemalloc.start()
    try:
        idx = noise.poisson_subsample(rng, 10**8, 1e-7)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert idx.size < 100 and peak < 100_000


def test_primitives_make_the_numpy_call() -> None:
    """One generator call each: the stream of draws is the one numpy itself would make."""
    def pair(seed: int = 7) -> tuple[np.random.Generator, np.random.Generator]:
        return np.random.default_rng(seed), np.random.default_rng(seed)

    a, b = pair()
    assert np.array_equal(noise.laplace(a, 2.0, 5), b.laplace(0.0, 2.0, 5))
    a, b = pair()
    assert np.array_equal(noise.gaussian(a, 2.0, 5), b.normal(0.0, 2.0, 5))
    a, b = pair()
    s = np.arange(6.0)
    assert noise.exponential_mechanism(a, s, 0.3, 1.0) == int(
        np.argmax(0.3 * s / 2.0 + b.gumbel(size=6)))
    assert a.random() == b.random()  # both streams advanced by the same draws


@pytest.mark.parametrize(("fn", "args", "kwargs"), [
    (noise.laplace_scale, (1.0, 0.0), {}), (noise.laplace_scale, (-1.0, 1.0), {}),
    (noise.laplace_scale, (1.0, math.nan), {}), (gaussian_rho, (0.0,), {}),
    (gaussian_rho, (1.0,), {"sensitivity_sq": 0.0}), (gaussian_zcdp_sigma, (-0.5,), {}),
    (noise.laplace_scale, (1.0, math.inf), {}), (gaussian_multiplier_rho, (math.inf,), {}),
    (exponential_mechanism_rho, (math.nan,), {}), (select_measure_rho, (1.0, 0.0), {}),
])
def test_scales_refuse_bad_parameters(fn, args, kwargs) -> None:
    with pytest.raises(ValueError, match="must be a finite number > 0"):
        fn(*args, **kwargs)


def test_scale_and_guarantee_pairs() -> None:
    assert noise.laplace_scale(2.0, 0.5) == 4.0
    g = noise.laplace_guarantee(0.5)
    assert g.kind is GuaranteeKind.PURE and g.epsilon == 0.5 and g.delta == 0
    assert gaussian_rho(gaussian_zcdp_sigma(0.3)) == pytest.approx(0.3)
    assert gaussian_rho(gaussian_zcdp_sigma(0.3, sensitivity_sq=2.0),
                        sensitivity_sq=2.0) == pytest.approx(0.3)
    assert noise.exponential_mechanism_guarantee(0.2).is_pure
    assert exponential_mechanism_rho(0.4) == pytest.approx(0.02)
    assert select_measure_rho(0.4, 2.0) == pytest.approx(0.02 + gaussian_multiplier_rho(2.0))
    assert gaussian_multiplier_rho(2.0, releases=4) == pytest.approx(4 * gaussian_rho(2.0))
    ex = PrivacyGuarantee.ex_post(math.inf, source="s", notes="n")
    assert ex.kind is GuaranteeKind.EX_POST and ex.delta == 0.0 and ex.notes == "n"


def test_facts_keep_the_mechanisms_floating_point_expressions() -> None:
    """Each fact returns, bit for bit, the expression its mechanism computed before using it.

    ``x**2`` and ``x * x`` differ in the last bit for about one float in a thousand (both
    kinds occur among these draws), so a fact serves only the mechanisms whose expression it
    keeps: MST and OracleQueryPGM (powers), AIM (products).
    """
    rng = np.random.default_rng(0)
    xs = [float(x) for x in 10 ** rng.uniform(-3, 3, 20_000)]
    assert any(x**2 != x * x for x in xs)  # the two expressions do differ on some inputs
    d2 = math.sqrt(2.0)
    for x, y in zip(xs, reversed(xs), strict=True):
        assert gaussian_rho(x, sensitivity_sq=2.0) == 1.0 / x**2  # OracleQueryPGM
        assert gaussian_rho(x, sensitivity_sq=d2**2, releases=7) == 7 * d2**2 / (2.0 * x**2)
        assert gaussian_rho(x, sensitivity_sq=1.0, releases=3) == 3 * 1.0**2 / (2.0 * x**2)
        assert exponential_mechanism_rho(x) == x**2 / 8.0  # MST, OracleQueryPGM
        assert gaussian_multiplier_rho(x, releases=5) == 5 / (2.0 * x * x)  # AIM
        assert select_measure_rho(y, x) == y * y / 8.0 + 1.0 / (2.0 * x * x)  # AIM
        assert pure_to_zcdp(x) == x**2 / 2.0


# --- composition -----------------------------------------------------------------------------
def test_basic_and_advanced_composition_values() -> None:
    assert basic_composition([0.1] * 10, [1e-7] * 10) == (pytest.approx(1.0), pytest.approx(1e-6))
    k, eps, dp = 100, 0.1, 1e-6
    want = math.sqrt(2 * k * math.log(1 / dp)) * eps + k * eps * (math.exp(eps) - 1)
    assert advanced_composition_k(eps, k, dp) == pytest.approx(want, rel=1e-14)
    assert advanced_composition([eps] * k, dp) == pytest.approx(want, rel=1e-12)
    assert advanced_composition_k(800.0, 2, dp) == math.inf
    with pytest.raises(ValueError, match="slack"):
        advanced_composition([0.1], 0.0)


def test_zcdp_conversions() -> None:
    assert pure_to_zcdp(0.2) == pytest.approx(0.02)
    for eps, delta in [(0.1, 1e-6), (1.0, 1e-9), (5.0, 1e-3)]:
        rho = zcdp_rho(eps, delta)
        assert zcdp_epsilon(rho, delta) <= eps
        assert zcdp_epsilon(rho * (1 + 1e-9), delta) > eps * (1 - 1e-6)
    with pytest.raises(ValueError, match="epsilon"):
        zcdp_rho(0.0, 1e-6)
    with pytest.raises(ValueError, match="delta"):
        zcdp_rho(1.0, 0.0)
    with pytest.raises(TypeError, match="delta"):
        zcdp_rho(1.0, True)


@pytest.mark.timeout(20)
def test_zcdp_rho_of_a_tiny_epsilon_terminates_without_cancellation() -> None:
    """sqrt(L + eps) - sqrt(L) cancels for a tiny eps: at 1e-15 the closed form overshot by
    about 10 % and shrinking by 1e-12 a step never ended; below 1e-17 it was exactly 0 (every
    caller then divided by zero).  Now: within 1e-9 of eps^2 / (sqrt(L + eps) + sqrt(L))^2,
    never overshooting, in well under a second; the usual budgets are unchanged."""
    for delta in (1e-6, 1e-9):
        L = math.log(1.0 / delta)
        for eps in (1e-15, 1e-18, 1e-20, MIN_ZCDP_EPSILON):
            rho = zcdp_rho(eps, delta)
            exact = (eps / (math.sqrt(L + eps) + math.sqrt(L))) ** 2
            assert rho > 0 and zcdp_epsilon(rho, delta) <= eps
            assert rho == pytest.approx(exact, rel=1e-9)
    for eps in (9e-101, 1e-170, 5e-324):  # below the floor (the square underflows near
        with pytest.raises(ValueError, match="too small to compute with"):  # 1e-160)
            zcdp_rho(eps, 1e-6)
    for eps, delta in ((1.0, 1e-6), (0.1, 1e-9), (1e-5, 4e-10)):  # as the former rule gives
        L = math.log(1.0 / delta)
        former = (math.sqrt(L + eps) - math.sqrt(L)) ** 2
        while zcdp_epsilon(former, delta) > eps:
            former *= 1.0 - 1e-12
        assert zcdp_rho(eps, delta) == former


def test_every_zcdp_synthesizer_refuses_an_epsilon_below_the_floor_before_any_draw() -> None:
    """Called directly (not through TableSynthesizer, which had the only floor), OracleQueryPGM,
    MST and AIM at epsilon 1e-170 raised ZeroDivisionError: rho underflowed to 0.  The floor
    is zcdp_rho's, so each refuses with one ValueError, its generator untouched; at the floor
    itself each fits."""
    from oracledp.synth import AIMSynthesizer, Domain, MSTSynthesizer, OracleQueryPGM

    domain = Domain(("a", "b", "c"), ((0, 1), (0, 1), (0, 1, 2)))
    codes = np.array([[0, 0, 0], [0, 1, 1], [1, 1, 2], [1, 0, 2], [1, 1, 1]] * 20)
    for cls in (OracleQueryPGM, MSTSynthesizer, AIMSynthesizer):
        rng = np.random.default_rng(0)
        state = rng.bit_generator.state
        with pytest.raises(ValueError, match="too small to compute with"):
            cls(1e-170, 1e-6, random_state=rng).fit(codes, domain)
        assert rng.bit_generator.state == state
        fitted = cls(MIN_ZCDP_EPSILON, 1e-6, random_state=0).fit(codes, domain)
        assert fitted.sample_codes(4).shape == (4, 3)


def test_one_conversion_of_each_direction() -> None:
    """The core exports exactly one zCDP conversion each way (and pure -> zCDP)."""
    conversions = {n for n in privacy.__all__ if "zcdp" in n and not n.startswith("gaussian")}
    assert conversions == {"pure_to_zcdp", "zcdp_epsilon", "zcdp_rho"}
    assert all(hasattr(privacy, n) for n in privacy.__all__)
    # sorted as ruff sorts __all__ (RUF022): CONSTANTS, then Classes, then functions
    assert privacy.__all__ == sorted(
        privacy.__all__, key=lambda n: (not n.isupper(), not n[0].isupper(), n))


def test_ledger_compositions() -> None:
    ledger = [Spend("a", 0.1), Spend("b", 0.2), Spend("c", 0.3)]
    assert compose(ledger, "basic", 0.0) == (pytest.approx(0.6), 0.0)
    eps_z, d = compose(ledger, "zcdp", 1e-6)
    assert d == 1e-6 and eps_z == zcdp_epsilon(math.fsum(e**2 / 2 for e in (0.1, 0.2, 0.3)), 1e-6)
    eps_a, _ = compose(ledger, "advanced", 1e-6)
    assert eps_a == advanced_composition([0.1, 0.2, 0.3], 1e-6)
    assert compose([Spend("g", zcdp=0.01)], "zcdp", 1e-6)[0] == zcdp_epsilon(0.01, 1e-6)
    with pytest.raises(ValueError, match="zCDP composition does not cover"):
        compose([Spend("p", 0.1, 1e-7)], "zcdp", 1e-6)
    with pytest.raises(ValueError, match="no zCDP rho"):
        _ = Spend("p", 0.1, 1e-7).rho
    with pytest.raises(ValueError, match="unknown composition"):
        compose(ledger, "fancy", 1e-6)


def test_spend_records_round_and_release() -> None:
    s = Spend("Gaussian mechanism", zcdp=gaussian_rho(2.0, sensitivity_sq=2.0), round=4,
              released=(0, 3))
    assert (s.round, s.released, s.rho, s.epsilon, s.delta) == (4, (0, 3), 0.25, math.inf, 0.0)
    assert Spend("Laplace", 0.2).released == () and Spend("Laplace", 0.2).round == 0
    with pytest.raises(TypeError):
        Spend("x", 0.1, 0.0, None, 3)  # type: ignore[misc]  # round is keyword-only


def test_ledger_guarantee_states_the_budget() -> None:
    pure = [Spend("a", 0.1), Spend("b", 0.2), Spend("c", 0.3)]
    g = ledger_guarantee(pure, "basic", 0.7, 1e-6, source="test", notes="n")
    assert g.is_pure and g.epsilon == 0.7 and g.delta == 0.0 and g.notes == "n"
    assert not g.requires_exact_oracle
    assert compose(pure, "zcdp", 1e-6)[0] < 2.1
    g = ledger_guarantee(pure, "zcdp", 2.1, 1e-6, source="test", requires_exact_oracle=True)
    assert g.kind is GuaranteeKind.APPROXIMATE and (g.epsilon, g.delta) == (2.1, 1e-6)
    assert g.requires_exact_oracle
    approx = [Spend("p", 0.1, 1e-7), Spend("q", 0.1, 1e-7)]
    g = ledger_guarantee(approx, "basic", 0.2, 1e-6, source="test")
    assert g.kind is GuaranteeKind.APPROXIMATE and g.delta == 1e-6
    with pytest.raises(AssertionError, match="exceeds the target"):
        ledger_guarantee(pure, "basic", 0.5, 0.0, source="test")
    with pytest.raises(AssertionError, match="exceeds the target"):
        ledger_guarantee(approx, "basic", 0.2, 1e-7, source="test")
    rho = zcdp_rho(1.0, 1e-6)
    over = [Spend("g", zcdp=rho * (1 + 1e-12))]
    with pytest.raises(AssertionError, match="exceeds the target"):
        ledger_guarantee(over, "zcdp", 1.0, 1e-6, source="test")
    assert ledger_guarantee(over, "zcdp", 1.0, 1e-6, source="test", rtol=1e-9).epsilon == 1.0


# --- every privacy-relevant draw goes through oracledp.privacy._noise --------------------------
# Draws that only post-process a release (sampling synthetic records from a released
# distribution, audits' own randomness, data generation of experiments) are not mechanisms.
_DRAWS = {"laplace", "normal", "standard_normal", "gumbel", "exponential", "standard_exponential",
          "random", "integers", "choice", "permutation", "shuffle", "binomial", "uniform",
          "poisson", "geometric", "multivariate_normal", "spawn"}
_EXEMPT_DIRS = ("audit", "datasets")
# (file, call) pairs that are not a mechanism's noise, each with its reason
_NOT_NOISE = {
    ("learners/_prsma.py", "spawn"): "splits the generator into independent streams (no draw)",
    ("learners/_prsma.py", "random"): "ExplicitRSPMBase's simulated oracle failures (the oracle's "
                                     "behaviour, which PRSMA must survive, not its noise)",
    ("_demo.py", "choice"): "the demo's seeded subsample of the data (test sizes), not noise",
    ("synth/_sampling.py", "random"): "sampling records from a released junction-tree model",
    ("synth/_sampling.py", "permutation"): "the random order records are dealt values in when "
                                           "sampling a released model (post-processing)",
    ("synth/_table.py", "random"): "mapping a sampled bin to a value inside it (post-processing)",
    ("synth/_table.py", "permutation"): "dealing a sampled bin's fine bins in a random order "
                                        "(post-processing)",
    ("synth/_table.py", "choice"): "drawing a sampled bin's fine bin from the released "
                                   "histogram (post-processing)",
    ("synth/_table_evaluate.py", "choice"): "the non-private evaluation's subset of column sets",
    ("synth/_table_evaluate.py", "integers"): "the non-private evaluation's classifier seed",
}


def test_no_inline_noise_draw_outside_the_core() -> None:
    offenders = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        if rel.parts[0] in _EXEMPT_DIRS or rel.as_posix() == "privacy/_noise.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _DRAWS
                    and (rel.as_posix(), node.func.attr) not in _NOT_NOISE
                    and not (isinstance(node.func.value, ast.Name)
                             and node.func.value.id in ("np", "math", "stats", "noise"))):
                offenders.append(f"{rel}:{node.lineno} .{node.func.attr}(")
    assert not offenders, "draw through oracledp.privacy._noise:\n" + "\n".join(offenders)


