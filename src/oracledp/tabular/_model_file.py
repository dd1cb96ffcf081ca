"""Saved models: :func:`save_model` writes ``model.json``, :func:`load_model` reads it.

The format, its versions (:data:`MODEL_FORMAT_VERSION`) and
the strict validation of every field (:class:`SavedModel` on success,
:class:`ModelFileError` otherwise) are described in the :mod:`oracledp.tabular` docstring.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp import _jsonfile
from oracledp._errors import ModelFileError
from oracledp.tabular._schema import TableSchema

# --- saved models --------------------------------------------------------------------------

MODEL_FORMAT = "oracledp.model"
MODEL_TYPES = ("opdisc", "rspm", "opsamp", "dpsgd", "accuracy-first", "gaussian-rspm", "auto")

MODEL_FORMAT_VERSION = 2
"""The ``format_version`` that :func:`save_model` writes and :func:`load_model` reads; a file
without a version, or with another one, is refused with a message to fit the model again."""

_MODEL_KEYS = frozenset({"format", "format_version", "model", "schema", "params", "guarantee",
                         "classes", "feature_names", "coef", "intercept"})
#: Present exactly when the model is ``"auto"``: the private selection's public record
#: (:func:`_selection_entry`, checked by :func:`_parse_selection`).
_SELECTION_KEY = "selection"
#: Present exactly when the schema's ``records_per_person`` is above 1: the guarantee for a
#: person's records (group privacy of ``guarantee``), beside the per-record one.
_PER_PERSON_KEY = "guarantee_per_person"

#: What each model type releases: (guarantee kind, proof assumes an exact oracle,
#: may have a non-zero intercept).  A file that disagrees was not written by that model.
_MODEL_RULES: dict[str, tuple[str, bool, bool]] = {
    "opdisc": ("approximate", True, False),
    "rspm": ("pure", True, False),
    "opsamp": ("approximate", False, False),
    "dpsgd": ("approximate", False, True),
    "accuracy-first": ("ex-post", False, False),
    "gaussian-rspm": ("approximate", True, False),
}

#: The model types whose coefficients are a logistic model (fitted with the logistic loss):
#: ``sigmoid(score)`` is their probability of ``classes[1]``.  The others are 0/1-loss
#: halfspaces, whose scores have no probability model.
LOGISTIC_MODELS = ("opsamp", "dpsgd", "accuracy-first")

def _jsonable(v: Any) -> bool:
    return v is None or isinstance(v, (bool, int, str)) or (
        isinstance(v, float) and math.isfinite(v))


def _real(v: Any, what: str) -> float:
    """A finite JSON number (int or float, never a bool or a string)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{what} must be a number, got {type(v).__name__}")
    if not math.isfinite(v):
        raise ValueError(f"{what} must be finite")
    return float(v)


def _parse_guarantee(g: Any, what: str = "'guarantee'") -> Any:
    """The saved guarantee as a PrivacyGuarantee; every field present with its exact type."""
    from oracledp.privacy._guarantees import PrivacyGuarantee

    return PrivacyGuarantee.from_dict(g, what)


def _check_params(params: Any) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise ValueError("'params' must be a JSON object")
    for k, v in params.items():
        if not _jsonable(v):
            raise ValueError(f"params {k!r}: must be null, true/false, a finite number or a "
                             "string")
    return dict(params)


def _check_param_names(model_type: str, params: dict[str, Any], what: str = "params") -> None:
    """Refuse a saved parameter that ``model_type``'s estimator does not take (a hand edit or
    another program's file: it would be shown as the fit's, and never was)."""
    from oracledp._registry import estimator_class

    known = set(estimator_class(model_type)._get_param_names())
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(f"{what} has fields that model {model_type!r} does not take: "
                         f"{unknown}")


#: The parameter-space rule of each exact model (:mod:`oracledp.estimators._space_spec`):
#: Gaussian RSPM declares W as RSPM does.
_SPACE_RULE = {"opdisc": "opdisc", "rspm": "rspm", "gaussian-rspm": "rspm"}


