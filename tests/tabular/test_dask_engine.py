"""The Dask engine (``engine="dask"``) on a 2-worker LocalCluster: the same scan, refusals and
releases, bit for bit, as the default engine (issue 39)."""

from __future__ import annotations

import re
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oracledp._errors import BoundsViolation, TableInputError
from oracledp.estimators import OPDiscClassifier, RSPMClassifier
from oracledp.tabular import TableSchema, fit_aggregated, read_aggregated
from oracledp.tabular._csv import ROW_WIDTH
from oracledp.tabular._engine import scan_table


def _importable() -> bool:
    try:
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


pytestmark = [
    pytest.mark.skipif(not _importable(), reason="the Dask engine needs dask.dataframe and "
                       "distributed (pip install 'oracledp[dask]', which brings pyarrow)"),
    pytest.mark.timeout(600),
]

#: Every kind of column: a categorical, a numeric grid, a binned numeric, a clipped grid and a
#: categorical with a missing level; labels not sorted.
SCHEMA = {
    "target": {"name": "y", "labels": ["yes", "no"]},
    "columns": [
        {"name": "age", "type": "numeric", "lower": 0, "upper": 100, "step": 10},
        {"name": "rate", "type": "numeric", "lower": 0, "upper": 1, "step": 0.25,
         "out_of_bounds": "clip"},
        {"name": "gain", "type": "numeric", "lower": 0, "upper": 1000, "bins": [1, 100, 500]},
        {"name": "color", "type": "categorical", "levels": ["red", "green", "blue"]},
        {"name": "answer", "type": "categorical", "levels": ["no", "yes"], "missing": "level"},
    ],
}
N = 3000
BLOCK = 16_000  # bytes of CSV per partition: the tables span several partitions


def _frame(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.integers(0, 101, N).astype(str),
        "rate": np.round(rng.uniform(-0.3, 1.3, N), 3).astype(str),  # some clipped
        "gain": rng.integers(0, 1001, N).astype(str),
        "color": rng.choice(["red", "green", "blue"], N),
        "answer": rng.choice(["no", "yes", ""], N),  # '' is the missing level
        "y": rng.choice(["yes", "no"], N, p=[0.3, 0.7]),
    })
    df.loc[::7, "age"] = df.loc[::7, "age"] + ".0"  # the same number written differently
    df.loc[::11, "gain"] = "1e2"  # not plain: checked by the schema's own code
    return df


