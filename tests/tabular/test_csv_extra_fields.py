"""Rows with fewer or more fields than the header, refused alike by every reader.

A row with more fields than the header: a delimiter closing every row (one empty extra field)
is dropped, as the default engine reads it; any other extra field is refused.  pandas alone
made the first fields an index and shifted the columns: ``synth evaluate`` refused a file
``synth fit`` read, and accepted one it refused.

A row with fewer fields: pandas read its missing fields as empty cells (a column's
``missing`` policy then made it a record), DuckDB padded it too, except in a file holding a
quoted line break, which it refused.  Now the pandas reader, the chunked reader, the data
engine (DuckDB) and the Dask engine refuse both with one message (``ROW_WIDTH``) that names
the file and the rule, never a value, a line number or a count.  Empty lines are skipped by
every reader; a line of spaces alone is a row of one field.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from oracledp._errors import TableInputError
from oracledp.tabular import TableSchema, read_csv
from oracledp.tabular._aggregated import read_aggregated
from oracledp.tabular._chunks import read_chunks
from oracledp.tabular._csv import ROW_WIDTH
from oracledp.tabular._engine import scan_table
from oracledp.tabular._sources import read_frame, read_frames

SCHEMA = TableSchema.from_dict({
    "target": {"name": "y", "labels": ["no", "yes"]},
    "columns": [{"name": "a", "type": "categorical", "levels": ["p", "q"]},
                {"name": "b", "type": "numeric", "lower": 0, "upper": 99, "step": 1}]})
ROWS = [("p", "1", "no"), ("q", "22", "yes"), ("p", "3", "no")]


def _write(tmp_path, name: str, lines: list[str], header: str = "a,b,y"):
    path = tmp_path / name
    path.write_text(header + "\n" + "".join(f"{x}\n" for x in lines))
    return path


def _readers(path, schema=SCHEMA) -> list:
    return [lambda: read_csv(path, schema, with_target=True),
            lambda: pd.concat(list(read_chunks(path, schema, with_target=True, rows=2)),
                              ignore_index=True)]


def test_a_delimiter_closing_every_row_is_dropped(tmp_path) -> None:
    plain = read_csv(_write(tmp_path, "ok.csv", [",".join(r) for r in ROWS]), SCHEMA,
                     with_target=True)
    path = _write(tmp_path, "t.csv", [",".join(r) + "," for r in ROWS])
    for read in _readers(path):
        pd.testing.assert_frame_equal(read(), plain)
    read_aggregated(path, SCHEMA)  # the default engine reads it too
    # a table of one column, every row closed
    one = _write(tmp_path, "one.csv", ["p,", "q,"], header="a")
    assert read_csv(one, None)["a"].tolist() == ["p", "q"]


def test_closed_rows_with_a_quoted_line_break_are_read_by_every_reader(tmp_path) -> None:
    """Review 17: rows closed by a delimiter, one of them with a line break in a quoted field
    (and empty lines before the header): the data engine read the file, the pandas readers
    took the first half of the broken record for a row that was not closed and refused it."""
    rows = _rows(LATE, True)
    path = tmp_path / "closed.csv"
    path.write_text("\n\na,b,y\n" + "".join(f"{r},\n" for r in rows))
    readers = _every_reader(path)
    df = readers.pop("read_csv")()
    assert len(df) == LATE and list(df.columns) == ["a", "b", "y"]
    assert df.iloc[1].tolist() == ["p", "1", "n\no"] and df.iloc[2].tolist() == ["p", "2", "no"]
    assert readers.pop("scan_table")() == LATE
    for name, read in readers.items():
        pd.testing.assert_frame_equal(read().astype(object), df.astype(object), obj=name)


def test_a_quote_inside_a_field_does_not_hide_a_row_that_is_not_closed(tmp_path) -> None:
    """Review 18: the closed-row test took a quote inside an unquoted field (text, for every
    reader) for an opened quoted field and glued the rows after it into one record: the
    pandas readers read a file whose later rows are not closed, the data engine refused it."""
    rows = [r + "," for r in _rows(40, False)]
    rows[3] = 'q,3,n"o,'
    rows[20] = "q,20,no"  # not closed
    path = _write(tmp_path, "stray.csv", rows)
    for name, read in _every_reader(path).items():
        with pytest.raises(TableInputError) as err:
            read()
        assert str(err.value) == f"{path}: {ROW_WIDTH}", name


@pytest.mark.parametrize("lines", [
    [f"{i},{','.join(r)}" for i, r in enumerate(ROWS)],  # a row number in front
    [",".join(r) + ",x" for r in ROWS],  # a value after the last column
    [",".join(r) + ",," for r in ROWS],  # two empty fields
    [",".join(r) + ',""' for r in ROWS],  # a quoted empty field
    [",".join(ROWS[0]) + ","] + [",".join(r) for r in ROWS[1:]],  # the first row only
    [",".join(r) + ",x," for r in ROWS],  # two fields, the last empty
])
def test_other_extra_fields_are_refused_as_the_default_engine_refuses_them(
        tmp_path, lines: list[str]) -> None:
    path = _write(tmp_path, "x.csv", lines)
    with pytest.raises(TableInputError, match=re.escape(ROW_WIDTH)):
        read_aggregated(path, SCHEMA)
    for read in _readers(path):
        with pytest.raises(TableInputError, match=re.escape(ROW_WIDTH)):
            read()


# --- fewer or more fields, every reader ------------------------------------------------------

#: Schema of the tables below: every column takes a ``missing`` policy, so a short row read
#: with empty cells would be a record (as it was) rather than a schema problem.
LENIENT = TableSchema.from_dict({
    "target": {"name": "y", "labels": ["no", "yes"]},
    "columns": [{"name": "a", "type": "categorical", "levels": ["p", "q"], "missing": "level"},
                {"name": "b", "type": "numeric", "lower": 0, "upper": 99, "step": 1,
                 "missing": {"fill": 0}}]})
#: Past DuckDB's sniffer sample (20,480 lines): the row is met while reading, not sniffing.
LATE = 30_000
BREAK = '"p",1,"n\no"'  # a quoted field holding a line break (RFC 4180)


def _every_reader(path) -> dict:
    """Each reader's whole table (the data engine's as its record count)."""
    def scan() -> int:
        found = scan_table(path, LENIENT, with_target=False)
        assert not found.found and found.counts is not None
        return int(found.counts.sum())

    return {"read_csv": lambda: read_csv(path, LENIENT, with_target=True, check=False),
            "read_chunks": lambda: pd.concat(list(read_chunks(path, LENIENT, with_target=True,
                                                              rows=1000)), ignore_index=True),
            "scan_table": scan,
            "read_frame": lambda: read_frame(path),
            "read_frames": lambda: pd.concat(list(read_frames(path, vectors=1)),
                                             ignore_index=True)}


def _rows(n: int, quoted_break: bool) -> list[str]:
    rows = [f"{'pq'[i % 2]},{i % 90},{('no', 'yes')[i % 3 == 0]}" for i in range(n)]
    if quoted_break:
        rows[1] = BREAK
    return rows


@pytest.mark.parametrize("bad", ["q,77", "q", "q,77,yes,zz", "q,77,yes,,zz", '"q,77"',
                                 "  \t "],
                         ids=["one-short", "two-short", "one-long", "two-long",
                              "quoted-delimiter", "spaces"])
@pytest.mark.parametrize("at", [3, LATE - 5], ids=["sniffed", "late"])
@pytest.mark.parametrize("quoted_break", [False, True], ids=["plain", "quoted-break"])
def test_a_row_of_another_width_is_refused_by_every_reader(tmp_path, bad: str, at: int,
                                                           quoted_break: bool) -> None:
    rows = _rows(LATE, quoted_break)
    rows[at] = bad
    path = _write(tmp_path, "bad.csv", rows)
    for name, read in _every_reader(path).items():
        with pytest.raises(TableInputError) as err:
            read()
        # the file and the rule: no value of the row, no line number, no count
        assert str(err.value) == f"{path}: {ROW_WIDTH}", name
        said = str(err.value).replace(str(path), "")
        assert not re.search(r"\d", said) and "zz" not in said, name


def test_a_short_row_in_a_file_whose_rows_all_end_with_the_delimiter(tmp_path) -> None:
    path = _write(tmp_path, "closed.csv", [r + "," for r in _rows(LATE, False)[:-1]] + ["q,"])
    for name, read in _every_reader(path).items():
        with pytest.raises(TableInputError) as err:
            read()
        assert str(err.value) == f"{path}: {ROW_WIDTH}", name


@pytest.mark.parametrize("quoted_break", [False, True], ids=["plain", "quoted-break"])
def test_whole_rows_read_alike_with_empty_lines_skipped(tmp_path, quoted_break: bool) -> None:
    """Empty lines (before the header, between rows, at the end) are no rows for any reader;
    rows whose last cells are written empty are whole rows, read as before."""
    rows = _rows(LATE, quoted_break)
    rows[5] = "q,,"  # written empty: three fields
    rows[LATE - 9] = ",,"
    plain = _write(tmp_path, "plain.csv", rows)
    blank = tmp_path / "blank.csv"
    blank.write_text("\n\na,b,y\n" + "\n".join([*rows[:7], "", *rows[7:]]) + "\n\n\n")
    for path in (plain, blank):
        readers = _every_reader(path)
        df = readers.pop("read_csv")()
        assert len(df) == LATE and list(df.columns) == ["a", "b", "y"]
        assert df.iloc[5].tolist() == ["q", "", ""] and df.iloc[LATE - 9].tolist() == ["", "", ""]
        assert df.iloc[1].tolist() == (["p", "1", "n\no"] if quoted_break else ["q", "1", "no"])
        assert df.iloc[7].tolist() == ["q", "7", "no"]
        assert readers.pop("scan_table")() == LATE
        for name, read in readers.items():
            pd.testing.assert_frame_equal(read().astype(object), df.astype(object),
                                          obj=name)


@pytest.mark.parametrize("command", ["schema-check", "fit", "synth-fit"])
def test_the_commands_refuse_a_short_row_in_one_line(tmp_path, command: str) -> None:
    import json

    from typer.testing import CliRunner

    from oracledp._cli import app

    rows = _rows(200, True)
    rows[150] = "q,77"
    data = _write(tmp_path, "d.csv", rows)
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps(LENIENT.to_dict()))
    out = tmp_path / "m"
    args = {"schema-check": ["schema", "check", str(data), "--schema", str(schema)],
            "fit": ["fit", str(data), "--schema", str(schema), "--model", "rspm",
                    "--epsilon", "1", "--out", str(out)],
            "synth-fit": ["synth", "fit", str(data), "--schema", str(schema), "--epsilon", "1",
                          "--out", str(out)]}[command]
    res = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert res.exit_code == 2, res.output
    assert res.stderr == f"error: {data}: {ROW_WIDTH}\n", res.stderr
    assert "77" not in res.output and "Traceback" not in res.output
    assert not out.exists()


@pytest.mark.parametrize(("text", "want"), [
    ("c\nred\n\nblue\n\n", ["red", "", "blue", ""]),
    ("\r\n\r\nc\r\nred\r\n\r\n\r\nblue\r\n", ["red", "", "", "blue"]),
    ("c\nred\n   \nblue", ["red", "   ", "blue"]),
    (" \t\n\nc\nred\n\nblue\n", ["red", "", "blue"]),  # review 18: spaces before the header
    ('c\nred\n""\nblue\n', ["red", "", "blue"])], ids=["lf", "crlf-leading", "spaces", "quoted",
        "spaces-before-header"])
def test_a_one_column_tables_empty_lines_are_rows_for_every_reader(tmp_path, text, want) -> None:
    """Review 17: in a one-column table (a schema without a target makes it usual) an empty
    line after the header is a record whose one field is empty for the data engine, and
    pandas skipped it: `schema infer` proposed no missing policy, `synth fit` counted two
    more records than `read_csv` read.  Every reader now reads it as a row with an empty cell
    (empty lines before the header are skipped by all)."""
    from oracledp.synth import TableDomain

    path = tmp_path / "one.csv"
    path.write_bytes(text.encode())
    assert read_csv(path)["c"].tolist() == want
    for name, frame in {"read_chunks": pd.concat(list(read_chunks(path, None, rows=1)),
                                                 ignore_index=True),
                        "read_frame": read_frame(path),
                        "read_frames": pd.concat(list(read_frames(path, vectors=1)),
                                                 ignore_index=True)}.items():
        assert frame["c"].fillna("").tolist() == want, name
    schema = TableSchema.from_dict({"columns": [
        {"name": "c", "type": "categorical", "levels": ["blue", "red", "x"],
         "missing": "level"}]})
    if "   " not in want:  # (spaces around a value are refused by the schema)
        assert int(TableDomain(schema).count(str(path))[1].sum()) == len(want)


@pytest.mark.parametrize("quoted_break", [False, True], ids=["plain", "quoted-break"])
def test_a_cr_only_file_reads_a_row_after_an_empty_line_whole(tmp_path, quoted_break) -> None:
    """Review 17: in a file whose lines end in a CR alone (old Mac files), pandas read an
    empty line followed by a row starting with an empty cell as that row shifted left by a
    field (``,1,no`` as ``1 | no | ''``); the data engine read it right.  The pandas readers
    are told that a CR ends a line: every reader reads the same table."""
    rows = _rows(LATE, quoted_break)
    rows[4] = ",4,no"
    rows[LATE - 3] = ",,yes"
    path = tmp_path / "mac.csv"
    path.write_bytes(("a,b,y\r" + "\r".join([*rows[:4], "", *rows[4:LATE - 3], "",
                                              *rows[LATE - 3:]]) + "\r").encode())
    readers = _every_reader(path)
    df = readers.pop("read_csv")()
    assert len(df) == LATE
    assert df.iloc[4].tolist() == ["", "4", "no"] and df.iloc[LATE - 3].tolist() == ["", "", "yes"]
    assert df.iloc[1].tolist() == (["p", "1", "n\no"] if quoted_break else ["q", "1", "no"])
    assert readers.pop("scan_table")() == LATE
    for name, read in readers.items():
        pd.testing.assert_frame_equal(read().astype(object), df.astype(object), obj=name)
