"""A damaged compressed CSV is said to be one: not a parse error, not an empty file.

DuckDB reads a zstd CSV cut short as if the file ended there (the rows before the cut were
counted, fitted and sampled from; a cut in the first block gave "the file is empty"), and its
"Data corruption detected" for a damaged block was reported as a CSV that cannot be parsed.
The zstd frames are now walked before DuckDB reads them (a truncated file, a damaged frame or
block header) and a decompression error is the archive's: "not a readable zstd file", as a
damaged gzip file is "not a readable gzip file".  A gzip file cut short past what the Dask
engine's client decompresses was a parse error there.  No message carries a record value, a
row index or a count.
"""

from __future__ import annotations

import gzip
import json
import random
import struct
from pathlib import Path

import duckdb
import pytest

from oracledp._cli import app
from oracledp._errors import TableInputError
from oracledp.datasets import table_schema
from oracledp.tabular import TableSchema, read_aggregated, read_csv
from oracledp.tabular._engine import scan_table
from oracledp.tabular._sources import _fail, read_frame, read_frames

HEADER = "class,age,sex,survived\n"
ROWS = ["1st class,adults,man,yes\n", "2nd class,child,women,no\n",
        "3rd class,adults,women,yes\n", "crew,adults,man,no\n"]
ENV = {"COLUMNS": "400"}
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


@pytest.fixture(scope="module")
def schema() -> TableSchema:
    return TableSchema.from_dict(table_schema("titanic"))


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = random.Random(0)
    path = tmp_path_factory.mktemp("compressed") / "t.csv"
    path.write_text(HEADER + "".join(rng.choices(ROWS, k=60_000)))
    return path


def _zstd(src: Path, dst: Path, header: bool = True) -> bytes:
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * FROM read_csv('{src}', all_varchar = true)) TO '{dst}' "
                f"(FORMAT csv, HEADER {str(header).lower()}, COMPRESSION zstd)")
    con.close()
    return dst.read_bytes()


@pytest.fixture(scope="module")
def zst(plain: Path) -> bytes:
    data = _zstd(plain, plain.with_suffix(".csv.zst"))
    assert data[:4] == ZSTD_MAGIC
    return data


def _readers(schema: TableSchema) -> dict:
    return {"scan_table": lambda p: scan_table(p, schema),
            "read_aggregated": lambda p: read_aggregated(p, schema),
            "read_csv": lambda p: read_csv(p, schema, with_target=True),
            "read_frame": read_frame,
            "read_frames": lambda p: [len(f) for f in read_frames(p)]}


def _refused(path: Path, schema: TableSchema, message: str) -> None:
    for name, read in _readers(schema).items():
        with pytest.raises(TableInputError) as info:
            read(path)
        assert str(info.value) == f"{path}: {message}", (name, str(info.value))


def _first_block(data: bytes) -> tuple[int, int]:
    """Where the first block of a zstd frame starts (its 3-byte header) and its size."""
    desc = data[4]
    single = bool(desc & 0x20)
    start = 5 + (not single) + (0, 1, 2, 4)[desc & 3] + (int(single), 2, 4, 8)[desc >> 6]
    header = int.from_bytes(data[start:start + 3], "little")
    assert (header >> 1) & 3 == 2  # a compressed block
    return start, header >> 3


def test_the_valid_file_reads_as_the_plain_one(plain: Path, zst: bytes,
                                               schema: TableSchema) -> None:
    want = scan_table(plain, schema)
    got = scan_table(plain.with_suffix(".csv.zst"), schema)
    assert (got.codes == want.codes).all() and (got.counts == want.counts).all()


@pytest.mark.parametrize("cut", ["magic", "frame header", "first block", "half", "last byte"])
def test_a_truncated_zstd_file_is_said_to_be_truncated(tmp_path: Path, zst: bytes,
                                                       schema: TableSchema, cut: str) -> None:
    start, _ = _first_block(zst)
    at = {"magic": 4, "frame header": 5, "first block": start + 40, "half": len(zst) // 2,
          "last byte": len(zst) - 1}[cut]
    path = tmp_path / "cut.csv.zst"
    path.write_bytes(zst[:at])
    _refused(path, schema, "not a readable zstd file (truncated)")


@pytest.mark.parametrize("damage", ["block", "reserved bit", "block type", "trailing bytes"])
def test_a_corrupt_zstd_file_is_not_a_readable_zstd_file(tmp_path: Path, zst: bytes,
                                                         schema: TableSchema,
                                                         damage: str) -> None:
    start, size = _first_block(zst)
    data = bytearray(zst)
    if damage == "block":  # a literals section that refers to no table: the decoder refuses
        data[start + 3:start + 3 + min(size, 256)] = b"\xff" * min(size, 256)
    elif damage == "reserved bit":
        data[4] |= 0x08
    elif damage == "block type":  # type 3 is reserved
        data[start] |= 0x06
    else:
        data += b"\x00" * 16
    path = tmp_path / "bad.csv.zst"
    path.write_bytes(bytes(data))
    _refused(path, schema, "not a readable zstd file")