def _calibration_records(model_type: str, space: Any) -> list[str]:
    """What the guarantee's ``calibration`` says about W (the text of ``describe()`` of
    :class:`~oracledp.learners._opdisc_calibration.OPDiscCalibration` and
    :class:`~oracledp.learners._gaussian_rspm_calibration.GaussianRSPMCalibration`): |W|,
    OPDisc's d and shift c = 4 G D^2 / tau (G = 1/tau), Gaussian RSPM's m = 2d.  Laplace RSPM
    records no calibration (its noise does not depend on W)."""
    from oracledp.learners._opdisc_calibration import space_size_bound

    if model_type == "rspm":
        return []
    size, how = space_size_bound(space)
    card = f", |W| {'=' if how == 'exact' else '<='} {size:.4g})"
    if model_type == "opdisc":
        c = 4.0 * (1.0 / space.tau) * float(space.max_norm) ** 2 / space.tau
        return [f", c = 4 G D^2 / tau = {c:.6g};", f", d = {space.d}{card}"]
    return [f" with m = {2 * space.d} separator weights,", card]


def _check_exact_model(coef: NDArray[np.float64], params: dict[str, Any], guarantee: Any,
                       model_type: str) -> None:
    """An exact model (OPDisc, RSPM, Gaussian RSPM) releases a point of its public parameter
    space ``W = {tau k : k integer, |k_j| <= K, ||k||^2 <= R}`` (``IntegerBall``, d = the
    schema's encoded features).  The file records the W of the fit in params ``space``,
    resolved (``"norm2=R,bound=B"``, :func:`~oracledp.estimators._space_spec.space_spec`;
    never ``"auto"``), with OPDisc's ``tau``; its guarantee records that W (notes: W, |W| and
    D; calibration: |W| and what depends on W); the coefficients are a point of it.
    Anything else was not written by that model for that W: ValueError."""
    from oracledp.estimators._space_spec import parameter_space, records_space, space_spec

    rule = _SPACE_RULE[model_type]
    spec = params.get("space")
    if not isinstance(spec, str):
        raise ValueError(f"{model_type} params 'space' must record the parameter space W the "
                         "model was fitted on, as \"norm2=R,bound=B\"")
    try:
        space = parameter_space(spec, len(coef), model=rule, tau=params.get("tau", 1.0))
    except (TypeError, ValueError) as exc:
        tau = " (with 'tau')" if model_type == "opdisc" else ""
        raise ValueError(f"{model_type} params 'space'{tau} do not describe a parameter "
                         f"space: {exc}") from None
    if space_spec(space) != spec:
        raise ValueError(f"{model_type} params 'space' must be the parameter space W the model "
                         f"was fitted on, resolved (\"norm2=R,bound=B\"; {spec!r} is W = "
                         f"{space_spec(space)!r})")
    if not records_space(guarantee.notes, space):
        raise ValueError(f"the guarantee does not record the saved parameter space W "
                         f"({spec!r}): its notes must name exactly that W, its |W| and D")
    if not all(part in guarantee.calibration for part in
               _calibration_records(model_type, space)):
        what = {"opdisc": "|W|, d and the shift c", "gaussian-rspm": "|W| and m = 2d"}
        raise ValueError(f"the guarantee's calibration is not that of the saved parameter "
                         f"space W ({spec!r}): its {what[model_type]} must be those of W")
    k = np.rint(coef / space.tau)
    on_grid = bool((k * space.tau == coef).all())  # w = tau * k exactly, as OPDisc releases
    in_box = on_grid and bool((np.abs(k) <= space.k_max).all())  # before any int64 cast
    if not (in_box and space.contains_k(k.astype(np.int64))[0]):
        raise ValueError(
            f"{model_type} coefficients must be a point of its parameter space W (multiples of "
            f"tau {space.tau:g}, each at most {space.k_max * space.tau:g} in absolute value, "
            f"squared l2 norm at most {space.k_norm2_max * space.tau ** 2:g}; from the saved "
            f"params 'space' and the schema's {len(coef)} features)")


