"""Bring your own table: a public schema, a scikit-learn transformer and a saved-model format.

:class:`TableSchema` declares, per input column of a CSV/DataFrame, how it is encoded:

* ``categorical``: declared ``levels``; one 0/1 column per level (one-hot).
* ``numeric`` with a public ``lower``/``upper`` bound and a public grid ``step``: the value
  x is mapped to the exact rational ``k/K`` with ``K = (upper - lower)/step`` (a whole
  number, checked) and ``k = round((x - lower)/step)`` (numpy.rint: halves to even).  This is a documented, public per-record rounding to the
  grid (no data-dependent choice); values outside ``[lower, upper]`` are refused.
* ``numeric`` with public ``bins`` (cut points c_1 < ... < c_m inside ``[lower, upper]``):
  thermometer encoding, one 0/1 column ``[x >= c_j]`` per cut.
* the ``target``: a column with exactly two declared ``labels`` (the label set is public).
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
the schema does not mention) raises ONE :class:`~oracledp.errors.BoundsViolation` listing
every problem by column and rule, never a record value or a row number, before anything
random happens.  Rows to *predict* on are post-processing of a released model, so by default
they follow the prediction policy (:meth:`TableSchema.encode_for_prediction`): numbers
clipped to the public bounds, unknown levels encoded as all-zero one-hots, with a
:class:`~oracledp.errors.PredictionPolicyWarning` counting the affected rows per column;
``on_unknown="refuse"`` refuses them as in training.  :func:`read_csv` adds file-level checks (empty file, non-UTF-8 bytes, wrong
delimiter) raising :class:`TableInputError`.  :func:`read_csv_aggregated` does the same checks
chunk by chunk and keeps only the distinct encoded rows with their label counts (an
:class:`AggregatedTable`, memory independent of the number of records);
:func:`fit_aggregated` fits OPDisc or RSPM on it exactly as on the whole table.

Saved model format (``model.json``, written by :func:`save_model`, read by
:func:`load_model`; loading needs only this file)::

    {
      "format": "oracledp.model", "format_version": 2,
      "model": "opdisc" | "rspm" | "opsamp" | "dpsgd" | "accuracy-first",
      "schema": <TableSchema.to_dict()>,
      "params": {<public hyper-parameters: epsilon, delta, ...>},
      "guarantee": <PrivacyGuarantee.to_dict()>,
      "classes": [label mapped to -1, label mapped to +1],
      "feature_names": [...], "coef": [...], "intercept": float
    }

It holds the released parameters, the public schema and the guarantee only: no training
rows, no non-private diagnostics, no seed.  A prediction is ``classes[1]`` where
``<x, coef> + intercept > 0`` and ``classes[0]`` otherwise, as in every estimator here.

Versions and validation: ``format_version`` is :data:`MODEL_FORMAT_VERSION` (2: the schema
always says ``"intercept"``).  :func:`load_model` also reads version 1 (written before the
intercept feature existed: its schema is read with ``intercept`` false, so its coefficients
keep their meaning); a file without ``format_version`` or with another one is refused with
a message to fit the model again.  It also refuses (one :class:`ModelFileError`, a ValueError, and nothing of the
file is used): a missing or unknown top-level field; a model type not listed above; an
invalid or unconfirmed schema; ``feature_names`` other than the schema's encoded features;
``coef`` that is not a list of exactly one finite number (not a string, not a boolean) per
encoded feature; a non-finite ``intercept`` (or a non-zero one for a model without
intercept; rspm coefficients outside {-1, 0, 1}); ``classes`` other than the schema's two
labels sorted; a guarantee without exactly the fields of ``PrivacyGuarantee.to_dict()``,
each of its exact JSON type (``holds`` a real true/false, ``epsilon`` a finite number > 0,
``delta`` in [0, 1), ``kind`` pure/approximate/ex-post...), or whose kind and exact-oracle
flag do not match the model type; ``NaN``/``Infinity`` anywhere; a key listed twice.
:func:`save_model` runs the same checks before writing, so it never writes a file that
:func:`load_model` would refuse.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import itertools
import json
import math
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, TransformerMixin

from oracledp.errors import BoundsViolation, OracleDPError

__all__ = [
    "AggregatedTable",
    "Column",
    "ModelFileError",
    "SavedModel",
    "SchemaTransformer",
    "TableInputError",
    "TableSchema",
    "UnconfirmedSchemaError",
    "fit_aggregated",
    "load_model",
    "read_csv",
    "read_csv_aggregated",
    "save_model",
]

SCHEMA_FORMAT = "oracledp.table_schema"
MODEL_FORMAT = "oracledp.model"
FORMAT_VERSION = 1
MAX_GRID = 10**6

FROM_DATA_NOTE = (
    "Entries marked \"from_data\": true were read from the data. Reading bounds, levels or "
    "labels from private data is NOT differentially private. Replace them with public values "
    "(or confirm they are public knowledge) and delete the flag before fitting."
)


class TableInputError(OracleDPError, ValueError):
    """A table or CSV that cannot be read against its schema (file-level problems)."""


class UnconfirmedSchemaError(OracleDPError, ValueError):
    """A schema still holds entries read from the data (``"from_data": true``)."""


def _num(v: Any, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ValueError(f"{what} must be a finite number, got {v!r}")
    return float(v)


#: Cell texts that mean "missing" by default (after stripping spaces), besides an empty cell
#: and a NaN.  A schema may declare its own list (``"missing_values"``); a declared level of a
#: categorical column is always that level, never "missing".
DEFAULT_MISSING_VALUES: tuple[str, ...] = ("NA", "N/A", "NaN", "nan", "NULL", "null", "None",
                                           "?")

#: The public policies for missing cells of a column (see :class:`Column`).
MISSING_POLICIES = ("refuse", "level", "fill")

#: Name of the encoded constant feature (the public intercept).
INTERCEPT_NAME = "(intercept)"


@dataclass(frozen=True)
class Column:
    """One input column: ``kind`` is ``"categorical"``, ``"numeric"`` or ``"unresolved"``.

    ``missing`` is the column's public policy for missing cells (an empty cell, NaN, or one of
    the schema's ``missing_values``): ``"refuse"`` (default: the table is refused),
    ``"level"`` (a public extra 0/1 feature ``name=(missing)``; a numeric column's value
    feature is 0 on such rows) or ``"fill"`` with the public ``fill`` value (a declared level,
    or a number within the bounds).  ``"unresolved"`` marks a column that schema inference
    could not type: every fit refuses it until it is declared or removed.
    """

    name: str
    kind: str
    levels: tuple[str, ...] | None = None
    lower: float | None = None
    upper: float | None = None
    step: float | None = None
    bins: tuple[float, ...] | None = None
    from_data: bool = False
    missing: str = "refuse"
    fill: str | float | None = None
    note: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        where = f"column {self.name!r}"
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a column name must be a non-empty string, got {self.name!r}")
        if self.missing not in MISSING_POLICIES:
            raise ValueError(f"{where}: 'missing' must be \"refuse\", \"level\" or "
                             "{\"fill\": <public value>}")
        if (self.missing == "fill") != (self.fill is not None):
            raise ValueError(f"{where}: a fill value goes with \"missing\": {{\"fill\": ...}}")
        if self.kind == "unresolved":
            if any(v is not None for v in (self.levels, self.lower, self.upper, self.step,
                                           self.bins, self.fill)) or self.missing != "refuse":
                raise ValueError(f"{where}: an unresolved column takes only a 'note'")
            return
        if self.kind == "categorical":
            if self.levels is None or len(self.levels) == 0:
                raise ValueError(f"{where}: a categorical column needs a non-empty 'levels' list")
            levels = tuple(str(v) for v in self.levels)
            if len(set(levels)) != len(levels):
                raise ValueError(f"{where}: 'levels' must be distinct")
            object.__setattr__(self, "levels", levels)
            if any(v is not None for v in (self.lower, self.upper, self.step, self.bins)):
                raise ValueError(f"{where}: a categorical column takes only 'levels'")
            if self.fill is not None:
                if not isinstance(self.fill, str) or self.fill not in levels:
                    raise ValueError(f"{where}: the fill value must be one of the declared "
                                     "levels")
        elif self.kind == "numeric":
            if self.levels is not None:
                raise ValueError(f"{where}: a numeric column takes no 'levels'")
            lo = _num(self.lower, f"{where}: 'lower'")
            hi = _num(self.upper, f"{where}: 'upper'")
            if not lo < hi:
                raise ValueError(f"{where}: 'lower' must be < 'upper'")
            object.__setattr__(self, "lower", lo)
            object.__setattr__(self, "upper", hi)
            if (self.step is None) == (self.bins is None):
                raise ValueError(f"{where}: a numeric column needs exactly one of 'step' "
                                 "(grid) or 'bins' (cut points)")
            if self.step is not None:
                step = _num(self.step, f"{where}: 'step'")
                if step <= 0:
                    raise ValueError(f"{where}: 'step' must be > 0")
                object.__setattr__(self, "step", step)
                K = round((hi - lo) / step)
                if not 1 <= K <= MAX_GRID:
                    raise ValueError(f"{where}: (upper - lower)/step must round to an integer "
                                     f"in [1, {MAX_GRID}], got {K}")
                if abs((hi - lo) / step - K) > 1e-9 * K:
                    raise ValueError(f"{where}: upper - lower must be a whole number of steps "
                                     f"(got {(hi - lo) / step:g} steps)")
            else:
                cuts = tuple(_num(c, f"{where}: a bin cut point") for c in self.bins or ())
                if not cuts:
                    raise ValueError(f"{where}: 'bins' must list at least one cut point")
                if any(b <= a for a, b in itertools.pairwise(cuts)):
                    raise ValueError(f"{where}: bin cut points must be strictly increasing")
                if not (lo < cuts[0] and cuts[-1] <= hi):
                    raise ValueError(f"{where}: bin cut points must lie in (lower, upper]")
                object.__setattr__(self, "bins", cuts)
            if self.fill is not None:
                f = _num(self.fill, f"{where}: the fill value")
                if not lo <= f <= hi:
                    raise ValueError(f"{where}: the fill value must lie in [lower, upper]")
                object.__setattr__(self, "fill", f)
        else:
            raise ValueError(f"{where}: type must be 'categorical' or 'numeric', "
                             f"got {self.kind!r}")

    @property
    def K(self) -> int:
        """Grid size of a gridded numeric column (public)."""
        assert self.step is not None
        return round((self.upper - self.lower) / self.step)  # type: ignore[operator]

    @property
    def missing_level(self) -> bool:
        return self.missing == "level"

    @property
    def n_values(self) -> int:
        """How many codes a present (not missing) cell can take."""
        if self.kind == "categorical":
            return len(self.levels or ())
        if self.kind == "numeric":
            return self.K + 1 if self.step is not None else len(self.bins or ()) + 1
        return 0

    @property
    def width(self) -> int:
        if self.kind == "categorical":
            base = len(self.levels or ())
        elif self.kind == "numeric":
            base = 1 if self.step is not None else len(self.bins or ())
        else:
            return 0
        return base + self.missing_level

    def output_names(self) -> list[str]:
        if self.kind == "categorical":
            names = [f"{self.name}={v}" for v in self.levels or ()]
        elif self.kind == "numeric" and self.step is not None:
            names = [self.name]
        elif self.kind == "numeric":
            names = [f"{self.name}>={c:g}" for c in self.bins or ()]
        else:
            return []
        return names + ([f"{self.name}=(missing)"] if self.missing_level else [])

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "type": self.kind}
        if self.kind == "categorical":
            d["levels"] = list(self.levels or ())
        elif self.kind == "numeric":
            d["lower"], d["upper"] = _plain(self.lower), _plain(self.upper)
            if self.step is not None:
                d["step"] = _plain(self.step)
            else:
                d["bins"] = [_plain(c) for c in self.bins or ()]
        if self.missing == "level":
            d["missing"] = "level"
        elif self.missing == "fill":
            d["missing"] = {"fill": self.fill if isinstance(self.fill, str)
                            else _plain(self.fill)}
        if self.from_data:
            d["from_data"] = True
        if self.note:
            d["note"] = self.note
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Column:
        if not isinstance(d, dict):
            raise ValueError(f"each column must be a JSON object, got {type(d).__name__}")
        allowed = {"name", "type", "levels", "lower", "upper", "step", "bins", "from_data",
                   "missing", "note"}
        extra = sorted(set(d) - allowed)
        if extra:
            raise ValueError(f"column {d.get('name')!r}: unknown keys {extra}")
        if "name" not in d or "type" not in d:
            raise ValueError("each column needs 'name' and 'type'")
        levels = d.get("levels")
        bins = d.get("bins")
        missing, fill = _parse_missing(d.get("missing", "refuse"), d["name"])
        note = d.get("note", "")
        if not isinstance(note, str):
            raise ValueError(f"column {d['name']!r}: 'note' must be a string")
        return cls(name=d["name"], kind=d["type"],
                   levels=None if levels is None else tuple(levels),
                   lower=d.get("lower"), upper=d.get("upper"), step=d.get("step"),
                   bins=None if bins is None else tuple(bins),
                   from_data=_flag(d.get("from_data", False), d["name"]),
                   missing=missing, fill=fill, note=note)


def _parse_missing(v: Any, name: Any) -> tuple[str, Any]:
    """The JSON ``"missing"`` entry: "refuse", "level" or {"fill": value}."""
    if v in ("refuse", "level"):
        return v, None
    if isinstance(v, dict) and set(v) == {"fill"} and (
            isinstance(v["fill"], str) or (isinstance(v["fill"], (int, float))
                                           and not isinstance(v["fill"], bool))):
        return "fill", v["fill"]
    raise ValueError(f"column {name!r}: 'missing' must be \"refuse\", \"level\" or "
                     "{\"fill\": <a declared level or a number within the bounds>}")


def _plain(v: float | None) -> float | int | None:
    """Integral floats as JSON integers (17 rather than 17.0), for readable schema files."""
    return int(v) if v is not None and float(v).is_integer() and abs(v) < 2**53 else v


def _flag(v: Any, name: str) -> bool:
    if not isinstance(v, bool):
        raise ValueError(f"{name!r}: 'from_data' must be true or false")
    return v


@dataclass(frozen=True)
class TableSchema:
    """Public description of a table: feature columns, the target and its two labels.

    See the module docstring for the encoding.  ``row_divisor`` (integer >= 1) divides
    every encoded row (public scaling).  ``intercept`` (default True) appends the public
    constant feature :data:`INTERCEPT_NAME` = 1 (divided by ``row_divisor`` like the others),
    so that the linear models here, which are halfspaces through the origin, get an
    intercept as the weight of that feature; it counts in every public norm bound.
    ``missing_values``: the cell texts read as missing (:data:`DEFAULT_MISSING_VALUES`).
    """

    columns: tuple[Column, ...]
    target: str
    labels: tuple[str, str]
    target_from_data: bool = False
    row_divisor: int = 1
    note: str = field(default="", compare=False)
    intercept: bool = True
    missing_values: tuple[str, ...] = DEFAULT_MISSING_VALUES

    def __post_init__(self) -> None:
        cols = tuple(self.columns)
        if not cols:
            raise ValueError("a table schema needs at least one feature column")
        object.__setattr__(self, "columns", cols)
        names = [c.name for c in cols]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"duplicate column names: {dup}")
        if not isinstance(self.target, str) or not self.target:
            raise ValueError("'target' must name the label column")
        if self.target in names:
            raise ValueError(f"the target {self.target!r} is also listed as a feature column")
        labels = tuple(str(v) for v in self.labels)
        if len(labels) != 2 or labels[0] == labels[1]:
            raise ValueError("the target needs exactly two distinct 'labels'")
        object.__setattr__(self, "labels", labels)
        m = self.row_divisor
        if isinstance(m, bool) or not isinstance(m, int) or m < 1:
            raise ValueError(f"'row_divisor' must be an integer >= 1, got {m!r}")
        if not isinstance(self.intercept, bool):
            raise ValueError("'intercept' must be true or false")
        mv = self.missing_values
        if isinstance(mv, str) or not all(isinstance(v, str) for v in mv):
            raise ValueError("'missing_values' must be a list of strings")
        object.__setattr__(self, "missing_values", tuple(v.strip() for v in mv))
        out = [n for c in cols for n in c.output_names()]
        if self.intercept and INTERCEPT_NAME in out:
            raise ValueError(f"an encoded feature is named {INTERCEPT_NAME!r}, the name of the "
                             "intercept feature")

    # --- JSON ----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        target: dict[str, Any] = {"name": self.target, "labels": list(self.labels)}
        if self.target_from_data:
            target["from_data"] = True
        d: dict[str, Any] = {"format": SCHEMA_FORMAT, "version": FORMAT_VERSION}
        if self.note:
            d["note"] = self.note
        d["target"] = target
        d["columns"] = [c.to_dict() for c in self.columns]
        d["row_divisor"] = self.row_divisor
        d["intercept"] = self.intercept
        if self.missing_values != DEFAULT_MISSING_VALUES:
            d["missing_values"] = list(self.missing_values)
        return d

    @classmethod
    def from_dict(cls, d: Any, *, default_intercept: bool = True) -> TableSchema:
        """Parse a schema's JSON object.  Without an ``"intercept"`` key the schema has the
        intercept feature (``default_intercept``; models saved in format version 1, which
        had none, are read with False)."""
        if not isinstance(d, dict):
            raise ValueError("a table schema must be a JSON object")
        if d.get("format", SCHEMA_FORMAT) != SCHEMA_FORMAT:
            raise ValueError(f"not a table schema (format {d.get('format')!r})")
        if d.get("version", FORMAT_VERSION) != FORMAT_VERSION:
            raise ValueError(f"unsupported schema version {d.get('version')!r}")
        extra = sorted(set(d) - {"format", "version", "note", "target", "columns",
                                 "row_divisor", "intercept", "missing_values"})
        if extra:
            raise ValueError(f"unknown top-level keys {extra}")
        t = d.get("target")
        if not isinstance(t, dict) or "name" not in t or "labels" not in t:
            raise ValueError("'target' must be an object with 'name' and 'labels'")
        extra = sorted(set(t) - {"name", "labels", "from_data"})
        if extra:
            raise ValueError(f"target: unknown keys {extra}")
        cols = d.get("columns")
        if not isinstance(cols, list):
            raise ValueError("'columns' must be a list")
        mv = d.get("missing_values", list(DEFAULT_MISSING_VALUES))
        if not isinstance(mv, list):
            raise ValueError("'missing_values' must be a list of strings")
        return cls(columns=tuple(Column.from_dict(c) for c in cols), target=t["name"],
                   labels=tuple(t["labels"]),  # type: ignore[arg-type]
                   target_from_data=_flag(t.get("from_data", False), t["name"]),
                   row_divisor=d.get("row_divisor", 1), note=str(d.get("note", "")),
                   intercept=d.get("intercept", default_intercept),
                   missing_values=tuple(mv))

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_json(cls, text: str) -> TableSchema:
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"the schema is not valid JSON: {exc}") from None
        return cls.from_dict(d)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json() + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> TableSchema:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{path}: the schema file is not UTF-8 text") from None
        try:
            return cls.from_json(text)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None

    # --- confirmation ----------------------------------------------------------------------

    def unconfirmed(self) -> list[str]:
        """Names of the entries still marked ``from_data`` (target included)."""
        out = [c.name for c in self.columns if c.from_data]
        if self.target_from_data:
            out.append(f"{self.target} (target labels)")
        return out

    def unresolved(self) -> list[str]:
        """Names of the columns schema inference could not type (``"type": "unresolved"``)."""
        return [c.name for c in self.columns if c.kind == "unresolved"]

    def check_confirmed(self) -> None:
        todo = self.unresolved()
        if todo:
            raise UnconfirmedSchemaError(
                f"the schema has column(s) whose type inference could not decide (\"type\": "
                f"\"unresolved\"): {', '.join(todo)}. Declare each as numeric (public bounds "
                "and step, and a 'missing' policy if it has missing cells) or categorical "
                "(public levels), or delete the entry and fit with --ignore-extra "
                "(ignore_extra=True) to leave the column out.")
        left = self.unconfirmed()
        if left:
            raise UnconfirmedSchemaError(
                f"the schema still has entries read from the data (\"from_data\": true): "
                f"{', '.join(left)}. Reading bounds, levels or labels from private data is not "
                "private: replace them with public values or confirm them, and delete the "
                "\"from_data\" flags, then fit again."
            )

    def confirmed(self) -> TableSchema:
        """The same schema with every ``from_data`` flag removed (the caller vouches for it)."""
        return replace(self, columns=tuple(replace(c, from_data=False) for c in self.columns),
                       target_from_data=False, note="")

    # --- public derived quantities --------------------------------------------------------

    @property
    def feature_names(self) -> list[str]:
        names = [n for c in self.columns for n in c.output_names()]
        return [*names, INTERCEPT_NAME] if self.intercept else names

    @property
    def n_features(self) -> int:
        return sum(c.width for c in self.columns) + self.intercept

    def norm_bounds(self) -> dict[str, float]:
        """Public bounds on every encoded row: ``{"l1", "l2", "linf"}`` (after ``row_divisor``).

        A one-hot block (with its missing level) and a grid value with its missing indicator
        hold at most one 1 (or one value in [0, 1]); a thermometer block at most its width;
        the intercept feature adds 1.
        """
        l1 = sum(1 if c.kind == "categorical" or c.step is not None else len(c.bins or ())
                 for c in self.columns if c.kind != "unresolved") + self.intercept
        m = self.row_divisor
        return {"l1": l1 / m, "l2": math.sqrt(l1) / m, "linf": 1.0 / m}

    def scaled_to_l1(self) -> TableSchema:
        """This schema with ``row_divisor`` = the l1 bound, so every row has ``||x||_1 <= 1``."""
        l1 = round(self.norm_bounds()["l1"] * self.row_divisor)
        return replace(self, row_divisor=l1)

    def feature_schema(self) -> Any:
        """The public :class:`~oracledp.oracles.FeatureSchema` of the encoded columns."""
        from oracledp.oracles import FeatureSchema

        m = self.row_divisor
        binary: list[bool] = []
        dens: list[int] = []
        for c in self.columns:
            grid = c.K if (c.kind == "numeric" and c.step is not None) else 1
            for j in range(c.width):
                g = 1 if (c.missing_level and j == c.width - 1) else grid  # missing indicator
                binary.append(m == 1 and g == 1)
                dens.append(g * m)
        if self.intercept:
            binary.append(m == 1)
            dens.append(m)
        return FeatureSchema(binary=tuple(binary), denominators=tuple(dens),
                             bounds=(1.0 / m,) * len(binary), names=tuple(self.feature_names))

    # --- proposal from data (NOT private) -------------------------------------------------

    @classmethod
    def propose(cls, data: pd.DataFrame | str | Path, target: str,
                max_levels: int = 50) -> TableSchema:
        """A schema read from ``data`` (a DataFrame or a CSV path): NOT private.

        The schema of :meth:`infer`, without its warnings.
        """
        return cls.infer(data, target, max_levels=max_levels)[0]

    @classmethod
    def infer(cls, data: pd.DataFrame | str | Path, target: str, max_levels: int = 50,
              ) -> tuple[TableSchema, list[str]]:
        """A schema read from ``data`` (a DataFrame or a CSV path) and its warnings: NOT private.

        Every level, bound, step and the label set are read from the data and marked
        ``"from_data": true``; fitting refuses such a schema until the user confirms or
        replaces each entry.  Cells that are empty or one of :data:`DEFAULT_MISSING_VALUES`
        are missing: a column holding some gets ``"missing": "level"`` (a public missing
        level), with a warning.  A column that cannot be typed (every cell missing, numbers
        mixed with other text, or more than ``max_levels`` distinct texts) gets an
        ``"unresolved"`` entry, which every fit refuses until it is declared or removed, with
        a warning.  A numeric column's step is its recorded resolution (``10^-d`` for values
        written with d decimals), so no value is rounded, unless that grid would exceed
        :data:`PROPOSE_MAX_GRID` points: then a coarser round step is proposed and a warning
        names the column and the rounding.  The warnings name columns and rules only.
        """
        df = read_csv(data) if isinstance(data, (str, Path)) else data.astype(str)
        df = df.apply(lambda s: s.str.strip())
        if target not in df.columns:
            raise TableInputError(f"the target column {target!r} is not in the table "
                                  f"(columns: {list(map(str, df.columns))})")
        tokens = set(DEFAULT_MISSING_VALUES) | {""}
        if df[target].isin(tokens).any():
            raise TableInputError(f"the target column {target!r} has missing cells; a fit "
                                  "refuses them (remove those records first)")
        labels = sorted(df[target].unique().tolist())
        if len(labels) != 2:
            raise TableInputError(f"the target column {target!r} must hold exactly two labels "
                                  "(it does not; its labels are not shown: they are data)")
        cols: list[Column] = []
        warns: list[str] = []
        for name in df.columns:
            if name == target:
                continue
            s = df[name]
            miss = s.isin(tokens)
            s = s[~miss]
            missing = "level" if miss.any() else "refuse"
            if missing == "level" and len(s):
                warns.append(f"column {name!r} has missing cells (empty or a missing-value "
                             "token): proposed \"missing\": \"level\" (a public extra "
                             "'missing' feature); declare {\"fill\": <public value>} or "
                             "\"refuse\" instead if you prefer")
            if not len(s):
                cols.append(Column(str(name), "unresolved", from_data=True,
                                   note="every cell is missing"))
                warns.append(f"column {name!r}: every cell is missing; it cannot be typed "
                             "(marked \"unresolved\")")
                continue
            num = pd.to_numeric(s, errors="coerce")
            isnum = num.notna() & np.isfinite(num.to_numpy(dtype=float, na_value=np.nan))
            if isnum.all():
                col, warn = _propose_numeric(str(name), s, num, missing)
                cols.append(col)
                warns.extend([warn] if warn else [])
            elif isnum.any():
                cols.append(Column(str(name), "unresolved", from_data=True,
                                   note="numbers mixed with other text"))
                warns.append(f"column {name!r}: numbers mixed with text that is not a "
                             "missing-value token; it cannot be typed (marked \"unresolved\"): "
                             "declare it numeric (with a 'missing' policy or the schema's "
                             "missing_values) or categorical")
            else:
                levels = sorted(s.unique().tolist())
                if len(levels) > max_levels:
                    cols.append(Column(str(name), "unresolved", from_data=True,
                                       note=f"more than {max_levels} distinct texts"))
                    warns.append(f"column {name!r}: more than {max_levels} distinct texts "
                                 "(marked \"unresolved\"): declare its public levels, or "
                                 "remove it and fit with --ignore-extra")
                    continue
                cols.append(Column(str(name), "categorical", levels=tuple(levels),
                                   from_data=True, missing=missing))
        note = FROM_DATA_NOTE
        if any(c.kind == "unresolved" for c in cols):
            note += (" Columns marked \"unresolved\" could not be typed: declare or remove "
                     "them (fit refuses them).")
        return cls(columns=tuple(cols), target=target, labels=(labels[0], labels[1]),
                   target_from_data=True, note=note), warns

    # --- checking and encoding ------------------------------------------------------------

    def problems(self, df: pd.DataFrame, *, with_target: bool = False,
                 ignore_extra: bool = True) -> list[str]:
        """Every way ``df`` violates the schema, by column and rule (no values, no rows).
        With ``ignore_extra=False``, columns the schema does not mention are one of them."""
        if not isinstance(df, pd.DataFrame):
            return [f"expected a pandas DataFrame with named columns, got {type(df).__name__}"]
        return [msg for _, msg in self._scan(df, with_target=with_target,
                                             ignore_extra=ignore_extra)[0]]

    def _scan(self, df: pd.DataFrame, *, with_target: bool, codes: bool = False,
              adjusted: dict[str, dict[str, int]] | None = None, ignore_extra: bool = True,
              ) -> tuple[list[tuple[tuple[int, int], str]], NDArray[np.int64] | None,
                         NDArray[np.int8] | None]:
        """The problems of ``df``, each with its rank (column, rule), in the order listed.

        Every rule is a property of single cells (or of the header), so the problems of a
        table are the union of the problems of its chunks, sorted by rank.  With
        ``codes=True`` and no problem, also the integer code of every cell (one column per
        schema column, see :meth:`_decode`) and, with ``with_target``, the index of every
        label in ``labels``; otherwise ``None``.

        ``adjusted`` (a dict, prediction only) switches on the prediction policy: a number
        outside its bounds is clipped to them, an unknown level (or a missing cell of a
        categorical column whose policy is "refuse") gets code -1 (an all-zero one-hot), and
        the number of affected rows is added to ``adjusted[column][rule]``.
        """
        found: list[tuple[tuple[int, int], str]] = []
        present = set(map(str, df.columns))
        needed = [c.name for c in self.columns if c.kind != "unresolved"]
        needed += [self.target] if with_target else []
        absent = [n for n in needed if n not in present]
        if absent:
            found.append(((-1, 0), f"missing column(s): {', '.join(map(repr, absent))}"))
        if not ignore_extra:
            known = {c.name for c in self.columns} | {self.target}
            extra = [str(c) for c in df.columns if str(c) not in known]
            if extra:
                found.append(((-1, 1), f"column(s) {', '.join(map(repr, extra))} are not in the "
                                       "schema (refused so that no column is left out by "
                                       "mistake: add them to the schema, or pass "
                                       "--ignore-extra / ignore_extra=True to leave them out)"))
        lenient = adjusted is not None
        n = len(df)
        out = np.empty((n, len(self.columns)), dtype=np.int64) if codes and not absent else None

        def count(name: str, rule: str, k: int) -> None:
            if adjusted is not None and k:
                adjusted.setdefault(name, {}).setdefault(rule, 0)
                adjusted[name][rule] += k

        for i, c in enumerate(self.columns):
            if c.kind == "unresolved":
                found.append(((i, 0), f"column {c.name!r}: its type is unresolved (schema "
                                      "inference could not decide it); declare it or remove it"))
                continue
            if c.name not in present:
                continue
            cells = _Cells(df[c.name])
            tokens = sorted(set(self.missing_values) - set(c.levels or ()))
            miss_u = (cells.text.isin(tokens) | (cells.text == "")).to_numpy(dtype=bool)
            miss = cells.per_row(miss_u) | cells.nan
            code = np.zeros(n, dtype=np.int64)
            if miss.any():
                if c.missing == "level":
                    code[miss] = c.n_values
                elif c.missing == "fill":
                    code[miss] = self._code_of(c, c.fill)
                elif lenient and c.kind == "categorical":
                    code[miss] = -1
                    count(c.name, "missing", int(miss.sum()))
                else:
                    found.append(((i, 0), f"column {c.name!r}: missing values (an empty cell, "
                                          "NaN or one of the schema's missing_values) are not "
                                          "allowed: the schema declares no 'missing' policy for "
                                          "it (\"level\" or {\"fill\": ...})"))
            ok = ~miss
            if c.kind == "categorical":
                idx = cells.per_row(pd.Index(c.levels).get_indexer(cells.text))
                unknown = ok & (idx < 0)
                if unknown.any():
                    if lenient:
                        count(c.name, "unknown level", int(unknown.sum()))
                    else:
                        found.append(((i, 1), f"column {c.name!r}: values must be one of the "
                                              f"{len(c.levels or ())} declared levels (unknown "
                                              "level found)"))
                code[ok] = idx[ok]  # -1 for an unknown level
            else:
                num_u = pd.to_numeric(cells.raw, errors="coerce").to_numpy(dtype=float,
                                                                           na_value=np.nan)
                num = cells.per_row(num_u)
                bad = ok & ~np.isfinite(num)
                if bad.any():
                    found.append(((i, 1), f"column {c.name!r}: values must be finite numbers"))
                good = ok & ~bad
                x = num[good]
                outside = (x < c.lower) | (x > c.upper)
                if outside.any():
                    if lenient:
                        count(c.name, "clipped", int(outside.sum()))
                        x = np.clip(x, c.lower, c.upper)
                    else:
                        found.append(((i, 2), f"column {c.name!r}: values must lie in "
                                              f"[{c.lower:g}, {c.upper:g}] (declared public "
                                              "bounds; nothing is clipped)"))
                code[good] = self._codes_of_numbers(c, x)
            if out is not None:
                out[:, i] = code
        y_idx = None
        if with_target and self.target in present:
            cells = _Cells(df[self.target])
            lab = cells.per_row(pd.Index(self.labels).get_indexer(cells.text))
            if cells.nan.any() or (lab < 0).any():
                found.append(((len(self.columns), 0), f"target {self.target!r}: values must be "
                                                      f"one of the declared labels "
                                                      f"{list(self.labels)}"))
            else:
                y_idx = lab.astype(np.int8)
        if found or out is None:
            return found, None, None
        return found, out, y_idx

    @staticmethod
    def _codes_of_numbers(c: Column, x: NDArray[np.float64]) -> NDArray[np.int64]:
        """Codes of numbers within ``c``'s bounds: the grid index (rounded half to even; the
        clip guards float ties only) or the number of bin cut points <= x."""
        if c.step is not None:
            return np.clip(np.rint((x - c.lower) / c.step), 0, c.K).astype(np.int64)
        return np.searchsorted(np.array(c.bins), x, side="right").astype(np.int64)

    def _code_of(self, c: Column, value: Any) -> int:
        """The code of one declared public value (a fill value)."""
        if c.kind == "categorical":
            return (c.levels or ()).index(value)
        return int(self._codes_of_numbers(c, np.array([float(value)]))[0])

    def _decode(self, codes: NDArray[np.int64]) -> NDArray[np.float64]:
        """Encoded rows from cell codes (see :meth:`_scan`): one-hot (code -1: all zero),
        ``k/K``, thermometer, the missing indicator, the intercept feature; each divided by
        ``row_divisor``."""
        n = codes.shape[0]
        m = self.row_divisor
        X = np.zeros((n, self.n_features))
        j = 0
        rows = np.arange(n)
        for i, c in enumerate(self.columns):
            code = codes[:, i]
            if c.kind == "categorical":  # the missing level is the last one-hot position
                valid = code >= 0
                X[rows[valid], j + code[valid]] = 1.0 / m
            elif c.kind == "numeric":
                present = code < c.n_values
                if c.step is not None:
                    X[:, j] = np.where(present, code, 0).astype(np.float64) / (c.K * m)
                else:
                    B = len(c.bins or ())
                    X[:, j:j + B] = ((np.arange(B)[None, :] < code[:, None])
                                     & present[:, None]) / m
                if c.missing_level:
                    X[:, j + c.width - 1] = (~present) / m
            j += c.width
        if self.intercept:
            X[:, j] = 1.0 / m
        return X

    def check(self, df: pd.DataFrame, *, with_target: bool = False,
              ignore_extra: bool = True) -> None:
        """Raise one BoundsViolation listing every problem of ``df``."""
        probs = self.problems(df, with_target=with_target, ignore_extra=ignore_extra)
        if probs:
            raise _table_violation(probs)

    def encode(self, df: pd.DataFrame, *, on_unknown: str = "refuse") -> NDArray[np.float64]:
        """Check ``df`` then encode it (see the module docstring).

        ``on_unknown="refuse"`` (default; always for training): any value outside the schema
        raises one BoundsViolation.  ``"clip"`` is the prediction policy of
        :meth:`encode_for_prediction` (with its warning).
        """
        if on_unknown == "clip":
            return self.encode_for_prediction(df)[0]
        if on_unknown != "refuse":
            raise ValueError(f"on_unknown must be 'refuse' or 'clip', got {on_unknown!r}")
        if not isinstance(df, pd.DataFrame):
            self.check(df)
        found, codes, _ = self._scan(df, with_target=False, codes=True)
        if found or codes is None:
            raise _table_violation([msg for _, msg in found])
        return self._decode(codes)

    def encode_for_prediction(self, df: pd.DataFrame, *, warn: bool = True,
                              ) -> tuple[NDArray[np.float64], dict[str, dict[str, int]]]:
        """Encode rows to PREDICT on, by the prediction policy; returns ``(X, adjusted)``.

        Predicting is post-processing of a released model, so rows outside the training
        schema need not be refused: a number outside ``[lower, upper]`` is clipped to the
        public bounds, and an unknown level (or a missing cell of a categorical column
        without a 'missing' policy) is encoded as an all-zero one-hot.  ``adjusted`` counts
        the affected rows per column and rule (never a row or a value); with ``warn`` a
        :class:`~oracledp.errors.PredictionPolicyWarning` says the same.  Still refused (one
        BoundsViolation): a missing column, text or inf in a numeric column, and a missing
        number in a column without a 'missing' policy.
        """
        if not isinstance(df, pd.DataFrame):
            self.check(df)
        adjusted: dict[str, dict[str, int]] = {}
        found, codes, _ = self._scan(df, with_target=False, codes=True, adjusted=adjusted)
        if found or codes is None:
            raise _table_violation([msg for _, msg in found])
        if warn and adjusted:
            import warnings

            from oracledp.errors import PredictionPolicyWarning

            warnings.warn(describe_adjusted(adjusted, len(df)), PredictionPolicyWarning,
                          stacklevel=2)
        return self._decode(codes), adjusted

    def labels_of(self, df: pd.DataFrame) -> NDArray[np.object_]:
        """The target column as strings, checked against the declared labels (the feature
        columns are checked where they are encoded)."""
        if not isinstance(df, pd.DataFrame) or self.target not in set(map(str, df.columns)):
            raise BoundsViolation(f"the table does not fit the schema: missing column(s): "
                                  f"{self.target!r}.")
        cells = _Cells(df[self.target])
        lab = cells.per_row(pd.Index(self.labels).get_indexer(cells.text))
        if cells.nan.any() or (lab < 0).any():
            raise BoundsViolation(f"the table does not fit the schema: target {self.target!r}: "
                                  f"values must be one of the declared labels "
                                  f"{list(self.labels)}.")
        return np.asarray(self.labels, dtype=object)[lab]


def describe_adjusted(adjusted: dict[str, dict[str, int]], n_rows: int,
                      strict_hint: str = "use on_unknown='refuse'") -> str:
    """One sentence counting the rows the prediction policy encoded, by column and rule;
    ``strict_hint`` says how to refuse such rows instead (the option's spelling)."""
    what = {"clipped": "clipped to the public bounds",
            "unknown level": "with an unknown level, encoded as all zeros",
            "missing": "missing, encoded as all zeros"}
    parts = [f"{name}: {k:,} row(s) {what[rule]}"
             for name, rules in adjusted.items() for rule, k in rules.items()]
    return (f"of {n_rows:,} row(s) to predict, the prediction policy encoded values outside "
            f"the training schema ({'; '.join(parts)}). Predictions on such rows are post-processing "
            f"and do not affect the training guarantee; {strict_hint} to refuse them instead.")


def _table_violation(problems: list[str]) -> BoundsViolation:
    """The one error listing every problem of a table (by column and rule, never a value)."""
    return BoundsViolation(
        "the table does not fit the schema: " + "; ".join(problems)
        + ". Fix the data or the schema (no value is clipped, dropped or guessed)."
    )


class _Cells:
    """The cells of one column, for rules that look at one cell at a time.

    A column of strings (what :func:`read_csv` gives) is reduced to its distinct values,
    each rule is evaluated once per distinct value and mapped back with :meth:`per_row`;
    any other column is taken cell by cell.  ``raw``: the values as given; ``text``: as
    stripped strings (``astype(str).str.strip()``); ``nan``: the cells that are NaN;
    ``na``: missing (NaN or empty after stripping); ``ok``: the others.
    """

    def __init__(self, s: pd.Series) -> None:
        inv, uniq = pd.factorize(s, use_na_sentinel=True)
        if len(uniq) and (isinstance(s.dtype, pd.StringDtype) or (
                s.dtype == object and all(isinstance(u, str) for u in uniq))):
            self.raw = pd.Series(uniq, dtype=s.dtype)
            self.text = self.raw.str.strip()
            self._inv: NDArray[np.intp] | None = np.where(inv < 0, 0, inv)
            self.nan = inv < 0
            empty = (self.text == "").to_numpy(dtype=bool)
            self.na = self.nan | empty[self._inv]
        else:
            self.raw = s.reset_index(drop=True)
            self.text = self.raw.astype(str).str.strip()
            self._inv = None
            self.nan = self.raw.isna().to_numpy(dtype=bool)
            self.na = self.nan | (self.text == "").to_numpy(dtype=bool)
        self.ok = ~self.na

    def per_row(self, values: Any) -> NDArray[Any]:
        """``values`` (one per entry of ``raw``) for every cell."""
        arr = np.asarray(values)
        return arr if self._inv is None else arr[self._inv]


#: The largest grid :meth:`TableSchema.infer` proposes without rounding the recorded values.
PROPOSE_MAX_GRID = 1000


def _decimals(texts: pd.Series) -> int:
    """The most decimals any of ``texts`` (numbers as written) carries."""
    d = 0
    for t in pd.unique(texts):
        try:
            exp = Decimal(str(t)).as_tuple().exponent
        except InvalidOperation:
            continue
        if isinstance(exp, int) and exp < 0:
            d = max(d, -exp)
    return d


def _propose_numeric(name: str, texts: pd.Series, num: pd.Series, missing: str,
                     ) -> tuple[Column, str | None]:
    """A gridded numeric column for the recorded values, and a warning if it rounds them."""
    dec = min(_decimals(texts), 12)
    fine = Fraction(1, 10**dec)
    lo = Fraction(str(float(num.min()))).limit_denominator(10**dec)
    hi = Fraction(str(float(num.max()))).limit_denominator(10**dec)
    if hi == lo:
        hi = lo + fine
    K = (hi - lo) / fine
    warn = None
    if K <= PROPOSE_MAX_GRID:
        step, lower, upper = fine, lo, hi
    else:
        step = Fraction(_nice_step(float((hi - lo) / PROPOSE_MAX_GRID))).limit_denominator(
            10**dec)
        lower = math.floor(lo / step) * step
        upper = lower + math.ceil((hi - lower) / step) * step
        warn = (f"column {name!r}: values are recorded to {float(fine):g}, an exact grid would "
                f"have {int(K):,} points; the proposed step {float(step):g} ROUNDS them (by at "
                f"most {float(step) / 2:g}). A finer step is allowed (up to {MAX_GRID:,} points) "
                "but makes the exact oracle's problem (opdisc, rspm) larger")
    return Column(name, "numeric", lower=float(lower), upper=float(upper), step=float(step),
                  from_data=True, missing=missing), warn


def _nice_step(x: float) -> float:
    """A round step (1, 2 or 5 times a power of ten) >= x."""
    if x <= 0:
        return 1.0
    e = math.floor(math.log10(x))
    for f in (1, 2, 5, 10):
        s = float(Fraction(f) * Fraction(10) ** e)
        if s >= x * (1 - 1e-12):
            return s
    return float(10 ** (e + 1))


class SchemaTransformer(TransformerMixin, BaseEstimator):
    """scikit-learn transformer encoding a DataFrame by a public :class:`TableSchema`.

    ``fit`` reads nothing from the data: it refuses an unconfirmed schema (any
    ``from_data`` entry, any unresolved column) and checks ``X`` against it; ``fit_transform``
    encodes the training rows with the same strict checks.  ``transform`` encodes rows to
    predict on (one-hot, exact grid ``k/K``, thermometer bins, missing indicators, the
    intercept feature, ``row_divisor``) by ``on_unknown``: ``"clip"`` (default) applies the
    prediction policy of :meth:`TableSchema.encode_for_prediction` (numbers clipped to the
    public bounds, unknown levels all-zero, a
    :class:`~oracledp.errors.PredictionPolicyWarning` counting the rows), ``"refuse"``
    raises one BoundsViolation listing every problem.  Training data are never clipped.
    Output: a float numpy array whose columns are ``get_feature_names_out()`` and whose
    public feature schema is ``schema.feature_schema()``.
    """

    def __init__(self, schema: TableSchema, on_unknown: str = "clip") -> None:
        self.schema = schema
        self.on_unknown = on_unknown

    def _schema(self) -> TableSchema:
        if not isinstance(self.schema, TableSchema):
            raise TypeError(f"schema must be a TableSchema, got {type(self.schema).__name__}")
        if self.on_unknown not in ("clip", "refuse"):
            raise ValueError(f"on_unknown must be 'clip' or 'refuse', got {self.on_unknown!r}")
        return self.schema

    def fit(self, X: pd.DataFrame, y: Any = None) -> SchemaTransformer:
        schema = self._schema()
        schema.check_confirmed()
        schema.check(X)
        self.n_features_in_ = X.shape[1]
        self.feature_names_in_ = np.asarray(list(map(str, X.columns)), dtype=object)
        return self

    def fit_transform(self, X: pd.DataFrame, y: Any = None, **fit_params: Any,
                      ) -> NDArray[np.float64]:
        """Fit, then encode the training rows strictly (nothing clipped)."""
        self.fit(X, y)
        return self._schema().encode(X)

    def transform(self, X: pd.DataFrame) -> NDArray[np.float64]:
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "n_features_in_")
        schema = self._schema()
        if self.on_unknown == "refuse":
            return schema.encode(X)
        return schema.encode_for_prediction(X)[0]

    def get_feature_names_out(self, input_features: Any = None) -> NDArray[np.object_]:
        return np.asarray(self._schema().feature_names, dtype=object)


