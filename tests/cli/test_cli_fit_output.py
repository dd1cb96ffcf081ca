"""`oracledp fit`: exit codes, advice, --out / --force and what the summary prints.

* an exact-oracle fit whose oracle does not certify exits 2 with advice that fits the CLI
  (--time-limit, another --solver or --model, a coarser public grid), never the Python-only
  ``allow_uncertified``, and writes nothing;
* ``--out`` holding a saved model is refused before any data is read or noise drawn, unless
  ``--force``;
* the fit's wall time (a non-private diagnostic) is printed only with ``--verbose``;
* public options are refused by the library's own validators, named as options, before DATA
  is read; from Python the same rules name the parameter.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _heartbeat import beats, slow_fit_with_fast_beats
from _small_table import ROWS, SCHEMA
from typer.testing import CliRunner

from oracledp._cli import app
from oracledp.oracles import _registry as oracle_registry
from oracledp.tabular import load_model

ENV = {"COLUMNS": "200"}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    (tmp_path / "train.csv").write_text("x,c,y\n" + "\n".join(ROWS * 4) + "\n")
    return {"schema": tmp_path / "schema.json", "data": tmp_path / "train.csv",
            "out": tmp_path / "model"}


def _fit(files: dict[str, Path], *extra: str, model: str = "dpsgd"):
    return CliRunner().invoke(app, ["fit", str(files["data"]), "--schema", str(files["schema"]),
                                    "--model", model, "--epsilon", "1", "--seed", "0",
                                    "--out", str(files["out"]), *extra], env=ENV)


@pytest.mark.parametrize("model", ["opdisc", "rspm", "gaussian-rspm"])
def test_uncertified_exact_oracle_exits_2_with_cli_advice(files, monkeypatch, model,
                                                        uncertified_oracle):
    monkeypatch.setitem(oracle_registry._REGISTRY, "uncertified",
                        (lambda **options: uncertified_oracle, "test: never certifies"))
    res = _fit(files, "--solver", "uncertified", "--time-limit", "7", model=model)
    assert res.exit_code == 2, res.output
    assert isinstance(res.exception, SystemExit)  # one message, no traceback
    err = res.stderr
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "did not certify" in err and "nothing was released or written" in err
    assert "allow_uncertified" not in err  # the CLI has no such option
    for advice in ("--time-limit (now 7s", "--solver", "coarser public grid", "--model dpsgd"):
        assert advice in err, advice
    assert res.stdout.strip() == "" and not files["out"].exists()


def test_uncertified_with_the_default_limit_advises_more_work(files, monkeypatch,
                                                              uncertified_oracle):
    """No limit given: the oracle ran under its default deterministic work limit, and the
    advice names --work-limit (not a time limit the fit did not have)."""
    monkeypatch.setitem(oracle_registry._REGISTRY, "uncertified",
                        (lambda **options: uncertified_oracle, "test: never certifies"))
    res = _fit(files, "--solver", "uncertified", model="opdisc")
    assert res.exit_code == 2, res.output
    err = res.stderr
    assert "a larger --work-limit (now the default deterministic work limit" in err
    assert "--time-limit" not in err


def test_out_with_a_saved_model_is_refused_unless_force(files, monkeypatch):
    res = _fit(files)
    assert res.exit_code == 0, res.output
    before = (files["out"] / "model.json").read_text()

    from oracledp.baselines import DPSGDLogisticRegression

    def no_fit(self, *a, **k):  # pragma: no cover - must not run
        raise AssertionError("fit reached although --out holds a model")

    with monkeypatch.context() as m:
        m.setattr(DPSGDLogisticRegression, "fit", no_fit)
        res = _fit(files, "--seed", "1")
    assert res.exit_code == 2, res.output
    assert isinstance(res.exception, SystemExit)
    assert "already holds model.json" in res.stderr and "--force" in res.stderr
    assert (files["out"] / "model.json").read_text() == before  # untouched

    (files["out"] / "model.json").unlink()  # the plot alone is refused too
    res = _fit(files)
    assert res.exit_code == 2 and "coefficients.png" in res.stderr

    res = _fit(files, "--force", "--model", "rspm", model="rspm")
    assert res.exit_code == 0, res.output
    assert load_model(files["out"]).model_type == "rspm"  # replaced
    res = _fit(files, "--force")
    assert res.exit_code == 0, res.output
    assert load_model(files["out"]).model_type == "dpsgd"


def test_out_that_is_a_file_is_refused(files):
    files["out"].write_text("not a directory")
    res = _fit(files)
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit)
    assert files["out"].read_text() == "not a directory"


_SECONDS = re.compile(r"\b\d+\.\d+s\b")


def test_wall_time_only_with_verbose(files):
    res = _fit(files)
    assert res.exit_code == 0, res.output
    out = res.stdout.replace(str(files["out"]), "<out>")
    assert not re.search(r"\btime\b", out, flags=re.IGNORECASE), out
    assert not _SECONDS.search(out), out
    assert "guarantee holds" in res.stdout  # the summary itself is still printed
    res = _fit(files, "--force", "--verbose")
    assert res.exit_code == 0, res.output
    assert "time (non-private diagnostic)" in res.stdout
    assert _SECONDS.search(res.stdout)


@pytest.mark.parametrize("model, args, option", [
    ("opdisc", ["--delta", "2"], "--delta must be in the open interval (0, 1)"),
    ("dpsgd", ["--delta", "0"], "--delta must be in the open interval (0, 1)"),
    ("opdisc", ["--time-limit", "0"], "--time-limit must be a finite number > 0"),
    ("rspm", ["--work-limit", "0"], "--work-limit must be an integer >= 1"),
    ("rspm", ["--solver", "gurobi9"], "--solver: unknown solver 'gurobi9'"),
    ("opdisc", ["--model", "svm"], "--model must be one of"),
])
def test_public_options_are_refused_by_the_library_validators_before_reading(
        files, model, args, option):
    """Each option is checked by the validator the estimator applies to the same parameter,
    given the option's name, before DATA is read (here DATA does not exist)."""
    files["data"].unlink()
    res = _fit(files, *args, model=model)
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
    assert res.stderr.startswith(f"error: {option}") and res.stderr.count("\n") == 1
    assert not files["out"].exists()


