"""`oracledp fit --model auto`: its options, its refusals (exit 2) and its one ledger entry.

Until model.json has an "auto" model type, `fit --model auto` is refused before anything is
read; the tests of the whole path replace the saving step (and only it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _small_table import ROWS, SCHEMA
from typer.testing import CliRunner

from oracledp import _cli_auto
from oracledp._cli import app
from oracledp._errors import OracleFailure
from oracledp.estimators import AutoClassifier, GaussianRSPMClassifier

ENV = {"COLUMNS": "200"}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    (tmp_path / "train.csv").write_text("x,c,y\n" + "\n".join(ROWS * 4) + "\n")
    (tmp_path / "budget.json").write_text('{"total_epsilon": 5, "total_delta": 1e-3}')
    return {"schema": tmp_path / "schema.json", "data": tmp_path / "train.csv",
            "budget": tmp_path / "budget.json", "dir": tmp_path}


def _fit(files: dict[str, Path], *extra: str) -> Any:
    return CliRunner().invoke(app, [
        "fit", str(files["data"]), "--schema", str(files["schema"]), "--model", "auto",
        "--seed", "0", "--out", str(files["dir"] / "out"), *extra], env=ENV)


def _refused(res: Any, start: str) -> None:
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
    assert res.stderr.startswith(f"error: {start}"), res.stderr


@pytest.fixture
def saving(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """model.json for auto replaced by a record of what would be saved."""
    saved: list[Any] = []

    def save_model(out: Any, *, model_type: str, schema: Any, estimator: Any,
                   overwrite: bool) -> Path:
        saved.append((model_type, estimator))
        path = Path(out) / "model.json"
        path.write_text("{}")
        return path

    monkeypatch.setattr(_cli_auto, "saving_supported", lambda: True)
    monkeypatch.setattr("oracledp.tabular.save_model", save_model)
    return saved


@pytest.mark.skipif(_cli_auto.saving_supported(), reason="model.json has an 'auto' type now")
def test_refused_before_anything_is_read_while_model_json_cannot_hold_it(files):
    res = _fit(files, "--epsilon", "1", "--budget", str(files["budget"]))
    _refused(res, "--model auto cannot be saved by `oracledp fit` yet")
    assert "Nothing was read or fitted" in res.stderr
    assert not (files["dir"] / "out").exists()
    assert "spends" not in json.loads(files["budget"].read_text())  # nothing booked


@pytest.mark.parametrize(("extra", "start"), [
    (["--epsilon", "1", "--space", "paper"], "--space does not apply to --model auto"),
    (["--epsilon", "1", "--alpha", "0.1"], "--alpha does not apply to --model auto"),
    ([], "--epsilon is required for --model auto"),
    (["--epsilon", "-1"], "--epsilon"),
    (["--epsilon", "1", "--delta", "2"], "--delta"),
    (["--epsilon", "1", "--time-limit", "0"], "--time-limit"),
    (["--epsilon", "1", "--solver", "nope"], "--solver"),
])
def test_bad_options_exit_2_before_anything_is_read(files, saving, extra, start):
    _refused(_fit(files, *extra), start)
    assert not (files["dir"] / "out").exists() and saving == []


def test_one_ledger_entry_with_the_selection_s_full_cost(files, saving):
    res = _fit(files, "--epsilon", "3", "--delta", "1e-4", "--solver", "brute",
               "--budget", str(files["budget"]))
    assert res.exit_code == 0, res.output
    ((model_type, est),) = saving
    assert model_type == "auto" and isinstance(est, AutoClassifier)
    assert [t.candidate for t in est.trials_] == ["gaussian-rspm", "dpsgd"]
    assert (est.guarantee_.epsilon, est.guarantee_.delta) == (3.0, 1e-4)
    (entry,) = json.loads(files["budget"].read_text())["spends"]
    assert (entry["epsilon"], entry["delta"]) == (3.0, 1e-4)
    assert entry["label"] == "oracledp fit --model auto --epsilon 3 --delta 0.0001"
    assert entry["status"] == "released" and entry["model"] == "auto"
    assert "model-selection.md" in entry["guarantee"]["source"]
    assert "(3, 0.0001)-DP" in res.stdout


def test_bad_data_is_refused_before_any_noise_and_not_charged(files, saving):
    files["data"].write_text("x,c,y\n" + "\n".join([*ROWS, "4,a,maybe"] * 4) + "\n")
    res = _fit(files, "--epsilon", "3", "--delta", "1e-4", "--solver", "brute",
               "--budget", str(files["budget"]))
    assert res.exit_code == 2, res.output
    assert "maybe" not in res.stderr
    assert json.loads(files["budget"].read_text()).get("spends", []) == []
    assert saving == []


def test_an_uncertified_trial_stops_the_selection_and_stays_charged(files, saving, monkeypatch):
    def fail(self, problem, epsilon, delta, oracle, rng, **kw):
        rng.standard_normal(2)
        raise OracleFailure("did not certify")

    monkeypatch.setattr(GaussianRSPMClassifier, "_release", fail)
    res = _fit(files, "--epsilon", "3", "--delta", "1e-4", "--solver", "brute",
               "--budget", str(files["budget"]))
    _refused(res, "the auto selection stopped: AutoClassifier: candidate 'gaussian-rspm' did "
                  "not certify")
    (entry,) = json.loads(files["budget"].read_text())["spends"]
    assert (entry["epsilon"], entry["delta"]) == (3.0, 1e-4)
    assert "failed after its mechanism started" in entry["status"]
    assert saving == [] and not (files["dir"] / "out" / "model.json").exists()
