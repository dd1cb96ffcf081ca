"""What a new user's table brings: repeated header names, levels coded as 1.0 rather than 1,
declared clipping, schema inference for codes and identifiers, and `oracledp schema check`."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from oracledp._cli import app
from oracledp.tabular import TableInputError, TableSchema, read_csv, read_csv_aggregated

ENV = {"COLUMNS": "200"}

#: A small public schema: a numeric age, a 0/1 code, a text level; labels coded 0/1.
SCHEMA = {
    "target": {"name": "y", "labels": ["0", "1"]},
    "columns": [
        {"name": "age", "type": "numeric", "lower": 0, "upper": 100, "step": 1},
        {"name": "smoker", "type": "categorical", "levels": ["0", "1"]},
        {"name": "sex", "type": "categorical", "levels": ["F", "M"]},
    ],
}


@pytest.fixture
def schema() -> TableSchema:
    return TableSchema.from_dict(SCHEMA)


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args), env=ENV)


# --- a column name written twice in the header ------------------------------------------------

DUPLICATED = b"age,smoker,sex,age,y\n30,1,F,31,0\n40,0,M,41,1\n"


@pytest.mark.parametrize("ignore_extra", [True, False])
def test_a_repeated_header_name_is_refused_by_name(schema, ignore_extra):
    for read in (lambda: read_csv(DUPLICATED),
                 lambda: read_csv(DUPLICATED, schema, with_target=True,
                                  ignore_extra=ignore_extra),
                 lambda: read_csv_aggregated(DUPLICATED, schema, ignore_extra=ignore_extra)):
        with pytest.raises(TableInputError, match="the column name 'age' twice") as err:
            read()
        assert "age.1" not in str(err.value)
    frame = pd.DataFrame([[30, "1", "F", 31, "0"]], columns=["age", "smoker", "sex", "age", "y"])
    with pytest.raises(TableInputError, match="the column name 'age' twice"):
        TableSchema.infer(frame, target="y")
    problems = schema.problems(frame, with_target=True, ignore_extra=ignore_extra)
    assert problems[0].startswith("the header has the column name 'age' twice")
    assert not any("missing column" in p for p in problems)


def test_a_repeated_header_name_is_refused_on_the_command_line(tmp_path, schema):
    data = tmp_path / "dup.csv"
    data.write_bytes(DUPLICATED.replace(b"smoker", b"age", 1))  # age written 3 times
    (tmp_path / "s.json").write_text(schema.to_json())
    for args in (["schema", "infer", str(data), "--target", "y"],
                 ["fit", str(data), "--schema", str(tmp_path / "s.json"), "--epsilon", "1",
                  "--out", str(tmp_path / "m")],
                 ["fit", str(data), "--schema", str(tmp_path / "s.json"), "--epsilon", "1",
                  "--model", "dpsgd", "--ignore-extra", "--out", str(tmp_path / "m")]):
        res = _invoke(*args)
        assert res.exit_code == 2, res.output
        assert "the column name 'age' 3 times" in res.stderr
        assert "age.1" not in res.stderr and res.stderr.count("\n") == 1
        assert not (tmp_path / "m").exists()
