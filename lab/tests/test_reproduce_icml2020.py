"""The ICML 2020 Adult reproduction: end to end on a small configuration, resume, failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import oracledp.learners
from lab import icml2020 as exp
from lab.__main__ import app
from oracledp import OracleFailure


def test_quick_cli_end_to_end_and_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "repro"
    args = ["icml2020-adult", "--quick", "--methods", "rspm", "--runs", "2",
            "--epsilon", "1", "--out", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    runs = exp.load_runs(out)
    assert [(r["method"], r["eps"], r["run"]) for r in runs] == [("rspm", 1.0, 0), ("rspm", 1.0, 1)]
    for r in runs:
        assert r["certified"] and not r["failed"] and r["train_acc"] > 0.65
        assert r["guarantee"]["epsilon"] == 1.0 and r["guarantee"]["kind"] == "pure"
        assert r["seed"] == exp.run_seed(0, "rspm", 1.0, r["run"])
    for name in ("runs.csv", "summary.json", "accuracy_vs_epsilon.png", "runtime_histogram.png"):
        assert (out / name).exists()
    assert "rspm" in res.output and "failures" in res.output
    # resume: nothing is redone; a torn last line (interruption) is redone
    lines = (out / "runs.jsonl").read_text().splitlines()
    (out / "runs.jsonl").write_text(lines[0] + "\n" + lines[1][:20] + "\n")
    drawn: list[int] = []  # the figures were drawn and checked above: not redrawn
    monkeypatch.setattr(exp, "write_figures", lambda runs, out: drawn.append(len(runs)) or [])
    res2 = CliRunner().invoke(app, args)
    assert res2.exit_code == 0, res2.output
    again = exp.load_runs(out)
    assert sorted(r["key"] for r in again) == sorted(r["key"] for r in runs)
    assert drawn == [2]  # the resumed run drew its figures from both runs
    redone = next(r for r in again if r["run"] == 1)
    assert redone["train_acc"] == runs[1]["train_acc"]  # same seed, same result


def test_failures_are_recorded_not_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(*args, **kwargs):
        raise OracleFailure("time limit", result=None)

    # the reproduction looks rspm up in oracledp.learners when it runs
    monkeypatch.setattr(oracledp.learners, "rspm", failing)
    cfg = exp.Config(epsilons=(1.0,), runs=1, methods=("rspm",))
    runs = exp.run_reproduction(cfg, tmp_path)
    assert runs[0]["failed"] and "train_acc" not in runs[0]
    row = exp.summarize(runs)[0]
    assert row["failures"] == 1 and row["train_mean"] != row["train_mean"]  # NaN: nothing counted
    assert json.loads((tmp_path / "runs.jsonl").read_text())["failed"] is True


def test_bad_configuration_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown methods"):
        exp.Config(methods=("opdisc", "svm"))
    with pytest.raises(ValueError):
        exp.Config(epsilons=(0.0,))
    res = CliRunner().invoke(app, ["icml2020-adult", "--epsilon", "1,abc"])
    assert res.exit_code != 0 and "Traceback" not in res.output
