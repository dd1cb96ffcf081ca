"""The data engine (DuckDB): the same codes, counts and refusals as the schema's own pandas
scan, for every format it reads (CSV plain/gzip/zstd, Parquet file/directory/glob, typed
columns), and one-line refusals that quote nothing of the data."""

from __future__ import annotations

import gzip
import json

import duckdb
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from oracledp._cli import app
from oracledp._errors import BoundsViolation, TableInputError
from oracledp.tabular import (
    Column,
    TableSchema,
    check_table,
    read_aggregated,
    read_csv,
)
from oracledp.tabular._engine import _scan_frame, scan_table

SCHEMA = TableSchema(
    columns=(
        Column("age", "numeric", lower=0, upper=100, step=1),
        Column("rate", "numeric", lower=0, upper=1, step=0.25, missing="level"),
        Column("gain", "numeric", lower=0, upper=1000, bins=(1.0, 10.5, 100.0),
               out_of_bounds="clip"),
        Column("color", "categorical", levels=("red", "green", "blue"), missing="level"),
        Column("code", "categorical", levels=("1", "2", "10")),
    ),
    target="y", labels=("no", "yes"))

#: Cells that the SQL encodes and cells that it leaves to the schema's own code: plain
#: decimals, and the texts on which parsers differ (exponents, signs, spaces, underscores,
#: more than 15 digits, inf/nan, missing tokens, float-coded levels).
NUMBER_CELLS = ["0", "1", "7", "42", "100", "0.25", "0.5", "0.125", "1.0", "-0", "007", "3.",
                ".5", "-.5", "+1", "1e1", "1E-1", " 1", "1 ", "1_0", "inf", "-inf", "nan",
                "NaN", "NA", "", "?", "abc", "0x10", "1.2.3", "--1", "-", ".",
                "12345678901234567", "0.1000000000000001", "99.99999999999999", "100.5",
                "-3", "1000", "1001", "10.5", "10.49999", "0.375", "0.625", "50.5", "2.5"]
LEVEL_CELLS = ["red", "green", "blue", "Red", "red ", "", "NA", "1", "1.0", "2", "10", "10.0",
               "3", "01", "1e1", "purple"]


def _write(tmp_path, df: pd.DataFrame, name: str = "t.csv"):
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


def _pandas_scan(path, schema, **kw):
    """The reference: the schema's own scan of the whole table read by pandas."""
    return _scan_frame(read_csv(path, check=False), schema, kw.get("with_target", True),
                       kw.get("ignore_extra", True), True)


def _same(a, b) -> None:
    assert sorted(a.found.items()) == sorted(b.found.items())
    assert a.clipped == b.clipped
    if a.codes is None or b.codes is None:
        assert a.codes is None and b.codes is None
        return
    np.testing.assert_array_equal(a.codes, b.codes)
    np.testing.assert_array_equal(a.counts, b.counts)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_engine_scans_as_the_schema_does(tmp_path, data):
    """On random tables mixing plain and adversarial cells: the same problems, codes and
    counts as the schema's pandas scan (a planted difference in any SQL code fails this)."""
    n = data.draw(st.integers(1, 40))
    clean = data.draw(st.booleans())  # half the tables have no problem: codes are compared
    nums = ["0", "1", "42", "100", "0.25", "007", "-0", "3.", "50.5", "2.5"] if clean else \
        NUMBER_CELLS
    rates = ["0", "0.25", "0.5", "1", "", "NA", "0.375", "0.625", "0.125"] if clean else \
        NUMBER_CELLS
    gains = ["0", "1", "10.5", "10.49999", "100", "2000", "-3", "5"] if clean else NUMBER_CELLS
    colors = ["red", "green", "blue", "", "NA"] if clean else LEVEL_CELLS
    codes = ["1", "2", "10", "1.0", "10.0", "1e1"] if clean else LEVEL_CELLS
    pick = lambda cells: data.draw(st.lists(st.sampled_from(cells), min_size=n, max_size=n))  # noqa: E731
    df = pd.DataFrame({"age": pick(nums), "rate": pick(rates), "gain": pick(gains),
                       "color": pick(colors), "code": pick(codes),
                       "y": pick(["no", "yes"] if clean else ["no", "yes", "", "maybe", "1"])})
    path = _write(tmp_path, df)
    _same(scan_table(path, SCHEMA), _pandas_scan(path, SCHEMA))


