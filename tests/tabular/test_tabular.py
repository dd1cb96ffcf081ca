"""Bring your own table: TableSchema, SchemaTransformer, the saved model, the CLI."""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import make_pipeline

import oracledp
from oracledp._cli import app
from oracledp._errors import BoundsViolation, PredictionPolicyWarning
from oracledp.baselines import DPSGDLogisticRegression
from oracledp.datasets import adult_csv, kdd99_csv
from oracledp.estimators import (
    AccuracyFirstLogisticRegression,
    OPDiscClassifier,
    OPSampClassifier,
    RSPMClassifier,
)
from oracledp.tabular import (
    SchemaTransformer,
    TableInputError,
    TableSchema,
    UnconfirmedSchemaError,
    load_model,
    read_csv,
)

ENV = {"COLUMNS": "200"}
RACES = ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"]

#: A public schema for the Adult sample: bounds from the census codebook, never from the data.
PUBLIC = {
    "target": {"name": "income", "labels": ["<=50K", ">50K"]},
    "columns": [
        {"name": "age", "type": "numeric", "lower": 17, "upper": 90, "step": 1},
        {"name": "hours-per-week", "type": "numeric", "lower": 0, "upper": 100, "step": 10},
        {"name": "sex", "type": "categorical", "levels": ["Female", "Male"]},
        {"name": "race", "type": "categorical", "levels": RACES},
    ],
}


@pytest.fixture(scope="module")
def adult_path(tmp_path_factory: pytest.TempPathFactory):
    return adult_csv(tmp_path_factory.mktemp("adult") / "adult.csv", n=300)


@pytest.fixture
def schema() -> TableSchema:
    return TableSchema.from_dict(PUBLIC)


def _small_df() -> pd.DataFrame:
    return pd.DataFrame({
        "age": [17, 90, 40.5, 53],
        "hours-per-week": [0, 100, 44, 35],
        "sex": ["Male", "Female", "Male", "Female"],
        "race": ["White", "Black", "Other", "White"],
        "income": ["<=50K", ">50K", "<=50K", ">50K"],
    })


# --- schema ----------------------------------------------------------------------------------


def test_exported_from_package():
    assert oracledp.TableSchema is TableSchema
    assert oracledp.SchemaTransformer is SchemaTransformer


def test_json_round_trip_and_files(schema, tmp_path):
    assert TableSchema.from_json(schema.to_json()) == schema
    schema.save(tmp_path / "s.json")
    assert TableSchema.load(tmp_path / "s.json") == schema
    d = json.loads(schema.to_json())
    assert d["format"] == "oracledp.table_schema" and d["version"] == 1


@pytest.mark.parametrize("edit, match", [
    (lambda d: d["columns"][0].update(lower=95), "'lower' must be < 'upper'"),
    (lambda d: d["columns"][0].update(type="float"), "type must be"),
    (lambda d: d["columns"][2].update(levels=[]), "non-empty 'levels'"),
    (lambda d: d["columns"][0].pop("step"), "exactly one of 'step'"),
    (lambda d: d["columns"][0].update(bins=[30]), "exactly one of 'step'"),
    (lambda d: d["columns"][0].update(colour="red"), "unknown keys"),
    (lambda d: d["columns"].append(dict(d["columns"][0])), "duplicate column"),
    (lambda d: d["target"].update(labels=["a"]), "two distinct"),
    (lambda d: d["target"].update(name="age"), "also listed"),
    (lambda d: d["columns"][0].update(step=1e-9), "must round to an integer"),
    (lambda d: d["columns"][0].update(step=0.7), "whole number of steps"),
    (lambda d: d.update(row_divisor=0), "row_divisor"),
])
def test_invalid_schemas_are_refused_clearly(edit, match):
    d = json.loads(json.dumps(PUBLIC))
    edit(d)
    with pytest.raises(ValueError, match=match):
        TableSchema.from_dict(d)


