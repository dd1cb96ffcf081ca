"""The KDD Cup 1999 data (10% training file): raw table and the Accuracy First encoding.

:func:`load_kdd99_raw` returns the file as it is.  :func:`load_kdd99` returns the
encoding of the logistic-regression experiment of Ligett, Neel, Roth, Waggoner
and Wu, "Accuracy First" (NeurIPS 2017), Section 4 and Appendix B.1, and a
ridge-regression task on the same records.

Encoding (``load_kdd99``)
-------------------------
* The 3 text columns ``protocol_type``, ``service`` and ``flag`` are dropped,
  leaving the 38 numeric attributes (Appendix B.1: "p = 38 ... after dropping
  the text columns").
* ``x -> log(1 + x)`` on ``duration``, ``src_bytes`` and ``dst_bytes``.  The
  paper transforms "three attributes containing likely heavy-tailed data (the
  first three mentioned above)", and the attributes it mentions just before are
  the "duration of connection" and the "number of bytes sent in each
  direction"; the authors' preprocessing script (``process_kdd.py`` in their
  repository) applies the log to exactly these three columns.  All 38 attributes
  are counts, flags or rates, >= 0 in every record of the file.
* Every record is divided by ``max(1, ||x||_1)``, so ``||x||_1 <= 1`` (the domain
  of Lemma A.6, Claim A.12 and Lemma A.10).  This is a *per-record public
  transform*: it reads only the record itself, so neighbouring datasets map to
  neighbouring datasets and the privacy guarantees proven for the encoded data
  hold for the raw records.  The paper instead divides all records by the
  largest l1 norm found in the data (``M = max_i ||x_i||_1``), which it notes is
  not a private operation; we do not do that.  (Nearly every KDD record has
  ``||x||_1 > 1``, so in practice rows are l1-normalised.)  If floating-point
  rounding leaves a norm a few ulps above 1 the row is shrunk by one ulp at a
  time until the computed norm is <= 1.
* Labels (``task="logistic"``): ``normal.`` -> -1, any attack -> +1.  The paper's
  text writes 0 for innocent, but the logistic loss of Section 3.2 needs
  {-1, +1}, and the authors' script writes -1 too.
* ``n`` rows are drawn without replacement with
  ``check_rng(random_state).choice(494_021, size=n, replace=False)`` and kept in
  file order (``source_rows`` lists them).  The selection reads no data.  The
  label balance is the one found in the sample (the file has 97,278 normal
  records out of 494,021, i.e. about 80.3% attacks); nothing is rebalanced.

Ridge task (``task="ridge"``)
-----------------------------
The paper's ridge experiment uses a Twitter "buzz" data set that is not
available here.  In its place, on the same KDD records: predict
``y = log(1 + src_bytes) / log(1 + (2**32 - 1))`` from the other 37 attributes
(``src_bytes`` is removed from the features; ``dst_bytes`` and ``duration`` keep
their log transform).  The scale is a public constant, not read from the data:
``src_bytes`` is a byte counter and we declare 2**32 - 1 (an unsigned 32-bit
counter) as its public maximum, so ``0 <= y <= 1``.  A record above that bound
would raise :class:`~oracledp._errors.BoundsViolation` (none does: the largest
value in the file is 693,375,640).  The target is a real, heavy-tailed quantity
of the data, transformed as the paper transforms the Twitter label
(``y -> log(1 + y)``); the paper rescales it by the maximum found in the data,
we use the public constant instead.  The returned ``TabularDataset.y`` is then a
float64 target in [0, 1], not a label.

References
----------
The KDD Cup 1999 organisers: S. Stolfo, W. Fan, W. Lee, A. Prodromidis and
P. Chan.  KDD Cup 1999 Data.  UCI Machine Learning Repository, 1999.
https://doi.org/10.24432/C51C7N (CC BY 4.0).  Prepared for the classifier
contest of the Third International Knowledge Discovery and Data Mining Tools
Competition (KDD-99) from the 1998 DARPA Intrusion Detection Evaluation data.

K. Ligett, S. Neel, A. Roth, B. Waggoner, Z. S. Wu.  Accuracy First: Selecting
a Differential Privacy Level for Accuracy-Constrained ERM.  NeurIPS 2017.
"""

from __future__ import annotations

import io
import math
import numbers
import threading

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp._errors import BoundsViolation
from oracledp._validation import RandomLike, check_choice, check_rng
from oracledp.datasets._base import TabularDataset
from oracledp.datasets._files import FILES, read_verified

__all__ = [
    "COLUMNS",
    "DROPPED_COLUMNS",
    "LOG_COLUMNS",
    "SRC_BYTES_MAX",
    "TEXT_COLUMNS",
    "load_kdd99",
    "load_kdd99_raw",
]

FILE = "kddcup.data_10_percent.gz"

