"""Columns proposed from data for :meth:`TableSchema.infer` (NOT private).

The proposed grid of a numeric column: its recorded resolution ``10^-d`` when the grid has at
most :data:`PROPOSE_MAX_GRID` points, else a round step (1, 2 or 5 times a power of ten)
that rounds the values, with a warning; whole numbers (``7`` or ``7.0``) get step 1.  Whole
numbers with at most :data:`PROPOSE_MAX_CODES` distinct values, each seen at least twice on
average, are codes: a categorical column with those levels.  A column whose values are all
or nearly all distinct (whole numbers or text) looks like an identifier
(:func:`_looks_like_identifier`): it is proposed ``"unresolved"``.  Every entry is marked
``"from_data": true``.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import pandas as pd

from oracledp.tabular._columns import MAX_GRID, Column

#: The largest grid :meth:`TableSchema.infer` proposes without rounding the recorded values.
PROPOSE_MAX_GRID = 1000

#: Whole-number columns with at most this many distinct values are proposed as categorical
#: codes (e.g. 0/1 flags, 1..5 answers).
PROPOSE_MAX_CODES = 12

#: A column with at least this many values, at least this share of them distinct, looks
#: like an identifier (record numbers, names).
_ID_MIN_VALUES = 20
_ID_DISTINCT_SHARE = 0.95


def _looks_like_identifier(n_values: int, n_distinct: int) -> bool:
    """All or nearly all of ``n_values`` (>= 20) values are distinct."""
    return n_values >= _ID_MIN_VALUES and n_distinct >= _ID_DISTINCT_SHARE * n_values


def _identifier(name: str, missing: str) -> tuple[Column, str]:
    """The unresolved entry of a column that looks like an identifier, and its warning."""
    return (Column(name, "unresolved", from_data=True,
                   note="looks like an identifier: all or nearly all values are distinct"),
            f"column {name!r}: all or nearly all values are distinct, so it looks like an "
            "IDENTIFIER (a record number, a name, a code per person): delete it from the data, "
            "or delete its entry and fit with --ignore-extra. It is marked \"unresolved\", "
            "which fit refuses until you decide; if it is a measurement, declare it numeric "
            "with public bounds")


def _whole(num: pd.Series) -> bool:
    """Every value is a whole number (written ``7`` or ``7.0``)."""
    return bool((num % 1 == 0).all())


def _propose_codes(name: str, num: pd.Series, missing: str) -> tuple[Column, str] | None:
    """Whole numbers with few distinct values, each seen twice on average: a categorical
    column of codes (levels written as integers), with a warning; else None."""
    distinct = sorted(set(num.tolist()))
    if not _whole(num) or len(distinct) > PROPOSE_MAX_CODES or len(num) < 2 * len(distinct):
        return None
    levels = tuple(str(int(v)) for v in distinct)
    return (Column(name, "categorical", levels=levels, from_data=True, missing=missing),
            f"column {name!r}: whole numbers with at most {PROPOSE_MAX_CODES} distinct values, "
            "proposed as categorical codes (one 0/1 feature per level; 1.0 and 1 are the same "
            "level); declare it numeric (public lower, upper and step 1) instead if its order "
            "matters, e.g. a count or a score")


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
    dec = 0 if _whole(num) else min(_decimals(texts), 12)
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
