"""Public domains of categorical attributes, and the Adult categorical benchmark.

A :class:`Domain` is an ordered tuple of attributes, each with its ordered list
of *public* levels.  It is declared explicitly or built from public metadata
(for Adult: the codebook constants :data:`oracledp.datasets._adult.CATEGORIES`);
it is never inferred from data values, because the set of values present in a
private dataset is itself private (a level seen once reveals one record).

Records are encoded as integer codes: ``codes[i, j]`` is the position of record
``i``'s value of attribute ``j`` in ``domain.levels[j]``.

Adult categorical benchmark
---------------------------
The contingency-table experiments use 8 categorical attributes of the training
file ``adult.data``: workclass, education, marital-status, occupation,
relationship, race, sex, income.  With ``complete_rows=True`` (the reference
setting) the records with ``?`` in any of them are dropped, leaving
n = 30,718 of 32,561 records (the ``?`` rows of workclass are a subset of those
of occupation).  The drop reads the data, so it is a data-dependent
preprocessing step done once before any private algorithm runs, exactly like
the balancing of :func:`oracledp.datasets._adult.load_adult`: privacy guarantees
are about the resulting dataset of public size n.

Structural zero [R].  In the complete-rows domain, workclass omits the codebook
level ``Never-worked``: occupation is defined only for persons who have worked
(the census asks it of the employed and of the unemployed with a previous job),
so a person who never worked has occupation ``?`` and cannot be a complete row.
This is a property of the public codebook, not of the observed values; the
tests check that the data agree (all 7 ``Never-worked`` records have occupation
``?``).  With it the 3-way workload has the reference size 18,597 (19,664 if
the level were kept).  With ``complete_rows=False``, ``?`` is one more public
level of workclass and occupation and ``Never-worked`` is kept
(9 * 16 * 7 * 15 * 6 * 5 * 2 * 2 = 1,814,400 cells).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp._errors import BoundsViolation

__all__ = [
    "ADULT_CATEGORICAL_ATTRIBUTES",
    "AdultCategorical",
    "Domain",
    "adult_categorical_domain",
    "load_adult_categorical",
]

ADULT_CATEGORICAL_ATTRIBUTES: tuple[str, ...] = (
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "income",
)

#: Public labels of the income attribute in the training file adult.data.
_INCOME_LEVELS: tuple[str, ...] = ("<=50K", ">50K")


def _check_level(attr: str, level: object) -> Hashable:
    if isinstance(level, bool | np.bool_):
        return bool(level)
    if isinstance(level, str):
        return level
    if isinstance(level, numbers.Integral):
        return int(level)
    raise TypeError(
        f"attribute {attr!r}: levels must be strings, integers or booleans, got "
        f"{level!r} ({type(level).__name__}); real-valued levels would make a continuous "
        "attribute look categorical"
    )


@dataclass(frozen=True)
class Domain:
    """An ordered, public, finite domain of categorical attributes.

    Parameters
    ----------
    attributes:
        Attribute names, in order (distinct, non-empty strings).
    levels:
        For each attribute, its public levels in order (distinct strings,
        integers or booleans; at least one).
    """

    attributes: tuple[str, ...]
    levels: tuple[tuple[Hashable, ...], ...]

    def __post_init__(self) -> None:
        if isinstance(self.attributes, str):
            raise TypeError("attributes must be a sequence of names, not a single string")
        attrs = tuple(self.attributes)
        levels = tuple(self.levels)
        if not attrs:
            raise ValueError("a Domain needs at least one attribute")
        if len(levels) != len(attrs):
            raise ValueError(
                f"{len(attrs)} attributes but {len(levels)} level lists; give one list per attribute"
            )
        for a in attrs:
            if not isinstance(a, str) or not a:
                raise TypeError(f"attribute names must be non-empty strings, got {a!r}")
        dup = sorted({a for a in attrs if attrs.count(a) > 1})
        if dup:
            raise ValueError(f"attributes listed twice: {dup}")
        clean: list[tuple[Hashable, ...]] = []
        for a, lv in zip(attrs, levels, strict=True):
            if isinstance(lv, str):
                raise TypeError(f"attribute {a!r}: levels must be a sequence, not a single string")
            lv_t = tuple(_check_level(a, v) for v in lv)
            if not lv_t:
                raise ValueError(f"attribute {a!r} has no levels")
            if len(set(lv_t)) != len(lv_t):
                raise ValueError(f"attribute {a!r} lists a level twice: {lv_t}")
            clean.append(lv_t)
        object.__setattr__(self, "attributes", attrs)
        object.__setattr__(self, "levels", tuple(clean))

    @classmethod
    def from_levels(cls, levels: Mapping[str, Iterable[Hashable]]) -> Domain:
        """A domain from a mapping ``attribute -> public levels`` (mapping order kept)."""
        return cls(tuple(levels), tuple(levels.values()))  # Domain checks each list

    @property
    def shape(self) -> tuple[int, ...]:
        """Number of levels of each attribute."""
        return tuple(len(lv) for lv in self.levels)

    @property
    def size(self) -> int:
        """Number of cells of the full contingency table."""
        return math.prod(self.shape)

    def __len__(self) -> int:
        return len(self.attributes)

    def index(self, attribute: str) -> int:
        """Position of an attribute."""
        try:
            return self.attributes.index(attribute)
        except ValueError:
            raise KeyError(
                f"unknown attribute {attribute!r}; domain has {self.attributes}"
            ) from None

    def encode(self, df: pd.DataFrame) -> NDArray[np.int64]:
        """Integer codes of the records of ``df``, shape ``(n, len(self))``.

        The columns of ``df`` must be exactly the domain's attributes (any
        order).  Refused, before anything else happens: a non-DataFrame, an
        empty frame, unknown or missing columns, real-valued (float) columns
        (:class:`TypeError`), and values outside the declared levels, NaN
        included (:class:`~oracledp._errors.BoundsViolation`, naming each
        offending column and its number of declared levels, never a value, a
        count or a row: those are private; nothing is dropped or clipped).
        """
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"encode expects a pandas DataFrame, got {type(df).__name__}")
        from oracledp.tabular._cells import text_names

        df = text_names(df)  # names as text, as a CSV header writes them
        cols = [str(c) for c in df.columns]
        if len(set(cols)) != len(cols):
            raise ValueError(f"duplicate column names: {cols}")
        unknown = [c for c in cols if c not in self.attributes]
        if unknown:
            raise ValueError(
                f"unknown columns {unknown}: the domain declares {list(self.attributes)}; "
                "drop them or declare them in the Domain"
            )
        missing = [a for a in self.attributes if a not in cols]
        if missing:
            raise ValueError(f"columns {missing} of the domain are missing from the frame")
        if len(df) == 0:
            raise ValueError("the frame has no rows; there is nothing to encode")
        for a in self.attributes:
            dtype = df[a].dtype
            if pd.api.types.is_float_dtype(dtype) or pd.api.types.is_complex_dtype(dtype):
                raise TypeError(
                    f"column {a!r} is continuous ({dtype}); discretize it with a public, "
                    "data-independent rule and declare the bins as levels"
                )
        codes = np.empty((len(df), len(self)), dtype=np.int64)
        problems: list[str] = []
        for j, (a, lv) in enumerate(zip(self.attributes, self.levels, strict=True)):
            raw = df[a].to_numpy(dtype=object)
            idx = pd.Index(list(lv), dtype=object).get_indexer(raw)
            if (idx < 0).any():
                # The rule and the public declaration only: the offending values, their
                # counts and their rows are private and never appear in a message.
                problems.append(
                    f"column {a!r}: values must be one of its {len(lv)} declared levels "
                    "(a value outside them, or a missing value, was found)"
                )
            codes[:, j] = idx
        if problems:
            raise BoundsViolation(
                "records outside the declared public domain (nothing is dropped silently): "
                + "; ".join(problems)
                + ". Fix the data or declare the levels (values are not shown: they are data)."
            )
        return codes

    def check_codes(self, codes: object, name: str = "codes") -> NDArray[np.int64]:
        """Validate an integer code matrix of this domain (shape ``(n, d)``, n >= 1).

        A code outside ``0..len(levels) - 1`` raises BoundsViolation naming the attribute and
        its declared range, never the code, its row or how many there are.
        """
        arr = np.asarray(codes)
        if arr.ndim != 2 or arr.shape[1] != len(self):
            raise ValueError(f"{name} must have shape (n, {len(self)}), got {arr.shape}")
        if arr.shape[0] == 0:
            raise ValueError(f"{name} has no rows")
        if not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"{name} must be an integer array, got dtype {arr.dtype}")
        arr = arr.astype(np.int64, copy=False)
        hi = np.asarray(self.shape)
        bad_cols = ((arr < 0) | (arr >= hi)).any(axis=0)
        if bad_cols.any():
            # Attribute and rule only: no code value, row index or count (they are data).
            rules = "; ".join(
                f"attribute {self.attributes[c]!r} (column {c}) takes codes 0..{hi[c] - 1}"
                for c in np.flatnonzero(bad_cols)
            )
            raise BoundsViolation(
                f"{name} holds codes outside the declared public domain: {rules}. "
                "Nothing is dropped or clipped (values are not shown: they are data)."
            )
        return arr

    def decode(self, codes: object) -> pd.DataFrame:
        """The records of an integer code matrix, as a DataFrame of levels."""
        arr = self.check_codes(codes)
        data = {}
        for j, (a, lv) in enumerate(zip(self.attributes, self.levels, strict=True)):
            lv_arr = np.empty(len(lv), dtype=object)
            lv_arr[:] = list(lv)
            data[a] = lv_arr[arr[:, j]]
        return pd.DataFrame(data, columns=list(self.attributes))


def adult_categorical_domain(*, complete_rows: bool = True) -> Domain:
    """The public domain of Adult's 8 categorical attributes (see the module docstring).

    ``complete_rows=True``: codebook levels, without workclass ``Never-worked``
    (a structural zero of complete rows), 1,505,280 cells.
    ``complete_rows=False``: codebook levels plus ``?`` for workclass and
    occupation, 1,814,400 cells.
    """
    from oracledp.datasets._adult import CATEGORIES, MISSING_LEVEL

    levels: dict[str, tuple[str, ...]] = {}
    for a in ADULT_CATEGORICAL_ATTRIBUTES:
        if a == "income":
            lv = _INCOME_LEVELS
        else:
            lv = CATEGORIES[a]
        if complete_rows and a == "workclass":
            lv = tuple(v for v in lv if v != "Never-worked")
        if not complete_rows and a in ("workclass", "occupation"):
            lv = (*lv, MISSING_LEVEL)
        levels[a] = lv
    return Domain.from_levels(levels)


class AdultCategorical(NamedTuple):
    """Encoded Adult categorical records and their domain."""

    codes: NDArray[np.int64]
    domain: Domain


def load_adult_categorical(*, complete_rows: bool = True) -> AdultCategorical:
    """The 8 categorical attributes of adult.data, encoded.

    ``complete_rows=True`` drops the records with ``?`` (n = 30,718);
    otherwise all 32,561 records are kept with ``?`` as a level.
    """
    from oracledp.datasets._adult import _read_split

    domain = adult_categorical_domain(complete_rows=complete_rows)
    df = _read_split("train")[list(ADULT_CATEGORICAL_ATTRIBUTES)]
    if complete_rows:
        df = df[~(df == "?").any(axis=1)].reset_index(drop=True)
    return AdultCategorical(domain.encode(df), domain)
