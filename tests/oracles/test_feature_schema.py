"""The public feature schema: refusals read only the schema and the parameters, happen before
any randomness, and their messages name columns and rules, never values, rows or denominators."""

from __future__ import annotations

import numpy as np
import pytest

from oracledp._errors import BoundsViolation
from oracledp.datasets import load_adult
from oracledp.estimators import OPDiscClassifier
from oracledp.learners._rspm import rspm, rspm_space
from oracledp.oracles import FeatureSchema, HalfspaceProblem, IntegerBall
from oracledp.oracles._dispatch import AutoOracle
from oracledp.oracles._halfspace import rationalize_columns


def _table(seed: int = 0, n: int = 30):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 91, n) / 90, rng.integers(0, 2, (n, 3))]).astype(float)
    y = rng.choice([-1, 1], n)
    schema = FeatureSchema(binary=(False, True, True, True), denominators=(90, 1, 1, 1),
                           bounds=(1.0, 1.0, 1.0, 1.0), names=("age", "a", "b", "c"))
    return X, y, schema


def test_schema_gives_public_denominator_and_binary_columns():
    X, y, schema = _table()
    p = HalfspaceProblem.from_data(X, y, IntegerBall(4), schema=schema)
    assert p.Q == 90 and schema.Q == 90
    np.testing.assert_array_equal(p.binary_columns, [False, True, True, True])
    np.testing.assert_array_equal(p.N, np.unique(np.rint(X * 90).astype(np.int64), axis=0))
    # A declared-binary column that happens to hold only 0/1 *and* a numeric column that
    # happens to be 0/1 in the data: the schema decides, not the data.
    X01 = X.copy()
    X01[:, 0] = np.rint(X01[:, 0])
    p01 = HalfspaceProblem.from_data(X01, y, IntegerBall(4), schema=schema)
    assert not p01.binary_columns[0]
    assert AutoOracle().formulation_for(p01) == AutoOracle().formulation_for(p)


def test_same_verdict_for_neighbouring_tables():
    """Whether a fit is refused depends on the schema, not on which records satisfy it by luck:
    two neighbours that both fit the schema get the same formulation and the same Q."""
    X, y, schema = _table(1)
    Xb = X.copy()
    Xb[0] = [1.0, 0.0, 0.0, 0.0]  # replace one record
    pa = HalfspaceProblem.from_data(X, y, IntegerBall(4), schema=schema)
    pb = HalfspaceProblem.from_data(Xb, y, IntegerBall(4), schema=schema)
    assert pa.Q == pb.Q
    np.testing.assert_array_equal(pa.binary_columns, pb.binary_columns)
    # without a schema the denominator is read from the data and can change with one record
    Xc = X.copy()
    Xc[0, 0] = 1 / 7
    assert rationalize_columns(Xc)[1] != rationalize_columns(X)[1]


@pytest.mark.parametrize(
    ("column", "value", "rule"),
    [(1, 0.5, "must be 0 or 1"), (0, 1.5, "|x| <= 1"), (0, 0.123456789, "multiple of 1/90")],
)
def test_violations_name_column_and_rule_never_the_value(column, value, rule):
    X, y, schema = _table(2)
    X[7, column] = value
    with pytest.raises(BoundsViolation) as info:
        HalfspaceProblem.from_data(X, y, IntegerBall(4), schema=schema)
    msg = str(info.value)
    assert rule in msg and f"feature column {column}" in msg
    for leaked in (repr(value), str(value), "row 7", "[7", " 7 "):
        assert leaked not in msg


def test_every_violation_is_listed_once():
    X, y, schema = _table(3)
    X[0, 1] = 2.0
    X[1, 0] = 0.3333
    with pytest.raises(BoundsViolation) as info:
        HalfspaceProblem.from_data(X, y, IntegerBall(4), schema=schema)
    msg = str(info.value)
    assert "feature column 1 ('a') must be 0 or 1" in msg
    assert "feature column 0 ('age') must be a multiple of 1/90" in msg


