"""A wide grid's values near its lower bound are fine bins of their own
(:func:`~oracledp.synth._numeric.low_points`): counts and amounts declared with generous
public bounds keep their own resolution (a new user's visits declared 0-10,000, 72 % zeros
and 23 % ones; amounts declared 0-1,000,000 with data 3-421)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import oracledp.synth._numeric as nm
from oracledp.synth import TableSynthesizer
from oracledp.synth._numeric import FINE_BINS, low_points
from oracledp.tabular import TableSchema


@pytest.mark.parametrize("K", [1024, 1500, 10_000, 99_999, 1_000_000, 10**9])
def test_low_points_spacing(K: int) -> None:
    """Every point below 256, then multiples of 10 below 2,560, of 100 below 25,600, ...,
    each spacing finer than the equal shares ((K + 1) / 1,024 points); within the grid; the
    relative width of a bin (its spacing over its first index) at most 10 / 256."""
    p = low_points(K)
    share = (K + 1) / FINE_BINS
    assert p.size and p[0] == 0 and p[-1] <= K and (np.diff(p) > 0).all()
    assert (p[: min(256, K + 1)] == np.arange(min(256, K + 1))).all()
    gaps = np.diff(p)
    assert gaps.max() < share or gaps.max() == 1
    assert (gaps[255:] / p[255:-1] <= 10 / 256 + 1e-12).all()
    for spacing in (10, 100, 1000):
        inside = p[(p >= 25.6 * spacing) & (p < 256 * spacing)]
        if spacing < share and inside.size:
            assert (inside % spacing == 0).all()
    assert low_points(1023).size == 0  # a grid of at most 1,024 points: every point a bin


def _odd(n: int = 3000, seed: int = 4) -> tuple[pd.DataFrame, TableSchema]:
    rng = np.random.default_rng(seed)
    country = rng.choice(["BE", "DE", "NL"], n)
    visits = rng.choice([0, 1, 2, 3], n, p=[0.72, 0.226, 0.04, 0.014])
    amount = np.clip(np.round(np.exp(rng.normal(3.5 + 0.3 * (country == "DE"), 0.8, n))), 3,
                     421).astype(int)
    churn = np.where(rng.random(n) < 0.2 + 0.2 * (visits == 0), "yes", "no")
    schema = TableSchema.from_dict({
        "target": {"name": "churn", "labels": ["no", "yes"]},
        "columns": [{"name": "country", "type": "categorical", "levels": ["BE", "DE", "NL"]},
                    {"name": "visits", "type": "numeric", "lower": 0, "upper": 10_000,
                     "step": 1},
                    {"name": "amount", "type": "numeric", "lower": 0, "upper": 1_000_000,
                     "step": 1}]})
    return pd.DataFrame({"country": country, "visits": visits, "amount": amount,
                         "churn": churn}), schema


@pytest.mark.parametrize("on", [True, False])
def test_generous_bounds_keep_the_data_s_resolution(monkeypatch: pytest.MonkeyPatch,
                                                    on: bool) -> None:
    """The new user's table at epsilon 1 (seeds 0 and 1): the synthetic amounts' median
    within 25 % of the real one (about 33) and at most 5 % past the real maximum, the share
    of one visit within 0.05 of the real 22.6 %.  With the equal shares alone (977 and 9.8
    points wide) the amounts were drawn evenly over 1-976 (median about 490, 57 % past the
    real maximum) and one visit over 1-9 (3 %)."""
    if not on:
        monkeypatch.setattr(nm, "LOW_POINTS", 0)
    data, schema = _odd()
    med, top = float(data["amount"].median()), int(data["amount"].max())
    ones = float((data["visits"] == 1).mean())
    good = []
    for seed in (0, 1):
        fake = TableSynthesizer("oracle-query-pgm", epsilon=1.0, random_state=seed).fit(
            data, schema).sample(len(data), random_state=seed + 100)
        good.append(abs(float(fake["amount"].median()) - med) <= 0.25 * med
                    and float((fake["amount"] > top).mean()) <= 0.05
                    and abs(float((fake["visits"] == 1).mean()) - ones) <= 0.05)
    assert all(good) == on and (not any(good)) == (not on), good


def test_a_grid_of_many_decimals_far_from_zero() -> None:
    """lower 100,000,000.00005, step 0.0001, 5,001 points (low points of one step each): the
    fine bins' labels are written with 5 decimals, not 4 (4 made two single-point bins the
    same label and the fit refused the grid; before the low points the samples lay half a
    step off it, some below ``lower``); every synthetic value is a grid point."""
    lower, step = 100_000_000.00005, 0.0001
    rng = np.random.default_rng(0)
    k = rng.integers(0, 5001, 600)
    data = pd.DataFrame({"x": np.round(lower + k * step, 5),
                         "y": rng.choice(["a", "b"], 600)})
    schema = TableSchema.from_dict({
        "target": {"name": "y", "labels": ["a", "b"]},
        "columns": [{"name": "x", "type": "numeric", "lower": lower,
                     "upper": round(lower + 5000 * step, 5), "step": step}]})
    x = TableSynthesizer("oracle-query-pgm", epsilon=1.0, random_state=0).fit(
        data, schema).sample(600, random_state=1)["x"].to_numpy(dtype=float)
    idx = (x - lower) / step
    assert (x >= lower).all() and np.abs(idx - np.round(idx)).max() < 1e-3
