"""Every model of ``make_estimator`` refuses, at fit and before any noise, an X whose number
of columns is not the schema's number of encoded features; the message names that number."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from oracledp._registry import EXACT_MODELS, MODELS, make_estimator, model_schema
from oracledp.baselines import DPSGDLogisticRegression
from oracledp.estimators import AccuracyFirstLogisticRegression, OPSampClassifier
from oracledp.tabular import Column, TableSchema

SCHEMA = TableSchema(columns=(Column("x", "numeric", lower=0, upper=4, step=1),
                              Column("c", "categorical", levels=("a", "b"))),
                     target="y", labels=("no", "yes"))  # 4 features: x, c=a, c=b, intercept
DF = pd.DataFrame({"x": ["0", "1", "3", "4"] * 5, "c": ["a", "a", "b", "b"] * 5,
                   "y": ["no", "no", "yes", "yes"] * 5})


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("width", [3, 5])
def test_a_width_other_than_the_schemas_is_refused(model, width):
    schema = model_schema(model, SCHEMA)
    X = schema.encode(DF)
    X = X[:, :width] if width < X.shape[1] else np.hstack([X, np.zeros((len(X), 1))])
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    exact = model in EXACT_MODELS
    est = make_estimator(model, schema, None if model == "accuracy-first" else 1.0,
                         random_state=rng, **({"oracle": "brute"} if exact else {}))
    with pytest.raises(ValueError, match=f"declares 4 columns but X has {width}"):
        est.fit(X, schema.labels_of(DF))
    assert not hasattr(est, "coef_")
    assert rng.bit_generator.state == state  # refused before any noise


@pytest.mark.parametrize("cls, args", [(OPSampClassifier, ()), (DPSGDLogisticRegression, ()),
                                       (AccuracyFirstLogisticRegression, (0.1,))])
def test_n_features_is_checked_with_the_parameters(cls, args):
    X, y = np.zeros((4, 2)), np.array([0, 1, 0, 1])
    for bad in (0, -1, 2.5, True, "2"):
        with pytest.raises(ValueError, match="n_features must be None or an integer"):
            cls(*args, n_features=bad).fit(X, y)
