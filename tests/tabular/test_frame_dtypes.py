"""A pandas or Arrow table read by the Python API as the same table written to CSV is read
(sweep 14, a notebook user's dtypes): the same release, or the same refusal in the same
words."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from oracledp._errors import BoundsViolation
from oracledp.tabular import TableSchema

SCHEMA = TableSchema.from_dict({
    "target": {"name": "y", "labels": ["no", "yes"]},
    "columns": [{"name": "a", "type": "numeric", "lower": 0, "upper": 9, "step": 1},
                {"name": "c", "type": "categorical", "levels": ["p", "q"]}]})


def _frame(n: int = 40) -> pd.DataFrame:
    return pd.DataFrame({"a": [i % 10 for i in range(n)], "c": ["p", "q"] * (n // 2),
                         "y": ["no", "yes", "yes", "no"] * (n // 4)})


@pytest.mark.parametrize("dtype", ["str", object, "string[python]", "string[pyarrow]",
                                   "category"])
def test_a_missing_target_cell_is_said_missing(dtype) -> None:
    """Sweep 14: a missing target cell in a text column of a DataFrame gave the refusal
    "target 'y': ." (its row had been read as the first distinct value's label)."""
    df = _frame()
    df["y"] = df["y"].astype(dtype)
    df.loc[5, "y"] = None
    for check in (lambda: SCHEMA.check(df, with_target=True), lambda: SCHEMA.labels_of(df)):
        with pytest.raises(BoundsViolation) as err:
            check()
        said = str(err.value)
        assert "target 'y': values must be one of the declared labels" in said, said
        assert "some are missing" in said and "5" not in said


def test_column_names_that_are_not_text_are_read_as_a_header_writes_them() -> None:
    """Sweep 14: integer column names raised a bare KeyError('0') in fit, infer and
    Domain.encode; a MultiIndex of columns too.  Names are read as text, as a CSV header
    writes them; a MultiIndex is refused in one message."""
    from oracledp._errors import TableInputError
    from oracledp.synth import Domain, TableSynthesizer

    df = _frame(400)
    num = df.set_axis([0, 1, 2], axis=1)
    sch = TableSchema.from_dict({**SCHEMA.to_dict(), "target": {"name": "2", "labels":
                                                                ["no", "yes"]},
                                 "columns": [{**c, "name": str(i)} for i, c in
                                             enumerate(SCHEMA.to_dict()["columns"])]})
    a = TableSynthesizer(epsilon=1, random_state=0).fit(num, sch).sample(50, random_state=1)
    b = TableSynthesizer(epsilon=1, random_state=0).fit(num.set_axis(["0", "1", "2"], axis=1),
                                                        sch).sample(50, random_state=1)
    pd.testing.assert_frame_equal(a, b)
    from oracledp.synth import evaluate_synthetic

    assert evaluate_synthetic(num, num, sch, classifier=False, orders=(1,))  # review 19
    cols, _ = TableSchema.infer(num, "2")
    assert [c.name for c in cols.columns] == ["0", "1"]
    dom = Domain(("0", "1"), ((0, 1, 2, 3, 4, 5, 6, 7, 8, 9), ("p", "q")))
    assert dom.encode(num[[0, 1]]).shape == (400, 2)
    multi = df.copy()
    multi.columns = pd.MultiIndex.from_tuples([("x", "a"), ("x", "c"), ("x", "y")])
    for call in (lambda: SCHEMA.check(multi, with_target=True),
                 lambda: TableSchema.infer(multi, "y")):
        with pytest.raises(TableInputError, match="MultiIndex"):
            call()


def test_cells_that_are_lists_are_refused_naming_the_column() -> None:
    """Sweep 14: a column of lists raised a bare "unhashable type: 'list'"."""
    df = _frame()
    df["c"] = [["p"], ["q"]] * 20
    with pytest.raises(BoundsViolation) as err:
        SCHEMA.check(df, with_target=True)
    assert "column 'c': values must be one of" in str(err.value)


NUM = TableSchema.from_dict({"columns": [
    {"name": "x", "type": "numeric", "lower": 0, "upper": 1, "step": 0.1}]})


@pytest.mark.parametrize("values", [
    [True, False] * 20, pd.array([True, None] * 20, dtype="boolean"),
    pd.to_datetime(["2020-01-01", "2021-06-01"] * 20), pd.to_timedelta([1, 2] * 20, unit="s"),
    np.array([0.5 + 0j, 0.2 + 1j] * 20), pd.Series([True, 0.5] * 20, dtype=object)],
    ids=["bool", "boolean", "datetime", "timedelta", "complex", "object-bool"])
def test_values_a_csv_writes_as_no_number_are_no_numbers_in_a_frame(values) -> None:
    """Sweep 14: from a DataFrame a numeric column of bools was read as 0/1, datetimes as
    nanoseconds, complex numbers by their real part, where the same table's CSV is refused."""
    with pytest.raises(BoundsViolation, match="column 'x': values must be finite numbers"):
        NUM.check(pd.DataFrame({"x": values}))


def test_a_float32_column_reads_alike_from_a_frame_and_from_arrow() -> None:
    """A float32 is its double from a DataFrame (any of its dtypes) and from Arrow, as the
    data engine reads it (review 19: read through its text, numpy and DuckDB wrote some
    float32 differently, 16403.438 against 16403.4375: other codes, other refusals)."""
    import pyarrow as pa

    from oracledp.tabular._engine import scan_table

    sch = TableSchema.from_dict({"columns": [
        {"name": "x", "type": "numeric", "lower": 16400, "upper": 16404, "step": 0.0005}]})
    x = np.float32([16400, 16403.4375, 16401.15, 16403.9])
    want = scan_table(pa.table({"x": pa.array(x, type=pa.float32())}), sch)
    assert want.codes is not None
    for dtype in ("float32", "Float32", "float[pyarrow]"):
        got = scan_table(pd.DataFrame({"x": pd.array(x, dtype=dtype)}), sch)
        assert np.array_equal(got.codes, want.codes), dtype
    assert 6875 in want.codes[:, 0]  # 16403.4375 on its grid point


def test_a_name_written_twice_in_arrow_or_parquet_is_refused(tmp_path) -> None:
    """Sweep 14: DuckDB renamed an Arrow or Parquet table's second 'sex' to 'sex_1', which
    the default ignore_extra dropped: one of the two columns was fitted without a word."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from oracledp.tabular._engine import scan_table

    sch = TableSchema.from_dict({"target": {"name": "y", "labels": ["no", "yes"]},
                                 "columns": [{"name": "c", "type": "categorical",
                                              "levels": ["p", "q"]}]})
    t = pa.table({"c": ["p", "q"], "y": ["no", "yes"]}).append_column("c", pa.array(["q", "p"]))
    pq.write_table(t, tmp_path / "t.parquet")
    for data in (t, str(tmp_path / "t.parquet")):
        with pytest.raises(BoundsViolation, match="the header has the column name 'c' twice"):
            scan_table(data, sch).raise_problems()


def test_numpy_numbers_and_arrays_are_taken_as_parameters() -> None:
    """Sweep 14: numeric_fraction=np.float32(0.3) was refused as not in (0, 1), and cut points
    given as a numpy array as not an integer; infer of an array raised AttributeError."""
    from oracledp.synth import TableSynthesizer

    df = _frame(400)
    a = TableSynthesizer(epsilon=1, random_state=0, numeric_fraction=np.float32(0.3),
                         bins={"a": np.array([3, 6])}).fit(df, SCHEMA)
    b = TableSynthesizer(epsilon=1, random_state=0, numeric_fraction=float(np.float32(0.3)),
                         bins={"a": [3, 6]}).fit(df, SCHEMA)
    pd.testing.assert_frame_equal(a.sample(30, random_state=1), b.sample(30, random_state=1))
    with pytest.raises(TypeError, match="infer reads a pandas DataFrame"):
        TableSchema.infer(np.zeros((3, 2)))
