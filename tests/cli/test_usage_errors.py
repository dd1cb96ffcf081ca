"""Every misuse of the command line is one ``error: ...`` line on stderr with exit code 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from oracledp._cli import app

ENV = {"COLUMNS": "80"}  # narrow: a boxed error would wrap over several lines


def _misuses(tmp: Path) -> list[tuple[list[str], str]]:
    """(arguments, what the one line must name): one row per kind of parser error."""
    a_file = tmp / "a-file"
    a_file.write_text("x\n")
    data, schema, out = str(tmp / "t.csv"), str(tmp / "s.json"), str(tmp / "out")
    return [
        (["fit", data, "--schema", schema, "--out", out, "--epsilon", "abc"], "'--epsilon'"),
        (["fit", data, "--schema", schema, "--out", str(a_file), "--epsilon", "1"], "--out "),  # (the command's own check)
        (["fit", data, "--out", out, "--epsilon", "1"], "'--schema'"),
        (["fit", data, "--schema", schema, "--out", out, "--seed", "-1"], "'--seed'"),
        (["fit"], "'data'"),
        (["predict", str(tmp)], "'data'"),
        (["predict", str(tmp), data, "extra"], "extra"),
        (["evaluate", str(tmp), data, "--stric"], "--stric"),
        (["schema", "infer", data, "--target"], "'--target'"),  # no value given
        (["schema", "infer", data, "--target", "y", "--max-levels", "0"], "'--max-levels'"),
        (["schema", "nope"], "'nope'"),
        (["export-sample", "adult", str(tmp / "x.csv"), "--n", "zero"], "'--n'"),
        (["demo", "--epsilon", "abc"], "'--epsilon'"),
        (["demo", "--time-limit", "0"], "'--time-limit'"),
        (["demo", "--out", str(a_file)], "'--out'"),
        (["models", "--bogus"], "--bogus"),
        (["datasets", "extra"], "extra"),
        (["solvers", "--x"], "--x"),
        (["bogus"], "'bogus'"),
        (["--bogus"], "--bogus"),
    ]


def _assert_one_line(code: int, stdout: str, stderr: str, names: str) -> None:
    assert code == 2, (stdout, stderr)
    assert stdout == ""
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ") and names in lines[0], lines[0]
    assert "Usage:" not in stderr and "╭" not in stderr and "Traceback" not in stderr


def test_every_usage_error_is_one_line(runner, tmp_path):
    for args, names in _misuses(tmp_path):
        res = runner.invoke(app, args, env=ENV)
        assert res.exception is None or isinstance(res.exception, SystemExit), args
        _assert_one_line(res.exit_code, res.stdout, res.stderr, names)


@pytest.mark.parametrize("which", [0, 1, 8])
def test_one_line_from_the_console_entry(tmp_path, which):
    args, names = _misuses(tmp_path)[which]
    env = {**os.environ, **ENV, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-m", "oracledp", *args], capture_output=True,
                          text=True, env=env, timeout=120)
    _assert_one_line(proc.returncode, proc.stdout, proc.stderr, names)


def test_help_is_unchanged(runner):
    res = runner.invoke(app, ["fit", "--help"], env=ENV)
    assert res.exit_code == 0 and "Usage:" in res.stdout and "--epsilon" in res.stdout
    res = runner.invoke(app, [], env=ENV)  # bare `oracledp`: the help, as before
    assert "Usage:" in res.output and "error:" not in res.output
    res = runner.invoke(app, ["schema"], env=ENV)
    assert "infer" in res.output and "error:" not in res.output
