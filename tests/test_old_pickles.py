"""Models pickled by the code before issue 19's module moves still load and predict the same.

``tests/data/old_pickles.json`` holds the pickles of two fitted estimators made at c529a90,
whose result objects name modules that have since become private
(``oracledp.learners.opdisc``, ``oracledp.erm.covnr``...).
"""

from __future__ import annotations

import base64
import json
import pickle
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest

DATA = json.loads((Path(__file__).parent / "data" / "old_pickles.json").read_text())
X = {"opdisc": np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]),
     "ridge": np.array([[0.5, 0.25], [0.25, 0.5], [0.5, 0.5], [-0.5, -0.25], [-0.25, -0.5]])}


@pytest.mark.parametrize("name", sorted(DATA["cases"]))
def test_old_pickle_loads_and_predicts_the_same(name: str) -> None:
    case = DATA["cases"][name]
    with warnings.catch_warnings():  # they name oracledp.guarantees, now a deprecated path
        warnings.simplefilter("ignore", FutureWarning)
        est = pickle.loads(zlib.decompress(base64.b64decode(case["pickle_zlib_b64"])))
    assert np.array_equal(est.coef_, np.array(case["coef"]))
    assert np.array_equal(est.predict(X[name]), np.array(case["predict"]))
    assert est.guarantee_.holds