@contextmanager
def _quiet():
    """Cluster start-up and shutdown may warn about ports or closing comms: only distributed's
    warnings (and ResourceWarnings) are ignored, and only there."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=r"distributed(\..*)?$")
        warnings.filterwarnings("ignore", category=ResourceWarning)
        yield


@pytest.fixture(scope="module")
def scheduler():
    from distributed import LocalCluster

    with _quiet():
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None)
    try:
        yield cluster.scheduler_address
    finally:
        with _quiet():
            cluster.close()


@pytest.fixture(scope="module")
def schema() -> TableSchema:
    return TableSchema.from_dict(SCHEMA)


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, str]:
    """The same table as a CSV and as a directory of three Parquet files (written by DuckDB:
    text columns, as the CSV writes them)."""
    import duckdb

    d = tmp_path_factory.mktemp("dask")
    csv = d / "t.csv"
    df = _frame()
    df.to_csv(csv, index=False)
    pq = d / "pq"
    pq.mkdir()
    for k in range(3):
        piece = d / f"piece{k}.csv"
        df.iloc[k::3].to_csv(piece, index=False)
        duckdb.sql(f"COPY (SELECT * FROM read_csv('{piece}', all_varchar = true)) "
                   f"TO '{pq / f'part{k}.parquet'}' (FORMAT parquet)")
    return {"csv": str(csv), "parquet": str(pq)}


def _dask_scan(data, schema, scheduler, **kw):
    from oracledp.tabular._dask import scan_table_dask

    return scan_table_dask(data, schema, scheduler=scheduler, blocksize=BLOCK, **kw)


def _same_scan(a, b) -> None:
    assert a.found == b.found and a.clipped == b.clipped
    assert a.codes is not None and b.codes is not None
    assert a.codes.dtype == b.codes.dtype and a.counts.dtype == b.counts.dtype
    assert np.array_equal(a.codes, b.codes) and np.array_equal(a.counts, b.counts)


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_the_same_scan_as_the_default_engine(tables, schema, scheduler, kind):
    want = scan_table(tables[kind], schema)
    got = _dask_scan(tables[kind], schema, scheduler)
    _same_scan(want, got)
    assert want.clipped == {"rate"} and int(want.counts.sum()) == N
    assert len(want.codes) > 100  # many distinct rows, merged across the partitions


def test_the_same_scan_without_target_and_of_frames(tables, schema, scheduler):
    import dask.dataframe as dd

    want = scan_table(tables["csv"], schema, with_target=False)
    _same_scan(want, _dask_scan(tables["csv"], schema, scheduler, with_target=False))
    df = _frame()
    want = scan_table(df, schema)
    _same_scan(want, _dask_scan(df, schema, scheduler))
    _same_scan(want, _dask_scan(dd.from_pandas(df, npartitions=3), schema, scheduler))


def test_the_same_scan_of_arrow_tables_with_typed_columns(tables, schema, scheduler):
    import duckdb

    read = f"SELECT * FROM read_csv('{tables['csv']}'"
    typed = duckdb.sql(read + ")").to_arrow_table()  # yes/no read as booleans: refused
    assert {str(t) for t in typed.schema.types} >= {"double", "string", "bool"}
    want, got = scan_table(typed, schema), _dask_scan(typed, schema, scheduler)
    assert (want.found, want.clipped) == (got.found, got.clipped) and want.found
    typed = duckdb.sql(read + ", types = {'answer': 'VARCHAR', 'y': 'VARCHAR'})").to_arrow_table()
    _same_scan(scan_table(typed, schema), _dask_scan(typed, schema, scheduler))


def _bad(tmp_path: Path) -> str:
    df = _frame(1)
    df.loc[N - 5, "color"] = "purple"  # an unknown level, in the last partition
    df.loc[3, "age"] = "150"  # out of bounds (not clipped), in the first
    df.loc[N // 2, "answer"] = " yes"  # spaces around a level
    df.loc[7, "y"] = "maybe"  # an unknown label
    p = tmp_path / "bad.csv"
    df.to_csv(p, index=False)
    return str(p)


def test_a_refusal_lists_the_same_problems(tmp_path, schema, scheduler):
    path = _bad(tmp_path)
    want = scan_table(path, schema)
    got = _dask_scan(path, schema, scheduler)
    assert want.found and want.found == got.found and got.codes is None
    with pytest.raises(BoundsViolation) as a:
        read_aggregated(path, schema)
    with pytest.raises(BoundsViolation) as b:
        read_aggregated(path, schema, engine="dask", scheduler=scheduler)
    assert str(a.value) == str(b.value)
    assert "purple" not in str(b.value) and "150" not in str(b.value)


def _file_refusal(path: str, schema, scheduler) -> tuple[str, str]:
    with pytest.raises(TableInputError) as a:
        scan_table(path, schema)
    with pytest.raises(TableInputError) as b:
        _dask_scan(path, schema, scheduler)
    return str(a.value), str(b.value)


def test_file_level_refusals_are_the_default_engines(tmp_path, schema, scheduler):
    header = "age,rate,gain,color,answer,y\n"
    cases = {
        "empty.csv": "",
        "header.csv": header,
        "repeated.csv": "age,age,gain,color,answer,y\n1,2,3,red,no,yes\n",
        "latin1.csv": None,
        "wide.csv": header + "".join("1,0,1,red,no,yes\n" for _ in range(30_000))
        + "1,0,1,red,no,yes,extra\n",
        # a row number in front of every row: pandas made it an index (shifted columns)
        "numbered.csv": header + "".join(f"{i},1,0,1,red,no,yes\n" for i in range(50)),
    }
    for name, text in cases.items():
        p = tmp_path / name
        if text is None:
            p.write_bytes(header.encode() + "1,0,1,r\xe9d,no,yes\n".encode("latin-1"))
        else:
            p.write_text(text)
        want, got = _file_refusal(str(p), schema, scheduler)
        assert want == got, name
    want, got = _file_refusal(str(tmp_path / "absent.csv"), schema, scheduler)
    assert want == got
    # a delimiter closing every row: both engines read it (the workers check each block's
    # raw lines, as the pandas readers check the file's), never with the columns shifted
    closed = tmp_path / "closed.csv"
    closed.write_text(header + "".join("1,0,1,red,no,yes,\n" for _ in range(3000)))
    _same_scan(scan_table(str(closed), schema), _dask_scan(str(closed), schema, scheduler))


@pytest.mark.parametrize("bad", ["1,0,1,red,no", "1,0,1,red,no,yes,extra", "   ",
                                 '"1,0,1,red,no,yes"'],
                         ids=["short", "long", "spaces", "quoted"])
@pytest.mark.parametrize("quoted_break", [False, True], ids=["plain", "quoted-break"])
def test_a_row_of_another_width_is_refused_in_any_block(tmp_path, schema, scheduler, bad,
                                                        quoted_break):
    """A short or long row past the default engine's sniffer sample and past the first
    blocks: refused by the workers with the one message of every reader (a short row was
    read with empty cells), never naming a value; a file without one reads as before."""
    header = "age,rate,gain,color,answer,y\n"
    rows = ["1,0,1,red,no,yes"] * 30_000
    if quoted_break:
        rows[1] = '1,0,1,red,"n\no",yes'
    good = tmp_path / "good.csv"
    good.write_text(header + "\n".join(rows) + "\n")
    want = scan_table(str(good), schema)
    assert want.counts is not None or want.found
    got = _dask_scan(str(good), schema, scheduler)
    assert want.found == got.found and np.array_equal(want.counts, got.counts)
    rows[25_000] = bad
    path = tmp_path / "bad.csv"
    path.write_text(header + "\n".join(rows) + "\n")
    want, got = _file_refusal(str(path), schema, scheduler)
    assert want == got == f"{path}: {ROW_WIDTH}"


@pytest.mark.parametrize("bad", ["1,0,1,red,no", "   "], ids=["short", "spaces"])
def test_a_short_row_that_begins_a_block_is_refused(tmp_path, schema, scheduler, bad):
    """Review 17: Dask gives a block after the first without the header line, and the
    workers' checks skipped its first line as one: a short row (or a line of spaces) that
    began such a block, past the default engine's sniffer sample, was read padded."""
    from dask.bytes import read_bytes

    header = "age,rate,gain,color,answer,y\n"
    rows = ["1,0,1,red,no,yes"] * 30_000
    text = header + "\n".join(rows) + "\n"
    probe = tmp_path / "probe.csv"
    probe.write_text(text)
    _, blocks = read_bytes(str(probe), delimiter=b"\n", blocksize=BLOCK)
    sizes = np.cumsum([len(b.compute()) for b in blocks[0]])
    # the data row that begins a block past the sniffer's 20,480 lines
    k = next(text[:o].count("\n") - 1 for o in sizes[:-1] if text[:o].count("\n") > 20_500)
    rows[k] = bad
    path = tmp_path / "bad.csv"
    path.write_text(header + "\n".join(rows) + "\n")
    want, got = _file_refusal(str(path), schema, scheduler)
    assert want == got == f"{path}: {ROW_WIDTH}"


