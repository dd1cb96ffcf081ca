"""The saved-model format (model.json): versioned, strictly validated, refused when tampered.

A file written by :func:`save_model` loads back exactly; anything else (NaN or string
coefficients, a wrong length, an unknown model type, a guarantee whose fields do not have
their exact types or values, a missing or other format version, unknown or missing fields,
a key listed twice...) raises ONE :class:`ModelFileError` (a ValueError), and
``oracledp predict`` / ``oracledp evaluate`` exit 2 with one message and no traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from oracledp._cli import app
from oracledp._errors import OracleDPError
from oracledp.estimators._space_spec import describe_space, parameter_space, with_space_note
from oracledp.learners._opdisc import opdisc_guarantee
from oracledp.learners._opdisc_calibration import calibrate
from oracledp.learners._rspm import rspm_guarantee
from oracledp.privacy._guarantees import GuaranteeKind, PrivacyGuarantee
from oracledp.tabular import (
    MODEL_FORMAT_VERSION,
    Column,
    ModelFileError,
    TableInputError,
    TableSchema,
    load_model,
    save_model,
)

ENV = {"COLUMNS": "200"}
SCHEMA = TableSchema(columns=(Column("x", "numeric", lower=0, upper=10, step=1),
                              Column("c", "categorical", levels=("a", "b"))),
                     target="y", labels=("no", "yes"), intercept=False)


def _exact_guarantee(model: str, d: int) -> PrivacyGuarantee:
    """What OPDisc (eps 1, delta 1e-6) or RSPM (eps 1) records for its "auto" W in d
    dimensions: the calibration and the note that names W, |W| and D (checked on load)."""
    space = parameter_space("auto", d, model=model)
    g = (opdisc_guarantee(calibrate(1.0, 1e-6, space, 1.0 / space.tau)) if model == "opdisc"
         else rspm_guarantee(1.0))
    return with_space_note(g, describe_space(space, "space='auto'"))


GUARANTEES = {
    "opdisc": _exact_guarantee("opdisc", SCHEMA.n_features),
    "rspm": _exact_guarantee("rspm", SCHEMA.n_features),
    "opsamp": PrivacyGuarantee(1.0, 1e-6, GuaranteeKind.APPROXIMATE, False, "test"),
    "dpsgd": PrivacyGuarantee(1.0, 1e-6, GuaranteeKind.APPROXIMATE, False, "test"),
    "accuracy-first": PrivacyGuarantee(3.5, 0.0, GuaranteeKind.EX_POST, False, "test"),
}


class _Fitted:
    """Stands in for a fitted estimator (what save_model reads)."""

    def __init__(self, model: str = "opdisc", coef: Any = (1.0, -1.0, 0.0),
                 intercept: float = 0.0) -> None:
        self.coef_ = np.asarray(coef, dtype=np.float64).reshape(1, -1)
        self.intercept_ = intercept
        self.classes_ = np.array(["no", "yes"])
        self.guarantee_ = GUARANTEES[model]
        if model in ("opdisc", "rspm"):  # an exact model: the W of the fit, and its guarantee
            self.space_ = parameter_space("auto", self.coef_.size, model=model)
            self.guarantee_ = _exact_guarantee(model, self.coef_.size)

        self.model = model

    def get_params(self, deep: bool = False) -> dict[str, Any]:
        from oracledp._registry import estimator_class

        takes = estimator_class(self.model)._get_param_names()  # the names its estimator takes
        return {k: v for k, v in {"epsilon": 1.0, "delta": None, "oracle": "highs",
                                  "random_state": 3}.items() if k in takes}


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    save_model(tmp_path / "m", model_type="opdisc", schema=SCHEMA, estimator=_Fitted())
    (tmp_path / "data.csv").write_text("x,c,y\n1,a,yes\n9,b,yes\n5,a,no\n")
    return tmp_path / "m"


def _doc(model_dir: Path) -> dict[str, Any]:
    return json.loads((model_dir / "model.json").read_text())


def _pristine() -> dict[str, Any]:
    """The document save_model writes for the fixture's model (a fresh copy)."""
    return json.loads(json.dumps(_PRISTINE))


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    keys = path.split(".")

    def edit(d: dict[str, Any]) -> None:
        for k in keys[:-1]:
            d = d[k]
        d[keys[-1]] = value
    return edit


