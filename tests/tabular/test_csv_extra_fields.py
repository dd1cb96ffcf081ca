"""Rows with more fields than the header, read the same by every pandas reader as by the
default engine: a delimiter closing every row (empty extra fields) is dropped, any other
extra field is refused naming that cause.  pandas alone made the first fields an index and
shifted the columns: ``synth evaluate`` refused a file ``synth fit`` read, and accepted one it
refused."""

from __future__ import annotations

import pandas as pd
import pytest

from oracledp._errors import TableInputError
from oracledp.tabular import TableSchema, read_csv
from oracledp.tabular._chunks import read_chunks

SCHEMA = TableSchema.from_dict({
    "target": {"name": "y", "labels": ["no", "yes"]},
    "columns": [{"name": "a", "type": "categorical", "levels": ["p", "q"]},
                {"name": "b", "type": "numeric", "lower": 0, "upper": 99, "step": 1}]})
ROWS = [("p", "1", "no"), ("q", "22", "yes"), ("", "3", "no")]


def _write(tmp_path, name: str, lines: list[str]):
    path = tmp_path / name
    path.write_text("a,b,y\n" + "".join(f"{x}\n" for x in lines))
    return path


def _read_both(path) -> list[pd.DataFrame]:
    return [read_csv(path, None, with_target=True),
            pd.concat(list(read_chunks(path, None, rows=2)), ignore_index=True)]


def test_a_closing_delimiter_is_dropped(tmp_path) -> None:
    plain = read_csv(_write(tmp_path, "ok.csv", [",".join(r) for r in ROWS]), None)
    for lines in ([",".join(r) + "," for r in ROWS],  # every row
                  [",".join(ROWS[0]) + ","] + [",".join(r) for r in ROWS[1:]],  # the first
                  [",".join(r) + ",," for r in ROWS]):  # two empty fields
        for df in _read_both(_write(tmp_path, "t.csv", lines)):
            pd.testing.assert_frame_equal(df.reset_index(drop=True), plain, check_dtype=False)
            assert list(df.columns) == ["a", "b", "y"]


@pytest.mark.parametrize("lines", [
    [f"{i},{','.join(r)}" for i, r in enumerate(ROWS)],  # a row number in front
    [",".join(r) + ",x" for r in ROWS],  # a value after the last column
])
def test_other_extra_fields_are_refused(tmp_path, lines: list[str]) -> None:
    path = _write(tmp_path, "x.csv", lines)
    for read in (lambda: read_csv(path, SCHEMA, with_target=True),
                 lambda: list(read_chunks(path, SCHEMA, rows=2))):
        with pytest.raises(TableInputError, match="a row with more fields than the header"):
            read()
