"""One spelling per concept: the estimators and make_estimator take ``oracle=`` (as the learner
functions do); the old keyword ``solver=`` still works, with a FutureWarning, and fits the
same model."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from oracledp.estimators import OPDiscClassifier, RSPMClassifier
from oracledp.registry import make_estimator
from oracledp.tabular import TableSchema

X = np.array([[2, 1], [1, 2], [2, 2], [-2, -1], [-1, -2], [-2, 0]] * 3) / 2
Y = np.array([1, 1, 1, 0, 0, 0] * 3)
ESTIMATORS = [OPDiscClassifier, RSPMClassifier]


def _new(cls: type, **kw: object) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # the new spelling never warns
        return cls(epsilon=1.0, feature_grid=0.5, random_state=0, **kw)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_old_keyword_warns_and_fits_the_same(cls: type) -> None:
    new = _new(cls, oracle="brute").fit(X, Y)
    with pytest.warns(FutureWarning, match="solver= is deprecated.*use oracle="):
        old = cls(epsilon=1.0, feature_grid=0.5, random_state=0, solver="brute")
    assert old.oracle == "brute" and not hasattr(old, "solver")
    old.fit(X, Y)
    np.testing.assert_array_equal(old.coef_, new.coef_)
    assert old.get_params() == new.get_params()


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_signature_and_params_show_only_oracle(cls: type) -> None:
    params = inspect.signature(cls).parameters
    assert "oracle" in params and "solver" not in params
    assert params["oracle"].default == "highs"
    est = _new(cls, oracle="brute")
    assert est.get_params()["oracle"] == "brute" and "solver" not in est.get_params()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        twin = clone(est)  # clone passes oracle=: no warning
        assert twin.oracle == "brute"
        assert est.set_params(oracle="highs").oracle == "highs"
    with pytest.raises(ValueError, match="Invalid parameter 'solver'"):
        est.set_params(solver="brute")  # set_params knows only the signature's names
    with pytest.raises(TypeError, match="got both solver= and oracle="):
        cls(solver="brute", oracle="brute")


SCHEMA = TableSchema.from_dict({
    "target": {"name": "y", "labels": ["no", "yes"]},
    "columns": [{"name": "x", "type": "numeric", "lower": 0, "upper": 4, "step": 1},
                {"name": "c", "type": "categorical", "levels": ["a", "b"]}]})
DF = pd.DataFrame({"x": [0, 1, 3, 4] * 3, "c": ["a", "a", "b", "b"] * 3,
                   "y": ["no", "no", "yes", "yes"] * 3})


@pytest.mark.parametrize("model", ["opdisc", "rspm"])
def test_make_estimator_old_keyword_warns_and_fits_the_same(model: str) -> None:
    Xs, ys = SCHEMA.encode(DF), SCHEMA.labels_of(DF)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        new = make_estimator(model, SCHEMA, epsilon=1.0, oracle="brute", random_state=0)
    with pytest.warns(FutureWarning, match="solver= is deprecated.*use oracle="):
        old = make_estimator(model, SCHEMA, epsilon=1.0, solver="brute", random_state=0)
    assert old.oracle == new.oracle == "brute"
    np.testing.assert_array_equal(old.fit(Xs, ys).coef_, new.fit(Xs, ys).coef_)
    assert "solver" not in inspect.signature(make_estimator).parameters


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_pickles_from_before_the_rename_load(cls: type) -> None:
    """A fitted estimator pickled when the parameter was still called ``solver`` unpickles with
    it as ``oracle`` (get_params, repr and clone work); new pickles store ``oracle``."""
    import pickle

    est = _new(cls, oracle="brute").fit(X, Y)
    new = pickle.loads(pickle.dumps(est))
    state = {("solver" if k == "oracle" else k): v for k, v in est.__getstate__().items()}
    old = cls.__new__(cls)
    old.__setstate__(state)
    assert old.oracle == "brute" and not hasattr(old, "solver")
    assert list(vars(old)) == list(vars(new))  # the same state, in the same order
    assert old.get_params() == new.get_params() and repr(old) == repr(new)
    np.testing.assert_array_equal(old.predict(X), est.predict(X))
    assert clone(old).oracle == "brute"
    assert b"solver" not in pickle.dumps(est)
