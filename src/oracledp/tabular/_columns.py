"""One input column of a :class:`~oracledp.tabular.TableSchema` and its public encoding.

:class:`Column` (categorical levels, a numeric grid ``k/K`` or thermometer bins, the
``missing`` policy, ``"unresolved"``) with its checks and JSON form, the public constants it
uses (:data:`MAX_GRID`, :data:`DEFAULT_MISSING_VALUES`, :data:`MISSING_POLICIES`,
:data:`INTERCEPT_NAME`) and the small JSON helpers shared with the schema.  The encoding is
described in the :mod:`oracledp.tabular` docstring.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

MAX_GRID = 10**6


def number_text(x: float) -> str:
    """A number as text, exactly: a whole number as an integer, else the float's shortest
    text that reads back as the same float (``%g``'s six digits write 20200101 and 20201231
    alike).

    >>> number_text(20200101.0), number_text(-0.3), number_text(1e-07), number_text(2.5)
    ('20200101', '-0.3', '1e-07', '2.5')
    """
    x = float(x)
    if x.is_integer() and abs(x) < 2**53:
        return str(int(x))
    return repr(x)


def _num(v: Any, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ValueError(f"{what} must be a finite number, got {v!r}")
    return float(v)


def as_numbers(texts: Any) -> NDArray[np.float64]:
    """Each text as the finite number it writes (``1``, ``1.0``, ``1e0``), else NaN (also a
    text with spaces before or after it: nothing is stripped); vectorized (pandas' own
    parser, so cells and declared levels read alike)."""
    s = pd.Series(texts, dtype=object).astype(str)
    x = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    x[~np.isfinite(x) | has_spaces(s)] = np.nan
    return x


def has_spaces(texts: Any) -> NDArray[np.bool_]:
    """Per text: it begins or ends with white space (a space, a tab).  Names, levels, labels
    and cells are read exactly as written, so such a text is refused, never stripped."""
    s = pd.Series(texts, dtype=object).astype(str)
    return (s != s.str.strip()).to_numpy(dtype=bool)


#: The rule refusing spaces around a value or a name (nothing is stripped).
SPACES_RULE = ("leading or trailing spaces: values and names are read exactly as written "
               "(nothing is stripped), so a space before or after one makes it another value "
               "or name; remove the spaces from the file (e.g. a CSV written with ', ' between "
               "fields)")


def level_codes(levels: tuple[str, ...], texts: Any) -> NDArray[np.intp]:
    """The position in ``levels`` of each text, -1 for none.

    A declared level that writes a finite number (``"1"``, ``"0.5"``, or a JSON number) is a
    numeric code, matched **by value**: ``1``, ``1.0``, ``"1"`` and ``"1.0"`` (numpy numbers
    too) are that one level.  Any other level is text, matched exactly (case and spaces
    count: nothing is stripped).  Vectorized over ``texts``.
    """
    texts = pd.Series(texts, dtype=object).astype(str)
    idx = pd.Index(levels).get_indexer(texts)
    if (idx < 0).any() and not np.isnan(as_numbers(levels)).all():
        idx = np.where(idx >= 0, idx, levels_by_value(levels, as_numbers(texts)))
    return idx


def levels_by_value(levels: tuple[str, ...], x: NDArray[np.float64]) -> NDArray[np.intp]:
    """The position of each number of ``x`` among the numeric levels (see
    :func:`level_codes`), -1 for none (NaN and inf included)."""
    values = as_numbers(levels)
    numeric = np.flatnonzero(~np.isnan(values))
    if not numeric.size:
        return np.full(len(x), -1, dtype=np.intp)
    pos = pd.Index(values[numeric]).get_indexer(x)
    return np.where(pos >= 0, numeric[pos], -1).astype(np.intp)


def same_numbers(values: tuple[str, ...]) -> tuple[str, str] | None:
    """Two of ``values`` that write the same number (e.g. ``"1"`` and ``"1.0"``), or None."""
    x = as_numbers(values)
    seen: dict[float, str] = {}
    for v, text in zip(x.tolist(), values, strict=True):
        if not math.isnan(v):
            if v in seen:
                return seen[v], text
            seen[v] = text
    return None


#: Cell texts that mean "missing" by default (after stripping spaces), besides an empty cell
#: and a NaN.  A schema may declare its own list (``"missing_values"``); a declared level of a
#: categorical column is always that level, never "missing".
DEFAULT_MISSING_VALUES: tuple[str, ...] = ("NA", "N/A", "NaN", "nan", "NULL", "null", "None",
                                           "?")

#: The public policies for missing cells of a column (see :class:`Column`).
MISSING_POLICIES = ("refuse", "level", "fill")

#: The public policies for a number outside a numeric column's declared bounds.
OUT_OF_BOUNDS_POLICIES = ("refuse", "clip")

#: Name of the encoded constant feature (the public intercept).
INTERCEPT_NAME = "(intercept)"


@dataclass(frozen=True)
class Column:
    """One input column: ``kind`` is ``"categorical"``, ``"numeric"`` or ``"unresolved"``.

    ``missing`` is the column's public policy for missing cells (an empty cell, NaN, or one of
    the schema's ``missing_values``): ``"refuse"`` (default: the table is refused),
    ``"level"`` (a public extra 0/1 feature ``name=(missing)``; a numeric column's value
    feature is 0 on such rows) or ``"fill"`` with the public ``fill`` value (a declared level,
    or a number within the bounds).  ``out_of_bounds`` (numeric columns) is the public policy
    for a number outside ``[lower, upper]``: ``"refuse"`` (default: the table is refused) or
    ``"clip"`` (the number is clipped to the nearer bound, in fit and predict alike; a fixed
    public map of each record, so a guarantee holds for the original records).
    ``"unresolved"`` marks a column that schema inference could not type: every fit refuses
    it until it is declared or removed.  ``synth_bins`` (gridded numeric columns only) is the
    public binning of the column for synthetic data (:class:`oracledp.synth.TableSynthesizer`):
    a count of bins, or cut points in ``(lower, upper]``; the linear models ignore it.
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
    out_of_bounds: str = "refuse"
    synth_bins: int | tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        where = f"column {self.name!r}"
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a column name must be a non-empty string, got {self.name!r}")
        if has_spaces([self.name])[0]:
            raise ValueError(f"{where}: the name has {SPACES_RULE}")
        if not isinstance(self.out_of_bounds, str) or (
                self.out_of_bounds not in OUT_OF_BOUNDS_POLICIES):
            raise ValueError(f"{where}: 'out_of_bounds' must be \"refuse\" (the default) or "
                             f"\"clip\", got {self.out_of_bounds!r}")
        if self.out_of_bounds == "clip" and self.kind != "numeric":
            raise ValueError(f"{where}: \"out_of_bounds\": \"clip\" applies to numeric "
                             "columns only (they have public bounds to clip to)")
        if self.synth_bins is not None:
            object.__setattr__(self, "synth_bins", _synth_bins(self, where))
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
            if isinstance(self.levels, (str, dict, set, frozenset)):
                raise ValueError(f"{where}: 'levels' must be a list of the declared levels, "
                                 f"in order, got a {_json_type(self.levels)}")
            if self.levels is None or len(self.levels) == 0:
                raise ValueError(f"{where}: a categorical column needs a non-empty 'levels' list")
            bad = [v for v in self.levels if not _is_level(v)]
            if bad:
                raise ValueError(f"{where}: each level must be a string or a finite number "
                                 f"(a level is written as the cells write it, e.g. "
                                 f"[\"no\", \"yes\"] or [0, 1]), got a "
                                 f"{_json_type(bad[0], item=True)} among the 'levels'")
            levels = tuple(str(v) for v in self.levels)
            if len(set(levels)) != len(levels):
                raise ValueError(f"{where}: 'levels' must be distinct")
            if "" in levels:
                raise ValueError(f"{where}: a level cannot be the empty text: an empty cell "
                                 "always reads as missing (to keep missing cells as a level of "
                                 "their own, declare \"missing\": \"level\")")
            if has_spaces(levels).any():
                raise ValueError(f"{where}: a level has {SPACES_RULE}")
            twins = same_numbers(levels)
            if twins:
                raise ValueError(f"{where}: the levels {twins[0]!r} and {twins[1]!r} are the "
                                 "same number (levels that are numbers are compared by value)")
            object.__setattr__(self, "levels", levels)
            if any(v is not None for v in (self.lower, self.upper, self.step, self.bins)):
                raise ValueError(f"{where}: a categorical column takes only 'levels'")
            if self.fill is not None:
                pos = (-1 if isinstance(self.fill, bool)
                       or not isinstance(self.fill, (str, int, float))
                       else int(level_codes(levels, [self.fill])[0]))
                if pos < 0:
                    raise ValueError(f"{where}: the fill value must be one of the declared "
                                     "levels")
                object.__setattr__(self, "fill", levels[pos])  # the level as declared
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
                if not math.isfinite((hi - lo) / step):  # e.g. -1e308 to 1e308: no grid
                    raise ValueError(f"{where}: (upper - lower)/step must be a finite number "
                                     f"of at most {MAX_GRID} steps")
                K = round((hi - lo) / step)
                if not 1 <= K <= MAX_GRID:
                    raise ValueError(f"{where}: (upper - lower)/step must round to an integer "
                                     f"in [1, {MAX_GRID}], got {K}")
                # a whole number up to the floats' own precision: 100000000.20005 -
                # 100000000.00005 is 2000 steps of 0.0001 give or take 1.5e-4 steps
                slack = max(1e-9 * K, 4.0 * math.ulp(max(abs(lo), abs(hi))) / step)
                if abs((hi - lo) / step - K) > slack:
                    raise ValueError(f"{where}: upper - lower must be a whole number of steps "
                                     f"(got {(hi - lo) / step:.10g} steps)")
                if max(abs(lo), abs(hi)) / step > 2.0**50:  # doubles there are too coarse
                    raise ValueError(f"{where}: the grid's values are too large for its step "
                                     "to be read exactly (a number past 2^50 steps from 0: "
                                     "10000000000000101 reads as 10000000000000100); "
                                     "subtract a public offset from the column, in the "
                                     "data and the schema")
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

    @property
    def bound_tolerance(self) -> float:
        """How far past a bound a value may lie and still be the bound's grid point: a
        gridded column's own rounding tolerance, 1e-9 of a step (``-0.30000000000000004`` is
        -0.3, as computed exports write it); 0 for a binned column.  Every reader applies it
        (:meth:`TableSchema._scan`, the data engine's SQL)."""
        return 1e-9 * self.step if self.step is not None else 0.0

    def codes_of_numbers(self, x: NDArray[np.float64]) -> NDArray[np.int64]:
        """Codes of numbers within the bounds: the grid index (rounded half to even; the clip
        guards float ties only) or the number of bin cut points <= x."""
        if self.step is not None:
            assert self.lower is not None  # a gridded column has bounds
            return np.clip(np.rint((x - self.lower) / self.step), 0, self.K).astype(np.int64)
        return np.searchsorted(np.array(self.bins), x, side="right").astype(np.int64)

    def code_of(self, value: Any) -> int:
        """The code of one declared public value (a fill value)."""
        if self.kind == "categorical":
            return (self.levels or ()).index(value)
        return int(self.codes_of_numbers(np.array([float(value)]))[0])

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
        if self.out_of_bounds != "refuse":
            d["out_of_bounds"] = self.out_of_bounds
        if self.synth_bins is not None:
            d["synth_bins"] = (self.synth_bins if isinstance(self.synth_bins, int)
                               else [_plain(c) for c in self.synth_bins])
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
                   "missing", "note", "out_of_bounds", "synth_bins"}
        extra = sorted(set(d) - allowed)
        if extra:
            raise ValueError(f"column {d.get('name')!r}: unknown keys {extra}")
        if "name" not in d or "type" not in d:
            raise ValueError("each column needs 'name' and 'type'")
        levels = _json_list(d.get("levels"), "levels", d["name"])
        bins = _json_list(d.get("bins"), "bins", d["name"])
        missing, fill = _parse_missing(d.get("missing", "refuse"), d["name"])
        note = d.get("note", "")
        if not isinstance(note, str):
            raise ValueError(f"column {d['name']!r}: 'note' must be a string")
        return cls(name=d["name"], kind=d["type"],
                   levels=None if levels is None else tuple(levels),
                   lower=d.get("lower"), upper=d.get("upper"), step=d.get("step"),
                   bins=None if bins is None else tuple(bins),
                   from_data=_flag(d.get("from_data", False), d["name"]),
                   missing=missing, fill=fill, note=note,
                   out_of_bounds=d.get("out_of_bounds", "refuse"),
                   synth_bins=_synth_bins_json(d.get("synth_bins"), d["name"]))


