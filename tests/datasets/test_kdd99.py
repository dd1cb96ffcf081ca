"""KDD-99 in the Accuracy First encoding (Ligett et al. 2017, Appendix B.1): load_kdd99.

Layer 1 (deterministic) tests.  Expected values are recomputed here from the raw table
(load_kdd99_raw) and from the documented transform, independently of the loader's code path;
the record counts come from the data README (97,278 normal records of 494,021).
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oracledp._errors import BoundsViolation
from oracledp.datasets import DataIntegrityError, _files, load_kdd99, load_kdd99_raw
from oracledp.datasets import _kdd99 as kdd99

DATA_DIR = Path(_files.__file__).parent / "_data"
N_FILE = 494_021
N_NORMAL = 97_278
TEXT = ["protocol_type", "service", "flag"]


@pytest.fixture(scope="module")
def raw() -> pd.DataFrame:
    return load_kdd99_raw()


@pytest.fixture(scope="module")
def logistic() -> kdd99.TabularDataset:
    return load_kdd99()


@pytest.fixture(scope="module")
def ridge() -> kdd99.TabularDataset:
    return load_kdd99(task="ridge")


def _encode_row(rec: pd.Series, drop_src: bool) -> np.ndarray:
    """The documented transform, written out for one raw record."""
    vals = []
    for c in rec.index:
        if c in TEXT or c == "label" or (drop_src and c == "src_bytes"):
            continue
        v = float(rec[c])
        vals.append(math.log(1.0 + v) if c in ("duration", "src_bytes", "dst_bytes") else v)
    x = np.array(vals)
    return x / max(1.0, float(np.abs(x).sum()))


def test_logistic_shape_names_and_domain(logistic: kdd99.TabularDataset) -> None:
    ds = logistic
    assert ds.X.shape == (100_000, 38)  # Appendix B.1: p = 38 after dropping the text columns
    assert ds.X.dtype == np.float64 and ds.y.dtype == np.int8
    assert not ds.X.flags.writeable and not ds.y.flags.writeable
    assert ds.feature_names[:3] == ["duration", "src_bytes", "dst_bytes"]
    assert not set(TEXT) & set(ds.feature_names) and "label" not in ds.feature_names
    assert len(set(ds.feature_names)) == 38
    # the domain the proofs assume, checked on the *computed* norms (no tolerance)
    assert (np.abs(ds.X).sum(axis=1) <= 1.0).all()
    assert (ds.X >= 0).all()
    assert set(np.unique(ds.y).tolist()) == {-1, 1}
    assert ds.bounds["x_l1_norm"] == 1.0 and ds.bounds["labels"] == (-1, 1)
    assert ds.name == "kdd99-logistic" and "per-record public transform" in ds.description


def test_rows_are_the_documented_transform_of_the_raw_records(
    logistic: kdd99.TabularDataset, ridge: kdd99.TabularDataset, raw: pd.DataFrame
) -> None:
    rows = logistic.source_rows
    assert rows is not None and rows.shape == (100_000,)
    assert (np.diff(rows) > 0).all()  # file order, no repeats (without replacement)
    assert rows.min() >= 0 and rows.max() < N_FILE
    pick = np.random.default_rng(7).choice(100_000, size=25, replace=False)
    for i in pick:
        rec = raw.iloc[int(rows[i])]
        np.testing.assert_allclose(logistic.X[i], _encode_row(rec, False), rtol=1e-12, atol=0)
        assert logistic.y[i] == (-1 if rec["label"] == "normal." else 1)
        np.testing.assert_allclose(ridge.X[i], _encode_row(rec, True), rtol=1e-12, atol=0)
        expect = math.log1p(float(rec["src_bytes"])) / math.log1p(2**32 - 1)
        assert ridge.y[i] == pytest.approx(expect, rel=1e-14)


def test_label_balance_is_the_one_found(logistic: kdd99.TabularDataset, raw: pd.DataFrame) -> None:
    assert logistic.source_rows is not None
    labels = raw["label"].to_numpy()[logistic.source_rows]
    n_attack = int((labels != "normal.").sum())
    assert int((logistic.y == 1).sum()) == n_attack
    # nothing rebalanced: the attack share matches the file's within a hypergeometric band
    # (sd ~ 112 records; 6 sd, false-alarm rate ~ 2e-9 over seeds)
    expected = 100_000 * (N_FILE - N_NORMAL) / N_FILE
    assert abs(n_attack - expected) < 6 * 112


def test_ridge_task(ridge: kdd99.TabularDataset, logistic: kdd99.TabularDataset) -> None:
    ds = ridge
    assert ds.X.shape == (100_000, 37)
    assert "src_bytes" not in ds.feature_names
    assert ds.feature_names == [f for f in logistic.feature_names if f != "src_bytes"]
    assert ds.y.dtype == np.float64
    assert (np.abs(ds.y) <= 1.0).all() and (ds.y >= 0).all()
    assert (np.abs(ds.X).sum(axis=1) <= 1.0).all()
    # same seed, same records for both tasks
    assert np.array_equal(ds.source_rows, logistic.source_rows)
    # the scale is the public constant log(1 + 2^32 - 1), not the sample maximum
    assert ds.y.max() < 1.0
    assert kdd99.SRC_BYTES_MAX == 2**32 - 1
    assert "Twitter" in ds.description and "src_bytes removed" in ds.description
    assert ds.bounds["y_abs"] == 1.0


def test_seed_reproducibility_and_all_rows() -> None:
    a = load_kdd99(n=1_000, random_state=3)
    b = load_kdd99(n=1_000, random_state=3)
    c = load_kdd99(n=1_000, random_state=4)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
    assert np.array_equal(a.source_rows, b.source_rows)
    assert not np.array_equal(a.source_rows, c.source_rows)
    expect = np.sort(np.random.default_rng(3).choice(N_FILE, size=1_000, replace=False))
    assert np.array_equal(a.source_rows, expect)
    full = load_kdd99(n=None)
    assert full.X.shape == (N_FILE, 38)
    assert int((full.y == -1).sum()) == N_NORMAL
    assert (np.abs(full.X).sum(axis=1) <= 1.0).all()


def test_parameter_errors_before_reading() -> None:
    with pytest.raises(ValueError, match="task"):
        load_kdd99(task="linear")
    with pytest.raises(ValueError, match="between 1 and 494021"):
        load_kdd99(n=0)
    with pytest.raises(ValueError, match="between 1 and 494021"):
        load_kdd99(n=N_FILE + 1)
    with pytest.raises(TypeError):
        load_kdd99(n=10.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        load_kdd99(random_state=1.5)  # type: ignore[arg-type]


def test_row_scaling_never_exceeds_one_after_rounding() -> None:
    rng = np.random.default_rng(0)
    X = rng.random((20_000, 38)) * rng.choice([1e-3, 1.0, 1e3, 1e9], size=(20_000, 1))
    out = kdd99._scale_rows_l1(X.copy())
    norms = np.abs(out).sum(axis=1)
    assert (norms <= 1.0).all()
    big = np.abs(X).sum(axis=1) > 1.0
    np.testing.assert_allclose(norms[big], 1.0, rtol=1e-14)
    np.testing.assert_array_equal(out[~big], X[~big])  # rows already inside are untouched


def test_checksum_is_checked_on_every_load_even_when_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, logistic: kdd99.TabularDataset
) -> None:
    assert kdd99._cache is not None  # the parse is cached by now
    target = tmp_path / kdd99.FILE
    shutil.copy(DATA_DIR / kdd99.FILE, target)
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    monkeypatch.setattr(_files, "_data_dir", lambda: tmp_path)
    with pytest.raises(DataIntegrityError, match=r"kddcup\.data_10_percent\.gz"):
        load_kdd99(n=10)


def test_bound_violation_is_an_error_not_a_clip(monkeypatch: pytest.MonkeyPatch) -> None:
    values, attack = kdd99._numeric_table()
    bad = values.copy()
    j = kdd99.NUMERIC_COLUMNS.index("src_bytes")
    bad[:, j] = 2.0**33  # above the declared public maximum
    monkeypatch.setattr(kdd99, "_numeric_table", lambda: (bad, attack))
    with pytest.raises(BoundsViolation, match=r"2\*\*32 - 1"):
        load_kdd99(n=50, task="ridge")
