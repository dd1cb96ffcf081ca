"""DP-SGD from record counts: ``sample_weight=counts`` is the run on the repeated table, bit for bit.

The Poisson batch is drawn over the ``n = counts.sum()`` records, as on the repeated table
(the same generator draws: the law of :func:`oracledp.privacy._noise.poisson_subsample`,
tested exactly in ``tests/privacy/test_privacy_core.py``), and each record index is mapped to
its row; so the release, the iterates and the guarantee equal those of the fit on
``np.repeat(X, counts, axis=0)`` for the same seed, and the repeated table is never built.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from oracledp.baselines import DPSGDLogisticRegression, dpsgd_logistic
from oracledp.estimators._base import RECORD_COUNTS_RULE


def _counted(seed: int, g: int, d: int, high: int = 30):
    """g distinct rows (some equal: repeats are allowed), labels in {-1, +1}, counts in
    [0, high) with zeros, both labels present with positive counts."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-2, 3, size=(g, d)).astype(float) / 2
    y = rng.choice([-1, 1], size=g)
    counts = rng.integers(0, high, size=g)
    y[:2], counts[:2] = [1, -1], [high, high]
    return X, y, counts


@pytest.mark.parametrize(("seed", "g", "d"), [(0, 2, 1), (1, 7, 3), (2, 40, 5), (3, 300, 2)])
@pytest.mark.parametrize("kwargs", [
    {},
    {"batch_size": 5, "epochs": 3},
    {"fit_intercept": False, "l2": 0.3, "lr": 0.2, "clip": 0.5},
])
def test_counts_release_exactly_the_repeated_table(seed, g, d, kwargs):
    X, y, counts = _counted(seed, g, d)
    Xr, yr = np.repeat(X, counts, axis=0), np.repeat(y, counts)
    a = dpsgd_logistic(X, y, 1.0, sample_weight=counts, random_state=seed, return_history=True,
                       **kwargs)
    b = dpsgd_logistic(Xr, yr, 1.0, random_state=seed, return_history=True, **kwargs)
    np.testing.assert_array_equal(a.history, b.history)  # every iterate, bit for bit
    np.testing.assert_array_equal(a.coef, b.coef)
    assert a.intercept == b.intercept
    assert (a.sigma, a.steps, a.q, a.lr, a.batch_size) == (b.sigma, b.steps, b.q, b.lr,
                                                           b.batch_size)
    assert a.guarantee == b.guarantee and a.guarantee.delta == 1.0 / int(counts.sum()) ** 2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_estimator_counts_release_exactly_the_repeated_table(seed):
    X, y, counts = _counted(seed, 25, 4)
    labels = np.where(y == 1, "yes", "no")
    # a float array of whole numbers is accepted; rows of count 0 are absent
    a = DPSGDLogisticRegression(epsilon=0.7, random_state=seed).fit(
        X, labels, sample_weight=counts.astype(float))
    b = DPSGDLogisticRegression(epsilon=0.7, random_state=seed).fit(
        np.repeat(X, counts, axis=0), np.repeat(labels, counts))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_ and a.guarantee_ == b.guarantee_
    assert (a.sigma_, a.steps_, a.q_) == (b.sigma_, b.steps_, b.q_)
    assert list(a.classes_) == list(b.classes_) == ["no", "yes"]


def test_unit_counts_are_the_unweighted_fit():
    X, y, _ = _counted(4, 60, 3)
    a = DPSGDLogisticRegression(random_state=1).fit(X, y, sample_weight=np.ones(len(y)))
    b = DPSGDLogisticRegression(random_state=1).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_


def test_a_row_of_count_zero_is_absent_even_its_label():
    X, y, counts = _counted(5, 12, 2)
    counts[5] = 0
    y_bad, labels = y.copy(), np.where(y == 1, "a", "b").astype(object)
    y_bad[5], labels[5] = 7, "not a class"  # never read: the row stands for no record
    a = dpsgd_logistic(X, y_bad, 1.0, sample_weight=counts, random_state=0)
    b = dpsgd_logistic(X, y, 1.0, sample_weight=counts, random_state=0)
    np.testing.assert_array_equal(a.coef, b.coef)
    est = DPSGDLogisticRegression(random_state=0).fit(X, labels, sample_weight=counts)
    assert list(est.classes_) == ["a", "b"]