def _json_type(v: Any, item: bool = False) -> str:
    """The JSON name of ``v``'s type, for messages (a declaration's type, never data);
    ``item``: also null, true/false, a list and a non-finite number by their JSON names."""
    if isinstance(v, dict):
        return "JSON object"
    if isinstance(v, str):
        return "string"
    if item:
        if v is None:
            return "null"
        if isinstance(v, (bool, np.bool_)):
            return "boolean (true/false)"
        if isinstance(v, (list, tuple)):
            return "list"
        if isinstance(v, (int, float, np.integer, np.floating)):
            return "non-finite number"
    return "set" if isinstance(v, (set, frozenset)) else type(v).__name__


def _is_level(v: Any) -> bool:
    """A declared level: a string or a finite number (not true/false, null, a list or an
    object, whose text would be Python's rendering of it, e.g. 'None' or "{'a': 1}")."""
    if isinstance(v, str):
        return True
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                                np.floating)):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:  # an integer beyond any double
        return False


def _json_list(v: Any, key: str, name: Any) -> Any:
    """A JSON list entry (``"levels"``, ``"bins"``) of a column; None if absent.  An object
    (``{"no": 0, "yes": 1}``) or a string is refused: their order or items are not a list."""
    if v is None or isinstance(v, list):
        return v
    raise ValueError(f"column {name!r}: {key!r} must be a list, got a {_json_type(v)}"
                     + (" (levels are a list of the values, e.g. [\"no\", \"yes\"]; "
                        "their codes are their positions)" if key == "levels" else ""))