def test_a_whole_number_of_steps_up_to_the_floats_precision():
    """100000000.00005 to 100000000.20005 by 0.0001 is 2000 steps, give or take the 1.5e-4
    steps that doubles of that size carry: accepted (it was refused, "got 2000 steps"); half a
    step more is refused, the count said with its decimals."""
    lower, step = 100_000_000.00005, 0.0001

    def schema(upper: float) -> TableSchema:
        return TableSchema.from_dict({"target": {"name": "y", "labels": ["a", "b"]},
                                      "columns": [{"name": "x", "type": "numeric",
                                                   "lower": lower, "upper": upper,
                                                   "step": step}]})

    assert schema(100_000_000.20005).columns[0].K == 2000
    with pytest.raises(ValueError, match=r"whole number of steps \(got 2000\.[45]\d+ steps\)"):
        schema(100_000_000.20010)


def test_invalid_json_text():
    with pytest.raises(ValueError, match="not valid JSON"):
        TableSchema.from_json("{columns: ")


def test_propose_marks_every_entry_from_data(adult_path):
    proposed = TableSchema.propose(adult_path, target="income")
    d = json.loads(proposed.to_json())
    assert d["target"]["from_data"] is True
    assert all(c["from_data"] is True for c in d["columns"])
    assert "not differentially private" in d["note"].lower()
    assert {c["name"] for c in d["columns"]} == {
        "age", "education-num", "hours-per-week", "marital-status", "relationship", "race", "sex"}
    assert set(proposed.unconfirmed()) >= {"age", "sex"}
    assert proposed.confirmed().unconfirmed() == []


def test_fit_refuses_unconfirmed_schema_naming_columns(adult_path):
    proposed = TableSchema.propose(adult_path, target="income")
    df = read_csv(adult_path)
    with pytest.raises(UnconfirmedSchemaError, match=r"age.*sex.*income"):
        SchemaTransformer(proposed).fit(df)
    d = proposed.to_dict()
    for c in d["columns"]:
        if c["name"] != "race":
            c.pop("from_data")
    d["target"].pop("from_data")
    with pytest.raises(UnconfirmedSchemaError, match="race") as err:
        SchemaTransformer(TableSchema.from_dict(d)).fit(df)
    assert "age" not in str(err.value)


# --- encoding -------------------------------------------------------------------------------


def test_encoding_is_exact_and_matches_the_public_feature_schema(schema):
    df = _small_df()
    tr = SchemaTransformer(schema).fit(df)
    X = tr.transform(df)
    names = list(tr.get_feature_names_out())
    assert names == ["age", "hours-per-week", "sex=Female", "sex=Male",
                     *[f"race={r}" for r in RACES], "(intercept)"]
    fs = schema.feature_schema()
    assert fs.d == X.shape[1] and list(fs.names) == names
    assert fs.denominators[:2] == (73, 10) and fs.binary == (False, False) + (True,) * 8
    np.testing.assert_array_equal(X[:, -1], 1.0)  # the public intercept feature
    fs.encode(X)  # on the grid, within the bounds
    # age 40.5 -> k = round(23.5) = 24 (documented rounding), value 24/73 exactly
    assert Fraction(X[2, 0]).limit_denominator(73) == Fraction(24, 73)
    assert X[0, 0] == 0.0 and X[1, 0] == 1.0 and X[1, 1] == 1.0
    np.testing.assert_array_equal(X[:, 2:].sum(axis=1), [3, 3, 3, 3])  # 2 one-hots + 1
    no_icpt = TableSchema.from_dict({**PUBLIC, "intercept": False})
    np.testing.assert_array_equal(no_icpt.encode(df), X[:, :-1])
    assert no_icpt.feature_names == names[:-1] and no_icpt.norm_bounds()["l1"] == 4


def test_thermometer_bins_and_row_scaling():
    s = TableSchema.from_dict({
        "target": {"name": "y", "labels": ["0", "1"]},
        "columns": [{"name": "h", "type": "numeric", "lower": 0, "upper": 99,
                     "bins": [20, 40, 60]},
                    {"name": "c", "type": "categorical", "levels": ["a", "b"]}],
    })
    df = pd.DataFrame({"h": [0, 20, 45, 99], "c": ["a", "b", "a", "b"]})
    X = s.encode(df)
    np.testing.assert_array_equal(X[:, :3], [[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]])
    assert s.feature_names[:3] == ["h>=20", "h>=40", "h>=60"]
    assert s.norm_bounds() == {"l1": 5.0, "l2": 5.0 ** 0.5, "linf": 1.0}  # 3 + 1 + intercept
    scaled = s.scaled_to_l1()
    Xs = scaled.encode(df)
    assert scaled.row_divisor == 5 and np.abs(Xs).sum(axis=1).max() <= 1.0
    np.testing.assert_array_equal(Xs[:, -1], 1 / 5)
    scaled.feature_schema().encode(Xs)


