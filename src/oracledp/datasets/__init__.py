"""Bundled public benchmark data (no download at run time).

* :func:`load_adult`: UCI Adult, encoded as in Neel et al. (ICML 2020).
* :func:`load_kdd99_raw`: KDD Cup 1999 (10% file) as a raw table.
* :func:`load_kdd99`: KDD Cup 1999 encoded as in Ligett et al. (Accuracy First, 2017).
* :func:`adult_csv`, :func:`kdd99_csv`: small raw CSV samples (for :mod:`oracledp.tabular`).
* :func:`list_datasets`: the bundled files, their sizes, record counts and checksums.
* :data:`TABLES`, :func:`table_csv`, :func:`table_schema`, :func:`table_info`: small public
  tables (NHEFS, Wisconsin biopsies, CPS health insurance, RAND HIE doctor visits, Titanic
  passengers) with
  public schemas, as stand-ins for your own table (``docs/datasets.md``).

Every file is checked against its recorded SHA-256 before use.  Licences and
citations: ``oracledp/datasets/_data/NOTICE.md``.
"""

from oracledp.datasets._adult import load_adult
from oracledp.datasets._base import TabularDataset
from oracledp.datasets._files import DataIntegrityError, list_datasets
from oracledp.datasets._kdd99 import load_kdd99, load_kdd99_raw
from oracledp.datasets._samples import adult_csv, kdd99_csv
from oracledp.datasets._tables import TABLES, table_csv, table_info, table_schema

__all__ = [
    "TABLES",
    "DataIntegrityError",
    "TabularDataset",
    "adult_csv",
    "kdd99_csv",
    "list_datasets",
    "load_adult",
    "load_kdd99",
    "load_kdd99_raw",
    "table_csv",
    "table_info",
    "table_schema",
]
