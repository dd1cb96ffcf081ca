"""A saved OPDisc model is refused unless its coefficients are a point of OPDisc's parameter
space W = {tau k : k integer, |tau k_j| <= bound, ||tau k||_2 <= radius}, the public space
given by the saved params (``space`` = "norm2=R,bound=B", the W of the fit, with tau; in files
without it tau, bound, radius, the estimator's former defaults when absent) and the schema's
number of encoded features."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oracledp._registry import make_estimator
from oracledp.estimators import OPDiscClassifier
from oracledp.tabular import Column, ModelFileError, TableSchema, load_model, save_model

SCHEMA = TableSchema(columns=(Column("x", "numeric", lower=0, upper=4, step=1),
                              Column("c", "categorical", levels=("a", "b"))),
                     target="y", labels=("no", "yes"), intercept=True)  # d = 4 features
DF = pd.DataFrame({"x": ["0", "1", "3", "4", "2", "4"], "c": ["a", "a", "b", "b", "a", "b"],
                   "y": ["no", "no", "yes", "yes", "no", "yes"]})


def _saved(tmp_path: Path, **params) -> Path:
    est = make_estimator("opdisc", SCHEMA, 2.0, oracle="brute", random_state=0)
    est.set_params(**params).fit(SCHEMA.encode(DF), SCHEMA.labels_of(DF))
    return save_model(tmp_path / "m", model_type="opdisc", schema=SCHEMA, estimator=est)


def _with(path: Path, coef=None, *, legacy: bool = False, **params) -> Path:
    """The saved file with other coefficients or params; ``legacy``: without ``space`` (a
    file that declares W by tau/bound/radius only)."""
    doc = json.loads(path.read_text())
    if coef is not None:
        doc["coef"] = coef
    if legacy:
        del doc["params"]["space"]
    doc["params"].update(params)
    path.write_text(json.dumps(doc))
    return path


def test_a_fitted_model_loads_back(tmp_path):
    saved = load_model(_saved(tmp_path))
    assert saved.params["tau"] == 1.0 and saved.params["bound"] is None
    assert np.all(saved.coef == np.rint(saved.coef)) and np.abs(saved.coef).max() <= 2


def test_a_fitted_model_with_its_own_space_loads_back(tmp_path):
    saved = load_model(_saved(tmp_path, tau=0.1, bound=0.3, radius=0.5))
    assert np.abs(saved.coef).max() <= 0.3 + 1e-12


@pytest.mark.parametrize("coef", [
    [0.5, 0.0, 0.0, 0.0],  # not an integer point (tau = 1)
    [1e308, 0.0, 0.0, 0.0],  # far outside the box
    [-3.0, 0.0, 0.0, 0.0],  # outside the box: bound = floor(sqrt(4)) = 2
    [2.0, 1.0, 0.0, 0.0],  # in the box, outside the ball: ||w||^2 = 5 > radius^2 = 4
    [1e-300, 0.0, 0.0, 0.0],  # tiny but not a point of the lattice
])
def test_coefficients_outside_w_are_refused(tmp_path, coef):
    path = _with(_saved(tmp_path), coef)
    with pytest.raises(ModelFileError, match="parameter space W"):
        load_model(path)


def test_the_saved_params_define_w(tmp_path):
    path = _saved(tmp_path)
    load_model(_with(path, [2.0, 1.0, 0.0, 0.0], legacy=True, radius=3.0))  # now in the ball
    with pytest.raises(ModelFileError, match="parameter space W"):
        load_model(_with(path, [2.0, 1.0, 0.0, 0.0], tau=2.0))  # not a multiple of 2
    load_model(_with(path, [0.25, -0.5, 0.0, 0.0], tau=0.25, bound=2.0, radius=3.0))
    with pytest.raises(ModelFileError, match="parameter space W"):
        load_model(_with(path, [0.3, 0.0, 0.0, 0.0], tau=0.25))


def test_the_saved_space_is_the_fitted_w_and_defines_it(tmp_path):
    """The file records the W of the fit ("norm2=R,bound=B"); it, not bound/radius, decides."""
    path = _saved(tmp_path, space="norm2=2")
    saved = load_model(path)
    assert saved.params["space"] == "norm2=2,bound=1"
    assert "parameter space W = {k in Z^4 : |k_j| <= 1, ||k||^2 <= 2}" in saved.guarantee.notes
    assert (np.abs(saved.coef) > 0).sum() <= 2
    with pytest.raises(ModelFileError, match="parameter space W"):  # 3 nonzero: not in W
        load_model(_with(path, [1.0, 1.0, -1.0, 0.0], radius=3.0))
    load_model(_with(path, [1.0, 1.0, -1.0, 0.0], space="norm2=3"))
    with pytest.raises(ModelFileError, match="parameter space"):
        load_model(_with(path, space="norm2=banana"))


@pytest.mark.parametrize("params", [{"tau": -1.0}, {"tau": "1"}, {"bound": 0.0},
                                    {"tau": 2.0, "bound": 1.0, "radius": None}])
def test_params_that_describe_no_space_are_refused(tmp_path, params):
    path = _with(_saved(tmp_path), legacy=True, **params)
    with pytest.raises(ModelFileError, match="parameter space"):
        load_model(path)


def test_save_model_refuses_to_write_such_a_model(tmp_path):
    est = OPDiscClassifier(1.0, oracle="brute")

    class Fake:
        coef_ = np.array([[0.5, 0.0, 0.0, 0.0]])
        intercept_ = 0.0
        classes_ = np.array(["no", "yes"])
        guarantee_ = None

        def get_params(self, deep=False):
            return est.get_params(deep=deep)

    fitted = make_estimator("opdisc", SCHEMA, 2.0, oracle="brute", random_state=0)
    Fake.guarantee_ = fitted.fit(SCHEMA.encode(DF), SCHEMA.labels_of(DF)).guarantee_
    with pytest.raises(ValueError, match="parameter space W"):
        save_model(tmp_path / "m", model_type="opdisc", schema=SCHEMA, estimator=Fake())
    assert not (tmp_path / "m" / "model.json").exists()