def test_one_error_lists_every_problem_without_values(schema):
    df = _small_df().drop(columns=["race"])
    df.loc[0, "age"] = 123.25  # out of bounds
    df.loc[1, "hours-per-week"] = np.nan
    df.loc[2, "sex"] = "Secret-Level"
    with pytest.raises(BoundsViolation) as err:
        SchemaTransformer(schema).fit(df)
    msg = str(err.value)
    for part in ("missing column(s): 'race'", "'age'", "[17, 90]", "'hours-per-week'",
                 "missing values", "'sex'", "declared levels"):
        assert part in msg
    assert "123.25" not in msg and "Secret-Level" not in msg and "row" not in msg


def test_transform_checks_again(schema):
    """transform (prediction) applies the prediction policy with a warning by default, and
    refuses with on_unknown="refuse"; fit and fit_transform always refuse."""
    bad = _small_df()
    bad.loc[3, "race"] = "Martian"
    bad.loc[2, "age"] = 95
    with pytest.raises(BoundsViolation, match="'race'"):
        SchemaTransformer(schema, on_unknown="refuse").fit(_small_df()).transform(bad)
    tr = SchemaTransformer(schema).fit(_small_df())
    with pytest.warns(PredictionPolicyWarning) as rec:
        X = tr.transform(bad)
    msg = str(rec[0].message)
    assert "race: 1 row(s) with an unknown level" in msg and "age: 1 row(s) clipped" in msg
    assert "Martian" not in msg and "95" not in msg
    assert X[2, 0] == 1.0 and X[3, 4:9].sum() == 0  # clipped to 90; all-zero race one-hot
    for fit in (tr.fit, tr.fit_transform):
        with pytest.raises(BoundsViolation, match="'race'"):
            fit(bad)


@pytest.mark.parametrize("make", [
    lambda s: OPDiscClassifier(1.0, schema=s.feature_schema(), classes=s.labels, random_state=0),
    lambda s: RSPMClassifier(1.0, schema=s.feature_schema(), classes=s.labels, random_state=0),
    lambda s: OPSampClassifier(1.0, feature_bound=s.norm_bounds()["linf"],
                               feature_l1_bound=s.norm_bounds()["l1"], classes=s.labels,
                               random_state=0),
    lambda s: DPSGDLogisticRegression(1.0, classes=s.labels, random_state=0),
    # a small table (ex-post far above 10): a test of the pipeline, not of a release's worth
    lambda s: AccuracyFirstLogisticRegression(0.1, classes=s.labels, random_state=0,
                                              max_epsilon=1e9),
], ids=["opdisc", "rspm", "opsamp", "dpsgd", "accuracy-first"])
def test_pipeline_with_every_classifier(make, schema, adult_path):
    df = read_csv(adult_path, schema, with_target=True)
    y = schema.labels_of(df)
    s = schema
    est = make(s)
    if isinstance(est, AccuracyFirstLogisticRegression):
        s = schema.scaled_to_l1()  # ||x||_1 <= 1 by a public divisor
    pipe = make_pipeline(SchemaTransformer(s), est).fit(df, y)
    pred = pipe.predict(df)
    assert set(pred) <= set(schema.labels)
    assert pipe[-1].guarantee_.epsilon > 0


def test_read_csv_file_level_errors(tmp_path, schema):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(TableInputError, match="empty"):
        read_csv(empty, schema)
    latin = tmp_path / "latin.csv"
    latin.write_bytes("age,sex\n30,F\xe9minin\n".encode("latin-1"))
    with pytest.raises(TableInputError, match="not UTF-8"):
        read_csv(latin, schema)
    semi = tmp_path / "semi.csv"
    _small_df().to_csv(semi, sep=";", index=False)
    with pytest.raises(TableInputError, match=r"single column.*sep=';'"):
        read_csv(semi, schema, with_target=True)
    assert len(read_csv(semi, schema, sep=";", with_target=True)) == 4