def test_huge_counts_are_never_expanded():
    # 10**12 records: the repeated table would need 16 TB; the batches are drawn over the
    # records in O(batch) and mapped to the 3 rows.
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    y = np.array([1, -1, 1])
    counts = np.array([4, 3, 3]) * 10**11
    res = dpsgd_logistic(X, y, 1.0, sample_weight=counts, epochs=4 * 256 / 10**12,
                         random_state=0)
    assert res.steps == 4 and res.q == 256 / 10**12
    assert res.guarantee.delta == 1.0 / 10**24
    assert np.isfinite(res.coef).all()


_BAD = [
    np.array([1.0, 2.5, 1.0, 1.0]),  # a fraction
    np.array([1, -1, 1, 1]),  # a negative count
    np.array([1.0, np.nan, 1.0, 1.0]),
    np.array([1.0, np.inf, 1.0, 1.0]),
    np.array([True, True, False, True]),
    np.array(["1", "2", "1", "1"]),
    np.array([2**60, 1, 1, 1]),  # beyond exact int64 sums
]


@pytest.mark.parametrize("bad", _BAD, ids=["fraction", "negative", "nan", "inf", "bool",
                                           "text", "huge"])
def test_bad_counts_refused_before_any_randomness(bad):
    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.5, 0.5]])
    y = np.array([1, -1, 1, -1])
    gen = np.random.default_rng(0)
    before = gen.bit_generator.state
    with pytest.raises(ValueError) as info:
        dpsgd_logistic(X, y, 1.0, sample_weight=bad, random_state=gen)
    assert str(info.value) == RECORD_COUNTS_RULE
    with pytest.raises(ValueError) as info:
        DPSGDLogisticRegression(random_state=gen).fit(X, y, sample_weight=bad)
    assert str(info.value) == RECORD_COUNTS_RULE
    assert gen.bit_generator.state == before


@pytest.mark.parametrize(("bad", "match"), [
    (np.zeros(4), "all zero"),
    (np.ones(3), "one record count per row"),
    (np.ones((4, 1)), "one record count per row"),
])
def test_counts_of_no_record_or_wrong_shape_refused(bad, match):
    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.5, 0.5]])
    y = np.array([1, -1, 1, -1])
    gen = np.random.default_rng(0)
    before = gen.bit_generator.state
    with pytest.raises(ValueError, match=match):
        dpsgd_logistic(X, y, 1.0, sample_weight=bad, random_state=gen)
    with pytest.raises(ValueError, match=match):
        DPSGDLogisticRegression(random_state=gen).fit(X, y, sample_weight=bad)
    assert gen.bit_generator.state == before


# --- the command line: `oracledp fit --model dpsgd` reads the table aggregated ------------------


def test_cli_dpsgd_fits_the_distinct_rows_with_their_counts(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from oracledp import tabular
    from oracledp._cli import app
    from oracledp._registry import make_estimator, model_schema
    from oracledp.tabular import TableSchema, load_model, read_aggregated

    rng = np.random.default_rng(0)
    rows = ["x,z,label"] + [f"{a},{b},{'yes' if a + b > 2 or c else 'no'}" for a, b, c in
                            zip(rng.integers(0, 3, 400), rng.integers(0, 3, 400),
                                rng.random(400) < 0.1, strict=True)]
    data = tmp_path / "t.csv"
    data.write_text("\n".join(rows) + "\n")
    schema_path = tmp_path / "schema.json"
    schema_path.write_text(json.dumps({
        "target": {"name": "label", "labels": ["no", "yes"]},
        "columns": [{"name": "x", "type": "numeric", "lower": 0, "upper": 2, "step": 1},
                    {"name": "z", "type": "numeric", "lower": 0, "upper": 2, "step": 1}]}))

    def no_whole_table(*args, **kwargs):
        raise AssertionError("--model dpsgd read every record")

    monkeypatch.setattr(tabular, "read_csv", no_whole_table)
    res = CliRunner().invoke(app, ["fit", str(data), "--schema", str(schema_path), "--model",
                                   "dpsgd", "--epsilon", "1", "--seed", "7", "--out",
                                   str(tmp_path / "m")], env={"COLUMNS": "200"})
    assert res.exit_code == 0, (res.output, res.exception)
    monkeypatch.undo()

    schema = model_schema("dpsgd", TableSchema.load(schema_path))
    X, y, counts = read_aggregated(data, schema).weighted_rows()
    assert len(counts) < 20 and counts.sum() == 400
    # the fit on the table that lists each distinct row once per record, for the same seed
    est = make_estimator("dpsgd", schema, 1.0, None, random_state=7)
    est.fit(np.repeat(X, counts, axis=0), np.repeat(y, counts))
    saved = load_model(tmp_path / "m")
    np.testing.assert_array_equal(np.asarray(saved.coef).ravel(), est.coef_.ravel())
    assert "400" in res.output  # the number of records, as before
