"""Large tables (issue 39): reading, checking, `fit` and `synth fit` on 10 M / 100 M rows.

Generates an Adult-like table on the fly, with DuckDB SQL from ``range(n)``: every cell is a
function of (row index, seed) through DuckDB's ``hash`` (so the data are deterministic for a
DuckDB version, and 100 M rows take minutes on 2 cores), written with ``COPY ... TO`` as a
CSV and as a Parquet file.  The table: three numeric columns on public integer grids (age,
education-num, hours-per-week), one numeric column encoded by public bins (capital-gain),
four categorical columns (marital-status, relationship, race, sex) and a binary label
(income) drawn from a logistic model of the features; with its public schema JSON.

Then, per size (``--sizes``) and format (CSV, Parquet), each step in its own subprocess, with
its wall time and its own peak resident memory (``os.wait4`` on that child: the largest
resident set of the child or any process it waited for, so per step, never cumulative):

* ``duckdb``: DuckDB's bare ``SELECT count(*) FROM (SELECT *, count(*) FROM read_csv(path)
  GROUP BY ALL)`` (``read_parquet`` for Parquet), on a connection with the data engine's
  settings (threads, memory limit, spilling);
* ``check``: ``oracledp schema check DATA --schema S`` (the reading-and-validation pass on
  the whole file), and its time as a multiple of ``duckdb``;
* ``fit``: ``oracledp fit DATA --schema S --model rspm --epsilon 1 --seed 0``;
* ``predict``: ``oracledp predict MODEL DATA --scores`` with the model of ``fit`` (same size and
  format: run ``fit`` too), stdout written to a file (streamed: its peak does not include the
  output), with the number of predictions and the megabytes written;
* ``synth``: ``oracledp synth fit DATA --schema S --epsilon 1 --seed 0``;
* ``dask``: ``read_aggregated(DATA, schema, engine="dask")`` on a local cluster of 2 workers
  (one thread each) against ``read_aggregated(DATA, schema)``: the same codes and counts
  (yes/no), the wall time of each (the cluster's start-up apart); its peak is the largest
  single process and ``tree_mb`` the sampled sum over the child and its workers (psutil).
  "not available" when the Dask extra (dask, distributed, pyarrow) is not importable by
  ``--dask-python`` (default: this interpreter).

The targets (issue 39) are checked and printed as yes/no: the check within 2x of DuckDB's
bare ``GROUP BY ALL`` of the same CSV; 10 M rows of Parquet through ``fit`` under 1 GB;
100 M rows of Parquet through ``fit`` and ``synth fit`` in at most 3 minutes and 2 GB each;
the Dask engine's table equal to the default engine's.

Prints the date, versions and load (``environment_line``) at the start and the end and one
line per measurement, and writes ``results.json`` and ``results.csv`` to ``--out``.  The data
go to a temporary directory (deleted at the end unless ``--keep``).

Usage: python benchmarks/large_tables.py [--sizes 10000000 100000000] [--seed 0]
       [--steps duckdb check fit predict synth dask] [--formats csv parquet] [--out DIR] [--keep]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from oracledp._provenance import environment, environment_line

MB = 2**20
STEPS = ("duckdb", "check", "fit", "predict", "synth", "dask")
FORMATS = ("csv", "parquet")
GEN_CHUNK = 500_000  # rows of one chunk of adult_like_chunk (and of large_csv.py's writes)

MARITAL = ["Divorced", "Married-AF-spouse", "Married-civ-spouse", "Married-spouse-absent",
           "Never-married", "Separated", "Widowed"]
RELATIONSHIP = ["Husband", "Not-in-family", "Other-relative", "Own-child", "Unmarried", "Wife"]
RACE = ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"]
SEX = ["Female", "Male"]
LABELS = ["<=50K", ">50K"]

#: The public schema (codebook bounds and grids, never read from the data).
SCHEMA = {
    "target": {"name": "income", "labels": LABELS},
    "columns": [
        {"name": "age", "type": "numeric", "lower": 0, "upper": 100, "step": 1},
        {"name": "education-num", "type": "numeric", "lower": 0, "upper": 16, "step": 1},
        {"name": "hours-per-week", "type": "numeric", "lower": 0, "upper": 100, "step": 1},
        {"name": "capital-gain", "type": "numeric", "lower": 0, "upper": 100000,
         "bins": [1, 3000, 7000, 15000]},
        {"name": "marital-status", "type": "categorical", "levels": MARITAL},
        {"name": "relationship", "type": "categorical", "levels": RELATIONSHIP},
        {"name": "race", "type": "categorical", "levels": RACE},
        {"name": "sex", "type": "categorical", "levels": SEX},
    ],
}

_EDU_P = np.array([0.0015, 0.005, 0.01, 0.02, 0.016, 0.029, 0.036, 0.013, 0.322, 0.224, 0.042,
                   0.033, 0.164, 0.053, 0.018, 0.013])
# relationship given sex (Female, Male), in RELATIONSHIP order
_REL_P = np.array([[0.00, 0.35, 0.05, 0.20, 0.25, 0.15],
                   [0.62, 0.20, 0.03, 0.12, 0.03, 0.00]])
# marital status given relationship, in MARITAL order
_MAR_P = np.array([
    [0.00, 0.01, 0.99, 0.00, 0.00, 0.00, 0.00],  # Husband
    [0.35, 0.00, 0.00, 0.05, 0.40, 0.08, 0.12],  # Not-in-family
    [0.20, 0.00, 0.10, 0.05, 0.55, 0.05, 0.05],  # Other-relative
    [0.05, 0.00, 0.00, 0.02, 0.90, 0.03, 0.00],  # Own-child
    [0.40, 0.00, 0.00, 0.07, 0.28, 0.15, 0.10],  # Unmarried
    [0.00, 0.01, 0.99, 0.00, 0.00, 0.00, 0.00],  # Wife
])
_RACE_P = np.array([0.01, 0.03, 0.10, 0.01, 0.85])


# --- the data: DuckDB SQL from range(n) ------------------------------------------------------


def _draw(p: np.ndarray, u: str) -> str:
    """SQL: the index drawn from the categorical distribution ``p`` by the uniform ``u``."""
    cdf = np.cumsum(p / p.sum())
    arms = [f"WHEN {u} < {float(c)!r} THEN {j}" for j, c in enumerate(cdf[:-1]) if p[j] > 0]
    return f"CASE {' '.join(arms)} ELSE {len(p) - 1} END" if arms else str(len(p) - 1)


def _given(table: np.ndarray, cond: str, u: str) -> str:
    """SQL: a draw from row ``cond`` of ``table`` (one categorical distribution per row)."""
    arms = " ".join(f"WHEN {r} THEN {_draw(row, u)}" for r, row in enumerate(table))
    return f"(CASE {cond} {arms} END)"


def _names(levels: list[str], code: str) -> str:
    arms = " ".join(f"WHEN {j} THEN '{name}'" for j, name in enumerate(levels))
    return f"(CASE {code} {arms} END)"


def table_sql(seed: int, start: int, stop: int, ordered: bool = False) -> str:
    """The SELECT of rows ``start`` (inclusive) to ``stop`` of the table for ``seed``: each cell
    a function of (row index, seed) only, through uniforms in [0, 1): the top 53 bits of
    DuckDB's ``hash`` of the single integer ``i * 16 + k + seed * 2**40`` (k < 16 numbers the
    draws of a row; hashing one integer mixes it fully, while ``hash(i, seed, k)`` gave
    correlated draws); in the order of the index if ``ordered`` (else in any order)."""
    if not (0 <= seed < 2**22 and 0 <= start <= stop < 2**36):
        raise ValueError("seed must be in [0, 2**22) and rows below 2**36")

    def u(k: int) -> str:  # 1 - u is in (0, 1]
        return f"u{k}"

    draws = ", ".join(f"((hash(i * 16 + {k} + {int(seed) * 2**40}) >> 11)::DOUBLE"
                      f" / 9007199254740992.0) AS u{k}" for k in range(15))

    def normal(a: int, b: int) -> str:  # Box-Muller
        return f"(sqrt(-2 * ln(1 - {u(a)})) * cos(2 * pi() * {u(b)}))"

    child = RELATIONSHIP.index("Own-child")
    married = (MARITAL.index("Married-civ-spouse"), MARITAL.index("Married-AF-spouse"))
    return f"""
