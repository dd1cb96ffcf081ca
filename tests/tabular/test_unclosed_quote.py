"""An unclosed quote in a UTF-8 CSV is a quote that is not closed, not a file that is not UTF-8.

DuckDB's sniffer, finding no dialect that fits the rows (delimiter and quote are set, so an
unclosed quote), lists its search space ("Encoding: utf-8") and hints at the file's encoding
and compression; the engine's error mapping read any "utf-8" as an encoding error (and, for a
gzip or zstd CSV, any "compress" as an unreadable archive).  A file that is really not UTF-8
keeps its message.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from oracledp._cli import app
from oracledp._errors import TableInputError
from oracledp.datasets import table_schema
from oracledp.tabular import TableSchema
from oracledp.tabular._engine import scan_table
from oracledp.tabular._sources import _fail, read_frame

HEADER = "class,age,sex,survived\n"
ROW = "1st class,adults,man,yes\n"
QUOTE = "a quote that is not closed"
NOT_UTF8 = "not UTF-8"
ENV = {"COLUMNS": "200"}


def _unclosed(tmp_path: Path) -> dict[str, Path]:
    files = {
        "first row": HEADER + '"' + ROW,
        "between rows": HEADER + ROW + '"' + ROW + ROW,
        "past the sniffer's sample": HEADER + ROW * 30_000 + '"' + ROW,
        "a cell reading utf-8": HEADER + '"utf-8 x,adults,man,yes\n',
    }
    out = {}
    for k, text in files.items():
        out[k] = tmp_path / f"{k.replace(' ', '_').replace(chr(39), '')}.csv"
        out[k].write_bytes(text.encode("ascii"))
    out["gzip"] = tmp_path / "first.csv.gz"
    out["gzip"].write_bytes(gzip.compress((HEADER + '"' + ROW).encode()))
    return out


def _latin1(tmp_path: Path) -> dict[str, Path]:
    bad = "1st cl\xe9ss,adults,man,yes\n".encode("latin-1")
    files = {"header": "cl\xe9ss,age,sex,survived\n".encode("latin-1") + ROW.encode(),
             "a row": (HEADER + ROW).encode() + bad,
             "past the sniffer's sample": (HEADER + ROW * 30_000).encode() + bad,
             "and an unclosed quote": (HEADER + ROW * 1500).encode() + bad
             + ('"' + ROW).encode(),
             "utf-16": (HEADER + ROW).encode("utf-16")}
    out = {}
    for k, data in files.items():
        out[k] = tmp_path / f"latin1_{k.replace(' ', '_').replace(chr(39), '')}.csv"
        out[k].write_bytes(data)
    out["gzip"] = tmp_path / "latin1.csv.gz"
    out["gzip"].write_bytes(gzip.compress((HEADER + ROW).encode() + bad))
    return out


@pytest.fixture(scope="module")
def schema() -> TableSchema:
    return TableSchema.from_dict(table_schema("titanic"))


def test_an_unclosed_quote_says_so(tmp_path: Path, schema: TableSchema) -> None:
    for case, path in _unclosed(tmp_path).items():
        for read in (lambda p: scan_table(p, schema), read_frame):
            with pytest.raises(TableInputError) as info:
                read(path)
            msg = str(info.value)
            assert QUOTE in msg and NOT_UTF8 not in msg and "gzip" not in msg, (case, msg)


def test_a_file_that_is_not_utf8_keeps_its_message(tmp_path: Path, schema: TableSchema
                                                   ) -> None:
    for case, path in _latin1(tmp_path).items():
        for read in (lambda p: scan_table(p, schema), read_frame):
            with pytest.raises(TableInputError) as info:
                read(path)
            assert NOT_UTF8 in str(info.value), (case, str(info.value))


def test_the_mapping_of_duckdbs_messages() -> None:
    sniffed = Exception('Invalid Input Error: Error when sniffing file "x.csv".\nIt was not '
                        "possible to automatically detect the CSV parsing dialect\nEncoding: "
                        "utf-8\n* Make sure you are using the correct file encoding. If not, set "
                        "it (e.g., encoding = 'utf-16').\n* Check you are using the correct "
                        "file compression, otherwise set it (e.g., compression = 'zstd')")
    for kind in ("csv:none", "csv:gzip", "csv:zstd"):
        assert QUOTE in str(_fail("x.csv", kind, ",", sniffed))
    bad = Exception("Invalid Input Error: CSV Error on Line: 3\nOriginal Line: ...\nInvalid "
                    "unicode (byte sequence mismatch) detected. This file is not utf-8 encoded.")
    assert NOT_UTF8 in str(_fail("x.csv", "csv:none", ",", bad))
    assert NOT_UTF8 in str(_fail("x.csv", "csv:none", ",", Exception("Invalid UTF8 found")))
    gz = Exception("IO Error: Failed to decode gzip stream: data error")
    assert "not a readable gzip file" in str(_fail("x.csv.gz", "csv:gzip", ",", gz))


@pytest.mark.parametrize("command", [
    ["synth", "fit", "{data}", "--schema", "{schema}", "--epsilon", "1", "--out", "{out}"],
    ["fit", "{data}", "--schema", "{schema}", "--model", "dpsgd", "--epsilon", "1",
     "--delta", "1e-6", "--out", "{out}"],
    ["schema", "check", "{data}", "--schema", "{schema}"],
], ids=["synth-fit", "fit", "schema-check"])
def test_the_commands_say_one_line(runner, tmp_path: Path, command: list[str]) -> None:
    sch = tmp_path / "schema.json"
    sch.write_text(json.dumps(table_schema("titanic")))
    quoted = tmp_path / "q.csv"
    quoted.write_text(HEADER + '"' + ROW)
    latin = tmp_path / "l.csv"
    latin.write_bytes((HEADER + ROW).encode() + "1st cl\xe9ss,adults,man,yes\n".encode("latin-1"))
    for data, needle, other in ((quoted, QUOTE, NOT_UTF8), (latin, NOT_UTF8, QUOTE)):
        args = [a.format(data=data, schema=sch, out=tmp_path / "m") for a in command]
        res = runner.invoke(app, args, env=ENV)
        assert res.exit_code == 2, res.output
        assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
        assert needle in res.stderr and other not in res.stderr, res.stderr
        assert "Traceback" not in res.output and not (tmp_path / "m").exists()
