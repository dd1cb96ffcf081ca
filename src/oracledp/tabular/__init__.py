"""Bring your own table: a public schema, a scikit-learn transformer and a saved-model format.

:class:`TableSchema` declares, per input column of a CSV/DataFrame, how it is encoded:

* ``categorical``: declared ``levels``; one 0/1 column per level (one-hot).  A level that
  writes a finite number (``"1"``, ``0.5`` in JSON) is a numeric code, matched **by value**:
  ``1``, ``1.0``, ``"1"``, ``"1.0"`` and numpy numbers are the level ``"1"`` (two levels
  that are the same number are refused); any other level is text, matched exactly.
  Nothing is stripped: a cell or a header name with white space before or after it is
  refused (by column, never the value), and so is such a name, level or label in a schema.
* ``numeric`` with a public ``lower``/``upper`` bound and a public grid ``step``: the value
  x is mapped to the exact rational ``k/K`` with ``K = (upper - lower)/step`` (a whole
  number, checked) and ``k = round((x - lower)/step)`` (numpy.rint of the double: halves
  to even; a decimal half such as 0.15 on a step of 0.1 is no half as a double, and goes
  where its double lies: 0.15 to 0.1, 0.25 to 0.2, 0.55 to 0.6).  This is a documented,
  public per-record rounding to the grid (no data-dependent choice); values outside
  ``[lower, upper]`` are refused, unless the column declares ``"out_of_bounds": "clip"``
  (default ``"refuse"``): its numbers are then clipped to ``[lower, upper]`` in fit and
  predict alike, one
  :class:`~oracledp._errors.ClippedValuesWarning` names the columns that had such numbers (a
  non-private diagnostic: names only, no count), and the fitted model's guarantee says which
  columns are clipped (:meth:`TableSchema.annotate_guarantee`, applied by the command line,
  :func:`save_model` and :func:`fit_aggregated`).  Clipping to public bounds is a fixed
  public map of each record, so the guarantee holds for the original records.
* ``numeric`` with public ``bins`` (cut points c_1 < ... < c_m inside ``[lower, upper]``):
  thermometer encoding, one 0/1 column ``[x >= c_j]`` per cut.
* the ``target``: a column with exactly two declared ``labels`` (the label set is public),
  matched like levels (numbers by value).
* the **intercept feature** ``(intercept)`` = 1 (``"intercept": true``, the default): the
  linear models here are halfspaces through the origin, so the schema appends a public
  constant feature whose weight is the intercept.  It is a feature like the others: it is
  in OPDisc's and RSPM's parameter space W (one more dimension in their norm budget and
  noise), in the public norm bounds (l1 + 1) and in Accuracy First's l1 scaling.
* **missing cells** (empty, NaN, or one of the schema's ``missing_values``, by default
  :data:`DEFAULT_MISSING_VALUES`; a declared level is always a level) follow each column's
  public ``missing`` policy: ``"refuse"`` (default), ``"level"`` (an extra 0/1 feature
  ``name=(missing)``) or ``{"fill": v}`` (a declared level or a number within the bounds).
* ``"type": "unresolved"``: a column schema inference could not type; every fit refuses it.

Every bound, level, step and label is *declared*: :meth:`TableSchema.propose` reads them
from data only as a convenience, marks each such entry ``"from_data": true`` and
:class:`SchemaTransformer` refuses to fit while any such flag remains (reading bounds or
levels from private data is not private: replace them with public values, or confirm
them by removing the flag).  :meth:`TableSchema.feature_schema` gives the public
:class:`~oracledp.oracles.FeatureSchema` of the encoded columns from the schema alone,
and :meth:`TableSchema.norm_bounds` public bounds on the rows' l1/l2/sup norms.  With
``row_divisor = m`` every encoded row is divided by the integer m (e.g. the l1 bound,
``schema.scaled_to_l1()``, so that ``||x||_1 <= 1`` as Accuracy First requires).

Bad training input (missing column, a missing value without a policy, text in a numeric
column, unknown level, a number outside its bounds, and with ``ignore_extra=False`` a column
the schema does not mention) raises ONE :class:`~oracledp._errors.BoundsViolation` listing
every problem by column and rule, never a record value or a row number, before anything
random happens.  Rows to *predict* on are post-processing of a released model, so by default
they follow the prediction policy (:meth:`TableSchema.encode_for_prediction`): numbers
clipped to the public bounds, unknown levels encoded as all-zero one-hots, with a
:class:`~oracledp._errors.PredictionPolicyWarning` counting the affected rows per column;
``on_unknown="refuse"`` refuses them as in training.  A column where most values are not
declared levels is refused even then (it is coded otherwise: an all-zero column would give
meaningless predictions).  :func:`read_csv` adds file-level checks (empty file, non-UTF-8 bytes, wrong
delimiter) raising :class:`TableInputError`.  :func:`read_aggregated` does the same checks
on any table (CSV, Parquet, a DataFrame) in one pass of the data engine (DuckDB, or Dask on a
cluster) and keeps only the distinct encoded rows with their label counts (an
:class:`AggregatedTable`, memory independent of the number of records);
:meth:`AggregatedTable.weighted_rows` gives those rows with their record counts for the
estimators' public ``fit(X, y, sample_weight=counts)``, and :func:`fit_aggregated` fits OPDisc,
RSPM, Gaussian RSPM or DP-SGD that way, exactly as on the whole table.  :func:`check_table` lists every problem of
a CSV (streamed) or a DataFrame for a schema, one line each, without fitting (``oracledp
schema check``).

Saved model format (``model.json``, written by :func:`save_model`, read by
:func:`load_model`; loading needs only this file)::

    {
      "format": "oracledp.model", "format_version": 2,
      "model": "opdisc" | "rspm" | "gaussian-rspm" | "opsamp" | "dpsgd" | "accuracy-first"
               | "auto",
      "schema": <TableSchema.to_dict()>,
      "params": {<public hyper-parameters: epsilon, delta, ...>},
      "guarantee": <PrivacyGuarantee.to_dict()>,
      "guarantee_per_person": <group_privacy(guarantee, k).to_dict()>,  (only if k > 1)
      "selection": {...},                                               (only for "auto")
      "classes": [label mapped to -1, label mapped to +1],
      "feature_names": [...], "coef": [...], "intercept": float
    }

``"auto"`` is the private selection :class:`~oracledp.estimators.AutoClassifier`
(``docs/proofs/model-selection.md``): ``guarantee`` is the selection's (its whole cost, every
trial included), ``coef`` / ``intercept`` the selected model's, and ``"selection"`` what the
proof releases besides: ``{"selected": candidate, "trials": [{"candidate", "epsilon_fit",
"epsilon_score", "delta", "noisy_score"}, ...], "selected_model": {"model", "params",
"guarantee"}}`` (the plan, every trial's noisy score, and the selected model's type,
parameters and own one-trial guarantee, from which its coefficients are checked).

It holds the released parameters, the public schema and the guarantee only: no training
rows, no non-private diagnostics, no seed.  A prediction is ``classes[1]`` where
``<x, coef> + intercept > 0`` and ``classes[0]`` otherwise, as in every estimator here.

Versions and validation: ``format_version`` is :data:`MODEL_FORMAT_VERSION` (2: the schema
always says ``"intercept"``); a file without ``format_version`` or with another one is
refused with a message to fit the model again.  It also refuses (one :class:`ModelFileError`, a ValueError, and nothing of the
file is used): a missing or unknown top-level field; a model type not listed above; an
invalid or unconfirmed schema; ``feature_names`` other than the schema's encoded features;
``coef`` that is not a list of exactly one finite number (not a string, not a boolean) per
encoded feature; a non-finite ``intercept`` (or a non-zero one for a model without
intercept; rspm coefficients outside {-1, 0, 1}; for the exact models (opdisc, rspm,
gaussian-rspm): a ``params.space`` that is not the parameter space W of the fit resolved
(``"norm2=R,bound=B"``, never ``"auto"``: with ``tau``, a finite, valid W of the schema's
number of features), a guarantee whose notes (W, |W|, D) or calibration (|W|; opdisc's d and
shift c, gaussian-rspm's m = 2d) are those of another W, coefficients that are not a point of
W (the integer multiples of ``tau`` in its box and ball)); ``classes`` other than the schema's two
labels sorted; a guarantee without exactly the fields of ``PrivacyGuarantee.to_dict()``,
each of its exact JSON type (``holds`` a real true/false, ``epsilon`` a finite number > 0,
``delta`` in [0, 1), ``kind`` pure/approximate/ex-post...), or whose kind and exact-oracle
flag do not match the model type; a ``guarantee_per_person`` absent while the schema's
``records_per_person`` k is above 1, present while it is 1, or other than the group privacy
of ``guarantee`` for k records; for ``"auto"``: a ``selection`` absent (or present for
another type), trials that repeat a candidate or whose budgets do not sum to the guarantee's
epsilon and delta, a selected candidate that is not one of them, a guarantee whose kind or
exact-oracle flag the trials do not imply, or a selected model whose coefficients, intercept
or own guarantee its type would refuse; ``NaN``/``Infinity`` anywhere; a key listed twice.
:func:`save_model` runs the same checks before writing, so it never writes a file that
:func:`load_model` would refuse.
"""

