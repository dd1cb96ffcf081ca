"""The Accuracy First reproduction: quick CLI path for both tasks, resume, failures, bad input."""

from __future__ import annotations

import csv
import importlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lab import accuracy_first as exp
from lab.__main__ import app
from oracledp.erm import NoHaltError

N = 5_000
FIGURES = ("privacy_loss.png", "excess_risk.png", "privacy_breakdown.png", "hypothesis_norms.png")


def _invoke(*args: str) -> object:
    return CliRunner().invoke(app, ["accuracy-first", *args])


def _check_record(r: dict) -> None:
    assert r["seed"] == exp.trial_seed(0, r["method"], r["alpha"], r["trial"])
    if r["halted"]:
        assert r["failure"] is None
        eps, test, hyp = r["epsilon"], r["epsilon_test"], r["epsilon_hypothesis"]
        assert all(math.isfinite(x) and x >= 0 for x in (eps, test, hyp))
        assert test > 0
        assert eps >= (test + hyp) * (1 - 1e-12)  # the reported loss is never below its parts
        if eps < 700:
            assert r["exp_epsilon"] == pytest.approx(math.exp(eps))
        else:  # e^eps beyond the float range (ridge at small n): recorded as null
            assert r["exp_epsilon"] is None
        assert r["excess_risk"] is not None and r["success"] == (r["excess_risk"] <= r["alpha"])
        assert 0 <= r["theta_norm"] <= r["theta_max_norm"]
        assert 0 <= r["stopping_index"] < r["levels"]
    else:  # an explicit failure with the loss of the refusal
        assert r["failure"] == "no-halt" and not r["success"]
        assert r["epsilon"] is None and math.isfinite(r["epsilon_refusal"])
    assert r["eps_min"] == pytest.approx(1 / N)


@pytest.mark.parametrize("task", ["logistic", "ridge"])
def test_quick_cli_end_to_end(task: str, tmp_path: Path) -> None:
    out = tmp_path / task
    res = _invoke("--quick", "--task", task, "--n", str(N), "--out", str(out))
    assert res.exit_code == 0, res.output
    recs = exp.load_trials(out)
    nr, db = exp.TASK_METHODS[task]
    want = {(m, a, t) for a in exp.QUICK_ALPHAS for m in (nr, db) for t in range(exp.QUICK_TRIALS)}
    assert {(r["method"], r["alpha"], r["trial"]) for r in recs} == want
    assert len(recs) == len(want)
    for r in recs:
        _check_record(r)
        assert r["task"] == task
    # NR's loss = IAT's eps_0 (the same for every trial of an alpha) + eps_k
    for a in exp.QUICK_ALPHAS:
        tests = {r["epsilon_test"] for r in recs if r["method"] == nr and r["alpha"] == a}
        assert len(tests) == 1
    for name in ("trials.csv", "summary.json", "config.json", *FIGURES):
        assert (out / name).stat().st_size > 0
    with (out / "trials.csv").open() as fh:
        assert len(list(csv.DictReader(fh))) == len(want)
    summary = json.loads((out / "summary.json").read_text())
    assert [row["alpha"] for row in summary["rows"]] == list(exp.QUICK_ALPHAS)
    for row in summary["rows"]:
        assert row["nr_trials"] == row["doubling_trials"] == exp.QUICK_TRIALS
        assert row["theory_eps"] > 0
        if row["nr_halted"]:
            assert row["nr_eps_mean"] == pytest.approx(row["nr_eps_test_mean"] + row["nr_eps_hyp_mean"])
    assert "theory" in res.output and "NR" in res.output and "Dbl" in res.output
    if task == "ridge":
        assert "stand-in for Twitter" in summary["dataset"]
        assert "stand-in for Twitter" in " ".join(res.output.split())
        assert "theory_eps_outpert_A9" in summary["rows"][0]


