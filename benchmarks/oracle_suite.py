"""Time to a certified optimum of OPDisc and RSPM on a suite of public tables.

Tables (every schema is public: declared here or by the bundled loader, never read
from the private rows; every transform is per record, so neighbouring data sets stay
neighbouring):

* ``adult-paper``: the ICML 2020 Adult encoding (:func:`load_adult` default: 3 numeric
  columns scaled by public maxima on a 1/q grid, one-hot marital/relationship/race/sex,
  d = 23, n = 15,682).
* ``adult-workclass``: the same plus one-hot ``workclass`` with ``?`` as a level
  (d = 32): more binary columns, so a larger inner problem per numeric candidate.
* ``adult-6num``: the paper's Adult rows with all 6 numeric attributes (d = 26): age,
  education-num and hours-per-week on their exact paper grid; ``fnlwgt``, ``capital-gain``
  and ``capital-loss`` clipped per record at declared caps (1,500,000; 99,999, the census
  top code; 5,000), divided by the cap and rounded to the grid 1/10; plus the 20 one-hot
  columns.  Six numeric columns: beyond the structured decomposition (at most 4); the
  branch-and-bound (interval and cell bounds) takes it, but at eps = 1 it does not yet
  close most draws within 60 s.
* ``adult-6num-thermometer`` (only with ``--tables``): the same attributes, the three
  money/weight columns as thermometer bits at declared cut points (``ADULT_CUTS``), so
  the structured decomposition applies (d = 29).
* ``kdd99-rates-10``: KDD-99 (10% file), 2,000 records drawn with a fixed seed (the
  choice reads no data), its 10 ``*_rate`` columns (the file's documented rates in
  [0, 1], written with 2 decimals: public grid 1/100, bound 1, no transform); label
  normal = -1, attack = +1.  All 10 are non-binary: the monolithic formulation.
* ``breast-cancer-30``: scikit-learn's bundled Wisconsin diagnostic table (569 rows,
  30 numeric columns).  Column j is divided by 1.01 times the maximum printed in the
  data set's documentation (``load_breast_cancer().DESCR``) and rounded per record to
  the grid 1/10 within |x| <= 1.  Caveat: those documented maxima were computed from
  these same 569 rows, so as bounds for *this* table they are not private; they stand
  for a domain expert's public range (they are what a user would find in the
  documentation).  Nothing is read from the rows by this script.
* ``wine-13``: scikit-learn's bundled wine table (178 rows, 13 numeric columns), label
  class_0 = +1; column j divided by 1.01 times the documented maximum (same caveat as
  breast cancer) and rounded to the grid 1/10.

* ``health-insurance``: the bundled ``health_insurance`` table (``oracledp.datasets._tables``,
  a public survey table of 22,272 married women; the training split of 15,590 rows), read
  through its public schema exactly as ``oracledp fit`` reads it: 5 numeric columns on their
  documented grids and bounds, 6 categorical columns one-hot, and the schema's intercept
  (d = 25).  Large and mixed: 5 numeric columns, so the branch-and-bound takes it.
* ``doctor-visits``: the bundled ``doctor_visits`` table (20,186 records; training split
  14,130 rows), 8 numeric and 6 categorical columns plus the intercept (d = 20), read the
  same way.  The schemas are in ``src/oracledp/datasets/_data/*.schema.json`` and described
  in ``docs/datasets.md``.

The default ``highs`` oracle takes the tables with at most 10^4 numeric candidates (integer
vectors over the numeric columns in W's box and ball) with the structured decomposition
(coupled Lagrangian bound included) and the others with the exact branch-and-bound over k
(``oracledp.oracles._branch``).  ``--compare-today`` also runs, on the same draws, the
previous default ("today": structured only with at most 4 numeric columns, no coupled bound)
and gives the ratio of its median seconds to the new default's.

Parameter space: the paper's W by default (OPDisc: |k_j| <= floor(sqrt(d)), ||k||^2 <= d;
RSPM: {-1, 0, 1}^d); ``--opdisc-ball B,R`` uses ``IntegerBall(d, bound=B, radius=R)`` for
OPDisc, ``--rspm-radius R[,R...]`` the subsets of {-1, 0, 1}^d with ||k||^2 <= R^2 for RSPM
(one set of RSPM runs per radius; the same separators and Laplace scale 4d/eps, the noise
drawn as :func:`oracledp.learners.rspm` draws it, the oracle called directly).
``--eps`` (default 0.1,0.5,1,2) are the privacy levels of both methods; ``--work-limit N``
gives the oracles a deterministic work limit besides the time limit.

For each table: OPDisc and RSPM at each eps (``--draws`` draws each,
default ``highs`` oracle, ``--time-limit`` seconds), the monolithic HiGHS MIP on the
first ``--mono-draws`` OPDisc eps = 1 draws (same noise), time-to-certificate, the
certified fraction and the training accuracy next to scikit-learn's (non-private)
LogisticRegression.  A refusal (the oracle cannot take the table) counts as not
certified.  Last line: ``certified_fraction=<x> median_s=<y> p100_s=<z>`` over the
default-oracle runs (an uncertified run counts as the time limit).

``--intercept`` appends the public constant feature ``(intercept)`` (what a table schema adds
by default) to every table, to measure what it changes (the two bundled tables have it
already).

Machines differ by about 2x, so every table's line also gives the ratio of the monolithic
MIP's median to the default oracle's median on the same draws (same noise, same run; an
uncertified run counts as the time limit, so a ratio with an uncertified side is a lower
or upper bound, marked ``>=`` / ``<=``).

``--workers`` (default: the usable CPUs, at most 2) is how many inner problems the structured
oracle solves at once.  ``--n-jobs N`` runs the draws in N processes through joblib instead
(then one worker each; ``joblib.parallel_config(backend="dask")`` runs them on a Dask
cluster): every record depends only on its table, method, eps, seed and oracle, so the
certified releases are the same wherever they run (tested in ``tests/test_benchmarks_smoke.py``).
Writes ``oracle_suite.json`` (every record), ``oracle_suite.csv`` (the summary table) and
``oracle_suite.png`` (median seconds per table and method) to ``--out``.

Usage: python benchmarks/oracle_suite.py [--quick] [--draws 5] [--time-limit 60] [--intercept]
       [--tables a,b] [--workers 2 | --n-jobs 2] [--eps 0.1,0.5,1,2] [--opdisc-ball 2,2]
       [--rspm-radius 2,3] [--space auto] [--compare-today] [--work-limit N] --out DIR
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import math
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from oracledp._diagnostics import research_diagnostics
from oracledp._provenance import environment, environment_line
from oracledp.datasets import load_adult
from oracledp.learners._opdisc import opdisc
from oracledp.learners._opdisc_calibration import calibrate
from oracledp.learners._rspm import rspm, rspm_perturbation, rspm_scale, rspm_space
from oracledp.oracles import FeatureSchema, HalfspaceProblem, IntegerBall
from oracledp.oracles._dispatch import AutoOracle, default_workers

#: KDD-99 columns that are rates: documented in [0, 1] and written with 2 decimals.
KDD_RATES = ("serror_rate", "rerror_rate", "same_srv_rate", "diff_srv_rate",
             "srv_diff_host_rate", "dst_host_same_srv_rate", "dst_host_diff_srv_rate",
             "dst_host_same_src_port_rate", "dst_host_serror_rate", "dst_host_rerror_rate")


def _grid(X: np.ndarray, q: int) -> np.ndarray:
    """Round every value to the public grid 1/q (a per-record transform)."""
    return np.round(X * q) / q


def table_adult_paper() -> tuple[np.ndarray, np.ndarray, FeatureSchema]:
    data = load_adult()
    return np.asarray(data.X), np.asarray(data.y), data.feature_schema


def table_adult_workclass() -> tuple[np.ndarray, np.ndarray, FeatureSchema]:
    data = load_adult(attributes=["age", "education-num", "hours-per-week", "marital-status",
                                  "relationship", "race", "sex", "workclass"],
                      missing="category")
    return np.asarray(data.X), np.asarray(data.y), data.feature_schema


#: Adult's three money/weight columns: a declared public cap (values above are clipped to it,
#: per record) and the grid 1/10 of the scaled value.  capital-gain: 99,999 is the census
#: top code; capital-loss and fnlwgt: round caps declared here (not read from the rows).
ADULT_EXTRA_CAPS = {"fnlwgt": 1_500_000, "capital-gain": 99_999, "capital-loss": 5_000}


def table_adult_6num() -> tuple[np.ndarray, np.ndarray, FeatureSchema]:
    from oracledp.datasets._adult import _read_split

    data = load_adult()
    raw = _read_split("train").iloc[np.asarray(data.source_rows)]
    X0 = np.asarray(data.X)
    sch = data.feature_schema
    extra, names = [], []
    for col, cap in ADULT_EXTRA_CAPS.items():
        v = np.minimum(raw[col].to_numpy(dtype=np.float64), cap) / cap
        extra.append(_grid(v, 10))
        names.append(col)
    # column order: age, fnlwgt, education-num, capital-gain, capital-loss, hours-per-week, one-hot
    X = np.column_stack([X0[:, 0], extra[0], X0[:, 1], extra[1], extra[2], X0[:, 2], X0[:, 3:]])
    fn = list(data.feature_names)
    schema = FeatureSchema(
        binary=(False,) * 6 + tuple(sch.binary[3:]),
        denominators=(sch.denominators[0], 10, sch.denominators[1], 10, 10, sch.denominators[2],
                      *sch.denominators[3:]),
        bounds=(1.0,) * X.shape[1],
        names=(fn[0], names[0], fn[1], names[1], names[2], fn[2], *fn[3:]),
    )
    return X, np.asarray(data.y), schema


#: Declared public cut points (thermometer encoding: one 0/1 column "value >= cut" per cut).
ADULT_CUTS = {"fnlwgt": (100_000, 200_000, 300_000), "capital-gain": (1, 5_000),
              "capital-loss": (1,)}


def table_adult_6num_thermometer() -> tuple[np.ndarray, np.ndarray, FeatureSchema]:
    """Adult's 6 numeric attributes: the paper's 3 on their exact grid, fnlwgt and the two
    capital columns as thermometer bits at declared cut points, plus the 20 one-hot columns."""
    from oracledp.datasets._adult import _read_split

    data = load_adult()
    raw = _read_split("train").iloc[np.asarray(data.source_rows)]
    X0 = np.asarray(data.X)
    sch = data.feature_schema
    bits, names = [], []
    for col, cuts in ADULT_CUTS.items():
        v = raw[col].to_numpy(dtype=np.float64)
        for c in cuts:
            bits.append((v >= c).astype(np.float64))
            names.append(f"{col}>={c}")
    X = np.column_stack([X0, *bits])
    schema = FeatureSchema(binary=tuple(sch.binary) + (True,) * len(bits),
                           denominators=tuple(sch.denominators) + (1,) * len(bits),
                           bounds=(1.0,) * X.shape[1],
                           names=tuple(data.feature_names) + tuple(names))
    return X, np.asarray(data.y), schema


def table_kdd99_rates() -> tuple[np.ndarray, np.ndarray, FeatureSchema]:
    from oracledp.datasets._kdd99 import load_kdd99_raw

    raw = load_kdd99_raw()
    rows = np.sort(np.random.default_rng(0).choice(len(raw), size=2000, replace=False))
    sub = raw.iloc[rows]
    X = sub[list(KDD_RATES)].to_numpy(dtype=np.float64)
    y = np.where(sub["label"].to_numpy() == "normal.", -1, 1)
    return X, y, FeatureSchema.grid(len(KDD_RATES), 1 / 100, 1.0, names=KDD_RATES)


def table_breast_cancer_30() -> tuple[np.ndarray, np.ndarray, FeatureSchema]:
    from sklearn.datasets import load_breast_cancer

    bc = load_breast_cancer()
    # documented (min, max) per feature, in column order, from the data set's description
    rng = re.findall(r"^([a-z ]+\((?:mean|standard error|worst)\)):\s+(\S+)\s+(\S+)\s*$",
                     bc.DESCR, flags=re.M)
    doc_max = np.array([float(hi) for _, _, hi in rng])
    if len(doc_max) != bc.data.shape[1]:
        raise RuntimeError("could not read the documented feature ranges")
    q = 10
    X = _grid(bc.data / (1.01 * doc_max), q)
    y = np.where(bc.target == 1, 1, -1)
    return X, y, FeatureSchema.grid(X.shape[1], 1 / q, 1.0, names=list(bc.feature_names))


def table_wine_13() -> tuple[np.ndarray, np.ndarray, FeatureSchema]:
    from sklearn.datasets import load_wine

    wine = load_wine()
    # documented (min, max, mean, sd) per attribute, in column order, from the description
    rng = re.findall(r"^([A-Za-z0-9/ ]+):\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$", wine.DESCR,
                     flags=re.M)
    doc_max = np.array([float(hi) for _, _, hi, _, _ in rng])
    if len(doc_max) != wine.data.shape[1]:
        raise RuntimeError("could not read the documented feature ranges")
    q = 10
    X = _grid(wine.data / (1.01 * doc_max), q)
    y = np.where(wine.target == 0, 1, -1)
    return X, y, FeatureSchema.grid(X.shape[1], 1 / q, 1.0, names=list(wine.feature_names))


def _bundled(name: str) -> tuple[np.ndarray, np.ndarray, FeatureSchema]:
    """A bundled table's training split, encoded by its public schema as ``oracledp fit``
    encodes it (labels -1/+1 in the schema's order)."""
    import tempfile

    from oracledp.datasets._tables import table_csv, table_schema
    from oracledp.tabular import TableSchema, read_csv

    schema = TableSchema.from_dict(table_schema(name))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.csv"
        table_csv(name, path, split="train")
        df = read_csv(path, schema, with_target=True)
    y = schema.labels_of(df)
    X = np.asarray(schema.encode(df), dtype=np.float64)
    labels = list(schema.labels)
    return X, np.where(np.asarray(y) == labels[1], 1, -1), schema.feature_schema()


def table_health_insurance() -> tuple[np.ndarray, np.ndarray, FeatureSchema]:
    return _bundled("health_insurance")


def table_doctor_visits() -> tuple[np.ndarray, np.ndarray, FeatureSchema]:
    return _bundled("doctor_visits")


TABLES: dict[str, Callable[[], tuple[np.ndarray, np.ndarray, FeatureSchema]]] = {
    "adult-paper": table_adult_paper,
    "adult-workclass": table_adult_workclass,
    "adult-6num": table_adult_6num,
    "kdd99-rates-10": table_kdd99_rates,
    "wine-13": table_wine_13,
    "breast-cancer-30": table_breast_cancer_30,
    "health-insurance": table_health_insurance,
    "doctor-visits": table_doctor_visits,
    "adult-6num-thermometer": table_adult_6num_thermometer,
}
DEFAULT = ("adult-paper", "adult-workclass", "adult-6num", "kdd99-rates-10", "wine-13",
           "breast-cancer-30", "health-insurance", "doctor-visits")
QUICK = ("adult-paper", "kdd99-rates-10", "wine-13", "breast-cancer-30")


def with_intercept(X: np.ndarray, y: np.ndarray, schema: FeatureSchema,
                   ) -> tuple[np.ndarray, np.ndarray, FeatureSchema]:
    """The table with the public constant feature "(intercept)" = 1 appended (a 0/1 column of
    the schema, as ``TableSchema`` adds it): one more dimension of W and of the noise."""
    names = schema.names or tuple(f"x{j}" for j in range(len(schema.binary)))
    return (np.column_stack([X, np.ones(len(X))]), y,
            FeatureSchema(binary=(*schema.binary, True), denominators=(*schema.denominators, 1),
                          bounds=(*schema.bounds, 1.0), names=(*names, "(intercept)"),
                          bounds_declared=schema.bounds_declared))


def _accuracy(w: np.ndarray, X: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(np.where(X @ w > 0, 1, -1) == y))


@functools.lru_cache(maxsize=2)
def _table(name: str, intercept: bool) -> dict[str, Any]:
    """A table and its two problems, built once per process (public transforms only)."""
    X, y, schema = TABLES[name]()
    if intercept and "(intercept)" not in (schema.names or ()):
        X, y, schema = with_intercept(X, y, schema)
    opdisc_problem = HalfspaceProblem.from_data(X, y, schema=schema)
    rspm_problem = HalfspaceProblem.from_data(X, y, rspm_space(X.shape[1]), schema=schema)
    return {"X": X, "y": y, "schema": schema, "opdisc": opdisc_problem, "rspm": rspm_problem,
            "problems": {("opdisc", None): opdisc_problem, ("rspm", None): rspm_problem}}


def _space(kind: str, d: int, space: tuple[float, float] | str | None) -> IntegerBall:
    """W of a run: the paper's (``space`` None), the estimators' user-table default
    (``"auto"``: a rule on d alone, :mod:`oracledp.estimators._space_spec`) or
    IntegerBall(d, bound, radius)."""
    if space is None:
        return IntegerBall(d) if kind == "opdisc" else rspm_space(d)
    if space == "auto":
        from oracledp.estimators._space_spec import parameter_space

        return parameter_space("auto", d, model=kind)
    return IntegerBall(d, bound=space[0], radius=space[1])


def _problem(t: dict[str, Any], kind: str, space: tuple[float, float] | None
             ) -> HalfspaceProblem:
    key = (kind, space)
    if key not in t["problems"]:
        X, y = t["X"], t["y"]
        t["problems"][key] = HalfspaceProblem.from_data(
            X, y, _space(kind, X.shape[1], space), schema=t["schema"])
    return t["problems"][key]


def _oracle(job: dict[str, Any], problem: HalfspaceProblem) -> Any:
    """The oracle of a run: a backend name, or for ``highs`` / ``today`` an AutoOracle (the
    new default; or the previous one: structured only with <= 4 numeric columns, no
    coupled bound)."""
    oracle = job["oracle"]
    if oracle not in ("highs", "today"):
        return oracle
    opts = {"time_limit": job["time_limit"], "workers": job["workers"],
            "work_limit": job.get("work_limit")}
    if oracle == "highs":
        return AutoOracle(**opts)
    n_num = int((~problem.binary_columns).sum())
    old = n_num <= 4 and (2 * problem.space.k_max + 1) ** n_num <= 2_500_000
    return AutoOracle(formulation="structured" if old else "branch", coupled_bound=False,
                      max_candidates=10**9, **opts)


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """One draw: a record that depends only on the job (table, kind, eps, seed, oracle, time
    and work limits, space), not on the process or machine it runs in (but for its seconds)."""
    t = _table(job["table"], job["intercept"])
    X, y = t["X"], t["y"]
    kind, eps, seed, limit = job["kind"], job["eps"], job["seed"], job["time_limit"]
    space = job.get("space")
    space = space if space is None or isinstance(space, str) else tuple(space)
    problem = _problem(t, kind, space)
    oracle = _oracle(job, problem)
    opts: dict[str, Any] = {} if not isinstance(oracle, str) else {"time_limit": limit}
    t0 = time.perf_counter()
    rec: dict[str, Any] = {"table": job["table"], "kind": kind, "eps": eps, "seed": seed,
                           "oracle": job["oracle"], "space": space,
                           "W_points": problem.space.size()}
    try:
        with research_diagnostics():
            if kind == "opdisc":
                res = opdisc(problem, eps, 1.0 / problem.n**2, oracle=oracle, random_state=seed,
                             allow_uncertified=True, return_diagnostics=True, **opts)
                orc = res.diagnostics["oracle"]
                w = res.w
            elif space is None:
                res = rspm(problem, eps, oracle=oracle, random_state=seed,
                           allow_uncertified=True, return_diagnostics=True, **opts)
                orc = res.diagnostics["oracle"]
                w = res.w
            else:  # a subset of {-1, 0, 1}^d: the same noise as rspm(), the oracle directly
                from oracledp._validation import check_rng
                from oracledp.oracles import make_oracle
                from oracledp.privacy import _noise as noise

                m = 2 * problem.d
                eta = noise.laplace(check_rng(seed), rspm_scale(eps, m), size=m)
                orc = make_oracle(oracle, **opts).solve(
                    problem, rspm_perturbation(problem.space, eta))
                w = orc.solution if orc.solution is not None else np.zeros(problem.d)
        rec |= {"certified": bool(orc.certified), "status": str(orc.status),
                "oracle_s": float(orc.wall_time), "accuracy": _accuracy(w, X, y),
                "work": orc.info.get("work"), "w": [float(v) for v in w]}
    except Exception as exc:  # a refusal (ValueError / OracleFailure) is a result here
        rec |= {"certified": False, "status": f"refused: {type(exc).__name__}",
                "oracle_s": math.nan, "accuracy": math.nan, "reason": str(exc)[:200]}
    rec["seconds"] = time.perf_counter() - t0
    return rec


def _space_name(kind: str, space: Any) -> str:
    if space is None:
        return "paper"
    if isinstance(space, str):
        return space
    return f"B{space[0]:g},R{space[1]:g}"


def _median_t(rs: list[dict[str, Any]], limit: float) -> float:
    return statistics.median([r["seconds"] if r["certified"] else limit for r in rs])


def _ratio(mono: list[dict[str, Any]], main: list[dict[str, Any]], limit: float) -> str:
    """Other oracle's median / default median on the same draws (same seeds): ">=" when the
    other side hit the limit (its true time is longer), "<=" when the default did."""
    seeds = {r["seed"] for r in mono}
    shared = [r for r in main if r["seed"] in seeds]
    if not mono or not shared:
        return ""
    ratio = _median_t(mono, limit) / max(_median_t(shared, limit), 1e-3)
    lower = not all(r["certified"] for r in mono)
    upper = not all(r["certified"] for r in shared)
    mark = "~" if lower and upper else (">=" if lower else ("<=" if upper else ""))
    return f"{mark}{ratio:.0f}x" if ratio >= 10 else f"{mark}{ratio:.1f}x"


def _plot(rows: list[dict[str, Any]], path: Path, limit: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables = list(dict.fromkeys(r["table"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.8 / max(len(methods), 1)
    for i, m in enumerate(methods):
        vals = [next((r["median_s"] for r in rows if r["table"] == t and r["method"] == m),
                     math.nan) for t in tables]
        ax.bar(np.arange(len(tables)) + i * width, np.maximum(vals, 1e-3), width, label=m)
    ax.axhline(limit, color="k", lw=0.8, ls="--", label=f"time limit ({limit:g} s)")
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(tables)) + 0.4 - width / 2, tables, rotation=20, ha="right")
    ax.set_ylabel("median seconds to a certified optimum")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"tables {', '.join(QUICK)}, 2 draws, 20 s limit, 1 monolithic draw")
    ap.add_argument("--draws", type=int, default=5)
    ap.add_argument("--mono-draws", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--tables", default=None, help="comma-separated subset of tables")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    ap.add_argument("--intercept", action="store_true",
                    help="append the public constant feature (intercept) to every table")
    ap.add_argument("--workers", type=int, default=None,
                    help="inner problems solved at once by the structured oracle "
                         "(default: the usable CPUs, at most 2)")
    ap.add_argument("--n-jobs", type=int, default=1,
                    help="draws run in this many processes (joblib; one worker each)")
    ap.add_argument("--eps", default="0.1,0.5,1,2", help="privacy levels (comma-separated)")
    ap.add_argument("--opdisc-ball", default=None,
                    help="B,R: OPDisc over IntegerBall(d, bound=B, radius=R) (default: paper W)")
    ap.add_argument("--rspm-radius", default=None,
                    help="R[,R...]: RSPM over {-1,0,1}^d with ||k|| <= R (default: the box)")
    ap.add_argument("--compare-today", action="store_true",
                    help="also run the previous default oracle on the same draws (ratios)")
    ap.add_argument("--kinds", default="opdisc,rspm", help="methods to run")
    ap.add_argument("--work-limit", type=int, default=None,
                    help="deterministic work limit of the oracles (besides the time limit)")
    ap.add_argument("--space", choices=("paper", "auto"), default=None,
                    help="auto: both methods over the estimators' user-table default W (a rule "
                         "on d; replaces --opdisc-ball / --rspm-radius)")
    args = ap.parse_args()
    eps_list = [float(e) for e in args.eps.split(",")]
    opdisc_space = (None if args.opdisc_ball is None
                    else tuple(float(v) for v in args.opdisc_ball.split(",")))
    rspm_spaces = ([None] if args.rspm_radius is None
                   else [(1.0, float(r)) for r in args.rspm_radius.split(",")])
    if args.space == "auto":
        opdisc_space, rspm_spaces = "auto", ["auto"]
    kinds = args.kinds.split(",")
    variants = ["highs", "today"] if args.compare_today else ["highs"]
    if args.quick:
        args.draws, args.time_limit, args.mono_draws = 2, 20.0, 1
    names = (args.tables.split(",") if args.tables else list(QUICK if args.quick else DEFAULT))
    unknown = sorted(set(names) - set(TABLES))
    if unknown:
        ap.error(f"unknown table(s) {unknown}; choose from {sorted(TABLES)}")
    workers = 1 if args.n_jobs != 1 else (args.workers or default_workers())

    print(environment_line(), flush=True)
    print(f"workers={workers} n_jobs={args.n_jobs} time_limit={args.time_limit:g}", flush=True)
    from sklearn.linear_model import LogisticRegression

    jobs: list[dict[str, Any]] = []
    lr_acc: dict[str, float] = {}
    for name in names:
        t = _table(name, args.intercept)
        problem, X, y = _problem(t, "opdisc", opdisc_space), t["X"], t["y"]
        lr_acc[name] = float(LogisticRegression(max_iter=5000).fit(X, y).score(X, y))
        n_num = int((~t["schema"].binary_mask).sum())
        # OPDisc's proven sigma against Theorem 1's (public parameters only)
        ratios = {eps: calibrate(eps, 1.0 / problem.n**2, problem.space,
                                 problem.lipschitz).ratio_to_paper for eps in (0.1, 1.0)}
        print(f"{name}: n={problem.n} d={problem.d} numeric={n_num} groups={problem.n_groups} "
              f"W_points={problem.space.size()} logreg_train_acc={lr_acc[name]:.3f} "
              f"sigma/paper_sigma eps=0.1: {ratios[0.1]:.3f} eps=1: {ratios[1.0]:.3f}",
              flush=True)
        base = {"table": name, "intercept": args.intercept, "time_limit": args.time_limit,
                "workers": workers, "work_limit": args.work_limit}
        for eps in eps_list:
            for variant in variants:
                if "opdisc" in kinds:
                    jobs += [base | {"kind": "opdisc", "eps": eps, "oracle": variant, "seed": s,
                                     "space": opdisc_space} for s in range(args.draws)]
                if "rspm" in kinds:
                    jobs += [base | {"kind": "rspm", "eps": eps, "oracle": variant, "seed": s,
                                     "space": sp} for sp in rspm_spaces
                             for s in range(args.draws)]
        if "opdisc" in kinds and opdisc_space is None:
            jobs += [base | {"kind": "opdisc", "eps": 1.0, "oracle": "highs-monolithic",
                             "seed": s} for s in range(args.mono_draws)]
    if args.n_jobs == 1:
        results: Any = map(run_job, jobs)
    else:
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=args.n_jobs, return_as="generator")(
            delayed(run_job)(j) for j in jobs)
    records: list[dict[str, Any]] = []
    for rec in results:  # in job order, as they finish
        rec["logreg_accuracy"] = lr_acc[rec["table"]]
        records.append(rec)
        print(f"  {rec['table']:<17} {rec['kind']:<6} eps={rec['eps']:<4} {rec['oracle']:<16} "
              f"W={_space_name(rec['kind'], rec['space'])} "
              f"draw {rec['seed']}: {rec['seconds']:6.2f} s certified={rec['certified']} "
              f"acc={rec['accuracy']:.3f} work={rec.get('work')} {rec['status']}"
              + (f" ({rec['reason']})" if "reason" in rec else ""), flush=True)

    limit = args.time_limit
    rows: list[dict[str, Any]] = []
    for name in names:
        mono = [r for r in records if r["table"] == name and r["oracle"] == "highs-monolithic"]
        cells = list(dict.fromkeys((r["kind"], r["eps"], r["oracle"], r["space"])
                                   for r in records if r["table"] == name))
        for kind, eps, oracle, space in cells:
            rs = [r for r in records if r["table"] == name and r["kind"] == kind
                  and r["eps"] == eps and r["oracle"] == oracle and r["space"] == space]
            today = [r for r in records if r["table"] == name and r["kind"] == kind
                     and r["eps"] == eps and r["oracle"] == "today" and r["space"] == space]
            ts = [r["seconds"] if r["certified"] else limit for r in rs]
            acc = [r["accuracy"] for r in rs if not math.isnan(r["accuracy"])]
            rows.append({
                "table": name, "method": f"{kind} {eps:g} {oracle} {_space_name(kind, space)}",
                "kind": kind, "eps": eps, "oracle": oracle, "space": _space_name(kind, space),
                "certified": sum(r["certified"] for r in rs), "draws": len(rs),
                "median_s": statistics.median(ts), "max_s": max(ts),
                "accuracy": statistics.median(acc) if acc else math.nan,
                "logreg": lr_acc[name],
                "mono_ratio": (_ratio(mono, rs, limit)
                               if (kind, eps, oracle) == ("opdisc", 1.0, "highs") else ""),
                "today_ratio": _ratio(today, rs, limit) if oracle == "highs" else "",
            })
    print("\ntable             method eps  oracle   W           cert  median_s   max_s  acc    "
          "logreg  mono/this today/this")
    for r in rows:
        print(f"{r['table']:<17} {r['kind']:<6} {r['eps']:<4} {r['oracle']:<8} "
              f"{r['space']:<11} {r['certified']}/{r['draws']}  {r['median_s']:7.2f} "
              f"{r['max_s']:7.2f}  {r['accuracy']:.3f}  {r['logreg']:.3f}  {r['mono_ratio']:>9} "
              f"{r['today_ratio']}")
    main_runs = [r for r in records if r["oracle"] == "highs"]
    ts = [r["seconds"] if r["certified"] else limit for r in main_runs]
    frac = sum(r["certified"] for r in main_runs) / max(len(main_runs), 1)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "oracle_suite.json").write_text(json.dumps(
        {"records": records, "summary": rows,
         "config": vars(args) | {"out": str(args.out), "workers": workers},
         "environment": environment()}, indent=2, default=str))
    with open(args.out / "oracle_suite.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else ["table"])
        w.writeheader()
        w.writerows(rows)
    if rows:
        _plot(rows, args.out / "oracle_suite.png", limit)
    print(f"certified_fraction={frac:.2f} median_s={statistics.median(ts):.2f} "
          f"p100_s={max(ts):.2f}")


if __name__ == "__main__":
    main()
