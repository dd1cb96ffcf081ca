"""``oracledp synth sample --out`` (existing files, symlinks, FIFOs, the model's own files),
and the wording of ``synth fit`` / ``synth evaluate`` messages a new user reads."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import re
import stat
import threading

import numpy as np
import pandas as pd
import pytest

import oracledp._cli_synth as cli_synth
from oracledp._cli import app

ENV = {"COLUMNS": "200"}

SCHEMA = {"format": "oracledp.table_schema", "version": 1,
          "target": {"name": "y", "labels": ["no", "yes"]},
          "columns": [{"name": "x", "type": "categorical", "levels": ["a", "b"]},
                      {"name": "v", "type": "numeric", "lower": 0, "upper": 99, "step": 1,
                       "out_of_bounds": "clip"}],
          "row_divisor": 1, "intercept": True}


def _table(path, n, *, outside=False):
    rows = [("a" if i % 3 else "b", (i * 37) % 100, "yes" if i % 2 else "no") for i in range(n)]
    if outside:
        rows[0] = ("a", 150, "no")
    pd.DataFrame(rows, columns=["x", "v", "y"]).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from typer.testing import CliRunner

    d = tmp_path_factory.mktemp("synth-out")
    schema = d / "s.json"
    schema.write_text(json.dumps(SCHEMA))
    data = _table(d / "data.csv", 200, outside=True)
    res = CliRunner().invoke(app, ["synth", "fit", str(data), "--schema", str(schema),
                                   "--epsilon", "1", "--seed", "0", "--out", str(d / "m")],
                             env=ENV)
    assert res.exit_code == 0, res.output
    return {"dir": d, "model": d / "m", "schema": schema, "data": data, "fit": res}


def _sample(runner, model, *more):
    return runner.invoke(app, ["synth", "sample", str(model["model"]), "--rows", "5",
                               "--seed", "1", *more], env=ENV)


def _refused(res, *words):
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
    assert "Traceback" not in res.output
    for w in words:
        assert w in res.stderr, res.stderr


def test_an_existing_out_file_needs_force(runner, model, tmp_path):
    real = tmp_path / "real.csv"
    real.write_text("the real data\n")
    _refused(_sample(runner, model, "--out", str(real)), "already exists", "--force")
    assert real.read_text() == "the real data\n"
    res = _sample(runner, model, "--out", str(real), "--force")
    assert res.exit_code == 0, res.output
    assert list(pd.read_csv(real).columns) == ["x", "v", "y"]
    fresh = tmp_path / "new.csv"
    assert _sample(runner, model, "--out", str(fresh)).exit_code == 0 and fresh.exists()


def test_a_symlink_out_is_kept_and_its_target_written(runner, model, tmp_path):
    target = tmp_path / "target.csv"
    target.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    _refused(_sample(runner, model, "--out", str(link)), "already exists")
    res = _sample(runner, model, "--out", str(link), "--force")
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert len(pd.read_csv(target)) == 5
    dangling = tmp_path / "dangling.csv"
    dangling.symlink_to(tmp_path / "made.csv")
    assert _sample(runner, model, "--out", str(dangling)).exit_code == 0
    assert dangling.is_symlink() and len(pd.read_csv(tmp_path / "made.csv")) == 5


def test_the_models_own_files_are_refused_even_with_force(runner, model, tmp_path):
    m = model["model"]
    before = {p.name: p.read_bytes() for p in m.iterdir()}
    hard = tmp_path / "hard.npz"
    os.link(m / "release.npz", hard)
    soft = tmp_path / "soft.json"
    soft.symlink_to(m / "synth-model.json")
    for out in (m / "synth-model.json", m / "release.npz", m / "new.csv", hard, soft):
        _refused(_sample(runner, model, "--out", str(out), "--force"), "model",
                 "--force does not apply")
    _refused(_sample(runner, model, "--out", str(m), "--force"), "is a directory")
    assert {p.name: p.read_bytes() for p in m.iterdir()} == before
    assert soft.is_symlink()


def test_a_fifo_and_dev_null_are_written_through(runner, model, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as fh:
            got.append(fh.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    res = _sample(runner, model, "--out", str(fifo))
    reader.join(timeout=30)
    assert res.exit_code == 0, res.output
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert len(pd.read_csv(io.BytesIO(got[0]))) == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]  # no temporary file left
    res = _sample(runner, model, "--out", os.devnull)
    assert res.exit_code == 0, res.output
    assert stat.S_ISCHR(os.lstat(os.devnull).st_mode)


def test_an_empty_out_is_refused_by_fit_and_sample(runner, model, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _refused(_sample(runner, model, "--out", ""), "--out is empty")
    res = runner.invoke(app, ["synth", "fit", str(model["data"]), "--schema",
                              str(model["schema"]), "--epsilon", "1", "--out", ""], env=ENV)
    _refused(res, "--out is empty")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_to_stdout_names_stdout(runner, model, monkeypatch):
    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cli_synth, "_write_samples", full)
    _refused(_sample(runner, model), "cannot write stdout: No space left on device")
    assert "None" not in _sample(runner, model).stderr


def test_the_bins_line_says_where_the_bins_came_from(runner, model, tmp_path):
    # the budget's bins, here with the model held on more (the default's pair_resolution)
    assert re.search(r"coarse bins: v \d+ \(held on up to 10 bins; each table with them counted "
                     r"on these or on the \d+ bins chosen for n and the budget",
                     model["fit"].stdout), model["fit"].stdout
    for bins in ("5", "1"):
        res = runner.invoke(app, ["synth", "fit", str(model["data"]), "--schema",
                                  str(model["schema"]), "--epsilon", "1", "--seed", "0",
                                  "--bins", bins, "--out", str(tmp_path / bins)], env=ENV)
        assert res.exit_code == 0, res.output
        assert f"coarse bins: v {bins} (as declared by --bins)" in res.stdout, res.stdout
        assert "chosen for n and the budget" not in res.stdout


def test_evaluate_says_clipping_once_as_a_note(runner, model, tmp_path):
    synth = tmp_path / "s.csv"
    assert _sample(runner, model, "--out", str(synth)).exit_code == 0
    res = runner.invoke(app, ["synth", "evaluate", str(synth), str(model["data"]),
                              "--model", str(model["model"])], env=ENV)
    assert res.exit_code == 0, res.output
    notes = [line for line in res.stderr.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and "clipped" in notes[0], res.stderr
    assert "ClippedValuesWarning" not in res.output and ".py:" not in res.stderr


def test_evaluate_says_which_of_schema_and_model_is_wrong(runner, model, tmp_path):
    args = ["synth", "evaluate", str(model["data"]), str(model["data"])]
    res = runner.invoke(app, args, env=ENV)
    _refused(res, "--schema", "--model")
    assert "not both" not in res.stderr
    res = runner.invoke(app, [*args, "--schema", str(model["schema"]), "--model",
                              str(model["model"])], env=ENV)
    _refused(res, "not both")


@pytest.mark.parametrize("n", [1, 2])
def test_the_default_delta_on_a_tiny_table_gets_a_caution(runner, model, tmp_path, n):
    data = _table(tmp_path / "tiny.csv", n)
    args = ["synth", "fit", str(data), "--schema", str(model["schema"]), "--epsilon", "1",
            "--seed", "0", "--bins", "2"]
    res = runner.invoke(app, [*args, "--out", str(tmp_path / "d")], env=ENV)
    assert res.exit_code == 0, res.output
    assert "(1, 0.25)-DP" in res.stdout
    notes = [line for line in res.stdout.splitlines() if "default 1/n^2" in line]
    assert len(notes) == 1 and notes[0].startswith("note: delta 0.25 per record"), res.stdout
    assert "--delta" in notes[0]
    res = runner.invoke(app, [*args, "--delta", "1e-6", "--out", str(tmp_path / "e")], env=ENV)
    assert res.exit_code == 0 and "default 1/n^2" not in res.stdout, res.output
    assert not cli_synth._default_delta_note(1 / 11**2, 11, 1)
    assert cli_synth._default_delta_note(1 / 10**2, 10, 1)


def test_a_dash_writes_stdout(runner, model, tmp_path, monkeypatch):
    """Sweep 12: `--out -` wrote a file named '-' in the working directory."""
    monkeypatch.chdir(tmp_path)
    res = _sample(runner, model, "--out", "-")
    assert res.exit_code == 0, res.output
    assert res.stdout == _sample(runner, model).stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [
    ["synth", "fit", "{data}", "--schema", "{schema}", "--epsilon", "1", "--out", "{out}"],
    ["fit", "{data}", "--schema", "{schema}", "--model", "dpsgd", "--epsilon", "1", "--out",
     "{out}"],
    ["schema", "infer", "{data}"],
    ["schema", "check", "{data}", "--schema", "{schema}"],
    ["synth", "evaluate", "{data}", "{real}", "--schema", "{schema}"],
])
def test_a_pipe_as_the_table_is_one_clear_error(runner, model, tmp_path, command):
    """Sweep 12: `cat t.csv | oracledp synth fit /dev/stdin ...` said "the file is empty" and
    `schema infer /dev/stdin` "cannot read the file (None)": every reader reads a table more
    than once.  A FIFO that nobody writes to: refused before it is opened for reading."""
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    args = [a.format(data=fifo, schema=model["schema"], out=tmp_path / "m",
                     real=model["data"]) for a in command]
    writer = threading.Thread(target=lambda: _feed(fifo, model["data"]), daemon=True)
    writer.start()
    res = runner.invoke(app, args, env=ENV)
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a regular file" in lines[0], res.stderr
    assert not (tmp_path / "m").exists()


def _feed(fifo, data) -> None:
    with contextlib.suppress(OSError), open(fifo, "wb") as fh:
        fh.write(data.read_bytes())


def test_a_one_column_table_is_worded_for_one_column(runner, tmp_path):
    """Sweep 12: a one-column table was told of "1 columns", of "the smallest pair table" and
    of "all 1 column sets"; `synth evaluate --schema` without --bins called its 10 equal
    shares "the synthesizer's own bins"."""
    data = tmp_path / "one.csv"
    pd.DataFrame({"v": [(i * 37) % 130 for i in range(400)]}).to_csv(data, index=False)
    schema = tmp_path / "one.json"
    schema.write_text(json.dumps({"columns": [{"name": "v", "type": "numeric", "lower": 0,
                                               "upper": 240, "step": 1}]}))
    res = runner.invoke(app, ["synth", "fit", str(data), "--schema", str(schema), "--epsilon",
                              "1", "--seed", "0", "--out", str(tmp_path / "m")], env=ENV)
    assert res.exit_code == 0, res.output
    assert ": 1 column (v " in res.stdout and "the table's one column" in res.stdout
    assert "pair" not in res.stdout.split("what the budget affords:")[1].splitlines()[0]
    syn = tmp_path / "s.csv"
    res = runner.invoke(app, ["synth", "sample", str(tmp_path / "m"), "--rows", "100",
                              "--seed", "1", "--out", str(syn)], env=ENV)
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["synth", "evaluate", str(syn), str(data), "--schema",
                              str(schema)], env=ENV)
    assert res.exit_code == 0, res.output
    assert "not the fit's bins: give --model" in res.stdout
    assert "(the one column set)" in res.stdout and "own bins" not in res.stdout
    res = runner.invoke(app, ["synth", "evaluate", str(syn), str(data), "--model",
                              str(tmp_path / "m")], env=ENV)
    assert res.exit_code == 0 and "synthetic vs real; on the fit's bins)" in res.stdout
    # review 18: --bins 5 is cut in equal shares, the fit cut at its private quantiles
    res = runner.invoke(app, ["synth", "evaluate", str(syn), str(data), "--schema",
                              str(schema), "--bins", "5"], env=ENV)
    assert res.exit_code == 0, res.output
    assert "on the bins of --bins (a count cut in equal shares" in res.stdout
    assert "the fit's bins)" not in res.stdout


def test_noisy_numeric_histograms_get_a_caution(runner, tmp_path):
    """Sweep 12: 2,000 rows of four numeric columns at epsilon 1 (node noise 2.8 % of the
    records) came out level with exact independent marginals and nothing said so; the plan's
    figures are for the model's bins.  Between CAUTION_NODE_SHARE and NOISY_NODE_SHARE a note
    says it; at epsilon 8 (node noise below 1 %) nothing is said."""
    rng = np.random.default_rng(0)
    n = 2000
    h = rng.normal(170, 10, n)
    data = tmp_path / "num.csv"
    pd.DataFrame({"height": np.round(h, 1), "weight": np.round(h - 100 + rng.normal(0, 8, n)),
                  "steps": rng.integers(0, 20_000, n),
                  "age": rng.integers(18, 90, n)}).to_csv(data, index=False)
    schema = tmp_path / "num.json"
    schema.write_text(json.dumps({"columns": [
        {"name": "height", "type": "numeric", "lower": 120, "upper": 220, "step": 0.1},
        {"name": "weight", "type": "numeric", "lower": 20, "upper": 200, "step": 1},
        {"name": "steps", "type": "numeric", "lower": 0, "upper": 50_000, "step": 1},
        {"name": "age", "type": "numeric", "lower": 0, "upper": 120, "step": 1}]}))
    said = {}
    for eps in ("1", "8"):
        res = runner.invoke(app, ["synth", "fit", str(data), "--schema", str(schema),
                                  "--epsilon", eps, "--seed", "0", "--out",
                                  str(tmp_path / f"m{eps}")], env=ENV)
        assert res.exit_code == 0, res.output
        said[eps] = res.stdout
    shares = [float(x) for x in re.findall(r"\(([\d.]+) %\)", said["1"].split(
        "noise of each node")[1].splitlines()[0])]
    assert 100 * cli_synth.CAUTION_NODE_SHARE <= max(shares) < 100 * cli_synth.NOISY_NODE_SHARE
    assert "may come closer than this release" in said["1"]
    assert "may come closer" not in said["8"]


def test_the_plan_says_when_it_gave_the_independent_marginals_note():
    """`synth fit` reads the plan's flag, not its words, to say the note once."""
    from oracledp.synth._table_budget import afford

    few = afford(300, (5, 5, 5), 2, columns=0, rho=0.005)
    many = afford(1_000_000, (5, 5, 5), 2, columns=0, rho=0.5)
    one = afford(300, (5,), 2, columns=0, rho=0.005)
    assert few["independent_note"] and "independent marginals" in few["summary"]
    assert not many["independent_note"] and "independent marginals" not in many["summary"]
    assert not one["independent_note"] and "independent marginals" not in one["summary"]
    alone = afford(1_000_000, (5, 5, 5), 2, columns=0, rho=0.5, pairs=False)
    assert alone["independent_note"] and "independent marginals" in alone["summary"]


