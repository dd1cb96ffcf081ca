"""Bundled datasets: checksums, the Adult encoding of Neel et al. (ICML 2020), raw KDD-99.

Expected numbers come from the data README (record and label counts, SHA-256) and from an
independent parse of the files here (csv module), not from the loader itself.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import os
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from oracledp._errors import BoundsViolation
from oracledp.datasets import (
    DataIntegrityError,
    TabularDataset,
    _files,
    list_datasets,
    load_adult,
    load_kdd99_raw,
)
from oracledp.datasets import _adult as adult

DATA_DIR = Path(_files.__file__).parent / "_data"
SHA = {
    "adult.data.gz": "8f805dd88a7789bd21c11c925f71c9cb64a13b7ea2bf420c9d81197b94ddb17d",
    "adult.test.gz": "fc24cba18c046ba07b23d08d5ff0ecbf63c7cdaf021d681b11a2080b6ba1f01d",
    "kddcup.data_10_percent.gz": "8045aca0d84e70e622d1148d7df782496f6333bf6eb979a1b0837c42a9fd9561",
    # the public tables of oracledp.datasets._tables (tests/datasets/test_datasets_tables.py)
    "nhefs.csv.gz": "acd0061ea08d22258962c8451016469ad257a2d956c201a66794d0b8a3d54b21",
    "biopsy.csv.gz": "517b11702b2b27365fb2a1809c15c4bcb2dc000d36fccc4e0806ed9d147aea49",
    "health_insurance.csv.gz": "44833446e81b063dc5579eb6593dc186dcc9db7e4074faf9c051258949c902ff",
    "doctor_visits.csv.gz": "f4f95552a374325a3dd2d6b86edc346c9909cc18ededfc5c2757b6e8fa53e9c3",
    "titanic.csv.gz": "f44ad36343cb06b761b23a93de4ce206c292192055f116556f52ddd907886b08",
}
DEFAULT_NAMES = [
    "age",
    "education-num",
    "hours-per-week",
    "marital-status=Divorced",
    "marital-status=Married-AF-spouse",
    "marital-status=Married-civ-spouse",
    "marital-status=Married-spouse-absent",
    "marital-status=Never-married",
    "marital-status=Separated",
    "marital-status=Widowed",
    "relationship=Husband",
    "relationship=Not-in-family",
    "relationship=Other-relative",
    "relationship=Own-child",
    "relationship=Unmarried",
    "relationship=Wife",
    "race=Amer-Indian-Eskimo",
    "race=Asian-Pac-Islander",
    "race=Black",
    "race=Other",
    "race=White",
    "sex=Female",
    "sex=Male",
]
PUBLIC_MAX = {"age": 90, "education-num": 16, "hours-per-week": 99}


def _raw_records(file: str) -> list[list[str]]:
    """Independent parse with the csv module: fields stripped, blank lines dropped."""
    with gzip.open(DATA_DIR / file, "rt", newline="") as fh:
        return [[f.strip() for f in row] for row in csv.reader(fh) if row]


@pytest.fixture(scope="module")
def raw_train() -> list[list[str]]:
    return _raw_records("adult.data.gz")


@pytest.fixture(scope="module")
def raw_test() -> list[list[str]]:
    return _raw_records("adult.test.gz")


@pytest.fixture(scope="module")
def default() -> TabularDataset:
    return load_adult()


@pytest.fixture
def data_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the data folder that the loaders read instead of the package's."""
    for f in SHA:
        shutil.copy(DATA_DIR / f, tmp_path / f)
    monkeypatch.setattr(_files, "_data_dir", lambda: tmp_path)
    return tmp_path


