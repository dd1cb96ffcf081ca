"""Tests of NoiseReduction, Algorithm 1 of Ligett et al. 2017 (docs/specs/privacy-testing.md sections 4-7).

Layers (spec section 0): (1) goldens and input contracts; (2) exact-law tests:
the marginal of level t is v + Lap(Delta/eps_t) (KS and the exact Gamma scale
test), ties between consecutive levels are Binomial with p = (eps_t/eps_{t+1})^2,
non-tied steps are Lap(Delta/eps_t) and the coins of different entries are
independent; (3) the prefix audit on v = 0 vs v = 1 with our audit harness.

Every statistical assertion has false-alarm rate at most ALPHA = 1e-6 (split by
Bonferroni when one test makes several comparisons) and a fixed seed.  Every
one ships with planted-bug mutants (below) that the same test must reject on
the same seed and sample size.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import stats

from oracledp.audit import audit
from oracledp.mechanisms import (
    noise_reduction,
    noise_reduction_guarantee,
    nr_keep_probabilities,
    nr_scales,
)
from oracledp.privacy._guarantees import GuaranteeKind

ALPHA = 1e-6  # false-alarm rate of every statistical assertion in this file

NR = Callable[..., NDArray[np.float64]]


# --- planted-bug mutants (test code only) ----------------------------------------------------


def _nr_mutant(
    v: Any,
    sensitivity: float,
    eps_list: Any,
    rng: np.random.Generator,
    *,
    keep_power: float = 2.0,
    step_next_level: bool = False,
    reverse: bool = False,
    one_coin: bool = False,
    fresh: bool = False,
    top_unnoised: bool = False,
) -> NDArray[np.float64]:
    """Algorithm 1 with one planted bug (all flags False gives a correct reference).

    keep_power=1: keep with probability eps_t/eps_{t+1} (not squared).
    step_next_level: the fresh step has scale Delta/eps_{t+1} instead of Delta/eps_t.
    reverse: levels returned in the wrong order (least private first).
    one_coin: one keep-coin for the whole vector instead of one per entry.
    fresh: independent v + Lap(Delta/eps_t) per level (no noise reduction).
    top_unnoised: the top level releases v itself.
    """
    v = np.asarray(v, dtype=float)
    eps = np.asarray(eps_list, dtype=float)
    T = eps.size
    out = np.empty((T, *v.shape))
    if fresh:
        for t in range(T):
            out[t] = v + rng.laplace(0.0, sensitivity / eps[t], size=v.shape)
        return out
    out[T - 1] = v if top_unnoised else v + rng.laplace(0.0, sensitivity / eps[T - 1], v.shape)
    for t in range(T - 2, -1, -1):
        p = (eps[t] / eps[t + 1]) ** keep_power
        keep = (rng.random() < p) if one_coin else (rng.random(v.shape) < p)
        scale = sensitivity / (eps[t + 1] if step_next_level else eps[t])
        out[t] = np.where(keep, out[t + 1], out[t + 1] + rng.laplace(0.0, scale, v.shape))
    return out[::-1].copy() if reverse else out


def _mutant(**flags: bool | float) -> NR:
    def run(v: Any, sensitivity: float, eps_list: Any, rng: np.random.Generator):
        return _nr_mutant(v, sensitivity, eps_list, rng, **flags)

    return run


def _library(v: Any, sensitivity: float, eps_list: Any, rng: np.random.Generator):
    return noise_reduction(v, sensitivity, eps_list, rng)


# --- helpers ----------------------------------------------------------------------------------


def _ks_critical(n: int, alpha: float) -> float:
    """Exact two-sided KS critical value: P[D_n > c] = alpha under H0 (scipy.stats.kstwo)."""
    return float(stats.kstwo(n).isf(alpha))


def _gamma_scale_ok(x: NDArray[np.float64], b: float, alpha: float) -> bool:
    """Exact scale test of Lap(b): sum|X_i| / b ~ Gamma(N, 1); two-sided at level alpha."""
    n = x.size
    s = float(np.abs(x).sum() / b)
    return bool(stats.gamma.ppf(alpha / 2, n) <= s <= stats.gamma.isf(alpha / 2, n))


# === Layer 1: goldens ===========================================================================


def test_goldens_keep_probabilities_and_scales() -> None:
    """Algorithm 1 by hand: keep with (eps_t/eps_{t+1})^2, steps Lap(Delta/eps_t);
    Theorem 2.7: the prefix out[:t+1] is eps_t-DP (pure)."""
    np.testing.assert_allclose(nr_keep_probabilities([0.5, 1.0, 4.0]), [0.25, 0.0625], rtol=1e-15)
    np.testing.assert_allclose(nr_keep_probabilities([0.3, 0.5]), [0.36], rtol=1e-15)
    np.testing.assert_allclose(nr_scales(2.0, [0.5, 1.0, 4.0]), [4.0, 2.0, 0.5], rtol=1e-15)
    assert nr_keep_probabilities([1.0]).shape == (0,)
    g = noise_reduction_guarantee([0.5, 1.0, 4.0], 1)
    assert g.epsilon == 1.0 and g.delta == 0.0 and g.kind is GuaranteeKind.PURE
    assert "Theorem 2.7" in g.source and g.holds and not g.requires_exact_oracle
    assert noise_reduction_guarantee([0.5, 1.0, 4.0], 0).epsilon == 0.5
    assert noise_reduction_guarantee([0.5, 1.0, 4.0], 2).epsilon == 4.0
    for bad, exc in ((3, ValueError), (-1, ValueError), (1.0, TypeError), (True, TypeError)):
        with pytest.raises(exc):
            noise_reduction_guarantee([0.5, 1.0, 4.0], bad)  # type: ignore[arg-type]


def test_shapes_reproducibility_and_exact_ties() -> None:
    """out has shape (T, *shape(v)); the same seed gives the same output, a shared Generator
    fresh noise; a tie is an exact float equality (the kept value is copied, not re-added)."""
    assert noise_reduction(3.0, 1.0, [0.5, 1.0], 0).shape == (2,)
    assert noise_reduction(np.zeros((2, 3)), 1.0, [0.1, 0.5, 1.0], 0).shape == (3, 2, 3)
    assert noise_reduction([1, 2], 1.0, [2.0], 0).shape == (1, 2)
    a = noise_reduction(np.arange(5.0), 1.0, [0.5, 1.0, 2.0], random_state=11)
    b = noise_reduction(np.arange(5.0), 1.0, [0.5, 1.0, 2.0], random_state=11)
    np.testing.assert_array_equal(a, b)
    g = np.random.default_rng(11)
    np.testing.assert_array_equal(noise_reduction(np.arange(5.0), 1.0, [0.5, 1.0, 2.0], g), a)
    assert not np.array_equal(noise_reduction(np.arange(5.0), 1.0, [0.5, 1.0, 2.0], g), a)
    out = noise_reduction(np.zeros(1000), 1.0, [0.9, 1.0], random_state=3)  # keep prob 0.81
    assert 700 < int((out[0] == out[1]).sum()) < 900


# === Layer 2: exact laws ========================================================================

EPS_MARG = (0.2, 0.5, 0.6, 1.5, 4.0)  # keep probabilities 0.16, 0.694, 0.16, 0.141
DELTA_MARG = 2.5
N_MARG = 20_000


def _marginal_failures(nr: NR, seed: int) -> list[str]:
    """(out[t] - v) eps_t / Delta ~ Lap(1) for every t: KS (exact critical value) and the
    Gamma scale test, 2T assertions at ALPHA / (2T) each (Bonferroni), N = 20,000 entries
    of one call (entries are i.i.d. across coordinates; v has distinct values)."""
    T = len(EPS_MARG)
    a = ALPHA / (2 * T)
    v = np.linspace(-50.0, 50.0, N_MARG)
    out = nr(v, DELTA_MARG, EPS_MARG, np.random.default_rng(seed))
    crit = _ks_critical(N_MARG, a)
    failures = []
    for t, eps in enumerate(EPS_MARG):
        z = (out[t] - v) * eps / DELTA_MARG
        d = stats.kstest(z, stats.laplace.cdf).statistic
        if d > crit:
            failures.append(f"level {t}: KS D = {d:.4f} > {crit:.4f}")
        if not _gamma_scale_ok(z, 1.0, a):
            failures.append(f"level {t}: Gamma scale test, mean |z| = {np.abs(z).mean():.4f}")
    return failures


def test_marginals_are_laplace_at_each_level() -> None:
    """Layer 2 (spec section 5, NR marginals).  Koufogiannis et al.'s mixture gives out[t] - v
    ~ Lap(Delta/eps_t) exactly (characteristic-function identity in _noise_reduction.py).
    False alarm <= 1e-6 in all.  Mutants below must fail on the same seed."""
    assert _marginal_failures(_library, 101) == []


@pytest.mark.parametrize(
    "flags",
    [{"reverse": True}, {"keep_power": 1.0}, {"step_next_level": True}],
    ids=["wrong_order", "keep_prob_not_squared", "step_scale_next_level"],
)
def test_marginal_test_rejects_mutants(flags: dict[str, Any]) -> None:
    """Meta-test: levels in the wrong order (variance must decrease with t), keep probability
    eps_t/eps_{t+1}, and steps of scale Delta/eps_{t+1} all change some marginal."""
    assert _marginal_failures(_mutant(**flags), 101) != []


EPS_TIES = (0.3, 0.5, 1.0, 1.2)  # keep probabilities 0.36, 0.25, 0.694
SHAPE_TIES = (4_000, 5)  # N d = 20,000 entries


def _tie_failures(nr: NR, seed: int) -> list[str]:
    """For each consecutive pair of levels: the number of exact ties out[t] == out[t+1]
    ~ Binomial(N d, (eps_t/eps_{t+1})^2) (exact two-sided binomial test) and the non-tied
    steps (out[t] - out[t+1]) eps_t / Delta ~ Lap(1) (KS); 2(T-1) assertions at
    ALPHA / (2(T-1)) each."""
    T = len(EPS_TIES)
    a = ALPHA / (2 * (T - 1))
    v = np.random.default_rng(0).normal(size=SHAPE_TIES) * 10.0
    delta = 1.7
    out = nr(v, delta, EPS_TIES, np.random.default_rng(seed))
    n = v.size
    failures = []
    for t in range(T - 1):
        p = (EPS_TIES[t] / EPS_TIES[t + 1]) ** 2
        tie = out[t] == out[t + 1]
        k = int(tie.sum())
        pv = stats.binomtest(k, n, p).pvalue
        if pv < a:
            failures.append(f"levels {t},{t + 1}: {k}/{n} ties vs p = {p:.4f} (p-value {pv:.2e})")
        step = (out[t] - out[t + 1])[~tie] * EPS_TIES[t] / delta
        d = stats.kstest(step, stats.laplace.cdf).statistic
        crit = _ks_critical(step.size, a)
        if d > crit:
            failures.append(f"levels {t},{t + 1}: step KS D = {d:.4f} > {crit:.4f}")
    return failures


def test_tie_rate_and_steps() -> None:
    """Layer 2 (spec section 5, NR ties): tie counts are Binomial(N d, (eps_t/eps_{t+1})^2) and
    non-tied steps are Lap(Delta/eps_t).  False alarm <= 1e-6 in all."""
    assert _tie_failures(_library, 202) == []


@pytest.mark.parametrize(
    "flags",
    [{"keep_power": 1.0}, {"step_next_level": True}, {"fresh": True}],
    ids=["keep_prob_not_squared", "step_scale_next_level", "fresh_noise_per_level"],
)
def test_tie_test_rejects_mutants(flags: dict[str, Any]) -> None:
    assert _tie_failures(_mutant(**flags), 202) != []


N_COINS = 20_000


def _coin_independence_pvalue(nr: NR, seed: int) -> float:
    """N_COINS separate calls with d = 3 entries, eps = (0.5, 1): the 2x2x2 table of tie
    indicators (out[0] == out[1] per entry) is tested for mutual independence of the three
    coordinates (scipy.stats.chi2_contingency on the 3-way table, 4 dof)."""
    rng = np.random.default_rng(seed)
    v = np.array([0.0, 1.0, -2.0])
    ties = np.empty((N_COINS, 3), dtype=np.int64)
    for i in range(N_COINS):
        out = nr(v, 1.0, (0.5, 1.0), rng)
        ties[i] = out[0] == out[1]
    table = np.zeros((2, 2, 2))
    np.add.at(table, (ties[:, 0], ties[:, 1], ties[:, 2]), 1)
    return float(stats.chi2_contingency(table).pvalue)


def test_coins_are_independent_across_coordinates() -> None:
    """Layer 2 (spec section 5, per-coordinate coins): each entry flips its own coin (as in
    the authors' noise_reduc.py).  Independence holds: p-value >= ALPHA (false alarm <= 1e-6)."""
    assert _coin_independence_pvalue(_library, 303) >= ALPHA


def test_coin_test_rejects_one_coin_per_vector() -> None:
    """Meta-test: one coin for the whole vector makes the tie indicators identical."""
    assert _coin_independence_pvalue(_mutant(one_coin=True), 303) < ALPHA


# === Layer 3: audits on v = 0 vs v = 1 ==========================================================

N_AUDIT = 20_000


def _prefix_audit(nr: NR, seed: int):
    """Spec section 5 prefix audit: Delta = 1, eps = (0.5, 1), v = 1 vs v = 0, event
    {out[0] >= 1 and out[1] >= 1}, claim eps_T = 1 for the whole prefix (Theorem 2.7).
    The correct chain attains log-ratio exactly 1 (on out[1] >= 1 the Lap(1) density ratio
    is e, and out[0] given out[1] does not depend on v); fresh independent noise per level
    gives 1.5.  N = 20,000 per side; each direction errs with probability <= 1e-6."""

    def sampler(v: float):
        def sample(n: int, rng: np.random.Generator) -> NDArray[np.float64]:
            return nr(np.full(n, v), 1.0, (0.5, 1.0), rng).T

        return sample

    return audit(
        sampler(1.0),
        sampler(0.0),
        lambda o: (o[:, 0] >= 1.0) & (o[:, 1] >= 1.0),
        N_AUDIT,
        seed,
        claimed_epsilon=1.0,
        label="NR prefix",
    )


def test_prefix_audit_passes() -> None:
    """Layer 3.  The correct chain passes; its eps_lb is close to (below) the exact 1.0."""
    res = _prefix_audit(_library, 404)
    assert res.passed, res.summary()
    assert res.eps_lb_forward > 0.75, res.summary()  # power check: the event is informative


def test_prefix_audit_rejects_fresh_noise_per_level() -> None:
    """Meta-test: independent releases compose to 1.5 > 1 and are caught on the same seed."""
    res = _prefix_audit(_mutant(fresh=True), 404)
    assert not res.passed and res.eps_lb_forward > 1.0, res.summary()


def _level0_audit(nr: NR, seed: int):
    """Level 0 alone is claimed eps_1 = 0.5-DP (Theorem 2.7 with t = 1): v = 1 vs v = 0,
    event {out[0] >= 1}; exact ratio e^0.5 for the correct chain, e^1 if the levels are
    returned in the wrong order.  N = 20,000 per side, false alarm <= 1e-6 per direction."""

    def sampler(v: float):
        def sample(n: int, rng: np.random.Generator) -> NDArray[np.float64]:
            return nr(np.full(n, v), 1.0, (0.5, 1.0), rng)[0]

        return sample

    return audit(sampler(1.0), sampler(0.0), lambda o: o >= 1.0, N_AUDIT, seed, claimed_epsilon=0.5)


def test_level0_audit_passes_and_rejects_wrong_order() -> None:
    res = _level0_audit(_library, 505)
    assert res.passed, res.summary()
    bad = _level0_audit(_mutant(reverse=True), 505)
    assert not bad.passed and bad.eps_lb_forward > 0.5, bad.summary()


def test_no_unnoised_entry_is_released() -> None:
    """Spec section 10 (NVFlare#343): every released entry of every level differs from v
    (10^5 entries, 3 levels; exact equality has probability 0 under continuous noise).
    Mutant: a top level that releases v itself is caught."""
    v = np.random.default_rng(1).uniform(-3, 3, size=100_000)
    out = noise_reduction(v, 1.0, (0.5, 0.7, 1.0), random_state=606)
    assert int((out == v).sum()) == 0
    bad = _mutant(top_unnoised=True)(v, 1.0, (0.5, 0.7, 1.0), np.random.default_rng(606))
    assert int((bad == v).sum()) > 0


# === Input contract: rejected before any noise is drawn =========================================


def _bad_calls() -> list[tuple[str, dict[str, Any], type[Exception]]]:
    cases: list[tuple[str, dict[str, Any], type[Exception]]] = []
    for el in ([1.0, 1.0], [1.0, 0.5], [0.5, 1.0, 0.9], [0.0, 1.0], [-1.0, 1.0], [], [[0.5, 1.0]]):
        cases.append((f"eps_list={el}", {"eps_list": el}, ValueError))
    for el in ([0.5, math.nan], [0.5, math.inf], [math.nan], 1.0):
        cases.append((f"eps_list={el}", {"eps_list": el}, ValueError))
    for el in (["a", "b"], [True, False], [0.5, None]):
        cases.append((f"eps_list={el}", {"eps_list": el}, TypeError))
    for s in (0.0, -1.0, math.nan, math.inf):
        cases.append((f"sensitivity={s}", {"sensitivity": s}, ValueError))
    for s in ("1", None, True):
        cases.append((f"sensitivity={s!r}", {"sensitivity": s}, TypeError))
    for v in (math.nan, [1.0, math.nan], [1.0, math.inf], [[-math.inf]]):
        cases.append((f"v={v}", {"v": v}, ValueError))
    for v in ("abc", [1.0, None], np.array([True, False]), np.array([1 + 2j])):
        cases.append((f"v={v!r}", {"v": v}, TypeError))
    cases.append(("random_state=float", {"random_state": 1.5}, TypeError))
    return cases


@pytest.mark.parametrize(("name", "override", "exc"), _bad_calls(), ids=lambda x: str(x)[:28])
def test_rejects_before_drawing_noise(name: str, override: dict[str, Any], exc: type) -> None:
    """Layer 1 (spec section 6): non-increasing / non-positive / non-finite levels, bad
    sensitivity, NaN or inf in v, non-numeric inputs: ValueError/TypeError, and the
    Generator's state is unchanged (no randomness consumed)."""
    rng = np.random.default_rng(9)
    before = rng.bit_generator.state
    kwargs: dict[str, Any] = {"v": [0.0, 1.0], "sensitivity": 1.0, "eps_list": [0.5, 1.0]}
    kwargs.update(override)
    kwargs.setdefault("random_state", rng)
    with pytest.raises(exc):
        noise_reduction(**kwargs)
    assert rng.bit_generator.state == before, name