def test_accuracy_first_alpha_is_checked_before_reading(files):
    files["data"].unlink()
    res = CliRunner().invoke(app, ["fit", str(files["data"]), "--schema", str(files["schema"]),
                                   "--model", "accuracy-first", "--alpha", "-1",
                                   "--out", str(files["out"])], env=ENV)
    assert res.exit_code == 2 and res.stderr.startswith("error: --alpha must be a finite")


def test_python_errors_name_the_parameter():
    """The same rules, called from Python, name the Python parameter."""
    import numpy as np

    from oracledp import make_estimator
    from oracledp.tabular import TableSchema

    schema = TableSchema.from_dict(SCHEMA)
    X, y = np.array([[0.1, 1.0, 0.0, 1.0], [0.9, 0.0, 1.0, 1.0]]), ["no", "yes"]
    for params, message in (({"epsilon": -1.0}, "epsilon must be a finite number > 0"),
                            ({"epsilon": 1.0, "delta": 2.0}, "delta must be in the open"),
                            ({"epsilon": 1.0, "time_limit": 0.0}, "time_limit must be"),
                            ({"epsilon": 1.0, "oracle": "gurobi9"}, "unknown oracle 'gurobi9'")):
        est = make_estimator("opdisc", schema, **params)
        with pytest.raises(ValueError, match=re.escape(message)):
            est.fit(X, y)
    with pytest.raises(ValueError, match="name must be one of"):
        make_estimator("svm", schema, 1.0)
    # a parameter the model does not take is refused, never silently ignored
    for model, eps, delta, kw, bad in (
            ("dpsgd", 1.0, 1e-6, {"oracle": "brute"}, "oracle="),
            ("opsamp", 1.0, 1e-6, {"alpha": 0.2}, "alpha="),
            ("opdisc", 1.0, 1e-6, {"max_epsilon": 2.0}, "max_epsilon="),
            ("accuracy-first", 1.0, None, {}, "epsilon="),
            ("accuracy-first", None, None, {"time_limit": 5.0}, "time_limit="),
            ("rspm", 1.0, 1e-6, {}, "delta="),
            ("dpsgd", 1.0, 1e-6, {"work_limit": 10}, "work_limit="),
            ("opsamp", 1.0, 1e-6, {"space": "paper"}, "space=")):
        with pytest.raises(ValueError, match=f"{model} does not take .*{re.escape(bad)}"):
            make_estimator(model, schema, eps, delta, **kw)
    assert make_estimator("accuracy-first", schema, alpha=0.2).alpha == 0.2
    assert make_estimator("opdisc", schema, 1.0, 1e-6, space=None).space == "auto"
    unconfirmed = TableSchema.from_dict({**SCHEMA, "target": {**SCHEMA["target"],
                                                              "from_data": True}})
    with pytest.raises(ValueError, match="from_data"):  # refused for Python as for the CLI
        make_estimator("opdisc", unconfirmed, 1.0)


