"""model.json for the private selection (model type "auto"): saved, loaded, checked."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oracledp._errors import ModelFileError
from oracledp._registry import make_estimator
from oracledp.tabular import TableSchema, load_model, save_model

SCHEMA = TableSchema.from_dict({
    "target": {"name": "y", "labels": ["no", "yes"]},
    "columns": [{"name": "x", "type": "numeric", "lower": 0, "upper": 10, "step": 1},
                {"name": "c", "type": "categorical", "levels": ["a", "b"]}]})
DF = pd.DataFrame({"x": [1, 9, 5, 3, 7, 2] * 4, "c": ["a", "b", "a", "b", "b", "a"] * 4,
                   "y": ["no", "yes", "no", "yes", "yes", "no"] * 4})


def _fit(candidates: object, seed: int = 0, delta: float | None = 1e-4) -> object:
    est = make_estimator("auto", SCHEMA, 2.0, delta, oracle="brute", random_state=seed,
                         candidates=candidates)
    return est.fit(SCHEMA.encode(DF), SCHEMA.labels_of(DF))


def test_a_pure_selection_saves_and_loads_with_its_pure_guarantee(tmp_path: Path) -> None:
    est = _fit(("rspm", "rspm@norm2=1"))  # every trial pure: the selection is pure
    save_model(tmp_path, model_type="auto", schema=SCHEMA, estimator=est)
    saved = load_model(tmp_path)
    assert str(saved.guarantee.kind) == "pure" and saved.guarantee.epsilon == 2.0
    assert saved.predictor_type == "rspm" and saved.selection["selected"] == est.selected_
    assert [t["delta"] for t in saved.selection["trials"]] == [0.0, 0.0]
    np.testing.assert_array_equal(saved.predict(DF), est.predict(SCHEMA.encode(DF)))


def test_an_opdisc_winner_is_checked_against_its_own_w(tmp_path: Path) -> None:
    est = _fit(("opdisc",))
    save_model(tmp_path, model_type="auto", schema=SCHEMA, estimator=est)
    doc = json.loads((tmp_path / "model.json").read_text())
    # a small table at the trial's epsilon: OPDisc's noise rule lowers W to ||k||^2 <= 1
    assert doc["selection"]["selected_model"]["params"]["space"] == "norm2=1,bound=1"
    doc["coef"] = [3.0, 0.0, 0.0, 0.0]  # |k_j| <= 1 in W
    (tmp_path / "model.json").write_text(json.dumps(doc))
    with pytest.raises(ModelFileError) as err:
        load_model(tmp_path)
    assert "the selected model (opdisc): opdisc coefficients must be a point of its " \
        "parameter space W" in str(err.value)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["guarantee"].update(kind="pure", delta=0.0),
     "does not match the selection's trials"),
    (lambda d: d["selection"]["trials"].append(dict(d["selection"]["trials"][0])),
     "must not repeat a candidate"),
    (lambda d: d["selection"]["trials"][1].update(delta=0.0), "'delta' must be in"),
    (lambda d: d["selection"]["trials"][0].update(noisy_score="12"), "must be a number"),
    (lambda d: d["selection"]["selected_model"].update(model="opdisc"),
     "must be the selected candidate's model"),
    (lambda d: d["selection"]["selected_model"]["guarantee"].update(epsilon=2.0),
     "own guarantee must be its trial's fit budget"),
    (lambda d: d.update(model="dpsgd"), "unknown ['selection']"),
])
def test_a_selection_that_its_trials_do_not_imply_is_refused(tmp_path: Path, edit,
                                                             message) -> None:
    est = _fit(("gaussian-rspm", "dpsgd"))
    save_model(tmp_path, model_type="auto", schema=SCHEMA, estimator=est)
    doc = json.loads((tmp_path / "model.json").read_text())
    edit(doc)
    (tmp_path / "model.json").write_text(json.dumps(doc))
    with pytest.raises(ModelFileError, match="invalid model file") as err:
        load_model(tmp_path)
    assert message in str(err.value)