@pytest.mark.parametrize("cls", [OPDiscClassifier, RSPMClassifier])
def test_the_same_release_for_the_same_seed(tables, schema, scheduler, cls):
    def fit(table):
        est = cls(1.0, schema=schema.feature_schema(), classes=list(schema.labels),
                  random_state=5)
        return fit_aggregated(est, table)

    for kind in ("csv", "parquet"):
        with pytest.warns(UserWarning):  # the clipped column, as by the default engine
            want = fit(read_aggregated(tables[kind], schema))
        with pytest.warns(UserWarning):
            got = fit(read_aggregated(tables[kind], schema, engine="dask",
                                      scheduler=scheduler))
        assert np.array_equal(want.coef_, got.coef_) and want.guarantee_ == got.guarantee_


def test_the_same_synthetic_rows_for_the_same_seed(tables, schema, scheduler):
    from oracledp.synth import TableSynthesizer

    with pytest.warns(UserWarning):
        want = TableSynthesizer(epsilon=1.0, random_state=3).fit(tables["csv"], schema)
    with pytest.warns(UserWarning):
        got = TableSynthesizer(epsilon=1.0, random_state=3, engine="dask",
                               scheduler=scheduler).fit(tables["parquet"], schema)
    pd.testing.assert_frame_equal(want.sample(500, random_state=4),
                                  got.sample(500, random_state=4))
    assert want.guarantee_ == got.guarantee_


def test_a_local_cluster_by_default(tables, schema):
    from oracledp.tabular._dask import scan_table_dask

    want = scan_table(tables["parquet"], schema)
    with _quiet():
        got = scan_table_dask(tables["parquet"], schema)  # starts and closes its own cluster
    _same_scan(want, got)


def test_a_missing_extra_is_named(monkeypatch, schema):
    import builtins

    from oracledp.tabular import _dask

    real = builtins.__import__

    def no_dask(name, *args, **kw):
        if name.startswith("distributed"):
            raise ImportError("no", name="distributed")
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(ImportError, match=r"pip install 'oracledp\[dask\]'"):
        _dask.scan_table_dask("x.csv", schema)



