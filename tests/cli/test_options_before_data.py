"""Every public option is checked before the data file is opened.

The data path is a tripwire: opening it raises an AssertionError, which no command catches
(it would surface as exit code 1 with that exception), so a refusal with exit code 2 and one
``error:`` line proves that the refusal came before the file was read.
"""

from __future__ import annotations

import builtins
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from oracledp._cli import app
from oracledp.estimators._space_spec import describe_space, parameter_space, with_space_note
from oracledp.learners._opdisc import opdisc_guarantee
from oracledp.learners._opdisc_calibration import calibrate
from oracledp.tabular import Column, TableSchema, save_model

ENV = {"COLUMNS": "200"}
SCHEMA = TableSchema(columns=(Column("x", "numeric", lower=0, upper=10, step=1),
                              Column("c", "categorical", levels=("a", "b"))),
                     target="y", labels=("no", "yes"), intercept=False)


_W = parameter_space("auto", SCHEMA.n_features)  # the W of the fit


class _Fitted:
    coef_ = np.array([[1.0, -1.0, 0.0]])
    intercept_ = 0.0
    classes_ = np.array(["no", "yes"])
    space_ = _W
    guarantee_ = with_space_note(opdisc_guarantee(calibrate(1.0, 1e-6, _W, 1.0)),
                                 describe_space(_W))  # what OPDisc records for W

    def get_params(self, deep: bool = False) -> dict[str, Any]:
        return {"epsilon": 1.0, "delta": None, "oracle": "highs", "random_state": 3}


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    data = tmp_path / "data.csv"
    data.write_text("x,c,y\n1,a,yes\n9,b,no\n")
    schema = tmp_path / "schema.json"
    schema.write_text(SCHEMA.to_json())
    save_model(tmp_path / "m", model_type="opdisc", schema=SCHEMA, estimator=_Fitted())
    held = tmp_path / "held"
    save_model(held, model_type="opdisc", schema=SCHEMA, estimator=_Fitted())
    bad_model = tmp_path / "bad"
    bad_model.mkdir()
    (bad_model / "model.json").write_text(json.dumps({"format": "nope"}))
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    real_open = builtins.open

    def tripwire(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file) == str(data):
            raise AssertionError("the data file was opened")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", tripwire)
    return {"data": str(data), "schema": str(schema), "model": str(tmp_path / "m"),
            "held": str(held), "bad_model": str(bad_model), "file": str(a_file),
            "out": str(tmp_path / "out")}


def _fit(p: dict[str, str], *extra: str, out: str | None = None) -> list[str]:
    return ["fit", p["data"], "--schema", p["schema"], "--out", out or p["out"], *extra]


REFUSED = [  # (arguments built from the fixture's paths, what the message names)
    (lambda p: _fit(p, "--epsilon", "1", "--delta", "0"), "--delta"),
    (lambda p: _fit(p, "--epsilon", "1", "--delta", "1.5"), "--delta"),
    (lambda p: _fit(p, "--epsilon", "1", "--time-limit", "0"), "--time-limit"),
    (lambda p: _fit(p, "--epsilon", "1", "--time-limit", "nan"), "--time-limit"),
    (lambda p: _fit(p, "--epsilon", "1", "--solver", "nope"), "--solver"),
    (lambda p: _fit(p, "--epsilon", "0"), "--epsilon"),
    (lambda p: _fit(p, "--model", "nope", "--epsilon", "1"), "--model"),
    (lambda p: _fit(p, "--epsilon", "1", out=p["file"]), "--out"),
    (lambda p: _fit(p, "--epsilon", "1", out=p["held"]), "--force"),
    (lambda p: _fit(p, "--epsilon", "1", "--sep", ""), "--sep"),
    (lambda p: _fit(p, "--epsilon", "1", "--sep", ";;"), "--sep"),
    (lambda p: ["predict", p["model"], p["data"], "--sep", ""], "--sep"),
    (lambda p: ["predict", p["model"], p["data"], "--sep", '"'], "--sep"),
    (lambda p: ["predict", p["bad_model"], p["data"]], "model"),
    (lambda p: ["predict", p["out"], p["data"]], "model"),
    (lambda p: ["evaluate", p["model"], p["data"], "--sep", "ab"], "--sep"),
    (lambda p: ["evaluate", p["bad_model"], p["data"]], "model"),
    (lambda p: ["schema", "infer", p["data"], "--target", "y", "--sep", ""], "--sep"),
    (lambda p: ["schema", "infer", p["data"], "--target", " "], "--target"),
    (lambda p: ["schema", "infer", p["data"], "--target", "y", "--max-levels", "0"],
     "--max-levels"),
]


@pytest.mark.parametrize(("make", "names"), REFUSED, ids=[
    "fit-delta-0", "fit-delta-big", "fit-time-limit-0", "fit-time-limit-nan",
    "fit-solver", "fit-epsilon-0", "fit-model", "fit-out-a-file",
    "fit-out-holds-a-model", "fit-sep-empty", "fit-sep-two", "predict-sep-empty",
    "predict-sep-quote", "predict-bad-model", "predict-no-model", "evaluate-sep-two",
    "evaluate-bad-model", "infer-sep-empty", "infer-target-blank", "infer-max-levels-0",
])
def test_refused_before_the_data_are_opened(runner, setup, make, names):
    res = runner.invoke(app, make(setup), env=ENV)
    assert res.exit_code == 2, (res.output, res.exception)
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
    assert names in res.stderr and res.stdout == ""


@pytest.mark.parametrize("args", [
    lambda p: ["predict", p["model"], p["data"]],
    lambda p: ["evaluate", p["model"], p["data"], "--sep", "\\t"],
    lambda p: ["schema", "infer", p["data"], "--target", "y"],
    lambda p: _fit(p, "--epsilon", "1", "--model", "dpsgd"),
])
def test_the_tripwire_fires_when_the_options_are_fine(runner, setup, args):
    res = runner.invoke(app, args(setup), env=ENV)
    assert isinstance(res.exception, AssertionError), res.output


@pytest.mark.parametrize("sep", ["", ";;", '"', "\n", 3])
def test_the_readers_check_sep_before_opening(tmp_path, sep):
    from oracledp.tabular import read_aggregated, read_csv

    missing = tmp_path / "missing.csv"  # opening it would raise TableInputError instead
    with pytest.raises((ValueError, TypeError), match="sep"):
        read_csv(missing, sep=sep)
    with pytest.raises((ValueError, TypeError), match="sep"):
        read_aggregated(missing, SCHEMA, sep=sep)


def test_a_tab_may_be_spelled_backslash_t(runner, tmp_path):
    data = tmp_path / "t.tsv"
    data.write_text("x\tc\ty\n1\ta\tyes\n9\tb\tno\n")
    res = runner.invoke(app, ["schema", "infer", str(data), "--target", "y", "--sep", "\\t"],
                        env=ENV)
    assert res.exit_code == 0, res.output
    assert '"x"' in res.stdout and '"c"' in res.stdout