def _drop(path: str) -> Callable[[dict[str, Any]], None]:
    keys = path.split(".")

    def edit(d: dict[str, Any]) -> None:
        for k in keys[:-1]:
            d = d[k]
        del d[keys[-1]]
    return edit


NAN = float("nan")
_PRISTINE: dict[str, Any] = json.loads(json.dumps({
    "format": "oracledp.model", "format_version": MODEL_FORMAT_VERSION, "model": "opdisc",
    "schema": SCHEMA.to_dict(),
    "params": {"epsilon": 1.0, "delta": None, "oracle": "highs", "space": "norm2=3,bound=1"},
    "guarantee": GUARANTEES["opdisc"].to_dict(), "classes": ["no", "yes"],
    "feature_names": SCHEMA.feature_names, "coef": [1.0, -1.0, 0.0], "intercept": 0.0,
}))
TAMPERED: dict[str, Callable[[dict[str, Any]], None]] = {
    "NaN coefficients": _set("coef", [NAN, NAN, NAN]),
    "infinite coefficient": _set("coef", [1.0, float("inf"), 0.0]),
    "string coefficient": _set("coef", ["1", -1.0, 0.0]),
    "boolean coefficient": _set("coef", [True, -1.0, 0.0]),
    "null coefficient": _set("coef", [None, -1.0, 0.0]),
    "nested coefficients": _set("coef", [[1.0], [-1.0], [0.0]]),
    "too few coefficients": _set("coef", [1.0, -1.0]),
    "too many coefficients": _set("coef", [1.0, -1.0, 0.0, 2.0]),
    "coefficients not a list": _set("coef", {"x": 1.0}),
    "NaN intercept": _set("intercept", NAN),
    "string intercept": _set("intercept", "0"),
    "intercept of a model without one": _set("intercept", 0.5),
    "no intercept": _drop("intercept"),
    "unknown model type": _set("model", "not-a-model"),
    "model type not a string": _set("model", 1),
    "negative epsilon": _set("guarantee.epsilon", -5),
    "zero epsilon": _set("guarantee.epsilon", 0),
    "NaN epsilon": _set("guarantee.epsilon", NAN),
    "string epsilon": _set("guarantee.epsilon", "1"),
    "boolean epsilon": _set("guarantee.epsilon", True),
    "holds 'maybe'": _set("guarantee.holds", "maybe"),
    "holds 1": _set("guarantee.holds", 1),
    "delta 1.5": _set("guarantee.delta", 1.5),
    "negative delta": _set("guarantee.delta", -1e-6),
    "pure with delta": _set("guarantee.kind", "pure"),
    "unknown kind": _set("guarantee.kind", "bogus"),
    "exact-oracle flag not a bool": _set("guarantee.requires_exact_oracle", "yes"),
    "exact-oracle flag wrong for the model": _set("guarantee.requires_exact_oracle", False),
    "empty source": _set("guarantee.source", ""),
    "guarantee field missing": _drop("guarantee.holds"),
    "guarantee field unknown": _set("guarantee.trust_me", True),
    "guarantee not an object": _set("guarantee", "(1, 1e-6)-DP"),
    "classes reversed": _set("classes", ["yes", "no"]),
    "classes not the schema's": _set("classes", ["no", "maybe"]),
    "three classes": _set("classes", ["no", "yes", "maybe"]),
    "integer classes": _set("classes", [0, 1]),
    "feature names changed": _set("feature_names", ["x", "c=a", "c=z"]),
    "format version absent": _drop("format_version"),
    "format version 3": _set("format_version", 3),
    "format version 1": _set("format_version", 1),
    "format version 0": _set("format_version", 0),
    "format version string": _set("format_version", "1"),
    "format version float": _set("format_version", 1.0),
    "format version bool": _set("format_version", True),
    "other format": _set("format", "oracledp.table_schema"),
    "unknown top-level field": _set("training_rows", []),
    "field missing": _drop("feature_names"),
    "schema invalid": _set("schema.columns", []),
    "schema not confirmed": _set("schema.target.from_data", True),
    "params not an object": _set("params", [1.0]),
    "params with a nested value": _set("params", {"epsilon": {"value": 1.0}}),
    "params with NaN": _set("params", {"epsilon": NAN}),
    "params with a field the model does not take": _set("params.foo", 1),
    "space missing": _drop("params.space"),
    "space not resolved": _set("params.space", "auto"),
    "space not finite": _set("params.space", "norm2=1e400"),
    "space of another W": _set("params.space", "norm2=4,bound=2"),
    "guarantee without W": _set("guarantee.notes", "certified"),
    # found in review: the guarantee must say what the fit's parameters imply
    "guarantee epsilon below the fit's": _set("guarantee.epsilon", 0.01),
    "params epsilon not the guarantee's": _set("params.epsilon", 0.01),
    "add-remove neighbours": _set("guarantee.neighbouring", "add-remove"),
    "paper calibration with a holding guarantee": _set("params.calibration", "paper"),
}