def test_the_bins_line_counts_the_missing_level_apart(runner, tmp_path):
    """Sweep 13: a column with a missing level fitted with --bins 3 was said to have "4"
    bins "as declared by --bins" (its missing level counted among them)."""
    data = tmp_path / "m.csv"
    vals = [str((i * 37) % 90) if i % 9 else "" for i in range(600)]
    pd.DataFrame({"v": vals, "c": ["a", "b", "c"] * 200}).to_csv(data, index=False)
    schema = tmp_path / "m.json"
    schema.write_text(json.dumps({"columns": [
        {"name": "v", "type": "numeric", "lower": 0, "upper": 99, "step": 1,
         "missing": "level"},
        {"name": "c", "type": "categorical", "levels": ["a", "b", "c"]}]}))
    res = runner.invoke(app, ["synth", "fit", str(data), "--schema", str(schema), "--epsilon",
                              "1", "--seed", "0", "--bins", "3", "--out", str(tmp_path / "o")],
                        env=ENV)
    assert res.exit_code == 0, res.output
    assert "coarse bins: v 3 + missing (as declared by --bins)" in res.stdout, res.stdout


def test_ignore_extra_names_the_columns_it_left_out(runner, tmp_path):
    """Sweep 11: --ignore-extra said nothing of the columns it dropped (a misspelt column went
    unnoticed); the fit names them (names only)."""
    data = tmp_path / "x.csv"
    pd.DataFrame({"v": [(i * 37) % 90 for i in range(300)], "Notes": ["a"] * 300,
                  "c": ["a", "b", "c"] * 100}).to_csv(data, index=False)
    schema = tmp_path / "x.json"
    schema.write_text(json.dumps({"columns": [
        {"name": "v", "type": "numeric", "lower": 0, "upper": 99, "step": 1},
        {"name": "c", "type": "categorical", "levels": ["a", "b", "c"]}]}))
    args = ["synth", "fit", str(data), "--schema", str(schema), "--epsilon", "1", "--seed", "0"]
    res = runner.invoke(app, [*args, "--ignore-extra", "--out", str(tmp_path / "a")], env=ENV)
    assert res.exit_code == 0, res.output
    assert "note: --ignore-extra left out the data's column(s) 'Notes':" in res.stdout
    schema.write_text(json.dumps({"columns": [
        {"name": "v", "type": "numeric", "lower": 0, "upper": 99, "step": 1},
        {"name": "c", "type": "categorical", "levels": ["a", "b", "c"]},
        {"name": "Notes", "type": "categorical", "levels": ["a"]}]}))
    res = runner.invoke(app, [*args, "--ignore-extra", "--out", str(tmp_path / "b")], env=ENV)
    assert res.exit_code == 0 and "left out" not in res.stdout, res.output
