"""evaluate_synthetic at the data's resolution reads both tables through the schema, as fit
does, and counts only the bins a value allowed by the schema can fall in.

* a categorical cell "01" is the declared level "1" (number-like levels compare by value):
  a synthetic table that writes "1" where the real one wrote "01" scores 0, over the 2
  declared levels, not over the 3 texts found in the files;
* missing cells are read as declared (a bin of their own with "missing": "level", the fill
  value with {"fill": ...}), the target by its labels;
* "over N bins": no missing bin unless the schema declares one, no bin above a cut at the
  declared upper bound (5 values 0..4 are 5 bins, not 7).
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


def _codes_table(n: int = 1000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"code": rng.choice(["01", "1", "10"], n),
                         "x": rng.integers(0, 5, n).astype(str),
                         "y": rng.choice(["no", "yes"], n)})


CODES = TableSchema.from_dict({
    "target": {"name": "y", "labels": ["no", "yes"]},
    "columns": [{"name": "code", "type": "categorical", "levels": ["1", "10"]},
                {"name": "x", "type": "numeric", "lower": 0, "upper": 4, "step": 1}]})


def test_categorical_bins_are_the_declared_levels_read_by_value() -> None:
    real = _codes_table()
    syn = real.assign(code=real["code"].replace({"01": "1"}))  # as the synthesizer writes it
    r = evaluate_synthetic(syn, real, CODES, classifier=False)["data_resolution"]
    code = r["columns"][0]
    assert code["column"] == "code" and code["bins"] == 2
    assert code["tv"] == 0.0 and r["one_way"]["max_tv"] == 0.0
    assert r["two_way"]["max_tv"] == 0.0


def test_the_command_line_scores_a_rewritten_table_zero(tmp_path: Path) -> None:
    real = _codes_table()
    real.to_csv(tmp_path / "real.csv", index=False)
    real.assign(code=real["code"].replace({"01": "1.0"})).to_csv(tmp_path / "syn.csv",
                                                                  index=False)
    (tmp_path / "s.json").write_text(json.dumps(CODES.to_dict()))
    res = CliRunner().invoke(app, ["synth", "evaluate", str(tmp_path / "syn.csv"),
                                   str(tmp_path / "real.csv"), "--schema",
                                   str(tmp_path / "s.json")], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "code: 1-way TV 0.0000 over 2 bins" in res.stdout


def test_missing_cells_are_read_as_declared() -> None:
    schema = TableSchema.from_dict({
        "target": {"name": "y", "labels": ["0", "1"]},
        "columns": [{"name": "c", "type": "categorical", "levels": ["a", "b"],
                     "missing": "level"},
                    {"name": "f", "type": "categorical", "levels": ["a", "b"],
                     "missing": {"fill": "a"}},
                    {"name": "v", "type": "numeric", "lower": 0, "upper": 10, "step": 1,
                     "missing": {"fill": 3}},
                    {"name": "t", "type": "numeric", "lower": 0, "upper": 10,
                     "bins": [2.5, 5], "missing": {"fill": 4}}]})
    real = pd.DataFrame({"c": ["a", "NA", "b", ""], "f": ["NA", "b", "a", "?"],
                         "v": ["NA", "1", "3", "7"], "t": ["1", "", "4", "9.5"],
                         "y": ["0", "1", "1", "0"]})
    # the same records, written as a synthesizer writes them: fills applied, labels by value
    syn = pd.DataFrame({"c": ["a", "", "b", "NA"], "f": ["a", "b", "a", "a"],
                        "v": ["3", "1", "3.0", "7"], "t": ["1", "4", "4.0", "9.5"],
                        "y": ["0", "1.0", "1", "0"]})
    r = evaluate_synthetic(syn, real, schema, classifier=False)["data_resolution"]
    bins = {c["column"]: c["bins"] for c in r["columns"]}
    assert bins["c"] == 3 and bins["f"] == 2 and bins["y"] == 2
    assert r["one_way"]["max_tv"] == 0.0 and r["two_way"]["max_tv"] == 0.0
    assert all(c.get("w1_over_range", 0.0) == 0.0 for c in r["columns"])


@pytest.mark.parametrize(("lower", "upper", "values", "missing", "want"), [
    (0, 4, range(5), None, 5),            # 5 values, upper bound = the largest: 5 bins
    (2015, 2019, range(2015, 2020), None, 5),
    (0, 4, range(5), "level", 6),         # + the declared missing bin
    (0, 10, range(5), None, 6),           # values up to 10 allowed: a bin above 4
])
def test_bins_counts_only_the_bins_a_value_can_fall_in(lower, upper, values, missing,
                                                       want) -> None:
    col = {"name": "v", "type": "numeric", "lower": lower, "upper": upper, "step": 1}
    if missing:
        col["missing"] = missing
    schema = TableSchema.from_dict({"target": {"name": "y", "labels": ["no", "yes"]},
                                    "columns": [col]})
    rng = np.random.default_rng(0)
    real = pd.DataFrame({"v": rng.choice(list(values), 1000),
                         "y": rng.choice(["no", "yes"], 1000)})
    r = evaluate_synthetic(real, real, schema, classifier=False)["data_resolution"]
    assert r["columns"][0]["bins"] == want and r["one_way"]["max_tv"] == 0.0
