"""Bundled data files: location, checksums and integrity checks.

The data ship inside the package (``oracledp/datasets/_data``) and are found
with :mod:`importlib.resources`; nothing is ever downloaded.  Every read goes
through :func:`read_verified`, which compares the file's SHA-256 with the
digest recorded *in this module* (the authoritative copy; ``_data/SHA256SUMS``
repeats it in ``sha256sum -c`` format for humans and is tested to agree) and
refuses a file that differs.  A successful check is remembered for the rest of
the process, keyed by the file's path, size and modification time, so a file
that is replaced while the process runs is checked again.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from oracledp._errors import DataIntegrityError

__all__ = ["FILES", "DataFile", "DataIntegrityError", "list_datasets", "read_verified"]


@dataclass(frozen=True)
class DataFile:
    """What is recorded about one bundled file."""

    name: str
    file: str
    sha256: str
    records: int
    description: str


FILES: dict[str, DataFile] = {
    f.file: f
    for f in (
        DataFile(
            name="adult-train",
            file="adult.data.gz",
            sha256="8f805dd88a7789bd21c11c925f71c9cb64a13b7ea2bf420c9d81197b94ddb17d",
            records=32_561,
            description="UCI Adult (Census Income) training file adult.data, gzipped",
        ),
        DataFile(
            name="adult-test",
            file="adult.test.gz",
            sha256="fc24cba18c046ba07b23d08d5ff0ecbf63c7cdaf021d681b11a2080b6ba1f01d",
            records=16_281,
            description="UCI Adult test file adult.test without its comment line, gzipped",
        ),
        DataFile(
            name="kdd99-10percent",
            file="kddcup.data_10_percent.gz",
            sha256="8045aca0d84e70e622d1148d7df782496f6333bf6eb979a1b0837c42a9fd9561",
            records=494_021,
            description="KDD Cup 1999, 10% training file kddcup.data_10_percent, gzipped",
        ),
        DataFile(
            name="nhefs",
            file="nhefs.csv.gz",
            sha256="acd0061ea08d22258962c8451016469ad257a2d956c201a66794d0b8a3d54b21",
            records=1_629,
            description="NHEFS (NHANES I follow-up) extract: 39 columns, target death by 1992; "
                        "CSV, gzipped (public table, see tables.py)",
        ),
        DataFile(
            name="biopsy",
            file="biopsy.csv.gz",
            sha256="517b11702b2b27365fb2a1809c15c4bcb2dc000d36fccc4e0806ed9d147aea49",
            records=699,
            description="Breast Cancer Wisconsin (Original), MASS::biopsy: 9 scores 1-10, "
                        "target class; CSV, gzipped (public table, see tables.py)",
        ),
        DataFile(
            name="health_insurance",
            file="health_insurance.csv.gz",
            sha256="44833446e81b063dc5579eb6593dc186dcc9db7e4074faf9c051258949c902ff",
            records=22_272,
            description="Ecdat::HI (Olson 1998, March 1993 CPS): 11 columns, target whi; "
                        "CSV, gzipped (public table, see tables.py)",
        ),
        DataFile(
            name="doctor_visits",
            file="doctor_visits.csv.gz",
            sha256="f4f95552a374325a3dd2d6b86edc346c9909cc18ededfc5c2757b6e8fa53e9c3",
            records=20_186,
            description="Ecdat::DoctorContacts (RAND HIE, Deb & Trivedi 2002): 14 columns, "
                        "target any_visit = mdu > 0; CSV, gzipped (public table, see tables.py)",
        ),
        DataFile(
            name="titanic",
            file="titanic.csv.gz",
            sha256="f44ad36343cb06b761b23a93de4ce206c292192055f116556f52ddd907886b08",
            records=1_316,
            description="COUNT::titanic (1912 Titanic passengers, Hilbe): class, age, sex, "
                        "target survived; CSV, gzipped (public table, see tables.py)",
        ),
    )
}

# (path, size, mtime_ns) of files whose digest matched, for this process.
_verified: set[tuple[str, int, int]] = set()
_lock = threading.Lock()


def _data_dir() -> Traversable:
    """The package's data folder (tests replace this to point at a copy)."""
    return resources.files("oracledp.datasets") / "_data"


def _stat_key(resource: Traversable) -> tuple[str, int, int] | None:
    if isinstance(resource, Path):
        st = resource.stat()
        return (str(resource.resolve()), st.st_size, st.st_mtime_ns)
    return None  # e.g. inside a zip: not cached, checked on every read


def _read_checked(file: str, directory: Traversable | Path) -> bytes:
    """Read ``directory/file`` and check it against the recorded SHA-256."""
    try:
        info = FILES[file]
    except KeyError:
        raise ValueError(
            f"unknown data file {file!r}; bundled files are: {', '.join(sorted(FILES))}"
        ) from None
    resource = directory / file
    if not resource.is_file():
        raise DataIntegrityError(
            f"bundled data file {file} not found in {directory}; the installation is "
            "incomplete: reinstall oracledp"
        )
    key = _stat_key(resource)
    data = resource.read_bytes()
    # The cache is trusted only if the file did not change while it was read.
    stable = key is not None and len(data) == key[1] and _stat_key(resource) == key
    if stable:
        with _lock:
            if key in _verified:
                return data
    digest = hashlib.sha256(data).hexdigest()
    if digest != info.sha256:
        raise DataIntegrityError(
            f"checksum mismatch for bundled data file {file} ({resource}): "
            f"expected sha256 {info.sha256}, got {digest}. The file was altered or corrupted; "
            "reinstall oracledp (the provenance of every file is in _data/NOTICE.md)"
        )
    if stable and key is not None:
        with _lock:
            _verified.add(key)
    return data


def read_verified(file: str) -> bytes:
    """The bytes of a bundled (gzipped) data file, after checking its SHA-256.

    Raises
    ------
    ValueError
        ``file`` is not one of the bundled files.
    DataIntegrityError
        The file is missing or its digest differs from the recorded one (the
        message names the file and both digests).
    """
    return _read_checked(file, _data_dir())


def list_datasets() -> list[dict[str, Any]]:
    """Describe the bundled data files.

    Each entry has ``name``, ``file``, ``bytes`` (size of the gzipped file, or
    None if it is missing), ``records`` (number of data rows), ``sha256`` (the
    recorded digest) and ``verified`` (whether the file on disk matches it).
    The files are hashed here (a few milliseconds); a mismatch is reported as
    ``verified=False`` instead of raising.
    """
    directory = _data_dir()
    out: list[dict[str, Any]] = []
    for info in FILES.values():
        resource = directory / info.file
        size: int | None = None
        verified = False
        if resource.is_file():
            try:
                size = len(_read_checked(info.file, directory))
                verified = True
            except DataIntegrityError:
                size = len(resource.read_bytes())
        out.append(
            {
                "name": info.name,
                "file": info.file,
                "bytes": size,
                "records": info.records,
                "sha256": info.sha256,
                "verified": verified,
                "description": info.description,
            }
        )
    return out