def _corrupt(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


# --- checksums ----------------------------------------------------------------------------------
def test_recorded_checksums_match_files_and_sha256sums() -> None:
    assert {f: info.sha256 for f, info in _files.FILES.items()} == SHA
    for f, digest in SHA.items():
        assert hashlib.sha256((DATA_DIR / f).read_bytes()).hexdigest() == digest
    lines = (DATA_DIR / "SHA256SUMS").read_text().splitlines()
    assert sorted(lines) == sorted(f"{d}  {f}" for f, d in SHA.items())
    notice = (DATA_DIR / "NOTICE.md").read_text()
    for needle in ("CC BY 4.0", "Becker", "Kohavi", "KDD Cup 1999", *SHA):
        assert needle in notice


def test_read_verified_returns_the_file_and_caches_the_check() -> None:
    data = _files.read_verified("adult.test.gz")
    assert data == (DATA_DIR / "adult.test.gz").read_bytes()
    st = (DATA_DIR / "adult.test.gz").stat()
    key = (str((DATA_DIR / "adult.test.gz").resolve()), st.st_size, st.st_mtime_ns)
    assert key in _files._verified


def test_corrupted_copy_is_refused_with_both_hashes(tmp_path: Path) -> None:
    shutil.copy(DATA_DIR / "adult.data.gz", tmp_path / "adult.data.gz")
    _corrupt(tmp_path / "adult.data.gz")
    bad = hashlib.sha256((tmp_path / "adult.data.gz").read_bytes()).hexdigest()
    with pytest.raises(DataIntegrityError) as exc:
        _files._read_checked("adult.data.gz", tmp_path)
    msg = str(exc.value)
    assert "adult.data.gz" in msg and SHA["adult.data.gz"] in msg and bad in msg
    # a failed check is not remembered as a success
    assert not any(k[0].startswith(str(tmp_path.resolve())) for k in _files._verified)


def test_file_changed_after_a_successful_check_is_checked_again(tmp_path: Path) -> None:
    target = tmp_path / "adult.test.gz"
    shutil.copy(DATA_DIR / "adult.test.gz", target)
    assert _files._read_checked("adult.test.gz", tmp_path) == target.read_bytes()
    st = target.stat()
    _corrupt(target)  # same size
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    with pytest.raises(DataIntegrityError, match="checksum mismatch"):
        _files._read_checked("adult.test.gz", tmp_path)


def test_missing_and_unknown_files(tmp_path: Path) -> None:
    with pytest.raises(DataIntegrityError, match="not found"):
        _files._read_checked("adult.data.gz", tmp_path)
    with pytest.raises(ValueError, match="unknown data file"):
        _files.read_verified("iris.csv")


def test_loaders_refuse_corrupted_package_data(data_copy: Path) -> None:
    _corrupt(data_copy / "adult.data.gz")
    with pytest.raises(DataIntegrityError, match=r"adult\.data\.gz"):
        load_adult()
    load_adult(split="test")  # the intact file still loads
    status = {d["file"]: d["verified"] for d in list_datasets()}
    assert status == {f: f != "adult.data.gz" for f in SHA}


def test_list_datasets() -> None:
    got = list_datasets()
    assert [d["name"] for d in got] == ["adult-train", "adult-test", "kdd99-10percent", "nhefs",
                                        "biopsy", "health_insurance", "doctor_visits",
                                        "titanic"]
    expected_records = {
        "adult.data.gz": 32_561,
        "adult.test.gz": 16_281,
        "kddcup.data_10_percent.gz": 494_021,
        "nhefs.csv.gz": 1_629,
        "biopsy.csv.gz": 699,
        "health_insurance.csv.gz": 22_272,
        "doctor_visits.csv.gz": 20_186,
        "titanic.csv.gz": 1_316,
    }
    for d in got:
        assert {"name", "file", "bytes", "records", "sha256", "verified"} <= set(d)
        assert d["sha256"] == SHA[d["file"]]
        assert d["records"] == expected_records[d["file"]]
        assert d["bytes"] == (DATA_DIR / d["file"]).stat().st_size
        assert d["verified"] is True


# --- Adult: default (ICML 2020) setting ---------------------------------------------------------
def test_default_shape_balance_and_types(default: TabularDataset) -> None:
    ds = default
    assert ds.X.shape == (15_682, 23)
    assert ds.X.dtype == np.float64 and ds.y.dtype == np.int8
    assert set(np.unique(ds.y).tolist()) == {-1, 1}
    assert int((ds.y == 1).sum()) == 7_841 and int((ds.y == -1).sum()) == 7_841
    assert ds.X.min() >= 0.0 and ds.X.max() <= 1.0
    assert ds.feature_names == DEFAULT_NAMES
    assert ds.numeric_columns == [0, 1, 2]
    assert ds.categorical_blocks == {
        "marital-status": list(range(3, 10)),
        "relationship": list(range(10, 16)),
        "race": list(range(16, 21)),
        "sex": [21, 22],
    }
    assert ds.name == "adult-train-balanced"
    assert "Becker & Kohavi" in ds.description
    assert not ds.X.flags.writeable and not ds.y.flags.writeable


def test_default_bounds_are_public_constants(default: TabularDataset) -> None:
    b = default.bounds
    assert b["features"] == (0.0, 1.0)
    assert b["labels"] == (-1, 1)
    assert b["numeric_max"] == PUBLIC_MAX
    assert b["common_denominator"] == 7_920
    assert b["row_l1_max"] == 7.0
    assert np.abs(default.X).sum(axis=1).max() <= b["row_l1_max"]
    assert b["categories"] == {a: adult.CATEGORIES[a] for a in default.categorical_blocks}


def test_one_hot_blocks_sum_to_one(default: TabularDataset) -> None:
    X = default.X
    for cols in default.categorical_blocks.values():
        block = X[:, cols]
        assert np.isin(block, (0.0, 1.0)).all()
        assert (block.sum(axis=1) == 1.0).all()


def test_encoding_matches_an_independent_parse(
    default: TabularDataset, raw_train: list[list[str]]
) -> None:
    assert len(raw_train) == 32_561
    rows = default.source_rows
    assert rows is not None and (np.diff(rows) > 0).all()  # file order, no repeats
    col = {name: i for i, name in enumerate(adult.COLUMNS)}
    for j, a in enumerate(("age", "education-num", "hours-per-week")):
        ints = np.array([int(raw_train[r][col[a]]) for r in rows])
        # exactly the float64 of the rational value / public max
        assert (default.X[:, j] == ints / PUBLIC_MAX[a]).all()
        for v in np.unique(default.X[:, j]):
            f = Fraction(float(v)).limit_denominator(PUBLIC_MAX[a])
            assert float(f) == v and PUBLIC_MAX[a] % f.denominator == 0
    for a, cols in default.categorical_blocks.items():
        names = np.array(default.feature_names)[cols]
        chosen = names[np.argmax(default.X[:, cols], axis=1)]
        assert chosen.tolist() == [f"{a}={raw_train[r][col[a]]}" for r in rows]
    labels = [1 if raw_train[r][-1] == ">50K" else -1 for r in rows]
    assert default.y.tolist() == labels


def test_all_positives_are_kept(default: TabularDataset, raw_train: list[list[str]]) -> None:
    positives = [i for i, rec in enumerate(raw_train) if rec[-1] == ">50K"]
    assert len(positives) == 7_841
    assert default.source_rows is not None
    assert default.source_rows[default.y == 1].tolist() == positives


def test_random_state_reproducible_and_changes_negatives(default: TabularDataset) -> None:
    again = load_adult(random_state=0)
    assert again.source_rows is not None and default.source_rows is not None
    assert np.array_equal(again.X, default.X) and np.array_equal(again.y, default.y)
    assert np.array_equal(again.source_rows, default.source_rows)
    other = load_adult(random_state=1)
    assert other.source_rows is not None
    neg0 = set(default.source_rows[default.y == -1].tolist())
    neg1 = set(other.source_rows[other.y == -1].tolist())
    assert len(neg1) == 7_841 and neg0 != neg1
    assert np.array_equal(other.source_rows[other.y == 1], default.source_rows[default.y == 1])
    gen = load_adult(random_state=np.random.default_rng(0))
    assert gen.source_rows is not None and np.array_equal(gen.source_rows, default.source_rows)


def test_unbalanced_train_and_public_maxima_equal_data_maxima() -> None:
    ds = load_adult(balanced=False)
    assert ds.X.shape == (32_561, 23)
    assert int((ds.y == 1).sum()) == 7_841
    assert ds.name == "adult-train"
    test = load_adult("test", balanced=False)
    for d in (ds, test):
        # the codebook maxima are attained in both files; the declared minima too
        assert d.X[:, :3].max(axis=0).tolist() == [1.0, 1.0, 1.0]
        assert d.X[:, :3].min(axis=0).tolist() == [17 / 90, 1 / 16, 1 / 99]


def test_test_split(raw_test: list[list[str]]) -> None:
    assert len(raw_test) == 16_281
    full = load_adult("test", balanced=False)
    assert full.X.shape == (16_281, 23)
    assert int((full.y == 1).sum()) == 3_846
    assert full.y.tolist() == [1 if rec[-1] == ">50K." else -1 for rec in raw_test]
    bal = load_adult("test")
    assert bal.X.shape == (7_692, 23)
    assert int((bal.y == 1).sum()) == 3_846 and int((bal.y == -1).sum()) == 3_846
    assert bal.feature_names == DEFAULT_NAMES
    for cols in bal.categorical_blocks.values():
        assert (bal.X[:, cols].sum(axis=1) == 1.0).all()


# --- public category lists ----------------------------------------------------------------------
def test_category_constants_are_sorted_and_cover_the_files(
    raw_train: list[list[str]], raw_test: list[list[str]]
) -> None:
    col = {name: i for i, name in enumerate(adult.COLUMNS)}
    for a, levels in adult.CATEGORIES.items():
        assert list(levels) == sorted(levels)
        seen = {rec[col[a]] for rec in raw_train + raw_test}
        allowed = set(levels) | ({"?"} if a in adult.MISSING_ALLOWED else set())
        assert seen <= allowed, (a, seen - allowed)
        if a in adult.DEFAULT_ATTRIBUTES:
            assert "?" not in seen
    assert [
        len(adult.CATEGORIES[a]) for a in ("marital-status", "relationship", "race", "sex")
    ] == [
        7,
        6,
        5,
        2,
    ]


# --- bounds violations and attribute choice -----------------------------------------------------
def test_out_of_bounds_records_raise_naming_column_not_value() -> None:
    df = adult._read_split("train").copy()
    df.loc[5, "age"] = "91"
    df.loc[7, "race"] = "?"
    df.loc[9, "sex"] = "Unknown"
    with pytest.raises(BoundsViolation) as exc:
        adult._encode(df, "train", ["age"], ["race", "sex"], "raise")
    msg = str(exc.value)
    assert "'age'" in msg and "17..90" in msg and "'91'" not in msg
    assert "'race'" in msg and "'?'" not in msg
    assert "'sex'" in msg and "Unknown" not in msg
    assert "first at" not in msg and "(1 rows)" not in msg  # no row index, no count
    df = adult._read_split("test").copy()
    df.loc[0, "income"] = "<=50K"  # no trailing dot in the test file
    with pytest.raises(BoundsViolation, match="income"):
        adult._encode(df, "test", ["age"], [], "raise")


def test_missing_values_need_an_explicit_policy() -> None:
    with pytest.raises(BoundsViolation, match="missing='category'"):
        load_adult(attributes=["age", "workclass"])
    ds = load_adult(attributes=["workclass", "age"], missing="category")
    assert ds.feature_names[0] == "age"
    assert ds.feature_names[-1] == "workclass=?"
    assert ds.categorical_blocks == {"workclass": list(range(1, 10))}
    assert (ds.X[:, 1:].sum(axis=1) == 1.0).all()
    # the '?' level exists only for the attributes that use it
    ds2 = load_adult(attributes=["sex"], missing="category")
    assert ds2.feature_names == ["sex=Female", "sex=Male"]


def test_optional_attributes() -> None:
    ds = load_adult(
        attributes=["education", "occupation", "native-country", "hours-per-week"],
        missing="category",
        balanced=False,
    )
    assert ds.X.shape == (32_561, 1 + 16 + 15 + 42)
    assert ds.numeric_columns == [0]
    assert ds.bounds["numeric_max"] == {"hours-per-week": 99}
    for cols in ds.categorical_blocks.values():
        assert (ds.X[:, cols].sum(axis=1) == 1.0).all()


def test_bad_arguments() -> None:
    with pytest.raises(NotImplementedError, match="fnlwgt"):
        load_adult(attributes=["age", "fnlwgt"])
    with pytest.raises(NotImplementedError, match="capital-gain"):
        load_adult(attributes=["capital-gain"])
    with pytest.raises(ValueError, match="unknown Adult attribute"):
        load_adult(attributes=["salary"])
    with pytest.raises(ValueError, match="label"):
        load_adult(attributes=["income"])
    with pytest.raises(ValueError, match="twice"):
        load_adult(attributes=["age", "age"])
    with pytest.raises(TypeError):
        load_adult(attributes="age")
    with pytest.raises(ValueError, match="split"):
        load_adult("validation")
    with pytest.raises(ValueError, match="missing"):
        load_adult(missing="drop")
    with pytest.raises(TypeError):
        load_adult(random_state=1.5)  # type: ignore[arg-type]


# --- KDD-99 -------------------------------------------------------------------------------------
def test_kdd99_raw() -> None:
    df = load_kdd99_raw()
    assert df.shape == (494_021, 42)
    assert list(df.columns[:5]) == ["duration", "protocol_type", "service", "flag", "src_bytes"]
    assert df.columns[-1] == "label"
    assert df.columns[-2] == "dst_host_srv_rerror_rate"
    assert df["src_bytes"].dtype == np.int64 and df["serror_rate"].dtype == np.float64
    first = df.iloc[0]
    assert (first["protocol_type"], first["service"], first["flag"]) == ("tcp", "http", "SF")
    assert (first["src_bytes"], first["dst_bytes"], first["label"]) == (181, 5450, "normal.")
    assert int((df["label"] == "normal.").sum()) == 97_278
    assert df["label"].str.endswith(".").all()
    assert set(df["protocol_type"].unique()) == {"tcp", "udp", "icmp"}