# --- CLI ------------------------------------------------------------------------------------


def _confirmed_from_infer(text: str) -> dict:
    """What a user does after `schema infer`: keep 2 numeric + sex + race, public bounds, no flags."""
    d = json.loads(text)
    d.pop("note")
    d["target"].pop("from_data")
    cols = {c["name"]: c for c in d["columns"]}
    public = {c["name"]: c for c in PUBLIC["columns"]}
    d["columns"] = []
    for name in ("age", "hours-per-week", "sex", "race"):
        c = dict(cols[name])
        c.pop("from_data")
        c.update(public[name])  # replace data-read bounds/levels with public ones
        d["columns"].append(c)
    return d


def test_end_to_end_adult(runner, tmp_path, adult_path):
    res = runner.invoke(app, ["schema", "infer", str(adult_path), "--target", "income"], env=ENV)
    assert res.exit_code == 0, res.output
    assert "from_data" in res.stderr and "not differentially" in res.stderr
    proposed = json.loads(res.stdout)
    assert all(c["from_data"] for c in proposed["columns"])

    raw_schema = tmp_path / "proposed.json"
    raw_schema.write_text(res.stdout)
    out = tmp_path / "model"
    res = runner.invoke(app, ["fit", str(adult_path), "--schema", str(raw_schema), "--model",
                              "opdisc", "--epsilon", "1", "--out", str(out)], env=ENV)
    assert res.exit_code == 2 and "from_data" in res.stderr and "age" in res.stderr
    assert not out.exists()

    sch = tmp_path / "schema.json"
    sch.write_text(json.dumps(_confirmed_from_infer(raw_schema.read_text())))
    res = runner.invoke(app, ["fit", str(adult_path), "--schema", str(sch), "--model", "opdisc",
                              "--epsilon", "1", "--seed", "0", "--out", str(out)], env=ENV)
    assert res.exit_code == 2 and "--ignore-extra" in res.stderr  # 3 columns left out
    assert "'education-num', 'marital-status', 'relationship'" in res.stderr
    assert not out.exists()
    res = runner.invoke(app, ["fit", str(adult_path), "--schema", str(sch), "--model", "opdisc",
                              "--epsilon", "1", "--seed", "0", "--out", str(out),
                              "--ignore-extra"], env=ENV)
    assert res.exit_code == 0, res.output
    assert "in plain words" in res.output
    assert "DP" in res.output and "coefficient" in res.output and "sex=Male" in res.output
    assert (out / "coefficients.png").stat().st_size > 1000

    doc = json.loads((out / "model.json").read_text())
    assert set(doc) == {"format", "format_version", "model", "schema", "params", "guarantee",
                        "classes", "feature_names", "coef", "intercept"}
    assert doc["model"] == "opdisc" and len(doc["coef"]) == 10  # with "(intercept)"
    assert doc["guarantee"]["diagnostics_released"] is False
    text = (out / "model.json").read_text()
    assert "seed" not in text and "random_state" not in text and "diagnostics\"" not in text
    first_row = adult_path.read_text().splitlines()[1]
    assert first_row not in text
    assert sorted(p.name for p in out.iterdir()) == ["coefficients.png", "model.json"]

    test_csv = adult_csv(tmp_path / "test.csv", n=200, split="test")
    res = runner.invoke(app, ["predict", str(out), str(test_csv)], env=ENV)
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0] == "prediction" and len(lines) == 201
    assert set(lines[1:]) <= {"<=50K", ">50K"}
    saved = load_model(out)
    df = read_csv(test_csv, saved.schema)
    assert lines[1:] == list(saved.predict(df))

    res = runner.invoke(app, ["evaluate", str(out), str(test_csv)], env=ENV)
    assert res.exit_code == 0, res.output
    assert "accuracy" in res.stdout and "non-private evaluation" in res.stdout


