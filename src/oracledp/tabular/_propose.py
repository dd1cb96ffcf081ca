"""The schema proposed from data by :meth:`TableSchema.infer` (NOT private).

:func:`propose_columns` reads the table (the checks of its header, target and values) and
proposes one entry per column (:func:`_propose_column`).

The proposed grid of a numeric column: its recorded resolution ``10^-d`` when the grid has at
most :data:`PROPOSE_MAX_GRID` points, else a round step (1, 2 or 5 times a power of ten)
that rounds the values; whole numbers (``7`` or ``7.0``) get step 1, so integer codes (a
1-5 answer, a 0-9 band) are numeric on their integer grid from the smallest to the largest
value seen.  A column the user names categorical whose values are whole numbers gets every
integer of that range as a level (:func:`_integer_levels`), not only the values seen.  A
column whose values are all or nearly all distinct (whole numbers or text) looks like an
identifier (:func:`_looks_like_identifier`): it is proposed ``"unresolved"``.  Numbers
written with leading zeros (codes such as ZIP or ICD codes) are categorical with their texts
as levels (:func:`_zero_padded`).  A person's identifier whose values repeat (a panel) is
proposed as its values say, with a warning that points to ``"records_per_person"``
(:func:`_repeated_id`).  Every entry is
marked ``"from_data": true``.  The warnings are one line per rule (:class:`_Rules`), naming
the columns, never a value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from oracledp._errors import TableInputError
from oracledp.tabular._cells import duplicate_names, text_names, typed_texts
from oracledp.tabular._columns import (
    DEFAULT_MISSING_VALUES,
    MAX_GRID,
    SPACES_RULE,
    Column,
    has_spaces,
    same_numbers,
)
from oracledp.tabular._csv import read_csv

#: The largest grid :meth:`TableSchema.infer` proposes without rounding the recorded values.
PROPOSE_MAX_GRID = 1000

#: A column with at least this many values, at least this share of them distinct, looks
#: like an identifier (record numbers, names).
_ID_MIN_VALUES = 20
_ID_DISTINCT_SHARE = 0.95


def _looks_like_identifier(n_values: int, n_distinct: int) -> bool:
    """All or nearly all of ``n_values`` (>= 20) values are distinct."""
    return n_values >= _ID_MIN_VALUES and n_distinct >= _ID_DISTINCT_SHARE * n_values


def _identifier(name: str) -> Column:
    """The unresolved entry of a column that looks like an identifier (rule "identifier")."""
    return Column(name, "unresolved", from_data=True,
                  note="looks like an identifier: all or nearly all values are distinct")


#: A number written with a leading zero (``01``, ``-007``, ``00.5``; not ``0`` or ``0.5``).
_LEADING_ZERO = re.compile(r"[+-]?0[0-9]")

#: A column name that says "identifier" (``id``, ``person_id``, ``PatientID``, ``pid``).
_ID_NAME = re.compile(r"(?:^|[^a-z])[pus]?id(?:$|[^a-z])|^(?:person|patient|subject|"
                      r"participant|respondent|household|member)s?$", re.IGNORECASE)
_ID_CAMEL = re.compile(r"[a-z0-9](?:ID|Id)$")  # PatientID, personId (case counts)
#: Words that name whom a row is about: a column named by one (``customer``, ``loyalty_card``)
#: or by one and a number word (``patient_no``, ``member number``) names its identifier.
_ID_WHO = frozenset({"person", "patient", "subject", "participant", "respondent", "household",
                     "member", "customer", "cust", "client", "user", "account", "card",
                     "student", "pupil", "employee", "worker", "visitor", "citizen",
                     "resident", "family", "case", "individual", "policyholder", "holder",
                     "donor", "voter", "taxpayer", "beneficiary", "applicant", "borrower"})
_ID_NUMBER = frozenset({"no", "nr", "num", "number", "code", "key", "ref", "id", "identifier"})
_COUNT_WORDS = frozenset({"n", "nb", "nr", "num", "number", "count", "total", "many"})
#: Words that make a name a measurement about someone, not who it is
#: (``spend_per_customer``, ``age_of_patient``, ``mean_visits_by_member``: review 18);
#: not "by" or "for" alone (``created_by_user``, ``claim_for_member`` are who: review 19).
_ABOUT_WORDS = frozenset({"per", "of", "each", "every", "avg", "mean", "average", "median",
                          "rate", "ratio", "pct", "percent", "sum"})
#: A column of whole numbers that repeat looks like identifiers when it has at least this
#: many values, covering at least half the integers of its range, at least half the rows
#: sharing their value with another row, no value on more than _ID_MAX_ROWS rows, and the
#: rows of a value mostly next to each other (a panel's file lists a person's rows
#: together; a measurement's equal values, such as uniform integers, are scattered).
_ID_DENSE_VALUES = 200
_ID_MAX_ROWS = 50


def _name_says_who(name: str) -> bool:
    """The name is a "who" word (singular: ``employees``, ``active_users`` are counts),
    alone or followed by a number word; not a count of them (``n_cards``,
    ``number_of_users``) nor a measurement about them (``spend_per_customer``,
    :data:`_ABOUT_WORDS`)."""
    words = [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)]
    if not words or (len(words) > 1 and words[0] in _COUNT_WORDS):
        return False
    if _ABOUT_WORDS.intersection(words[:-1]):
        return False
    last = words[-1]
    return last in _ID_WHO or (last in _ID_NUMBER and len(words) > 1 and words[-2] in _ID_WHO)


def _handed_out(values: pd.Series, counts: pd.Series) -> bool:
    """Whole numbers handed out in turn, several rows each, listed together (see
    :data:`_ID_DENSE_VALUES`)."""
    if len(counts) < _ID_DENSE_VALUES or counts.max() > _ID_MAX_ROWS:
        return False
    num = pd.to_numeric(pd.Series(counts.index, dtype=object), errors="coerce").to_numpy(
        dtype=float)
    if np.isnan(num).any() or not np.isfinite(num).all() or (num % 1 != 0).any():
        return False
    lo, hi = float(num.min()), float(num.max())
    rows = counts.to_numpy(dtype=float)
    if len(counts) < 0.5 * (hi - lo + 1) or rows[rows >= 2].sum() < 0.5 * rows.sum():
        return False
    cells = values.to_numpy(dtype=object)
    together = int((cells[1:] == cells[:-1]).sum())  # a row beside one of its value
    return together >= 0.5 * (len(cells) - len(counts))


#: Whole numbers read as dates written yyyymmdd (or yyyymm) when at least this many
#: distinct values all have that form.
_DATE_MIN_VALUES = 20


def _dates_as_numbers(values: pd.Series) -> bool:
    """Every value a whole number of the form yyyymmdd (1800-2199, month 01-12, day
    01-31) or yyyymm, with at least :data:`_DATE_MIN_VALUES` distinct values and more than
    one month among them (sweep 13: dates stored as numbers)."""
    num = pd.to_numeric(pd.Series(pd.unique(values), dtype=object), errors="coerce")
    if len(num) < _DATE_MIN_VALUES or num.isna().any() or (num % 1 != 0).any():
        return False
    v = num.to_numpy(dtype=float).astype(np.int64)
    for lo, hi, div in ((18000101, 21991231, 100), (180001, 219912, 1)):
        if v.min() >= lo and v.max() <= hi:
            day = v % 100 if div == 100 else np.ones_like(v)
            month = (v // div) % 100
            if (((month >= 1) & (month <= 12) & (day >= 1) & (day <= 31)).all()
                    and len(np.unique(month)) > 1):
                return True
    return False


def _leading_zeros(texts: pd.Series) -> bool:
    """Some number is written with a leading zero (a code such as a ZIP or ICD code)."""
    return bool(pd.Series(pd.unique(texts), dtype=object).astype(str).str.match(
        _LEADING_ZERO).any())


def _zero_padded(name: str, texts: pd.Series, num: pd.Series, missing: str, max_levels: int,
                 ) -> tuple[Column, str]:
    """A column of numbers some written with leading zeros: categorical with the texts seen
    as its levels (in the order of their numbers; a numeric column would drop the zeros),
    or "unresolved" when two texts write the same number (``01`` beside ``1``: levels are
    compared by value, so no schema keeps them apart) or when there are more than
    ``max_levels`` of them."""
    levels = tuple(sorted(pd.unique(texts).tolist(), key=lambda t: (float(t), t)))
    if same_numbers(levels) is not None:
        return (Column(name, "unresolved", from_data=True,
                       note="numbers written with leading zeros, some the same number as "
                            "another value (01 beside 1): declare it"), "zeros_same")
    if len(levels) > max_levels:
        return (Column(name, "unresolved", from_data=True,
                       note=f"more than {max_levels} codes written with leading zeros: "
                            "declare the public levels"), "zeros_many")
    return Column(name, "categorical", levels=levels, from_data=True,
                  missing=missing), "zeros"


def _repeated_id(name: str, values: pd.Series, max_levels: int) -> bool:
    """The column looks like a person's identifier whose values repeat (a panel: several
    rows per person): named like one (``id``, ``person_id``, ``PatientID``, ``customer``,
    ``patient_no``, ``loyalty_card``: :func:`_name_says_who`) with at least 20 distinct
    values, some seen more than once; or more than ``max_levels`` values each seen equally
    often, twice or more.  (Whole numbers handed out in turn, :func:`_handed_out`, are only
    warned of: a measurement in a file sorted by it looks the same.)  (A
    balanced panel's period column, 60 months of 300 people, is flagged too: from the counts
    alone it cannot be told from its people, 300 values of 60 rows each, where there are more
    periods than people; the conservative answer flags both.)"""
    counts = values.value_counts()
    if len(counts) < 2 or counts.max() < 2:
        return False
    if ((_ID_NAME.search(name) or _ID_CAMEL.search(name) or _name_says_who(name))
            and len(counts) >= _ID_MIN_VALUES):
        return True  # (not a code of a few values, such as a region_id)
    return len(counts) > max_levels and counts.min() == counts.max()


def _whole(num: pd.Series) -> bool:
    """Every value is a whole number (written ``7`` or ``7.0``)."""
    return bool((num % 1 == 0).all())


def _integer_levels(name: str, num: pd.Series, missing: str, max_levels: int,
                    ) -> tuple[Column, str]:
    """A column of whole numbers named categorical: every integer from the smallest to the
    largest value seen is a level (a code the data did not show is still a level), with
    its rule; "unresolved" if that range has more than ``max_levels`` integers."""
    lo, hi = int(num.min()), int(num.max())
    if hi - lo + 1 > max_levels:
        return (Column(name, "unresolved", from_data=True,
                       note=f"named categorical: more than {max_levels} integers between its "
                            "smallest and largest value"), "categorical_wide")
    return (Column(name, "categorical", levels=tuple(str(v) for v in range(lo, hi + 1)),
                   from_data=True, missing=missing), "categorical")


#: Spreadsheet formats of numbers that the schema does not read, told from the texts of a
#: column that is not all numbers: (pattern of one text, what it is, how to convert it).
_WRITTEN = {
    "thousands": (re.compile(r"-?\d{1,3}([,.' ]\d{3})+([.,]\d+)?"),
                  "numbers written with THOUSANDS SEPARATORS (12,345; or a decimal comma "
                  "followed by three digits)", "no separators: 12345"),
    "decimal_comma": (re.compile(r"-?\d+,\d+"), "numbers written with a DECIMAL COMMA (70,5)",
                      "a decimal point: 70.5"),
    "percent": (re.compile(r"-?\d+([.,]\d+)?\s?%"), "numbers written with a PERCENT SIGN "
                "(12%)", "the number alone, 12, or the share 0.12"),
    "currency": (re.compile(r"[$€£¥]\s?-?[\d,.]+|-?[\d,.]+\s?[$€£¥]"),
                 "numbers written with a CURRENCY SYMBOL ($12.50)", "the number alone: 12.50"),
    "units": (re.compile(r"-?\d+([.,]\d+)?\s?(?:[kmµ]?g|lbs?|oz|[kcm]?m|in|ft|[md]?l|"
                         r"kcal|cal|mmHg|bpm|°[CF]|[hms]|min|hrs?|yrs?|days?|years?|"
                         r"months?|weeks?)", re.IGNORECASE),
              "numbers written with a UNIT (78 kg, 12cm)",
              "the number alone in one unit, 78 (the unit in the column's name: weight_kg)"),
    "dates": (re.compile(r"\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?|"
                         r"\d{1,2}[/.]\d{1,2}[/.]\d{2,4}"),
              "DATES written as text (2024-03-01)", "a number on a public grid, e.g. the days "
              "since a public origin date, or the year and the month as two numeric columns"),
}


def _written(texts: pd.Series) -> str | None:
    """The spreadsheet format (a key of :data:`_WRITTEN`) that at least 90 % of ``texts``
    (the distinct texts of a column that are neither missing nor plain numbers: ``2.417``
    is a number, never a thousands separator) are written in, the first that fits in that
    order, or None."""
    uniq = pd.Series(pd.unique(texts), dtype=object).astype(str)
    if not len(uniq):
        return None
    for kind, (pattern, _, _) in _WRITTEN.items():
        if uniq.str.fullmatch(pattern).mean() >= 0.9:
            return kind
    return None


class _Rules:
    """The warnings of :meth:`TableSchema.infer`: the columns each rule applied to, said in
    one line per rule (by column and rule, never a value)."""

    def __init__(self, max_levels: int) -> None:
        self.max_levels = max_levels
        self.names: dict[str, list[str]] = {}
        self.details: dict[str, list[str]] = {}

    def add(self, rule: str, name: str, detail: str = "") -> None:
        self.names.setdefault(rule, []).append(name)
        if detail:
            self.details.setdefault(rule, []).append(f"{name!r} {detail}")

    def _text(self, rule: str) -> str:
        m = self.max_levels
        return {
            "missing": "missing cells (empty or a missing-value token): proposed \"missing\": "
                       "\"level\" (a public extra 'missing' feature); declare {\"fill\": "
                       "<public value>} or \"refuse\" instead if you prefer",
            "all_missing": "every cell is missing, so the type cannot be told (marked "
                           "\"unresolved\")",
            "constant": "every cell that is not missing holds the same value: as proposed "
                        "(one level, or a range made up around it) the column tells a model "
                        "nothing; declare the values it can take (public knowledge), or "
                        "delete it from the data, or its entry and fit with --ignore-extra",
            "identifier": "all or nearly all values are distinct, so each looks like an "
                          "IDENTIFIER (a record number, a name, a code per person): delete it "
                          "from the data, or delete its entry and fit with --ignore-extra. It "
                          "is marked \"unresolved\", which fit refuses until you decide; if it "
                          "is a measurement, declare it numeric with public bounds",
            "mixed": "numbers mixed with text that is not a missing-value token, so the type "
                     "cannot be told (marked \"unresolved\"): declare each numeric (with a "
                     "'missing' policy or the schema's missing_values) or categorical",
            "texts": f"more than {m} distinct texts (marked \"unresolved\"): declare the "
                     "public levels, or remove the column and fit with --ignore-extra",
            **{f"written_{kind}": (
                f"{said} (marked \"unresolved\"): the schema reads plain numbers only, so "
                f"convert the column first ({fix}), then infer again and declare it numeric")
               for kind, (_, said, fix) in _WRITTEN.items()},
            "codes": f"integer codes (whole numbers, at most {m} distinct values, each seen "
                     "twice on average): proposed "
                     "numeric on their integer grid (step 1) from the smallest to the largest "
                     "value seen, read from the data: confirm each range, or widen it to the "
                     "codebook's, so that no code the data did not show is refused. A column "
                     "whose codes name categories rather than an order (a region, a type) is "
                     "better declared categorical: propose it so with --categorical NAME "
                     "(categorical=[...] in Python), which lists every integer of its range "
                     "as a level",
            "zeros": "numbers written with LEADING ZEROS (codes such as ZIP or ICD codes): "
                     "proposed categorical with the texts seen as its levels (as a number "
                     "the zeros would be lost and 01 written 1), read from the data: confirm, "
                     "or replace with the codebook's levels. Levels that write numbers are "
                     "matched by value, so a cell 1 or 1.0 is read as the level 01",
            "zeros_same": "numbers written with LEADING ZEROS, and some write the same number "
                          "as another value (such as 01 beside 1; marked \"unresolved\"). "
                          "Levels that write numbers are compared by value, so no schema "
                          "keeps such values apart: declared numeric or categorical, 01 and "
                          "1 are one value (the zeros are lost). To keep them apart, rewrite "
                          "the column as text that is not a number (such as a letter before "
                          "each code) and infer again",
            "zeros_many": f"numbers written with LEADING ZEROS (codes such as ZIP or ICD "
                          f"codes), more than {m} distinct values (marked \"unresolved\"): "
                          "declare the public levels as text with their zeros, or numeric "
                          "if the zeros mean nothing (they are then lost: 01 is read and "
                          "written 1)",
            "dates": "whole numbers that look like DATES written as yyyymmdd or yyyymm "
                     "(year, month and day run together): a numeric grid takes a month's "
                     "last day and the next month's first for 70 apart, and synthetic "
                     "values between them need not be dates (a month 13); "
                     "write it as the number of days (or months) since a public date, or "
                     "as year, month and day columns, and declare those",
            "handed_out": "whole numbers that look HANDED OUT IN TURN, several rows each, a "
                          "value's rows listed together: if they identify people (a panel), "
                          "delete the column and declare \"records_per_person\" (a guarantee "
                          "per record does not protect a person with several rows); a "
                          "measurement in a file sorted by it looks the same, so its type is "
                          "proposed as its values say",
            "repeated_id": "looks like a PERSON IDENTIFIER whose values repeat: the same "
                           "value on several rows means several records per person (a "
                           "panel, repeated visits), and a guarantee per record does not "
                           "protect a person. Declare in the schema \"records_per_person\": "
                           "the most rows one person may have (every guarantee is then "
                           "stated and charged per person), and delete this column from the "
                           "data, or its entry and fit with --ignore-extra (an identifier is "
                           "not a feature; it is marked \"unresolved\"). If it is not an "
                           "identifier, declare its type",
            "categorical": "named categorical and written as whole numbers: proposed "
                           "categorical with every integer from the smallest to the largest "
                           "value seen as a level (read from the data: confirm, or replace "
                           "with the codebook's levels)",
            "categorical_wide": f"named categorical, but more than {m} integers lie between "
                                "the smallest and largest value (marked \"unresolved\"): "
                                "declare the public levels",
            "categorical_not_whole": "named categorical, but written as numbers that are not "
                                     "whole (marked \"unresolved\"): declare the public "
                                     "levels",
            "huge": "numbers too large for a grid (the span from the smallest to the largest "
                    "is beyond a float; marked \"unresolved\"): declare public bounds and a "
                    "step",
            "rounds": f"an exact grid of the recorded resolution would have more than "
                      f"{PROPOSE_MAX_GRID:,} points, so the proposed step ROUNDS the values "
                      f"({'; '.join(self.details.get(rule, []))}). A finer step is allowed "
                      f"(up to {MAX_GRID:,} points) but makes the exact oracle's problem "
                      "(opdisc, rspm) larger",
        }[rule]

    def lines(self) -> list[str]:
        """One line per rule that applied, in the order the rules first applied."""
        out = []
        for rule, names in self.names.items():
            which = (f"column {names[0]!r}" if len(names) == 1
                     else f"{len(names)} columns ({', '.join(map(repr, names))})")
            out.append(f"{which}: {self._text(rule)}")
        return out


def _decimals(texts: pd.Series) -> int:
    """The most decimals any of ``texts`` (numbers as written) carries, float noise aside:
    a text within :data:`_NOISE_ULPS` units in the last place of a number of fewer decimals
    (``0.15000000000000002``, ``0.30000000000000004``, as a computed export writes 0.15 and
    0.1 + 0.2) counts that number's decimals.  The grid rounds each value to its nearest
    point, so the proposed step then holds the value as recorded."""
    d = 0
    for t in pd.unique(texts):
        try:
            exp = Decimal(str(t)).as_tuple().exponent
        except InvalidOperation:
            continue
        if isinstance(exp, int) and -exp > d:
            d = max(d, _noise_free_decimals(str(t), -exp))
    return d


_NOISE_ULPS = 16
"""How many units in the last place of a float a written number may lie from a number of
fewer decimals and still count as that number with float noise."""


def _noise_free_decimals(text: str, written: int) -> int:
    """The fewest decimals ``d <= written`` whose rounding of ``text`` lies within
    :data:`_NOISE_ULPS` ulps of its float value, for a text of at least 16 significant digits
    (a float written in full, as a computation writes it); any other text keeps the decimals
    written (``12.30``: two)."""
    v = float(text)
    if not math.isfinite(v) or len(Decimal(text).as_tuple().digits) < 16:
        return written
    tol = _NOISE_ULPS * math.ulp(v)
    for d in range(min(written, 15)):
        if abs(float(round(Decimal(text), d)) - v) <= tol:
            return d
    return written


def _propose_numeric(name: str, texts: pd.Series, num: pd.Series, missing: str,
                     ) -> tuple[Column, str | None, str]:
    """A gridded numeric column for the recorded values, the rule that applied ("rounds"
    when the step rounds them, "huge" when no grid holds them: then the column is
    unresolved) or None, and the rule's detail (the rounding, from the public grid)."""
    whole = _whole(num)
    dec = 0 if whole else min(_decimals(texts), 12)
    fine = Fraction(1, 10**dec) if not whole else Fraction(_whole_resolution(num))
    lo = Fraction(str(float(num.min()))).limit_denominator(10**dec)
    hi = Fraction(str(float(num.max()))).limit_denominator(10**dec)
    if hi == lo:
        hi = lo + fine
    K = (hi - lo) / fine
    rule, detail = None, ""
    try:
        if K <= PROPOSE_MAX_GRID:
            step, lower, upper = fine, lo, hi
        else:
            rule = "rounds"
            step = Fraction(_nice_step(float((hi - lo) / PROPOSE_MAX_GRID))).limit_denominator(
                10**dec)
            lower = math.floor(lo / step) * step
            upper = lower + math.ceil((hi - lower) / step) * step
            detail = (f"recorded to {float(fine):g}, step {float(step):g}: by at most "
                      f"{float(step) / 2:g}")
        return Column(name, "numeric", lower=float(lower), upper=float(upper),
                      step=float(step), from_data=True, missing=missing), rule, detail
    except (OverflowError, ValueError):  # no float grid holds them (e.g. -1e308 to 1e308)
        return (Column(name, "unresolved", from_data=True,
                       note="numbers too large for a grid: declare public bounds and a step"),
                "huge", "")