# --- CSV reading ---------------------------------------------------------------------------


#: Rows per chunk of :func:`read_csv_aggregated` (a chunk of strings takes roughly
#: rows x columns x 60 bytes; the distinct rows found so far are kept besides).
CHUNK_ROWS = 100_000
_BLOCK = 1 << 16  # characters per read of the file-level pre-scan
_PARSE: dict[str, Any] = {"dtype": str, "keep_default_na": False, "skipinitialspace": True}


def _source_label(source: str | Path | bytes) -> str:
    return "the input" if isinstance(source, bytes) else str(source)


@contextlib.contextmanager
def _text_stream(source: str | Path | bytes, label: str) -> Iterator[io.TextIOWrapper]:
    """The CSV as UTF-8 text, read lazily (never held whole): gunzipped if it starts with the
    gzip magic bytes, a leading byte-order mark dropped.  Decoding and gzip errors met while
    reading raise :class:`TableInputError`."""
    with contextlib.ExitStack() as stack:
        raw: IO[bytes]
        if isinstance(source, bytes):
            raw = io.BytesIO(source)
        else:
            try:
                raw = stack.enter_context(open(source, "rb"))
            except OSError as exc:
                raise TableInputError(f"{label}: cannot read the file ({exc.strerror})") from None
        try:
            gz = raw.read(2) == b"\x1f\x8b"
            raw.seek(0)
        except OSError as exc:
            raise TableInputError(f"{label}: cannot read the file ({exc.strerror})") from None
        if gz:
            raw = stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="strict", newline="")
        try:
            yield text
        except UnicodeDecodeError:
            raise TableInputError(f"{label}: the file is not UTF-8 text; re-save it as UTF-8 "
                                  "(e.g. from a spreadsheet: CSV UTF-8)") from None
        except (OSError, EOFError, zlib.error) as exc:
            if gz:
                raise TableInputError(f"{label}: not a readable gzip file") from None
            if isinstance(exc, OSError):
                raise TableInputError(f"{label}: cannot read the file ({exc.strerror})"
                                      ) from None
            raise


