"""The KDD Cup 1999 data (10% training file), raw.

Only the raw table is provided for now; the encoded loader of the Accuracy
First experiment (text columns dropped, log(1+x) on the first numeric ones,
rows scaled to l1 norm <= 1, normal = -1 / attack = +1) builds on it.

References
----------
The KDD Cup 1999 organisers: S. Stolfo, W. Fan, W. Lee, A. Prodromidis and
P. Chan.  KDD Cup 1999 Data.  UCI Machine Learning Repository, 1999.
https://doi.org/10.24432/C51C7N (CC BY 4.0).  Prepared for the classifier
contest of the Third International Knowledge Discovery and Data Mining Tools
Competition (KDD-99) from the 1998 DARPA Intrusion Detection Evaluation data.
"""

from __future__ import annotations

import io

import pandas as pd

from oracledp.datasets._files import FILES, read_verified

__all__ = ["COLUMNS", "TEXT_COLUMNS", "load_kdd99_raw"]

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