@pytest.mark.parametrize("model, extra", [
    ("rspm", ["--epsilon", "1"]), ("opsamp", ["--epsilon", "1"]),
    ("dpsgd", ["--epsilon", "1"]), ("accuracy-first", ["--alpha", "1", "--max-epsilon", "40", "--allow-large-epsilon"]),
])
def test_cli_fit_other_models(runner, tmp_path, adult_path, model, extra):
    sch = tmp_path / "schema.json"
    sch.write_text(json.dumps(PUBLIC))
    out = tmp_path / "m"
    res = runner.invoke(app, ["fit", str(adult_path), "--schema", str(sch), "--model", model,
                              *extra, "--seed", "1", "--out", str(out), "--ignore-extra"],
                        env=ENV)
    assert res.exit_code == 0, res.output
    assert ("OPSamp is not recommended" in res.stderr) == (model == "opsamp")
    saved = load_model(out)
    assert saved.model_type == model
    if model == "accuracy-first":
        assert saved.schema.row_divisor == 5  # public l1 scaling is saved with the model
    if model == "dpsgd":  # the schema's intercept feature replaces DP-SGD's own intercept
        assert saved.intercept == 0.0 and saved.feature_names[-1] == "(intercept)"
    res = runner.invoke(app, ["evaluate", str(out), str(adult_path)], env=ENV)
    assert res.exit_code == 0, res.output


def test_cli_kdd99_sample(runner, tmp_path):
    data = kdd99_csv(tmp_path / "kdd.csv", n=300)
    res = runner.invoke(app, ["schema", "infer", str(data), "--target", "label"], env=ENV)
    assert res.exit_code == 0, res.output
    d = TableSchema.from_json(res.stdout).confirmed()  # the user vouches for every entry
    (tmp_path / "s.json").write_text(d.to_json())
    res = runner.invoke(app, ["fit", str(data), "--schema", str(tmp_path / "s.json"), "--model",
                              "dpsgd", "--epsilon", "1", "--out", str(tmp_path / "m")], env=ENV)
    assert res.exit_code == 0, res.output


def _bad_inputs(tmp_path, adult_path):
    text = adult_path.read_text()
    header, *rows = text.splitlines()
    cases = {}
    cases["delimiter"] = text.replace(",", ";").encode()
    cases["empty"] = b""
    cases["latin1"] = (text + "30,13,40,Never-married,Own-child,White,F\xe9male,<=50K\n"
                       ).encode("latin-1")
    cols = header.split(",")
    keep = [i for i, c in enumerate(cols) if c != "income"]
    cases["no_target"] = "\n".join(",".join(r.split(",")[i] for i in keep)
                                   for r in [header, *rows]).encode()
    cases["unknown_level"] = (text + "30,13,40,Never-married,Own-child,Martian,Male,<=50K\n"
                              ).encode()
    cases["out_of_bounds"] = (text + "130,13,40,Never-married,Own-child,White,Male,<=50K\n"
                              ).encode()
    paths = {}
    for k, v in cases.items():
        p = tmp_path / f"{k}.csv"
        p.write_bytes(v)
        paths[k] = p
    return paths


@pytest.mark.parametrize("case, needle", [
    ("delimiter", "single column"), ("empty", "empty"), ("latin1", "not UTF-8"),
    ("no_target", "missing column(s): 'income'"), ("unknown_level", "'race'"),
    ("out_of_bounds", "'age'"),
])
def test_cli_bad_input_exits_2_before_any_noise(runner, tmp_path, adult_path, monkeypatch,
                                                case, needle):
    def no_fit(self, *a, **k):  # pragma: no cover - must not run
        raise AssertionError("fit reached with bad input")

    monkeypatch.setattr(OPDiscClassifier, "fit", no_fit)
    sch = tmp_path / "schema.json"
    sch.write_text(json.dumps(PUBLIC))
    path = _bad_inputs(tmp_path, adult_path)[case]
    res = runner.invoke(app, ["fit", str(path), "--schema", str(sch), "--model", "opdisc",
                              "--epsilon", "1", "--out", str(tmp_path / "m"), "--ignore-extra"],
                        env=ENV)
    assert res.exit_code == 2, res.output
    assert isinstance(res.exception, SystemExit)
    assert needle in res.stderr
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1  # one paragraph
    assert "Traceback" not in res.output and "Martian" not in res.stderr
    assert not (tmp_path / "m").exists()


