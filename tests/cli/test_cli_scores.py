"""``oracledp predict --scores`` and the ROC AUC of ``oracledp evaluate``.

* ``--scores`` adds a column ``score``: the decision function of the 0/1-loss halfspaces
  (opdisc, rspm, gaussian-rspm), the logistic probability of the second label for dpsgd,
  opsamp and accuracy-first; the predictions are the same with and without it;
* ``evaluate`` prints the ROC AUC of the scores beside the accuracy, equal to scikit-learn's
  on the same scores, and a test file of one class gets a plain note, not a traceback.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _small_table import ROWS, SCHEMA
from scipy.special import expit
from sklearn.metrics import roc_auc_score
from typer.testing import CliRunner

from oracledp._cli import app
from oracledp._registry import MODELS
from oracledp.tabular import load_model, read_csv

ENV = {"COLUMNS": "200"}
#: A test file whose labels do not follow one score threshold (the AUC is not 0 or 1 alone).
TEST_ROWS = ["0,a,no", "4,a,yes", "6,b,no", "8,b,yes", "10,a,yes", "2,b,no", "5,b,yes",
             "9,a,no"]
LOGISTIC = ("dpsgd", "opsamp", "accuracy-first")
_OPTIONS = {"accuracy-first": ["--alpha", "1", "--max-epsilon", "400",
                               "--allow-large-epsilon"]}
_AUC_LINE = re.compile(r"^accuracy ([0-9.]+), ROC AUC ([0-9.]+) on 8 records of ", re.M)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> dict[str, Path]:
    """Every model fitted once on the small table; the test files beside them."""
    tmp = tmp_path_factory.mktemp("scores")
    (tmp / "schema.json").write_text(json.dumps(SCHEMA))
    (tmp / "train.csv").write_text("x,c,y\n" + "\n".join(ROWS * 4) + "\n")
    (tmp / "test.csv").write_text("x,c,y\n" + "\n".join(TEST_ROWS) + "\n")
    (tmp / "one.csv").write_text("x,c,y\n" + "\n".join(r for r in TEST_ROWS
                                                        if r.endswith(",no")) + "\n")
    paths = {"tmp": tmp}
    for model in MODELS:
        res = CliRunner().invoke(app, [
            "fit", str(tmp / "train.csv"), "--schema", str(tmp / "schema.json"), "--model",
            model, *_OPTIONS.get(model, ["--epsilon", "1"]), "--seed", "0",
            "--out", str(tmp / model)], env=ENV)
        assert res.exit_code == 0, res.output
        paths[model] = tmp / model
    return paths


def _decision(model_dir: Path, data: Path) -> tuple[np.ndarray, np.ndarray]:
    """The saved model's decision function on DATA and DATA's labels (by the library)."""
    saved = load_model(model_dir)
    df = read_csv(data, saved.schema, with_target=True)
    return saved.decision_function(df), saved.schema.labels_of(df)


@pytest.mark.parametrize("model", MODELS)
def test_predict_scores_adds_the_score_column(fitted, model):
    data = fitted["tmp"] / "test.csv"
    plain = CliRunner().invoke(app, ["predict", str(fitted[model]), str(data)], env=ENV)
    res = CliRunner().invoke(app, ["predict", str(fitted[model]), str(data), "--scores"],
                             env=ENV)
    assert plain.exit_code == 0 and res.exit_code == 0, res.output
    assert plain.stdout.splitlines()[0] == "prediction"
    out = pd.read_csv(io.StringIO(res.stdout), dtype={"prediction": str})
    assert list(out.columns) == ["prediction", "score"] and len(out) == len(TEST_ROWS)
    assert out["prediction"].tolist() == plain.stdout.splitlines()[1:]  # unchanged
    decision, _ = _decision(fitted[model], data)
    if model in LOGISTIC:  # the probability of "yes", the second label
        np.testing.assert_allclose(out["score"], expit(decision), rtol=1e-12)
        assert ((out["score"] > 0.5) <= (out["prediction"] == "yes")).all()
    else:
        np.testing.assert_allclose(out["score"], decision, rtol=1e-12)
    np.testing.assert_array_equal(out["prediction"] == "yes", decision > 0)


@pytest.mark.parametrize("model", MODELS)
def test_evaluate_prints_the_roc_auc_of_the_scores(fitted, model):
    data = fitted["tmp"] / "test.csv"
    res = CliRunner().invoke(app, ["evaluate", str(fitted[model]), str(data)], env=ENV)
    assert res.exit_code == 0, res.output
    found = _AUC_LINE.search(res.stdout)
    assert found, res.stdout
    decision, y = _decision(fitted[model], data)
    assert found[2] == f"{roc_auc_score(y == 'yes', decision):.4f}"
    assert found[1] == f"{np.mean((decision > 0) == (y == 'yes')):.4f}"
    scores = CliRunner().invoke(app, ["predict", str(fitted[model]), str(data), "--scores"],
                                env=ENV)
    column = pd.read_csv(io.StringIO(scores.stdout))["score"].to_numpy()
    if len(np.unique(column)) == len(np.unique(decision)):  # no probability rounded to 1
        assert found[2] == f"{roc_auc_score(y == 'yes', column):.4f}"  # same ranking
    assert "the accuracy and the AUC are computed exactly" in " ".join(res.stdout.split())
    majority = max(np.mean(y == "yes"), np.mean(y != "yes"))  # beside the accuracy
    assert f"majority label rate: {majority:.4f}" in res.stdout


def test_evaluate_on_one_class_says_the_auc_is_not_defined(fitted):
    res = CliRunner().invoke(app, ["evaluate", str(fitted["rspm"]),
                                   str(fitted["tmp"] / "one.csv")], env=ENV)
    assert res.exit_code == 0 and res.exception is None, res.output
    out = " ".join(res.stdout.split())
    assert re.search(r"^accuracy [0-9.]+ on 4 records of ", res.stdout, re.M), res.stdout
    assert "ROC AUC: not defined, every record of" in out and "same label" in out
    assert "ROC AUC 0" not in out and "ROC AUC 1" not in out
    assert "the accuracy is computed exactly" in out
    assert "majority label rate: 1.0000" in out
    assert res.stderr == ""
