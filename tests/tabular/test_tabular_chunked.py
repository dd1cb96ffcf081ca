"""Large CSVs in bounded memory: chunked reading into distinct encoded rows (the audit's
125 MB CSV ended in a MemoryError), the exact problem from aggregated rows, the CLI's paths."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import oracledp.tabular as tabular
import oracledp.tabular._propose as tabular_propose
from oracledp._cli import app
from oracledp._errors import BoundsViolation
from oracledp.estimators import OPDiscClassifier, RSPMClassifier
from oracledp.estimators._exact import ExactHalfspaceClassifier
from oracledp.learners._rspm import rspm_space
from oracledp.oracles import FeatureSchema, HalfspaceProblem, IntegerBall
from oracledp.oracles._row_blocks import CountedRows
from oracledp.tabular import (
    AggregatedTable,
    TableInputError,
    TableSchema,
    fit_aggregated,
    read_aggregated,
    read_csv,
)

ENV = {"COLUMNS": "200"}
BENCH = Path(__file__).resolve().parents[2] / "benchmarks"

#: Every kind of column: integer grid, fractional grid, bins, categorical; labels not sorted.
SCHEMA = {
    "target": {"name": "y", "labels": ["yes", "no"]},
    "columns": [
        {"name": "age", "type": "numeric", "lower": 0, "upper": 100, "step": 10},
        {"name": "rate", "type": "numeric", "lower": 0, "upper": 1, "step": 0.25},
        {"name": "gain", "type": "numeric", "lower": 0, "upper": 1000, "bins": [1, 100, 500]},
        {"name": "color", "type": "categorical", "levels": ["red", "green", "blue"]},
    ],
}
HEADER = "age,rate,gain,color,y"
#: Identical rows far apart (and with both labels), values that round to the same grid point,
#: numbers written differently: the aggregation must merge across chunk boundaries.
ROWS = [
    "30,0.5,0,red,yes", "31,0.5,0,red,no", "70,1,600,blue,no", "30.0,0.5,0,red,yes",
    "0,0,1,green,yes", "100,0.25,100,blue,no", "29,0.5,0,red,no", "70,1,999,blue,no",
    "0,0,0,green,no", "55,0.75,499,red,yes", "30,0.50,0,red,yes", "70,1,500,blue,yes",
    "55,0.75,499,red,no", "0,0,1,green,yes",
]


@pytest.fixture
def schema() -> TableSchema:
    return TableSchema.from_dict(SCHEMA)


@pytest.fixture
def csv_path(tmp_path: Path) -> Path:
    p = tmp_path / "t.csv"
    p.write_text(HEADER + "\n" + "\n".join(ROWS) + "\n")
    return p


def _in_memory(path: Path, schema: TableSchema) -> tuple[np.ndarray, np.ndarray]:
    df = read_csv(path, schema, with_target=True)
    return schema.encode(df), schema.labels_of(df)


def _make(cls: type, schema: TableSchema, seed: int = 3) -> OPDiscClassifier:
    return cls(1.0, schema=schema.feature_schema(), classes=list(schema.labels),
               random_state=seed)


# --- the exact problem from aggregated rows ---------------------------------------------------


def _assert_same_problem(a: HalfspaceProblem, b: HalfspaceProblem) -> None:
    assert a.Q == b.Q and a.space == b.space and a.schema == b.schema
    for name in ("N", "n_pos", "n_neg"):
        x, y = getattr(a, name), getattr(b, name)
        # N in the schema's narrow integer type (int64 without a schema), counts in int64
        assert x.dtype == y.dtype and np.array_equal(x, y), name
        assert x.dtype == np.int64 or name == "N", name


@pytest.mark.parametrize("with_schema", [True, False])
def test_from_counts_is_from_data_on_the_repeated_rows(with_schema):
    rng = np.random.default_rng(0)
    X = rng.integers(-4, 5, size=(40, 3)) / 4.0
    X[:, 2] = rng.integers(0, 2, size=40)  # a 0/1 column
    c_pos = rng.integers(0, 3, size=40)
    c_neg = rng.integers(0, 3, size=40)
    c_pos[:3] = c_neg[:3] = 0  # rows without records are ignored (also for the denominators)
    X[:3] = 1 / 7
    X[10] = X[11]  # duplicate rows are merged, counts added
    full = np.repeat(X, c_pos + c_neg, axis=0)
    y = np.concatenate([np.r_[np.ones(p), -np.ones(q)] for p, q in zip(c_pos, c_neg,
                                                                      strict=True)])
    space = IntegerBall(3, bound=2)
    schema = FeatureSchema.grid(3, 0.25, 1.0, binary=[2]) if with_schema else None
    want = HalfspaceProblem.from_data(full, y, space, schema=schema)
    got = HalfspaceProblem.from_counts(X, c_pos, c_neg, space, schema=schema)
    _assert_same_problem(want, got)
    assert got.n == len(full)


def test_from_counts_refusals():
    X = np.array([[0.5, 1.0], [0.25, 0.0]])
    with pytest.raises(ValueError, match="integer array"):
        HalfspaceProblem.from_counts(X, [1.0, 2.0], [0, 0])
    with pytest.raises(ValueError, match=">= 0"):
        HalfspaceProblem.from_counts(X, [1, -1], [0, 0])
    with pytest.raises(ValueError, match="no record"):
        HalfspaceProblem.from_counts(X, [0, 0], [0, 0])
    with pytest.raises(BoundsViolation, match="feature column 0"):  # the schema's check
        HalfspaceProblem.from_counts(X, [1, 1], [0, 0],
                                     schema=FeatureSchema.grid(2, 0.5, 1.0, binary=[1]))


# --- chunked reading equals the in-memory path ------------------------------------------------


def test_chunked_equals_in_memory(csv_path, schema):
    X, y = _in_memory(csv_path, schema)
    agg = read_aggregated(csv_path, schema)
    assert isinstance(agg, AggregatedTable) and agg.n == len(ROWS)
    F = agg.features()
    assert len(np.unique(F, axis=0)) == agg.n_groups == len(F) < len(ROWS)
    # every record's encoded row and label, as a multiset
    rows = [(tuple(f), lab) for f, c in zip(F, agg.counts, strict=True)
            for lab, k in zip(schema.labels, c, strict=True) for _ in range(k)]
    assert sorted(rows) == sorted(zip(map(tuple, X), y, strict=True))
    # the same exact problem, for RSPM's space and OPDisc's
    fs = schema.feature_schema()
    plus = schema.labels.index(sorted(schema.labels)[1])
    for space in (rspm_space(fs.d), IntegerBall(fs.d)):
        want = HalfspaceProblem.from_data(X, np.where(y == sorted(schema.labels)[1], 1, -1),
                                          space, schema=fs)
        got = HalfspaceProblem.from_counts(F, agg.counts[:, plus], agg.counts[:, 1 - plus],
                                           space, schema=fs)
        _assert_same_problem(want, got)


def test_row_divisor_and_the_same_problem(csv_path):
    schema = TableSchema.from_dict({**SCHEMA, "row_divisor": 3})
    X, y = _in_memory(csv_path, schema)
    agg = read_aggregated(csv_path, schema)
    F = agg.features()
    assert sorted(map(tuple, np.repeat(F, agg.counts.sum(axis=1), axis=0))) == sorted(
        map(tuple, X))
    full = _make(OPDiscClassifier, schema).fit(X, y)
    assert np.array_equal(fit_aggregated(_make(OPDiscClassifier, schema), agg).coef_,
                          full.coef_)


@pytest.mark.parametrize("cls", [RSPMClassifier, OPDiscClassifier])
@pytest.mark.parametrize("seed", [0, 7])
def test_same_release_for_a_fixed_seed(csv_path, schema, cls, seed):
    X, y = _in_memory(csv_path, schema)
    full = _make(cls, schema, seed).fit(X, y)
    agg = fit_aggregated(_make(cls, schema, seed), read_aggregated(csv_path, schema))
    assert np.array_equal(full.coef_, agg.coef_)
    assert full.guarantee_ == agg.guarantee_
    assert list(full.classes_) == list(agg.classes_) and agg.intercept_ == 0.0
    assert agg.n_features_in_ == X.shape[1]
    noise = ("scale_", "m_") if cls is RSPMClassifier else ("sigma_", "calibration_")
    for attr in noise:
        assert getattr(full, attr) == getattr(agg, attr)
    assert np.array_equal(full.predict(X), agg.predict(X))


@pytest.mark.parametrize("cls", [RSPMClassifier, OPDiscClassifier])
def test_public_fit_on_record_counts_is_the_whole_table_fit(csv_path, schema, cls):
    """``fit(X, y, sample_weight=counts)`` on the distinct rows (the public path of the CLI
    and of fit_aggregated) releases bit for bit what fit releases on the whole table."""
    X, y = _in_memory(csv_path, schema)
    table = read_aggregated(csv_path, schema)
    Xw, yw, counts = table.weighted_rows()
    assert counts.dtype == np.int64 and counts.min() >= 1 and counts.sum() == len(ROWS)
    assert len(Xw) < len(ROWS) and set(yw) <= set(schema.labels)
    for seed in (0, 7):
        full = _make(cls, schema, seed).fit(X, y)
        for w in (counts, counts.astype(float), list(counts)):  # whole numbers, any container
            got = _make(cls, schema, seed).fit(Xw, yw, sample_weight=w)
            assert np.array_equal(full.coef_, got.coef_) and full.guarantee_ == got.guarantee_
            assert got.n_features_in_ == full.n_features_in_
        # a row with count 0 is absent: its label is not read (classes=None)
        pad = np.vstack([Xw, Xw[:1]]), np.append(yw, "maybe"), np.append(counts, 0)
        got = cls(1.0, schema=schema.feature_schema(), random_state=seed).fit(
            pad[0], pad[1], sample_weight=pad[2])
        want = cls(1.0, schema=schema.feature_schema(), random_state=seed).fit(X, y)
        assert np.array_equal(got.coef_, want.coef_) and list(got.classes_) == ["no", "yes"]


@pytest.mark.parametrize("weights, match", [
    (lambda c: c + 0.5, "whole number >= 0"),
    (lambda c: -c, "whole number >= 0"),
    (lambda c: np.where(c > 1, np.nan, c.astype(float)), "whole number >= 0"),
    (lambda c: c > 0, "whole number >= 0"),
    (lambda c: c.astype(str), "whole number >= 0"),
    (lambda c: c[:-1], "one record count per row"),
    (lambda c: np.column_stack([c, c]), "one record count per row"),
    (lambda c: 0 * c, "all zero"),
])
def test_record_counts_that_are_not_counts_are_refused_before_any_noise(
        csv_path, schema, monkeypatch, weights, match):
    def no_noise(self, *a, **k):  # pragma: no cover - must not run
        raise AssertionError("noise drawn")

    monkeypatch.setattr(OPDiscClassifier, "_release", no_noise)
    X, y, counts = read_aggregated(csv_path, schema).weighted_rows()
    with pytest.raises(ValueError, match=match) as err:
        _make(OPDiscClassifier, schema).fit(X, y, sample_weight=weights(counts))
    assert "nan" not in str(err.value).lower() and "0.5" not in str(err.value)


def test_fit_aggregated_refuses_as_fit_before_any_noise(csv_path, schema, monkeypatch):
    agg = read_aggregated(csv_path, schema)
    X, y = _in_memory(csv_path, schema)

    def no_noise(self, *a, **k):  # pragma: no cover - must not run
        raise AssertionError("noise drawn")

    monkeypatch.setattr(OPDiscClassifier, "_release", no_noise)
    monkeypatch.setattr(RSPMClassifier, "_release", no_noise)
    bad = [
        lambda: OPDiscClassifier(-1.0, schema=schema.feature_schema()),
        lambda: OPDiscClassifier(1.0, delta=2.0, schema=schema.feature_schema()),
        lambda: RSPMClassifier(1.0, oracle="nope", schema=schema.feature_schema()),
        lambda: RSPMClassifier(1.0, schema=schema.feature_schema(), classes=["a", "b"]),
        lambda: RSPMClassifier(1.0),  # no public schema
        lambda: RSPMClassifier(1.0, schema=FeatureSchema.grid(3, 0.5, 1.0)),  # wrong width
    ]
    for make in bad:
        with pytest.raises((ValueError, TypeError)) as want:
            make().fit(X, y)
        with pytest.raises(type(want.value)) as got:
            fit_aggregated(make(), agg)
        assert str(got.value) == str(want.value)
    with pytest.raises(TypeError, match="OPDiscClassifier, RSPMClassifier"):
        fit_aggregated(object(), agg)


def test_one_label_only_is_refused_like_fit(tmp_path, schema):
    p = tmp_path / "one.csv"
    p.write_text(HEADER + "\n" + "\n".join(r for r in ROWS if r.endswith(",no")) + "\n")
    X, y = _in_memory(p, schema)
    agg = read_aggregated(p, schema)
    make = lambda: RSPMClassifier(1.0, schema=schema.feature_schema(), random_state=0)  # noqa: E731
    with pytest.raises(ValueError) as want:
        make().fit(X, y)
    with pytest.raises(ValueError) as got:
        fit_aggregated(make(), agg)
    assert str(got.value) == str(want.value)
    # with the declared label set, a table holding one label is fitted, as by fit
    full = _make(RSPMClassifier, schema).fit(X, y)
    assert np.array_equal(fit_aggregated(_make(RSPMClassifier, schema), agg).coef_, full.coef_)


# --- validation: the same refusals as the in-memory reader ------------------------------------


def _bad_files() -> dict[str, bytes]:
    good = [HEADER, *ROWS]
    late = lambda row: "\n".join([*good, *ROWS, row]) + "\n"  # noqa: E731 - after many chunks
    return {
        "unknown_level": late("30,0.5,0,Martian,yes").encode(),
        "out_of_bounds": late("130,0.5,0,red,yes").encode(),
        "off_bins_bound": late("30,0.5,1001,red,yes").encode(),
        "not_a_number": late("30,half,0,red,yes").encode(),
        "infinite": late("30,inf,0,red,yes").encode(),
        "missing_value": late("30,,0,red,yes").encode(),
        "short_row": late("30,0.5,0").encode(),
        "unknown_label": late("30,0.5,0,red,maybe").encode(),
        # several problems, in different chunks and columns: listed once each, in order
        "many": ("\n".join([HEADER, "130,0.5,0,red,yes", *ROWS, "30,0.5,0,Martian,yes",
                            *ROWS, "30,,0,red,maybe", "-5,0.5,0,red,yes"]) + "\n").encode(),
        "no_target": ("\n".join(r.rsplit(",", 1)[0] for r in good) + "\n").encode(),
        "missing_column": ("\n".join(",".join(r.split(",")[1:]) for r in good) + "\n").encode(),
        "empty": b"",
        "blank": b"  \n\n \n",
        "header_only": (HEADER + "\n").encode(),
        "latin1": (late("30,0.5,0,r\xe9d,yes")).encode("latin-1"),
        "delimiter": "\n".join(r.replace(",", ";") for r in good).encode(),
        "parse_error": late("30,0.5,0,red,yes,extra,fields").encode(),
        "bad_gzip": b"\x1f\x8b" + b"not gzip at all",
        "bom_and_crlf": ("\ufeff" + "\r\n".join(good) + "\r\n").encode(),
        "gzip": gzip.compress(("\n".join(good) + "\n").encode()),
    }


@pytest.mark.parametrize("case", [
    "unknown_level", "out_of_bounds", "off_bins_bound", "not_a_number", "infinite",
    "missing_value", "short_row", "unknown_label", "many", "no_target", "missing_column",
    "empty", "blank", "header_only", "latin1", "delimiter", "parse_error", "bad_gzip",
    "bom_and_crlf", "gzip",
])
def test_validation_is_that_of_the_in_memory_reader(tmp_path, schema, case):
    p = tmp_path / f"{case}.csv"
    p.write_bytes(_bad_files()[case])
    try:
        df = read_csv(p, schema, with_target=True)
        schema.encode(df)
    except (TableInputError, BoundsViolation) as exc:
        want: Exception | None = exc
    else:
        want = None
    if want is None:  # readable files: the same records
        agg = read_aggregated(p, schema)
        assert agg.n == len(df)
        return
    with pytest.raises(type(want)) as got:
        read_aggregated(p, schema)
    # the same refusal; the engine words the cause of a parse error itself
    assert str(got.value).split(" (")[0] == str(want).split(" (")[0]
    said = str(got.value).replace(str(p), "<file>")  # the path is pytest's (pytest-130/...)
    for value in ("Martian", "130", "1001", "half", "maybe", "r\xe9d", "extra"):
        assert value not in said


@pytest.mark.parametrize("bom", ["\ufeff", ""])
@pytest.mark.parametrize("packed", [False, True])
def test_quoted_first_name_behind_a_byte_order_mark(tmp_path, bom, packed):
    """A spreadsheet's "CSV UTF-8" export: a byte-order mark, then a quoted first name
    holding the delimiter.  The engine reads what the in-memory reader reads (it had refused
    the file: "a row with more fields than the header")."""
    sch = TableSchema.from_dict({
        "target": {"name": "y", "labels": ["no", "yes"]},
        "columns": [{"name": "city, name", "type": "categorical", "levels": ["a", "b, c"]},
                    {"name": "n", "type": "numeric", "lower": 0, "upper": 9, "step": 1}]})
    text = bom + '"city, name",n,y\n' + 'a,1,no\n"b, c",2,yes\n' * 30
    p = tmp_path / ("t.csv.gz" if packed else "t.csv")
    p.write_bytes(gzip.compress(text.encode()) if packed else text.encode())
    df = read_csv(p, sch, with_target=True)
    agg = read_aggregated(p, sch)
    assert agg.n == len(df) == 60
    assert sorted(np.asarray(agg.counts).ravel().tolist()) == [0, 0, 30, 30]


def test_many_problems_are_all_listed(tmp_path, schema):
    p = tmp_path / "many.csv"
    p.write_bytes(_bad_files()["many"])
    with pytest.raises(BoundsViolation) as err:
        read_aggregated(p, schema)
    msg = str(err.value)
    parts = ["'age': values must lie in [0, 100]", "'rate': missing values",
             "'color': values must be one of the 3 declared levels", "target 'y'"]
    assert all(part in msg for part in parts)
    assert [msg.index(part) for part in parts] == sorted(msg.index(part) for part in parts)


def test_memory_is_bounded_by_the_chunk_and_the_distinct_rows(tmp_path, schema):
    """Many records, few distinct rows: the chunked reader never holds the table."""
    p = tmp_path / "long.csv"
    with open(p, "w") as fh:
        fh.write(HEADER + "\n")
        for _ in range(12000):
            fh.write("\n".join(ROWS) + "\n")  # 168,000 records, 6 distinct encoded rows
    tracemalloc.start()
    try:
        read_csv(p, schema, with_target=True)
        full_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        agg = read_aggregated(p, schema)
        chunk_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert agg.n == 12000 * len(ROWS) and agg.n_groups == 6
    assert chunk_peak < full_peak / 10, (chunk_peak, full_peak)


# --- the CLI ----------------------------------------------------------------------------------


def _fit(runner: CliRunner, data: Path, schema_path: Path, out: Path, model: str,
         seed: int = 5) -> object:
    return runner.invoke(app, ["fit", str(data), "--schema", str(schema_path), "--model", model,
                               "--epsilon", "1", "--seed", str(seed), "--out", str(out)],
                         env=ENV)


@pytest.mark.parametrize("model, cls", [("rspm", RSPMClassifier), ("opdisc", OPDiscClassifier)])
def test_cli_fits_rspm_and_opdisc_from_aggregated_rows(tmp_path, csv_path, schema, model, cls,
                                                       monkeypatch):
    X, y = _in_memory(csv_path, schema)
    want = _make(cls, schema, 5).fit(X, y).coef_.ravel()
    sch = tmp_path / "schema.json"
    sch.write_text(json.dumps(SCHEMA))

    def refuse(*a, **k):  # pragma: no cover - must not run
        raise AssertionError("the whole table was loaded")

    fitted: list[tuple[int, int]] = []
    public_fit = ExactHalfspaceClassifier.fit  # the one fit of OPDisc, RSPM, Gaussian RSPM

    def counted_fit(self, X, y, sample_weight=None):  # the public fit, on the distinct rows
        # the distinct rows with their counts per label, decoded block by block in the fit
        assert isinstance(X, CountedRows) and y is None and sample_weight is None
        fitted.append((len(X.rows), int(X.counts.sum())))
        return public_fit(self, X, y)

    monkeypatch.setattr(tabular, "read_csv", refuse)
    monkeypatch.setattr(tabular_propose, "read_csv", refuse)
    monkeypatch.setattr(ExactHalfspaceClassifier, "fit", counted_fit)
    monkeypatch.setattr(TableSchema, "encode", refuse)
    res = _fit(CliRunner(), csv_path, sch, tmp_path / "m", model)
    assert res.exit_code == 0, res.output
    assert len(fitted) == 1 and fitted[0][0] < len(ROWS) and fitted[0][1] == len(ROWS)
    saved = json.loads((tmp_path / "m" / "model.json").read_text())
    assert saved["coef"] == want.tolist()
    assert f"{len(ROWS):,}, {schema.n_features}" in res.stdout  # n records, d features


@pytest.mark.parametrize("model", ["rspm", "opdisc"])
def test_cli_bad_input_in_a_late_chunk_exits_2_before_any_noise(tmp_path, schema, model,
                                                                 monkeypatch):
    def no_noise(self, *a, **k):  # pragma: no cover - must not run
        raise AssertionError("noise drawn with bad input")

    monkeypatch.setattr(OPDiscClassifier, "_release", no_noise)
    monkeypatch.setattr(RSPMClassifier, "_release", no_noise)
    sch = tmp_path / "schema.json"
    sch.write_text(json.dumps(SCHEMA))
    files = _bad_files()
    for case, needle in (("unknown_level", "'color'"), ("latin1", "not UTF-8"),
                         ("many", "'age'"), ("delimiter", "single column")):
        p = tmp_path / f"{case}.csv"
        p.write_bytes(files[case])
        res = _fit(CliRunner(), p, sch, tmp_path / "m", model)
        assert res.exit_code == 2, res.output
        assert needle in res.stderr and res.stderr.startswith("error: ")
        assert res.stderr.count("\n") == 1 and "Martian" not in res.stderr
        assert "Traceback" not in res.output and not (tmp_path / "m").exists()


@pytest.mark.parametrize("model, target", [
    ("dpsgd", "read_aggregated"), ("opsamp", "read_csv"), ("accuracy-first", "labels_of"),
    ("rspm", "read_aggregated"), ("opdisc", "read_aggregated"),
])
def test_cli_out_of_memory_while_loading_exits_2(tmp_path, csv_path, model, target,
                                                 monkeypatch):
    def oom(*a, **k):
        raise MemoryError

    if target == "encode" or target == "labels_of":
        monkeypatch.setattr(TableSchema, target, oom)
    else:
        monkeypatch.setattr(tabular, target, oom)
    sch = tmp_path / "schema.json"
    sch.write_text(json.dumps(SCHEMA))
    args = ["fit", str(csv_path), "--schema", str(sch), "--model", model,
            "--out", str(tmp_path / "m")]
    args += ["--alpha", "0.5"] if model == "accuracy-first" else ["--epsilon", "1"]
    res = CliRunner().invoke(app, args, env=ENV)
    assert res.exit_code == 2, (res.output, res.exception)
    assert isinstance(res.exception, SystemExit)
    err = " ".join(res.stderr.split())
    assert err.startswith("error: ") and "not enough memory" in err and f"--model {model}" in err
    if model in ("rspm", "opdisc", "dpsgd"):
        assert "distinct encoded rows" in err and "smaller file" in err
    else:
        assert "--model rspm, opdisc or dpsgd" in err and "smaller file" in err
    assert "Traceback" not in res.output and not (tmp_path / "m").exists()


def test_cli_out_of_memory_while_fitting_exits_2(tmp_path, csv_path, monkeypatch):
    def oom(*a, **k):
        raise MemoryError

    monkeypatch.setattr(RSPMClassifier, "_release", oom)
    sch = tmp_path / "schema.json"
    sch.write_text(json.dumps(SCHEMA))
    res = _fit(CliRunner(), csv_path, sch, tmp_path / "m", "rspm")
    assert res.exit_code == 2 and "not enough memory" in res.stderr
    assert not (tmp_path / "m" / "model.json").exists()


# --- the benchmark ----------------------------------------------------------------------------


@pytest.mark.slow
def test_large_csv_benchmark_runs_small(tmp_path):
    proc = subprocess.run([sys.executable, str(BENCH / "large_csv.py"), "--rows", "3000"],
                          capture_output=True, text=True, timeout=240, check=False,
                          env={**os.environ, "TMPDIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("rows=3000 ") and "peak_mb=" in last and "targets_met=yes" in last
    assert "UTC" in proc.stdout and "load" in proc.stdout  # date, versions and load
    assert list(tmp_path.iterdir()) == []  # nothing left behind


def test_benchmark_data_are_deterministic_and_fit_the_schema():
    sys.path.insert(0, str(BENCH))
    try:
        import large_csv
    finally:
        sys.path.remove(str(BENCH))
    a = large_csv.adult_like_chunk(0, 3, 500)
    b = large_csv.adult_like_chunk(0, 3, 500)
    pd.testing.assert_frame_equal(a, b)
    schema = TableSchema.from_dict(large_csv.SCHEMA)
    schema.check(a.astype(str), with_target=True)
    assert set(a["income"]) == set(schema.labels)


@pytest.mark.parametrize(("cell", "ok"), [("-0.30000000000000004", True),
                                          ("0.4000000000000001", True),
                                          ("-0.3000001", False), ("0.41", False)])
def test_a_bound_written_with_float_noise_is_the_bound(tmp_path, cell, ok):
    """A gridded value past a bound by floating-point noise only (as computed exports write
    -0.3) is the bound's grid point in both readers and in Parquet; a real violation, even
    a millionth of a step past, is still refused."""
    sch = TableSchema.from_dict({"target": {"name": "y", "labels": ["a", "b"]}, "columns": [
        {"name": "v", "type": "numeric", "lower": -0.3, "upper": 0.4, "step": 0.1}]})
    df = pd.DataFrame({"v": [cell, "0.1", "0.2"] * 10, "y": ["a", "b", "a"] * 10})
    p, pq = tmp_path / "t.csv", tmp_path / "t.parquet"
    df.to_csv(p, index=False)
    df.assign(v=df["v"].astype(float)).to_parquet(pq)
    if not ok:
        for read in (lambda: read_aggregated(p, sch), lambda: read_aggregated(pq, sch),
                     lambda: sch.encode(read_csv(p, sch, with_target=True))):
            with pytest.raises(BoundsViolation, match=r"values must lie in \[-0.3, 0.4\]"):
                read()
        return
    X = sch.encode(read_csv(p, sch, with_target=True))
    assert len(X) == 30
    for src in (p, pq):
        agg = read_aggregated(src, sch)
        assert agg.n == 30
        assert sorted(np.asarray(agg.codes)[:, 0].tolist()) == sorted(
            {0 if cell.startswith("-") else 7, 4, 5})


def test_bounds_of_many_digits_are_named_exactly(tmp_path):
    """A refusal names the declared bounds as written: [20200101, 20201231], not %g's
    [2.02001e+07, 2.02012e+07], which cannot tell a user whether 20201231 is inside."""
    sch = TableSchema.from_dict({"target": {"name": "y", "labels": ["a", "b"]}, "columns": [
        {"name": "date", "type": "numeric", "lower": 20200101, "upper": 20201231,
         "step": 1},
        {"name": "x", "type": "numeric", "lower": 1000000.5, "upper": 1000002.5,
         "step": 0.1}]})
    p = tmp_path / "t.csv"
    p.write_text("date,x,y\n" + "20210101,1000003.5,a\n20200505,1000001.5,b\n" * 5)
    for read in (lambda: read_aggregated(p, sch),
                 lambda: sch.encode(read_csv(p, sch, with_target=True))):
        with pytest.raises(BoundsViolation) as err:
            read()
        assert "values must lie in [20200101, 20201231]" in str(err.value)
        assert "values must lie in [1000000.5, 1000002.5]" in str(err.value)


@pytest.mark.parametrize(("lower", "upper", "step", "ok"), [
    (10**16, 10**16 + 100, 1, False), (1e15, 1e15 + 1, 0.1, False),
    (2**49, 2**49 + 100, 1, True), (20200101, 20201231, 1, True)])
def test_a_grid_past_exact_floats_is_refused(lower, upper, step, ok):
    """Past 2^50 steps from 0 doubles cannot hold the grid (10000000000000101 reads as
    10000000000000100, an out-of-bounds value as the bound): the schema is refused, naming
    the remedy; smaller grids are declared as before."""
    d = {"target": {"name": "y", "labels": ["a", "b"]}, "columns": [
        {"name": "v", "type": "numeric", "lower": lower, "upper": upper, "step": step}]}
    if ok:
        assert TableSchema.from_dict(d).columns[0].K == round((upper - lower) / step)
    else:
        with pytest.raises(ValueError, match="too large for its step to be read exactly"):
            TableSchema.from_dict(d)
