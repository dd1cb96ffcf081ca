"""Checking helpers of :class:`~oracledp.tabular.TableSchema`: cells, errors, messages.

:class:`_Cells` (the cells of one column, reduced to their distinct values), the one
:class:`~oracledp._errors.BoundsViolation` listing every problem of a table
(:func:`_table_violation`) and the sentence counting the rows the prediction policy adjusted
(:func:`describe_adjusted`).  Messages name columns and rules, never a record value or a row.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp._errors import BoundsViolation
from oracledp.tabular._columns import has_spaces, level_codes, levels_by_value


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


def describe_clipped(columns: list[str]) -> str:
    """The one sentence naming the columns whose numbers outside the declared bounds were
    clipped to them (``"out_of_bounds": "clip"``): names only, no count, row or value."""
    return (f"column(s) {', '.join(map(repr, columns))}: numbers outside the declared bounds "
            "were clipped to them (\"out_of_bounds\": \"clip\": a public map of each record, "
            "so a guarantee holds for the original records). Which columns had such numbers is "
            "a non-private diagnostic (read from the data; no count, row or value is given).")


def warn_clipped(columns: Any, stacklevel: int = 3) -> None:
    """Issue the :class:`~oracledp._errors.ClippedValuesWarning` for ``columns`` (if any)."""
    if columns:
        import warnings

        from oracledp._errors import ClippedValuesWarning

        warnings.warn(describe_clipped(sorted(columns)), ClippedValuesWarning,
                      stacklevel=stacklevel)


def text_names(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its column names as text, as a CSV header writes them (``0`` is ``"0"``);
    ``df`` itself where they are text already.  A MultiIndex of columns is refused (sweep
    14: names that are not text had raised a bare ``KeyError``)."""
    from oracledp._errors import TableInputError

    if isinstance(df.columns, pd.MultiIndex):
        raise TableInputError("the table's columns are a MultiIndex: give one name per column "
                              "(e.g. df.columns = ['_'.join(map(str, c)) for c in "
                              "df.columns])")
    if all(isinstance(c, str) for c in df.columns):
        return df
    return df.set_axis([str(c) for c in df.columns], axis=1)


def duplicate_names(names: list[str]) -> str:
    """The problem of a header that names a column more than once ("" if none): each name
    with how many times it appears (a property of the header, not of any record)."""
    times = {1: "once", 2: "twice"}
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    parts = [f"the column name {name!r} {times.get(k, f'{k} times')}"
             for name, k in seen.items() if k > 1]
    if not parts:
        return ""
    return (f"the header has {' and '.join(parts)} (each column needs its own name: rename or "
            "delete the repeated columns)")


def _table_violation(problems: list[str]) -> BoundsViolation:
    """The one error listing every problem of a table (by column and rule, never a value)."""
    return BoundsViolation(
        "the table does not fit the schema: " + "; ".join(problems)
        + ". Fix the data or the schema (no value is dropped or guessed)."
    )


def typed_texts(s: pd.Series) -> pd.Series:
    """A DataFrame column as the texts the data engine reads for it (:func:`~oracledp.
    tabular._sources._text_of`), so that a DataFrame and the same data as Parquet read alike:
    a missing value (NaN, ``None``, ``pd.NA``, ``NaT``) is the empty text; a timestamp without
    a time zone is ``2024-01-01 00:00:00`` with its fraction of a second when it has one
    (``.5``, to the microsecond, as the engine keeps it), whatever the other values of the
    column (pandas writes ``2024-01-01`` for a column of midnights); anything else as
    ``astype(str)`` writes it (a boolean ``True`` / ``False``; a timestamp with a time zone
    ``+00:00``, where the engine writes ``+00`` in its session's zone: not alike)."""
    missing = s.isna().to_numpy(dtype=bool)
    if s.dtype.kind == "M" and not isinstance(s.dtype, pd.DatetimeTZDtype):
        whole = s.dt.strftime("%Y-%m-%d %H:%M:%S").astype(object)
        micro = s.dt.strftime("%f").fillna("").astype(object).str.rstrip("0")  # "" if whole
        text = whole + np.where(micro != "", "." + micro, "")
    else:
        text = s.astype(object).astype(str)
    return pd.Series(np.where(missing, "", text.to_numpy(dtype=object)), index=s.index,
                     dtype=object)