def _model_from_doc(doc: Any) -> SavedModel:
    """Validate a parsed model.json (format version :data:`MODEL_FORMAT_VERSION`) strictly."""
    if not isinstance(doc, dict) or doc.get("format") != MODEL_FORMAT:
        raise ValueError("not an oracledp model file (no \"format\": \"oracledp.model\")")
    version = doc.get("format_version")
    if "format_version" not in doc:
        raise ValueError("the file has no \"format_version\" (every model oracledp writes has "
                         f"one; this oracledp reads version {MODEL_FORMAT_VERSION})")
    if type(version) is not int or version != MODEL_FORMAT_VERSION:
        raise ValueError(f"unsupported model format version {version!r} (this oracledp reads "
                         f"version {MODEL_FORMAT_VERSION})")
    model_type = doc.get("model")
    if not isinstance(model_type, str) or model_type not in MODEL_TYPES:
        raise ValueError(f"unknown model type; expected one of {', '.join(MODEL_TYPES)}")
    keys = _MODEL_KEYS | ({_SELECTION_KEY} if model_type == "auto" else set())
    missing = sorted(keys - set(doc))
    extra = sorted(set(doc) - keys - {_PER_PERSON_KEY})
    if missing or extra:
        raise ValueError(f"the model must have exactly the fields {sorted(keys)} "
                         f"(missing {missing}, unknown {extra})")
    schema = TableSchema.from_dict(doc["schema"])
    if schema.unresolved():
        raise ValueError("the saved schema has unresolved columns (a fit refuses them)")
    if schema.unconfirmed():
        raise ValueError("the saved schema still has entries marked \"from_data\" (a fit "
                         "refuses such a schema)")
    names = doc["feature_names"]
    if not isinstance(names, list) or names != schema.feature_names:
        raise ValueError("'feature_names' must be the encoded features of the saved schema")
    coef_raw = doc["coef"]
    if not isinstance(coef_raw, list) or len(coef_raw) != schema.n_features:
        raise ValueError(f"'coef' must be a list of {schema.n_features} numbers (one per "
                         "encoded feature of the saved schema)")
    coef = np.array([_real(c, "every coefficient") for c in coef_raw], dtype=np.float64)
    intercept = _real(doc["intercept"], "'intercept'")
    params = _check_params(doc["params"])
    _check_param_names(model_type, params)
    classes = doc["classes"]
    if (not isinstance(classes, list) or len(classes) != 2
            or not all(isinstance(c, str) for c in classes)
            or classes != sorted(schema.labels)):
        raise ValueError("'classes' must be the saved schema's two labels, sorted "
                         f"({sorted(schema.labels)})")
    guarantee = _parse_guarantee(doc["guarantee"])
    selection = None
    if model_type == "auto":  # the selection's record; the selected model is checked there
        selection = _parse_selection(doc[_SELECTION_KEY], guarantee, params, coef, intercept)
    else:
        _check_released(model_type, guarantee, params, coef, intercept)
    per_person = _parse_per_person(doc, guarantee, schema.records_per_person)
    return SavedModel(model_type=model_type, schema=schema, params=params,
                      guarantee=guarantee, classes=(classes[0], classes[1]),
                      feature_names=tuple(names), coef=coef, intercept=intercept,
                      guarantee_per_person=per_person, selection=selection)


def _check_released(model_type: str, guarantee: Any, params: dict[str, Any],
                    coef: NDArray[np.float64], intercept: float) -> None:
    """What one model (not ``"auto"``) releases: its intercept, its coefficients (for the
    exact models a point of the saved W), a guarantee of its kind that says what its public
    parameters imply.  ValueError otherwise."""
    kind, exact, has_intercept = _MODEL_RULES[model_type]
    if intercept != 0.0 and not has_intercept:
        raise ValueError(f"'intercept' must be 0 for model {model_type!r} (it has none)")
    if model_type in ("rspm", "gaussian-rspm") and not np.isin(coef, (-1.0, 0.0, 1.0)).all():
        raise ValueError(f"{model_type} coefficients must be -1, 0 or 1")
    if str(guarantee.kind) != kind or guarantee.requires_exact_oracle is not exact:
        raise ValueError(f"the guarantee does not match model {model_type!r} (expected kind "
                         f"{kind!r}, requires_exact_oracle {str(exact).lower()})")
    if exact:  # OPDisc, RSPM, Gaussian RSPM: the W of the fit
        _check_exact_model(coef, params, guarantee, model_type)
    _check_guarantee_against_params(guarantee, params, model_type)


