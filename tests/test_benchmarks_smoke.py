"""The benchmark scripts run end to end on a tiny configuration (they are not part of the
library's API, so nothing else would notice a call that no longer matches it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _run(script: str, *args: str) -> str:
    proc = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True,
                          text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_oracle_adult_smoke(tmp_path: Path) -> None:
    out = _run("oracle_adult.py", "--eps", "0.1", "--draws", "1", "--mono-draws", "0",
               "--out", str(tmp_path))
    assert "median_certified_s=" in out and (tmp_path / "oracle_adult.json").exists()


def test_oracle_suite_smoke(tmp_path: Path) -> None:
    out = _run("oracle_suite.py", "--tables", "wine-13", "--draws", "1", "--mono-draws", "0",
               "--time-limit", "20", "--out", str(tmp_path))
    assert "sigma/paper_sigma" in out and "certified_fraction=1.00" in out


@pytest.mark.parametrize("extra", [[], ["--rspm"]])
def test_oracle_branch_smoke(extra: list[str]) -> None:
    out = _run("oracle_branch.py", "--table", "wine-13", "--draws", "1", "--rules", "product",
               "--time-limit", "20", *extra)
    assert "median_s=" in out
