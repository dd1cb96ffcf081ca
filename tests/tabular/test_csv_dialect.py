"""Every reader reads a CSV in one dialect: no comment lines, quoted line breaks kept.

DuckDB's sniffer chose ``#`` as a comment character when a line started with it (a note
such as ``# exported 2024``, or a line holding just ``#``) and then dropped every line
starting with ``#``, real records whose first cell is ``#1`` included, without a word:
``schema check`` said ok and ``fit`` trained on a third of the rows.  Such a line is now
an ordinary row (refused if it does not fit the schema, with the usual one-line error), as
the pandas reader (``predict``, ``evaluate``, ``schema infer``) always read it; a line with
fewer fields than the header (``#`` alone) is refused as such by every reader.  A quoted
field holding a line break (RFC 4180) was refused by the engine (its parallel reader does
not support it with ``null_padding``) and read by pandas; now both read it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oracledp._cli import app
from oracledp._errors import BoundsViolation, TableInputError
from oracledp.tabular import TableSchema, read_csv
from oracledp.tabular._chunks import read_chunks
from oracledp.tabular._csv import ROW_WIDTH
from oracledp.tabular._engine import scan_table
from oracledp.tabular._sources import read_frame, read_frames

ENV = {"COLUMNS": "200"}
LEVELS = ["#1", "#2", "x"]


def _schema(levels: list[str] = LEVELS) -> dict:
    return {"target": {"name": "y", "labels": ["no", "yes"]}, "columns": [
        {"name": "tag", "type": "categorical", "levels": levels},
        {"name": "a", "type": "numeric", "lower": 0, "upper": 9, "step": 1}]}


def _frame(m: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    tag, b = rng.choice(LEVELS, m), rng.integers(0, 10, m)
    return pd.DataFrame(dict(tag=tag, a=b, y=np.where(b > 4, "yes", "no")))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    text = _frame().to_csv(index=False)
    head, rest = text.split("\n", 1)
    out = {"plain": text, "note": head + "\n# exported 2024,3,no\n" + rest,
           "hash": text + "#,3,no\n"}
    paths = {k: tmp_path / f"{k}.csv" for k in out}
    for k, p in paths.items():
        p.write_text(out[k])
    (tmp_path / "schema.json").write_text(json.dumps(_schema()))
    return paths


def test_the_engine_keeps_every_line_starting_with_a_hash(files: dict[str, Path]) -> None:
    schema = TableSchema.from_dict(_schema())
    for name, path in files.items():
        whole = read_csv(path, with_target=True, check=False)
        frame = read_frame(path)
        assert len(frame) == len(whole) == 400 + (name != "plain"), name
        assert frame.equals(whole.astype(object)), name
        chunks = pd.concat(list(read_chunks(path, schema, with_target=True, rows=64)))
        assert len(chunks) == len(whole), name
        scan = scan_table(path, schema)
        if name == "plain":
            assert not scan.found and scan.counts is not None and scan.counts.sum() == 400
            assert (frame["tag"].str.startswith("#")).sum() > 200
        else:
            assert scan.found, name
            with pytest.raises(BoundsViolation, match="does not fit the schema"):
                scan.raise_problems()


@pytest.mark.parametrize("command", [
    ["schema", "check", "{data}", "--schema", "{schema}"],
    ["fit", "{data}", "--schema", "{schema}", "--model", "dpsgd", "--epsilon", "1",
     "--out", "{out}", "--seed", "0"],
], ids=["schema-check", "fit"])
def test_the_commands_refuse_a_comment_line(runner, files: dict[str, Path],
                                            command: list[str]) -> None:
    sch = files["plain"].parent / "schema.json"
    for name in ("note", "hash"):
        out = files[name].parent / f"m_{name}"
        args = [a.format(data=files[name], schema=sch, out=out) for a in command]
        res = runner.invoke(app, args, env=ENV)
        assert res.exit_code == 2, (name, res.output)
        lines = res.stderr.splitlines()  # schema check: one line per problem
        assert lines and all(line.startswith("error: ") for line in lines), res.stderr
        assert "column 'tag'" in res.stderr and "declared levels" in res.stderr, res.stderr
        assert "exported" not in res.stderr and " row" not in res.stderr
        assert "Traceback" not in res.output
        assert not out.exists()


def test_a_line_holding_a_hash_alone_is_a_short_row(tmp_path: Path) -> None:
    """A note or a ``#`` alone on a line of a three-column table: a row with fewer fields
    than the header, refused by every reader (it was read with empty cells), never dropped."""
    schema = TableSchema.from_dict(_schema())
    text = _frame().to_csv(index=False)
    head, rest = text.split("\n", 1)
    for name, body in {"note": head + "\n# exported 2024\n" + rest, "hash": text + "#\n"}.items():
        path = tmp_path / f"{name}.csv"
        path.write_text(body)
        for read in (lambda p: read_csv(p, with_target=True, check=False), read_frame,
                     lambda p: scan_table(p, schema),
                     lambda p: list(read_chunks(p, schema, with_target=True, rows=64))):
            with pytest.raises(TableInputError) as err:
                read(path)
            assert str(err.value) == f"{path}: {ROW_WIDTH}", name


def test_fit_reads_every_hash_record(runner, files: dict[str, Path]) -> None:
    sch = files["plain"].parent / "schema.json"
    res = runner.invoke(app, ["schema", "check", str(files["plain"]), "--schema", str(sch)],
                        env=ENV)
    assert res.exit_code == 0, res.output
    out = files["plain"].parent / "m"
    res = runner.invoke(app, ["fit", str(files["plain"]), "--schema", str(sch), "--model",
                              "dpsgd", "--epsilon", "1", "--out", str(out), "--seed", "0"],
                        env=ENV)
    assert res.exit_code == 0, res.output
    assert "400, " in res.output


def _with_break(tmp_path: Path, tail: str = "") -> tuple[Path, Path]:
    text = _frame().to_csv(index=False)
    path = tmp_path / "break.csv"
    path.write_text(text + '"x\nz",3,no\n' + tail)
    sch = tmp_path / "break.schema.json"
    sch.write_text(json.dumps(_schema([*LEVELS, "x\nz"])))
    return path, sch


def test_a_quoted_line_break_is_read_by_every_reader(tmp_path: Path) -> None:
    path, sch = _with_break(tmp_path)
    schema = TableSchema.from_json(sch.read_text())
    whole = read_csv(path, with_target=True, check=False)
    assert len(whole) == 401 and whole["tag"].iloc[-1] == "x\nz"
    frame = read_frame(path)
    assert frame.equals(whole.astype(object))
    streamed = pd.concat(list(read_frames(path, vectors=1)), ignore_index=True)
    assert streamed.equals(frame)
    scan = scan_table(path, schema)
    assert not scan.found and scan.counts is not None and scan.counts.sum() == 401


def test_a_quoted_line_break_past_the_first_chunks(tmp_path: Path) -> None:
    """The engine meets the line break after it has given chunks: no row twice, none
    missing."""
    text = _frame(10_000).to_csv(index=False)
    path = tmp_path / "late.csv"
    path.write_text(text + '"x\nz",3,no\n' + text.split("\n", 1)[1])
    whole = read_csv(path, with_target=True, check=False)
    streamed = pd.concat(list(read_frames(path, vectors=1)), ignore_index=True)
    assert len(whole) == 20_001 and streamed.equals(whole.astype(object))


@pytest.mark.parametrize("tail", [
    "#1,3\n", '"#1,3,no\n#2,3,no\n', "#1,3,no,4\n"])
def test_a_quoted_line_break_keeps_the_refusals(tmp_path: Path, tail: str) -> None:
    """A short or a long row is refused as every reader refuses it; a quote that is not
    closed is refused, never its rows dropped (DuckDB's parallel = false drops them)."""
    path, sch = _with_break(tmp_path, tail)
    schema = TableSchema.from_json(sch.read_text())
    for read in (lambda p: scan_table(p, schema), read_frame,
                 lambda p: list(read_frames(p, vectors=1)),
                 lambda p: read_csv(p, schema, with_target=True),
                 lambda p: list(read_chunks(p, schema, with_target=True, rows=64))):
        with pytest.raises(TableInputError) as info:
            read(path)
        if tail.startswith('"'):
            assert "cannot parse as CSV" in str(info.value)
        else:
            assert str(info.value) == f"{path}: {ROW_WIDTH}"
        assert "#" not in str(info.value)


_CHECK_AND_FIT = [
    ["schema", "check", "{data}", "--schema", "{schema}"],
    ["fit", "{data}", "--schema", "{schema}", "--model", "dpsgd", "--epsilon", "1",
     "--out", "{out}", "--seed", "0"],
]


def _run(runner, command: list[str], path: Path, sch: Path, tmp_path: Path):
    args = [a.format(data=path, schema=sch, out=tmp_path / "m") for a in command]
    return runner.invoke(app, args, env=ENV)


@pytest.mark.parametrize("command", _CHECK_AND_FIT, ids=["schema-check", "fit"])
def test_the_commands_read_a_quoted_line_break(runner, tmp_path: Path,
                                              command: list[str]) -> None:
    res = _run(runner, command, *_with_break(tmp_path), tmp_path)
    assert res.exit_code == 0, res.output


def test_the_engine_gives_a_csvs_rows_in_file_order(tmp_path: Path) -> None:
    """read_frame and read_frames (predict and evaluate on a zstd CSV) keep the file's order:
    reading the header had turned DuckDB's insertion order off again, and a large CSV's rows
    came back in the order its threads finished (predictions beside the wrong records)."""
    import duckdb
    rng = np.random.default_rng(3)
    n = 1_000_000
    df = pd.DataFrame(dict(i=np.arange(n), x=rng.random(n)))
    plain = tmp_path / "big.csv"
    df.to_csv(plain, index=False)
    packed = tmp_path / "big.csv.zst"
    duckdb.sql(f"COPY (SELECT * FROM read_csv('{plain}', all_varchar = true)) TO '{packed}' "
             "(FORMAT csv, COMPRESSION zstd)")
    want = [str(v) for v in range(n)]
    for path in (plain, packed):
        assert read_frame(path)["i"].tolist() == want
        streamed = pd.concat(list(read_frames(path, vectors=3)), ignore_index=True)
        assert streamed["i"].tolist() == want
    chunks = pd.concat(list(read_chunks(packed, None, rows=50_000)), ignore_index=True)
    assert chunks["i"].tolist() == want


MIXED = "the lines do not all end alike"


def _mixed(tmp_path: Path) -> tuple[Path, Path]:
    d = _frame()
    path = tmp_path / "crlf_app.csv"
    with open(path, "w", newline="") as fh:
        fh.write(d.to_csv(index=False, lineterminator="\r\n") + "x,5,yes\n#1,3,no\n")
    sch = tmp_path / "schema.json"
    sch.write_text(json.dumps(_schema()))
    return path, sch


def test_mixed_line_endings_are_refused_by_every_reader(tmp_path: Path) -> None:
    """DuckDB reads them only with strict_mode = false (which drops the rows after an unclosed
    quote): every reader refuses them alike, naming the cause, not a parse error."""
    path, sch = _mixed(tmp_path)
    schema = TableSchema.from_json(sch.read_text())
    for read in (lambda p: scan_table(p, schema), read_frame, read_csv,
                 lambda p: list(read_frames(p)), lambda p: list(read_chunks(p, schema))):
        with pytest.raises(TableInputError, match=MIXED):
            read(path)


@pytest.mark.parametrize("command", [*_CHECK_AND_FIT, ["schema", "infer", "{data}", "--target", "y"]],
                         ids=["schema-check", "fit", "schema-infer"])
def test_the_commands_refuse_mixed_line_endings(runner, tmp_path: Path,
                                               command: list[str]) -> None:
    res = _run(runner, command, *_mixed(tmp_path), tmp_path)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
    assert MIXED in res.stderr and "Traceback" not in res.output


def test_crlf_rows_with_lf_inside_quotes_are_read(tmp_path: Path) -> None:
    """A spreadsheet's CSV: CRLF rows, LF inside a quoted cell; and a quote inside an
    unquoted cell (literal).  One kind of line ending outside the quotes: read by all."""
    path = tmp_path / "excel.csv"
    with open(path, "w", newline="") as fh:
        fh.write('tag,a,y\r\n"x\nz",3,no\r\n"#1""\n",4,yes\r\nx"q,5,yes\r\n')
    whole = read_csv(path, with_target=True, check=False)
    assert whole["tag"].tolist() == ["x\nz", '#1"\n', 'x"q']
    assert read_frame(path).equals(whole.astype(object))