# --- "auto": the private selection (docs/proofs/model-selection.md) ----------------------

_SELECTION_FIELDS = frozenset({"selected", "trials", "selected_model"})
_TRIAL_FIELDS = frozenset({"candidate", "epsilon_fit", "epsilon_score", "delta", "noisy_score"})
_SELECTED_FIELDS = frozenset({"model", "params", "guarantee"})


def _fields(obj: Any, fields: frozenset[str], what: str) -> dict[str, Any]:
    if not isinstance(obj, dict) or set(obj) != fields:
        got = sorted(obj) if isinstance(obj, dict) else type(obj).__name__
        raise ValueError(f"{what} must be a JSON object with exactly the fields "
                         f"{sorted(fields)} (got {got})")
    return obj


def _parse_trial(trial: Any, i: int) -> dict[str, Any]:
    """One trial of the public plan: its candidate, its budget and its noisy score."""
    from oracledp.estimators._auto import parse_candidate

    t = _fields(trial, _TRIAL_FIELDS, f"selection trial {i + 1}")
    try:
        model, _ = parse_candidate(t["candidate"])
    except ValueError as exc:
        raise ValueError(f"selection trial {i + 1}: {exc}") from None
    for key in ("epsilon_fit", "epsilon_score"):
        if not _real(t[key], f"selection trial {i + 1} {key!r}") > 0:
            raise ValueError(f"selection trial {i + 1} {key!r} must be > 0")
    delta = _real(t["delta"], f"selection trial {i + 1} 'delta'")
    if (delta != 0) if model == "rspm" else not 0 < delta < 1:
        raise ValueError(f"selection trial {i + 1} 'delta' must be "
                         + ("0 (rspm is pure)" if model == "rspm" else "in (0, 1)"))
    _real(t["noisy_score"], f"selection trial {i + 1} 'noisy_score'")
    return {**t, "model": model}


def _parse_selection(doc: Any, guarantee: Any, params: dict[str, Any],
                     coef: NDArray[np.float64], intercept: float) -> dict[str, Any]:
    """The ``"selection"`` of an ``"auto"`` model, checked against the file.

    The trials (candidates, budgets, noisy scores: the proof's release), whose budgets sum to
    the saved guarantee (the selection's full cost: no more, no less); the selected candidate,
    one of them; the selected model (its type, parameters and own one-trial guarantee),
    checked as a model of that type with the saved coefficients and intercept (for an exact
    model: a point of its saved W); the saved guarantee of the kind the trials imply (pure
    only if every trial is rspm; an exact oracle assumed if any trial is exact)."""
    sel = _fields(doc, _SELECTION_FIELDS, "'selection'")
    raw = sel["trials"]
    if not isinstance(raw, list) or not raw:
        raise ValueError("'selection' 'trials' must be a non-empty list (one per candidate)")
    trials = [_parse_trial(t, i) for i, t in enumerate(raw)]
    names = [t["candidate"] for t in trials]
    if len(set(names)) != len(names):
        raise ValueError("'selection' 'trials' must not repeat a candidate")
    if sel["selected"] not in names:
        raise ValueError("'selection' 'selected' must be the candidate of one of its trials")
    pure = all(t["model"] == "rspm" for t in trials)
    exact = any(t["model"] != "dpsgd" for t in trials)
    want = "pure" if pure else "approximate"
    if str(guarantee.kind) != want or guarantee.requires_exact_oracle is not exact:
        raise ValueError(f"the guarantee does not match the selection's trials (expected kind "
                         f"{want!r}, requires_exact_oracle {str(exact).lower()})")
    spent_eps = math.fsum(t["epsilon_fit"] + t["epsilon_score"] for t in trials)
    spent_delta = math.fsum(t["delta"] for t in trials)
    if not (spent_eps <= guarantee.epsilon and math.isclose(spent_eps, guarantee.epsilon,
                                                            rel_tol=1e-9)):
        raise ValueError("the guarantee's epsilon must be the sum of the trials' fit and "
                         "score epsilons (the selection's full cost)")
    if not (spent_delta <= guarantee.delta and math.isclose(spent_delta, guarantee.delta,
                                                            rel_tol=1e-9, abs_tol=0.0)):
        raise ValueError("the guarantee's delta must be the sum of the trials' deltas (the "
                         "selection's full cost)")
    # the total is the fit's epsilon and delta (a pure selection, rspm only, has no delta)
    _check_guarantee_against_params(
        guarantee, {k: v for k, v in params.items() if not (pure and k == "delta")}, "auto")
    (trial,) = [t for t in trials if t["candidate"] == sel["selected"]]
    chosen = _fields(sel["selected_model"], _SELECTED_FIELDS, "'selection' 'selected_model'")
    if chosen["model"] != trial["model"]:
        raise ValueError("'selection' 'selected_model' 'model' must be the selected "
                         "candidate's model")
    own = _parse_guarantee(chosen["guarantee"], "'selection' 'selected_model' 'guarantee'")
    if not (math.isclose(own.epsilon, trial["epsilon_fit"], rel_tol=1e-12)
            and math.isclose(own.delta, trial["delta"], rel_tol=1e-12, abs_tol=0.0)):
        raise ValueError("the selected model's own guarantee must be its trial's fit budget")
    own_params = _check_params(chosen["params"])
    _check_param_names(trial["model"], own_params, "'selection' 'selected_model' 'params'")
    try:
        _check_released(trial["model"], own, own_params, coef, intercept)
    except ValueError as exc:
        raise ValueError(f"the selected model ({trial['model']}): {exc}") from None
    return {"selected": sel["selected"], "selected_model": trial["model"],
            "trials": tuple({k: t[k] for k in ("candidate", "model", "epsilon_fit",
                                               "epsilon_score", "delta", "noisy_score")}
                            for t in trials),
            "selected_params": own_params, "selected_guarantee": own}