_TABLE_ROW = re.compile(r"^[│|] (\S+) +[│|] +([-+][0-9.e+-]+) [│|]$", re.M)


def test_a_wide_table_lists_the_nonzero_coefficients_and_counts_the_zeros(tmp_path):
    """OPDisc on 22 encoded features releases at most 4 nonzero weights (||k||^2 <= 4):
    ``fit`` lists those and counts the rest, not one ``+0`` line per feature."""
    levels = [f"l{i:02d}" for i in range(20)]
    schema = {"target": {"name": "y", "labels": ["no", "yes"]},
              "columns": [{"name": "x", "type": "numeric", "lower": 0, "upper": 10, "step": 1},
                          {"name": "c", "type": "categorical", "levels": levels}]}
    rows = [f"{i % 11},{levels[i % 20]},{'yes' if i % 11 > 5 else 'no'}" for i in range(60)]
    files = {"schema": tmp_path / "schema.json", "data": tmp_path / "train.csv",
             "out": tmp_path / "model"}
    files["schema"].write_text(json.dumps(schema))
    files["data"].write_text("x,c,y\n" + "\n".join(rows) + "\n")
    res = _fit(files, model="opdisc")
    assert res.exit_code == 0, res.output
    coef = dict(zip(load_model(files["out"]).feature_names, load_model(files["out"]).coef,
                    strict=True))
    assert len(coef) == 22
    nonzero = {name: c for name, c in coef.items() if c != 0}
    listed = dict(_TABLE_ROW.findall(res.stdout))
    assert set(listed) == set(nonzero)  # the zeros are not listed
    for name, c in nonzero.items():
        assert float(listed[name]) == pytest.approx(c, rel=1e-3)
    assert (f"{len(nonzero)} nonzero coefficient(s) listed; the other {22 - len(nonzero)} of "
            "the 22 encoded features have coefficient 0") in " ".join(res.stdout.split())


def test_a_narrow_table_lists_every_coefficient(files):
    res = _fit(files, model="rspm")
    assert res.exit_code == 0, res.output
    saved = load_model(files["out"])
    listed = dict(_TABLE_ROW.findall(res.stdout))
    assert list(listed) == list(saved.feature_names)  # zeros included, in order
    assert "nonzero coefficient(s) listed" not in res.stdout


def test_fit_prints_progress_lines_when_stderr_is_not_a_terminal(files, monkeypatch):
    """A fit whose stderr went to a log printed nothing until it ended (a reviewer's 64-column
    fit: 50 s of silence); synth fit printed a line every 30 s.  Both share the heartbeat now:
    here every 0.1 s of a fit slowed to 0.5 s, and the model is still saved."""
    import oracledp._cli_table as cli_table
    from oracledp.baselines import DPSGDLogisticRegression

    slow_fit_with_fast_beats(monkeypatch, cli_table, DPSGDLogisticRegression)
    res = _fit(files)
    assert res.exit_code == 0, res.output
    assert len(beats(res.stderr, "fit --model dpsgd: fitting: ")) >= 3
    assert (files["out"] / "model.json").exists()