#: Whole numbers all multiples of 10^k (k >= 1) are taken as recorded to 10^k when they
#: show at least this many distinct values (fewer could be multiples by chance).
_ROUNDED_MIN_VALUES = 20


def _whole_resolution(num: pd.Series) -> int:
    """The recorded resolution of whole numbers: the largest 10^k (k <= 15) of which every
    value is a multiple (incomes written 26600, 31200: 100), where at least
    :data:`_ROUNDED_MIN_VALUES` distinct values show it; else 1."""
    vals = pd.unique(num)
    if len(vals) < _ROUNDED_MIN_VALUES:
        return 1
    step = 1
    for k in range(1, 16):
        if not bool((np.mod(vals, 10**k) == 0).all()):
            break
        step = 10**k
    return step


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


def _labels(cells: pd.Series, target: str, tokens: set[str]) -> tuple[str, ...]:
    """The target's two labels as the data write them (NOT private), or the refusal."""
    if cells.isin(tokens).any():
        raise TableInputError(f"the target column {target!r} has missing cells; a fit "
                              "refuses them (remove those records first; a table to "
                              "synthesize needs no target: leave --target out and the column "
                              "is proposed as a feature column with a missing level)")
    labels = sorted(cells.unique().tolist())
    if len(labels) != 2:
        raise TableInputError(f"the target column {target!r} must hold exactly two labels "
                              "(it does not; its labels are not shown: they are data); a "
                              "table to synthesize needs no target: leave --target out and "
                              "the column is proposed as a feature column")
    return tuple(labels)


