"""`oracledp fit --model gaussian-rspm` end to end, and its refusals.

* A tiny CSV fits with the brute-force and the HiGHS oracle; the saved model has type
  ``gaussian-rspm``, weights in {-1, 0, 1}, an approximate guarantee that holds and names the
  proof, |W| and sigma; both oracles release the same weights for the same seed; ``predict``
  reads the model back.
* Bad inputs are refused with one ``error:`` line and exit 2 before DATA is read: --delta
  outside (0, 1), --epsilon <= 0, an option of another model; a saved file with weights
  outside {-1, 0, 1} is refused on load.
* The saved ``params.space`` is the W of the fit resolved ("norm2=4,bound=1" on 24 features,
  not "auto"); weights outside it (all 24 equal to 1), a space that is not a finite resolved
  W ("norm2=1e400", "auto") or another W than the guarantee's (also for opdisc and rspm) are
  refused by load_model, predict and evaluate (exit 2, one ``error:`` line).
* The default delta 1/n^2 gets a caution on a table of 6 records (not on 24, nor when
  --delta is given).
* ``oracledp models`` lists gaussian-rspm only with ``--all``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _small_table import ROWS, SCHEMA
from typer.testing import CliRunner

from oracledp._cli import app
from oracledp._errors import ModelFileError
from oracledp.tabular import load_model

ENV = {"COLUMNS": "200"}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    (tmp_path / "train.csv").write_text("x,c,y\n" + "\n".join(ROWS * 4) + "\n")
    return {"schema": tmp_path / "schema.json", "data": tmp_path / "train.csv",
            "out": tmp_path / "model", "tmp": tmp_path}


def _fit(files: dict[str, Path], *extra: str, out: Path | str | None = None):
    return CliRunner().invoke(app, ["fit", str(files["data"]), "--schema", str(files["schema"]),
                                    "--model", "gaussian-rspm", "--seed", "0",
                                    "--out", str(files["out"] if out is None else out), *extra],
                            env=ENV)


def test_fit_end_to_end_brute_and_highs(files) -> None:
    res = _fit(files, "--epsilon", "1", "--delta", "1e-5", "--solver", "brute")
    assert res.exit_code == 0, res.output
    assert "gaussian-rspm" in res.stdout and "epsilon 1, delta 1e-05 (approximate)" in res.stdout
    saved = load_model(files["out"])
    g = saved.guarantee
    assert saved.model_type == "gaussian-rspm" and g.holds and g.requires_exact_oracle
    assert (g.epsilon, g.delta, str(g.kind)) == (1.0, 1e-5, "approximate")
    assert "gaussian-rspm-calibration.md" in g.source
    assert "|W| = 81" in g.calibration and "m = 8" in g.calibration  # d = 4 encoded features
    assert set(saved.coef.tolist()) <= {-1.0, 0.0, 1.0}
    res = _fit(files, "--epsilon", "1", "--delta", "1e-5", "--solver", "highs",
               out=files["tmp"] / "highs")
    assert res.exit_code == 0, res.output
    assert (load_model(files["tmp"] / "highs").coef == saved.coef).all()  # same draw, same argmin
    pred = CliRunner().invoke(app, ["predict", str(files["out"]), str(files["data"])], env=ENV)
    assert pred.exit_code == 0, pred.output
    lines = pred.stdout.strip().splitlines()
    assert lines[0] == "prediction" and len(lines) == len(ROWS) * 4 + 1
    assert set(lines[1:]) <= {"no", "yes"}


def test_default_delta_is_one_over_n_squared(files) -> None:
    res = _fit(files, "--epsilon", "0.5", "--solver", "brute")
    assert res.exit_code == 0, res.output
    assert load_model(files["out"]).guarantee.delta == pytest.approx(1.0 / 24**2)
    assert "default 1/n^2" not in res.stdout  # 1/576 is far below 1/24: no caution


def test_the_default_delta_on_a_tiny_table_gets_a_caution_an_explicit_one_does_not(files):
    files["data"].write_text("x,c,y\n" + "\n".join(ROWS) + "\n")  # 6 records: 1/36
    res = _fit(files, "--epsilon", "1", "--solver", "brute")
    assert res.exit_code == 0, res.output
    said = " ".join(res.stdout.split())
    assert said.count("default 1/n^2") == 1, res.stdout
    assert "note: delta 0.0278 per record comes from the default 1/n^2" in said
    res = _fit(files, "--epsilon", "1", "--delta", "1e-6", "--solver", "brute",
               out=files["tmp"] / "explicit")
    assert res.exit_code == 0 and "default 1/n^2" not in res.stdout, res.output


def test_an_empty_out_is_refused_not_the_current_directory(files, monkeypatch) -> None:
    monkeypatch.chdir(files["tmp"])
    for empty in ("", "   "):
        res = _fit(files, "--epsilon", "1", "--solver", "brute", out=empty)
        assert res.exit_code == 2 and res.stderr.startswith("error: --out is empty"), res.output
    assert not (files["tmp"] / "model.json").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--epsilon", "1", "--delta", "0"], "error: --delta must be in the open interval (0, 1)"),
    (["--epsilon", "1", "--delta", "1.5"], "error: --delta must be in the open interval (0, 1)"),
    (["--epsilon", "0"], "error: --epsilon"),
    ([], "error: --epsilon is required for --model gaussian-rspm"),
    (["--epsilon", "1", "--alpha", "0.2"], "error: --alpha does not apply to --model "
                                          "gaussian-rspm"),
    (["--epsilon", "1", "--time-limit", "0"], "error: --time-limit must be"),
])
def test_bad_inputs_are_refused_before_reading(files, args, message) -> None:
    files["data"].unlink()
    res = _fit(files, *args)
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
    assert res.stderr.startswith(message) and res.stderr.count("\n") == 1, res.stderr
    assert not files["out"].exists()


def test_saved_weights_outside_the_box_are_refused(files) -> None:
    assert _fit(files, "--epsilon", "1", "--solver", "brute").exit_code == 0
    path = files["out"] / "model.json"
    doc = json.loads(path.read_text())
    doc["coef"][0] = 0.5
    path.write_text(json.dumps(doc))
    with pytest.raises(ModelFileError, match="gaussian-rspm coefficients must be -1, 0 or 1"):
        load_model(files["out"])


def test_models_lists_it_with_all_only() -> None:
    plain = CliRunner().invoke(app, ["models"], env=ENV)
    full = CliRunner().invoke(app, ["models", "--all"], env=ENV)
    assert plain.exit_code == full.exit_code == 0
    assert "gaussian-rspm" not in plain.stdout
    assert "gaussian-rspm" in full.stdout and "gaussian-rspm-calibration.md" in full.stdout


# --- the saved W (issue 37): 24 encoded features, where RSPM's "auto" W is ||k||^2 <= 4 ------

WIDE_SCHEMA = {
    "target": {"name": "y", "labels": ["no", "yes"]},
    "columns": [{"name": f"x{j}", "type": "numeric", "lower": 0, "upper": 1, "step": 1}
                for j in range(23)],  # with the intercept: d = 24
}


def _wide_model(files: dict[str, Path], model: str = "gaussian-rspm") -> Path:
    (files["tmp"] / "wide.json").write_text(json.dumps(WIDE_SCHEMA))
    rows = [[(i * 7 + j * 3) % 5 % 2 for j in range(23)] for i in range(30)]
    (files["tmp"] / "wide.csv").write_text(
        ",".join(f"x{j}" for j in range(23)) + ",y\n"
        + "".join(",".join(map(str, r)) + ("," + ("yes" if r[0] else "no")) + "\n"
                  for r in rows))
    out = files["tmp"] / f"wide-{model}"
    res = CliRunner().invoke(app, ["fit", str(files["tmp"] / "wide.csv"), "--schema",
                                   str(files["tmp"] / "wide.json"), "--model", model,
                                   "--epsilon", "1", "--seed", "0", "--out", str(out)], env=ENV)
    assert res.exit_code == 0, res.output
    return out


def _refused_by_predict_and_evaluate(model_dir: Path, data: Path, match: str) -> None:
    with pytest.raises(ModelFileError, match=match):
        load_model(model_dir)
    for cmd in ("predict", "evaluate"):
        res = CliRunner().invoke(app, [cmd, str(model_dir), str(data)], env=ENV)
        assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
        assert res.stdout == ""
        assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
        assert match in res.stderr


def _edit(model_dir: Path, **changes) -> None:
    path = model_dir / "model.json"
    doc = json.loads(path.read_text())
    for key, value in changes.items():
        if key == "space":
            doc["params"]["space"] = value
        else:
            doc[key] = value
    path.write_text(json.dumps(doc))


def test_the_saved_space_is_the_fitted_w(files) -> None:
    out = _wide_model(files)
    saved = load_model(out)
    assert saved.params["space"] == "norm2=4,bound=1"  # the resolved "auto", not "auto"
    assert "{k in Z^24 : |k_j| <= 1, ||k||^2 <= 4}" in saved.guarantee.notes
    assert (saved.coef != 0).sum() <= 4
    assert _fit(files, "--epsilon", "1", "--solver", "brute").exit_code == 0
    assert load_model(files["out"]).params["space"] == "norm2=4,bound=1"  # the box, d = 4


def test_weights_outside_the_saved_w_are_refused(files) -> None:
    """All 24 weights 1: in {-1, 0, 1}^24 but ||k||^2 = 24 > 4."""
    out = _wide_model(files)
    _edit(out, coef=[1.0] * 24)
    _refused_by_predict_and_evaluate(out, files["tmp"] / "wide.csv", "parameter space W")


@pytest.mark.parametrize("space", ["norm2=1e400", "auto", "norm2=24,bound=1"])
def test_a_space_other_than_the_fitted_w_is_refused(files, space) -> None:
    out = _wide_model(files)
    _edit(out, space=space)
    _refused_by_predict_and_evaluate(out, files["tmp"] / "wide.csv", "parameter space")
    _edit(out, coef=[1.0] * 24)  # with weights that the edited W would contain
    _refused_by_predict_and_evaluate(out, files["tmp"] / "wide.csv", "parameter space")


@pytest.mark.parametrize("model", ["opdisc", "rspm"])
def test_an_edited_space_of_opdisc_and_rspm_is_refused(files, model) -> None:
    """A wider W than the fitted one, which its guarantee (W, |W|, shift) does not describe."""
    out = _wide_model(files, model)
    # OPDisc on 30 records at eps 1: its noise rule lowers W to ||k||^2 <= 1
    assert load_model(out).params["space"] == {"opdisc": "norm2=1,bound=1",
                                               "rspm": "norm2=4,bound=1"}[model]
    _edit(out, space="norm2=24,bound=1")
    _refused_by_predict_and_evaluate(out, files["tmp"] / "wide.csv", "parameter space W")
