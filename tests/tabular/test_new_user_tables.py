"""What a new user's table brings: repeated header names, levels coded as 1.0 rather than 1,
declared clipping, schema inference for codes and identifiers, and `oracledp schema check`."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from oracledp._cli import app
from oracledp._errors import BoundsViolation, ClippedValuesWarning, PredictionPolicyWarning
from oracledp.tabular import (
    SchemaTransformer,
    TableInputError,
    TableSchema,
    check_table,
    load_model,
    read_aggregated,
    read_csv,
)

ENV = {"COLUMNS": "200"}

#: A small public schema: a numeric age, a 0/1 code, a text level; labels coded 0/1.
SCHEMA = {
    "target": {"name": "y", "labels": ["0", "1"]},
    "columns": [
        {"name": "age", "type": "numeric", "lower": 0, "upper": 100, "step": 1},
        {"name": "smoker", "type": "categorical", "levels": ["0", "1"]},
        {"name": "sex", "type": "categorical", "levels": ["F", "M"]},
    ],
}


@pytest.fixture
def schema() -> TableSchema:
    return TableSchema.from_dict(SCHEMA)


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args), env=ENV)


# --- a column name written twice in the header ------------------------------------------------

DUPLICATED = b"age,smoker,sex,age,y\n30,1,F,31,0\n40,0,M,41,1\n"


@pytest.mark.parametrize("ignore_extra", [True, False])
def test_a_repeated_header_name_is_refused_by_name(schema, ignore_extra):
    for read in (lambda: read_csv(DUPLICATED),
                 lambda: read_csv(DUPLICATED, schema, with_target=True,
                                  ignore_extra=ignore_extra),
                 lambda: read_aggregated(DUPLICATED, schema, ignore_extra=ignore_extra)):
        with pytest.raises(TableInputError, match="the column name 'age' twice") as err:
            read()
        assert "age.1" not in str(err.value)
    frame = pd.DataFrame([[30, "1", "F", 31, "0"]], columns=["age", "smoker", "sex", "age", "y"])
    with pytest.raises(TableInputError, match="the column name 'age' twice"):
        TableSchema.infer(frame, target="y")
    problems = schema.problems(frame, with_target=True, ignore_extra=ignore_extra)
    assert problems[0].startswith("the header has the column name 'age' twice")
    assert not any("missing column" in p for p in problems)


def test_a_repeated_header_name_is_refused_on_the_command_line(tmp_path, schema):
    data = tmp_path / "dup.csv"
    data.write_bytes(DUPLICATED.replace(b"smoker", b"age", 1))  # age written 3 times
    (tmp_path / "s.json").write_text(schema.to_json())
    for args in (["schema", "infer", str(data), "--target", "y"],
                 ["fit", str(data), "--schema", str(tmp_path / "s.json"), "--epsilon", "1",
                  "--out", str(tmp_path / "m")],
                 ["fit", str(data), "--schema", str(tmp_path / "s.json"), "--epsilon", "1",
                  "--model", "dpsgd", "--ignore-extra", "--out", str(tmp_path / "m")]):
        res = _invoke(*args)
        assert res.exit_code == 2, res.output
        assert "the column name 'age' 3 times" in res.stderr
        assert "age.1" not in res.stderr and res.stderr.count("\n") == 1
        assert not (tmp_path / "m").exists()


# --- levels that are numbers are compared by value ----------------------------------------------


def _coded(smoker: list, y: list) -> pd.DataFrame:
    return pd.DataFrame({"age": [30, 41, 52, 63][:len(smoker)], "smoker": smoker,
                         "sex": ["F", "M", "F", "M"][:len(smoker)], "y": y})


def test_numeric_levels_and_labels_match_by_value(schema):
    """1, 1.0, "1", "1.0", numpy ints and floats are the declared level "1" (" 1 " is
    refused: spaces are never stripped, see test_schema_value_edges.py)."""
    as_declared = schema.encode(_coded(["1", "0", "1", "0"], ["0"] * 4))
    for smoker in ([1, 0, 1, 0], [1.0, 0.0, 1.0, 0.0], ["1.0", "0.0", "1", "0"],
                   list(np.array([1, 0, 1, 0], dtype=np.int8)), ["1e0", "0", "1", "-0"]):
        np.testing.assert_array_equal(schema.encode(_coded(smoker, ["0"] * 4)), as_declared)
    for y in ([0, 1, 1, 0], [0.0, 1.0, 1.0, 0.0], ["0.0", "1", "1.0", "0"],
              np.array([0, 1, 1, 0], dtype=np.int64)):
        assert schema.labels_of(_coded([1, 0, 1, 0], list(y))).tolist() == ["0", "1", "1", "0"]
    assert schema.problems(_coded([1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 0.0]),
                           with_target=True) == []


def test_text_levels_stay_exact(schema):
    with pytest.raises(BoundsViolation, match=r"'sex': values must be one of the 2 declared "
                                              r"levels \('F', 'M'\); some are not: check how"):
        schema.encode(_coded([1, 0, 1, 0], ["0"] * 4).assign(sex=["f", "M", "F", "M"]))
    words = TableSchema.from_dict({**SCHEMA, "target": {"name": "y", "labels": ["no", "yes"]}})
    with pytest.raises(BoundsViolation, match="declared labels"):
        words.labels_of(_coded([1, 0, 1, 0], ["No", "yes", "no", "yes"]))


@pytest.mark.parametrize("levels", [["1", "1.0"], [0, "0.0"], ["01", "1"]])
def test_levels_that_are_the_same_number_are_refused(levels):
    d = {**SCHEMA, "columns": [{"name": "c", "type": "categorical", "levels": levels}]}
    with pytest.raises(ValueError, match="are the same number"):
        TableSchema.from_dict(d)
    with pytest.raises(ValueError, match="are the same number"):
        TableSchema.from_dict({**SCHEMA, "target": {"name": "y", "labels": levels}})


def test_json_numbers_as_levels_labels_and_fill():
    d = {"target": {"name": "y", "labels": [0, 1]},
         "columns": [{"name": "c", "type": "categorical", "levels": [0, 1],
                      "missing": {"fill": 1.0}}]}
    schema = TableSchema.from_dict(d)
    assert schema.labels == ("0", "1") and schema.columns[0].fill == "1"
    assert TableSchema.from_json(schema.to_json()) == schema
    np.testing.assert_array_equal(schema.encode(pd.DataFrame({"c": [np.nan, 0.0]})),
                                  [[0, 1, 1], [1, 0, 1]])


def test_a_mostly_undeclared_column_is_refused_at_predict_not_zeroed(schema):
    """Most cells of 'sex' coded 1/2 instead of F/M: no silent all-zero column."""
    df = _coded([1, 0, 1, 0], ["0"] * 4).assign(sex=["1", "2", "1", "F"])
    with pytest.raises(BoundsViolation, match=r"'sex': most values are not declared levels "
                                              r"\(declared: 'F', 'M'\), so nothing was "
                                              r"predicted; check how they are coded"):
        schema.encode_for_prediction(df)
    with pytest.raises(BoundsViolation, match="most values are not declared levels"):
        SchemaTransformer(schema).fit(_coded([1, 0, 1, 0], ["0"] * 4)).transform(df)
    few = df.assign(sex=["F", "M", "x", "F"])  # a few unknown levels: the policy and a warning
    with pytest.warns(PredictionPolicyWarning, match="sex: 1 row"):
        X, adjusted = schema.encode_for_prediction(few)
    assert adjusted == {"sex": {"unknown level": 1}} and X[2, 3:5].tolist() == [0, 0]


def test_pandas_float_codes_fit_and_predict_on_the_command_line(tmp_path, schema):
    """A NaN in a 0/1 column makes pandas write 1.0/0.0: fit, predict and evaluate read
    them as the declared levels "1"/"0" (the float column had its NaN filled publicly)."""
    rng = np.random.default_rng(0)
    n = 200
    smoker = rng.integers(0, 2, n).astype(float)
    smoker[3] = np.nan  # pandas now writes the whole column as 1.0 / 0.0
    df = pd.DataFrame({"age": rng.integers(20, 80, n), "smoker": smoker,
                       "sex": rng.choice(["F", "M"], n), "y": (smoker == 1).astype(float)})
    df.loc[3, "y"] = 0.0
    df.to_csv(tmp_path / "t.csv", index=False)
    assert "1.0," in (tmp_path / "t.csv").read_text()
    d = json.loads(schema.to_json())
    d["columns"][1]["missing"] = {"fill": "0"}
    (tmp_path / "s.json").write_text(json.dumps(d))
    filled = TableSchema.from_dict(d)
    for model in ("opdisc", "dpsgd"):
        res = _invoke("fit", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json"),
                      "--model", model, "--epsilon", "1", "--seed", "0",
                      "--out", str(tmp_path / model))
        assert res.exit_code == 0, res.output
    res = _invoke("predict", str(tmp_path / "dpsgd"), str(tmp_path / "t.csv"))
    assert res.exit_code == 0 and res.stderr == "", res.output  # nothing unknown, no warning
    saved = load_model(tmp_path / "dpsgd")
    expected = saved.labels_of_scores(filled.encode(read_csv(tmp_path / "t.csv").assign(
        smoker=lambda f: f["smoker"].str.replace(".0", "", regex=False))) @ saved.coef
        + saved.intercept)
    assert res.stdout.split()[1:] == expected.tolist()
    # the aggregated reader reads them alike: the same distinct rows as the in-memory encoding
    table = read_aggregated(tmp_path / "t.csv", filled)
    X, _, w = table.weighted_rows()
    whole = filled.encode(read_csv(tmp_path / "t.csv"))
    assert int(w.sum()) == n and {tuple(r) for r in X} == {tuple(r) for r in whole}


def test_cli_predict_refuses_a_column_coded_otherwise(tmp_path, schema):
    (tmp_path / "train.csv").write_text("age,smoker,sex,y\n" + "30,1,F,0\n40,0,M,1\n" * 20)
    (tmp_path / "s.json").write_text(schema.to_json())
    res = _invoke("fit", str(tmp_path / "train.csv"), "--schema", str(tmp_path / "s.json"),
                  "--model", "dpsgd", "--epsilon", "1", "--out", str(tmp_path / "m"))
    assert res.exit_code == 0, res.output
    (tmp_path / "new.csv").write_text("age,smoker,sex\n" + "30,yes,F\n40,no,M\n" * 5)
    for extra in ([], ["--strict"]):
        res = _invoke("predict", str(tmp_path / "m"), str(tmp_path / "new.csv"), *extra)
        assert res.exit_code == 2 and res.stdout == "", res.output
        assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1
        assert "'smoker'" in res.stderr and "'0', '1'" in res.stderr
        assert "yes" not in res.stderr


def test_estimator_label_refusal_says_numbers_are_not_text():
    from oracledp.estimators import OPDiscClassifier
    from oracledp.oracles import FeatureSchema

    est = OPDiscClassifier(1.0, schema=FeatureSchema(binary=(True,), denominators=(1,),
                                                     bounds=(1.0,)),
                           classes=["0", "1"], oracle="brute", random_state=0)
    with pytest.raises(BoundsViolation, match=r"y = schema.labels_of\(df\)"):
        est.fit(np.ones((4, 1)), np.array([0, 1, 1, 0]))


# --- declared clipping to the public bounds -----------------------------------------------------


def _clipping(schema: TableSchema) -> TableSchema:
    d = schema.to_dict()
    d["columns"][0]["out_of_bounds"] = "clip"  # age
    return TableSchema.from_dict(d)


def test_out_of_bounds_is_declared_validated_and_round_trips(schema):
    clip = _clipping(schema)
    assert clip.columns[0].out_of_bounds == "clip" and clip.clipped_columns() == ["age"]
    assert TableSchema.from_json(clip.to_json()) == clip != schema
    assert "out_of_bounds" not in schema.to_json()  # the default is not written
    for col, value, match in ((0, "clamp", "'out_of_bounds' must be \"refuse\""),
                              (0, True, "'out_of_bounds' must be"),
                              (2, "clip", "numeric columns only")):
        d = schema.to_dict()
        d["columns"][col]["out_of_bounds"] = value
        with pytest.raises(ValueError, match=match):
            TableSchema.from_dict(d)


def test_clipping_is_the_same_in_fit_and_predict_and_warned_once(schema):
    clip = _clipping(schema)
    df = _coded([1, 0, 1, 0], ["0"] * 4).assign(age=[-5, 30, 130, 100])
    inside = df.assign(age=[0, 30, 100, 100])
    with pytest.raises(BoundsViolation, match=r"'age': values must lie in \[0, 100\]"):
        schema.encode(df)  # refused unless declared
    for encode in (clip.encode, lambda f: clip.encode_for_prediction(f)[0],
                   lambda f: SchemaTransformer(clip).fit_transform(f),
                   lambda f: SchemaTransformer(clip, on_unknown="refuse").fit(f).transform(f)):
        with pytest.warns(ClippedValuesWarning) as rec:
            X = encode(df)
        np.testing.assert_array_equal(X, schema.encode(inside))
        assert len(rec) == 1
        msg = str(rec[0].message)
        assert "column(s) 'age'" in msg and "non-private diagnostic" in msg
        assert not any(ch.isdigit() for ch in msg)  # no count, row or value
    with pytest.warns(ClippedValuesWarning):
        _, adjusted = clip.encode_for_prediction(df)
    assert adjusted == {}  # declared clipping is not the prediction policy's
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clip.encode(inside)  # nothing clipped: no warning
        assert clip.problems(df, with_target=True) == []


def test_the_aggregated_reader_clips_alike(schema, tmp_path):
    clip = _clipping(schema)
    df = _coded([1, 0, 1, 0], ["0", "1", "0", "1"]).assign(age=[-5, 30, 130, 100])
    df.to_csv(tmp_path / "t.csv", index=False)
    with pytest.warns(ClippedValuesWarning, match="'age'"):
        table = read_aggregated(tmp_path / "t.csv", clip)
    X, _, w = table.weighted_rows()
    expected = schema.encode(df.assign(age=[0, 30, 100, 100]))
    assert {tuple(r) for r in X} == {tuple(r) for r in expected} and w.sum() == 4
    with pytest.raises(BoundsViolation, match="'age': values must lie in"):
        read_aggregated(tmp_path / "t.csv", schema)


def test_the_guarantee_says_which_columns_are_clipped(schema):
    from oracledp.privacy._guarantees import PrivacyGuarantee

    g = PrivacyGuarantee.pure(1.0, source="a theorem")
    assert schema.annotate_guarantee(g) is g
    noted = _clipping(schema).annotate_guarantee(g)
    assert "column(s) 'age' are clipped to their declared public bounds" in noted.notes
    assert "holds for the original records" in noted.notes
    assert _clipping(schema).annotate_guarantee(noted) == noted  # once
    assert noted.epsilon == g.epsilon and noted.describe() == g.describe()


def test_cli_fit_and_predict_with_declared_clipping(tmp_path, schema):
    rng = np.random.default_rng(1)
    n = 120
    df = pd.DataFrame({"age": rng.integers(-10, 120, n), "smoker": rng.integers(0, 2, n),
                       "sex": rng.choice(["F", "M"], n), "y": rng.integers(0, 2, n)})
    df.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "s.json").write_text(_clipping(schema).to_json())
    for model in ("rspm", "dpsgd"):
        out = tmp_path / model
        res = _invoke("fit", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json"),
                      "--model", model, "--epsilon", "1", "--seed", "0", "--out", str(out))
        assert res.exit_code == 0, res.output
        lines = res.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("warning: column(s) 'age': numbers "
                                                       "outside the declared bounds")
        assert "non-private diagnostic" in lines[0]
        assert "note: column(s) 'age' are clipped to their declared public bounds" in res.stdout
        saved = load_model(out)
        assert "column(s) 'age' are clipped" in saved.guarantee.notes
        for extra in ([], ["--strict"]):  # the declared clipping is applied in predict too
            res = _invoke("predict", str(out), str(tmp_path / "t.csv"), *extra)
            assert res.exit_code == 0, res.output
            assert res.stderr.startswith("warning: column(s) 'age'")
            assert res.stderr.count("\n") == 1
        res = _invoke("evaluate", str(out), str(tmp_path / "t.csv"))
        assert res.exit_code == 0 and "note: column(s) 'age' are clipped" in res.stdout
    (tmp_path / "s.json").write_text(schema.to_json())  # without the declaration: refused
    res = _invoke("fit", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json"),
                  "--model", "dpsgd", "--epsilon", "1", "--out", str(tmp_path / "y"))
    assert res.exit_code == 2 and "values must lie in [0, 100]" in res.stderr


# --- schema inference for codes and identifiers ---------------------------------------------------


def _inferred(tmp_path, df: pd.DataFrame):
    df.to_csv(tmp_path / "t.csv", index=False)
    res = _invoke("schema", "infer", str(tmp_path / "t.csv"), "--target", "y")
    assert res.exit_code == 0, res.output
    return {c["name"]: c for c in json.loads(res.stdout)["columns"]}, res.stderr


def test_whole_numbers_written_as_floats_get_step_one(tmp_path):
    rng = np.random.default_rng(2)
    n = 120
    score = rng.integers(0, 60, n).astype(float)  # pandas writes 7.0
    cols, _ = _inferred(tmp_path, pd.DataFrame({"score": score, "y": rng.integers(0, 2, n)}))
    assert ".0," in (tmp_path / "t.csv").read_text()  # written as 7.0
    assert cols["score"]["type"] == "numeric" and cols["score"]["step"] == 1
    assert cols["score"]["lower"] == score.min() and cols["score"]["upper"] == score.max()


def test_few_whole_numbers_are_proposed_as_numeric_codes(tmp_path):
    rng = np.random.default_rng(3)
    n = 100
    flag = rng.integers(0, 2, n).astype(float)
    flag[7] = np.nan
    df = pd.DataFrame({"flag": flag, "answer": rng.integers(1, 6, n),
                       "age": rng.integers(18, 90, n), "y": rng.integers(0, 2, n)})
    cols, err = _inferred(tmp_path, df)
    assert cols["flag"] == {"name": "flag", "type": "numeric", "lower": 0, "upper": 1,
                            "step": 1, "missing": "level", "from_data": True}
    assert cols["answer"]["type"] == "numeric"
    assert (cols["answer"]["lower"], cols["answer"]["upper"], cols["answer"]["step"]) == (1, 5, 1)
    assert cols["age"]["type"] == "numeric"  # not codes: values not seen twice on average
    assert "2 columns ('flag', 'answer'): integer codes (whole numbers" in err
    schema = TableSchema.infer(tmp_path / "t.csv", target="y")[0].confirmed()
    X = schema.encode(read_csv(tmp_path / "t.csv"))  # 1.0 / 0.0 are the numbers 1 / 0
    np.testing.assert_array_equal(X[:, 0], np.nan_to_num(flag))
    assert X[:, 1].sum() == 1  # flag=(missing) on the one missing row


def test_a_column_that_looks_like_an_identifier_is_flagged_and_unresolved(tmp_path):
    rng = np.random.default_rng(4)
    n = 60
    df = pd.DataFrame({"record": np.arange(n) + 5000, "name": [f"patient {i}" for i in range(n)],
                       "age": rng.integers(18, 90, n), "y": rng.integers(0, 2, n)})
    cols, err = _inferred(tmp_path, df)
    for name in ("record", "name"):
        assert cols[name]["type"] == "unresolved" and "identifier" in cols[name]["note"]
    assert "2 columns ('record', 'name'): all or nearly all values are distinct, so each looks " \
           "like an IDENTIFIER" in err
    assert cols["age"]["type"] == "numeric" and "'age'" not in err
    assert "5000" not in err and "patient" not in err
    (tmp_path / "s.json").write_text(TableSchema.infer(tmp_path / "t.csv", "y")[0]
                                     .confirmed().to_json())
    res = _invoke("fit", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json"),
                  "--model", "dpsgd", "--epsilon", "1", "--out", str(tmp_path / "m"))
    assert res.exit_code == 2 and "record, name" in res.stderr and "unresolved" in res.stderr
    small = pd.DataFrame({"age": [23, 45, 31, 60], "y": [0, 1, 0, 1]})  # too few to tell
    assert TableSchema.infer(small, "y")[0].columns[0].kind == "numeric"


# --- oracledp schema check ----------------------------------------------------------------------

#: Every kind of problem at once (header: age written twice, 'bmi' absent, 'note' extra).
MESSY = ("age,smoker,sex,note,age,y\n"
         "30,1.0,F,a,1,0\n"
         "140,0,m,b,2,1\n"
         "abc,,M,c,3,maybe\n")


def test_schema_check_lists_every_problem_one_line_each(tmp_path, schema):
    d = schema.to_dict()
    d["columns"][1]["from_data"] = True
    d["columns"].append({"name": "bmi", "type": "numeric", "lower": 10, "upper": 60,
                         "step": 1})
    d["columns"].append({"name": "sex2", "type": "unresolved"})
    (tmp_path / "s.json").write_text(json.dumps(d))
    (tmp_path / "t.csv").write_text(MESSY.replace("age,y", "age2,y"))  # no repeat here
    res = _invoke("schema", "check", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json"))
    assert res.exit_code == 2 and res.stdout == ""
    lines = res.stderr.splitlines()
    assert all(line.startswith("error: ") for line in lines)
    expected = ["column 'smoker': still \"from_data\": true",
                "missing column(s): 'bmi'",
                "column(s) 'note', 'age2' are not in the schema",
                "column 'age': values must be finite numbers",
                "column 'age': values must lie in [0, 100]",
                "column 'smoker': missing values",
                "column 'sex': values must be one of the 2 declared levels",
                "column 'sex2': its type is unresolved",
                "target 'y': values must be one of the declared labels"]
    assert len(lines) == len(expected)
    for line, start in zip(lines, expected, strict=True):
        assert line.startswith(f"error: {start}"), (line, start)
    for value in ("abc", "140", "maybe", "'m'", "1.0"):
        assert value not in res.stderr
    res = _invoke("schema", "check", str(tmp_path / "t.csv"), "--schema",
                  str(tmp_path / "s.json"), "--ignore-extra")
    assert res.exit_code == 2 and "not in the schema" not in res.stderr
    assert len(res.stderr.splitlines()) == len(expected) - 1


def test_schema_check_reports_a_repeated_name_with_the_rest(tmp_path, schema):
    (tmp_path / "s.json").write_text(schema.to_json())
    (tmp_path / "t.csv").write_text(MESSY)
    for extra in ([], ["--ignore-extra"]):
        res = _invoke("schema", "check", str(tmp_path / "t.csv"), "--schema",
                      str(tmp_path / "s.json"), *extra)
        assert res.exit_code == 2
        lines = res.stderr.splitlines()
        assert lines[0] == ("error: the header has the column name 'age' twice (each column "
                            "needs its own name: rename or delete the repeated columns)")
        assert any("'sex'" in line for line in lines) and "age.1" not in res.stderr


def test_schema_check_ok_and_file_level_problems(tmp_path, schema):
    (tmp_path / "s.json").write_text(schema.to_json())
    good = "age,smoker,sex,y\n30,1,F,0\n40,0.0,M,1.0\n"
    (tmp_path / "t.csv").write_text(good)
    res = _invoke("schema", "check", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json"))
    assert res.exit_code == 0 and res.stderr == ""
    assert res.stdout.startswith("ok: ") and "`oracledp fit` would accept it" in res.stdout
    (tmp_path / "semi.csv").write_text(good.replace(",", ";"))
    res = _invoke("schema", "check", str(tmp_path / "semi.csv"), "--schema",
                  str(tmp_path / "s.json"))
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "--sep ';'" in res.stderr
    res = _invoke("schema", "check", str(tmp_path / "semi.csv"), "--schema",
                  str(tmp_path / "s.json"), "--sep", ";")
    assert res.exit_code == 0, res.output
    (tmp_path / "empty.csv").write_text("")
    res = _invoke("schema", "check", str(tmp_path / "empty.csv"), "--schema",
                  str(tmp_path / "s.json"))
    assert res.exit_code == 2 and "empty" in res.stderr
    # declared clipping is not a problem; the columns clipped are a warning line
    (tmp_path / "c.json").write_text(_clipping(schema).to_json())
    (tmp_path / "old.csv").write_text(good + "130,1,F,0\n")
    res = _invoke("schema", "check", str(tmp_path / "old.csv"), "--schema",
                  str(tmp_path / "c.json"))
    assert res.exit_code == 0 and res.stderr.startswith("warning: column(s) 'age'")


def test_check_table_in_python_streams_and_takes_frames(tmp_path, schema):
    rows = "age,smoker,sex,y\n" + "30,1,F,0\n" * 50 + "30,1,X,0\n"  # the problem comes last
    (tmp_path / "t.csv").write_text(rows)
    problems = check_table(tmp_path / "t.csv", schema)
    assert len(problems) == 1 and problems[0].startswith("column 'sex'")
    assert check_table(read_csv(tmp_path / "t.csv"), schema) == problems
    assert check_table(rows.encode().replace(b"X", b"F"), schema) == []
    assert check_table(read_csv(tmp_path / "t.csv").drop(columns="y"), schema,
                       with_target=False) == problems
