"""The UCI Adult (Census Income) data, encoded as in Neel et al. (ICML 2020).

Default encoding (``load_adult()``)
-----------------------------------
The ICML 2020 experiment (Neel, Roth, Vietri, Wu, *Oracle Efficient Private
Non-Convex Optimization*, Section 5) uses "a subset of 7 features from the
Adult dataset that are represented by d = 23 real-valued features after
one-hot encoding", chosen to maximise the accuracy of its logistic-regression
baseline; the paper does not list them.  Counting one column per numeric
attribute and one per level of a categorical one (workclass 8, education 16,
marital-status 7, occupation 14, relationship 6, race 5, sex 2,
native-country 41), 41 subsets of 7 attributes give d = 23, but only one of
them avoids ``fnlwgt``, ``capital-gain`` and ``capital-loss`` (a sampling
weight and two heavy-tailed money columns with no public bound a privacy proof
could use).  That subset is our default::

    age, education-num, hours-per-week          3 numeric columns
    marital-status (7), relationship (6),        7 + 6 + 5 + 2 one-hot columns
    race (5), sex (2)
                                                 d = 3 + 20 = 23

Column order: the numeric columns first, then the one-hot blocks in the order
marital-status, relationship, race, sex; within a block the levels are in
sorted (``sorted()``, code point) order.

Numeric columns are divided by a *public* maximum taken from the census
codebook, never from the data: ``age`` is top-coded at 90, ``education-num``
is the code 1..16 of the 16 education levels, and ``hours-per-week`` is
top-coded at 99.  The Adult extraction also kept only records with age > 16
and hours-per-week > 0 (``adult.names``), so the declared ranges are
age 17..90, education-num 1..16, hours-per-week 1..99 (the maxima are also the
maxima of both files, which the tests check).  Each value is stored as the
float64 ``value / max`` of two integers, an exact rational with denominator
dividing 90, 16 or 99 (common denominator 7,920), which the exact 0/1 oracle
reads back without error.

The category lists are public constants of the codebook, fixed here in the
code.  A record whose value is outside the declared range or list, including a
missing value ``?`` in a used column, raises
:class:`~oracledp._errors.BoundsViolation` naming the column and its declared
range or list (never a record's value, row or count); no record is dropped or
clipped silently.  None of the seven default attributes
has a missing value in either file.

Missing values in optional attributes
-------------------------------------
``workclass``, ``occupation`` and ``native-country`` have ``?`` entries.  With
``missing="raise"`` (the default) selecting them raises BoundsViolation.  With
``missing="category"``, ``?`` is encoded as one more public level, named
``"?"`` and placed last in the block of those three attributes only.  Rows are
never dropped: dropping would make the number of records depend on the data,
which the replace-one neighbouring relation of the privacy proofs does not
allow.

Balancing
---------
``balanced=True`` keeps every positive record (income ``>50K``) of the split
and as many negatives drawn without replacement with
``check_rng(random_state).choice(negatives, size=n_pos, replace=False)``
(``numpy.random.default_rng(random_state)`` for an int).  Rows keep the order
of the source file (``source_rows`` gives their indices).  Train: 7,841 + 7,841
= 15,682 records; test: 3,846 + 3,846 = 7,692.  The balancing reads the labels,
so it is a data-dependent preprocessing step done once, before any private
algorithm runs; the privacy guarantees are about the resulting dataset.

References
----------
B. Becker and R. Kohavi. Adult. UCI Machine Learning Repository, 1996.
https://doi.org/10.24432/C5XW20 (CC BY 4.0).
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp._errors import BoundsViolation
from oracledp._validation import RandomLike, check_rng
from oracledp.datasets._base import TabularDataset
from oracledp.datasets._files import read_verified
from oracledp.oracles._halfspace import FeatureSchema

__all__ = [
    "CATEGORIES",
    "COLUMNS",
    "DEFAULT_ATTRIBUTES",
    "MISSING_ALLOWED",
    "NUMERIC_RANGE",
    "load_adult",
]

COLUMNS: tuple[str, ...] = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)

DEFAULT_ATTRIBUTES: tuple[str, ...] = (
    "age",
    "education-num",
    "hours-per-week",
    "marital-status",
    "relationship",
    "race",
    "sex",
)

#: Public (codebook) range of each supported numeric attribute; columns are value / max.
NUMERIC_RANGE: dict[str, tuple[int, int]] = {
    "age": (17, 90),  # extraction kept age > 16; the census top-codes age at 90
    "education-num": (1, 16),  # ordinal code of the 16 education levels
    "hours-per-week": (1, 99),  # extraction kept hours > 0; top-coded at 99
}

#: Public level lists of the supported categorical attributes (sorted).
CATEGORIES: dict[str, tuple[str, ...]] = {
    "marital-status": (
        "Divorced",
        "Married-AF-spouse",
        "Married-civ-spouse",
        "Married-spouse-absent",
        "Never-married",
        "Separated",
        "Widowed",
    ),
    "relationship": (
        "Husband",
        "Not-in-family",
        "Other-relative",
        "Own-child",
        "Unmarried",
        "Wife",
    ),
    "race": ("Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"),
    "sex": ("Female", "Male"),
    "workclass": (
        "Federal-gov",
        "Local-gov",
        "Never-worked",
        "Private",
        "Self-emp-inc",
        "Self-emp-not-inc",
        "State-gov",
        "Without-pay",
    ),
    "education": (
        "10th",
        "11th",
        "12th",
        "1st-4th",
        "5th-6th",
        "7th-8th",
        "9th",
        "Assoc-acdm",
        "Assoc-voc",
        "Bachelors",
        "Doctorate",
        "HS-grad",
        "Masters",
        "Preschool",
        "Prof-school",
        "Some-college",
    ),
    "occupation": (
        "Adm-clerical",
        "Armed-Forces",
        "Craft-repair",
        "Exec-managerial",
        "Farming-fishing",
        "Handlers-cleaners",
        "Machine-op-inspct",
        "Other-service",
        "Priv-house-serv",
        "Prof-specialty",
        "Protective-serv",
        "Sales",
        "Tech-support",
        "Transport-moving",
    ),
    "native-country": (
        "Cambodia",
        "Canada",
        "China",
        "Columbia",
        "Cuba",
        "Dominican-Republic",
        "Ecuador",
        "El-Salvador",
        "England",
        "France",
        "Germany",
        "Greece",
        "Guatemala",
        "Haiti",
        "Holand-Netherlands",
        "Honduras",
        "Hong",
        "Hungary",
        "India",
        "Iran",
        "Ireland",
        "Italy",
        "Jamaica",
        "Japan",
        "Laos",
        "Mexico",
        "Nicaragua",
        "Outlying-US(Guam-USVI-etc)",
        "Peru",
        "Philippines",
        "Poland",
        "Portugal",
        "Puerto-Rico",
        "Scotland",
        "South",
        "Taiwan",
        "Thailand",
        "Trinadad&Tobago",
        "United-States",
        "Vietnam",
        "Yugoslavia",
    ),
}

#: Attributes whose published files use "?" for a missing value (see missing="category").
MISSING_ALLOWED: frozenset[str] = frozenset({"workclass", "occupation", "native-country"})
MISSING_LEVEL = "?"

_UNSUPPORTED: dict[str, str] = {
    "fnlwgt": "it is a census sampling weight with no public upper bound",
    "capital-gain": "it is a heavy-tailed money amount with no documented public bound",
    "capital-loss": "it is a heavy-tailed money amount with no documented public bound",
}

_SPLITS: dict[str, tuple[str, dict[str, int]]] = {
    "train": ("adult.data.gz", {">50K": 1, "<=50K": -1}),
    "test": ("adult.test.gz", {">50K.": 1, "<=50K.": -1}),
}


def _read_split(split: str) -> pd.DataFrame:
    """All records of a split as strings (checksum verified), blank lines dropped."""
    file, _ = _SPLITS[split]
    df = pd.read_csv(
        io.BytesIO(read_verified(file)),
        compression="gzip",
        header=None,
        names=list(COLUMNS),
        sep=",",
        skipinitialspace=True,
        dtype=str,
        na_filter=False,
        skip_blank_lines=True,
    )
    if df.isna().any(axis=None):  # no row index in the message: it would point at a record
        raise ValueError(f"{file}: a record does not have {len(COLUMNS)} fields")
    return df


def _check_attributes(attributes: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """Split the requested attributes into (numeric, categorical), keeping their order."""
    if attributes is None:
        attributes = DEFAULT_ATTRIBUTES
    if isinstance(attributes, str):
        raise TypeError("attributes must be a sequence of attribute names, not a single string")
    attrs = list(attributes)
    if not attrs:
        raise ValueError("attributes is empty: choose at least one attribute")
    dup = sorted({a for a in attrs if attrs.count(a) > 1})
    if dup:
        raise ValueError(f"attributes listed twice: {dup}")
    supported = sorted([*NUMERIC_RANGE, *CATEGORIES])
    for a in attrs:
        if a in _UNSUPPORTED:
            raise NotImplementedError(
                f"Adult attribute {a!r} is not supported: {_UNSUPPORTED[a]}. "
                f"Supported attributes: {', '.join(supported)}"
            )
        if a == "income":
            raise ValueError("'income' is the label, not a feature attribute")
        if a not in NUMERIC_RANGE and a not in CATEGORIES:
            raise ValueError(
                f"unknown Adult attribute {a!r}; supported attributes: {', '.join(supported)}"
            )
    return [a for a in attrs if a in NUMERIC_RANGE], [a for a in attrs if a in CATEGORIES]


def _encode(
    df: pd.DataFrame, split: str, numeric: list[str], categorical: list[str], missing: str
) -> tuple[NDArray[np.float64], NDArray[np.int8], list[str], dict[str, tuple[str, ...]]]:
    """Encode every record of the split; collect all bound violations, then raise once."""
    file, label_map = _SPLITS[split]
    n = len(df)
    problems: list[str] = []

    levels: dict[str, tuple[str, ...]] = {}
    for a in categorical:
        lv = CATEGORIES[a]
        if missing == "category" and a in MISSING_ALLOWED:
            lv = (*lv, MISSING_LEVEL)
        levels[a] = lv
    d = len(numeric) + sum(len(lv) for lv in levels.values())
    X = np.zeros((n, d), dtype=np.float64)
    names: list[str] = []

    col = 0
    for a in numeric:
        lo, hi = NUMERIC_RANGE[a]
        vals = pd.to_numeric(df[a], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(vals) | (vals != np.round(vals)) | (vals < lo) | (vals > hi)
        if bad.any():
            problems.append(
                f"column {a!r}: values must be integers in the declared range {lo}..{hi}"
            )
        else:
            # int / int in float64: the correctly rounded value of the exact rational.
            X[:, col] = vals.astype(np.int64) / float(hi)
        names.append(a)
        col += 1

    rows = np.arange(n)
    for a in categorical:
        lv = levels[a]
        raw = df[a].to_numpy(dtype=object)
        codes = pd.Index(list(lv)).get_indexer(raw)  # -1 for a value outside the list
        bad = codes < 0
        if bad.any():
            hint = ""
            if a in MISSING_ALLOWED and missing != "category":  # public: reads no value
                hint = (f" (this attribute has missing values {MISSING_LEVEL!r} in the codebook: "
                        "pass missing='category' to encode them as a level)")
            problems.append(
                f"column {a!r}: values must be one of its {len(lv)} declared categories{hint}"
            )
        else:
            X[rows, col + codes] = 1.0
        names.extend(f"{a}={v}" for v in lv)
        col += len(lv)

    income = df["income"].to_numpy(dtype=object)
    y = np.zeros(n, dtype=np.int8)
    for text, label in label_map.items():
        y[income == text] = label
    if (y == 0).any():
        problems.append(f"column 'income': labels must be one of {sorted(label_map)}")

    if problems:
        raise BoundsViolation(
            f"{file}: records outside the declared public bounds (nothing is clipped or "
            "dropped silently; values, rows and counts are not shown: they are data): "
            + "; ".join(problems)
        )
    return X, y, names, levels


def load_adult(
    split: str = "train",
    *,
    balanced: bool = True,
    random_state: RandomLike = 0,
    attributes: Sequence[str] | None = None,
    missing: str = "raise",
) -> TabularDataset:
    """Load the bundled UCI Adult data, one-hot encoded with public bounds.

    The default is the ICML 2020 setting (Neel et al., Section 5): the
    training file, balanced to 7,841 positives and 7,841 random negatives
    (n = 15,682), d = 23 features (see the module docstring for the choice of
    attributes and the encoding).

    Parameters
    ----------
    split:
        ``"train"`` (``adult.data``, 32,561 records) or ``"test"``
        (``adult.test``, 16,281 records).
    balanced:
        Keep all positives and as many random negatives (True), or all records.
    random_state:
        Seed (or Generator) for choosing the negatives; unused when
        ``balanced=False``.  The same int always gives the same rows.
    attributes:
        Attribute names to encode, default :data:`DEFAULT_ATTRIBUTES`.
        Numeric attributes come first (in the given order), then one-hot
        blocks (in the given order).  Supported: ``age``, ``education-num``,
        ``hours-per-week``, ``marital-status``, ``relationship``, ``race``,
        ``sex``, ``workclass``, ``education``, ``occupation``,
        ``native-country``.
    missing:
        ``"raise"``: a ``?`` in a used column is a bounds violation.
        ``"category"``: encode ``?`` as a last level ``"?"`` of ``workclass``,
        ``occupation`` and ``native-country`` (the attributes whose files use it).

    Returns
    -------
    TabularDataset
        ``X`` float64 in [0, 1] (read-only), ``y`` int8 in {-1, +1}
        (``>50K`` is +1), the declared ``bounds`` and ``source_rows``.

    Raises
    ------
    BoundsViolation
        A record of the split lies outside the declared ranges/categories
        (all offending columns are listed).
    NotImplementedError
        An Adult attribute without a public bound (fnlwgt, capital-gain,
        capital-loss) was requested.
    oracledp.datasets.DataIntegrityError
        The bundled file fails its SHA-256 check.
    """
    if split not in _SPLITS:
        raise ValueError(f"unknown split {split!r}; valid splits are: train, test")
    if missing not in ("raise", "category"):
        raise ValueError(f"missing must be 'raise' or 'category', got {missing!r}")
    if not isinstance(balanced, bool):
        raise TypeError(f"balanced must be a bool, got {type(balanced).__name__}")
    numeric, categorical = _check_attributes(attributes)
    rng = check_rng(random_state) if balanced else None

    df = _read_split(split)
    X, y, names, levels = _encode(df, split, numeric, categorical, missing)

    rows = np.arange(len(y), dtype=np.int64)
    if rng is not None:
        pos = np.flatnonzero(y == 1)
        neg = np.flatnonzero(y == -1)
        chosen = rng.choice(neg, size=pos.size, replace=False)
        rows = np.sort(np.concatenate([pos, chosen])).astype(np.int64)
        X, y = X[rows], y[rows]

    numeric_columns = list(range(len(numeric)))
    blocks: dict[str, list[int]] = {}
    col = len(numeric)
    for a in categorical:
        blocks[a] = list(range(col, col + len(levels[a])))
        col += len(levels[a])
    n_terms = len(numeric) + len(categorical)  # each numeric <= 1, one 1 per block
    bounds: dict[str, object] = {
        "features": (0.0, 1.0),
        "labels": (-1, 1),
        "numeric_max": {a: NUMERIC_RANGE[a][1] for a in numeric},
        "numeric_range": {a: NUMERIC_RANGE[a] for a in numeric},
        "categories": {a: levels[a] for a in categorical},
        "row_l1_max": float(n_terms),
        "row_l2_max": math.sqrt(n_terms),
        "common_denominator": math.lcm(*(NUMERIC_RANGE[a][1] for a in numeric)),
    }
    X.setflags(write=False)
    y.setflags(write=False)
    rows.setflags(write=False)
    kind = f"balanced ({int((y == 1).sum())} + {int((y == -1).sum())})" if balanced else "all"
    description = (
        f"UCI Adult {split} split ({_SPLITS[split][0]}), {kind} records, "
        f"{len(numeric)} numeric attributes scaled by public maxima "
        f"({', '.join(f'{a}/{NUMERIC_RANGE[a][1]}' for a in numeric) or 'none'}) and "
        f"one-hot {', '.join(f'{a} ({len(levels[a])})' for a in categorical) or 'none'}; "
        "label +1 for income >50K, -1 for <=50K. Becker & Kohavi (1996), CC BY 4.0."
    )
    return TabularDataset(
        X=X,
        y=y,
        feature_names=names,
        numeric_columns=numeric_columns,
        categorical_blocks=blocks,
        bounds=bounds,
        name=f"adult-{split}" + ("-balanced" if balanced else ""),
        description=description,
        source_rows=rows,
        # public by construction: one-hot columns are 0/1, numeric ones are integer / codebook max
        feature_schema=FeatureSchema(
            binary=tuple(j >= len(numeric) for j in range(col)),
            denominators=tuple(NUMERIC_RANGE[a][1] for a in numeric) + (1,) * (col - len(numeric)),
            bounds=(1.0,) * col,
            names=tuple(names),
        ),
    )