def _write(model_dir: Path, doc: Any) -> None:
    (model_dir / "model.json").write_text(json.dumps(doc))  # json writes NaN as NaN


def _cli_exit_2(model_dir: Path, data: Path) -> None:
    for cmd in ("predict", "evaluate"):
        res = CliRunner().invoke(app, [cmd, str(model_dir), str(data)], env=ENV)
        assert res.exit_code == 2, f"{cmd}: {res.output}"
        assert isinstance(res.exception, SystemExit)  # no traceback
        assert res.stdout == ""  # no prediction, no accuracy, no guarantee line
        assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
        assert "model" in res.stderr


def test_the_fixture_is_what_save_model_writes(model_dir):
    assert _doc(model_dir) == _pristine()


@pytest.mark.parametrize("case", list(TAMPERED))
def test_tampered_model_is_refused(model_dir, case):
    doc = _doc(model_dir)
    TAMPERED[case](doc)
    _write(model_dir, doc)
    with pytest.raises(ModelFileError) as info:
        load_model(model_dir)
    assert isinstance(info.value, ValueError) and isinstance(info.value, OracleDPError)
    assert isinstance(info.value, TableInputError)  # what callers caught before
    assert "\n" not in str(info.value) and str(model_dir / "model.json") in str(info.value)
    _cli_exit_2(model_dir, model_dir.parent / "data.csv")


def test_the_audit_repro_is_refused(model_dir):
    """tampered_model.py: NaN coef and intercept, 'not-a-model', epsilon -5, holds 'maybe'."""
    doc = _doc(model_dir)
    doc["coef"] = [NAN] * 3
    doc["intercept"] = NAN
    doc["model"] = "not-a-model"
    doc["guarantee"]["epsilon"] = -5
    doc["guarantee"]["holds"] = "maybe"
    _write(model_dir, doc)
    with pytest.raises(ModelFileError, match="NaN"):
        load_model(model_dir / "model.json")
    _cli_exit_2(model_dir, model_dir.parent / "data.csv")
    for edit, match in ((_set("model", "not-a-model"), "unknown model type"),
                        (_set("guarantee.epsilon", -5), "epsilon"),
                        (_set("guarantee.holds", "maybe"), "holds")):  # each defect alone
        doc = _pristine()
        edit(doc)
        _write(model_dir, doc)
        with pytest.raises(ModelFileError, match=match):
            load_model(model_dir)


@pytest.mark.parametrize("text, match", [
    ("", "not a valid JSON"), ("[1, 2]", "not an oracledp model"), ("{", "not a valid JSON"),
    ("{\"format\": \"oracledp.model\", \"format\": \"oracledp.model\"}", "twice"),
    ("null", "not an oracledp model"), ("[" * 100000, "not a valid JSON"),
])
def test_broken_files_are_refused(model_dir, text, match):
    (model_dir / "model.json").write_text(text)
    with pytest.raises(ModelFileError, match=match):
        load_model(model_dir)
    (model_dir / "model.json").write_bytes(b"\xff\xfe not utf-8")
    with pytest.raises(ModelFileError, match="UTF-8"):
        load_model(model_dir)


def test_version_messages_tell_to_fit_again(model_dir):
    for edit in (_drop("format_version"), _set("format_version", 3)):
        doc = _pristine()
        edit(doc)
        _write(model_dir, doc)
        with pytest.raises(ModelFileError, match=r"version.*Fit the model again"):
            load_model(model_dir)


