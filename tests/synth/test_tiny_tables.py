"""Tiny tables (1-20 rows): every synthesizer yields a model and finite samples (issue 38.5).

With a handful of records the estimators' weights ``(n / sigma)^2`` are tiny: the dense
estimator's normaliser underflowed to 0 (``math domain error``) and the junction-tree
estimator's step size doubled to infinity (an endless line search).  Both now share one
step rule (:func:`oracledp.synth._estimation.mirror_descent_step`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from oracledp.synth import (
    AIMSynthesizer,
    Domain,
    IndependentMarginalsSynthesizer,
    MSTSynthesizer,
    MWEMSynthesizer,
    OracleQueryPGM,
    OracleQuerySynthesizer,
    Synthesizer,
)
from oracledp.synth._estimation import MAX_STEP_GROWTH, mirror_descent_step

DOMAIN = Domain(("a", "b", "c", "d"), tuple(tuple(range(s)) for s in (2, 3, 2, 4)))

Make = Callable[[int], Synthesizer]

#: Every method of oracledp.synth, with small iteration counts (what is tested is that the
#: estimation is numerically safe, not how closely it fits).
METHODS: dict[str, Make] = {
    "oracle-query-pgm": lambda s: OracleQueryPGM(1.0, 1e-6, iterations=3, final_iterations=10,
                                                 random_state=s),
    "oracle-query-pgm-graphical": lambda s: OracleQueryPGM(
        1.0, 1e-6, iterations=3, final_iterations=10, estimator="graphical", random_state=s),
    "mst": lambda s: MSTSynthesizer(1.0, 1e-6, random_state=s),
    "aim": lambda s: AIMSynthesizer(1.0, 1e-6, random_state=s),
    "mwem": lambda s: MWEMSynthesizer(1.0, rounds=5, random_state=s),
    "independent": lambda s: IndependentMarginalsSynthesizer(1.0, random_state=s),
    "oracle-query": lambda s: OracleQuerySynthesizer(1.0, 1e-6, max_rounds=5, random_state=s),
}


@pytest.fixture
def short_estimation(monkeypatch: pytest.MonkeyPatch) -> None:
    from oracledp.synth import _peers

    monkeypatch.setattr(_peers, "mst", functools.partial(_peers.mst, iters=30))
    monkeypatch.setattr(_peers, "aim", functools.partial(_peers.aim, round_iters=5,
                                                         final_iters=20))


def _table(seed: int) -> np.ndarray:
    rng = np.random.default_rng(10_000 + seed)
    n = int(rng.integers(1, 21))
    return np.stack([rng.integers(0, s, size=n) for s in DOMAIN.shape], axis=1)


def _check(method: str, seed: int) -> None:
    codes = _table(seed)
    syn = METHODS[method](seed)
    syn.fit(codes, DOMAIN)
    out = syn.sample_codes(50, random_state=seed)
    assert out.shape == (50, len(DOMAIN))
    assert np.all((out >= 0) & (out < np.array(DOMAIN.shape)))
    ans = syn.answer()
    assert np.all(np.isfinite(ans))
    model = getattr(syn, "model_", None)
    if model is not None:
        assert math.isfinite(model.log_partition)
        assert all(np.all(np.isfinite(mu)) for mu in model.marginals_)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_tiny_tables_give_a_model_and_finite_samples(method: str, short_estimation: None
                                                     ) -> None:
    for seed in range(50):
        _check(method, seed)


@pytest.mark.slow
@pytest.mark.parametrize("method", sorted(METHODS))
def test_tiny_tables_many_seeds(method: str, short_estimation: None) -> None:
    for seed in range(1000):
        _check(method, seed)


def test_the_step_rule_is_capped_finite_and_terminates() -> None:
    # every step accepted: the size doubles up to the cap, never past it
    eta, smooth = 1.0, 1e-3
    for _ in range(200):
        eta, got = mirror_descent_step(eta, smooth, lambda e: (e, True))
        assert got == eta and math.isfinite(eta)
    assert eta == MAX_STEP_GROWTH / smooth
    # a non-finite previous step restarts at the cap
    assert mirror_descent_step(math.inf, 1.0, lambda e: (e, True))[0] == MAX_STEP_GROWTH
    # no candidate is ever finite: it stops at the smallest step with none
    tries: list[float] = []
    eta, got = mirror_descent_step(1e9, 1.0, lambda e: tries.append(e) or None)
    assert got is None and eta == 1.0 and tries[-1] == 1.0
    assert len(tries) <= math.log2(MAX_STEP_GROWTH) + 2
    # the inequality never holds: the smallest step's finite candidate is taken
    assert mirror_descent_step(8.0, 1.0, lambda e: (e, False)) == (1.0, 1.0)
    with pytest.raises(ValueError, match="smoothness"):
        mirror_descent_step(1.0, 0.0, lambda e: (e, True))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("n", [1, 2, 5, 12])
@pytest.mark.parametrize("make", [OracleQueryPGM, MSTSynthesizer], ids=["pgm", "mst"])
def test_the_measured_cases_with_default_iterations(make: type, n: int) -> None:
    """The issue's cases: OracleQueryPGM raised ``math domain error`` and MST (3000
    iterations: the step size doubled past float range) never returned."""
    rng = np.random.default_rng(n)
    codes = np.stack([rng.integers(0, s, size=n) for s in DOMAIN.shape], axis=1)
    syn = make(1.0, 1e-6, random_state=0)
    out = syn.fit(codes, DOMAIN).sample_codes(20, random_state=0)
    assert out.shape == (20, 4) and np.all(np.isfinite(syn.answer()))


def _tiny_frame(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(20_000 + seed)
    n = int(rng.integers(1, 21))
    return pd.DataFrame({"days": np.where(rng.random(n) < 0.9, 0, rng.integers(0, 366, n)),
                         "inc": rng.integers(0, 1_000_001, n),
                         "c": rng.choice(["a", "b", "c"], n),
                         "y": rng.choice(["no", "yes"], n)})


_TINY_SCHEMA = {"target": {"name": "y", "labels": ["no", "yes"]}, "columns": [
    {"name": "days", "type": "numeric", "lower": 0, "upper": 365, "step": 1},
    {"name": "inc", "type": "numeric", "lower": 0, "upper": 1_000_000, "step": 1},
    {"name": "c", "type": "categorical", "levels": ["a", "b", "c"]}]}


def _check_table(method: str, seed: int) -> None:
    from oracledp.synth import TableSynthesizer
    from oracledp.tabular import TableSchema

    options = ({"iterations": 3, "final_iterations": 10} if method == "oracle-query-pgm"
               else {"rounds": 5} if method == "mwem" else None)
    syn = TableSynthesizer(method, epsilon=1.0, random_state=seed, options=options).fit(
        _tiny_frame(seed), TableSchema.from_dict(_TINY_SCHEMA))
    out = syn.sample(20, random_state=seed)
    assert len(out) == 20 and out.notna().all().all()
    assert out["days"].between(0, 365).all() and out["inc"].between(0, 1_000_000).all()


@pytest.mark.parametrize("method", ["oracle-query-pgm", "mwem", "independent"])
def test_tiny_tables_through_table_synthesizer(method: str) -> None:
    """With the numeric columns' private histograms in front of the method (issue 38.5)."""
    for seed in range(15):
        _check_table(method, seed)


@pytest.mark.slow
@pytest.mark.timeout(1200)  # about 120 s each on a quiet 2-core machine; over 300 s at load 4
@pytest.mark.parametrize("method", ["oracle-query-pgm", "mwem", "independent"])
def test_tiny_tables_through_table_synthesizer_many_seeds(method: str) -> None:
    for seed in range(1000):
        _check_table(method, seed)