def _check_guarantee_against_params(guarantee: Any, params: dict[str, Any],
                                    model_type: str) -> None:
    """The guarantee says what the fit's public parameters imply: replace-one neighbours, the
    fit's epsilon (Accuracy First: a loss within its cap max_epsilon) and its delta where the
    parameters fix one, and no holding guarantee for the paper's calibration.  (A file whose
    every field was forged consistently cannot be told apart: a model file is not signed.)"""
    if guarantee.neighbouring != "replace-one":
        raise ValueError("the guarantee's neighbouring relation must be 'replace-one' (every "
                         "model here is stated for it)")
    if model_type == "accuracy-first":
        cap = params.get("max_epsilon")
        if cap is not None and (not isinstance(cap, (int, float)) or isinstance(cap, bool)
                                or not guarantee.epsilon <= cap * (1.0 + 1e-12)):
            raise ValueError("the guarantee's ex-post loss must be within params "
                             "'max_epsilon', the cap of the fit")
        return
    for key in ("epsilon", "delta"):
        want = params.get(key)
        if want is None and key == "delta":
            continue  # delta = 1/n^2, fixed at fit time from the public n
        if (not isinstance(want, (int, float)) or isinstance(want, bool)
                or not math.isclose(getattr(guarantee, key), want, rel_tol=1e-12)):
            raise ValueError(f"the guarantee's {key} is not the fit's (params {key!r})")
    if params.get("calibration") == "paper" and guarantee.holds:
        raise ValueError("a model fitted with calibration 'paper' has no guarantee that holds")


def _parse_per_person(doc: dict[str, Any], guarantee: Any, k: int) -> Any:
    """The per-person guarantee: present iff ``k > 1``, and exactly the group privacy of the
    per-record guarantee for ``k`` records (:func:`oracledp.privacy.group_privacy`)."""
    from oracledp.privacy import group_privacy

    if k == 1:
        if _PER_PERSON_KEY in doc:
            raise ValueError(f"'{_PER_PERSON_KEY}' is only saved when the schema's "
                             "records_per_person is above 1")
        return guarantee
    if _PER_PERSON_KEY not in doc:
        raise ValueError(f"the schema has records_per_person = {k} but the file has no "
                         f"'{_PER_PERSON_KEY}'")
    saved = _parse_guarantee(doc[_PER_PERSON_KEY])
    if saved != group_privacy(guarantee, k):
        raise ValueError(f"'{_PER_PERSON_KEY}' is not the group privacy of 'guarantee' for "
                         f"{k} records per person")
    return saved


