"""`oracledp fit --space`: the parameter space W of opdisc/rspm on the command line.

A bad value is one ``error: --space: ...`` line, exit 2, before DATA is read (here DATA does
not exist, so a read would end in "cannot read the file"); a good one reaches the estimator,
and the summary and model.json record the fitted W.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oracledp._cli import app
from oracledp.tabular import load_model

ENV = {"COLUMNS": "200"}
SCHEMA = {"target": {"name": "y", "labels": ["no", "yes"]},
          "columns": [{"name": "x", "type": "numeric", "lower": 0, "upper": 10, "step": 1},
                      {"name": "c", "type": "categorical", "levels": ["a", "b", "z"]}]}
ROWS = ["1,a,no", "9,b,yes", "5,a,no", "3,b,yes", "7,b,yes", "2,z,no"]


def _fit(runner, tmp_path: Path, model: str, *extra: str, data: str = "missing.csv"):
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    (tmp_path / "train.csv").write_text("x,c,y\n" + "\n".join(ROWS * 4) + "\n")
    return runner.invoke(app, ["fit", str(tmp_path / data), "--schema",
                               str(tmp_path / "schema.json"), "--model", model, "--epsilon",
                               "1", "--seed", "0", "--out", str(tmp_path / "out"), *extra],
                         env=ENV)


@pytest.mark.parametrize("model", ["opdisc", "rspm"])
@pytest.mark.parametrize("value", ["bogus", "norm2", "norm2=0.5", "norm2=4,bound=0.5",
                                   "norm2=-3", "radius=2", "norm2=4,norm2=4"])
def test_a_bad_space_is_one_line_exit_2_before_data(runner, tmp_path, model, value):
    res = _fit(runner, tmp_path, model, "--space", value)
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
    assert res.stderr.startswith("error: --space: ") and res.stderr.count("\n") == 1
    assert res.stdout == "" and not (tmp_path / "out").exists()


def test_rspm_refuses_a_bound_above_1(runner, tmp_path):
    res = _fit(runner, tmp_path, "rspm", "--space", "norm2=4,bound=2")
    assert res.exit_code == 2 and "bound can only be 1" in res.stderr


@pytest.mark.parametrize("value", ["auto", "paper", "norm2=9", "norm2=2,bound=1"])
def test_a_good_space_gets_as_far_as_reading_data(runner, tmp_path, value):
    res = _fit(runner, tmp_path, "opdisc", "--space", value)
    assert res.exit_code == 2 and "cannot read the file" in res.stderr


@pytest.mark.parametrize(("model", "value", "saved"), [
    ("rspm", "norm2=2", "norm2=2,bound=1"),
    ("opdisc", "norm2=2", "norm2=2,bound=1"),
    # d = 5 features (x, 3 levels, intercept); 24 records at eps 1: OPDisc's noise rule
    # lowers min(d, 4) to 1 (sigma near n)
    ("opdisc", "auto", "norm2=1,bound=1"),
    ("opdisc", "paper", "norm2=5,bound=2"),
])
def test_the_fit_records_its_w(runner, tmp_path, model, value, saved):
    res = _fit(runner, tmp_path, model, "--space", value, "--solver", "brute",
               data="train.csv")
    assert res.exit_code == 0, res.output
    assert "W = {k in Z^5" in res.stdout and "|W| = " in res.stdout
    m = load_model(tmp_path / "out")
    assert m.params["space"] == saved
    assert "parameter space W = {k in Z^5" in m.guarantee.notes
    k = m.coef
    norm2, bound = (float(v.split("=")[1]) for v in saved.split(","))
    assert (k**2).sum() <= norm2 and abs(k).max() <= bound