WITH d AS (
  SELECT i, {draws} FROM range({int(start)}, {int(stop)}) t(i)
), s AS (
  SELECT *, ({u(0)} < 0.67)::INTEGER AS male FROM d
), r AS (
  SELECT *, {_given(_REL_P, "male", u(1))} AS rel FROM s
), f AS (
  SELECT i, u9, u10, u14, male, rel, {_given(_MAR_P, "rel", u(2))} AS mar, {_draw(_RACE_P, u(3))} AS race,
    least(greatest(round(17 + CASE WHEN rel = {child} THEN -6 * ln(1 - {u(4)})
                                   ELSE -10.75 * ln((1 - {u(4)}) * (1 - {u(5)})) END),
                   17), 90)::BIGINT AS age,
    1 + {_draw(_EDU_P, u(6))} AS edu,
    least(greatest(40 + 12 * {normal(7, 8)}, 1), 99) AS h,
    CASE WHEN {u(11)} < 0.92 THEN 0
         ELSE least(greatest(round(exp(8.5 + {normal(12, 13)})), 1), 99999) END::BIGINT AS gain
  FROM r
), g AS (
  SELECT *, least(greatest(CASE WHEN {u(10)} < 0.38 THEN 40
                                WHEN {u(9)} < 0.7 THEN 5 * round(h / 5) ELSE round(h) END,
                           1), 99)::BIGINT AS hours
  FROM f
)
SELECT age, edu AS "education-num", hours AS "hours-per-week", gain AS "capital-gain",
  {_names(MARITAL, "mar")} AS "marital-status",
  {_names(RELATIONSHIP, "rel")} AS relationship,
  {_names(RACE, "race")} AS race, {_names(SEX, "male")} AS sex,
  CASE WHEN {u(14)} < 1 / (1 + exp(-(-8.6 + 0.03 * age + 0.33 * edu + 0.035 * hours
        + 2.0 * (mar IN {married})::INTEGER + 0.3 * male + 1.5 * (gain >= 7000)::INTEGER)))
       THEN '{LABELS[1]}' ELSE '{LABELS[0]}' END AS income