@pytest.mark.parametrize(("change", "said"), [
    (lambda d: d.assign(extra="1"), "has the column(s) 'extra' that the first does not"),
    (lambda d: d.rename(columns={"gain": "Gain"}),
     "has the column(s) 'Gain' that the first does not; lacks 'gain'"),
    (lambda d: d.drop(columns=["gain"]), "lacks 'gain'"),
    (lambda d: d[list(reversed(d.columns))], "has the same columns in another order"),
])
def test_parquet_parts_with_other_columns_are_refused_by_both_engines(tmp_path, schema,
                                                                      scheduler, change, said):
    """Every Parquet file was read by the first file's columns, by position: a later part's
    extra column was dropped unseen, a part with 'Gain' for 'gain' read as 'gain', and a part
    without a column crashed the Dask engine (KeyError). Now one refusal, the same from both
    engines, naming the file and the columns (never a value)."""
    df = _frame(2)
    parts = tmp_path / "parts"
    parts.mkdir()
    df.iloc[::2].to_parquet(parts / "part-0.parquet")
    change(df.iloc[1::2]).to_parquet(parts / "part-1.parquet")
    a, b = _file_refusal(str(parts), schema, scheduler)
    assert a == b and said in a and "part-1.parquet" in a, a
    assert "the Parquet files do not all have the first file's columns" in a


def test_parquet_parts_whose_types_differ_are_read_as_text_by_both_engines(tmp_path, schema,
                                                                           scheduler):
    """A column of integers in one part and of text in another was "not a readable Parquet
    file" from the default engine (its cast failed) and "values must be finite numbers" from
    Dask: now both read the text and name the column and the rule; numbers written as text in
    one part (no bad cell) give the same counts as numbers everywhere."""
    df = _frame(3)
    df["age"] = pd.to_numeric(df["age"]).astype("int64")
    parts = tmp_path / "parts"
    parts.mkdir()
    df.iloc[::2].to_parquet(parts / "part-0.parquet")
    df.iloc[1::2].assign(age=df.iloc[1::2]["age"].astype(str)).to_parquet(
        parts / "part-1.parquet")
    want = scan_table(str(parts), schema)
    _same_scan(want, _dask_scan(str(parts), schema, scheduler))
    whole = scan_table(df, schema)  # the same counts as the table of numbers
    assert want.found == whole.found == {} and np.array_equal(want.codes, whole.codes)
    assert np.array_equal(want.counts, whole.counts)
    bad = df.iloc[1::2].assign(age=df.iloc[1::2]["age"].astype(str))
    bad.iloc[0, bad.columns.get_loc("age")] = "abc"
    bad.to_parquet(parts / "part-1.parquet")
    with pytest.raises(BoundsViolation) as a:
        read_aggregated(str(parts), schema)
    with pytest.raises(BoundsViolation) as b:
        read_aggregated(str(parts), schema, engine="dask", scheduler=scheduler)
    assert str(a.value) == str(b.value) and "column 'age': values must be finite numbers" in (
        str(a.value)) and "abc" not in str(a.value)


def test_a_one_column_tables_empty_lines_are_rows_on_dask(tmp_path, scheduler):
    """Review 17: the workers skipped a one-column table's empty lines, the default engine
    reads each as a record with an empty cell (missing): the same counts now, gzip too."""
    import gzip

    one = TableSchema.from_dict({"columns": [
        {"name": "c", "type": "categorical", "levels": ["blue", "red"], "missing": "level"}]})
    text = "\n\nc\nred\n\nblue\n\n" + "red\n" * 9000  # several blocks
    for name, data in (("one.csv", text.encode()), ("one.csv.gz", gzip.compress(text.encode()))):
        path = tmp_path / name
        path.write_bytes(data)
        want = scan_table(str(path), one)
        assert int(want.counts.sum()) == 9004  # red, empty, blue, empty, 9,000 red
        _same_scan(want, _dask_scan(str(path), one, scheduler))


def test_a_cr_only_files_rows_after_empty_lines_on_dask(tmp_path, scheduler):
    """Review 17: lines ended by a CR alone, an empty line before a row that starts with an
    empty cell: the workers cut their blocks at CR and read that row whole, as the default
    engine does (pandas had shifted it by a field), plain and gzip."""
    import gzip

    sch = TableSchema.from_dict({"columns": [
        {"name": "c", "type": "categorical", "levels": ["blue", "red"], "missing": "level"},
        {"name": "k", "type": "numeric", "lower": 0, "upper": 9, "step": 1}]})
    rows = [f"{('red', 'blue')[i % 2]},{i % 10}" for i in range(6000)]
    for i in range(7, 6000, 997):  # an empty line, then a row whose first cell is empty
        rows[i] = f"\r,{i % 10}"
    text = "c,k\r" + "\r".join(rows) + "\r"
    for name, data in (("mac.csv", text.encode()), ("mac.csv.gz", gzip.compress(text.encode()))):
        path = tmp_path / name
        path.write_bytes(data)
        want = scan_table(str(path), sch, with_target=False)
        assert int(want.counts.sum()) == 6000
        _same_scan(want, _dask_scan(str(path), sch, scheduler, with_target=False))


