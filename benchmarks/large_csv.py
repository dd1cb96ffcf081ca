"""Peak memory and wall time of ``oracledp fit --model rspm`` on a large Adult-like CSV.

Writes (deterministically, chunk by chunk, never holding the table) ``--rows`` records of an
Adult-like table to a temporary directory: three numeric columns on public integer grids
(age, education-num, hours-per-week), one numeric column encoded by public bins
(capital-gain), four categorical columns (marital-status, relationship, race, sex) and a
binary label (income) drawn from a logistic model of the features; with its public schema
JSON (as ``oracledp schema`` / docs/your-own-data.md describe).  Then runs
``oracledp fit DATA --schema SCHEMA --model rspm --epsilon 1 --seed 0`` in a subprocess and
prints its wall time and peak resident memory (``getrusage(RUSAGE_CHILDREN).ru_maxrss``),
with the date, the package versions and the machine's load before and after the fit, and the
number of distinct encoded rows (what the memory of the aggregated fit grows with; counted
after the measured run).  The temporary directory (CSV, schema, model) is deleted at the end.

Targets at 10 million rows: peak < 2 GB and < 5 minutes on 2 cores.  The last line reads
``rows=<n> file_mb=<x> groups=<g> peak_mb=<y> seconds=<z> targets_met=<yes|no>``.

With ``--synth METHOD`` it times ``oracledp synth fit --method METHOD`` on the same file
instead (private synthetic data: one chunked counting pass, then the fit on the counts).

Usage: python benchmarks/large_csv.py [--rows 10000000] [--seed 0] [--model rspm]
       [--epsilon 1] [--time-limit 300] [--synth oracle-query-pgm]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from oracledp._provenance import environment_line
from oracledp.tabular import TableSchema, read_aggregated

GEN_CHUNK = 500_000  # rows generated per chunk (part of the definition of the data: fixed)
PEAK_TARGET_MB = 2048
SECONDS_TARGET = 300

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


def _pick(rng: np.random.Generator, p: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """One draw per entry of ``rows`` from the categorical distribution p[rows[i]]."""
    cdf = np.cumsum(p, axis=1)
    cdf[:, -1] = 1.0
    u = rng.random(len(rows))
    return (u[:, None] > cdf[rows]).sum(axis=1)


def adult_like_chunk(seed: int, index: int, n: int) -> pd.DataFrame:
    """Chunk ``index`` (``n`` rows) of the table: a function of (seed, index, n) only."""
    rng = np.random.default_rng([seed, index])
    male = (rng.random(n) < 0.67).astype(np.intp)
    rel = _pick(rng, _REL_P, male)
    mar = _pick(rng, _MAR_P, rel)
    race = rng.choice(len(RACE), n, p=_RACE_P)
    child = rel == RELATIONSHIP.index("Own-child")
    age = np.where(child, 17 + rng.gamma(1.5, 4.0, n), 17 + rng.gamma(2.5, 8.6, n))
    age = np.clip(np.rint(age), 17, 90).astype(np.int64)
    edu = rng.choice(np.arange(1, 17), n, p=_EDU_P / _EDU_P.sum())
    hours = np.clip(rng.normal(40, 12, n), 1, 99)  # reported as round numbers mostly:
    hours = np.where(rng.random(n) < 0.7, 5 * np.rint(hours / 5), np.rint(hours))  # as in Adult
    hours = np.clip(np.where(rng.random(n) < 0.38, 40, hours), 1, 99)
    gain = np.where(rng.random(n) < 0.92, 0,
                    np.clip(np.rint(rng.lognormal(8.5, 1.0, n)), 1, 99999)).astype(np.int64)
    married = np.isin(mar, [MARITAL.index("Married-civ-spouse"),
                            MARITAL.index("Married-AF-spouse")])
    z = (-8.6 + 0.03 * age + 0.33 * edu + 0.035 * hours + 2.0 * married + 0.3 * male
         + 1.5 * (gain >= 7000))
    income = (rng.random(n) < 1.0 / (1.0 + np.exp(-z))).astype(np.intp)
    return pd.DataFrame({
        "age": age, "education-num": edu, "hours-per-week": hours.astype(np.int64),
        "capital-gain": gain, "marital-status": np.array(MARITAL)[mar],
        "relationship": np.array(RELATIONSHIP)[rel], "race": np.array(RACE)[race],
        "sex": np.array(SEX)[male], "income": np.array(LABELS)[income],
    })


def write_csv(path: Path, rows: int, seed: int) -> None:
    """The CSV, written chunk by chunk (memory: one chunk)."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        for index, start in enumerate(range(0, rows, GEN_CHUNK)):
            chunk = adult_like_chunk(seed, index, min(GEN_CHUNK, rows - start))
            chunk.to_csv(fh, header=index == 0, index=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default="rspm", choices=("rspm", "opdisc"))
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--synth", default=None, metavar="METHOD",
                    help="time `oracledp synth fit --method METHOD` (e.g. oracle-query-pgm) "
                         "instead of `oracledp fit --model`")
    ap.add_argument("--time-limit", type=float, default=300.0, help="seconds per oracle call")
    ap.add_argument("--compare-intercept", type=int, default=0, metavar="N",
                    help="after the measured run, fit N times each without and with the "
                         "schema's intercept feature, alternating, and print the time ratio")
    args = ap.parse_args()
    if args.rows < 2:
        ap.error("--rows must be >= 2")
    print(environment_line(), flush=True)
    with tempfile.TemporaryDirectory(prefix="oracledp-large-csv-") as tmp:
        tmpdir = Path(tmp)
        data, schema = tmpdir / "adult-like.csv", tmpdir / "schema.json"
        TableSchema.from_dict(SCHEMA).save(schema)
        t0 = time.perf_counter()
        write_csv(data, args.rows, args.seed)
        file_mb = data.stat().st_size / 2**20
        print(f"wrote {args.rows:,} rows ({file_mb:,.1f} MB) in "
              f"{time.perf_counter() - t0:.1f}s", flush=True)
        def fit(schema_path: Path) -> tuple[subprocess.CompletedProcess[str], float]:
            if args.synth:  # private synthetic data from the same file
                cmd = [sys.executable, "-m", "oracledp._cli", "synth", "fit", str(data),
                       "--schema", str(schema_path), "--method", args.synth, "--epsilon",
                       f"{args.epsilon:g}", "--seed", "0", "--force",
                       "--out", str(tmpdir / "synth-model")]
            else:
                cmd = [sys.executable, "-m", "oracledp._cli", "fit", str(data), "--schema",
                       str(schema_path), "--model", args.model, "--epsilon",
                       f"{args.epsilon:g}", "--seed", "0", "--time-limit",
                       f"{args.time_limit:g}", "--force", "--out", str(tmpdir / "model")]
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False,
                                  env={**os.environ, "COLUMNS": "120"})
            return proc, time.perf_counter() - t0

        proc, seconds = fit(schema)
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # kB on Linux
        load_after = environment_line()
        if proc.returncode != 0:
            print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n", file=sys.stderr)
            sys.exit(f"oracledp fit exited with code {proc.returncode}")
        # what the memory grows with (counted here, after the measured run; not by the CLI,
        # which does not print this data-dependent number)
        groups = read_aggregated(data, TableSchema.load(schema)).n_groups
        if args.compare_intercept:
            no_icpt = tmpdir / "schema-nointercept.json"
            TableSchema.from_dict({**SCHEMA, "intercept": False}).save(no_icpt)
            times: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(args.compare_intercept):
                for icpt in (False, True):
                    p, t = fit(schema if icpt else no_icpt)
                    if p.returncode != 0:
                        sys.exit(f"oracledp fit exited with code {p.returncode}")
                    times[icpt].append(t)
            print(f"intercept feature: with {min(times[True]):.1f}-{max(times[True]):.1f}s, "
                  f"without {min(times[False]):.1f}-{max(times[False]):.1f}s; ratio of the "
                  f"medians {np.median(times[True]) / np.median(times[False]):.2f}x", flush=True)
    for line in proc.stdout.splitlines():
        if line.strip().startswith(("guarantee:", "│ records", "│ privacy")):
            print(" ", line.strip(" │"))
    what = f"synth fit --method {args.synth}" if args.synth else f"fit --model {args.model}"
    print(f"oracledp {what}: {seconds:.1f}s wall, peak RSS {peak_mb:,.0f} MB; "
          f"{groups:,} distinct encoded rows")
    print(load_after, flush=True)
    met = peak_mb < PEAK_TARGET_MB and seconds < SECONDS_TARGET
    print(f"rows={args.rows} file_mb={file_mb:.1f} groups={groups} peak_mb={peak_mb:.0f} "
          f"seconds={seconds:.1f} targets_met={'yes' if met else 'no'}")


if __name__ == "__main__":
    main()