#: Column names from the KDD-99 ``kddcup.names`` list, plus the label.
COLUMNS: tuple[str, ...] = (
    "duration",
    "protocol_type",
    "service",
    "flag",
    "src_bytes",
    "dst_bytes",
    "land",
    "wrong_fragment",
    "urgent",
    "hot",
    "num_failed_logins",
    "logged_in",
    "num_compromised",
    "root_shell",
    "su_attempted",
    "num_root",
    "num_file_creations",
    "num_shells",
    "num_access_files",
    "num_outbound_cmds",
    "is_host_login",
    "is_guest_login",
    "count",
    "srv_count",
    "serror_rate",
    "srv_serror_rate",
    "rerror_rate",
    "srv_rerror_rate",
    "same_srv_rate",
    "diff_srv_rate",
    "srv_diff_host_rate",
    "dst_host_count",
    "dst_host_srv_count",
    "dst_host_same_srv_rate",
    "dst_host_diff_srv_rate",
    "dst_host_same_src_port_rate",
    "dst_host_srv_diff_host_rate",
    "dst_host_serror_rate",
    "dst_host_srv_serror_rate",
    "dst_host_rerror_rate",
    "dst_host_srv_rerror_rate",
    "label",
)

#: The symbolic columns (read as strings); the label keeps its trailing dot ("normal.").
TEXT_COLUMNS: tuple[str, ...] = ("protocol_type", "service", "flag", "label")

_DTYPES: dict[str, str] = {
    c: "str" if c in TEXT_COLUMNS else ("float64" if c.endswith("_rate") else "int64")
    for c in COLUMNS
}


def load_kdd99_raw() -> pd.DataFrame:
    """The 494,021 records of ``kddcup.data_10_percent`` as a DataFrame.

    42 columns named as in :data:`COLUMNS`: the 4 symbolic columns
    (:data:`TEXT_COLUMNS`) are strings, the ``*_rate`` columns float64 and the
    others int64.  The file's SHA-256 is checked first.

    Raises
    ------
    oracledp.datasets.DataIntegrityError
        The bundled file fails its SHA-256 check.
    """
    df = pd.read_csv(
        io.BytesIO(read_verified(FILE)),
        compression="gzip",
        header=None,
        names=list(COLUMNS),
        dtype=_DTYPES,
        na_filter=False,
    )
    expected = FILES[FILE].records
    if df.shape != (expected, len(COLUMNS)):
        raise ValueError(f"{FILE}: parsed shape {df.shape}, expected ({expected}, {len(COLUMNS)})")
    return df


# --- the Accuracy First encoding ----------------------------------------------------------------

#: The symbolic feature columns dropped by the encoding (Appendix B.1).
DROPPED_COLUMNS: tuple[str, ...] = ("protocol_type", "service", "flag")

#: The heavy-tailed columns transformed by x -> log(1 + x) (Appendix B.1).
LOG_COLUMNS: tuple[str, ...] = ("duration", "src_bytes", "dst_bytes")

#: Declared public maximum of ``src_bytes`` (an unsigned 32-bit byte counter); scales the ridge target.
SRC_BYTES_MAX: int = 2**32 - 1

#: The 38 numeric attributes, in file order.
NUMERIC_COLUMNS: tuple[str, ...] = tuple(
    c for c in COLUMNS if c not in DROPPED_COLUMNS and c != "label"
)

_TASKS = ("logistic", "ridge")
_cache: tuple[NDArray[np.float64], NDArray[np.bool_]] | None = None
_cache_lock = threading.Lock()


def _numeric_table() -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """(the 38 numeric columns as float64, is-attack flags) of all records, parsed once per process.

    The file's SHA-256 is checked on *every* call (:func:`read_verified`, which
    remembers a successful check by path, size and modification time), so a file
    altered after the first load is refused even though the parse is cached.
    Verified bytes are byte-identical to the recorded file, so the cached parse
    is the parse of whatever passes the check.
    """
    global _cache
    read_verified(FILE)
    with _cache_lock:
        if _cache is None:
            df = load_kdd99_raw()
            values = df[list(NUMERIC_COLUMNS)].to_numpy(dtype=np.float64)
            attack = (df["label"] != "normal.").to_numpy()
            values.setflags(write=False)
            attack.setflags(write=False)
            _cache = (values, attack)
        return _cache


def _check_n(n: object, total: int) -> int:
    if n is None:
        return total
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"n must be a whole number or None, got {type(n).__name__}")
    if not 1 <= int(n) <= total:
        raise ValueError(f"n must be between 1 and {total} (the records in the file), got {n}")
    return int(n)


def _scale_rows_l1(X: NDArray[np.float64]) -> NDArray[np.float64]:
    """Divide each row by max(1, ||x||_1); guarantee the *computed* l1 norm is <= 1."""
    norms = np.abs(X).sum(axis=1)
    X = X / np.maximum(norms, 1.0)[:, None]
    over = np.flatnonzero(np.abs(X).sum(axis=1) > 1.0)
    shrink = np.nextafter(1.0, 0.0)
    while over.size:  # rounding only: a few ulps, at most a couple of passes
        X[over] *= shrink
        over = over[np.abs(X[over]).sum(axis=1) > 1.0]
    return X


