"""evaluate_synthetic at the real data's own resolution: it cannot hide a distorted column.

* exact values on hand-built tables: octile cut points of the real column (tied cuts merge),
  1-way and 2-way TV at those bins, Wasserstein-1 over the declared range, missing cells as
  a bin of their own;
* the two references: exact independent marginals (checked against a hand computation) and
  a resample of the real rows;
* the planted damage: a column that is 0 in 91 % of the rows, synthesized uniformly inside
  the synthesizer's first 37-day bin, looks fine on those bins (TV below 0.08) and is caught
  here (TV above 0.85, worse than the independent-marginals reference);
* the command line prints the same numbers, and each numeric column's quantiles and the
  share of the real values' most common one (the planted column's zeros: 91 % real, about
  3 % synthetic).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from oracledp._cli import app
from oracledp.synth import evaluate_synthetic
from oracledp.tabular import TableSchema

SCHEMA = TableSchema.from_dict({
    "target": {"name": "y", "labels": ["no", "yes"]},
    "columns": [{"name": "days", "type": "numeric", "lower": 0, "upper": 365, "step": 1},
                {"name": "sex", "type": "categorical", "levels": ["f", "m"]}]})


def _hospital(n: int = 4000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    days = np.where(rng.random(n) < 0.91, 0, rng.integers(1, 366, n))
    y = np.where(days > 0, "yes", rng.choice(["no", "yes"], n, p=[0.8, 0.2]))
    return pd.DataFrame({"days": days, "sex": rng.choice(["f", "m"], n), "y": y})


def test_exact_values_on_a_hand_built_table() -> None:
    real = pd.DataFrame({"days": [0] * 6 + [10, 20], "sex": ["f", "m"] * 4,
                         "y": ["no"] * 6 + ["yes"] * 2})
    # octiles of real days: 0 (x5), 0, 10 -> cut points {0, 10}: bins (-inf,0], (0,10], (10,inf)
    # (no missing bin: the schema declares no missing cells)
    syn = pd.DataFrame({"days": [0] * 4 + [5, 5, 30, 30], "sex": ["f"] * 8,
                        "y": ["no"] * 4 + ["yes"] * 4})
    r = evaluate_synthetic(syn, real, SCHEMA, classifier=False)["data_resolution"]
    days, sex, y = r["columns"]
    assert (days["column"], days["bins"], sex["bins"], y["bins"]) == ("days", 3, 2, 2)
    # real (6, 1, 1)/8, synthetic (4, 2, 2)/8: TV = (2 + 1 + 1) / 16
    assert days["tv"] == pytest.approx(0.25)
    assert sex["tv"] == pytest.approx(0.5) and y["tv"] == pytest.approx(0.25)
    # W1 between the empirical laws, divided by the range 365
    w1 = (np.sort([0] * 4 + [5, 5, 30, 30]) - np.sort([0] * 6 + [10, 20])).__abs__().mean()
    assert days["w1_over_range"] == pytest.approx(w1 / 365)
    # the means of the values: a tail moved toward a bound shows here (30 against 20)
    assert (days["mean_real"], days["mean_synthetic"]) == (pytest.approx(30 / 8),
                                                           pytest.approx(70 / 8))
    assert "mean_real" not in sex and "mean_real" not in y
    # the ranges, and the synthetic values past the real max (the two 30s: 2 of 8)
    assert (days["range_real"], days["range_synthetic"]) == ((0.0, 20.0), (0.0, 30.0))
    assert days["outside_real_range"] == pytest.approx(2 / 8)
    assert "range_real" not in sex and "outside_real_range" not in y
    # the quantiles 1/5/50/95/99 % of the values (inverted cdf: the smallest value whose
    # share at or below reaches q), and the real values' most common one (0: 6 of 8 real,
    # 4 of 8 synthetic)
    assert days["quantiles"] == [0.01, 0.05, 0.5, 0.95, 0.99]
    assert days["quantiles_real"] == [0.0, 0.0, 0.0, 20.0, 20.0]
    assert days["quantiles_synthetic"] == [0.0, 0.0, 0.0, 30.0, 30.0]
    assert (days["most_common_real"], days["most_common_share_real"],
            days["most_common_share_synthetic"]) == (0.0, 0.75, 0.5)
    assert "quantiles_real" not in sex and "most_common_real" not in y
    assert r["one_way"] == {"mean_tv": pytest.approx(1 / 3), "max_tv": pytest.approx(0.5),
                            "worst_column": "sex"}
    # (days, sex): real cells (0,f)3 (0,m)3 (1,f)0 (1,m)1 (2,f)1 ... vs synthetic all f
    real_ij = {(0, "f"): 3, (0, "m"): 3, (1, "f"): 1, (2, "m"): 1}
    syn_ij = {(0, "f"): 4, (1, "f"): 2, (2, "f"): 2}
    keys = set(real_ij) | set(syn_ij)
    tv_ds = 0.5 * sum(abs(real_ij.get(k, 0) - syn_ij.get(k, 0)) for k in keys) / 8
    assert r["two_way"]["max_tv"] >= tv_ds and r["two_way"]["sets"] == 3


def test_quantiles_and_the_most_common_value_by_hand() -> None:
    """Missing cells are left out of the quantiles and the shares; the most common value is
    the real table's (here not the synthetic table's), the smallest on a tie; an interval
    column (no step) has quantiles but no most common value (its values are drawn)."""
    schema = TableSchema.from_dict({
        "target": {"name": "y", "labels": ["no", "yes"]},
        "columns": [{"name": "x", "type": "numeric", "lower": 0, "upper": 10, "step": 1,
                     "missing": "level"},
                    {"name": "t", "type": "numeric", "lower": 0, "upper": 1,
                     "bins": [0.5]}]})
    real = pd.DataFrame({"x": [2.0, 2.0, 5.0, 5.0, 7.0, np.nan, np.nan, np.nan],
                         "t": [0.1, 0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8], "y": ["no"] * 8})
    syn = pd.DataFrame({"x": [7.0, 7.0, 7.0, 2.0, np.nan, np.nan, np.nan, np.nan],
                        "t": [0.15] * 8, "y": ["no"] * 8})
    x, t = evaluate_synthetic(syn, real, schema, classifier=False)["data_resolution"][
        "columns"][:2]
    # 2 and 5 tie (2 each of the 5 present): the smallest, 2; 1 of the 4 synthetic present
    assert (x["most_common_real"], x["most_common_share_real"],
            x["most_common_share_synthetic"]) == (2.0, 0.4, 0.25)
    assert x["quantiles_real"] == [2.0, 2.0, 5.0, 7.0, 7.0]
    assert x["quantiles_synthetic"] == [2.0, 2.0, 7.0, 7.0, 7.0]
    assert t["quantiles_synthetic"] == [0.15] * 5 and "most_common_real" not in t


def test_the_independent_reference_is_exact() -> None:
    real = pd.DataFrame({"days": [0, 0, 0, 100], "sex": ["f", "f", "m", "m"],
                         "y": ["no", "no", "no", "yes"]})
    r = evaluate_synthetic(real, real, SCHEMA, classifier=False)["data_resolution"]
    assert r["one_way"]["max_tv"] == 0.0 and r["two_way"]["max_tv"] == 0.0
    assert r["columns"][0]["w1_over_range"] == 0.0
    ind = r["references"]["independent_marginals"]["two_way"]
    # (days, sex): joint (0f .5, 0m .25, 1m .25); product (.75*.5, .75*.5, .25*.5, .25*.5)
    tv_ds = 0.5 * (abs(0.5 - 0.375) + abs(0.25 - 0.375) + abs(0 - 0.125) + abs(0.25 - 0.125))
    # (days, y): y = yes exactly when days > 0: joint (.75, 0, 0, .25), product .75/.25 x .75/.25
    tv_dy = 0.5 * (abs(0.75 - 0.5625) + 2 * 0.1875 + abs(0.25 - 0.0625))
    # (sex, y): joint f-no .5, m-no .25, m-yes .25; product .5*.75, .5*.25, .5*.75, .5*.25
    tv_sy = 0.5 * (abs(0.5 - 0.375) + abs(0 - 0.125) + abs(0.25 - 0.375) + abs(0.25 - 0.125))
    assert ind["mean_tv"] == pytest.approx((tv_ds + tv_dy + tv_sy) / 3)
    assert ind["max_tv"] == pytest.approx(max(tv_ds, tv_dy, tv_sy))


def test_missing_cells_are_a_bin_of_their_own() -> None:
    schema = TableSchema.from_dict({
        "target": {"name": "y", "labels": ["no", "yes"]},
        "columns": [{"name": "x", "type": "numeric", "lower": 0, "upper": 10, "step": 1,
                     "missing": "level"}]})
    real = pd.DataFrame({"x": [1.0, 2.0, np.nan, np.nan], "y": ["no", "yes", "no", "yes"]})
    syn = pd.DataFrame({"x": [1.0, 2.0, 3.0, 3.0], "y": ["no", "yes", "no", "yes"]})
    col = evaluate_synthetic(syn, real, schema, classifier=False)["data_resolution"][
        "columns"][0]
    assert col["tv"] == pytest.approx(0.5)  # the real table's missing half is gone


def test_a_distortion_the_synthesizers_bins_hide_is_caught() -> None:
    real = _hospital()
    rng = np.random.default_rng(1)
    syn = real.copy()
    syn["days"] = rng.integers(0, 37, len(real))  # uniform inside the first of 10 bins
    res = evaluate_synthetic(syn, real, SCHEMA, bins=10, classifier=False)
    assert res["marginals"][1]["max_tv"] < 0.08  # the synthesizer's own 10 bins: fine
    r = res["data_resolution"]
    assert r["columns"][0]["tv"] > 0.85 and r["one_way"]["worst_column"] == "days"
    ind = r["references"]["independent_marginals"]["two_way"]["mean_tv"]
    boot = r["references"]["resample_of_real_rows"]["two_way"]["mean_tv"]
    assert boot < ind < r["two_way"]["mean_tv"]


def test_a_resample_of_the_real_rows_scores_near_the_resample_reference() -> None:
    real = _hospital(seed=2)
    syn = real.sample(len(real), replace=True, random_state=3).reset_index(drop=True)
    r = evaluate_synthetic(syn, real, SCHEMA, classifier=False)["data_resolution"]
    boot = r["references"]["resample_of_real_rows"]
    ind = r["references"]["independent_marginals"]
    # both are resamples of n = 4,000 rows: 2-way TV over <= 8 cells is O(sqrt(cells / n))
    assert r["two_way"]["mean_tv"] < 0.05 and boot["two_way"]["mean_tv"] < 0.05
    assert r["two_way"]["mean_tv"] < ind["two_way"]["mean_tv"]


@pytest.mark.parametrize("q", [1, 101, 2.5, True])
def test_quantiles_are_checked(q) -> None:
    real = _hospital(n=50)
    with pytest.raises(ValueError, match="quantiles must be an integer in"):
        evaluate_synthetic(real, real, SCHEMA, classifier=False, quantiles=q)


def test_the_command_line_prints_the_data_resolution(tmp_path: Path) -> None:
    real = _hospital(n=1000)
    syn = real.copy()
    syn["days"] = np.random.default_rng(1).integers(0, 37, len(real))
    real.to_csv(tmp_path / "real.csv", index=False)
    syn.to_csv(tmp_path / "syn.csv", index=False)
    (tmp_path / "s.json").write_text(json.dumps(SCHEMA.to_dict()))
    res = CliRunner().invoke(app, ["synth", "evaluate", str(tmp_path / "syn.csv"),
                                   str(tmp_path / "real.csv"), "--schema",
                                   str(tmp_path / "s.json")], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    want = evaluate_synthetic(syn, real, SCHEMA)["data_resolution"]
    assert "at the real data's resolution" in res.stdout
    line = next(ln for ln in res.stdout.splitlines() if ln.strip().startswith("2-way TV, mean"))
    got = [float(v) for v in line.split()[3:6]]
    assert got == pytest.approx([want["two_way"]["mean_tv"],
                                 want["references"]["independent_marginals"]["two_way"][
                                     "mean_tv"],
                                 want["references"]["resample_of_real_rows"]["two_way"][
                                     "mean_tv"]], abs=5e-5)
    assert f"days: 1-way TV {want['columns'][0]['tv']:.4f}" in res.stdout
    days = want["columns"][0]
    quant = next(ln for ln in res.stdout.splitlines() if ln.strip().startswith("quantiles"))
    assert quant.strip() == (
        "quantiles 1/5/50/95/99 %: "
        + ", ".join(f"{v:.6g}" for v in days["quantiles_synthetic"]) + " (real "
        + ", ".join(f"{v:.6g}" for v in days["quantiles_real"]) + "); the real values' most "
        f"common, 0: {100 * days['most_common_share_synthetic']:.2f} % of the synthetic "
        f"values (real {100 * days['most_common_share_real']:.2f} %)")
    assert days["most_common_share_real"] > 0.85 > 0.05 > days["most_common_share_synthetic"]


def test_pairs_counted_one_by_one_a_mean_cannot_hide_a_dependent_pair() -> None:
    """A table that keeps the one dependent pair (days, y) exactly and breaks nine pairs of
    independent columns has a mean 2-way TV above independent marginals', yet it is closer
    than them on that dependent pair: the pair counts say so.  A table of one repeated row
    is closer on no dependent pair."""
    rng = np.random.default_rng(4)
    real = _hospital(seed=4)
    cats = [f"c{i}" for i in range(4)]
    for c in cats:
        real[c] = rng.choice(["a", "b"], len(real))
    schema = TableSchema.from_dict({
        "target": {"name": "y", "labels": ["no", "yes"]},
        "columns": [{"name": "days", "type": "numeric", "lower": 0, "upper": 365, "step": 1},
                    {"name": "sex", "type": "categorical", "levels": ["f", "m"]},
                    *({"name": c, "type": "categorical", "levels": ["a", "b"]}
                      for c in cats)]})
    syn = real.copy()
    for c in cats:  # independent columns made to depend on sex and on each other
        syn[c] = np.where(rng.random(len(real)) < 0.8, syn["sex"].map({"f": "a", "m": "b"}),
                          rng.choice(["a", "b"], len(real)))
    r = evaluate_synthetic(syn, real, schema, classifier=False)["data_resolution"]
    two = r["two_way"]
    assert two["mean_tv"] > r["references"]["independent_marginals"]["two_way"]["mean_tv"]
    assert two["dependent_pairs"] == 1  # (days, y), the only dependence of the real table
    assert two["dependent_closer_than_independent"] == 1
    same = evaluate_synthetic(real.iloc[[0] * len(real)], real, schema,
                              classifier=False)["data_resolution"]["two_way"]
    assert same["dependent_pairs"] == 1 and same["dependent_closer_than_independent"] == 0


def test_independent_columns_are_not_called_dependent_whatever_the_synthetic_size() -> None:
    """Six independent columns of 2,000 rows, five draws: 75 pairs, each called dependent
    with probability 0.001 (the chi-square test's level); two or more would happen with
    probability below 0.003.  The call reads the real table only, so a synthetic table of
    50,000 rows changes nothing (a resample-based threshold had called 12 of 15 dependent)."""
    cols = [f"c{i}" for i in range(5)]
    schema = TableSchema.from_dict({
        "target": {"name": "y", "labels": ["no", "yes"]},
        "columns": [{"name": c, "type": "categorical", "levels": ["a", "b", "c"]}
                    for c in cols]})
    called = 0
    for seed in range(5):
        rng = np.random.default_rng(100 + seed)
        real = pd.DataFrame({c: rng.choice(["a", "b", "c"], 2000) for c in cols}
                            | {"y": rng.choice(["no", "yes"], 2000)})
        big = real.sample(50_000, replace=True, random_state=seed).reset_index(drop=True)
        two = evaluate_synthetic(big, real, schema, classifier=False)["data_resolution"][
            "two_way"]
        small = evaluate_synthetic(real.iloc[:500], real, schema, classifier=False)[
            "data_resolution"]["two_way"]
        assert two["sets"] == 15 and two["dependent_pairs"] == small["dependent_pairs"]
        called += two["dependent_pairs"]
    assert called <= 1


def test_a_sparse_pair_is_not_called_dependent() -> None:
    """The chi-square test is used only where its approximation holds (Cochran's rule): 30
    records whose table has expected counts of 0.07 (p = 0.0007) are not called dependent; a
    clear dependence of 100 records is; so is not an independent table of 4,000."""
    from oracledp.synth._table_evaluate import _dependent

    assert not _dependent(np.array([[27, 1, 0], [1, 0, 1]]))
    assert _dependent(np.array([[45, 5], [5, 45]]))
    assert not _dependent(np.array([[1000, 1000], [1000, 1000]]))
    assert not _dependent(np.array([[50, 0], [0, 0]]))  # one row, one column hold records
