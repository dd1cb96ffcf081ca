"""`oracledp fit --model auto`: its options, its refusals (exit 2), its one ledger entry, and
the saved selection that `predict` and `evaluate` use (model type "auto" in model.json).

Some tests replace the saving step (and only it) by a record of what would be saved; the
round-trip tests at the end save and load the real model.json."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from _small_table import ROWS, SCHEMA
from typer.testing import CliRunner

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

    monkeypatch.setattr("oracledp.tabular.save_model", save_model)
    return saved


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


def test_a_trial_share_its_accountant_refuses_is_refused_before_any_noise(files, saving,
                                                                         monkeypatch):
    """dpsgd's share of a tiny --epsilon is below what its accountant certifies: that depends
    on the options and n only, so the selection refuses before any trial draws (it had run the
    exact trial first and charged the whole budget)."""
    from oracledp.privacy import _noise

    def no_noise(*args, **kwargs):
        raise AssertionError("noise drawn before the refusal")

    monkeypatch.setattr(_noise, "gaussian", no_noise)
    monkeypatch.setattr(_noise, "laplace", no_noise)
    monkeypatch.setattr(GaussianRSPMClassifier, "_release", no_noise)
    res = _fit(files, "--epsilon", "1e-9", "--delta", "1e-8", "--solver", "brute",
               "--budget", str(files["budget"]))
    _refused(res, "the fit stopped: the selection gives candidate 'dpsgd' epsilon")
    said = " ".join(res.stderr.split())
    assert "of the total epsilon 1e-09" in said and "Nothing was drawn" in said
    assert json.loads(files["budget"].read_text()).get("spends", []) == []
    assert saving == []


def test_an_uncertified_trial_stops_the_selection_and_stays_charged(files, saving, monkeypatch):
    def fail(self, problem, epsilon, delta, oracle, rng, **kw):
        rng.standard_normal(2)
        raise OracleFailure("did not certify")

    monkeypatch.setattr(GaussianRSPMClassifier, "_release", fail)
    res = _fit(files, "--epsilon", "3", "--delta", "1e-4", "--solver", "brute",
               "--budget", str(files["budget"]))
    _refused(res, "the auto selection stopped: candidate 'gaussian-rspm' did not certify")
    said = " ".join(res.stderr.split())
    assert "--work-limit or --time-limit" in said
    assert "time_limit" not in said and "AutoClassifier" not in said  # the CLI's own options
    (entry,) = json.loads(files["budget"].read_text())["spends"]
    assert (entry["epsilon"], entry["delta"]) == (3.0, 1e-4)
    assert "failed after its mechanism started" in entry["status"]
    assert saving == [] and not (files["dir"] / "out" / "model.json").exists()


# --- the real model.json: fit -> save -> load -> predict --------------------------------------

def _python_auto(files: dict[str, Path], seed: int) -> Any:
    """The Python object the command line fits: make_estimator('auto') on the table's distinct
    rows with their counts (as `fit` reads it), same seed."""
    from oracledp._registry import make_estimator
    from oracledp.tabular import TableSchema, read_aggregated

    schema = TableSchema.from_dict(SCHEMA)
    X, y, counts = read_aggregated(files["data"], schema).weighted_rows()
    est = make_estimator("auto", schema, 3.0, 1e-4, oracle="brute", random_state=seed)
    return schema, est.fit(X, y, sample_weight=counts)


def _predict(files: dict[str, Path], *extra: str) -> Any:
    return CliRunner().invoke(app, ["predict", str(files["dir"] / "out"), str(files["data"]),
                                    *extra], env=ENV)


@pytest.mark.parametrize(("seed", "winner"), [(0, "dpsgd"), (1, "gaussian-rspm")])
def test_fit_save_load_predict_round_trip_equals_the_python_object(files, seed, winner):
    import numpy as np
    import pandas as pd

    res = _fit(files, "--epsilon", "3", "--delta", "1e-4", "--solver", "brute",
               "--seed", str(seed))
    assert res.exit_code == 0, res.output
    assert "selected model" in res.stdout and f"{winner} (the largest noisy score" in res.stdout
    schema, est = _python_auto(files, seed)
    assert est.selected_ == winner
    doc = json.loads((files["dir"] / "out" / "model.json").read_text())
    assert doc["model"] == "auto" and doc["coef"] == est.coef_.ravel().tolist()
    sel = doc["selection"]
    assert sel["selected"] == winner
    assert [t["candidate"] for t in sel["trials"]] == ["gaussian-rspm", "dpsgd"]
    assert [t["noisy_score"] for t in sel["trials"]] == est.noisy_scores_.tolist()
    assert [(t["epsilon_fit"], t["epsilon_score"], t["delta"]) for t in sel["trials"]] == [
        (t.epsilon_fit, t.epsilon_score, t.delta) for t in est.trials_]
    assert sel["selected_model"]["model"] == winner
    assert sel["selected_model"]["guarantee"]["epsilon"] == est.trials_[
        [t.candidate for t in est.trials_].index(winner)].epsilon_fit
    g = doc["guarantee"]  # the selection's full cost, not the selected trial's
    assert (g["epsilon"], g["delta"]) == (3.0, 1e-4) and "model-selection.md" in g["source"]
    assert sum(t["epsilon_fit"] + t["epsilon_score"] for t in sel["trials"]) == 3.0
    # predict: the selected model's labels, equal to the Python object's
    pred = _predict(files, "--scores")
    assert pred.exit_code == 0, pred.output
    out = pd.read_csv(io.StringIO(pred.stdout), dtype={"prediction": str})
    df = pd.read_csv(files["data"])
    X = schema.encode(df)
    assert out["prediction"].tolist() == est.predict(X).tolist()
    decision = est.decision_function(X)
    want = 1 / (1 + np.exp(-decision)) if winner == "dpsgd" else decision  # dpsgd: logistic
    np.testing.assert_allclose(out["score"].to_numpy(), want, rtol=1e-12)
    ev = CliRunner().invoke(app, ["evaluate", str(files["dir"] / "out"), str(files["data"])],
                            env=ENV)
    assert ev.exit_code == 0, ev.output
    acc = float((est.predict(X) == schema.labels_of(df)).mean())
    assert f"accuracy {acc:.4f}" in ev.stdout
    assert f"model: auto (selected: {winner}); guarantee of the training: (3, 0.0001)-DP" \
        in ev.stdout


def test_the_ledger_charges_the_saved_guarantee_the_selection_s_total(files):
    res = _fit(files, "--epsilon", "3", "--delta", "1e-4", "--solver", "brute",
               "--budget", str(files["budget"]))
    assert res.exit_code == 0, res.output
    (entry,) = json.loads(files["budget"].read_text())["spends"]
    doc = json.loads((files["dir"] / "out" / "model.json").read_text())
    assert (entry["epsilon"], entry["delta"]) == (3.0, 1e-4)
    assert entry["guarantee"] == doc["guarantee"]
    assert "charged epsilon 3, delta 0.0001" in res.stdout


def test_bad_data_is_refused_before_anything_is_saved_or_charged(files):
    files["data"].write_text("x,c,y\n" + "\n".join([*ROWS, "42,a,no"] * 4) + "\n")
    res = _fit(files, "--epsilon", "3", "--delta", "1e-4", "--solver", "brute",
               "--budget", str(files["budget"]))
    _refused(res, str(files["data"]))
    # the paths (a temporary directory such as pytest-422) are not record values
    assert "42" not in res.stderr.replace(str(files["dir"]), "")
    assert json.loads(files["budget"].read_text()).get("spends", []) == []
    assert not (files["dir"] / "out" / "model.json").exists()


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["selection"]["trials"][0].update(epsilon_score=1.0),
     "the guarantee's epsilon must be the sum of the trials' fit and score epsilons"),
    (lambda d: d["selection"].update(selected="opdisc"),
     "'selected' must be the candidate of one of its trials"),
    (lambda d: d.pop("selection"), "missing ['selection']"),
    (lambda d: d.update(coef=[0.5, 0, 0, 0]), "the selected model"),
])
def test_a_tampered_selection_is_refused_by_predict(files, edit, message):
    assert _fit(files, "--epsilon", "3", "--delta", "1e-4", "--solver", "brute",
                "--seed", "1").exit_code == 0
    path = files["dir"] / "out" / "model.json"
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    res = _predict(files)
    _refused(res, f"{path}: invalid model file")
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