def test_resume_skips_existing_and_redoes_torn_line(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "r"
    args = ("--task", "logistic", "--alphas", "0.05", "--trials", "2", "--n", str(N),
            "--out", str(out))
    assert _invoke(*args).exit_code == 0
    first = exp.load_trials(out)
    assert len(first) == 4

    calls: list[tuple] = []
    real = exp.run_trial

    def counting(*a: object) -> dict:
        calls.append(a[1:])
        return real(*a)

    monkeypatch.setattr(exp, "run_trial", counting)
    # the resumed runs are checked for their trials; the figures (3 s a run) were drawn by
    # the first run above and are checked in test_quick_cli_end_to_end: here each resumed
    # run must only hand the whole record set to write_figures
    drawn: list[int] = []

    def figures(cfg: exp.Config, records: list[dict], out_dir: object) -> list:
        drawn.append(len(records))
        return []

    monkeypatch.setattr(exp, "write_figures", figures)
    res = _invoke(*args)
    assert res.exit_code == 0, res.output
    assert calls == []  # everything was already there
    # an interrupted write: the last line is cut (no newline); only that trial is redone
    lines = (out / "trials.jsonl").read_text().splitlines()
    (out / "trials.jsonl").write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:30])
    lost = json.loads(lines[-1])
    assert _invoke(*args).exit_code == 0
    assert calls == [(lost["method"], lost["alpha"], lost["trial"])]
    again = {r["key"]: r for r in exp.load_trials(out)}
    assert sorted(again) == sorted(r["key"] for r in first)
    assert again[lost["key"]]["epsilon"] == lost["epsilon"]  # same seed, same result
    # extending the sweep adds only the new trials, and old ones keep their seeds
    calls.clear()
    ext = ("--task", "logistic", "--alphas", "0.05,0.1", "--trials", "2", "--n", str(N),
           "--out", str(out))
    assert _invoke(*ext).exit_code == 0
    assert sorted(calls) == sorted((m, 0.1, t) for m in exp.TASK_METHODS["logistic"]
                                   for t in range(2))
    assert drawn == [4, 4, 8]  # every resumed run drew its figures from all its records
    # a different configuration in the same directory is refused cleanly
    res = _invoke("--task", "logistic", "--alphas", "0.05", "--trials", "2", "--n", "4000",
                  "--out", str(out))
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert "different configuration" in " ".join(res.output.split())


def test_no_halt_is_recorded_not_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refusing(*args: object, **kwargs: object) -> None:
        raise NoHaltError("no level passed", method="outputnr", epsilon_refusal=7.5)

    monkeypatch.setattr(importlib.import_module("oracledp.erm"), "outputnr", refusing)
    cfg = exp.Config(alphas=(0.05,), trials=2, n=N)
    recs = exp.run(cfg, tmp_path)
    nr = [r for r in recs if r["method"] == "outputnr"]
    assert len(nr) == 2 and all(r["failure"] == "no-halt" for r in nr)
    assert all(r["epsilon_refusal"] == 7.5 and r["epsilon"] is None for r in nr)
    row = exp.summarize(cfg, recs)[0]
    assert row["nr_no_halt"] == 2 and row["nr_halted"] == 0 and row["nr_success_rate"] == 0.0
    assert row["nr_eps_mean"] is None and row["nr_refusal_eps_mean"] == 7.5
    assert row["doubling_halted"] == 2
    exp.write_figures(cfg, recs, tmp_path)  # figures cope with a method that never halted
    lines = (tmp_path / "trials.jsonl").read_text().splitlines()
    assert sum(json.loads(line)["failure"] == "no-halt" for line in lines) == 2


def test_results_do_not_depend_on_workers(tmp_path: Path) -> None:
    """The same records with one process and with two joblib workers.  The two-worker run is
    made in a fresh interpreter, so that its workers are its own: in a full `pytest -n 2`
    run this process may hold a reused joblib executor or cluster left by earlier tests (the
    test once waited there for workers that never answered)."""
    cfg = exp.Config(alphas=(0.1,), trials=2, n=2_000)
    one = exp.run(cfg, tmp_path / "one")
    root = Path(__file__).resolve().parents[2]
    code = ("from pathlib import Path; from lab import accuracy_first as exp; "
            "exp.run(exp.Config(alphas=(0.1,), trials=2, n=2_000, n_jobs=2), "
            f"Path({str(tmp_path / 'two')!r}))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(root), str(root / "src"), os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-c", code], check=True, timeout=240, cwd=root, env=env)
    two = sorted(exp.load_trials(tmp_path / "two"), key=lambda r: str(r["key"]))
    one = sorted(one, key=lambda r: str(r["key"]))
    strip = [{k: v for k, v in r.items() if not k.endswith("_s")} for r in one]
    assert len(two) == len(one) > 0
    assert strip == [{k: v for k, v in r.items() if not k.endswith("_s")} for r in two]


@pytest.mark.parametrize(
    "args",
    [
        ("--alphas", "0.01,abc"),
        ("--alphas", "0,0.1"),
        ("--alphas", "0.1,0.1"),
        ("--alphas", ""),
        ("--alphas", "nan"),
        ("--alphas", "1e9"),  # the grid 1/n .. 4E is empty
        ("--task", "svm"),
    ],
)
def test_bad_options_rejected_cleanly(args: tuple[str, ...], tmp_path: Path) -> None:
    res = _invoke(*args, "--n", str(N), "--out", str(tmp_path / "x"))
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert not (tmp_path / "x").exists()


def test_config_validation() -> None:
    with pytest.raises(ValueError, match="unknown task"):
        exp.Config(task="svm")
    with pytest.raises(ValueError, match="distinct"):
        exp.Config(alphas=(0.1, 0.1))
    with pytest.raises(ValueError, match="trials"):
        exp.Config(trials=0)
    assert exp.Config(alphas=(0.2, 0.01)).alphas == (0.01, 0.2)
    # Appendix B's grid: the experiment's grid is the algorithms' default
    cfg = exp.Config(n=N)
    assert exp._grid(cfg, "outputnr", 0.05)[-1] == pytest.approx(4 * cfg.theory_epsilon(0.05))