def propose_columns(data: pd.DataFrame | str | Path, target: str | None, max_levels: int,
                    categorical: Iterable[str],
                    ) -> tuple[tuple[Column, ...], tuple[str, ...], list[str]]:
    """The columns and labels :meth:`TableSchema.infer` proposes from ``data`` (a DataFrame or
    a CSV path) and its warnings: NOT private (see there).  Without a ``target`` every column
    is a feature column and there are no labels."""
    if not isinstance(data, (pd.DataFrame, str, Path)):
        raise TypeError("infer reads a pandas DataFrame or the path of a CSV file, got "
                        f"{type(data).__name__} (an Arrow or Polars table: pass its "
                        ".to_pandas())")
    if isinstance(data, pd.DataFrame):
        data = text_names(data)
        repeated = duplicate_names(list(map(str, data.columns)))
        if repeated:
            raise TableInputError(repeated)
    df = (read_csv(data) if isinstance(data, (str, Path))
          else pd.DataFrame({c: typed_texts(data[c]) for c in data.columns}))
    names = list(map(str, df.columns))
    spaced = [n for n, bad in zip(names, has_spaces(names), strict=True) if bad]
    problems = ([f"the header writes the column name(s) {', '.join(map(repr, spaced))} "
                 f"with {SPACES_RULE}"] if spaced else [])
    problems += [f"column {n!r}: some values have {SPACES_RULE}"
                 for n, col in zip(names, df.columns, strict=True)
                 if has_spaces(df[col]).any()]
    if problems:  # nothing is stripped: the fit would refuse the table
        raise TableInputError("; ".join(problems))
    if target is not None and target not in df.columns:
        raise TableInputError(f"the target column {target!r} is not in the table "
                              f"(columns: {list(map(str, df.columns))})")
    named = list(dict.fromkeys([categorical] if isinstance(categorical, str)
                               else categorical))
    unknown = [n for n in named if n not in df.columns or n == target]
    if unknown:
        raise TableInputError(f"categorical= (--categorical) names "
                              f"{', '.join(map(repr, unknown))}, not a feature column of "
                              "the table (the target is not one)")
    tokens = set(DEFAULT_MISSING_VALUES) | {""}
    labels = () if target is None else _labels(df[target], target, tokens)
    cols: list[Column] = []
    rules = _Rules(max_levels)
    for name in map(str, df.columns):
        if name == target:
            continue
        col, rule, detail = _propose_column(name, df[name], tokens, max_levels,
                                                name in named)
        kept = df[name][~df[name].isin(tokens)]  # the cells that are not missing
        if rule != "identifier" and _repeated_id(name, kept, max_levels):
            # an identifier is not a feature: no type is proposed for it, nor its rule's
            # warning (a number of persons proposed numeric had been one deletion of
            # from_data away from a fit on it)
            col, rule, detail = Column(
                name, "unresolved", from_data=True,
                note="looks like a person identifier whose values repeat: delete it (and "
                     "declare records_per_person), or declare its type if it is not one"), (
                "repeated_id"), ""
        elif rule not in ("identifier", "repeated_id") and col.kind == "numeric":
            if _handed_out(kept, kept.value_counts()):
                rules.add("handed_out", name)  # warned of, its type still proposed
            if _dates_as_numbers(kept):
                rules.add("dates", name)  # warned of, its type still proposed
        cols.append(col)
        if col.missing == "level":
            rules.add("missing", name)
        if rule:
            rules.add(rule, name, detail)
        cells = kept
        if col.kind == "numeric":  # by value: 7 and 7.0 are one number
            cells = pd.to_numeric(kept, errors="coerce")
        if col.kind != "unresolved" and cells.nunique() == 1:
            rules.add("constant", name)
    return tuple(cols), labels, rules.lines()