FROM g{" ORDER BY i" if ordered else ""}"""


def _connect() -> Any:
    from oracledp.tabular._sources import connect

    return connect()


def adult_like_rows(seed: int, start: int, stop: int) -> pd.DataFrame:
    """Rows ``start`` to ``stop`` of the table for ``seed``, as a DataFrame."""
    con = _connect()
    try:
        return con.sql(table_sql(seed, start, stop, ordered=True)).df()
    finally:
        con.close()


def adult_like_chunk(seed: int, index: int, n: int) -> pd.DataFrame:
    """Chunk ``index`` (rows ``index * GEN_CHUNK`` onwards, ``n`` of them) of the table."""
    return adult_like_rows(seed, index * GEN_CHUNK, index * GEN_CHUNK + n)


def write_table(path: Path, rows: int, seed: int, fmt: str) -> None:
    """The table's ``rows`` rows as one CSV or Parquet file (DuckDB's ``COPY``: streamed,
    memory bounded by the engine's limit)."""
    options = "HEADER, DELIMITER ','" if fmt == "csv" else "FORMAT parquet"
    con = _connect()
    try:
        con.execute("SET enable_progress_bar = false")
        con.execute(f"COPY ({table_sql(seed, 0, rows)}) TO '{path}' ({options})")
    finally:
        con.close()


def convert(parquet: Path, path: Path) -> None:
    """The Parquet file ``parquet`` rewritten as the CSV ``path`` (the same rows; faster than
    generating them again)."""
    con = _connect()
    try:
        con.execute("SET enable_progress_bar = false")
        con.execute(f"COPY (SELECT * FROM read_parquet('{parquet}')) TO '{path}' "
                    "(HEADER, DELIMITER ',')")
    finally:
        con.close()


