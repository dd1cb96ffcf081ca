"""The privacy core (:mod:`oracledp.privacy`): noise laws, composition formulas, the ledger.

Distribution tests use a stated false-alarm rate: each test's p-value threshold is 1e-4 with a
fixed seed, so a correct sampler fails with probability 1e-4 per seed (and, the seed being
fixed, the outcome is deterministic); a sampler with the wrong scale (a mutant below) fails.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from oracledp.privacy import (
    GuaranteeKind,
    Spend,
    advanced_composition,
    advanced_composition_k,
    basic_composition,
    compose,
    ledger_guarantee,
    pure_to_zcdp,
    rho_for_epsilon,
    zcdp_epsilon,
)
from oracledp.privacy import _noise as noise

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
    mask = noise.poisson_subsample(np.random.default_rng(5), N, 0.1)
    assert mask.dtype == np.bool_ and mask.shape == (N,)
    assert stats.binomtest(int(mask.sum()), N, 0.1).pvalue > ALPHA


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


@pytest.mark.parametrize(("fn", "args"), [
    (noise.laplace_scale, (1.0, 0.0)), (noise.laplace_scale, (-1.0, 1.0)),
    (noise.laplace_scale, (1.0, math.nan)), (noise.gaussian_rho, (1.0, 0.0)),
    (noise.gaussian_zcdp_sigma, (1.0, -0.5)), (noise.laplace_scale, (1.0, math.inf)),
])
def test_scales_refuse_bad_parameters(fn, args) -> None:
    with pytest.raises(ValueError, match="must be a finite number > 0"):
        fn(*args)


def test_scale_and_guarantee_pairs() -> None:
    assert noise.laplace_scale(2.0, 0.5) == 4.0
    g = noise.laplace_guarantee(0.5)
    assert g.kind is GuaranteeKind.PURE and g.epsilon == 0.5 and g.delta == 0
    assert noise.gaussian_rho(1.0, noise.gaussian_zcdp_sigma(1.0, 0.3)) == pytest.approx(0.3)
    assert noise.exponential_mechanism_guarantee(0.2).is_pure


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
        rho = rho_for_epsilon(eps, delta)
        assert zcdp_epsilon(rho, delta) <= eps
        assert zcdp_epsilon(rho * (1 + 1e-9), delta) > eps * (1 - 1e-6)


def test_ledger_compositions() -> None:
    ledger = [Spend("a", 0.1), Spend("b", 0.2), Spend("c", 0.3)]
    assert compose(ledger, "basic", 0.0) == (pytest.approx(0.6), 0.0)
    eps_z, d = compose(ledger, "zcdp", 1e-6)
    assert d == 1e-6 and eps_z == zcdp_epsilon(math.fsum(e**2 / 2 for e in (0.1, 0.2, 0.3)), 1e-6)
    eps_a, _ = compose(ledger, "advanced", 1e-6)
    assert eps_a == advanced_composition([0.1, 0.2, 0.3], 1e-6)
    assert compose([Spend("g", zcdp_rho=0.01)], "zcdp", 1e-6)[0] == zcdp_epsilon(0.01, 1e-6)
    with pytest.raises(ValueError, match="zCDP composition does not cover"):
        compose([Spend("p", 0.1, 1e-7)], "zcdp", 1e-6)
    with pytest.raises(ValueError, match="unknown composition"):
        compose(ledger, "fancy", 1e-6)
    g = ledger_guarantee(ledger, "basic", 0.0, source="test", requires_exact_oracle=False)
    assert g.is_pure and g.epsilon == pytest.approx(0.6)


# --- every privacy-relevant draw goes through oracledp.privacy._noise --------------------------
# Draws that only post-process a release (sampling synthetic records from a released
# distribution, audits' own randomness, data generation of experiments) are not mechanisms.
_DRAWS = {"laplace", "normal", "standard_normal", "gumbel", "exponential", "standard_exponential",
          "random", "integers", "choice", "permutation", "shuffle", "binomial", "uniform",
          "poisson", "geometric", "multivariate_normal", "spawn"}
_EXEMPT_DIRS = ("audit", "datasets")
# (file, call) pairs that are not a mechanism's noise, each with its reason
_NOT_NOISE = {
    ("learners/prsma.py", "spawn"): "splits the generator into independent streams (no draw)",
    ("learners/prsma.py", "random"): "ExplicitRSPMBase's simulated oracle failures (the oracle's "
                                     "behaviour, which PRSMA must survive, not its noise)",
    ("synth/baselines.py", "choice"): "sampling records from a released distribution",
    ("synth/_release.py", "choice"): "sampling records from a released distribution",
    ("synth/_peers_model.py", "random"): "sampling records from a released graphical model",
    ("_demo.py", "choice"): "the demo's seeded subsample of the data (test sizes), not noise",
}


def test_no_inline_noise_draw_outside_the_core() -> None:
    offenders = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        if rel.parts[0] in _EXEMPT_DIRS or rel.as_posix() == "privacy/noise.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _DRAWS
                    and (rel.as_posix(), node.func.attr) not in _NOT_NOISE
                    and not (isinstance(node.func.value, ast.Name)
                             and node.func.value.id in ("np", "math", "stats", "noise"))):
                offenders.append(f"{rel}:{node.lineno} .{node.func.attr}(")
    assert not offenders, "draw through oracledp.privacy._noise:\n" + "\n".join(offenders)


