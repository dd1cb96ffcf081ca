"""benchmarks/synth_skewed_column.py runs end to end (the figure of docs/synthetic-data.md)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_skewed_column_benchmark_runs(tmp_path: Path, capsys) -> None:
    spec = importlib.util.spec_from_file_location(
        "synth_skewed_column", ROOT / "benchmarks" / "synth_skewed_column.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--rows", "400", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["rows"] == {"synthetic": 400, "real": 400}
    assert "2-way TV at the data's octiles" in capsys.readouterr().out
