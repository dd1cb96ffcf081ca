"""The FTPL regret experiment (lab/ftpl): its configuration and the quick command end to end."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lab import ftpl as exp
from lab.__main__ import app
from oracledp.learners import ftpl_regret_bound


def test_config_validation() -> None:
    with pytest.raises(ValueError):
        exp.Config(horizons=(1, 5))
    with pytest.raises(ValueError):
        exp.Config(label_noise=0.5)
    with pytest.raises(ValueError):
        exp.Config(d_values=(4, 4))
    with pytest.raises(ValueError):
        exp.Config(epsilons=(0.0,))


def test_reproduce_ftpl_quick_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "ftpl"
    res = CliRunner().invoke(app, ["ftpl", "--quick", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "Follow the Private Leader" in res.output
    cfg = exp.quick_config()
    recs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert len(recs) == len(cfg.d_values) * cfg.runs * (1 + len(cfg.epsilons))
    for r in recs:
        assert len(r["regret"]) == len(cfg.horizons)
        assert all(-1.0 <= v <= 1.0 for v in r["regret"])
        assert r["regret"][-1] * cfg.T == pytest.approx(
            r["learner_cumulative_loss"] - r["best_cumulative_loss"])
        if r["method"] == "ftpl":
            assert r["bound"] == [ftpl_regret_bound(r["eps"], T, r["m"]) for T in cfg.horizons]
            assert r["privacy"][-1]["reported"]["epsilon"] == pytest.approx(
                (cfg.T - 1) * r["eps"])
    with (out / "runs.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(recs) * len(cfg.horizons)
    assert (out / "regret_vs_T.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((out / "summary.json").read_text())
    assert {s["method"] for s in summary} == {"ftl", "ftpl"}
    # same seed -> same records (modulo wall time); the rerun's figure (2 s) is not redrawn
    monkeypatch.setattr(exp, "write_figures", lambda records, out_dir: [])
    again = tmp_path / "again"
    assert CliRunner().invoke(app, ["ftpl", "--quick", "--out",
                                    str(again)]).exit_code == 0
    recs2 = [json.loads(line) for line in (again / "runs.jsonl").read_text().splitlines()]
    for r1, r2 in zip(recs, recs2, strict=True):
        r1.pop("wall_s"), r2.pop("wall_s")
        assert r1 == r2


def test_reproduce_ftpl_bad_input(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["ftpl", "--quick", "--epsilon", "0,1",
                                   "--out", str(tmp_path)])
    assert res.exit_code != 0
    assert not (tmp_path / "runs.jsonl").exists()
