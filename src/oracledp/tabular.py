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

Every bound, level, step and label is *declared*: :meth:`TableSchema.propose` reads them
from data only as a convenience, marks each such entry ``"from_data": true`` and
:class:`SchemaTransformer` refuses to fit while any such flag remains (reading bounds or
levels from private data is not private: replace them with public values, or confirm
them by removing the flag).  :meth:`TableSchema.feature_schema` gives the public
:class:`~oracledp.oracles.FeatureSchema` of the encoded columns from the schema alone,
and :meth:`TableSchema.norm_bounds` public bounds on the rows' l1/l2/sup norms.  With
``row_divisor = m`` every encoded row is divided by the integer m (e.g. the l1 bound,
``schema.scaled_to_l1()``, so that ``||x||_1 <= 1`` as Accuracy First requires).

Bad input (missing column, missing value, text in a numeric column, unknown level, a number
outside its bounds) raises ONE :class:`~oracledp.errors.BoundsViolation` listing every
problem by column and rule, never a record value or a row number, before anything random
happens.  :func:`read_csv` adds file-level checks (empty file, non-UTF-8 bytes, wrong
delimiter) raising :class:`TableInputError`.

Saved model format (``model.json``, written by :func:`save_model`, read by
:func:`load_model`; loading needs only this file)::

    {
      "format": "oracledp.model", "format_version": 1,
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
"""

from __future__ import annotations

import io
import itertools
import json
import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, TransformerMixin

from oracledp.errors import BoundsViolation, OracleDPError

__all__ = [
    "Column",
    "SchemaTransformer",
    "TableInputError",
    "TableSchema",
    "UnconfirmedSchemaError",
    "load_model",
    "read_csv",
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


@dataclass(frozen=True)
class Column:
    """One input column: ``kind`` is ``"categorical"`` or ``"numeric"``."""

    name: str
    kind: str
    levels: tuple[str, ...] | None = None
    lower: float | None = None
    upper: float | None = None
    step: float | None = None
    bins: tuple[float, ...] | None = None
    from_data: bool = False

    def __post_init__(self) -> None:
        where = f"column {self.name!r}"
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a column name must be a non-empty string, got {self.name!r}")
        if self.kind == "categorical":
            if self.levels is None or len(self.levels) == 0:
                raise ValueError(f"{where}: a categorical column needs a non-empty 'levels' list")
            levels = tuple(str(v) for v in self.levels)
            if len(set(levels)) != len(levels):
                raise ValueError(f"{where}: 'levels' must be distinct")
            object.__setattr__(self, "levels", levels)
            if any(v is not None for v in (self.lower, self.upper, self.step, self.bins)):
                raise ValueError(f"{where}: a categorical column takes only 'levels'")
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
        else:
            raise ValueError(f"{where}: type must be 'categorical' or 'numeric', "
                             f"got {self.kind!r}")

    @property
    def K(self) -> int:
        """Grid size of a gridded numeric column (public)."""
        assert self.step is not None
        return round((self.upper - self.lower) / self.step)  # type: ignore[operator]

    @property
    def width(self) -> int:
        if self.kind == "categorical":
            return len(self.levels or ())
        return 1 if self.step is not None else len(self.bins or ())

    def output_names(self) -> list[str]:
        if self.kind == "categorical":
            return [f"{self.name}={v}" for v in self.levels or ()]
        if self.step is not None:
            return [self.name]
        return [f"{self.name}>={c:g}" for c in self.bins or ()]

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "type": self.kind}
        if self.kind == "categorical":
            d["levels"] = list(self.levels or ())
        else:
            d["lower"], d["upper"] = _plain(self.lower), _plain(self.upper)
            if self.step is not None:
                d["step"] = _plain(self.step)
            else:
                d["bins"] = [_plain(c) for c in self.bins or ()]
        if self.from_data:
            d["from_data"] = True
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Column:
        if not isinstance(d, dict):
            raise ValueError(f"each column must be a JSON object, got {type(d).__name__}")
        allowed = {"name", "type", "levels", "lower", "upper", "step", "bins", "from_data"}
        extra = sorted(set(d) - allowed)
        if extra:
            raise ValueError(f"column {d.get('name')!r}: unknown keys {extra}")
        if "name" not in d or "type" not in d:
            raise ValueError("each column needs 'name' and 'type'")
        levels = d.get("levels")
        bins = d.get("bins")
        return cls(name=d["name"], kind=d["type"],
                   levels=None if levels is None else tuple(levels),
                   lower=d.get("lower"), upper=d.get("upper"), step=d.get("step"),
                   bins=None if bins is None else tuple(bins),
                   from_data=_flag(d.get("from_data", False), d["name"]))


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
    every encoded row (public scaling).
    """

    columns: tuple[Column, ...]
    target: str
    labels: tuple[str, str]
    target_from_data: bool = False
    row_divisor: int = 1
    note: str = field(default="", compare=False)

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
        return d

    @classmethod
    def from_dict(cls, d: Any) -> TableSchema:
        if not isinstance(d, dict):
            raise ValueError("a table schema must be a JSON object")
        if d.get("format", SCHEMA_FORMAT) != SCHEMA_FORMAT:
            raise ValueError(f"not a table schema (format {d.get('format')!r})")
        if d.get("version", FORMAT_VERSION) != FORMAT_VERSION:
            raise ValueError(f"unsupported schema version {d.get('version')!r}")
        extra = sorted(set(d) - {"format", "version", "note", "target", "columns",
                                 "row_divisor"})
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
        return cls(columns=tuple(Column.from_dict(c) for c in cols), target=t["name"],
                   labels=tuple(t["labels"]),  # type: ignore[arg-type]
                   target_from_data=_flag(t.get("from_data", False), t["name"]),
                   row_divisor=d.get("row_divisor", 1), note=str(d.get("note", "")))

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

    def check_confirmed(self) -> None:
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
        return [n for c in self.columns for n in c.output_names()]

    @property
    def n_features(self) -> int:
        return sum(c.width for c in self.columns)

    def norm_bounds(self) -> dict[str, float]:
        """Public bounds on every encoded row: ``{"l1", "l2", "linf"}`` (after ``row_divisor``)."""
        l1 = sum(1 if c.kind == "categorical" or c.step is not None else c.width
                 for c in self.columns)
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
            for _ in range(c.width):
                binary.append(m == 1 and grid == 1)
                dens.append(grid * m)
        return FeatureSchema(binary=tuple(binary), denominators=tuple(dens),
                             bounds=(1.0 / m,) * len(binary), names=tuple(self.feature_names))

    # --- proposal from data (NOT private) -------------------------------------------------

    @classmethod
    def propose(cls, data: pd.DataFrame | str | Path, target: str,
                max_levels: int = 50) -> TableSchema:
        """A schema read from ``data`` (a DataFrame or a CSV path): NOT private.

        Every level, bound, step and the label set are read from the data and marked
        ``"from_data": true``; fitting refuses such a schema until the user confirms or
        replaces each entry.  Columns with more than ``max_levels`` distinct non-numeric
        values are left out (listed in the note).
        """
        df = read_csv(data) if isinstance(data, (str, Path)) else data.astype(str)
        df = df.apply(lambda s: s.str.strip())
        if target not in df.columns:
            raise TableInputError(f"the target column {target!r} is not in the table "
                                  f"(columns: {list(map(str, df.columns))})")
        labels = sorted(df[target].unique().tolist())
        if len(labels) != 2:
            raise TableInputError(f"the target column {target!r} must hold exactly two labels, "
                                  f"found {len(labels)}")
        cols: list[Column] = []
        skipped: list[str] = []
        for name in df.columns:
            if name == target:
                continue
            s = df[name]
            s = s[(s != "") & (s.str.lower() != "nan")]  # missing cells say nothing of the type
            num = pd.to_numeric(s, errors="coerce")
            if len(s) and num.notna().all():
                lo, hi = float(num.min()), float(num.max())
                if lo == hi:
                    hi = lo + 1.0
                integer = bool((num == np.round(num)).all())
                step = 1.0 if integer and hi - lo <= 200 else _nice_step((hi - lo) / 100)
                hi = lo + step * math.ceil(round((hi - lo) / step, 9))
                cols.append(Column(str(name), "numeric", lower=lo, upper=hi, step=step,
                                   from_data=True))
            else:
                levels = sorted(s.unique().tolist())
                if len(levels) > max_levels:
                    skipped.append(str(name))
                    continue
                cols.append(Column(str(name), "categorical", levels=tuple(levels),
                                   from_data=True))
        note = FROM_DATA_NOTE
        if skipped:
            note += f" Left out (more than {max_levels} levels): {', '.join(skipped)}."
        return cls(columns=tuple(cols), target=target,
                   labels=(labels[0], labels[1]), target_from_data=True, note=note)

    # --- checking and encoding ------------------------------------------------------------

    def problems(self, df: pd.DataFrame, *, with_target: bool = False) -> list[str]:
        """Every way ``df`` violates the schema, by column and rule (no values, no rows)."""
        if not isinstance(df, pd.DataFrame):
            return [f"expected a pandas DataFrame with named columns, got {type(df).__name__}"]
        out: list[str] = []
        present = set(map(str, df.columns))
        needed = [c.name for c in self.columns] + ([self.target] if with_target else [])
        missing = [n for n in needed if n not in present]
        if missing:
            out.append(f"missing column(s): {', '.join(map(repr, missing))}")
        for c in self.columns:
            if c.name not in present:
                continue
            s = df[c.name]
            na = s.isna() | (s.astype(str).str.strip() == "")
            if na.any():
                out.append(f"column {c.name!r}: missing values (NaN or empty) are not allowed")
            s = s[~na]
            if c.kind == "categorical":
                if not s.astype(str).str.strip().isin(c.levels).all():
                    out.append(f"column {c.name!r}: values must be one of the "
                               f"{len(c.levels or ())} declared levels (unknown level found)")
            else:
                num = pd.to_numeric(s, errors="coerce")
                if num.isna().any() or not np.isfinite(num.to_numpy(dtype=float)).all():
                    out.append(f"column {c.name!r}: values must be finite numbers")
                num = num[num.notna()]
                if ((num < c.lower) | (num > c.upper)).any():
                    out.append(f"column {c.name!r}: values must lie in [{c.lower:g}, "
                               f"{c.upper:g}] (declared public bounds; nothing is clipped)")
        if with_target and self.target in present:
            y = df[self.target]
            if y.isna().any() or not y.astype(str).str.strip().isin(self.labels).all():
                out.append(f"target {self.target!r}: values must be one of the declared "
                           f"labels {list(self.labels)}")
        return out

    def check(self, df: pd.DataFrame, *, with_target: bool = False) -> None:
        """Raise one BoundsViolation listing every problem of ``df``."""
        probs = self.problems(df, with_target=with_target)
        if probs:
            raise BoundsViolation(
                "the table does not fit the schema: " + "; ".join(probs)
                + ". Fix the data or the schema (no value is clipped, dropped or guessed)."
            )

    def encode(self, df: pd.DataFrame) -> NDArray[np.float64]:
        """Check ``df`` then encode it (see the module docstring)."""
        self.check(df)
        n = len(df)
        m = self.row_divisor
        blocks: list[NDArray[np.float64]] = []
        for c in self.columns:
            s = df[c.name]
            if c.kind == "categorical":
                codes = pd.Categorical(s.astype(str).str.strip(), categories=c.levels).codes
                block = np.zeros((n, c.width))
                block[np.arange(n), codes] = 1.0
                blocks.append(block / m)
            else:
                x = pd.to_numeric(s).to_numpy(dtype=np.float64)
                if c.step is not None:
                    k = np.rint((x - c.lower) / c.step)
                    k = np.clip(k, 0, c.K)  # x is within [lower, upper]: guards float ties only
                    blocks.append((k / (c.K * m)).reshape(-1, 1))
                else:
                    cuts = np.array(c.bins)
                    blocks.append((x[:, None] >= cuts[None, :]).astype(np.float64) / m)
        return np.hstack(blocks) if blocks else np.zeros((n, 0))

    def labels_of(self, df: pd.DataFrame) -> NDArray[np.object_]:
        """The target column as strings (checked against the declared labels)."""
        probs = self.problems(df, with_target=True)
        if probs:
            raise BoundsViolation("the table does not fit the schema: " + "; ".join(probs) + ".")
        return df[self.target].astype(str).str.strip().to_numpy(dtype=object)


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
    ``from_data`` entry) and checks ``X`` against it.  ``transform`` checks and encodes
    (one-hot, exact grid ``k/K``, thermometer bins, ``row_divisor``); every problem of the
    input is reported in one BoundsViolation.  Output: a float numpy array whose columns are
    ``get_feature_names_out()`` and whose public feature schema is
    ``schema.feature_schema()``.
    """

    def __init__(self, schema: TableSchema) -> None:
        self.schema = schema

    def _schema(self) -> TableSchema:
        if not isinstance(self.schema, TableSchema):
            raise TypeError(f"schema must be a TableSchema, got {type(self.schema).__name__}")
        return self.schema

    def fit(self, X: pd.DataFrame, y: Any = None) -> SchemaTransformer:
        schema = self._schema()
        schema.check_confirmed()
        schema.check(X)
        self.n_features_in_ = X.shape[1]
        self.feature_names_in_ = np.asarray(list(map(str, X.columns)), dtype=object)
        return self

    def transform(self, X: pd.DataFrame) -> NDArray[np.float64]:
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "n_features_in_")
        return self._schema().encode(X)

    def get_feature_names_out(self, input_features: Any = None) -> NDArray[np.object_]:
        return np.asarray(self._schema().feature_names, dtype=object)


# --- CSV reading ---------------------------------------------------------------------------


def read_csv(source: str | Path | bytes, schema: TableSchema | None = None, *,
             sep: str = ",", with_target: bool = False) -> pd.DataFrame:
    """Read a CSV as strings; with ``schema``, check it and raise ONE error listing every problem.

    File-level problems (unreadable, empty, non-UTF-8, wrong delimiter) raise
    :class:`TableInputError`; values outside the schema raise BoundsViolation.
    """
    if isinstance(source, bytes):
        raw, label = source, "the input"
    else:
        label = str(source)
        try:
            raw = Path(source).read_bytes()
        except OSError as exc:
            raise TableInputError(f"{label}: cannot read the file ({exc.strerror})") from None
    if raw[:2] == b"\x1f\x8b":
        import gzip

        try:
            raw = gzip.decompress(raw)
        except OSError:
            raise TableInputError(f"{label}: not a readable gzip file") from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TableInputError(f"{label}: the file is not UTF-8 text; re-save it as UTF-8 "
                              "(e.g. from a spreadsheet: CSV UTF-8)") from None
    if not text.strip():
        raise TableInputError(f"{label}: the file is empty (expected a header line and rows)")
    try:
        df = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False,
                         skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else "parse error"
        raise TableInputError(f"{label}: cannot parse as CSV with delimiter {sep!r} "
                              f"({first.split(':')[0]})") from None
    df.columns = [str(c).strip() for c in df.columns]
    if schema is not None:
        expected = len(schema.columns) + (1 if with_target else 0)
        if df.shape[1] == 1 and expected > 1:
            guess = next((d for d in (";", "\t", "|", ",") if d != sep and d in df.columns[0]),
                         None)
            hint = f" (the header contains {guess!r}: try --sep {guess!r})" if guess else ""
            raise TableInputError(
                f"{label}: the file parsed into a single column with delimiter {sep!r}, but the "
                f"schema expects {expected} columns; is the delimiter right?{hint}")
    if len(df) == 0:
        raise TableInputError(f"{label}: the file has a header but no rows")
    if schema is not None:
        schema.check(df, with_target=with_target)
    return df


# --- saved models --------------------------------------------------------------------------

MODEL_TYPES = ("opdisc", "rspm", "opsamp", "dpsgd", "accuracy-first")


def _jsonable(v: Any) -> bool:
    return v is None or isinstance(v, (bool, int, float, str))


def save_model(directory: str | Path, *, model_type: str, schema: TableSchema,
               estimator: Any) -> Path:
    """Write ``directory/model.json`` (format in the module docstring); returns its path."""
    if model_type not in MODEL_TYPES:
        raise ValueError(f"unknown model type {model_type!r}")
    params = {k: v for k, v in estimator.get_params(deep=False).items()
              if k not in ("random_state", "keep_diagnostics", "schema", "classes")
              and _jsonable(v)}
    coef = np.asarray(estimator.coef_, dtype=np.float64).ravel()
    doc = {
        "format": MODEL_FORMAT,
        "format_version": FORMAT_VERSION,
        "model": model_type,
        "schema": schema.to_dict(),
        "params": params,
        "guarantee": estimator.guarantee_.to_dict(),
        "classes": [str(c) for c in estimator.classes_],
        "feature_names": schema.feature_names,
        "coef": coef.tolist(),
        "intercept": float(estimator.intercept_),
    }
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "model.json"
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return path


@dataclass(frozen=True)
class SavedModel:
    """A loaded ``model.json``: the schema, the released linear model and its guarantee."""

    model_type: str
    schema: TableSchema
    params: dict[str, Any]
    guarantee: dict[str, Any]
    classes: tuple[str, str]
    feature_names: tuple[str, ...]
    coef: NDArray[np.float64]
    intercept: float

    def decision_function(self, df: pd.DataFrame) -> NDArray[np.float64]:
        return self.schema.encode(df) @ self.coef + self.intercept

    def predict(self, df: pd.DataFrame) -> NDArray[np.object_]:
        scores = self.decision_function(df)
        return np.asarray(self.classes, dtype=object)[(scores > 0).astype(np.intp)]


def load_model(path: str | Path) -> SavedModel:
    """Read a model directory (or its ``model.json``) written by :func:`save_model`."""
    p = Path(path)
    if p.is_dir():
        p = p / "model.json"
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TableInputError(f"{p}: cannot read the model ({exc.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise TableInputError(f"{p}: not a JSON model file") from None
    if not isinstance(doc, dict) or doc.get("format") != MODEL_FORMAT:
        raise TableInputError(f"{p}: not an oracledp model file")
    if doc.get("format_version") != FORMAT_VERSION:
        raise TableInputError(f"{p}: unsupported model format version "
                              f"{doc.get('format_version')!r}")
    try:
        schema = TableSchema.from_dict(doc["schema"])
        coef = np.asarray(doc["coef"], dtype=np.float64)
        names = tuple(doc["feature_names"])
        if coef.shape != (schema.n_features,) or names != tuple(schema.feature_names):
            raise ValueError("coefficients and feature names do not match the schema")
        classes = tuple(doc["classes"])
        if len(classes) != 2:
            raise ValueError("'classes' must list two labels")
        return SavedModel(model_type=str(doc["model"]), schema=schema,
                          params=dict(doc.get("params", {})), guarantee=dict(doc["guarantee"]),
                          classes=(str(classes[0]), str(classes[1])), feature_names=names,
                          coef=coef, intercept=float(doc.get("intercept", 0.0)))
    except (KeyError, TypeError, ValueError) as exc:
        raise TableInputError(f"{p}: invalid model file ({exc})") from None
