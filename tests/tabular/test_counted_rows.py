"""The exact classifiers fit an aggregated table from its codes, block by block (issue 39).

``est.fit(table.counted_rows(), None)`` must fit exactly what ``est.fit(*table.weighted_rows())``
fits (the same exact problem, the same release, the same refusals), without ever building the
float matrix of the weighted rows: rows are decoded a block at a time.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import numpy as np
import pytest

from oracledp._registry import make_estimator
from oracledp.oracles._halfspace import HalfspaceProblem
from oracledp.oracles._row_blocks import CountedRows, RowBlocks
from oracledp.tabular import TableSchema, read_aggregated

DATA = Path(__file__).resolve().parents[2] / "src/oracledp/datasets/_data"


def _table(name: str, tmp_path: Path):
    schema = TableSchema.load(DATA / f"{name}.schema.json")
    csv = tmp_path / f"{name}.csv"
    with gzip.open(DATA / f"{name}.csv.gz", "rb") as src, open(csv, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return schema, read_aggregated(csv, schema)


@pytest.mark.parametrize(("name", "model"), [("biopsy", "rspm"), ("titanic", "opdisc"),
                                             ("biopsy", "gaussian-rspm")])
def test_counted_rows_fit_is_the_weighted_rows_fit(tmp_path, name, model):
    schema, table = _table(name, tmp_path)
    kw = {"epsilon": 1.0, "random_state": 0, "oracle": "brute" if model != "rspm" else "highs"}
    if model != "rspm":
        kw["delta"] = 1e-6
    a = make_estimator(model, schema, **kw).fit(*table.weighted_rows()[:2],
                                                 sample_weight=table.weighted_rows()[2])
    b = make_estimator(model, schema, **kw).fit(table.counted_rows(), None)
    assert np.array_equal(a.coef_, b.coef_) and a.intercept_ == b.intercept_
    assert a.guarantee_ == b.guarantee_
    assert a.classes_.tolist() == b.classes_.tolist()
    assert a.n_features_in_ == b.n_features_in_ == schema.n_features


@pytest.mark.parametrize("name", ["biopsy", "titanic", "doctor_visits"])
def test_same_exact_problem_from_the_codes(tmp_path, name):
    schema, table = _table(name, tmp_path)
    fs = schema.feature_schema()
    from oracledp.oracles._space import IntegerBall

    space = IntegerBall(fs.d)
    X, y, c = table.weighted_rows()
    pos = np.where(y == schema.labels[1], c, 0)
    neg = np.where(y == schema.labels[1], 0, c)
    old = HalfspaceProblem.from_counts(X, pos, neg, space, schema=fs)
    rows = table.counted_rows()
    new = HalfspaceProblem.from_counts(rows.rows, rows.counts[:, 1], rows.counts[:, 0], space,
                                       schema=fs)
    assert new.N.dtype == old.N.dtype
    assert np.array_equal(old.N, new.N) and old.Q == new.Q
    assert np.array_equal(old.n_pos, new.n_pos) and np.array_equal(old.n_neg, new.n_neg)
    # the same losses, computed in int64 whatever N's type
    K = np.random.default_rng(0).integers(-1, 2, size=(7, fs.d))
    assert np.array_equal(old.loss_k(K), new.loss_k(K))
    assert np.array_equal(old.N.astype(np.int64) @ K.T, new.scores_k(K))


def test_the_rows_are_decoded_a_block_at_a_time(tmp_path, monkeypatch):
    """Blocks of 64 rows over 600 distinct rows of doctor_visits (categorical and numeric
    columns): 10 blocks, the last one partial.  (The whole table, 20,016 rows, took 9 s, all
    in the oracle's solve, for the same blocks.)"""
    from oracledp.tabular._aggregated import AggregatedTable

    schema, full = _table("doctor_visits", tmp_path)
    table = AggregatedTable(schema, full.codes[:600], full.counts[:600])
    assert table.n_groups == 600 and (table.counts.sum(axis=0) > 0).all()
    import oracledp.oracles._halfspace as hs

    original = hs.HalfspaceProblem._encode_blocks
    monkeypatch.setattr(hs.HalfspaceProblem, "_encode_blocks",
                        staticmethod(lambda s, X, block=1 << 16: original(s, X, block=64)))
    sizes: list[int] = []
    decode = TableSchema._decode

    def spy(self, codes):
        sizes.append(len(codes))
        return decode(self, codes)

    rows = table.counted_rows()
    monkeypatch.setattr(TableSchema, "_decode", spy)
    est = make_estimator("rspm", schema, epsilon=1.0, random_state=0)
    est.fit(rows, None)
    assert sizes and max(sizes) <= 64 and sum(sizes) == table.n_groups and len(sizes) >= 10


def test_one_label_is_refused_as_with_the_weighted_rows(tmp_path):
    schema, table = _table("biopsy", tmp_path)
    from oracledp.estimators import RSPMClassifier
    from oracledp.tabular._aggregated import AggregatedTable

    keep = table.counts[:, 0] > 0
    counts = table.counts[keep].copy()
    counts[:, 1] = 0
    one = AggregatedTable(schema, table.codes[keep], counts)
    est = RSPMClassifier(1.0, schema=schema.feature_schema(), random_state=0)
    with pytest.raises(ValueError) as old:
        est.fit(*one.weighted_rows()[:2], sample_weight=one.weighted_rows()[2])
    with pytest.raises(ValueError) as new:
        est.fit(one.counted_rows(), None)
    assert str(old.value) == str(new.value)
    with pytest.raises(TypeError, match="takes no y"):
        est.fit(one.counted_rows(), np.zeros(3))


def test_feature_grid_rounds_each_block():
    rng = np.random.default_rng(1)
    X = np.round(rng.random((300, 3)), 3)
    X[:, 0] = rng.integers(0, 2, 300)
    counts = rng.integers(0, 3, size=(300, 2))
    counts[counts.sum(axis=1) == 0, 0] = 1
    from oracledp.estimators import RSPMClassifier

    rows = CountedRows(RowBlocks(300, 3, lambda idx: X[idx]), ("a", "b"), counts)
    group, label = np.nonzero(counts > 0)
    y = np.array(["a", "b"], dtype=object)[label]
    kw = {"feature_grid": 0.25, "random_state": 3, "oracle": "brute"}
    a = RSPMClassifier(1.0, **kw).fit(X[group], y, sample_weight=counts[group, label])
    b = RSPMClassifier(1.0, **kw).fit(rows, None)
    assert np.array_equal(a.coef_, b.coef_) and a.guarantee_ == b.guarantee_