def write_schema(path: Path, schema: dict[str, Any] | None = None) -> None:
    from oracledp.tabular import TableSchema

    TableSchema.from_dict(SCHEMA if schema is None else schema).save(path)


# --- one measured subprocess ------------------------------------------------------------------


@dataclass
class Run:
    """One child process: exit code, wall seconds, its own peak RSS (MB), the sampled peak of
    the sum over it and its descendants (MB; None without psutil) and its output."""

    returncode: int
    seconds: float
    peak_mb: float
    tree_mb: float | None
    stdout: str
    stderr: str


def _sample_tree(pid: int, stop: threading.Event, out: list[float]) -> None:
    try:
        import psutil
    except ImportError:
        return
    try:
        root = psutil.Process(pid)
    except psutil.Error:
        return
    peak = 0
    while not stop.is_set():
        try:
            procs = [root, *root.children(recursive=True)]
            total = 0
            for p in procs:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
            peak = max(peak, total)
        except psutil.Error:
            break
        stop.wait(0.1)
    out.append(peak / MB)


def run_measured(cmd: list[str], timeout: float | None = None, tree: bool = False,
                 env: dict[str, str] | None = None, stdout_to: Path | None = None) -> Run:
    """Run ``cmd``; wall time and the peak RSS of this child alone (``os.wait4``: the child
    and the processes it waited for, not earlier children of this process).  ``stdout_to``:
    the child's stdout goes to that file (not read back: ``Run.stdout`` is empty)."""
    with (open(stdout_to, "w+") if stdout_to else tempfile.TemporaryFile("w+")) as out, \
            tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True,
                                env={**os.environ, "COLUMNS": "120", **(env or {})})
        stop, sampled = threading.Event(), []
        sampler = None
        if tree:
            sampler = threading.Thread(target=_sample_tree, args=(proc.pid, stop, sampled),
                                       daemon=True)
            sampler.start()
        timer = threading.Timer(timeout, proc.kill) if timeout else None
        if timer:
            timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        if timer:
            timer.cancel()
        stop.set()
        if sampler:
            sampler.join()
        out.seek(0)
        err.seek(0)
        return Run(proc.returncode, seconds, usage.ru_maxrss / 1024,  # kB on Linux
                   sampled[0] if sampled else None, "" if stdout_to else out.read(),
                   err.read())


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "oracledp._cli", *args]


# --- the steps ---------------------------------------------------------------------------------

_DUCKDB_CHILD = """
import sys
from oracledp.tabular._sources import connect
path, fmt = sys.argv[1], sys.argv[2]
reader = "read_csv" if fmt == "csv" else "read_parquet"
con = connect()
con.execute("SET enable_progress_bar = false")
q = f"SELECT count(*) FROM (SELECT *, count(*) FROM {reader}('{path}') GROUP BY ALL)"
print(con.execute(q).fetchall()[0][0])
"""

_DASK_CHILD = """
import json, sys, time
import numpy as np
data, schema_path, engine, out = sys.argv[1:5]
try:
    from oracledp.tabular import TableSchema, read_aggregated
    schema = TableSchema.load(schema_path)
    if engine == "dask":
        from oracledp.tabular._dask import _require
        _require()
        import distributed
except ImportError as exc:
    print(json.dumps({"available": False, "why": str(exc)}))
    sys.exit(0)
if engine == "dask":
    t0 = time.perf_counter()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \\
            distributed.Client(cluster, set_as_default=False) as client:
        startup = time.perf_counter() - t0
        t0 = time.perf_counter()
        table = read_aggregated(data, schema, engine="dask", scheduler=client)
        seconds = time.perf_counter() - t0
else:
    startup, t0 = 0.0, time.perf_counter()
    table = read_aggregated(data, schema)
    seconds = time.perf_counter() - t0
np.savez(out, codes=table.codes, counts=table.counts)
print(json.dumps({"available": True, "startup": startup, "seconds": seconds,
                  "groups": table.n_groups}))
"""