def test_several_frames_and_a_skippable_frame_are_read(tmp_path: Path, plain: Path,
                                                       schema: TableSchema) -> None:
    """Concatenated frames (and user data in a skippable frame) are one valid zstd file."""
    lines = plain.read_text().splitlines(keepends=True)
    (tmp_path / "a.csv").write_text("".join(lines[:20_001]))
    (tmp_path / "b.csv").write_text(HEADER + "".join(lines[20_001:]))
    first = _zstd(tmp_path / "a.csv", tmp_path / "a.csv.zst")
    rest = _zstd(tmp_path / "b.csv", tmp_path / "b.csv.zst", header=False)
    path = tmp_path / "frames.csv.zst"
    path.write_bytes(first + struct.pack("<II", 0x184D2A53, 5) + b"notes" + rest)
    want = scan_table(plain, schema)
    got = scan_table(path, schema)
    assert (got.codes == want.codes).all() and (got.counts == want.counts).all()
    path.write_bytes(first + struct.pack("<II", 0x184D2A53, 50) + b"notes")
    _refused(path, schema, "not a readable zstd file (truncated)")


@pytest.mark.parametrize("at", [10, 0.5, -4])
def test_a_truncated_gzip_file_is_not_a_readable_gzip_file(tmp_path: Path, plain: Path,
                                                           schema: TableSchema,
                                                           at: float) -> None:
    data = gzip.compress(plain.read_bytes())
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(data[:int(len(data) * at) if isinstance(at, float) else at])
    _refused(path, schema, "not a readable gzip file")


def test_the_mapping_of_decompression_errors() -> None:
    """DuckDB's IO errors while decompressing, and the Dask workers' gzip EOFError."""
    from oracledp.tabular._dask import _reading_error

    for text in ("IO Error: Data corruption detected",
                 "IO Error: Restored data doesn't match checksum",
                 "IO Error: Unknown frame descriptor"):
        assert str(_fail("x.csv.zst", "csv:zstd", ",", Exception(text))) == (
            "x.csv.zst: not a readable zstd file")
    assert "cannot parse as CSV" in str(_fail("x.csv", "csv:none", ",",
                                              Exception("IO Error: Data corruption detected")))
    eof = EOFError("Compressed file ended before the end-of-stream marker was reached")
    assert str(_reading_error(eof, "x.csv.gz", "csv:gzip", ",")) == (
        "x.csv.gz: not a readable gzip file")


@pytest.mark.parametrize("kind", ["csv:zstd", "csv:gzip", "csv:none"])
@pytest.mark.parametrize("text", [
    "IO Error: Could not write file \"/tmp/duckdb_temp_storage-0.tmp\": No space left on device",
    "Out of Memory Error: could not allocate block of size 256.0 KiB",
])
def test_a_full_disk_or_memory_is_not_blamed_on_the_file(kind: str, text: str) -> None:
    # Before: an IO error on a compressed file always read "not a readable zstd file".
    msg = str(_fail("x.csv.zst", kind, ",", Exception(text)))
    assert "ran out of disk space or memory" in msg and "not a readable" not in msg
    assert "/tmp" not in msg and "256" not in msg


@pytest.mark.parametrize("command", [
    ["schema", "check", "{data}", "--schema", "{schema}"],
    ["fit", "{data}", "--schema", "{schema}", "--model", "rspm", "--epsilon", "1",
     "--out", "{out}"],
    ["synth", "fit", "{data}", "--schema", "{schema}", "--epsilon", "1", "--out", "{out}"],
], ids=["schema-check", "fit", "synth-fit"])
def test_the_commands_say_one_line(runner, tmp_path: Path, zst: bytes, plain: Path,
                                   command: list[str]) -> None:
    sch = tmp_path / "schema.json"
    sch.write_text(json.dumps(table_schema("titanic")))
    start, _ = _first_block(zst)
    corrupt = bytearray(zst)
    corrupt[start + 3:start + 259] = b"\xff" * 256
    gz = gzip.compress(plain.read_bytes())
    cases = {"cut.csv.zst": (zst[:len(zst) // 2], "not a readable zstd file (truncated)"),
             "bad.csv.zst": (bytes(corrupt), "not a readable zstd file"),
             "cut.csv.gz": (gz[:len(gz) // 2], "not a readable gzip file")}
    for name, (data, says) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        args = [a.format(data=path, schema=sch, out=tmp_path / "m") for a in command]
        res = runner.invoke(app, args, env=ENV)
        assert res.exit_code == 2, res.output
        assert res.stderr == f"error: {path}: {says}\n", res.stderr
        assert "Traceback" not in res.output and not (tmp_path / "m").exists()