def _prescan(source: str | Path | bytes, label: str) -> None:
    """The file-level checks, in one streaming pass: readable (and gunzippable), UTF-8 from
    start to end, not blank.  Run before parsing, so these refusals do not depend on where
    in the file the problem is."""
    blank = True
    with _text_stream(source, label) as fh:
        while block := fh.read(_BLOCK):
            if blank and block.strip():
                blank = False
    if blank:
        raise TableInputError(f"{label}: the file is empty (expected a header line and rows)")


def _parse_error(label: str, sep: str, exc: Exception) -> TableInputError:
    first = str(exc).splitlines()[0] if str(exc) else "parse error"
    return TableInputError(f"{label}: cannot parse as CSV with delimiter {sep!r} "
                           f"({first.split(':')[0]})")


def _check_header(columns: list[str], schema: TableSchema | None, with_target: bool,
                  sep: str, label: str) -> None:
    """A header that parsed into one column where the schema expects more: wrong delimiter."""
    if schema is None:
        return
    expected = len(schema.columns) + (1 if with_target else 0)
    if len(columns) == 1 and expected > 1:
        guess = next((d for d in (";", "\t", "|", ",") if d != sep and d in columns[0]), None)
        hint = f" (the header contains {guess!r}: try --sep {guess!r})" if guess else ""
        raise TableInputError(
            f"{label}: the file parsed into a single column with delimiter {sep!r}, but the "
            f"schema expects {expected} columns; is the delimiter right?{hint}")


