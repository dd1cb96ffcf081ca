"""A user's own table: the intercept feature, missing-value policies, honest inference, the
epsilon cap and Accuracy First's max_epsilon, plain words, `oracledp models`, Ctrl-C."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from oracledp._cli import app
from oracledp._guidance import EPSILON_CAP
from oracledp.erm import NoHaltError
from oracledp.erm import _sensitivity as sens
from oracledp.erm._theory import cap_levels, geometric_grid
from oracledp.estimators import AccuracyFirstLogisticRegression, OPDiscClassifier
from oracledp.privacy._guarantees import GuaranteeKind, PrivacyGuarantee
from oracledp.tabular import Column, SchemaTransformer, TableSchema, UnconfirmedSchemaError

ENV = {"COLUMNS": "200"}


def _threshold_table(n: int = 60) -> tuple[pd.DataFrame, np.ndarray]:
    """One numeric column on [0, 10]; the label is x >= 6, so a halfspace through the origin
    (sign(w x) is the same for every x > 0) cannot be exact."""
    x = np.arange(n) % 11
    return pd.DataFrame({"x": x.astype(str)}), np.where(x >= 6, "yes", "no")


def _write_threshold_table(tmp_path: Path, n: int) -> None:
    """t.csv (the threshold table with its labels) and s.json (its public schema)."""
    df, y = _threshold_table(n)
    df["y"] = y
    df.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "s.json").write_text(TableSchema(
        (Column("x", "numeric", lower=0, upper=10, step=1),), target="y",
        labels=("no", "yes")).to_json())


def test_intercept_feature_lets_opdisc_threshold():
    """Exact (brute-force) OPDisc at a large epsilon: with the public intercept feature the
    threshold is learnt exactly (w = (2, -1): 2 x/10 - 1 > 0 iff x >= 6); without it, it
    is not."""
    df, y = _threshold_table()
    acc = {}
    for intercept in (True, False):
        schema = TableSchema((Column("x", "numeric", lower=0, upper=10, step=1),),
                             target="y", labels=("no", "yes"), intercept=intercept)
        X = SchemaTransformer(schema).fit_transform(df)
        clf = OPDiscClassifier(200.0, delta=1e-3, bound=2, radius=3,
                               schema=schema.feature_schema(), classes=["no", "yes"],
                               oracle="brute", random_state=0).fit(X, y)
        acc[intercept] = float((clf.predict(X) == y).mean())
        assert clf.n_features_in_ == 1 + intercept
        assert clf.calibration_.d == 1 + intercept  # W's dimension and sigma include it
    assert acc[True] == 1.0 and acc[False] < 1.0


def test_missing_value_policies_encode_publicly():
    df = pd.DataFrame({"n": ["1", "", "NA", "4"], "c": ["a", "?", "b", "NULL"]})
    level = TableSchema((Column("n", "numeric", lower=0, upper=4, step=1, missing="level"),
                         Column("c", "categorical", levels=("a", "b"), missing="level")),
                        target="y", labels=("0", "1"), intercept=False)
    assert level.feature_names == ["n", "n=(missing)", "c=a", "c=b", "c=(missing)"]
    np.testing.assert_array_equal(level.encode(df), [[0.25, 0, 1, 0, 0], [0, 1, 0, 0, 1],
                                                     [0, 1, 0, 1, 0], [1, 0, 0, 0, 1]])
    assert level.norm_bounds()["l1"] == 2  # one value or indicator per column
    fill = TableSchema((Column("n", "numeric", lower=0, upper=4, step=1, fill=2,
                               missing="fill"),
                        Column("c", "categorical", levels=("a", "b"), missing="fill",
                               fill="b")), target="y", labels=("0", "1"), intercept=False)
    np.testing.assert_array_equal(fill.encode(df), [[0.25, 1, 0], [0.5, 0, 1], [0.5, 0, 1],
                                                    [1, 0, 1]])
    # a declared level is a level even if it looks like a missing-value token
    q = TableSchema((Column("c", "categorical", levels=("a", "?")),), target="y",
                    labels=("0", "1"), intercept=False)
    np.testing.assert_array_equal(q.encode(pd.DataFrame({"c": ["?", "a"]})), [[0, 1], [1, 0]])
    for bad in ({"missing": "fill", "fill": "z"}, {"missing": "fill", "fill": 9},
                {"missing": "maybe"}, {"fill": 1}):
        kind = {"levels": ("a", "b")} if isinstance(bad.get("fill"), str) else {
            "lower": 0, "upper": 4, "step": 1}
        with pytest.raises(ValueError):
            Column("c", "categorical" if "levels" in kind else "numeric", **kind, **bad)
    round_trip = TableSchema.from_dict(json.loads(fill.to_json()))
    assert round_trip == fill and round_trip.columns[1].fill == "b"


def test_inference_is_honest_about_what_it_cannot_type(tmp_path):
    """Numbers with 'NA' get a missing level; numbers mixed with other text, an all-missing
    column and a high-cardinality text column become "unresolved" entries that fit refuses;
    every such decision is a warning on stderr naming the column (never a value)."""
    n = 40
    rng = np.random.default_rng(0)
    df = pd.DataFrame({
        "dose": [f"{v:.3f}" for v in rng.uniform(0, 0.9, n)],
        "count": [str(v) for v in rng.integers(0, 9, n)],
        "mixed": ["3", "unknown", *[str(i) for i in range(n - 2)]],
        "empty": [""] * n,
        "id": [f"p{i:03d}" for i in range(n)],
        "y": ["a", "b"] * (n // 2),
    })
    df.loc[3, "count"] = "NA"
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    res = CliRunner().invoke(app, ["schema", "infer", str(path), "--target", "y",
                                   "--max-levels", "10"], env=ENV)
    assert res.exit_code == 0, res.output
    proposed = json.loads(res.stdout)
    cols = {c["name"]: c for c in proposed["columns"]}
    # whole numbers: codes, proposed numeric on their integer grid (with the missing level)
    assert cols["count"]["missing"] == "level" and cols["count"]["type"] == "numeric"
    assert cols["count"]["step"] == 1 and cols["count"]["upper"] <= 8
    assert {cols[k]["type"] for k in ("mixed", "empty", "id")} == {"unresolved"}
    # the 3-decimal column gets a grid that does not round it (0.001 over [min, max])
    assert cols["dose"]["step"] == 0.001
    for name in ("count", "mixed", "empty", "id"):
        assert f"column '{name}'" in res.stderr
    assert "unknown" not in res.stderr and "p001" not in res.stderr
    assert "(intercept)" in res.stderr  # says the intercept feature is on
    # fit refuses the unresolved entries even after every from_data flag is removed
    schema = TableSchema.from_dict(proposed).confirmed()
    with pytest.raises(UnconfirmedSchemaError, match="mixed, empty, id"):
        schema.check_confirmed()
    sch = tmp_path / "s.json"
    sch.write_text(schema.to_json())
    res = CliRunner().invoke(app, ["fit", str(path), "--schema", str(sch), "--model", "dpsgd",
                                   "--epsilon", "1", "--out", str(tmp_path / "m")], env=ENV)
    assert res.exit_code == 2 and "unresolved" in res.stderr
    # deleting the entries: the columns are then extra, refused unless --ignore-extra
    kept = {**proposed, "columns": [c for c in proposed["columns"]
                                    if c["type"] != "unresolved"]}
    sch.write_text(TableSchema.from_dict(kept).confirmed().to_json())
    base = ["fit", str(path), "--schema", str(sch), "--model", "dpsgd", "--epsilon", "1",
            "--out", str(tmp_path / "m")]
    res = CliRunner().invoke(app, base, env=ENV)
    assert res.exit_code == 2 and "'mixed', 'empty', 'id'" in res.stderr
    assert "--ignore-extra" in res.stderr and not (tmp_path / "m").exists()
    res = CliRunner().invoke(app, [*base, "--ignore-extra"], env=ENV)
    assert res.exit_code == 0, res.output


def test_inference_says_which_columns_it_rounds():
    df = pd.DataFrame({"v": [f"{x:.3f}" for x in np.linspace(0, 50, 30)],
                       "y": ["a", "b"] * 15})
    schema, warns = TableSchema.infer(df, target="y")
    (col,) = schema.columns
    assert col.step > 0.001 and (col.upper - col.lower) / col.step <= 1000
    assert any("'v'" in w and "ROUNDS" in w for w in warns)


def test_fit_refuses_epsilon_above_the_cap_before_reading_data(tmp_path):
    missing = tmp_path / "nowhere.csv"  # never read: the refusal comes first
    sch = tmp_path / "s.json"
    sch.write_text("{}")
    res = CliRunner().invoke(app, ["fit", str(missing), "--schema", str(sch), "--model",
                                   "dpsgd", "--epsilon", str(EPSILON_CAP * 1.5), "--out",
                                   str(tmp_path / "m")], env=ENV)
    assert res.exit_code == 2 and "--allow-large-epsilon" in res.stderr
    assert f"cap of {EPSILON_CAP:g}" in res.stderr
    res = CliRunner().invoke(app, ["fit", str(missing), "--schema", str(sch), "--model",
                                   "accuracy-first", "--max-epsilon", "50", "--out",
                                   str(tmp_path / "m")], env=ENV)
    assert res.exit_code == 2 and "--max-epsilon 50 is above the cap" in res.stderr
    for bad in ("0", "-1", "nan", "inf"):
        res = CliRunner().invoke(app, ["fit", str(missing), "--schema", str(sch), "--model",
                                       "dpsgd", "--epsilon", bad, "--out", str(tmp_path / "m")],
                                 env=ENV)
        assert res.exit_code == 2 and "--epsilon must be" in res.stderr, bad


def test_fit_with_allow_large_epsilon_and_plain_words(tmp_path):
    _write_threshold_table(tmp_path, 200)
    res = CliRunner().invoke(app, ["fit", str(tmp_path / "t.csv"), "--schema",
                                   str(tmp_path / "s.json"), "--model", "dpsgd", "--epsilon",
                                   "12", "--allow-large-epsilon", "--seed", "0", "--out",
                                   str(tmp_path / "m")], env=ENV)
    assert res.exit_code == 0, res.output
    assert "in plain words" in res.stdout and "162,755" in res.stdout  # e^12


def test_cap_levels_is_the_longest_prefix_within_the_cap():
    grid = geometric_grid(1e-3, 5.0, 200)
    delta, alpha, gamma = sens.logistic_excess_risk_sensitivity(20_000, 0.005), 0.1, 0.1

    def worst(levels):
        return sens.iat_epsilon(delta, alpha, gamma, levels.size) + float(levels[-1])

    for cap in (3.0, 4.0, 6.0, 100.0):
        cut = cap_levels(grid, cap, worst)
        assert worst(cut) <= cap
        assert cut.size == grid.size or worst(grid[:cut.size + 1]) > cap
        np.testing.assert_array_equal(cut, grid[:cut.size])
    with pytest.raises(ValueError, match=r"max_epsilon = 0\.5 is below"):
        cap_levels(grid, 0.5, worst)
    assert cap_levels(grid, None, worst) is grid


@pytest.mark.parametrize("method", ["outputnr", "doubling"])
def test_accuracy_first_never_reports_a_loss_above_max_epsilon(method):
    rng = np.random.default_rng(1)
    n, p = 4000, 4
    X = rng.uniform(-1, 1, (n, p)) / p
    y = np.where(X @ np.array([1.0, -2.0, 0.5, 1.0]) + 0.05 * rng.standard_normal(n) > 0, 1, -1)
    for cap in (5.0, 8.0):
        for seed in range(3):
            est = AccuracyFirstLogisticRegression(0.3, method=method, max_epsilon=cap,
                                                  random_state=seed)
            try:
                est.fit(X, y)
            except NoHaltError as exc:  # a refusal: its own loss is within the cap too
                assert exc.epsilon_refusal <= cap, exc
                continue
            assert est.guarantee_.epsilon <= cap and est.eps_grid_[-1] < cap
    with pytest.raises(ValueError, match=r"max_epsilon = 0\.5 is below"):
        AccuracyFirstLogisticRegression(0.05, method=method, max_epsilon=0.5,
                                        random_state=0).fit(X, y)


def test_accuracy_first_cli_refuses_rather_than_exceed_the_cap(tmp_path):
    _write_threshold_table(tmp_path, 300)
    res = CliRunner().invoke(app, ["fit", str(tmp_path / "t.csv"), "--schema",
                                   str(tmp_path / "s.json"), "--model", "accuracy-first",
                                   "--out", str(tmp_path / "m")], env=ENV)
    assert res.exit_code == 2 and "--max-epsilon 10 is below" in res.stderr
    assert not (tmp_path / "m").exists()


def test_plain_words_for_each_kind():
    pure = PrivacyGuarantee(1.0, 0.0, GuaranteeKind.PURE, True, "s")
    assert "factor of 2.72" in pure.in_plain_words() and "delta" not in pure.in_plain_words()
    assert "certified" in pure.in_plain_words()
    approx = PrivacyGuarantee(0.5, 1e-6, GuaranteeKind.APPROXIMATE, False, "s")
    assert "delta = 1e-06" in approx.in_plain_words()
    ex = PrivacyGuarantee(2.0, 0.0, GuaranteeKind.EX_POST, False, "s")
    assert "ex-post" in ex.in_plain_words()
    assert "No privacy promise" in pure.not_holding("test").in_plain_words()
    assert "unbounded" in PrivacyGuarantee(math.inf, 0.0, GuaranteeKind.EX_POST, False,
                                           "s").in_plain_words()


def test_models_command_lists_recommendations():
    res = CliRunner().invoke(app, ["models"], env=ENV)
    assert res.exit_code == 0 and "opdisc" in res.stdout and "dpsgd" in res.stdout
    assert "opsamp" not in res.stdout
    res = CliRunner().invoke(app, ["models", "--all"], env=ENV)
    assert res.exit_code == 0 and "opsamp" in res.stdout and "not recommended" in res.stdout


#: The child restores Python's default SIGINT handler: a process started in the background by
#: a non-interactive shell (e.g. a CI runner) inherits SIGINT ignored (POSIX), and Python then
#: keeps it ignored; a command typed at a terminal has the default handler.
_SLOW_FIT = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from oracledp.estimators import OPDiscClassifier
def slow(est, X, y, sample_weight=None):
    print("FITTING", flush=True)
    time.sleep(60)
OPDiscClassifier.fit = slow
from oracledp._cli import app
sys.argv = ["oracledp", *sys.argv[1:]]
app()
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_stops_the_fit_cleanly_and_writes_nothing(tmp_path):
    _write_threshold_table(tmp_path, 100)
    out = tmp_path / "m"
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_FIT, "fit", str(tmp_path / "t.csv"), "--schema",
         str(tmp_path / "s.json"), "--model", "opdisc", "--epsilon", "1", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "COLUMNS": "200"})
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "FITTING"
    time.sleep(0.3)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 5  # not after the 60 s "solver" run
    assert proc.returncode == 130, err
    assert "interrupted" in err and "nothing was released or written" in err
    assert "Traceback" not in err
    assert not (out / "model.json").exists() and not (out / "coefficients.png").exists()


def test_saved_model_carries_the_intercept_feature(tmp_path):
    _write_threshold_table(tmp_path, 200)
    path = tmp_path / "t.csv"
    res = CliRunner().invoke(app, ["fit", str(path), "--schema", str(tmp_path / "s.json"),
                                   "--model", "opdisc", "--epsilon", "2", "--seed", "0",
                                   "--out", str(tmp_path / "m")], env=ENV)
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "m" / "model.json").read_text())
    assert doc["feature_names"] == ["x", "(intercept)"] and doc["schema"]["intercept"] is True
    assert doc["format_version"] == 2
