"""Progress while a CSV is read: ``verbose=`` of the readers, a progress bar in the CLI."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import rich.console

from oracledp._cli import app
from oracledp.tabular import Column, TableSchema, read_aggregated, read_csv

SCHEMA = TableSchema(columns=(Column("x", "numeric", lower=0, upper=10, step=1),
                              Column("c", "categorical", levels=("a", "b"))),
                     target="y", labels=("no", "yes"), intercept=False)


@pytest.fixture
def csv_path(tmp_path: Path) -> Path:
    path = tmp_path / "t.csv"
    rows = "".join(f"{i % 11},{'ab'[i % 2]},{('no', 'yes')[i % 3 == 0]}\n" for i in range(150000))
    path.write_text("x,c,y\n" + rows)  # about 1.1 MB: pandas reads 256 kB at a time
    return path


@pytest.mark.parametrize("reader", ["read_csv", "read_aggregated"])
def test_quiet_by_default_and_verbose_prints_to_stderr(csv_path, capsys, reader):
    def read(**kw):
        if reader == "read_csv":
            return read_csv(csv_path, SCHEMA, with_target=True, **kw)
        return read_aggregated(csv_path, SCHEMA, **kw)

    read()
    assert capsys.readouterr() == ("", "")
    read(verbose=True)
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    size = csv_path.stat().st_size
    total = f"of {size / 1e6:,.1f} MB"
    first = "checking" if reader == "read_csv" else "reading"  # the engine: one pass
    assert lines[0] == f"oracledp: {first} {csv_path}: 0.0 {total} (0%)"
    assert lines[-1] == f"oracledp: reading {csv_path}: {size / 1e6:,.1f} {total} (100%)"
    assert any(line.startswith("oracledp: reading") and "(0%)" in line for line in lines)


def test_a_callable_gets_the_bytes_read_of_the_file_size(csv_path, tmp_path):
    calls: list[tuple[str, int, int | None]] = []
    read_aggregated(csv_path, SCHEMA, verbose=lambda *a: calls.append(a))
    size = csv_path.stat().st_size
    done = [d for p, d, t in calls]  # the engine's one pass: DuckDB's progress of the file
    assert {p for p, _, _ in calls} == {"reading"} and {t for _, _, t in calls} == {size}
    assert done[0] == 0 and done[-1] == size and done == sorted(done)
    calls.clear()
    read_csv(csv_path, SCHEMA, with_target=True, verbose=lambda *a: calls.append(a))
    for phase in ("checking", "reading"):
        done = [d for p, d, t in calls if p == phase]
        assert {t for p, _, t in calls if p == phase} == {size}
        assert done[0] == 0 and done[-1] == size and done == sorted(done)
        assert len(set(done)) > 2  # progress between the start and the end
    gz = tmp_path / "t.csv.gz"  # gzip: the compressed bytes, out of the file's size
    gz.write_bytes(gzip.compress(csv_path.read_bytes()))
    calls.clear()
    read_csv(gz, SCHEMA, with_target=True, verbose=lambda *a: calls.append(a))
    assert calls[-1] == ("reading", gz.stat().st_size, gz.stat().st_size)


def test_verbose_must_be_a_bool_or_a_callable(csv_path):
    with pytest.raises(TypeError, match="verbose"):
        read_csv(csv_path, SCHEMA, verbose="yes")


def test_the_cli_shows_progress_on_a_terminal(runner, csv_path, monkeypatch):
    monkeypatch.setattr(rich.console.Console, "is_terminal", property(lambda self: True))
    res = runner.invoke(app, ["schema", "infer", str(csv_path), "--target", "y"],
                        env={"COLUMNS": "120"})
    assert res.exit_code == 0, res.output
    size = csv_path.stat().st_size
    assert "reading t.csv" in res.stderr
    assert f"{size / 1e6:.1f}/{size / 1e6:.1f} MB" in res.stderr  # read / size
    assert res.stdout.lstrip().startswith("{")  # the schema on stdout, untouched


def test_the_cli_stays_quiet_off_a_terminal(runner, csv_path):
    res = runner.invoke(app, ["schema", "infer", str(csv_path), "--target", "y"])
    assert res.exit_code == 0, res.output
    assert "reading" not in res.stderr and "MB" not in res.stderr