def _no_rows(label: str) -> TableInputError:
    return TableInputError(f"{label}: the file has a header but no rows")


def read_csv(source: str | Path | bytes, schema: TableSchema | None = None, *,
             sep: str = ",", with_target: bool = False, ignore_extra: bool = True,
             check: bool = True) -> pd.DataFrame:
    """Read a CSV as strings; with ``schema``, check it and raise ONE error listing every problem.

    File-level problems (unreadable, empty, non-UTF-8, wrong delimiter) raise
    :class:`TableInputError`; values outside the schema raise BoundsViolation (``check=False``
    leaves the values to the caller, e.g. the prediction policy); with
    ``ignore_extra=False`` columns the schema does not mention are refused.  The file is
    streamed into the table (its bytes and text are never held whole besides it); for a
    table too large for memory see :func:`read_csv_aggregated`.
    """
    label = _source_label(source)
    _prescan(source, label)
    with _text_stream(source, label) as fh:
        try:
            df = pd.read_csv(fh, sep=sep, **_PARSE)
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise _parse_error(label, sep, exc) from None
    df.columns = [str(c).strip() for c in df.columns]
    _check_header(list(df.columns), schema, with_target, sep, label)
    if len(df) == 0:
        raise _no_rows(label)
    if schema is not None and check:
        schema.check(df, with_target=with_target, ignore_extra=ignore_extra)
    return df