def test_every_bundled_table_counts_as_before(tmp_path):
    from oracledp.datasets import TABLES, table_csv, table_schema

    for name in TABLES:
        path = table_csv(name, tmp_path / f"{name}.csv", split="all")
        schema = TableSchema.from_dict(table_schema(name))
        got, want = scan_table(path, schema), _pandas_scan(path, schema)
        assert not got.found
        _same(got, want)


def _frame(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(0, 101, n), "rate": rng.choice([0, 0.25, 0.5, 1.0], n),
        "gain": rng.choice([0.0, 3.0, 50.0, 500.0], n),
        "color": rng.choice(["red", "green", "blue"], n), "code": rng.choice([1, 2, 10], n),
        "y": rng.choice(["no", "yes"], n)})


def _parquet(path, df: pd.DataFrame) -> None:
    con = duckdb.connect()
    con.register("df", df)
    con.execute(f"COPY (SELECT * FROM df) TO '{path}' (FORMAT parquet)")
    con.close()


def test_parquet_and_compressed_csv_count_as_the_plain_csv(tmp_path):
    """Typed Parquet columns (integers, doubles, text), a directory and a glob of Parquet
    files, gzip and zstd CSV: the same table as the plain CSV."""
    df = _frame()
    want = read_aggregated(_write(tmp_path, df), SCHEMA)
    (tmp_path / "parts").mkdir()
    _parquet(tmp_path / "t.parquet", df)
    _parquet(tmp_path / "parts" / "a.parquet", df.iloc[:1000])
    _parquet(tmp_path / "parts" / "b.parquet", df.iloc[1000:])
    (tmp_path / "t.csv.gz").write_bytes(gzip.compress((tmp_path / "t.csv").read_bytes()))
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * FROM read_csv('{tmp_path / 't.csv'}', all_varchar = true)) "
                f"TO '{tmp_path / 't.csv.zst'}' (FORMAT csv, COMPRESSION zstd)")
    for source in (tmp_path / "t.parquet", tmp_path / "parts", str(tmp_path / "parts" / "*.parquet"),
                   tmp_path / "t.csv.gz", tmp_path / "t.csv.zst"):
        got = read_aggregated(source, SCHEMA)
        np.testing.assert_array_equal(got.codes, want.codes)
        np.testing.assert_array_equal(got.counts, want.counts)
        assert read_csv(source, SCHEMA, with_target=True).shape == df.shape


def test_a_nan_in_a_typed_column_is_a_missing_cell(tmp_path):
    df = _frame(200)
    df.loc[::7, "rate"] = np.nan  # rate has a missing level; age does not
    _parquet(tmp_path / "t.parquet", df)
    got = read_aggregated(tmp_path / "t.parquet", SCHEMA)
    assert got.counts[got.codes[:, 1] == SCHEMA.columns[1].n_values].sum() == len(df.iloc[::7])
    df.loc[::5, "age"] = np.nan
    _parquet(tmp_path / "u.parquet", df)
    with pytest.raises(BoundsViolation, match="'age': missing values"):
        read_aggregated(tmp_path / "u.parquet", SCHEMA)


