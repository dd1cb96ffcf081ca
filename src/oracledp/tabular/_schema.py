"""The public table schema: :class:`TableSchema` (see the :mod:`oracledp.tabular` docstring).

Its JSON form (:data:`SCHEMA_FORMAT`, :data:`FORMAT_VERSION`), confirmation of entries read
from data, the public derived quantities (feature names, norm bounds, the
:class:`~oracledp.oracles.FeatureSchema`), the proposal from data (NOT private), the checks
of a table against it and its encoding (training: strict; prediction: the prediction policy).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp import _jsonfile
from oracledp._errors import BoundsViolation, UnconfirmedSchemaError
from oracledp.privacy._group import MAX_RECORDS_PER_PERSON
from oracledp.tabular._cells import (
    _Cells,
    _table_violation,
    describe_adjusted,
    duplicate_names,
    text_names,
    warn_clipped,
)
from oracledp.tabular._columns import (
    DEFAULT_MISSING_VALUES,
    INTERCEPT_NAME,
    SPACES_RULE,
    Column,
    _flag,
    _is_level,
    _json_type,
    has_spaces,
    number_text,
    same_numbers,
)
from oracledp.tabular._propose import propose_columns

#: Why data may miss every declared level (numbers are already compared by value).
_CODING_HINT = "check how they are coded (a number for a word, case, spaces)"


def _shown(levels: tuple[str, ...] | None, at_most: int = 10) -> str:
    """Declared (public) levels for a message: the first ``at_most`` of them."""
    levels = levels or ()
    more = f", ... ({len(levels)} declared)" if len(levels) > at_most else ""
    return ", ".join(map(repr, levels[:at_most])) + more


SCHEMA_FORMAT = "oracledp.table_schema"
FORMAT_VERSION = 1

FROM_DATA_NOTE = (
    "Entries marked \"from_data\": true were read from the data. Reading bounds, levels or "
    "labels from private data is NOT differentially private. Replace them with public values "
    "(or confirm they are public knowledge) and delete the flag before fitting."
)


@dataclass(frozen=True)
class TableSchema:
    """Public description of a table: feature columns, the target and its two labels.

    The target is optional: a schema with ``target=None`` (``"target": null`` or no
    ``"target"`` key in JSON) describes a table to synthesize (``oracledp synth``), where
    every column, a 3-class outcome included, is a feature column; the learners, which need
    two labels, refuse it (:meth:`require_target`).

    See the module docstring for the encoding.  ``row_divisor`` (integer >= 1) divides
    every encoded row (public scaling).  ``intercept`` (default True) appends the public
    constant feature :data:`INTERCEPT_NAME` = 1 (divided by ``row_divisor`` like the others),
    so that the linear models here, which are halfspaces through the origin, get an
    intercept as the weight of that feature; it counts in every public norm bound.
    ``missing_values``: the cell texts read as missing (:data:`DEFAULT_MISSING_VALUES`).
    ``records_per_person`` (integer >= 1, default 1): the most records one person contributes
    to the table (a panel, repeated visits).  Every guarantee is per record; with ``k > 1``
    the person's guarantee is its group-privacy form for ``k`` records
    (:func:`oracledp.privacy.group_privacy`, e.g. ``(k eps, delta sum_{i<k} e^{i eps})``),
    which ``oracledp fit`` prints and saves beside the per-record one.

    Examples
    --------
    ``infer`` proposes a schema from a table and marks every entry it read from the data;
    ``fit`` refuses those until they are replaced by public values or confirmed:

    >>> import pandas as pd
    >>> from oracledp import TableSchema
    >>> df = pd.DataFrame({"age": [23, 45, 31, 60], "job": ["a", "b", "a", "c"], "y": [0, 1, 0, 1]})
    >>> proposal, warnings = TableSchema.infer(df, target="y")
    >>> proposal.unconfirmed()
    ['age', 'job', 'y (target labels)']
    >>> schema = proposal.confirmed()  # only if those bounds and levels are public
    >>> schema.feature_names
    ['age', 'job=a', 'job=b', 'job=c', '(intercept)']
    >>> schema.encode(df[["age", "job"]]).shape
    (4, 5)
    """

    columns: tuple[Column, ...]
    target: str | None = None
    labels: tuple[str, ...] = ()
    target_from_data: bool = False
    row_divisor: int = 1
    note: str = field(default="", compare=False)
    intercept: bool = True
    missing_values: tuple[str, ...] = DEFAULT_MISSING_VALUES
    records_per_person: int = 1

    def __post_init__(self) -> None:
        cols = tuple(self.columns)
        if not cols:
            raise ValueError("a table schema needs at least one feature column")
        object.__setattr__(self, "columns", cols)
        names = [c.name for c in cols]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"duplicate column names: {dup}")
        if self.target is None:
            if tuple(self.labels) or self.target_from_data:
                raise ValueError("labels without a target: name the 'target' column, or "
                                 "leave both out (a schema without a target)")
            object.__setattr__(self, "labels", ())
        else:
            self._check_target(names)
        m = self.row_divisor
        if isinstance(m, bool) or not isinstance(m, int) or m < 1:
            raise ValueError(f"'row_divisor' must be an integer >= 1, got {m!r}")
        if not isinstance(self.intercept, bool):
            raise ValueError("'intercept' must be true or false")
        k = self.records_per_person
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"'records_per_person' must be an integer >= 1 (the most records "
                             f"one person contributes), got {repr(k)[:20]}")
        if k > MAX_RECORDS_PER_PERSON:
            raise ValueError(f"'records_per_person' must be at most {MAX_RECORDS_PER_PERSON:,}")
        mv = self.missing_values
        if isinstance(mv, str) or not all(isinstance(v, str) for v in mv):
            raise ValueError("'missing_values' must be a list of strings")
        if has_spaces(list(mv)).any():
            raise ValueError(f"'missing_values': an entry has {SPACES_RULE}")
        object.__setattr__(self, "missing_values", tuple(mv))
        out = [n for c in cols for n in c.output_names()]
        if self.intercept and INTERCEPT_NAME in out:
            raise ValueError(f"an encoded feature is named {INTERCEPT_NAME!r}, the name of the "
                             "intercept feature")
        owner: dict[str, str] = {}
        for c in cols:
            for n in c.output_names():
                if n in owner:
                    who = (f"column {c.name!r} encodes two features" if owner[n] == c.name
                           else f"columns {owner[n]!r} and {c.name!r} both encode a feature")
                    raise ValueError(
                        f"{who} named {n!r} (a column name and a level joined by '=', or the "
                        "missing level '(missing)'): rename a column or a level, so that each "
                        "encoded feature has its own name")
                owner[n] = c.name

    def _check_target(self, names: list[str]) -> None:
        """The target's name and its two labels (stored as strings)."""
        if not isinstance(self.target, str) or not self.target:
            raise ValueError("'target' must name the label column")
        if has_spaces([self.target])[0]:
            raise ValueError(f"target {self.target!r}: the name has {SPACES_RULE}")
        if self.target in names:
            raise ValueError(f"the target {self.target!r} is also listed as a feature column")
        bad = [v for v in self.labels
               if not (_is_level(v) or isinstance(v, (bool, np.bool_)))]
        if bad:  # str() would make null the label 'None', a list "['x']"
            raise ValueError(f"target {self.target!r}: each label must be a string, a finite "
                             f"number or true/false (as the cells write it, e.g. [\"no\", \"yes\"] "
                             f"or [0, 1]), got a {_json_type(bad[0], item=True)}")
        labels = tuple(str(v) for v in self.labels)
        if len(labels) != 2 or labels[0] == labels[1]:
            raise ValueError("the target needs exactly two distinct 'labels' (a classifier's "
                             "two classes); a table to synthesize needs no target: declare "
                             "an outcome of more classes as a categorical column and set "
                             "\"target\": null")
        if "" in labels:
            raise ValueError(f"target {self.target!r}: a label cannot be the empty text: an "
                             "empty cell always reads as missing")
        if has_spaces(labels).any():
            raise ValueError(f"target {self.target!r}: a label has {SPACES_RULE}")
        if same_numbers(labels):
            raise ValueError(f"the target's labels {labels[0]!r} and {labels[1]!r} are the same "
                             "number (labels that are numbers are compared by value)")
        object.__setattr__(self, "labels", labels)

    @property
    def has_target(self) -> bool:
        """Whether the schema declares a target (two labels); see :meth:`require_target`."""
        return self.target is not None

    def require_target(self, what: str) -> None:
        """Refuse a schema without a target for ``what`` (a learner, which needs two labels)."""
        if self.target is None:
            raise ValueError(
                f"the schema declares no target: {what} needs one, a column with two labels "
                "(\"target\": {\"name\": ..., \"labels\": [..., ...]}); a schema without a "
                "target serves `oracledp synth` only")

    # --- JSON ----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        target: dict[str, Any] | None = (None if self.target is None else
                                         {"name": self.target, "labels": list(self.labels)})
        if target is not None and self.target_from_data:
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
        if self.records_per_person != 1:
            d["records_per_person"] = self.records_per_person
        return d

    @classmethod
    def from_dict(cls, d: Any) -> TableSchema:
        """Parse a schema's JSON object.  Without an ``"intercept"`` key the schema has the
        intercept feature; without ``"records_per_person"`` each person has one record;
        without a ``"target"`` (or with ``"target": null``) it has no target (synthesis only)."""
        if not isinstance(d, dict):
            raise ValueError("a table schema must be a JSON object")
        if d.get("format", SCHEMA_FORMAT) != SCHEMA_FORMAT:
            raise ValueError(f"not a table schema (format {d.get('format')!r})")
        if d.get("version", FORMAT_VERSION) != FORMAT_VERSION:
            raise ValueError(f"unsupported schema version {d.get('version')!r}")
        extra = sorted(set(d) - {"format", "version", "note", "target", "columns",
                                 "row_divisor", "intercept", "missing_values",
                                 "records_per_person"})
        if extra:
            raise ValueError(f"unknown top-level keys {extra}")
        t = d.get("target")
        if t is not None:
            if not isinstance(t, dict) or "name" not in t or "labels" not in t:
                raise ValueError("'target' must be an object with 'name' and 'labels' (or "
                                 "null, or left out, for a table without a target)")
            extra = sorted(set(t) - {"name", "labels", "from_data"})
            if extra:
                raise ValueError(f"target: unknown keys {extra}")
            if not isinstance(t["labels"], list):
                raise ValueError(f"target {t['name']!r}: 'labels' must be a list of its two "
                                 f"labels, got a {_json_type(t['labels'])}")
        cols = d.get("columns")
        if not isinstance(cols, list):
            raise ValueError("'columns' must be a list")
        mv = d.get("missing_values", list(DEFAULT_MISSING_VALUES))
        if not isinstance(mv, list):
            raise ValueError("'missing_values' must be a list of strings")
        return cls(columns=tuple(Column.from_dict(c) for c in cols),
                   target=None if t is None else t["name"],
                   labels=() if t is None else tuple(t["labels"]),
                   target_from_data=(False if t is None
                                     else _flag(t.get("from_data", False), t["name"])),
                   row_divisor=d.get("row_divisor", 1), note=str(d.get("note", "")),
                   intercept=d.get("intercept", True),
                   missing_values=tuple(mv),
                   records_per_person=d.get("records_per_person", 1))

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_json(cls, text: str) -> TableSchema:
        """A schema from JSON text, read strictly (:mod:`oracledp._jsonfile`: no NaN, no key
        listed twice, no integer of hundreds of digits, no deep nesting)."""
        try:
            d = _jsonfile.loads(text)
        except ValueError as exc:
            raise ValueError(f"the schema is {exc}" if str(exc).startswith("not valid JSON")
                             else f"the schema is not valid: {exc}") from None
        return cls.from_dict(d)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json() + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> TableSchema:
        try:
            text = _jsonfile.read_text(path)
        except ValueError as exc:  # not UTF-8, not a regular file, too large
            raise ValueError(f"{path}: the schema file is {exc}") from None
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

    # --- declared clipping and the guarantee -----------------------------------------------

    def clipped_columns(self) -> list[str]:
        """The columns declared ``"out_of_bounds": "clip"`` (public: from the schema alone)."""
        return [c.name for c in self.columns if c.out_of_bounds == "clip"]

    def clipping_note(self) -> str:
        """What declared clipping means for a guarantee ("" without such columns)."""
        names = self.clipped_columns()
        if not names:
            return ""
        return (f"column(s) {', '.join(map(repr, names))} are clipped to their declared public "
                "bounds before encoding (\"out_of_bounds\": \"clip\"): a fixed public map of "
                "each record, so the guarantee holds for the original records")

    def annotate_guarantee(self, guarantee: Any) -> Any:
        """``guarantee`` (a PrivacyGuarantee) with :meth:`clipping_note` added to its notes;
        unchanged without clipped columns or when the note is already there.  The command
        line's ``fit`` and :func:`~oracledp.tabular.save_model` apply it; after fitting a
        ``Pipeline`` yourself: ``schema.annotate_guarantee(clf[-1].guarantee_)``."""
        note = self.clipping_note()
        if not note or note in guarantee.notes:
            return guarantee
        return replace(guarantee, notes=f"{guarantee.notes}; {note}" if guarantee.notes
                       else note)

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
    def propose(cls, data: pd.DataFrame | str | Path, target: str | None = None,
                max_levels: int = 50, categorical: Iterable[str] = ()) -> TableSchema:
        """A schema read from ``data`` (a DataFrame or a CSV path): NOT private.

        The schema of :meth:`infer`, without its warnings.
        """
        return cls.infer(data, target, max_levels=max_levels, categorical=categorical)[0]

    @classmethod
    def infer(cls, data: pd.DataFrame | str | Path, target: str | None = None,
              max_levels: int = 50,
              categorical: Iterable[str] = ()) -> tuple[TableSchema, list[str]]:
        """A schema read from ``data`` (a DataFrame or a CSV path) and its warnings: NOT private.

        Every level, bound, step and the label set are read from the data and marked
        ``"from_data": true``; fitting refuses such a schema until the user confirms or
        replaces each entry.  Cells that are empty or one of :data:`DEFAULT_MISSING_VALUES`
        are missing: a column holding some gets ``"missing": "level"`` (a public missing
        level).  A column that cannot be typed (every cell missing, numbers mixed with other
        text, more than ``max_levels`` distinct texts, or numbers too large for a grid) gets an
        ``"unresolved"`` entry, which every fit refuses until it is declared or removed.  A
        numeric column's step is its recorded resolution (``10^-d`` for values written with d
        decimals; 1 for whole numbers, also when written ``7.0``), so no value is rounded,
        unless that grid would exceed :data:`PROPOSE_MAX_GRID` points: then a coarser round
        step is proposed.  Whole numbers are numeric on their integer grid, integer codes
        (a 0-9 band, a 1-5 answer: at most ``max_levels`` distinct values, each seen twice on
        average; one warning lists them) included; a column named in ``categorical`` is proposed
        categorical instead, its levels every integer from its smallest to its largest value
        when it holds whole numbers (not only the values seen).  A column of whole numbers or
        texts whose values are all or nearly all distinct (at least 20 values, 95% distinct)
        looks like an identifier and is proposed ``"unresolved"``.  A column of numbers some
        written with leading zeros (``01``, ``007``: ZIP or ICD codes) is proposed
        categorical with the texts seen as its levels, so that no zero is lost, or
        ``"unresolved"`` when two of its texts write the same number (``01`` beside ``1``:
        levels are compared by value, so no schema keeps them apart) or when they are more
        than ``max_levels``.  A column that looks like a person's identifier whose values
        repeat (named like one, or many values each seen equally often: several rows per
        person) is proposed as its values say, with a warning pointing to the schema's
        ``"records_per_person"``.

        The warnings are one line per rule, naming its columns (never a value).  A table
        with spaces before or after a header name or a value is refused
        (:class:`TableInputError`): nothing is stripped, and a fit would refuse it.
        """
        cols, labels, warnings = propose_columns(data, target, max_levels, categorical)
        note = FROM_DATA_NOTE
        if any(c.kind == "unresolved" for c in cols):
            note += (" Columns marked \"unresolved\" could not be typed: declare or remove "
                     "them (fit refuses them).")
        return cls(columns=cols, target=target, labels=labels,
                   target_from_data=target is not None,
                   note=note), warnings

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
              clipped: set[str] | None = None) -> tuple[list[tuple[tuple[int, int], str]], NDArray[np.int64] | None,
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

        A column declared ``"out_of_bounds": "clip"`` has its numbers clipped to its bounds
        in every case (training too); its name is added to ``clipped`` (a set) when it had
        such numbers.
        """
        with_target = with_target and self.target is not None
        found: list[tuple[tuple[int, int], str]] = []
        df = text_names(df)
        names = list(map(str, df.columns))
        repeated = duplicate_names(names)
        if repeated:
            found.append(((-2, 0), repeated))
        present = set(names)
        readable = {n for n in present if names.count(n) == 1}  # a repeated column is not read
        needed = [c.name for c in self.columns if c.kind != "unresolved"]
        needed += [self.target] if with_target else []
        wanted = {c.name for c in self.columns} | ({self.target} if with_target else set())
        spaced = list(dict.fromkeys(n for n in names if has_spaces([n])[0]
                                    and (n.strip() in wanted or not ignore_extra)))
        if spaced:  # said once: not also as a missing or an extra column
            found.append(((-1, -1), f"the header writes the column name(s) "
                                    f"{', '.join(map(repr, spaced))} with {SPACES_RULE}"))
        absent = [n for n in needed if n not in present]
        if absent:
            stripped = {n.strip() for n in spaced}
            absent = [n for n in absent if n not in stripped]
        if absent:
            found.append(((-1, 0), f"missing column(s): {', '.join(map(repr, absent))}"))
        if not ignore_extra:
            known = {c.name for c in self.columns} | {self.target} - {None} | set(spaced)
            extra = list(dict.fromkeys(n for n in names if n not in known))
            if extra:
                found.append(((-1, 1), f"column(s) {', '.join(map(repr, extra))} are not in the "
                                       "schema (refused so that no column is left out by "
                                       "mistake: add them to the schema, or pass "
                                       "--ignore-extra / ignore_extra=True to leave them out)"))
        n = len(df)
        out = (np.empty((n, len(self.columns)), dtype=np.int64)
               if codes and not absent and not spaced and not repeated else None)

        for i, c in enumerate(self.columns):
            if c.kind == "unresolved":
                found.append(((i, 0), f"column {c.name!r}: its type is unresolved (schema "
                                      "inference could not decide it); declare it or remove it"))
                continue
            if c.name not in readable:
                continue
            items, code = self._scan_cells(i, df[c.name], adjusted=adjusted, clipped=clipped)
            found.extend(items)
            if out is not None:
                out[:, i] = code
        y_idx = None
        if with_target and self.target in readable:
            cells = _Cells(df[self.target])
            lab = cells.level_codes(self.labels)
            if cells.nan.any() or (lab < 0).any():
                found.append(((len(self.columns), 0), self._target_problem(cells, lab)))
            else:
                y_idx = lab.astype(np.int8)
        if found or out is None:
            return found, None, None
        return found, out, y_idx

    def _missing_tokens(self, levels: Any) -> list[str]:
        """The cell texts read as missing in a column with these ``levels`` (labels, for the
        target): the schema's ``missing_values`` less the declared ones, which win.  The one
        rule of every reader (the pandas scan and the DuckDB engine alike)."""
        return sorted(set(self.missing_values) - set(levels or ()))

    def _value_cells(self, c: Column, cells: _Cells
                     ) -> tuple[NDArray[np.bool_], NDArray[np.bool_], NDArray[np.bool_]]:
        """Column ``c``'s cells with spaces, its missing cells (the schema's missing values
        that are not among its levels), and the rest: the cells read as values."""
        spaced = cells.spaced()
        miss = cells.missing(self._missing_tokens(c.levels))
        return spaced, miss, ~miss & ~spaced

    def _scan_cells(self, i: int, s: pd.Series, *,
                    adjusted: dict[str, dict[str, int]] | None = None,
                    clipped: set[str] | None = None,
                    ) -> tuple[list[tuple[tuple[int, int], str]], NDArray[np.int64]]:
        """The problems (with their ranks) and the codes of the cells ``s`` of column ``i``.

        Every rule reads one cell at a time, so the problems of a column are the union of
        those of its distinct values: the data engine (:mod:`oracledp.tabular._engine`) calls
        this on the distinct cells it does not encode itself.  ``adjusted`` and ``clipped``
        as in :meth:`_scan`."""
        c = self.columns[i]
        found: list[tuple[tuple[int, int], str]] = []
        lenient = adjusted is not None
        n = len(s)

        def count(name: str, rule: str, k: int) -> None:
            if adjusted is not None and k:
                adjusted.setdefault(name, {}).setdefault(rule, 0)
                adjusted[name][rule] += k

        cells = _Cells(s)
        spaced_cells, miss, ok = self._value_cells(c, cells)
        if spaced_cells.any():  # refused in fit and predict alike; no other rule reads them
            found.append(((i, -1), f"column {c.name!r}: some values have {SPACES_RULE}"))
        code = np.zeros(n, dtype=np.int64)
        if miss.any():
            if c.missing == "level":
                code[miss] = c.n_values
            elif c.missing == "fill":
                code[miss] = c.code_of(c.fill)
            elif lenient and c.kind == "categorical":
                code[miss] = -1
                count(c.name, "missing", int(miss.sum()))
            else:
                found.append(((i, 0), f"column {c.name!r}: missing values (an empty cell, "
                                      "NaN or one of the schema's missing_values) are not "
                                      "allowed: the schema declares no 'missing' policy for "
                                      "it (\"level\" or {\"fill\": ...})"))
        if c.kind == "categorical":
            idx = cells.level_codes(c.levels or ())
            unknown = ok & (idx < 0)
            n_unknown = int(unknown.sum())
            if n_unknown and lenient and 2 * n_unknown <= int(ok.sum()):
                count(c.name, "unknown level", n_unknown)
            elif n_unknown and lenient:  # never a silent all-zero column
                found.append(((i, 1), f"column {c.name!r}: most values are not declared "
                                      f"levels (declared: {_shown(c.levels)}), so nothing "
                                      f"was predicted; {_CODING_HINT}"))
            elif n_unknown:
                found.append(((i, 1), f"column {c.name!r}: values must be one of the "
                                      f"{len(c.levels or ())} declared levels "
                                      f"({_shown(c.levels)}); some are not: {_CODING_HINT}"))
            code[ok] = idx[ok]  # -1 for an unknown level
        else:
            num = cells.per_row(cells.numbers())
            bad = ok & ~np.isfinite(num)
            if bad.any():
                found.append(((i, 1), f"column {c.name!r}: values must be finite numbers"))
            good = ok & ~bad
            x = num[good]
            # a gridded value past a bound by floating-point noise only is the bound's grid
            # point, not a violation (Column.bound_tolerance)
            tol = c.bound_tolerance
            outside = (x < c.lower - tol) | (x > c.upper + tol)
            if outside.any():
                if c.out_of_bounds == "clip":  # declared: the same public map everywhere
                    x = np.clip(x, c.lower, c.upper)
                    if clipped is not None:
                        clipped.add(c.name)
                elif lenient:
                    count(c.name, "clipped", int(outside.sum()))
                    x = np.clip(x, c.lower, c.upper)
                else:
                    bounds = f"[{number_text(c.lower)}, {number_text(c.upper)}]"
                    found.append(((i, 2), f"column {c.name!r}: values must lie in {bounds} "
                                          "(declared public "
                                          "bounds; nothing is clipped unless the column "
                                          "declares \"out_of_bounds\": \"clip\")"))
                    x = np.where(outside, c.lower, x)  # refused: no code is computed
            code[good] = c.codes_of_numbers(x)  # (an overflow of (x - lower)/step)
        return found, code

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
        :meth:`encode_for_prediction` (with its warning).  Either way, the numbers of a
        column declared ``"out_of_bounds": "clip"`` are clipped to its bounds, and one
        :class:`~oracledp._errors.ClippedValuesWarning` names the columns that had such
        numbers (a non-private diagnostic: names only).
        """
        if on_unknown == "clip":
            return self.encode_for_prediction(df)[0]
        if on_unknown != "refuse":
            raise ValueError(f"on_unknown must be 'refuse' or 'clip', got {on_unknown!r}")
        if not isinstance(df, pd.DataFrame):
            self.check(df)
        clipped: set[str] = set()
        found, codes, _ = self._scan(df, with_target=False, codes=True, clipped=clipped)
        if found or codes is None:
            raise _table_violation([msg for _, msg in found])
        warn_clipped(clipped)
        return self._decode(codes)

    def encode_for_prediction(self, df: pd.DataFrame, *, warn: bool = True,
                              ) -> tuple[NDArray[np.float64], dict[str, dict[str, int]]]:
        """Encode rows to PREDICT on, by the prediction policy; returns ``(X, adjusted)``.

        Predicting is post-processing of a released model, so rows outside the training
        schema need not be refused: a number outside ``[lower, upper]`` is clipped to the
        public bounds, and an unknown level (or a missing cell of a categorical column
        without a 'missing' policy) is encoded as an all-zero one-hot.  ``adjusted`` counts
        the affected rows per column and rule (never a row or a value); with ``warn`` a
        :class:`~oracledp._errors.PredictionPolicyWarning` says the same.  Still refused (one
        BoundsViolation): a missing column, text or inf in a numeric column, a missing
        number in a column without a 'missing' policy, and a categorical column where most
        present values are not declared levels (coded otherwise: its all-zero encoding would
        make the predictions meaningless).
        """
        if not isinstance(df, pd.DataFrame):
            self.check(df)
        adjusted: dict[str, dict[str, int]] = {}
        clipped: set[str] = set()
        found, codes, _ = self._scan(df, with_target=False, codes=True, adjusted=adjusted,
                                     clipped=clipped)
        if found or codes is None:
            raise _table_violation([msg for _, msg in found])
        warn_clipped(clipped)
        if warn and adjusted:
            import warnings

            from oracledp._errors import PredictionPolicyWarning

            warnings.warn(describe_adjusted(adjusted, len(df)), PredictionPolicyWarning,
                          stacklevel=2)
        return self._decode(codes), adjusted

    def labels_of(self, df: pd.DataFrame) -> NDArray[np.object_]:
        """The target column as strings, checked against the declared labels (the feature
        columns are checked where they are encoded)."""
        self.require_target("a classifier")
        if not isinstance(df, pd.DataFrame) or self.target not in set(map(str, df.columns)):
            raise BoundsViolation(f"the table does not fit the schema: missing column(s): "
                                  f"{self.target!r}.")
        if list(map(str, df.columns)).count(self.target) > 1:
            raise _table_violation([duplicate_names(list(map(str, df.columns)))])
        cells = _Cells(text_names(df)[self.target])
        lab = cells.level_codes(self.labels)
        if cells.nan.any() or (lab < 0).any():
            raise BoundsViolation(f"the table does not fit the schema: "
                                  f"{self._target_problem(cells, lab)}.")
        return np.asarray(self.labels, dtype=object)[lab]

    def _target_problem(self, cells: Any, lab: NDArray[np.integer]) -> str:
        """The refusal of a target column: values with spaces around them, undeclared labels
        and/or missing cells (which rule, never a value or a count)."""
        spaced = cells.spaced()
        miss = cells.missing(self._missing_tokens(self.labels)) & (lab < 0)
        other = ~miss & ~spaced & (lab < 0)
        parts = [f"some values have {SPACES_RULE}"] if spaced.any() else []
        if miss.any() or other.any():
            parts.append(f"values must be one of the declared labels {list(self.labels)}")
        if miss.any():
            parts.append("some are missing (an empty cell, NaN or one of the schema's "
                         "missing_values): the target takes no 'missing' policy, so label "
                         "those records or leave them out of the file")
        if other.any():
            parts.append(_CODING_HINT)
        return f"target {self.target!r}: " + "; ".join(parts)
