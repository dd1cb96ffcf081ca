"""Rows with more fields than the header, read by the pandas readers as the default engine
reads them: a delimiter closing every row (one empty extra field) is dropped, any other extra
field is refused naming that cause.  pandas alone made the first fields an index and shifted
the columns: ``synth evaluate`` refused a file ``synth fit`` read, and accepted one it
refused."""

from __future__ import annotations

import pandas as pd
import pytest

from oracledp._errors import TableInputError
from oracledp.tabular import TableSchema, read_csv
from oracledp.tabular._aggregated import read_aggregated
from oracledp.tabular._chunks import read_chunks

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
    with pytest.raises(TableInputError, match="a row with more fields than the header"):
        read_aggregated(path, SCHEMA)
    for read in _readers(path):
        with pytest.raises(TableInputError, match="a row with more fields than the header"):
            read()