def save_model(directory: str | Path, *, model_type: str, schema: TableSchema,
               estimator: Any, overwrite: bool = True) -> Path:
    """Write ``directory/model.json`` (format in the module docstring); returns its path.

    The document is validated exactly as :func:`load_model` validates it before anything is
    written (a model that could not be loaded back is never saved: ValueError).  With
    ``overwrite=False`` an existing ``model.json`` is refused (FileExistsError).  The saved
    guarantee's notes name the columns the schema clips to their public bounds
    (:meth:`TableSchema.annotate_guarantee`).
    """
    if model_type not in MODEL_TYPES:
        raise ValueError(f"unknown model type {model_type!r}")
    coef = np.asarray(estimator.coef_, dtype=np.float64).ravel()
    doc = {
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "model": model_type,
        "schema": schema.to_dict(),
        "params": _saved_params(estimator, model_type),
        "guarantee": schema.annotate_guarantee(estimator.guarantee_).to_dict(),
        **({_SELECTION_KEY: _selection_entry(estimator, schema)} if model_type == "auto"
           else {}),
        **_per_person_entry(schema.annotate_guarantee(estimator.guarantee_),
                            schema.records_per_person),
        "classes": [str(c) for c in estimator.classes_],
        "feature_names": schema.feature_names,
        "coef": coef.tolist(),
        "intercept": float(estimator.intercept_),
    }
    text = json.dumps(doc, indent=2, allow_nan=False) + "\n"  # NaN/inf are not JSON: refused
    try:
        _model_from_doc(json.loads(text))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"refusing to save an invalid model: {exc}") from None
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "model.json"
    if overwrite:
        path.write_text(text, encoding="utf-8")
    else:
        with path.open("x", encoding="utf-8") as fh:  # atomic: no check-then-write race
            fh.write(text)
    return path


def _saved_params(estimator: Any, model_type: str) -> dict[str, Any]:
    """The public parameters saved for a fitted estimator of ``model_type``: its JSON-able
    ``get_params`` (no seed, schema or classes), and for an exact model the W it was fitted
    on, resolved (``"norm2=R,bound=B"``; checked again on load)."""
    params = {k: v for k, v in estimator.get_params(deep=False).items()
              if k not in ("random_state", "keep_diagnostics", "schema", "classes")
              and _jsonable(v)}
    space = getattr(estimator, "space_", None)
    if model_type in _SPACE_RULE and space is not None:  # the exact models
        from oracledp.estimators._space_spec import space_spec

        params["space"] = space_spec(space)  # W as fitted (public), checked again on load
    return params


def _selection_entry(estimator: Any, schema: TableSchema) -> dict[str, Any]:
    """The public record of a fitted :class:`~oracledp.estimators.AutoClassifier`: what
    ``docs/proofs/model-selection.md`` releases (the plan: every trial's candidate and budget;
    every trial's noisy score; the selected candidate), and the selected model's type,
    parameters and own one-trial guarantee (from which its coefficients are checked on load;
    the release's guarantee is the selection's, saved as ``"guarantee"``)."""
    from oracledp.estimators._auto import parse_candidate

    winner = estimator.best_estimator_
    model = parse_candidate(estimator.selected_)[0]
    return {
        "selected": estimator.selected_,
        "trials": [{"candidate": t.candidate, "epsilon_fit": float(t.epsilon_fit),
                    "epsilon_score": float(t.epsilon_score), "delta": float(t.delta),
                    "noisy_score": float(s)}
                   for t, s in zip(estimator.trials_, estimator.noisy_scores_, strict=True)],
        "selected_model": {"model": model, "params": _saved_params(winner, model),
                           "guarantee": schema.annotate_guarantee(winner.guarantee_).to_dict()},
    }


