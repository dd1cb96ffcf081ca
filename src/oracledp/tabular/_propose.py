"""Numeric columns proposed from data for :meth:`TableSchema.infer` (NOT private).

The proposed grid of a numeric column: its recorded resolution ``10^-d`` when the grid has at
most :data:`PROPOSE_MAX_GRID` points, else a round step (1, 2 or 5 times a power of ten)
that rounds the values, with a warning.  Every such entry is marked ``"from_data": true``.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import pandas as pd

from oracledp.tabular._columns import MAX_GRID, Column

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