def _synth_bins_json(v: Any, name: Any) -> int | tuple[float, ...] | None:
    """The JSON ``"synth_bins"`` entry: a count or a list of cut points (checked by Column)."""
    if v is None or (isinstance(v, int) and not isinstance(v, bool)):
        return v
    if isinstance(v, list):
        return tuple(v)
    raise ValueError(f"column {name!r}: 'synth_bins' must be a count (an integer >= 1) or a "
                     f"list of cut points, got {json.dumps(v)[:40]}")


def _synth_bins(c: Column, where: str) -> int | tuple[float, ...]:
    """``synth_bins`` checked against the column: a gridded numeric column, a count >= 1 or
    strictly increasing finite cut points in ``(lower, upper]``."""
    if c.kind != "numeric" or c.step is None:
        raise ValueError(f"{where}: 'synth_bins' applies to gridded numeric columns only (with "
                         "'step'); a column with 'bins' is synthesized on those bins, a "
                         "categorical column on its levels")
    v = c.synth_bins
    if isinstance(v, bool) or not isinstance(v, (int, tuple, list)):
        raise ValueError(f"{where}: 'synth_bins' must be a count (an integer >= 1) or a list "
                         f"of cut points, got {v!r}")
    if isinstance(v, int):
        if v < 1:
            raise ValueError(f"{where}: 'synth_bins' as a count must be >= 1, got {v}")
        return v
    cuts = tuple(_num(x, f"{where}: a 'synth_bins' cut point") for x in v)
    if not cuts:
        raise ValueError(f"{where}: 'synth_bins' must list at least one cut point")
    if any(b <= a for a, b in itertools.pairwise(cuts)):
        raise ValueError(f"{where}: 'synth_bins' cut points must be strictly increasing")
    lo, hi = _num(c.lower, f"{where}: 'lower'"), _num(c.upper, f"{where}: 'upper'")
    if not (lo < cuts[0] and cuts[-1] <= hi):
        raise ValueError(f"{where}: 'synth_bins' cut points must lie in (lower, upper] = "
                         f"({lo:g}, {hi:g}]")
    return cuts


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