# --- aggregated reading: memory grows with the distinct rows, not with the records ----------


@dataclass(frozen=True, eq=False)
class AggregatedTable:
    """A labelled table reduced to its distinct encoded rows (see :func:`read_csv_aggregated`).

    ``codes`` (g, number of schema columns): the cell codes of each distinct row (level
    index, grid index ``k`` or number of bin cut points below the value), which
    :meth:`features` encodes exactly as :meth:`TableSchema.encode` encodes the records;
    ``counts`` (g, 2): how many records with that row carry ``schema.labels[0]`` and
    ``schema.labels[1]``.  No record order, no value off the schema's public grids.
    """

    schema: TableSchema
    codes: NDArray[np.int64]
    counts: NDArray[np.int64]

    @property
    def n(self) -> int:
        """The number of records (public, as in every fit here: it sets delta = 1/n^2)."""
        return int(self.counts.sum())

    @property
    def n_groups(self) -> int:
        return int(self.codes.shape[0])

    def features(self) -> NDArray[np.float64]:
        """The distinct encoded rows, shape (g, ``schema.n_features``)."""
        return self.schema._decode(self.codes)


class _RowCounter:
    """Label counts per distinct row of cell codes, merged chunk by chunk.

    A row of codes is packed into as few int64 words as keep each word's range below 2**62
    (one word for usual schemas), so rows are compared as integers.
    """

    def __init__(self, cards: list[int]) -> None:
        self.cards = cards
        self.words: list[list[int]] = [[]]
        prod = 1
        for j, k in enumerate(cards):
            if self.words[-1] and prod * k >= 2**62:
                self.words.append([])
                prod = 1
            self.words[-1].append(j)
            prod *= k
        self.keys = np.empty((0, len(self.words)), dtype=np.int64)
        self.counts = np.empty((0, 2), dtype=np.int64)
        self._pending: list[tuple[NDArray[np.int64], NDArray[np.int64]]] = []
        self._pending_rows = 0

    def _pack(self, codes: NDArray[np.int64]) -> NDArray[np.int64]:
        out = np.zeros((codes.shape[0], len(self.words)), dtype=np.int64)
        for w, cols in enumerate(self.words):
            for j in cols:
                out[:, w] *= self.cards[j]
                out[:, w] += codes[:, j]
        return out

    def _unpack(self, keys: NDArray[np.int64]) -> NDArray[np.int64]:
        out = np.empty((keys.shape[0], len(self.cards)), dtype=np.int64)
        for w, cols in enumerate(self.words):
            key = keys[:, w].copy()
            for j in reversed(cols):
                key, out[:, j] = np.divmod(key, self.cards[j])
        return out

    @staticmethod
    def _unique(keys: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.intp]]:
        if keys.shape[1] == 1:
            u, inv = np.unique(keys[:, 0], return_inverse=True)
            return u[:, None], inv.ravel()
        u, inv = np.unique(keys, axis=0, return_inverse=True)
        return u, inv.ravel()

    def add(self, codes: NDArray[np.int64], labels: NDArray[np.int8]) -> None:
        keys, inv = self._unique(self._pack(codes))
        counts = np.bincount(inv * 2 + labels, minlength=2 * len(keys)).reshape(-1, 2)
        self._pending.append((keys, counts.astype(np.int64)))
        self._pending_rows += len(keys)
        if self._pending_rows > max(len(self.keys), 1 << 20):
            self._merge()

    def _merge(self) -> None:
        if not self._pending:
            return
        keys = np.concatenate([self.keys, *(k for k, _ in self._pending)])
        counts = np.concatenate([self.counts, *(c for _, c in self._pending)])
        self._pending, self._pending_rows = [], 0
        self.keys, inv = self._unique(keys)
        del keys
        self.counts = np.zeros((len(self.keys), 2), dtype=np.int64)
        np.add.at(self.counts, inv, counts)

    def result(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        self._merge()
        return self._unpack(self.keys), self.counts


def _cardinalities(schema: TableSchema) -> list[int]:
    """How many codes each column can take (public: from the schema alone)."""
    return [max(c.n_values + c.missing_level, 1) for c in schema.columns]


def read_csv_aggregated(source: str | Path | bytes, schema: TableSchema, *, sep: str = ",",
                        chunksize: int | None = None,
                        ignore_extra: bool = True) -> AggregatedTable:
    """Read, check and encode a labelled CSV chunk by chunk, keeping only its distinct
    encoded rows with their label counts.

    The refusals are those of ``read_csv(source, schema, with_target=True)`` followed by
    encoding: file-level problems raise :class:`TableInputError`, and every violation of the
    schema anywhere in the file is listed in ONE BoundsViolation, by column and rule (never a
    value or a row), after the whole file was checked and before anything random can
    happen.  Memory holds one chunk of ``chunksize`` rows plus the distinct rows, whatever
    the number of records (``chunksize`` None: :data:`CHUNK_ROWS`).
    """
    if not isinstance(schema, TableSchema):
        raise TypeError(f"schema must be a TableSchema, got {type(schema).__name__}")
    if chunksize is None:
        chunksize = CHUNK_ROWS
    if isinstance(chunksize, bool) or not isinstance(chunksize, int) or chunksize < 1:
        raise ValueError(f"chunksize must be an integer >= 1, got {chunksize!r}")
    label = _source_label(source)
    _prescan(source, label)
    counter: _RowCounter | None = _RowCounter(_cardinalities(schema))
    found: dict[tuple[int, int], str] = {}
    n = 0
    with _text_stream(source, label) as fh:
        try:
            chunks = pd.read_csv(fh, sep=sep, chunksize=chunksize, **_PARSE)
            for i, chunk in enumerate(chunks):
                chunk.columns = [str(c).strip() for c in chunk.columns]
                if i == 0:
                    _check_header(list(chunk.columns), schema, True, sep, label)
                n += len(chunk)
                items, codes, y_idx = schema._scan(chunk, with_target=True,
                                                   codes=counter is not None,
                                                   ignore_extra=ignore_extra)
                found.update(items)
                if found:
                    counter = None  # nothing will be fitted: only the checks go on
                elif counter is not None and codes is not None and y_idx is not None:
                    counter.add(codes, y_idx)
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise _parse_error(label, sep, exc) from None
    if n == 0:
        raise _no_rows(label)
    if found or counter is None:
        raise _table_violation([found[k] for k in sorted(found)])
    codes, counts = counter.result()
    return AggregatedTable(schema=schema, codes=codes, counts=counts)


def fit_aggregated(estimator: Any, table: AggregatedTable) -> Any:
    """Fit an OPDisc or RSPM classifier on an :class:`AggregatedTable`.

    Exactly ``estimator.fit(X, y)`` on the full encoded table (``X = schema.encode(df)``,
    ``y = schema.labels_of(df)``): the same checks in the same order, all before any noise;
    delta = 1/n^2 with n the number of records; the same exact problem (built by
    :meth:`~oracledp.oracles.HalfspaceProblem.from_counts`), hence the same release for the
    same ``random_state``; the same fitted attributes.  Memory grows with the distinct rows.
    Returns the estimator.
    """
    from oracledp.estimators import OPDiscClassifier
    from oracledp.estimators._base import map_binary_labels
    from oracledp.oracles.halfspace import HalfspaceProblem

    est = estimator
    if not isinstance(est, OPDiscClassifier):
        raise TypeError("fit_aggregated fits an OPDiscClassifier or RSPMClassifier (the models "
                        f"of the exact 0/1-loss problem), got {type(est).__name__}")
    if not isinstance(table, AggregatedTable):
        raise TypeError(f"table must be an AggregatedTable, got {type(table).__name__}")
    # 1. Parameters: the estimator's own checks (no data, no randomness yet).
    params = est._start_fit()

    # 2. Labels: the estimator's own mapping, on the labels that occur (one of each).
    labels = np.array(table.schema.labels, dtype=object)
    present = labels[table.counts.sum(axis=0) > 0]
    classes, _ = map_binary_labels(present, est.classes, type(est).__name__)
    plus = table.schema.labels.index(str(classes[1]))
    n_pos, n_neg = table.counts[:, plus], table.counts[:, 1 - plus]
    n, d = table.n, table.schema.n_features

    def build(space: Any, schema: Any, grid: Any) -> HalfspaceProblem:
        # the exact problem from the distinct rows (the rows are freed once encoded)
        return HalfspaceProblem.from_counts(est._transform(table.features(), grid, schema),
                                            n_pos, n_neg, space, schema=schema)

    # 3-4. The estimator's own problem-and-release steps.
    est._fit_problem(params, n, d, classes, build)
    est.n_features_in_ = d
    return est


# --- saved models --------------------------------------------------------------------------

MODEL_TYPES = ("opdisc", "rspm", "opsamp", "dpsgd", "accuracy-first")

MODEL_FORMAT_VERSION = 2
"""The ``format_version`` that :func:`save_model` writes.  :func:`load_model` reads it and
version 1 (written before schemas had the intercept feature: its schema has no
``"intercept"`` key and is read with ``intercept`` False, so its coefficients keep their
meaning); a file without a version, or with another one, is refused with a message to fit
the model again."""

READABLE_MODEL_VERSIONS = (1, 2)

_MODEL_KEYS = frozenset({"format", "format_version", "model", "schema", "params", "guarantee",
                         "classes", "feature_names", "coef", "intercept"})

#: What each model type releases: (guarantee kind, proof assumes an exact oracle,
#: may have a non-zero intercept).  A file that disagrees was not written by that model.
_MODEL_RULES: dict[str, tuple[str, bool, bool]] = {
    "opdisc": ("approximate", True, False),
    "rspm": ("pure", True, False),
    "opsamp": ("approximate", False, False),
    "dpsgd": ("approximate", False, True),
    "accuracy-first": ("ex-post", False, False),
}

#: The fields of ``PrivacyGuarantee.to_dict()`` and their exact JSON types.
_GUARANTEE_FIELDS: dict[str, type] = {
    "epsilon": float, "delta": float, "kind": str, "requires_exact_oracle": bool,
    "source": str, "neighbouring": str, "holds": bool, "notes": str, "numerics": str,
    "diagnostics_released": bool, "calibration": str,
}


class ModelFileError(TableInputError):
    """A ``model.json`` that is not a valid model of the current format (tampered, truncated,
    written by another version or by hand).  Nothing of it is used."""


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


def _parse_guarantee(g: Any) -> Any:
    """The saved guarantee as a PrivacyGuarantee; every field present with its exact type."""
    from oracledp.guarantees import GuaranteeKind, PrivacyGuarantee

    if not isinstance(g, dict):
        raise ValueError("'guarantee' must be a JSON object")
    missing = sorted(set(_GUARANTEE_FIELDS) - set(g))
    extra = sorted(set(g) - set(_GUARANTEE_FIELDS))
    if missing or extra:
        raise ValueError("'guarantee' must have exactly the fields "
                         f"{sorted(_GUARANTEE_FIELDS)} (missing {missing}, unknown {extra})")
    for key, typ in _GUARANTEE_FIELDS.items():
        v = g[key]
        if typ is float:
            _real(v, f"guarantee '{key}'")
        elif typ is bool:
            if not isinstance(v, bool):
                raise ValueError(f"guarantee '{key}' must be true or false, got "
                                 f"{type(v).__name__}")
        elif not isinstance(v, str):
            raise ValueError(f"guarantee '{key}' must be a string, got {type(v).__name__}")
    if g["kind"] not in {str(k) for k in GuaranteeKind}:
        raise ValueError(f"guarantee 'kind' must be one of {[str(k) for k in GuaranteeKind]}")
    if not g["epsilon"] > 0:
        raise ValueError("guarantee 'epsilon' must be > 0")
    if not 0 <= g["delta"] < 1:
        raise ValueError("guarantee 'delta' must be in [0, 1)")
    if not g["source"].strip() or not g["neighbouring"].strip():
        raise ValueError("guarantee 'source' and 'neighbouring' must not be empty")
    return PrivacyGuarantee(**{k: (float(v) if _GUARANTEE_FIELDS[k] is float else v)
                               for k, v in g.items()})


def _check_params(params: Any) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise ValueError("'params' must be a JSON object")
    for k, v in params.items():
        if not _jsonable(v):
            raise ValueError(f"params {k!r}: must be null, true/false, a finite number or a "
                             "string")
    return dict(params)


def _model_from_doc(doc: Any) -> SavedModel:
    """Validate a parsed model.json (format version :data:`MODEL_FORMAT_VERSION`) strictly."""
    if not isinstance(doc, dict) or doc.get("format") != MODEL_FORMAT:
        raise ValueError("not an oracledp model file (no \"format\": \"oracledp.model\")")
    version = doc.get("format_version")
    if "format_version" not in doc:
        raise ValueError("the file has no \"format_version\" (every model oracledp writes has "
                         f"one; this oracledp reads version {MODEL_FORMAT_VERSION})")
    if type(version) is not int or version not in READABLE_MODEL_VERSIONS:
        raise ValueError(f"unsupported model format version {version!r} (this oracledp reads "
                         f"versions {', '.join(map(str, READABLE_MODEL_VERSIONS))})")
    missing = sorted(_MODEL_KEYS - set(doc))
    extra = sorted(set(doc) - _MODEL_KEYS)
    if missing or extra:
        raise ValueError(f"the model must have exactly the fields {sorted(_MODEL_KEYS)} "
                         f"(missing {missing}, unknown {extra})")
    model_type = doc["model"]
    if not isinstance(model_type, str) or model_type not in MODEL_TYPES:
        raise ValueError(f"unknown model type; expected one of {', '.join(MODEL_TYPES)}")
    kind, exact, has_intercept = _MODEL_RULES[model_type]
    if version == 1 and isinstance(doc["schema"], dict) and (
            {"intercept", "missing_values"} & set(doc["schema"])):
        raise ValueError("a version-1 model's schema has no 'intercept' or 'missing_values'")
    schema = TableSchema.from_dict(doc["schema"], default_intercept=version != 1)
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
    if intercept != 0.0 and not has_intercept:
        raise ValueError(f"'intercept' must be 0 for model {model_type!r} (it has none)")
    if model_type == "rspm" and not np.isin(coef, (-1.0, 0.0, 1.0)).all():
        raise ValueError("rspm coefficients must be -1, 0 or 1")
    classes = doc["classes"]
    if (not isinstance(classes, list) or len(classes) != 2
            or not all(isinstance(c, str) for c in classes)
            or classes != sorted(schema.labels)):
        raise ValueError("'classes' must be the saved schema's two labels, sorted "
                         f"({sorted(schema.labels)})")
    guarantee = _parse_guarantee(doc["guarantee"])
    if str(guarantee.kind) != kind or guarantee.requires_exact_oracle is not exact:
        raise ValueError(f"the guarantee does not match model {model_type!r} (expected kind "
                         f"{kind!r}, requires_exact_oracle {str(exact).lower()})")
    return SavedModel(model_type=model_type, schema=schema, params=_check_params(doc["params"]),
                      guarantee=guarantee, classes=(classes[0], classes[1]),
                      feature_names=tuple(names), coef=coef, intercept=intercept)


def save_model(directory: str | Path, *, model_type: str, schema: TableSchema,
               estimator: Any, overwrite: bool = True) -> Path:
    """Write ``directory/model.json`` (format in the module docstring); returns its path.

    The document is validated exactly as :func:`load_model` validates it before anything is
    written (a model that could not be loaded back is never saved: ValueError).  With
    ``overwrite=False`` an existing ``model.json`` is refused (FileExistsError).
    """
    if model_type not in MODEL_TYPES:
        raise ValueError(f"unknown model type {model_type!r}")
    params = {k: v for k, v in estimator.get_params(deep=False).items()
              if k not in ("random_state", "keep_diagnostics", "schema", "classes")
              and _jsonable(v)}
    coef = np.asarray(estimator.coef_, dtype=np.float64).ravel()
    doc = {
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "model": model_type,
        "schema": schema.to_dict(),
        "params": params,
        "guarantee": estimator.guarantee_.to_dict(),
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


@dataclass(frozen=True)
class SavedModel:
    """A loaded ``model.json``: the schema, the released linear model and its guarantee."""

    model_type: str
    schema: TableSchema
    params: dict[str, Any]
    guarantee: Any  # oracledp.guarantees.PrivacyGuarantee
    classes: tuple[str, str]
    feature_names: tuple[str, ...]
    coef: NDArray[np.float64]
    intercept: float

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


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise ValueError(f"keys listed twice: {dup}")
    return dict(pairs)


def load_model(path: str | Path) -> SavedModel:
    """Read a model directory (or its ``model.json``) written by :func:`save_model`.

    The file is validated strictly (see the module docstring): format and
    ``format_version`` (:data:`MODEL_FORMAT_VERSION`; absent or other versions are refused),
    exactly the known fields, a known model type, the schema, finite coefficients (one per
    encoded feature) and intercept, the schema's two labels, and a guarantee whose every
    field has its exact type and which matches the model type.  Anything else raises
    :class:`ModelFileError` (a ValueError) with one message; no part of the file is used.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "model.json"
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ModelFileError(f"{p}: cannot read the model ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ModelFileError(f"{p}: not a JSON model file (not UTF-8 text)") from None
    again = "Fit the model again with `oracledp fit` (a model file is never repaired or guessed)."
    try:
        doc = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        raise ModelFileError(f"{p}: not a valid JSON model file ({exc}). {again}") from None
    except RecursionError:
        raise ModelFileError(f"{p}: not a valid JSON model file (nested too deeply). {again}"
                             ) from None
    try:
        return _model_from_doc(doc)
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"{p}: invalid model file: {exc}. {again}") from None