@dataclass
class Row:
    """One measurement of the results table."""

    rows: int
    format: str
    step: str
    file_mb: float
    seconds: float | None = None
    peak_mb: float | None = None
    tree_mb: float | None = None
    ok: bool = True
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _last_lines(run: Run, k: int = 12) -> str:
    return "\n".join((run.stdout + run.stderr).strip().splitlines()[-k:])


def measure(data: Path, schema: Path, tmp: Path, rows: int, fmt: str, steps: list[str],
            args: argparse.Namespace) -> list[Row]:
    file_mb = data.stat().st_size / MB
    out: list[Row] = []

    def add(step: str, run: Run | None, note: str = "", **extra: Any) -> Row:
        row = Row(rows, fmt, step, round(file_mb, 1))
        if run is not None:
            row.seconds, row.peak_mb = round(run.seconds, 2), round(run.peak_mb, 1)
            row.tree_mb = None if run.tree_mb is None else round(run.tree_mb, 1)
            row.ok = run.returncode == 0
            if not row.ok:
                note = f"exit {run.returncode}: " + _last_lines(run, 3).replace("\n", " | ")
        row.note, row.extra = note, extra
        out.append(row)
        print(f"  {fmt:8} {step:7} " + (f"{row.seconds:8.1f}s {row.peak_mb:8.0f} MB"
                                        if row.seconds is not None else " " * 20)
              + (f"  {note}" if note else ""), flush=True)
        if run is not None and not row.ok and args.verbose:
            print(_last_lines(run, 40), file=sys.stderr)
        return row

    limit = args.step_timeout
    if "duckdb" in steps:
        run = run_measured([sys.executable, "-c", _DUCKDB_CHILD, str(data), fmt], limit)
        groups = run.stdout.strip().splitlines()[-1] if run.returncode == 0 else ""
        add("duckdb", run, f"{groups} groups" if groups else "")
    if "check" in steps:
        run = run_measured(cli("schema", "check", str(data), "--schema", str(schema)), limit)
        base = next((r for r in out if r.step == "duckdb" and r.ok), None)
        ratio = (run.seconds / base.seconds) if base and base.seconds else None
        add("check", run, f"{ratio:.2f}x duckdb" if ratio else "",
            ratio_to_duckdb=None if ratio is None else round(ratio, 3))
    if "fit" in steps:
        run = run_measured(cli("fit", str(data), "--schema", str(schema), "--model", "rspm",
                               "--epsilon", "1", "--seed", "0", "--time-limit",
                               f"{args.time_limit:g}", "--force", "--out", str(tmp / "model")),
                           limit)
        add("fit", run)
    if "predict" in steps:
        model, written = tmp / "model", tmp / "predictions.csv"
        if not (model / "model.json").exists():
            add("predict", None, "no model: run the fit step too")
        else:
            run = run_measured(cli("predict", str(model), str(data), "--scores"), limit,
                               stdout_to=written)
            with open(written, "rb") as fh:
                lines = sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 24), b""))
            size = written.stat().st_size / MB
            written.unlink()
            add("predict", run, f"{max(lines - 1, 0):,} predictions, {size:.0f} MB written",
                predictions=max(lines - 1, 0), output_mb=round(size, 1))
    if "synth" in steps:
        run = run_measured(cli("synth", "fit", str(data), "--schema", str(schema), "--epsilon",
                               "1", "--seed", "0", "--force", "--out", str(tmp / "synth")),
                           limit)
        add("synth", run)
    if "dask" in steps:
        res: dict[str, Any] = {}
        runs: dict[str, Run] = {}
        for engine, python in (("duckdb", sys.executable), ("dask", args.dask_python)):
            run = run_measured([python, "-c", _DASK_CHILD, str(data), str(schema), engine,
                                str(tmp / f"agg-{engine}.npz")], limit, tree=engine == "dask")
            runs[engine] = run
            try:
                res[engine] = json.loads(run.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                res[engine] = {"available": True, "failed": _last_lines(run, 3)}
        if not res["dask"].get("available", True):
            add("dask", None, f"not available ({res['dask'].get('why')})", available=False)
        elif runs["dask"].returncode != 0 or runs["duckdb"].returncode != 0:
            add("dask", runs["dask"] if runs["dask"].returncode else runs["duckdb"],
                available=True)
        else:
            a, b = np.load(tmp / "agg-duckdb.npz"), np.load(tmp / "agg-dask.npz")
            equal = bool(np.array_equal(a["codes"], b["codes"])
                         and np.array_equal(a["counts"], b["counts"]))
            d, k = res["dask"], res["duckdb"]
            add("dask", runs["dask"],
                f"equal to default: {'yes' if equal else 'NO'}; read {d['seconds']:.1f}s "
                f"(+{d['startup']:.1f}s cluster start) vs default {k['seconds']:.1f}s",
                available=True, equal=equal, dask_read_seconds=round(d["seconds"], 2),
                cluster_startup_seconds=round(d["startup"], 2),
                default_read_seconds=round(k["seconds"], 2), groups=d["groups"])
    return out


# --- targets ------------------------------------------------------------------------------------


def targets(results: list[Row]) -> list[dict[str, Any]]:
    """The issue's targets on the measured rows (None: not measured in this run)."""
    def find(rows: int, fmt: str, step: str) -> Row | None:
        return next((r for r in results if (r.rows, r.format, r.step) == (rows, fmt, step)
                     and r.ok and r.seconds is not None), None)

    out = []
    for n in sorted({r.rows for r in results}):
        check, base = find(n, "csv", "check"), find(n, "csv", "duckdb")
        if check and base:
            ratio = check.seconds / base.seconds
            out.append({"rows": n, "target": "CSV schema check within 2x of DuckDB GROUP BY ALL",
                        "value": f"{ratio:.2f}x", "met": ratio <= 2})
        fit = find(n, "parquet", "fit")
        if fit and n == 10_000_000:
            out.append({"rows": n, "target": "Parquet fit peak < 1 GB",
                        "value": f"{fit.peak_mb:.0f} MB", "met": fit.peak_mb < 1024})
        if n == 100_000_000:
            for step in ("fit", "synth"):
                r = find(n, "parquet", step)
                if r:
                    out.append({"rows": n, "target": f"Parquet {step} <= 3 min and <= 2 GB",
                                "value": f"{r.seconds:.0f}s, {r.peak_mb:.0f} MB",
                                "met": r.seconds <= 180 and r.peak_mb <= 2048})
        for r in results:
            if r.rows == n and r.step == "dask" and r.extra.get("available") and "equal" in \
                    r.extra:
                out.append({"rows": n, "target": f"{r.format}: Dask engine's table equal to "
                            "the default engine's", "value": str(r.extra["equal"]),
                            "met": r.extra["equal"]})
    return out


def write_results(out_dir: Path, meta: dict[str, Any], results: list[Row],
                  met: list[dict[str, Any]]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    payload = {**meta, "results": [asdict(r) for r in results], "targets": met}
    (out_dir / "results.json").write_text(json.dumps(payload, indent=1) + "\n")
    cols = ["rows", "format", "step", "file_mb", "seconds", "peak_mb", "tree_mb", "ok", "note"]
    with open(out_dir / "results.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for r in results:
            w.writerow([getattr(r, c) for c in cols])


def _versions() -> str:
    found = []
    for name in ("duckdb", "dask", "distributed", "pyarrow", "psutil"):
        try:
            mod = __import__(name)
            found.append(f"{name}={mod.__version__}")
        except ImportError:
            found.append(f"{name}=absent")
    return " ".join(found)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", "--rows", type=int, nargs="+", default=[10_000_000],
                    metavar="N", help="rows of each table (default 10,000,000)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the data")
    ap.add_argument("--formats", nargs="+", default=list(FORMATS), choices=FORMATS)
    ap.add_argument("--steps", nargs="+", default=list(STEPS), choices=STEPS)
    ap.add_argument("--time-limit", type=float, default=300.0,
                    help="oracle seconds per call of `oracledp fit`")
    ap.add_argument("--step-timeout", type=float, default=3600.0,
                    help="seconds before a step is killed")
    ap.add_argument("--dask-python", default=sys.executable,
                    help="interpreter of the Dask step (one with the dask extra installed)")
    ap.add_argument("--out", type=Path, default=Path("docs/results/large-tables"))
    ap.add_argument("--label", default="", help="free text saved with the results")
    ap.add_argument("--keep", action="store_true", help="keep the generated data")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="generate the data in this directory and keep it there; a file "
                         "already there for the same rows, seed and format is reused")
    ap.add_argument("--verbose", action="store_true", help="print a failed step's output")
    args = ap.parse_args()
    if min(args.sizes) < 2:
        ap.error("every size must be >= 2")
    env_start = environment()
    print(environment_line(env_start), flush=True)
    print(f"# {_versions()}", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="oracledp-large-tables-"))
    data_dir = tmp if args.data_dir is None else args.data_dir
    data_dir.mkdir(parents=True, exist_ok=True)
    results: list[Row] = []
    generation: list[dict[str, Any]] = []
    try:
        schema = tmp / "schema.json"
        write_schema(schema)
        for n in args.sizes:
            files = {fmt: data_dir / f"adult-like-{n}-seed{args.seed}.{fmt}" for fmt in FORMATS}
            for fmt in ("parquet", "csv"):  # the Parquet file generated, the CSV from it
                if fmt == "csv" and "csv" not in args.formats:
                    continue
                t0 = time.perf_counter()
                if args.data_dir is not None and files[fmt].exists():
                    generation.append({"rows": n, "format": fmt, "how": "reused",
                                       "file_mb": round(files[fmt].stat().st_size / MB, 1)})
                    print(f"{n:,} rows as {fmt}: {files[fmt]} reused", flush=True)
                    continue
                if fmt == "parquet":
                    write_table(files[fmt], n, args.seed, fmt)
                else:
                    convert(files["parquet"], files[fmt])
                sec = time.perf_counter() - t0
                size = files[fmt].stat().st_size / MB
                how = "generated" if fmt == "parquet" else "converted from the Parquet file"
                generation.append({"rows": n, "format": fmt, "how": how,
                                   "seconds": round(sec, 2), "file_mb": round(size, 1)})
                print(f"{n:,} rows as {fmt}: {size:,.1f} MB {how} in {sec:.1f}s "
                      f"({sec / n * 1e6:.2f}s per million rows)", flush=True)
            for fmt in args.formats:
                results += measure(files[fmt], schema, tmp, n, fmt, args.steps, args)
            if not args.keep and args.data_dir is None:
                for f in files.values():
                    f.unlink(missing_ok=True)
    finally:
        if args.keep:
            print(f"data kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    env_end = environment()
    met = targets(results)
    print()
    print(f"{'rows':>12} {'format':8} {'step':7} {'file MB':>8} {'seconds':>8} {'peak MB':>8}"
          "  note")
    for r in results:
        sec = "" if r.seconds is None else f"{r.seconds:.1f}"
        peak = "" if r.peak_mb is None else f"{r.peak_mb:.0f}"
        tree = "" if r.tree_mb is None else f" (tree {r.tree_mb:.0f} MB)"
        print(f"{r.rows:>12,} {r.format:8} {r.step:7} {r.file_mb:>8.1f} {sec:>8} {peak:>8}"
              f"  {r.note}{tree}")
    print()
    for t in met:
        print(f"target {t['rows']:,} rows, {t['target']}: {t['value']} -> "
              f"{'yes' if t['met'] else 'no'}")
    failed = [r for r in results if not r.ok]
    meta = {"label": args.label, "argv": sys.argv[1:], "seed": args.seed,
            "environment_start": env_start, "environment_end": env_end,
            "versions": _versions(), "generation": generation}
    write_results(args.out, meta, results, met)
    print(environment_line(env_end), flush=True)
    print(f"results: {args.out / 'results.json'}, {args.out / 'results.csv'}")
    if failed:
        sys.exit(f"{len(failed)} step(s) failed: " + ", ".join(f"{r.format}/{r.step}"
                                                                for r in failed))


if __name__ == "__main__":
    main()