def test_cli_predict_and_evaluate_bad_inputs(runner, tmp_path, adult_path):
    sch = tmp_path / "schema.json"
    sch.write_text(json.dumps(PUBLIC))
    out = tmp_path / "m"
    res = runner.invoke(app, ["fit", str(adult_path), "--schema", str(sch), "--model", "dpsgd",
                              "--epsilon", "1", "--out", str(out), "--ignore-extra"], env=ENV)
    assert res.exit_code == 0, res.output
    bad = _bad_inputs(tmp_path, adult_path)
    res = runner.invoke(app, ["evaluate", str(out), str(bad["no_target"])], env=ENV)
    assert res.exit_code == 2 and "'income'" in res.stderr
    res = runner.invoke(app, ["predict", str(out), str(bad["no_target"])], env=ENV)
    assert res.exit_code == 0  # predict needs no target
    res = runner.invoke(app, ["predict", str(out), str(bad["unknown_level"]), "--strict"],
                        env=ENV)
    assert res.exit_code == 2 and "'race'" in res.stderr and res.stdout == ""
    for cmd in ("predict", "evaluate"):  # the prediction policy: encoded, counted, warned
        res = runner.invoke(app, [cmd, str(out), str(bad["unknown_level"])], env=ENV)
        assert res.exit_code == 0, res.output
        assert "race: 1 row(s) with an unknown level" in res.stderr
        assert "--strict" in res.stderr and "Martian" not in res.output
    assert len(res.stdout) > 0
    res = runner.invoke(app, ["predict", str(tmp_path / "nowhere"), str(adult_path)], env=ENV)
    assert res.exit_code == 2 and "cannot read the model" in res.stderr


def test_cli_fit_option_errors(runner, tmp_path, adult_path):
    sch = tmp_path / "schema.json"
    sch.write_text(json.dumps(PUBLIC))
    base = ["fit", str(adult_path), "--schema", str(sch), "--out", str(tmp_path / "m")]
    res = runner.invoke(app, [*base, "--model", "opdisc"], env=ENV)
    assert res.exit_code == 2 and "--epsilon is required" in res.stderr
    res = runner.invoke(app, [*base, "--model", "svm", "--epsilon", "1"], env=ENV)
    assert res.exit_code == 2 and "--model must be one of" in res.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"target": {"name": "income", "labels": ["a", "b"]}, "columns": []}')
    res = runner.invoke(app, ["fit", str(adult_path), "--schema", str(bad), "--epsilon", "1",
                              "--out", str(tmp_path / "m")], env=ENV)
    assert res.exit_code == 2 and "at least one feature column" in res.stderr


def test_docs_schemas_parse():
    """The schemas in docs/your-own-data.md are valid and confirmed (no from_data entry)."""
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "your-own-data.md"
    if not doc.exists():  # pragma: no cover - installed without the docs
        pytest.skip("docs not available")
    bodies = [part.split("\nEOF\n")[0] for part in doc.read_text().split("<<'EOF'\n")[1:]]
    assert len(bodies) == 2
    for body in bodies:
        schema = TableSchema.from_json(body)
        assert schema.unconfirmed() == []


def test_propose_ignores_missing_cells_for_the_type():
    df = pd.DataFrame({"x": ["1", "", "3", "NA"], "y": ["a", "b", "a", "b"]})
    proposed, warns = TableSchema.infer(df, target="y")
    (col,) = proposed.columns
    assert col.kind == "numeric" and col.lower == 1 and col.from_data
    assert col.missing == "level" and any("missing cells" in w for w in warns)
    X = proposed.confirmed().encode(df)
    np.testing.assert_array_equal(X, [[0, 0, 1], [0, 1, 1], [1, 0, 1], [0, 1, 1]])
    refuse = replace(proposed.confirmed(), columns=(replace(col, missing="refuse"),))
    with pytest.raises(BoundsViolation, match="missing values"):
        refuse.encode(df)


def test_header_only_file_is_refused(tmp_path, schema):
    p = tmp_path / "header.csv"
    p.write_text("age,hours-per-week,sex,race,income\n")
    with pytest.raises(TableInputError, match="no rows"):
        read_csv(p, schema, with_target=True)
