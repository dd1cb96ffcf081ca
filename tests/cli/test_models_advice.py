"""`oracledp models --schema S --epsilon E [DATA]` and the rule behind it (`advise_model`).

* The command reads d from the schema and, with DATA, only n (through fit's checked reader);
  both show in the output, with |W| of the default space and each exact model's chance to
  certify.  A wide schema (d >= 109 at epsilon >= 1) gets the warning that a refused exact fit
  is still charged under --budget, with --work-limit, a smaller epsilon and dpsgd.  No record
  value is printed.  Plain `oracledp models` is unchanged but for a pointer to the advice.
* Bad inputs (no such schema, epsilon <= 0, options without --schema, a DATA file outside the
  schema) are one ``error:`` line with exit code 2.
* |W| is the estimators' own: from d and the schema's columns not declared 0/1 (an
  all-numeric table gets OPDisc's lowered W, as its fit does); d alone sizes the largest W.
* Where the exact model and dpsgd were each ahead on some table of the same shape (13 <= d,
  opdisc's W within the certified sizes, epsilon >= 1), the advice is auto.
* The pure rule at each of its boundaries: epsilon 1; opdisc's |W| at 10^6 (d 35/36) and at
  9 * 10^7 (d 108/109); rspm's measured |W| (d 135/136); rspm's box (d 12/13); 20 records per
  feature; and its argument checks.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from oracledp import ModelAdvice, TableSchema, advise_model
from oracledp._cli import app
from oracledp._guidance import (
    CERTIFIES_W,
    FEW_RECORDS_PER_FEATURE,
    OPDISC_REFUSES_W,
    RSPM_MEASURED_W,
)

ENV = {"COLUMNS": "80"}
SCHEMA = {  # d = 2 (x) + 3 (c) + 1 (intercept) = 6
    "target": {"name": "y", "labels": ["no", "yes"]},
    "columns": [
        {"name": "x", "type": "numeric", "lower": 0, "upper": 10, "step": 1},
        {"name": "z", "type": "numeric", "lower": 0, "upper": 1, "step": 0.5},
        {"name": "c", "type": "categorical", "levels": ["alpha", "bravo", "charlie"]},
    ],
}
ROWS = ["7,0.5,alpha,no", "3,1,bravo,yes", "9,0,charlie,no", "1,0.5,bravo,yes"]


def _wide_schema(levels: int) -> dict:
    """One categorical column of ``levels`` levels: d = levels + 1 with the intercept."""
    return {"target": {"name": "y", "labels": ["no", "yes"]},
            "columns": [{"name": "c", "type": "categorical",
                         "levels": [f"l{i}" for i in range(levels)]}]}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    (tmp_path / "wide.json").write_text(json.dumps(_wide_schema(134)))  # d = 135
    (tmp_path / "train.csv").write_text("x,z,c,y\n" + "\n".join(ROWS * 10) + "\n")
    return {"schema": tmp_path / "schema.json", "wide": tmp_path / "wide.json",
            "data": tmp_path / "train.csv", "tmp": tmp_path}


def _models(*args: str):
    return CliRunner().invoke(app, ["models", *map(str, args)], env=ENV)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _one_error(res, names: str) -> None:
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and names in lines[0], res.stderr
    assert "Traceback" not in res.stderr


# --- the command ---------------------------------------------------------------------------

def test_advice_without_data_shows_d_and_w(files) -> None:
    res = _models("--schema", files["schema"], "--epsilon", "1")
    assert res.exit_code == 0, res.output
    out = _flat(res.stdout)
    assert "d = 6 encoded features" in out and "n not given" in out
    assert "opdisc |W| = 485" in out and "gaussian-rspm |W| = 729" in out  # d = 6: 3^6
    assert "opdisc likely, rspm likely, gaussian-rspm likely" in out
    assert "use: gaussian-rspm" in out  # rspm's W is the whole box {-1, 0, 1}^6
    assert "warning:" not in out


def test_advice_with_data_counts_records_only(files) -> None:
    res = _models(files["data"], "--schema", files["schema"], "--epsilon", "0.5")
    assert res.exit_code == 0, res.output
    out = _flat(res.stdout)
    assert "n = 40 records" in out and "6.7 per encoded feature" in out
    assert "1/n^2 = 0.000625" in out
    assert "use: dpsgd" in out and "epsilon 0.5 < 1" in out
    # few records per feature (40 < 20 * 6): the warning, with nhefs's numbers
    assert "fewer than 20" in out and "nhefs" in out
    for value in ("alpha", "bravo", "charlie", "7,0.5", "0.5,alpha"):  # no record value
        assert value not in res.output


def test_an_explicit_delta_is_the_one_the_advice_sizes_w_at(files) -> None:
    """--delta reaches the advice: it is printed as given, and opdisc's W is the one
    advise_model sizes at that delta (the one fit --delta declares)."""
    res = _models(files["data"], "--schema", files["schema"], "--epsilon", "2", "--delta",
                  "0.01")
    assert res.exit_code == 0, res.output
    out = _flat(res.stdout)
    assert "delta 0.01 (--delta)" in out and "1/n^2" not in out
    want = dict(advise_model(TableSchema.from_dict(json.loads(files["schema"].read_text())),
                             2.0, n=40, delta=0.01).space_sizes)["opdisc"]
    assert f"opdisc |W| = {want:,}" in out
    # a --delta that happens to equal 1/n^2 is still the one given, not "the default"
    res = _models(files["data"], "--schema", files["schema"], "--epsilon", "2", "--delta",
                  "0.000625")  # 1 / 40^2
    assert res.exit_code == 0, res.output
    out = _flat(res.stdout)
    assert "delta 0.000625 (--delta)" in out and "defaults to" not in out


def test_a_wide_schema_warns_that_refused_fits_are_charged(files) -> None:
    res = _models("--schema", files["wide"], "--epsilon", "2")
    assert res.exit_code == 0, res.output
    out = _flat(res.stdout)
    assert "d = 135" in out and "opdisc |W| = 214,970,041" in out
    assert "opdisc unlikely, rspm likely, gaussian-rspm likely" in out
    assert "use: dpsgd" in out
    warning = out[out.index("warning: exact fits may be refused"):]
    for words in ("under --budget it stays charged", "--work-limit", "smaller epsilon",
                  "--model dpsgd", "--model rspm", "refused 6 of 6"):
        assert words in warning, words


def test_an_unconfirmed_schema_gets_a_note(files) -> None:
    doc = json.loads(files["schema"].read_text())
    doc["columns"][2]["from_data"] = True
    files["schema"].write_text(json.dumps(doc))
    res = _models("--schema", files["schema"], "--epsilon", "1")
    assert res.exit_code == 0, res.output
    assert '1 schema entry is still marked "from_data"' in _flat(res.stdout)


def test_plain_models_still_prints_the_guide() -> None:
    res = _models()
    assert res.exit_code == 0 and "Which model" in res.stdout
    assert "oracledp models --schema S --epsilon E [DATA]" in res.stdout


@pytest.mark.parametrize("args, names", [
    (["--schema", "{tmp}/nowhere.json", "--epsilon", "1"], "nowhere.json"),
    (["--schema", "{schema}", "--epsilon", "0"], "--epsilon"),
    (["--schema", "{schema}", "--epsilon", "-1"], "--epsilon"),
    (["--schema", "{schema}", "--epsilon", "inf"], "--epsilon"),
    (["--schema", "{schema}"], "--epsilon"),
    (["--epsilon", "1"], "--schema"),
    (["{data}", "--epsilon", "1"], "--schema"),
    (["{tmp}/nowhere.csv", "--schema", "{schema}", "--epsilon", "1"], "nowhere.csv"),
    (["{schema}", "--schema", "{schema}", "--epsilon", "1"], "schema.json"),  # not a CSV of it
    (["--schema", "{schema}", "--epsilon", "1", "--delta", "0.01"], "--delta"),  # no DATA
    (["{data}", "--schema", "{schema}", "--epsilon", "1", "--delta", "0"], "--delta"),
    (["{data}", "--schema", "{schema}", "--epsilon", "1", "--delta", "1"], "--delta"),
    (["{data}", "--schema", "{schema}", "--epsilon", "1", "--delta", "nan"], "--delta"),
    (["--delta", "0.01"], "--schema"),
])
def test_bad_inputs_are_one_error_line(files, args, names) -> None:
    fill = {k: str(v) for k, v in files.items()}
    _one_error(_models(*(a.format(**fill) for a in args)), names)


def test_a_data_file_outside_the_schema_is_refused_without_its_values(files) -> None:
    bad = files["tmp"] / "bad.csv"
    bad.write_text("x,z,c,y\n7,0.5,alpha,no\n3,1,zulu-secret,yes\n")
    res = _models(bad, "--schema", files["schema"], "--epsilon", "1")
    _one_error(res, "bad.csv")
    assert "zulu-secret" not in res.stderr


# --- the rule ------------------------------------------------------------------------------

def test_epsilon_boundary() -> None:
    assert advise_model(25, 0.999, n=15_590).model == "dpsgd"
    a = advise_model(25, 1.0, n=15_590)
    assert a.model == "auto" and a.exact_model == "opdisc" and a.warnings == ()
    # below epsilon 1 the exact model is still named, as the less accurate option
    low = advise_model(25, 0.1)
    assert low.exact_model == "opdisc" and "less accurate than dpsgd" in low.reasons[-1]


def test_opdisc_certified_sizes_boundary() -> None:
    a35, a36 = advise_model(35, 1.0), advise_model(36, 1.0)
    assert dict(a35.space_sizes)["opdisc"] <= CERTIFIES_W < dict(a36.space_sizes)["opdisc"]
    assert (a35.certifies("opdisc"), a35.model, a35.exact_model) == ("likely", "auto", "opdisc")
    assert (a36.certifies("opdisc"), a36.model, a36.exact_model) == ("uncertain", "dpsgd", "rspm")
    assert any("--budget" in w for w in a36.warnings) and not a35.warnings


def test_opdisc_refusal_sizes_boundary() -> None:
    a108, a109 = advise_model(108, 1.0), advise_model(109, 1.0)
    assert dict(a108.space_sizes)["opdisc"] < OPDISC_REFUSES_W <= dict(a109.space_sizes)["opdisc"]
    assert a108.certifies("opdisc") == "uncertain" and a109.certifies("opdisc") == "unlikely"
    assert advise_model(109, 0.999).certifies("opdisc") == "uncertain"  # 3/3 at 0.1 measured


def test_rspm_measured_sizes_boundary() -> None:
    a135, a136 = advise_model(135, 2.0, n=4_075), advise_model(136, 2.0, n=4_075)
    assert dict(a135.space_sizes)["rspm"] == RSPM_MEASURED_W < dict(a136.space_sizes)["rspm"]
    assert a135.certify == (("opdisc", "unlikely"), ("rspm", "likely"),
                            ("gaussian-rspm", "likely"))
    assert (a135.model, a135.exact_model) == ("dpsgd", "rspm")
    assert a136.certifies("rspm") == a136.certifies("gaussian-rspm") == "uncertain"
    assert a136.exact_model is None and "--model rspm" not in " ".join(a136.warnings)


def test_rspm_box_boundary() -> None:
    assert advise_model(12, 1.0).model == "gaussian-rspm"  # 3^12 <= 10^6: rspm's W is the box
    assert advise_model(13, 1.0).model == "auto"
    assert advise_model(1, 2.0).model == "gaussian-rspm"


def test_records_per_feature_boundary() -> None:
    d = 25
    few = advise_model(d, 1.0, n=FEW_RECORDS_PER_FEATURE * d - 1)
    enough = advise_model(d, 1.0, n=FEW_RECORDS_PER_FEATURE * d)
    assert few.model == "dpsgd" and "fewer than 20" in few.warnings[0]
    assert enough.model == "auto" and enough.warnings == ()
    assert advise_model(d, 1.0).model == "auto"  # n unknown: no check


def test_delta_and_cap() -> None:
    assert advise_model(6, 1.0, n=2).delta == 0.25
    assert advise_model(6, 1.0, n=1).delta is None and advise_model(6, 1.0).delta is None
    assert any("--allow-large-epsilon" in w for w in advise_model(6, 11.0).warnings)


def test_schema_forms_agree() -> None:
    from_dict = advise_model(SCHEMA, 1.0, n=100)
    assert from_dict == advise_model(TableSchema.from_dict(SCHEMA), 1.0, n=100)
    assert from_dict == advise_model(6, 1.0, n=100)
    assert isinstance(from_dict, ModelAdvice) and from_dict.d == 6


@pytest.mark.parametrize("schema, eps, n, error", [
    (6, 0.0, None, ValueError), (6, -1.0, None, ValueError), (6, math.nan, None, ValueError),
    (6, math.inf, None, ValueError), (6, True, None, TypeError), (6, 1.0, 0, ValueError),
    (6, 1.0, 1.5, TypeError), (0, 1.0, None, ValueError), (True, 1.0, None, TypeError),
    ("schema.json", 1.0, None, TypeError),
])
def test_bad_arguments(schema, eps, n, error) -> None:
    with pytest.raises(error):
        advise_model(schema, eps, n=n)


# --- |W| as the fit sizes it, and auto where no public fact decides ------------------------

def _numeric_schema(columns: int) -> dict:
    """``columns`` numeric columns on a 0-9 grid: d = columns + 1, every column numeric."""
    return {"target": {"name": "y", "labels": ["no", "yes"]},
            "columns": [{"name": f"x{i}", "type": "numeric", "lower": 0, "upper": 9,
                         "step": 1} for i in range(columns)]}


@pytest.mark.parametrize("columns", [24, 39, 134])
def test_w_is_the_one_the_fit_declares(columns) -> None:
    """The advice's |W| is the W OPDisc's fit declares for the schema (not d's alone): on an
    all-numeric table the estimator lowers R, and so does the advice."""
    from oracledp.estimators import OPDiscClassifier, RSPMClassifier
    from oracledp.estimators._space_spec import parameter_space

    schema = TableSchema.from_dict(_numeric_schema(columns))
    d = schema.n_features
    fs = schema.feature_schema()
    est = OPDiscClassifier(schema=fs)
    fitted = est._make_space(d, est._check_params())[0]  # what fit declares (public)
    rspm = RSPMClassifier(schema=fs)
    advice = advise_model(schema, 1.0)
    assert dict(advice.space_sizes) == {
        "opdisc": fitted.size(), "rspm": rspm._make_space(d, rspm._check_params())[0].size()}
    assert fitted.k_norm2_max < 4  # lowered by the numeric columns
    assert dict(advice.space_sizes)["opdisc"] < parameter_space("auto", d).size()
    assert advice.certifies("opdisc") == "likely"
    assert dict(advise_model(d, 1.0).space_sizes)["opdisc"] == parameter_space("auto", d).size()


def test_a_wide_numeric_table_gets_auto_with_the_lowered_w(tmp_path) -> None:
    path = tmp_path / "numeric.json"
    path.write_text(json.dumps(_numeric_schema(134)))  # d = 135, 134 numeric columns
    res = _models("--schema", path, "--epsilon", "1")
    assert res.exit_code == 0, res.output
    out = _flat(res.stdout)
    assert "d = 135" in out and "opdisc |W| = 36,451" in out  # ||k||^2 <= 2, not 2.1e8
    assert "opdisc likely" in out and "use: auto (oracledp fit --model auto: opdisc or dpsgd" in out
    assert "lowered to ||k||^2 <= 2" in out and "60 s" not in out


def test_the_advice_is_auto_where_opdisc_and_dpsgd_each_won_somewhere(files) -> None:
    from oracledp.datasets import table_schema

    for table, n in (("health_insurance", 15_590), ("doctor_visits", 14_130)):
        a = advise_model(table_schema(table), 1.0, n=n)
        assert (a.model, a.exact_model) == ("auto", "opdisc"), table
        assert any("--model auto" in r for r in a.reasons)
    a = advise_model(table_schema("titanic"), 1.0, n=921)  # the box: gaussian-rspm, auto named
    assert a.model == "gaussian-rspm" and "--model auto" in a.reasons[-1]
    assert advise_model(table_schema("titanic"), 0.5, n=921).model == "dpsgd"  # not measured


def test_plain_models_lists_auto() -> None:
    res = _models()
    assert res.exit_code == 0
    assert any(line.lstrip().startswith("auto ") for line in res.stdout.splitlines())


def test_feature_schema_form_agrees() -> None:
    schema = TableSchema.from_dict(_numeric_schema(39))
    assert advise_model(schema.feature_schema(), 2.0, n=5_000) == advise_model(schema, 2.0,
                                                                               n=5_000)


def test_the_advice_states_the_loss_per_person_and_the_cap_fit_holds_it_to(files):
    """With records_per_person 6 the advice said nothing of persons and advised an epsilon
    that fit then refused (12 per person, above the cap of 10)."""
    (files["tmp"] / "panel.json").write_text(json.dumps({**SCHEMA, "records_per_person": 6}))
    res = _models("--schema", files["tmp"] / "panel.json", "--epsilon", "2", files["data"])
    assert res.exit_code == 0, res.output
    said = _flat(res.stdout)
    assert "records_per_person 6: epsilon 2 per record is epsilon 12 per person" in said
    assert "refuse this: epsilon 12 per person is above the cap of 10" in said
    assert "use --epsilon at most 1.6666 " in said  # rounded down: fit accepts it
    res = _models("--schema", files["tmp"] / "panel.json", "--epsilon", "1", files["data"])
    said = _flat(res.stdout)
    assert "epsilon 6 per person" in said and "refuse this" not in said
    res = _models("--schema", files["schema"], "--epsilon", "2", files["data"])
    assert "per person" not in _flat(res.stdout)  # one record per person: nothing to add


@pytest.mark.parametrize("k", [6, 147, 281, 294, 99_991])
def test_the_per_person_cap_accepts_its_own_default_and_advice(k):
    """k * (10 / k) is above 10 in floating point for some k (147, 281, ...): accuracy-first's
    own default cap was refused; the advised epsilon (rounded down) passes too."""
    from oracledp._guidance import check_person_cap

    assert check_person_cap(10.0 / k, k, "--max-epsilon", False) is None
    assert check_person_cap(math.floor(10.0 / k * 1e4) / 1e4, k, "--epsilon", False) is None
    assert check_person_cap(10.0 / k * 1.001, k, "--epsilon", False) is not None