class _Cells:
    """The cells of one column, for rules that look at one cell at a time.

    A column of strings (what :func:`read_csv` gives) or of numbers is reduced to its distinct
    values, each rule is evaluated once per distinct value and mapped back with
    :meth:`per_row`; any other column is taken cell by cell.  ``raw``: the values as given;
    ``text``: as strings, exactly as written (``astype(str)``, computed when first asked for;
    nothing is stripped: see :meth:`spaced`); ``nan``: the cells that are NaN (per row);
    ``numeric``: a column of numbers (no text to read: never an empty cell or a
    missing-value token).
    """

    def __init__(self, s: pd.Series) -> None:
        try:
            inv, uniq = pd.factorize(s, use_na_sentinel=True)
        except (TypeError, NotImplementedError):  # cells that are not single values (lists),
            # or a dtype pandas cannot factorize (float16): taken one by one (sweep 14)
            inv, uniq = np.empty(0, dtype=np.intp), []
        self.numeric = s.dtype.kind in "iuf"
        if len(uniq) and (self.numeric or isinstance(s.dtype, pd.StringDtype) or (
                s.dtype == object and all(isinstance(u, str) for u in uniq))):
            self.raw = pd.Series(uniq, dtype=s.dtype)
            self._inv: NDArray[np.intp] | None = np.where(inv < 0, 0, inv)
            self.nan = inv < 0
        else:
            self.raw = s.reset_index(drop=True)
            self._inv = None
            self.nan = self.raw.isna().to_numpy(dtype=bool)

    @cached_property
    def text(self) -> pd.Series:
        if self.raw.dtype.kind == "M":  # the engine's text of a timestamp (typed_texts)
            return typed_texts(self.raw)
        return self.raw.astype(str)

    def spaced(self) -> NDArray[np.bool_]:
        """Per row: a text cell that begins or ends with white space (refused by every rule
        that reads cells, never stripped; a cell of spaces only is not an empty cell)."""
        if self.numeric:
            return np.zeros(len(self.nan), dtype=bool)
        return self.per_row(has_spaces(self.text)) & ~self.nan

    def missing(self, tokens: list[str]) -> NDArray[np.bool_]:
        """Per row: NaN, empty, or one of ``tokens`` (exactly as written)."""
        if self.numeric:
            return self.nan
        return self.per_row((self.text.isin(tokens) | (self.text == "")).to_numpy(dtype=bool)
                            ) | self.nan

    def numbers(self) -> NDArray[np.float64]:
        """One float per entry of ``raw``: its number (NaN where it is none); a bool, a date
        or time, a complex number is none, as in a CSV, which writes them as text that is no
        number (sweep 14 found them taken as 0/1, nanoseconds and real parts).  A float32 is
        its double, as the data engine reads it from Arrow or Parquet (its shortest text is
        not one: numpy and DuckDB write some float32 differently, review 19)."""
        raw = self.raw
        if raw.dtype.kind in "bmMc" or isinstance(raw.dtype, pd.BooleanDtype):
            return np.full(len(raw), np.nan)
        if raw.dtype == object:
            raw = raw.where(~raw.map(lambda v: isinstance(v, (bool, np.bool_, complex))))
        return pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)

    def level_codes(self, levels: tuple[str, ...]) -> NDArray[np.intp]:
        """Per row: the position of the cell's level in ``levels`` (-1 for none), by
        :func:`~oracledp.tabular._columns.level_codes` (numbers by value, text exactly)."""
        if self.numeric:
            return self.per_row(levels_by_value(levels, self.numbers()))
        # a NaN cell is no level (its row points at the first distinct value: sweep 14, a
        # missing target cell was taken for that value's label and the refusal said nothing)
        return np.where(self.nan, -1, self.per_row(level_codes(levels, self.text)))

    def per_row(self, values: Any) -> NDArray[Any]:
        """``values`` (one per entry of ``raw``) for every cell."""
        arr = np.asarray(values)
        return arr if self._inv is None else arr[self._inv]
