"""MWEM on tiny tables at small epsilon: the multiplicative-weights update stays finite.

With n = 1..20 records and a small epsilon the Laplace measurement (count scale
``2T/epsilon``, divided by n) is huge, and the step ``p[q] *= exp((m - q(p)) / 2)``
overflowed (``OverflowError: math range error``) or, for a huge negative exponent, sent the
whole distribution to 0 (then NaN).  The update now falls back to log space only where the
direct form fails, so the releases that worked are unchanged bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from oracledp.synth import Domain, MWEMSynthesizer, kway_marginal_workload, mwem
from oracledp.synth._baselines import _mw_update

DOMAIN = Domain(("a", "b", "c", "d"), tuple(tuple(range(s)) for s in (2, 3, 2, 4)))
EPSILONS = (1.0, 1e-2, 1e-4, 1e-6, 1e-9, 1e-12)


def _codes(seed: int) -> np.ndarray:
    rng = np.random.default_rng(30_000 + seed)
    n = int(rng.integers(1, 21))
    return np.stack([rng.integers(0, s, size=n) for s in DOMAIN.shape], axis=1)


def _is_distribution(p: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(p)) and np.all(p >= 0) and math.isclose(p.sum(), 1.0))


@pytest.mark.parametrize("output", ["average", "last"])
def test_tiny_tables_at_small_epsilon_give_finite_answers(output: str) -> None:
    workload = kway_marginal_workload(DOMAIN, 2)
    for seed in range(40):
        codes = _codes(seed)
        for eps in EPSILONS:
            res = mwem(codes, DOMAIN, workload, eps, 8, random_state=seed, output=output)
            assert _is_distribution(res.distribution), (seed, eps)
            assert np.all(np.isfinite(res.answer(workload))), (seed, eps)
            assert res.guarantee.epsilon == eps


def test_the_synthesizer_fits_and_samples_on_tiny_tables() -> None:
    for seed in range(15):
        codes = _codes(seed)
        for eps in (1e-3, 1e-12):
            syn = MWEMSynthesizer(eps, k=2, rounds=6, random_state=seed).fit(codes, DOMAIN)
            assert np.all(np.isfinite(syn.answer()))
            out = syn.sample_codes(10, random_state=seed)
            assert np.all((out >= 0) & (out < np.array(DOMAIN.shape)))


@pytest.mark.parametrize("seed", [0, 2, 3])
def test_the_reported_titanic_case(seed: int) -> None:
    """The issue's reproduction: 12 titanic rows, epsilon 0.01 (seeds 0, 2, 3 crashed)."""
    from oracledp.datasets import table_schema
    from oracledp.synth import TableSynthesizer

    rows = [("1st class", "adults", "man", "yes"), ("2nd class", "adults", "women", "no"),
            ("3rd class", "child", "man", "no"), ("crew", "adults", "man", "no")] * 3
    frame = pd.DataFrame(rows, columns=["class", "age", "sex", "survived"])
    syn = TableSynthesizer("mwem", epsilon=0.01, random_state=seed).fit(
        frame, table_schema("titanic"))
    out = syn.sample(20, random_state=seed)
    assert len(out) == 20 and out.notna().all().all()


def test_the_update_is_the_direct_one_where_that_is_finite() -> None:
    """Bit for bit the paper's ``p[q] *= exp(x); p /= p.sum()`` wherever that is finite."""
    rng = np.random.default_rng(5)
    for x in (-740.0, -705.0, -30.0, -0.5, 0.0, 0.5, 30.0, 705.0, 709.0):
        p = rng.random((2, 3, 4))
        p /= p.sum()
        where = (slice(None), 1, slice(None))
        want = p.copy()
        want[where] *= math.exp(x)
        want /= want.sum()
        got = p.copy()
        _mw_update(got, where, x)
        assert np.array_equal(got, want), x


def test_the_update_in_log_space_where_the_direct_one_fails() -> None:
    p = np.array([[0.5, 0.25], [0.125, 0.125]])
    up = p.copy()
    _mw_update(up, (0, slice(None)), 1e12)  # exp overflows: all mass on row 0, 2:1
    np.testing.assert_allclose(up, [[2 / 3, 1 / 3], [0.0, 0.0]])
    down = p.copy()
    _mw_update(down, (0, slice(None)), -1e12)  # row 0 vanishes
    np.testing.assert_allclose(down, [[0.0, 0.0], [0.5, 0.5]])
    # the query holds every cell of positive mass: a shift of all of them changes nothing
    q = np.array([0.0, 0.25, 0.75])
    for x in (-1e6, -800.0, 800.0, 1e6):
        got = q.copy()
        _mw_update(got, (slice(1, None),), x)
        np.testing.assert_allclose(got, q)
    # cells at 0 stay at 0 and the query's own shares are kept
    r = np.array([0.0, 0.2, 0.3, 0.5])
    _mw_update(r, (slice(0, 3),), 2000.0)
    np.testing.assert_allclose(r, [0.0, 0.4, 0.6, 0.0])