@pytest.mark.parametrize("case, kind, needle", [
    ("corrupt", TableInputError, "not a readable Parquet file"),
    ("no_match", TableInputError, "no file matches"),
    ("empty_dir", TableInputError, "holds no .parquet file"),
    ("wrong_type", BoundsViolation, "'age': values must be finite numbers"),
    ("boolean_number", BoundsViolation, "'age': values must be finite numbers"),
    ("timestamp_number", BoundsViolation, "'age': values must be finite numbers"),
    ("missing_column", BoundsViolation, "missing column(s): 'color'"),
    ("unknown_level", BoundsViolation, "'color': values must be one of the 3 declared levels"),
])
def test_bad_parquet_is_one_refusal_naming_no_value(tmp_path, case, kind, needle):
    df = _frame(300)
    path = tmp_path / "t.parquet"
    if case == "corrupt":
        _parquet(path, df)
        path.write_bytes(path.read_bytes()[:200] + b"Martian" * 50)
    elif case == "no_match":
        path = tmp_path / "nothing-*.parquet"
    elif case == "empty_dir":
        path = tmp_path / "d"
        path.mkdir()
    elif case == "wrong_type":
        _parquet(path, df.assign(age=np.where(np.arange(len(df)) % 9, df.age.astype(str),
                                              "Martian")))
    elif case == "boolean_number":  # a Parquet BOOLEAN (or TIMESTAMP) declared numeric:
        _parquet(path, df.assign(age=np.arange(len(df)) % 2 == 0))  # its text is no number
    elif case == "timestamp_number":
        _parquet(path, df.assign(age=pd.Timestamp("2020-01-01")
                                 + pd.to_timedelta(np.arange(len(df)), unit="D")))
    elif case == "missing_column":
        _parquet(path, df.drop(columns="color"))
    else:
        _parquet(path, df.assign(color=np.where(np.arange(len(df)) % 9, df.color, "Martian")))
    with pytest.raises(kind) as err:
        read_aggregated(path, SCHEMA)
    assert needle in str(err.value) and "Martian" not in str(err.value)
    assert any(needle in p for p in check_table(path, SCHEMA, ignore_extra=True))


def test_a_line_past_the_readers_limit_is_said_as_such(tmp_path):
    """One cell of 3 MB: the refusal names the reader's line limit (it blamed the fields or a
    quote), and quotes nothing of the file."""
    df = _frame(300).astype(str)
    df.loc[200, "color"] = "Martian" * 430_000
    path = _write(tmp_path, df)
    with pytest.raises(TableInputError, match="longer than the reader's limit") as err:
        read_aggregated(path, SCHEMA)
    assert "Martian" not in str(err.value) and "200" not in str(err.value)


def test_the_header_is_the_first_line_of_a_large_file(tmp_path):
    """A parallel read may return any row first: the header must still be the first line
    (a planted ``LIMIT 1`` without file order fails this on a file of many blocks)."""
    df = _frame(300_000, seed=1)
    path = _write(tmp_path, df)
    for _ in range(3):
        got = read_aggregated(path, SCHEMA)
        assert got.n == len(df)


def test_the_cli_fits_a_parquet_file_as_its_csv(tmp_path):
    df = _frame(2000)
    _write(tmp_path, df)
    _parquet(tmp_path / "t.parquet", df)
    (tmp_path / "s.json").write_text(json.dumps(SCHEMA.to_dict()))
    runner = CliRunner()
    coefs = []
    for name in ("t.csv", "t.parquet"):
        out = tmp_path / f"m-{name}"
        res = runner.invoke(app, ["fit", str(tmp_path / name), "--schema",
                                  str(tmp_path / "s.json"), "--model", "rspm", "--epsilon",
                                  "1", "--seed", "3", "--out", str(out)],
                            env={"COLUMNS": "200"})
        assert res.exit_code == 0, res.output
        coefs.append(json.loads((out / "model.json").read_text())["coef"])
    assert coefs[0] == coefs[1]
    (tmp_path / "bad.parquet").write_bytes(b"PAR1" + b"Martian" * 20)
    res = runner.invoke(app, ["schema", "check", str(tmp_path / "bad.parquet"), "--schema",
                              str(tmp_path / "s.json")], env={"COLUMNS": "200"})
    assert res.exit_code == 2 and "Martian" not in res.output and "Traceback" not in res.output


def test_blank_lines_before_the_header_are_skipped_as_pandas_skips_them(tmp_path):
    df = _frame(50)
    plain = _write(tmp_path, df)
    padded = tmp_path / "padded.csv"
    padded.write_text("\n\n" + plain.read_text())
    want, got = read_aggregated(plain, SCHEMA), read_aggregated(padded, SCHEMA)
    np.testing.assert_array_equal(got.codes, want.codes)
    np.testing.assert_array_equal(got.counts, want.counts)
    _same(scan_table(padded, SCHEMA), _pandas_scan(padded, SCHEMA))


