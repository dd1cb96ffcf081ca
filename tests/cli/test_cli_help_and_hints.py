"""Help texts say what the commands do (no internal references, every model an option applies
to); --scheduler without --engine dask and an opdisc-only --solver for rspm are refused with
one line; predict on a `synth fit` directory and schema infer on a semicolon file say what to
do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _small_table import ROWS, SCHEMA
from typer.testing import CliRunner

from oracledp._cli import app

ENV = {"COLUMNS": "300"}


def _help(*command: str) -> str:
    res = CliRunner().invoke(app, [*command, "--help"], env=ENV)
    assert res.exit_code == 0, res.output
    return " ".join(res.stdout.replace("│", " ").split())


def _one_error(res) -> str:
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    (tmp_path / "train.csv").write_text("x,c,y\n" + "\n".join(ROWS * 4) + "\n")
    return {"schema": tmp_path / "schema.json", "data": tmp_path / "train.csv",
            "dir": tmp_path}


def test_help_texts_are_accurate():
    predict = _help("predict")
    assert ":mod:" not in predict and "_chunks" not in predict
    assert '"out_of_bounds": "clip" are still clipped' in predict
    fit = _help("fit")
    assert "opdisc/gaussian-rspm/opsamp/dpsgd/auto" in fit
    assert "Seconds per oracle call (opdisc/rspm/gaussian-rspm/auto)" in fit
    assert "opdisc/rspm/gaussian-rspm/auto; LPs" in fit
    assert "highs-monolithic and cpsat for opdisc only" in fit
    assert "ends there (default: 10)." in fit and "there ." not in fit
    check = _help("schema", "check")
    assert "release" not in check and "the same problems found either way" in check


@pytest.mark.parametrize("command, rest", [
    (["fit"], ["--model", "rspm", "--epsilon", "1", "--out", "m"]),
    (["synth", "fit"], ["--epsilon", "1", "--out", "m"]),
    (["schema", "check"], []),
])
def test_scheduler_without_dask_is_refused_before_reading(files, command, rest):
    missing = str(files["dir"] / "not-read.csv")
    res = CliRunner().invoke(app, [*command, missing, "--schema", str(files["schema"]), *rest,
                                   "--scheduler", "tcp://nowhere:8786"], env=ENV)
    line = _one_error(res)
    assert "--scheduler applies to --engine dask only" in line and "not-read" not in line


@pytest.mark.parametrize("solver", ["cpsat", "highs-monolithic"])
@pytest.mark.parametrize("model", ["rspm", "gaussian-rspm"])
def test_opdisc_only_solvers_are_refused_for_rspm_before_reading(files, model, solver):
    res = CliRunner().invoke(app, ["fit", str(files["dir"] / "not-read.csv"), "--schema",
                                   str(files["schema"]), "--model", model, "--epsilon", "1",
                                   "--solver", solver, "--out",
                                   str(files["dir"] / "m")], env=ENV)
    line = _one_error(res)
    assert f"--solver {solver} works for --model opdisc only" in line


def test_predict_and_evaluate_on_a_synth_fit_directory_say_what_it_is(files):
    from oracledp._cli_predict import SYNTH_MODEL_FILE
    from oracledp.synth._table_synthesizer import MODEL_FILE

    assert SYNTH_MODEL_FILE == MODEL_FILE
    synth = files["dir"] / "synth"
    res = CliRunner().invoke(app, ["synth", "fit", str(files["data"]), "--schema",
                                   str(files["schema"]), "--epsilon", "1", "--seed", "0",
                                   "--out", str(synth)], env=ENV)
    assert res.exit_code == 0, res.output
    for command in ("predict", "evaluate"):
        res = CliRunner().invoke(app, [command, str(synth), str(files["data"])], env=ENV)
        line = _one_error(res)
        assert "synthetic-data model" in line and "oracledp synth sample" in line
        assert "No such file" not in line


def test_schema_infer_on_a_semicolon_file_suggests_sep(files):
    semi = files["dir"] / "semi.csv"
    semi.write_text("a;const;y\n1;2;yes\n3;2;no\n")
    res = CliRunner().invoke(app, ["schema", "infer", str(semi), "--target", "y"], env=ENV)
    line = _one_error(res)
    assert "try --sep ';'" in line and "single column" in line
    res = CliRunner().invoke(app, ["schema", "infer", str(files["data"]), "--target", "zz"],
                             env=ENV)
    assert "is not in the table" in _one_error(res) and "--sep" not in res.stderr
    assert _one_error(res).startswith(f"error: {files['data']}: ")  # which file, as elsewhere
    one = files["dir"] / "one.csv"
    one.write_text("a,y\n1,yes\n")
    res = CliRunner().invoke(app, ["schema", "infer", str(one), "--target", "y"], env=ENV)
    assert _one_error(res).startswith(f"error: {one}: the target column 'y' must hold")


def test_the_delimiter_hint_names_the_python_parameter_in_python(files):
    """The CLI says --sep (above); a Python caller gets its own parameter names: ``sep=`` for
    read_csv and the real table, ``synthetic_sep=`` for evaluate_synthetic's synthetic one."""
    from oracledp.synth import evaluate_synthetic
    from oracledp.tabular import TableSchema, read_csv

    semi = files["dir"] / "semi.csv"
    semi.write_text(files["data"].read_text().replace(",", ";"))
    schema = TableSchema.from_json(files["schema"].read_text())
    with pytest.raises(ValueError, match=r"try sep=';'") as err:
        read_csv(semi, schema, with_target=True)
    assert "--sep" not in str(err.value)
    with pytest.raises(ValueError, match=r"try synthetic_sep=';'") as err:
        evaluate_synthetic(semi, files["data"], schema)
    with pytest.raises(ValueError, match=r"try sep=';'") as err:
        evaluate_synthetic(files["data"], semi, schema)
    assert "synthetic_sep" not in str(err.value)