from __future__ import annotations

from oracledp._errors import (
    ClippedValuesWarning,
    ModelFileError,
    TableInputError,
    UnconfirmedSchemaError,
)
from oracledp._lazy import lazy_attributes

# ``X as X``: public names outside __all__, importable from here as before the package split.
from oracledp.tabular._aggregated import AggregatedTable, fit_aggregated, read_aggregated
from oracledp.tabular._cells import describe_adjusted as describe_adjusted
from oracledp.tabular._check import check_table
from oracledp.tabular._columns import DEFAULT_MISSING_VALUES as DEFAULT_MISSING_VALUES
from oracledp.tabular._columns import INTERCEPT_NAME as INTERCEPT_NAME
from oracledp.tabular._columns import MAX_GRID as MAX_GRID
from oracledp.tabular._columns import MISSING_POLICIES as MISSING_POLICIES
from oracledp.tabular._columns import OUT_OF_BOUNDS_POLICIES as OUT_OF_BOUNDS_POLICIES
from oracledp.tabular._columns import Column
from oracledp.tabular._csv import read_csv
from oracledp.tabular._model_file import MODEL_FORMAT as MODEL_FORMAT
from oracledp.tabular._model_file import MODEL_FORMAT_VERSION as MODEL_FORMAT_VERSION
from oracledp.tabular._model_file import MODEL_TYPES as MODEL_TYPES
from oracledp.tabular._model_file import SavedModel, load_model, save_model
from oracledp.tabular._propose import PROPOSE_MAX_GRID as PROPOSE_MAX_GRID
from oracledp.tabular._schema import FORMAT_VERSION as FORMAT_VERSION
from oracledp.tabular._schema import FROM_DATA_NOTE as FROM_DATA_NOTE
from oracledp.tabular._schema import SCHEMA_FORMAT as SCHEMA_FORMAT
from oracledp.tabular._schema import TableSchema

# SchemaTransformer is a scikit-learn transformer: imported on first use, so the data path
# (synth fit, schema check, predict) does not load scikit-learn (about 100 MB, 1 s)
__getattr__, __dir__ = lazy_attributes(
    __name__, globals(), {"SchemaTransformer": "oracledp.tabular._transformer"})

__all__ = [
    "AggregatedTable",
    "ClippedValuesWarning",
    "Column",
    "ModelFileError",
    "SavedModel",
    "SchemaTransformer",
    "TableInputError",
    "TableSchema",
    "UnconfirmedSchemaError",
    "check_table",
    "fit_aggregated",
    "load_model",
    "read_aggregated",
    "read_csv",
    "save_model",
]
