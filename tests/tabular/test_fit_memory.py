"""Memory of the exact learners' fit on many distinct rows (issue 39), with the same results.

* ``HalfspaceProblem._encode_blocks`` stores ``schema.encode(X)`` in the narrowest integer type
  the schema's public bounds prove wide enough (int64 when no narrower one is), the same values;
* ``_unique_rows`` gives numpy's ``unique(axis=0)`` of those rows, in their own type;
* ``from_counts`` builds the same problem (the same ``N`` in its narrow type, same order, same
  counts) as the int64 construction;
* the structured oracle's cells are numpy's ``unique(axis=0)`` of the 0/1 columns;
* the estimator's fit keeps no reference to the float matrix once it is encoded.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

from oracledp.oracles._halfspace import FeatureSchema, HalfspaceProblem
from oracledp.oracles._space import IntegerBall


def _schema(d: int, q: int, bound: float, n_bin: int) -> FeatureSchema:
    return FeatureSchema.grid(d, 1 / q if q > 1 else 1, bound, binary=np.arange(n_bin))


def _data(rng: np.random.Generator, n: int, d: int, q: int, bound: float, n_bin: int):
    X = rng.integers(-int(bound * q), int(bound * q) + 1, size=(n, d)) / q
    X[:, :n_bin] = rng.integers(0, 2, size=(n, n_bin))
    return X[rng.integers(0, n, n)]  # repeated rows


@pytest.mark.parametrize(("q", "bound", "expected"), [
    (1, 100.0, np.int8), (1, 126.0, np.int8), (1, 127.0, np.int16), (100, 300.0, np.int16),
    (1000, 1000.0, np.int32), (10**6, 10**6, np.int64),
])
def test_narrow_dtype_bounds_every_encoded_entry(q, bound, expected):
    schema = _schema(3, q, bound, 1)
    assert HalfspaceProblem._narrow_dtype(schema) is expected
    # the extreme values the schema accepts fit the chosen type exactly
    X = np.array([[1.0, bound, -bound], [0.0, -bound, bound]])
    N = HalfspaceProblem._encode_blocks(schema, X)
    assert N.dtype == expected
    assert np.array_equal(N.astype(np.int64), schema.encode(X))


def test_binary_columns_count_the_common_denominator():
    # 0/1 columns are stored as 0 or Q: Q = 200 does not fit int8 although the values are 0/1
    schema = FeatureSchema(binary=(True, False), denominators=(1, 200), bounds=(1.0, 0.5))
    assert HalfspaceProblem._narrow_dtype(schema) is np.int16
    X = np.array([[1.0, 0.5], [0.0, -0.5], [1.0, 0.005]])
    N = HalfspaceProblem._encode_blocks(schema, X)
    assert np.array_equal(N, schema.encode(X)) and N.dtype == np.int16


@pytest.mark.parametrize("seed", range(6))
def test_unique_rows_of_narrow_matrices_is_numpys(seed):
    rng = np.random.default_rng(seed)
    for dt in (np.int8, np.int16, np.int32, np.int64):
        N = rng.integers(-5, 6, size=(int(rng.integers(1, 400)), int(rng.integers(1, 7))))
        # repeated rows (gathered into a copy) and distinct rows (gathered in place)
        for M in (N[rng.integers(0, len(N), len(N))].astype(dt), np.unique(N, axis=0)[::-1]):
            M = np.ascontiguousarray(M.astype(dt))
            ref_rows, ref_inv = np.unique(M.astype(np.int64), axis=0, return_inverse=True)
            rows, inverse = HalfspaceProblem._unique_rows(M)  # may overwrite M
            assert rows.dtype == dt
            assert np.array_equal(rows, ref_rows) and np.array_equal(inverse, ref_inv.ravel())


@pytest.mark.parametrize(("q", "bound"), [(1, 100.0), (4, 50.0), (1000, 1000.0)])
def test_from_counts_is_the_int64_problem(q, bound):
    rng = np.random.default_rng(q)
    X = _data(rng, 3000, 6, q, bound, 3)
    pos = rng.integers(0, 4, len(X))
    neg = rng.integers(0, 4, len(X))
    schema = _schema(6, q, bound, 3)
    space = IntegerBall(6)
    p = HalfspaceProblem.from_counts(X, pos, neg, space, schema=schema)
    # the former construction: int64 encoding, numpy's unique rows, counts added
    keep = (pos + neg) > 0
    N64 = schema.encode(X[keep])
    rows, inv = np.unique(N64, axis=0, return_inverse=True)
    assert p.N.dtype == HalfspaceProblem._narrow_dtype(schema) and np.array_equal(p.N, rows)
    assert np.array_equal(p.n_pos, np.bincount(inv.ravel(), pos[keep], len(rows)).astype(int))
    assert np.array_equal(p.n_neg, np.bincount(inv.ravel(), neg[keep], len(rows)).astype(int))


def test_structured_cells_are_numpys_unique_rows():
    from oracledp.oracles._structured import StructuredOracle

    rng = np.random.default_rng(3)
    X = _data(rng, 2000, 9, 1, 1.0, 7)
    y = np.where(rng.random(len(X)) < 0.4, 1, -1)
    schema = _schema(9, 1, 1.0, 7)
    problem = HalfspaceProblem.from_data(X, y, IntegerBall(9), schema=schema)
    prep = StructuredOracle()._prepare(problem)
    B = (problem.N[:, prep.cat_cols] // problem.Q).astype(np.int8)
    cells, _ = np.unique(B, axis=0, return_inverse=True)
    assert prep.cells.dtype == np.int8 and np.array_equal(prep.cells, cells)


def test_the_fit_lets_the_float_matrix_go_once_encoded(monkeypatch):
    """The exact learners' fit keeps no reference to X once from_counts has encoded it (a
    caller that hands X over, as the CLI does, frees it then)."""
    from oracledp.estimators import RSPMClassifier

    rng = np.random.default_rng(0)
    X = _data(rng, 500, 4, 1, 1.0, 4)
    y = np.where(X[:, 0] + rng.random(len(X)) > 1, 1, 0)
    alive: list[bool] = []
    original = HalfspaceProblem._unique_rows

    def spy(N):
        gc.collect()
        alive.append(ref() is not None)
        return original(N)

    monkeypatch.setattr(HalfspaceProblem, "_unique_rows", staticmethod(spy))
    est = RSPMClassifier(epsilon=1.0, schema=_schema(4, 1, 1.0, 4), random_state=0,
                         oracle="brute")
    held = [X]
    ref = weakref.ref(X)
    del X
    # the fit itself, without the accountant's wrapper (whose *args hold the caller's X)
    fit = getattr(type(est).fit, "__wrapped__", type(est).fit)
    fit(est, held.pop(), y)
    assert alive == [False]
    assert ref() is None


def test_the_fit_frees_the_callers_matrix_before_the_oracle_runs():
    """The accountant's wrapper of ``fit`` hands X over without keeping it, and the exact
    learner drops it once encoded: by the time the oracle solves, nothing holds the caller's
    float matrix (a former wrapper kept it alive through the whole fit)."""
    from oracledp.estimators import OPDiscClassifier
    from oracledp.oracles._brute import BruteForceOracle

    refs: list[weakref.ref] = []
    freed: list[bool] = []

    class Spy(BruteForceOracle):
        def solve(self, problem, eta):
            freed.append(refs[0]() is None)
            return super().solve(problem, eta)

    def matrix() -> np.ndarray:
        X = np.random.default_rng(0).integers(-2, 3, size=(40, 2)) / 2
        refs.append(weakref.ref(X))
        return X

    y = np.where(np.arange(40) % 2 == 0, 1, -1)
    OPDiscClassifier(1.0, oracle=Spy(), feature_grid=0.5, random_state=0).fit(matrix(), y)
    assert freed == [True]