def test_schema_validation():
    with pytest.raises(ValueError, match="one entry per column"):
        FeatureSchema(binary=(True,), denominators=(1, 2), bounds=(1.0,))
    with pytest.raises(ValueError, match="grid denominator"):
        FeatureSchema(binary=(False,), denominators=(0,), bounds=(1.0,))
    with pytest.raises(ValueError, match="bound must be"):
        FeatureSchema(binary=(False,), denominators=(2,), bounds=(float("inf"),))
    with pytest.raises(ValueError, match="2\\*\\*52"):
        FeatureSchema.grid(3, 1e-12, 1e6).check_exact(4)
    with pytest.raises(ValueError, match="1/q"):
        FeatureSchema.grid(3, 0.3, 1.0)


def test_estimator_refusals_happen_before_randomness():
    X, y, schema = _table(4)
    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    bad = X.copy()
    bad[3, 2] = 0.5
    cases = [
        (OPDiscClassifier(oracle="brute", random_state=rng), X, "public description"),
        (OPDiscClassifier(oracle="brute", random_state=rng, schema=schema), bad, "0 or 1"),
        (OPDiscClassifier(oracle="brute", random_state=rng, schema=FeatureSchema.grid(3, 1, 1)),
         X, "declares 3 columns"),
    ]
    for clf, data, match in cases:
        with pytest.raises(ValueError, match=match):
            clf.fit(data, y)
        assert not hasattr(clf, "coef_")
    assert rng.bit_generator.state == state


def test_many_numeric_columns_take_the_branch_oracle_and_monolithic_refuses_before_noise():
    """RSPM on a table with many declared-numeric columns and a huge W (3^16 points): the
    default oracle takes it with the exact branch-and-bound (chosen from the schema and the
    sizes alone) and certifies; the monolithic formulation, which takes OPDisc's noise only,
    refuses from the sizes alone, before the Laplace noise is drawn."""
    from oracledp.oracles._dispatch import AutoOracle

    rng = np.random.default_rng(0)
    d = 16
    X = rng.integers(0, 5, (20, d)) / 4
    schema = FeatureSchema.grid(d, 0.25, 1.0)
    p = HalfspaceProblem.from_data(X, rng.choice([-1, 1], 20), rspm_space(d), schema=schema)
    assert AutoOracle().formulation_for(p) == "branch"
    res = rspm(p, 1.0, oracle="highs", random_state=np.random.default_rng(2))
    assert res.certified
    gen = np.random.default_rng(1)
    state = gen.bit_generator.state
    with pytest.raises(ValueError, match="monolithic formulation"):
        rspm(p, 1.0, oracle=AutoOracle(formulation="monolithic"), random_state=gen)
    assert gen.bit_generator.state == state


def test_adult_schema_is_public_and_exact():
    train = load_adult("train")
    s = train.feature_schema
    assert s.Q == 7920 and int(s.binary_mask.sum()) == 20
    assert s.names == tuple(train.feature_names)
    p = HalfspaceProblem.from_data(train.X, train.y, IntegerBall(23), schema=s)
    q = HalfspaceProblem.from_data(train.X, train.y, IntegerBall(23))
    np.testing.assert_array_equal(p.N, q.N)
    np.testing.assert_array_equal(p.binary_columns, q.binary_columns)


def test_bound_messages_of_the_other_learners_print_no_data():
    """OPSamp's and Accuracy First's bound refusals name the rule, never rows, values or norms."""
    from oracledp.erm._sensitivity import check_l1_rows, check_ridge_targets
    from oracledp.oracles._convex import LogisticProblem

    X = np.full((9, 3), 0.1)
    X[6] = [0.1, 7.123, 0.1]
    y = np.ones(9, dtype=int)
    checks = [
        lambda: LogisticProblem.from_data(X, y, feature_bound=1.0),
        lambda: LogisticProblem.from_data(X, y, feature_bound=10.0, feature_l1_bound=2.0),
        lambda: check_l1_rows(X),
        lambda: check_ridge_targets(np.where(np.arange(9) == 6, 7.123, 0.0), 9),
    ]
    for check in checks:
        with pytest.raises(BoundsViolation) as info:
            check()
        msg = str(info.value)
        for leaked in ("7.123", "7.3", "[6", " 6 ", "rows [", "first"):
            assert leaked not in msg, (leaked, msg)