def _per_person_entry(guarantee: Any, k: int) -> dict[str, Any]:
    if k == 1:
        return {}
    from oracledp.privacy import group_privacy

    return {_PER_PERSON_KEY: group_privacy(guarantee, k).to_dict()}


@dataclass(frozen=True)
class SavedModel:
    """A loaded ``model.json``: the schema, the released linear model and its guarantee."""

    model_type: str
    schema: TableSchema
    params: dict[str, Any]
    guarantee: Any  # oracledp.privacy._guarantees.PrivacyGuarantee
    classes: tuple[str, str]
    feature_names: tuple[str, ...]
    coef: NDArray[np.float64]
    intercept: float
    guarantee_per_person: Any = None  # the guarantee for a person's records_per_person records
    #: ``"auto"`` only: the selection's record (``selected``, ``selected_model`` -- the
    #: selected candidate's model type --, ``trials``, ``selected_params``,
    #: ``selected_guarantee``: that model's own one-trial guarantee); None otherwise.
    selection: dict[str, Any] | None = None

    @property
    def predictor_type(self) -> str:
        """The type of the model that predicts: for ``"auto"`` the selected candidate's
        (opdisc, rspm, gaussian-rspm or dpsgd), otherwise :attr:`model_type`."""
        return self.model_type if self.selection is None else self.selection["selected_model"]

    @property
    def model_label(self) -> str:
        """:attr:`model_type` in words: ``"auto (selected: opdisc)"`` for a selection."""
        if self.selection is None:
            return self.model_type
        return f"{self.model_type} (selected: {self.selection['selected']})"

    def decision_function(self, df: pd.DataFrame, *, on_unknown: str = "clip",
                          ) -> NDArray[np.float64]:
        """Scores ``<x, coef> + intercept`` of rows encoded by the saved schema; values outside
        it follow ``on_unknown`` (see :meth:`TableSchema.encode`: "clip" is the prediction
        policy, with a PredictionPolicyWarning; "refuse" raises)."""
        return self.schema.encode(df, on_unknown=on_unknown) @ self.coef + self.intercept

    def predict(self, df: pd.DataFrame, *, on_unknown: str = "clip") -> NDArray[np.object_]:
        scores = self.decision_function(df, on_unknown=on_unknown)
        return self.labels_of_scores(scores)

    def labels_of_scores(self, scores: NDArray[np.float64]) -> NDArray[np.object_]:
        """``classes[1]`` where a score is > 0, ``classes[0]`` otherwise."""
        return np.asarray(self.classes, dtype=object)[(scores > 0).astype(np.intp)]


def load_model(path: str | Path) -> SavedModel:
    """Read a model directory (or its ``model.json``) written by :func:`save_model`.

    The file is validated strictly (see the module docstring): format and
    ``format_version`` (:data:`MODEL_FORMAT_VERSION`; absent or other versions are refused),
    exactly the known fields, a known model type, the schema, finite coefficients (one per
    encoded feature; for rspm in {-1, 0, 1}) and intercept, the schema's two labels, and a
    guarantee whose every field has its exact type and which matches the model type; for the
    exact models, the saved parameter space W of the fit, the W its guarantee records, and
    coefficients in W; for ``"auto"``, the selection (trials summing to the guarantee, the
    selected model checked as a model of its type).  Anything else raises
    :class:`ModelFileError` (a ValueError) with one message; no part of the file is used.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "model.json"
    again = "Fit the model again with `oracledp fit` (a model file is never repaired or guessed)."
    try:
        text = _jsonfile.read_text(p)
    except OSError as exc:
        raise ModelFileError(f"{p}: cannot read the model ({exc.strerror})") from None
    except ValueError as exc:  # not UTF-8, not a regular file, too large
        raise ModelFileError(f"{p}: not a JSON model file ({exc})") from None
    try:  # strict: NaN, keys twice, 300-digit integers, deep nesting are refused
        doc = _jsonfile.loads(text)
    except ValueError as exc:
        raise ModelFileError(f"{p}: not a valid JSON model file ({exc}). {again}") from None
    try:
        return _model_from_doc(doc)
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"{p}: invalid model file: {exc}. {again}") from None