def test_a_url_csv_reads_cr_line_ends_and_one_column_tables(tmp_path):
    """Review 18: at a URL, a one-column CSV was always refused ("cannot read the file": its
    blank-line rule opened the URL as a local path) and a CR-only file shifted a row after
    an empty line by a field (the rule was for local files only).  Read through fsspec."""
    import fsspec

    from oracledp.tabular._dask import _url_source

    mem = fsspec.filesystem("memory")
    mem.pipe("/review18/two.csv", b"a,b\rred,1\r\r,2\r")
    mem.pipe("/review18/one.csv", b" \t\na\nred\n\nblue\n")
    try:
        two = _url_source("memory://review18/two.csv", ",", None)[0]
        assert two.compute(scheduler="synchronous").values.tolist() == [["red", "1"],
                                                                        ["", "2"]]
        one = _url_source("memory://review18/one.csv", ",", None)[0]
        assert one.compute(scheduler="synchronous").values.tolist() == [["red"], [""],
                                                                        ["blue"]]
    finally:
        mem.rm("/review18", recursive=True)


def test_a_workers_parse_error_quotes_nothing_and_names_quoted_breaks(tmp_path, scheduler):
    """Review 18: a worker's parse error other than a row's width kept pandas' text ("EOF
    inside string starting at row 363"), which the worker logged; and a quoted line break
    that Dask cut into two blocks was refused for causes the file does not have."""
    import io

    from oracledp.tabular._dask import _read_block

    with pytest.raises(TableInputError) as err:
        _read_block(io.BytesIO(b'a,b\n1,2\n"3,4\n5,6\n'), oracledp_label="t.csv", sep=",",
                    header=0, names=["c0", "c1"], dtype=str, keep_default_na=False,
                    na_filter=False)
    assert "quoted field holding a line break" in str(err.value)
    assert not re.search(r"\d", str(err.value))  # no row number
    from oracledp.tabular._dask import scan_table_dask

    sch = TableSchema.from_dict({"columns": [
        {"name": "a", "type": "categorical", "levels": [f"x{k}\ny" for k in range(7)]},
        {"name": "b", "type": "numeric", "lower": 0, "upper": 9, "step": 1}]})
    path = tmp_path / "breaks.csv"
    path.write_text("a,b\n" + "".join(f'"x{i % 7}\ny",{i % 10}\n' for i in range(6000)))
    assert int(scan_table(str(path), sch, with_target=False).counts.sum()) == 6000
    with pytest.raises(TableInputError) as refused:  # blocks cut inside quoted fields
        scan_table_dask(str(path), sch, with_target=False, scheduler=scheduler,
                        blocksize=4000)
    said = str(refused.value)
    assert said.count("\n") == 0 and "quoted field holding a line break" in said
    assert "default engine reads such a file" in said
    assert not re.search(r"\d", said.replace(str(path), ""))


def test_files_whose_lines_end_differently_are_refused_on_dask(tmp_path, scheduler):
    """Review 19: the line end of the first file read every file: an LF file after a CR-only
    one was one line (its header), its rows dropped without a word.  And a parse error in
    Dask's sample escaped as an empty ParserError."""
    from oracledp.tabular._dask import scan_table_dask

    sch = TableSchema.from_dict({"columns": [
        {"name": "a", "type": "categorical", "levels": ["x", "y"]},
        {"name": "b", "type": "numeric", "lower": 0, "upper": 9, "step": 1}]})
    (tmp_path / "part1.csv").write_bytes(b"a,b\ry,3\rx,4\r")
    (tmp_path / "part2.csv").write_bytes(b"a,b\nx,1\ny,2\nx,5\n")
    with pytest.raises(TableInputError, match="the files' lines end in different ways"):
        scan_table_dask(str(tmp_path / "*.csv"), sch, with_target=False, scheduler=scheduler)
    big = tmp_path / "big.csv"
    big.write_bytes(b'a,b\rx,"' + b"y" * 1_100_000 + b'\r"\r\r,2\r')
    with pytest.raises(TableInputError, match="quoted field holding a line break"):
        scan_table_dask(str(big), sch, with_target=False, scheduler=scheduler)
