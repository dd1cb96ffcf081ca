"""Hostile or damaged JSON files handed to the command line are one ``error:`` line, exit 2.

A schema, a saved classifier or a saved synthesizer nested 100,000 levels deep (Python's
parser: RecursionError), holding a 401-digit integer (float(): OverflowError), NaN, or a key
listed twice; and a schema that is a pipe (reading it would block).  The budget file has its
own tests (tests/cli/test_cli_budget.py).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from oracledp._cli import app

SCHEMA = {"target": {"name": "y", "labels": ["a", "b"]},
          "columns": [{"name": "x", "type": "numeric", "lower": 0, "upper": 10}]}
DEEP = '{"target": ' + "[" * 100_000 + "]" * 100_000 + "}"
BIG = json.dumps(SCHEMA).replace('"upper": 10', '"upper": ' + "9" * 401)
NAN = json.dumps(SCHEMA).replace('"upper": 10', '"upper": NaN')
TWICE = json.dumps(SCHEMA).replace('"upper": 10', '"upper": 10, "upper": 5')
HOSTILE = {"deep": (DEEP, "nested more than 64"), "big": (BIG, "more than 300 digits"),
           "nan": (NAN, "NaN is not a JSON number"), "twice": (TWICE, "keys listed twice")}


def _one_error(res, says: str) -> None:
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
    assert says in res.stderr and "Traceback" not in res.output


@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("command", ["schema-check", "fit", "synth-fit"])
def test_a_hostile_schema_is_one_error(tmp_path: Path, case: str, command: str) -> None:
    text, says = HOSTILE[case]
    (tmp_path / "s.json").write_text(text)
    (tmp_path / "d.csv").write_text("x,y\n1,a\n2,b\n")
    args = {"schema-check": ["schema", "check", "d.csv", "--schema", "s.json"],
            "fit": ["fit", "d.csv", "--schema", "s.json", "--model", "rspm", "--epsilon", "1",
                    "--out", "m"],
            "synth-fit": ["synth", "fit", "d.csv", "--schema", "s.json", "--epsilon", "1",
                          "--out", "m"]}[command]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        res = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    finally:
        os.chdir(cwd)
    _one_error(res, says)
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("kind", ["predict", "synth-sample"])
def test_a_hostile_saved_model_is_one_error(tmp_path: Path, case: str, kind: str) -> None:
    text, says = HOSTILE[case]
    (tmp_path / "m").mkdir()
    name = "model.json" if kind == "predict" else "synth-model.json"
    (tmp_path / "m" / name).write_text(text)
    (tmp_path / "d.csv").write_text("x\n1\n")
    args = (["predict", str(tmp_path / "m"), str(tmp_path / "d.csv")] if kind == "predict" else
            ["synth", "sample", str(tmp_path / "m"), "--rows", "3"])
    res = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    _one_error(res, says)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX named pipes")
@pytest.mark.timeout(60)
def test_a_schema_that_is_a_pipe_is_refused_without_reading(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "s.json")
    (tmp_path / "d.csv").write_text("x,y\n1,a\n")
    res = CliRunner().invoke(app, ["schema", "check", str(tmp_path / "d.csv"), "--schema",
                                   str(tmp_path / "s.json")], env={"COLUMNS": "200"})
    _one_error(res, "not a regular file")
