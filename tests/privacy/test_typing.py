"""``mypy --strict`` is clean on the privacy core and on every package's public face.

Checked: ``src/oracledp/privacy/`` (all of it) and the ``__init__.py`` of ``oracledp`` and of
each of its packages.  ``--follow-imports=silent`` analyses the modules they import without
reporting their errors (only these files must be clean); ``--ignore-missing-imports`` stands
in for third-party packages without type information.  The cache goes to the test's
temporary directory, so every run is a cold one (about 10 s of CPU).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "oracledp"


def _checked_files() -> list[str]:
    faces = [PACKAGE / "__init__.py", *sorted(PACKAGE.glob("*/__init__.py"))]
    # the privacy package is passed as a directory (its __init__ included), once
    paths = [PACKAGE / "privacy", *(p for p in faces if p.parent.name != "privacy")]
    return [p.relative_to(ROOT).as_posix() for p in paths]


def test_checked_files_cover_every_public_face() -> None:
    files = _checked_files()
    assert "src/oracledp/privacy" in files and "src/oracledp/__init__.py" in files
    assert {"src/oracledp/synth/__init__.py", "src/oracledp/learners/__init__.py"} <= set(files)


def test_mypy_strict_is_clean(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
           "--ignore-missing-imports", "--no-color-output", "--cache-dir",
           str(tmp_path / "mypy-cache"), *_checked_files()]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, f"mypy --strict found errors:\n{proc.stdout}{proc.stderr}"
    assert "Success: no issues found" in proc.stdout