def _lexsort_merge(rows, counts):
    """The reference: merge_rows as it was (a lexicographic sort of the int64 matrix)."""
    rows = np.asarray(rows, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    order = np.lexsort(rows.T[::-1])
    ordered = rows[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    group = np.cumsum(new) - 1
    out = np.zeros((int(group[-1]) + 1, *counts.shape[1:]), dtype=np.int64)
    np.add.at(out, group, counts[order])
    return ordered[new], out


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("wide", [False, True])
def test_merge_rows_by_packed_keys_is_the_lexicographic_merge(dtype, wide):
    """The packed-key merge (and its fallback for columns whose ranges do not fit one int64
    key) gives the lexicographic sort's rows, order, dtype and integer sums."""
    from oracledp.tabular._engine import merge_rows

    rng = np.random.default_rng(7)
    for trial in range(20):
        n, m = int(rng.integers(1, 400)), int(rng.integers(1, 7))
        hi = 2**30 if wide else int(rng.integers(1, 5))
        rows = rng.integers(-hi, hi, size=(n, m)).astype(dtype)
        counts = rng.integers(0, 2**40, size=(n, 2) if trial % 2 else n)
        got_rows, got_counts = merge_rows(rows, counts)
        want_rows, want_counts = _lexsort_merge(rows, counts)
        assert got_rows.dtype == np.int64 and got_counts.dtype == np.int64
        np.testing.assert_array_equal(got_rows, want_rows)
        np.testing.assert_array_equal(got_counts, want_counts)


def test_merge_columns_builds_one_column_at_a_time():
    """merge_columns asks for each column once and never for the whole matrix when the key
    fits (the memory fix of `synth fit`); the whole matrix only for the fallback."""
    from oracledp.tabular._engine import merge_columns

    rng = np.random.default_rng(3)
    rows = rng.integers(0, 5, size=(300, 4))
    asked: list[int] = []

    def column(j):
        asked.append(j)
        return rows[:, j]

    def whole():
        raise AssertionError("the whole matrix was built")

    got = merge_columns(column, 4, np.ones(300, dtype=np.int64), whole)
    assert asked == [0, 1, 2, 3]
    want = _lexsort_merge(rows, np.ones(300))
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    big = np.concatenate([rows, rng.integers(-2**62, 2**62, size=(300, 1))], axis=1)
    got = merge_columns(lambda j: big[:, j], 5, np.ones(300, dtype=np.int64), lambda: big)
    want = _lexsort_merge(big, np.ones(300))
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_the_pass_gives_duckdbs_memory_back_before_python_builds_the_arrays(tmp_path,
                                                                           monkeypatch):
    """After the pass, DuckDB keeps no table and its memory limit is lowered to what it
    holds (its cached buffers freed: at 10 M rows about 300 MB less while the codes are
    built), and the counts are those of the pandas reference."""
    from oracledp.tabular import _engine

    rng = np.random.default_rng(5)
    df = pd.DataFrame({"age": rng.integers(0, 101, 3000), "rate": rng.choice(
        ["0", "0.25", "1", ""], 3000), "gain": rng.choice(["0", "5", "2000", "99"], 3000),
        "color": rng.choice(["red", "blue", ""], 3000), "code": rng.choice(["1", "10"], 3000),
        "y": rng.choice(["no", "yes"], 3000)})
    path = _write(tmp_path, df)
    seen: dict[str, object] = {}
    real = _engine._finish

    def spy(con, *args, **kwargs):
        out = real(con, *args, **kwargs)
        seen["tables"] = con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()[0]
        seen["limit"] = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
        return out

    monkeypatch.setattr(_engine, "_finish", spy)
    got = scan_table(path, SCHEMA)
    _same(got, _pandas_scan(path, SCHEMA))
    assert seen["tables"] == 0
    number, unit = str(seen["limit"]).split()
    assert unit in ("KiB", "MiB") and float(number) * (1 if unit == "KiB" else 1024) <= 64 * 1024
