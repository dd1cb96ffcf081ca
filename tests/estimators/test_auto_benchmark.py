"""benchmarks/model_auto.py: it runs end to end on a tiny configuration, and its summary
compares auto with the best single model that released every fit."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path

import pandas as pd

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "model_auto.py"


def test_model_auto_runs_end_to_end(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(BENCH), "--tables", "titanic", "--eps", "1",
                           "--seeds", "0", "--models", "auto", "dpsgd", "--out",
                           str(tmp_path)], capture_output=True, text=True, timeout=240,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs = json.loads((tmp_path / "runs.json").read_text())["runs"]
    assert {r["model"] for r in runs} == {"auto", "dpsgd"}
    (auto,) = [r for r in runs if r["model"] == "auto"]
    assert auto["released"] and auto["selected"] in ("gaussian-rspm", "dpsgd")
    assert auto["guarantee"].startswith("(1, ")
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert summary.loc[0, "best_single"] == "dpsgd"
    assert "| titanic | 1 |" in proc.stdout


def test_summary_skips_a_model_with_a_refused_fit() -> None:
    summarize = runpy.run_path(str(BENCH))["summarize"]
    runs = pd.DataFrame([
        {"table": "t", "epsilon": 1.0, "seed": s, "model": m, "released": ok, "accuracy": a,
         "selected": "dpsgd" if m == "auto" else None}
        for s in (0, 1) for m, ok, a in (("auto", True, 0.70), ("dpsgd", True, 0.72),
                                         ("opdisc", s == 0, 0.90 if s == 0 else None))])
    (row,) = summarize(runs).to_dict("records")
    assert row["best_single"] == "dpsgd" and row["opdisc"] is None  # opdisc refused once
    assert abs(row["gap"] - (0.70 - 0.72)) < 1e-12 and row["auto_released"] == "2/2"
    assert row["auto_picks"] == "dpsgd 2"
