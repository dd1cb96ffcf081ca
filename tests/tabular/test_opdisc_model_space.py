"""A saved exact model (OPDisc, RSPM, Gaussian RSPM) is refused unless it records the
parameter space W of its fit and its coefficients are a point of it.

W = {tau k : k integer, |tau k_j| <= bound, ||tau k||_2^2 <= R} is given by the saved params
(``space`` = "norm2=R,bound=B", W resolved, never "auto"; OPDisc's ``tau``) and the schema's
number of encoded features; the guarantee records the same W (its notes: W, |W| and D; its
calibration: |W|, OPDisc's d and shift c, Gaussian RSPM's m = 2d).  A file without
``space``, with a space that is not a finite valid resolved W, or whose space is not the W of
its guarantee is refused (ModelFileError)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oracledp._registry import EXACT_MODELS, make_estimator
from oracledp.estimators import OPDiscClassifier
from oracledp.estimators._space_spec import describe_space, parameter_space
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
    """The saved file with other coefficients or params; ``legacy``: without ``space`` (W
    declared by tau/bound/radius only, as files once did: refused)."""
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


def test_the_saved_tau_is_part_of_w(tmp_path):
    """W = {tau k}: the saved tau with the saved space is the W of the fit; another tau is
    another W, which the guarantee does not record, and coefficients off the tau grid are
    not in W."""
    path = _saved(tmp_path, tau=0.25, space="norm2=1,bound=0.5")
    saved = load_model(path)
    assert saved.params["space"] == "norm2=1,bound=0.5" and saved.params["tau"] == 0.25
    assert np.all(saved.coef * 4 == np.rint(saved.coef * 4))
    with pytest.raises(ModelFileError, match="parameter space W"):
        load_model(_with(path, tau=0.5))
    with pytest.raises(ModelFileError, match="parameter space W"):
        load_model(_with(path, [0.3, 0.0, 0.0, 0.0], tau=0.25))
    load_model(_with(path, [0.25, -0.5, 0.0, 0.0]))


def test_the_saved_space_is_the_fitted_w_and_defines_it(tmp_path):
    """The file records the W of the fit ("norm2=R,bound=B"); it, not bound/radius, decides."""
    path = _saved(tmp_path, space="norm2=2")
    saved = load_model(path)
    assert saved.params["space"] == "norm2=2,bound=1"
    assert "parameter space W = {k in Z^4 : |k_j| <= 1, ||k||^2 <= 2}" in saved.guarantee.notes
    assert (np.abs(saved.coef) > 0).sum() <= 2
    with pytest.raises(ModelFileError, match="parameter space W"):  # 3 nonzero: not in W
        load_model(_with(path, [1.0, 1.0, -1.0, 0.0], radius=3.0))
    with pytest.raises(ModelFileError, match="parameter space W"):  # not the W of the fit
        load_model(_with(path, [1.0, 1.0, -1.0, 0.0], space="norm2=3,bound=1"))
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


# --- every exact model: the file records the fitted W, checked against its guarantee ----------


def _saved_exact(tmp_path: Path, model: str, **params) -> Path:
    # 300 records (DF 50 times): at eps 2 OPDisc's noise rule keeps min(d, 4) (6 records: 1)
    df = pd.concat([DF] * 50, ignore_index=True)
    est = make_estimator(model, SCHEMA, 2.0, oracle="brute", random_state=0)
    est.set_params(**params).fit(SCHEMA.encode(df), SCHEMA.labels_of(df))
    return save_model(tmp_path / model, model_type=model, schema=SCHEMA, estimator=est)


@pytest.mark.parametrize(("model", "space", "saved"), [
    ("opdisc", "auto", "norm2=4,bound=2"), ("opdisc", "paper", "norm2=4,bound=2"),
    ("opdisc", "norm2=3", "norm2=3,bound=1"), ("rspm", "auto", "norm2=4,bound=1"),
    ("rspm", "norm2=2", "norm2=2,bound=1"), ("gaussian-rspm", "auto", "norm2=4,bound=1"),
    ("gaussian-rspm", "norm2=2", "norm2=2,bound=1"),
])
def test_every_exact_model_saves_the_resolved_w(tmp_path, model, space, saved):
    """``space`` as declared ("auto", "paper", ...) is resolved: the file records the W of the
    fit in the form "norm2=R,bound=B", which its guarantee names."""
    assert model in EXACT_MODELS
    path = _saved_exact(tmp_path, model, space=space)
    assert json.loads(path.read_text())["params"]["space"] == saved
    loaded = load_model(path)
    w = parameter_space(saved, 4, model="opdisc" if model == "opdisc" else "rspm")
    assert describe_space(w).split(", |W|")[0] in loaded.guarantee.notes


@pytest.mark.parametrize(("model", "space"), [
    ("opdisc", "norm2=9,bound=3"), ("opdisc", "norm2=4,bound=1"), ("opdisc", "norm2=5,bound=2"),
    ("rspm", "norm2=3,bound=1"), ("rspm", "norm2=5,bound=1"),
    ("gaussian-rspm", "norm2=3,bound=1"), ("gaussian-rspm", "norm2=5,bound=1"),
])
def test_an_edited_space_is_refused(tmp_path, model, space):
    """Another valid W (here still containing the released coefficients, or not) in
    ``params.space``: the guarantee records the W, |W| (and OPDisc's shift) of the fit."""
    path = _with(_saved_exact(tmp_path, model), space=space)
    with pytest.raises(ModelFileError, match="parameter space W"):
        load_model(path)


@pytest.mark.parametrize("model", EXACT_MODELS)
@pytest.mark.parametrize("space", ["norm2=1e400", "norm2=1e400,bound=1", "norm2=inf",
                                   "norm2=-4", "norm2=banana", "auto", "paper", "", 4.0, None])
def test_a_space_that_is_not_a_resolved_w_is_refused(tmp_path, model, space):
    path = _with(_saved_exact(tmp_path, model), space=space)
    with pytest.raises(ModelFileError, match="params 'space'"):
        load_model(path)


@pytest.mark.parametrize("model", EXACT_MODELS)
def test_a_file_without_its_space_is_refused(tmp_path, model):
    path = _with(_saved_exact(tmp_path, model), legacy=True)
    with pytest.raises(ModelFileError, match="params 'space'"):
        load_model(path)


def _with_guarantee(path: Path, **fields) -> Path:
    doc = json.loads(path.read_text())
    doc["guarantee"].update(fields)
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("model", EXACT_MODELS)
def test_a_guarantee_for_another_w_is_refused(tmp_path, model):
    """The guarantee's notes (W, |W|, D) and calibration (|W|; OPDisc's d and shift c,
    Gaussian RSPM's m) are those of the saved W: a guarantee edited alone is refused too."""
    path = _saved_exact(tmp_path, model)
    notes, cal = (json.loads(path.read_text())["guarantee"][k] for k in ("notes", "calibration"))
    assert load_model(path).guarantee.notes == notes
    edits = [("notes", "||k||^2 <= 4}", "||k||^2 <= 3}"), ("notes", "|W| = ", "|W| = 1"),
             ("notes", "D = max ||w||_2 = 2", "D = max ||w||_2 = 3"),
             ("notes", "; parameter space W", "; GUARANTEE DOES NOT HOLD: parameter space W")]
    if model != "rspm":  # Laplace RSPM records no calibration: its noise does not depend on W
        edits.append(("calibration", "|W| = ", "|W| = 1"))
    if model == "opdisc":
        edits += [("calibration", "c = 4 G D^2 / tau = 16;", "c = 4 G D^2 / tau = 36;"),
                  ("calibration", "d = 4, |W|", "d = 5, |W|")]
    if model == "gaussian-rspm":
        edits.append(("calibration", "m = 8 separator", "m = 10 separator"))
    for field, old, new in edits:
        text = notes if field == "notes" else cal
        assert old in text
        with pytest.raises(ModelFileError, match="parameter space W"):
            load_model(_with_guarantee(path, **{field: text.replace(old, new)}))
    with pytest.raises(ModelFileError, match="parameter space W"):  # two W
        load_model(_with_guarantee(path, calibration=cal, notes=f"{notes}; {notes}"))
    load_model(_with_guarantee(path, notes=notes))