def _propose_column(name: str, s: pd.Series, tokens: set[str], max_levels: int,
                    categorical: bool) -> tuple[Column, str | None, str]:
    """The proposed entry of one column (see :meth:`TableSchema.infer`), the rule it applied (a key
    of :class:`~oracledp.tabular._propose._Rules`, or None) and that rule's detail."""
    miss = s.isin(tokens)
    s = s[~miss]
    missing = "level" if miss.any() else "refuse"
    if not len(s):
        return (Column(name, "unresolved", from_data=True, note="every cell is missing"),
                "all_missing", "")
    num = pd.to_numeric(s, errors="coerce")
    isnum = num.notna() & np.isfinite(num.to_numpy(dtype=float, na_value=np.nan))
    if isnum.all():
        whole = _whole(num)
        if _leading_zeros(s) and (categorical or not (
                whole and _looks_like_identifier(len(num), num.nunique()))):
            return (*_zero_padded(name, s, num, missing, max_levels), "")
        if categorical and whole:
            return (*_integer_levels(name, num, missing, max_levels), "")
        if categorical:
            return (Column(name, "unresolved", from_data=True,
                           note="named categorical: numbers that are not whole"),
                    "categorical_not_whole", "")
        n_distinct = num.nunique()
        if whole and _looks_like_identifier(len(num), n_distinct):
            return _identifier(name), "identifier", ""
        col, rule, detail = _propose_numeric(name, s, num, missing)
        if rule is None and whole and col.step == 1 and n_distinct <= max_levels and (
                len(num) >= 2 * n_distinct):  # few values, each seen twice on average
            rule = "codes"
        return col, rule, detail
    levels = sorted(s.unique().tolist())
    # numbers in a spreadsheet's format, where the column would otherwise be unresolved or an
    # identifier (a few such texts are fine levels of a categorical: "10%", "2024-03-01")
    written = (_written(s[~isnum.to_numpy()]) if isnum.any() or len(levels) > max_levels
               or _looks_like_identifier(len(s), len(levels)) else None)
    if written is not None:
        return (Column(name, "unresolved", from_data=True,
                       note=f"{_WRITTEN[written][1]}: convert them to plain numbers "
                            "first"), f"written_{written}", "")
    if isnum.any():
        return (Column(name, "unresolved", from_data=True,
                       note="numbers mixed with other text"), "mixed", "")
    if not categorical and _looks_like_identifier(len(s), len(levels)):
        return _identifier(name), "identifier", ""
    if len(levels) > max_levels:
        return (Column(name, "unresolved", from_data=True,
                       note=f"more than {max_levels} distinct texts"), "texts", "")
    return (Column(name, "categorical", levels=tuple(levels), from_data=True,
                   missing=missing), None, "")