@pytest.mark.parametrize("model", list(GUARANTEES))
def test_current_files_round_trip(tmp_path, model):
    est = _Fitted(model, coef=(1.0, -1.0, 0.0),
                  intercept=-0.25 if model == "dpsgd" else 0.0)
    path = save_model(tmp_path, model_type=model, schema=SCHEMA, estimator=est)
    doc = json.loads(path.read_text())
    assert doc["format_version"] == MODEL_FORMAT_VERSION == 2
    assert "random_state" not in doc["params"]
    saved = load_model(path)
    assert saved.model_type == model and saved.schema == SCHEMA
    assert saved.guarantee == est.guarantee_ and isinstance(saved.guarantee, PrivacyGuarantee)
    np.testing.assert_array_equal(saved.coef, est.coef_.ravel())
    assert saved.intercept == est.intercept_ and saved.classes == ("no", "yes")
    assert saved.feature_names == tuple(SCHEMA.feature_names)


def test_save_model_never_writes_a_file_load_model_refuses(tmp_path):
    bad = {
        "NaN coefficient": _Fitted(coef=(1.0, NAN, 0.0)),
        "wrong length": _Fitted(coef=(1.0, 0.0)),
        "rspm weight outside {-1, 0, 1}": _Fitted("rspm", coef=(0.5, 0.0, 1.0)),
        "intercept for opdisc": _Fitted(intercept=1.0),
    }
    for case, est in bad.items():
        model = "rspm" if case.startswith("rspm") else "opdisc"
        with pytest.raises(ValueError):
            save_model(tmp_path / "m", model_type=model, schema=SCHEMA, estimator=est)
        assert not (tmp_path / "m" / "model.json").exists(), case
    approximate = _Fitted()  # opdisc's approximate guarantee, rspm's parameter names
    approximate.model = "rspm"
    with pytest.raises(ValueError, match="guarantee does not match"):  # rspm is pure
        save_model(tmp_path / "m", model_type="rspm", schema=SCHEMA, estimator=approximate)
    with pytest.raises(ValueError, match="does not take"):  # opdisc's delta: not rspm's
        save_model(tmp_path / "m", model_type="rspm", schema=SCHEMA, estimator=_Fitted())
    save_model(tmp_path / "m", model_type="opdisc", schema=SCHEMA, estimator=_Fitted())
    with pytest.raises(FileExistsError):
        save_model(tmp_path / "m", model_type="opdisc", schema=SCHEMA, estimator=_Fitted(),
                   overwrite=False)


def test_cli_predict_and_evaluate_accept_a_valid_file(model_dir):
    data = model_dir.parent / "data.csv"
    res = CliRunner().invoke(app, ["predict", str(model_dir), str(data)], env=ENV)
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == ["prediction", "no", "yes", "no"]  # x - c=a > 0
    res = CliRunner().invoke(app, ["evaluate", str(model_dir), str(data)], env=ENV)
    assert res.exit_code == 0, res.output
    assert "(1, 1e-06)-DP" in res.stdout


def test_intercept_feature_round_trips(tmp_path):
    """A schema with the intercept feature (the default): one more coefficient, named
    "(intercept)", whose weight acts as the intercept of a halfspace through the origin."""
    schema = TableSchema(columns=SCHEMA.columns, target="y", labels=("no", "yes"))
    assert schema.intercept and schema.feature_names[-1] == "(intercept)"
    path = save_model(tmp_path, model_type="opdisc", schema=schema,
                      estimator=_Fitted(coef=(1.0, 0.0, 0.0, -1.0)))  # a point of W
    doc = json.loads(path.read_text())
    assert doc["schema"]["intercept"] is True and len(doc["coef"]) == 4
    saved = load_model(path)
    import pandas as pd

    df = pd.DataFrame({"x": ["2", "5"], "c": ["a", "b"]})
    # x/10 - 1 > 0 never holds on [0, 10] with weight 1: both predicted "no"
    np.testing.assert_allclose(saved.decision_function(df), [0.2 - 1.0, 0.5 - 1.0])
    with pytest.raises(ValueError):
        save_model(tmp_path / "bad", model_type="opdisc", schema=schema,
                   estimator=_Fitted(coef=(1.0, 0.0, 0.0)))