def load_kdd99(
    *,
    n: int | None = 100_000,
    random_state: RandomLike = 0,
    task: str = "logistic",
) -> TabularDataset:
    """KDD-99 encoded as in the Accuracy First experiment (Ligett et al. 2017, Appendix B.1).

    Parameters
    ----------
    n : int or None, default=100_000
        Number of records drawn without replacement (the paper's n); ``None``
        keeps all 494,021.
    random_state : None, int, SeedSequence or Generator, default=0
        Seed of the subsample (:func:`oracledp._validation.check_rng`).
    task : {"logistic", "ridge"}, default="logistic"
        ``"logistic"``: 38 features, labels normal = -1, attack = +1 (int8).
        ``"ridge"``: 37 features (``src_bytes`` removed), float64 target
        ``log(1 + src_bytes) / log(1 + 2**32 - 1)`` in [0, 1].

    Returns
    -------
    TabularDataset
        ``X`` float64 with every row's l1 norm <= 1 (read-only), ``y`` as above,
        ``bounds`` declaring the domain the Accuracy First proofs assume, and
        ``source_rows`` (0-based indices into the file, increasing).

    Raises
    ------
    oracledp.datasets.DataIntegrityError
        The bundled file fails its SHA-256 check (checked on every call).
    BoundsViolation
        A record outside the declared domain (a negative attribute, or
        ``src_bytes > 2**32 - 1`` for the ridge target); never happens with the
        bundled file.

    Notes
    -----
    The encoding is described in the module docstring.  The first call parses
    the file (about 2 s) and keeps the numeric table for the rest of the process.
    """
    check_choice(task, "task", _TASKS)
    total = FILES[FILE].records
    n_rows = _check_n(n, total)
    rng = check_rng(random_state)

    values, attack = _numeric_table()
    if n_rows == total:
        rows = np.arange(total, dtype=np.int64)
    else:
        rows = np.sort(rng.choice(total, size=n_rows, replace=False)).astype(np.int64)

    names = list(NUMERIC_COLUMNS)
    X = values[rows]  # a copy
    negative = (X < 0).any(axis=0)
    if negative.any():  # pragma: no cover - never with the bundled file
        bad = [names[j] for j in np.flatnonzero(negative)]
        raise BoundsViolation(f"KDD-99 attributes must be >= 0; negative values in {bad}")
    for c in LOG_COLUMNS:
        j = names.index(c)
        X[:, j] = np.log1p(X[:, j])

    if task == "logistic":
        y: NDArray[np.int8] | NDArray[np.float64] = np.where(attack[rows], 1, -1).astype(np.int8)
        bounds: dict[str, object] = {"x_l1_norm": 1.0, "labels": (-1, 1)}
        what = "labels normal = -1, attack = +1"
    else:
        j = names.index("src_bytes")
        src = values[rows, j]
        if (src > SRC_BYTES_MAX).any():  # never with the bundled file
            raise BoundsViolation(
                f"src_bytes must not exceed its declared public maximum 2**32 - 1 = "
                f"{SRC_BYTES_MAX}; the ridge target would leave [0, 1]"
            )
        y = np.log1p(src) / math.log1p(SRC_BYTES_MAX)
        X = np.delete(X, j, axis=1)
        del names[j]
        bounds = {"x_l1_norm": 1.0, "y_abs": 1.0, "src_bytes_max": SRC_BYTES_MAX}
        what = (
            "target y = log(1 + src_bytes) / log(1 + 2**32 - 1) in [0, 1] "
            "(src_bytes removed from the features)"
        )

    X = _scale_rows_l1(X)
    X.setflags(write=False)
    y.setflags(write=False)
    d = X.shape[1]
    description = (
        f"KDD Cup 1999 10% file (Stolfo et al., UCI), {n_rows} of 494,021 records drawn "
        f"without replacement (seeded), kept in file order; text columns protocol_type, service, "
        f"flag dropped; log(1+x) on duration, src_bytes, dst_bytes; every record divided by "
        f"max(1, ||x||_1) (a per-record public transform); {d} features; {what}. "
        f"Encoding of Ligett et al., Accuracy First (2017), Appendix B.1"
        + (
            "; ridge target in place of the paper's unavailable Twitter data."
            if task == "ridge"
            else "."
        )
    )
    return TabularDataset(
        X=X,
        y=y,  # type: ignore[arg-type]  # float64 target for task="ridge"
        feature_names=names,
        numeric_columns=list(range(d)),
        categorical_blocks={},
        bounds=bounds,
        name=f"kdd99-{task}",
        description=description,
        source_rows=rows,
    )
