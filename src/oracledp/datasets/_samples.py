"""Small CSV samples of the bundled data, for the schema-driven pipeline (``oracledp.tabular``).

:func:`adult_csv` and :func:`kdd99_csv` write a few raw columns of a seeded random sample
of the bundled (checksum-verified) files to a CSV, as a stand-in for "your own table".
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

#: The raw Adult columns written by :func:`adult_csv` (target last).
ADULT_SAMPLE_COLUMNS: tuple[str, ...] = (
    "age", "education-num", "hours-per-week", "marital-status", "relationship", "race", "sex",
    "income",
)

#: The raw KDD-99 columns written by :func:`kdd99_csv` (target ``label``: normal / attack).
KDD99_SAMPLE_COLUMNS: tuple[str, ...] = (
    "protocol_type", "logged_in", "count", "serror_rate", "same_srv_rate", "label",
)


def _sample(df: pd.DataFrame, n: int, random_state: int) -> pd.DataFrame:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= len(df):
        raise ValueError(f"n must be an integer in [1, {len(df)}], got {n!r}")
    idx = np.sort(np.random.default_rng(random_state).choice(len(df), size=n, replace=False))
    return df.iloc[idx].reset_index(drop=True)


def adult_csv(path: str | Path, n: int = 2000, split: str = "train",
              random_state: int = 0) -> Path:
    """Write ``n`` random Adult records (columns :data:`ADULT_SAMPLE_COLUMNS`) to a CSV.

    ``split`` is ``"train"`` or ``"test"``; the test file's labels lose their trailing
    dot, so both splits use the labels ``<=50K`` and ``>50K``.
    """
    from oracledp.datasets._adult import _SPLITS, _read_split

    if split not in _SPLITS:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    df = _read_split(split)[list(ADULT_SAMPLE_COLUMNS)]
    df = df.assign(income=df["income"].str.rstrip("."))
    out = Path(path)
    _sample(df, n, random_state).to_csv(out, index=False)
    return out


def kdd99_csv(path: str | Path, n: int = 2000, random_state: int = 0) -> Path:
    """Write ``n`` random KDD-99 records (columns :data:`KDD99_SAMPLE_COLUMNS`) to a CSV.

    ``label`` is ``normal`` for the file's ``normal.`` records and ``attack`` otherwise.
    """
    from oracledp.datasets._kdd99 import load_kdd99_raw

    df = load_kdd99_raw()[list(KDD99_SAMPLE_COLUMNS)]
    df = df.assign(label=np.where(df["label"] == "normal.", "normal", "attack"))
    out = Path(path)
    _sample(df, n, random_state).to_csv(out, index=False)
    return out
