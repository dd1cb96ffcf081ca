"""Peak memory and wall time of ``oracledp fit --model rspm`` on a large Adult-like CSV.

A thin front of :mod:`large_tables` (the one large-data benchmark, which also measures
Parquet, ``schema check`` against DuckDB, ``synth fit`` and the Dask engine): it writes
``--rows`` records of the same Adult-like table as one CSV (DuckDB SQL from ``range(n)``,
``large_tables.write_table``) with its public schema JSON to a temporary directory, runs
``oracledp fit DATA --schema SCHEMA --model rspm --epsilon 1 --seed 0`` in a subprocess and
prints its wall time and its own peak resident memory (``large_tables.run_measured``), with
the date, the package versions and the machine's load before and after the fit, and the number
of distinct encoded rows (counted after the measured run).  The temporary directory is
deleted at the end.

Targets at 10 million rows: peak < 2 GB and < 5 minutes on 2 cores.  The last line reads
``rows=<n> file_mb=<x> groups=<g> peak_mb=<y> seconds=<z> targets_met=<yes|no>``.

With ``--synth METHOD`` it times ``oracledp synth fit --method METHOD`` on the same file
instead.  (Before issue 39 this table was drawn with numpy, chunk by chunk, to the same
design: the figures in docs/results/large-csv/ are of that earlier table.)

Usage: python benchmarks/large_csv.py [--rows 10000000] [--seed 0] [--model rspm]
       [--epsilon 1] [--time-limit 300] [--synth oracle-query-pgm]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

# SCHEMA and adult_like_chunk are re-exported: tests import them from here
from large_tables import (
    SCHEMA,
    adult_like_chunk,
    cli,
    run_measured,
    write_schema,
    write_table,
)
from oracledp._provenance import environment_line
from oracledp.tabular import TableSchema, read_aggregated

__all__ = ["SCHEMA", "adult_like_chunk", "main"]

PEAK_TARGET_MB = 2048
SECONDS_TARGET = 300


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
        write_schema(schema)
        t0 = time.perf_counter()
        write_table(data, args.rows, args.seed, "csv")
        file_mb = data.stat().st_size / 2**20
        print(f"wrote {args.rows:,} rows ({file_mb:,.1f} MB) in "
              f"{time.perf_counter() - t0:.1f}s", flush=True)

        def fit(schema_path: Path):  # type: ignore[no-untyped-def]
            if args.synth:  # private synthetic data from the same file
                cmd = cli("synth", "fit", str(data), "--schema", str(schema_path), "--method",
                          args.synth, "--epsilon", f"{args.epsilon:g}", "--seed", "0",
                          "--force", "--out", str(tmpdir / "synth-model"))
            else:
                cmd = cli("fit", str(data), "--schema", str(schema_path), "--model", args.model,
                          "--epsilon", f"{args.epsilon:g}", "--seed", "0", "--time-limit",
                          f"{args.time_limit:g}", "--force", "--out", str(tmpdir / "model"))
            return run_measured(cmd)

        run = fit(schema)
        load_after = environment_line()
        if run.returncode != 0:
            print(run.stdout[-3000:], run.stderr[-3000:], sep="\n", file=sys.stderr)
            sys.exit(f"oracledp fit exited with code {run.returncode}")
        # what the memory grows with (counted here, after the measured run)
        groups = read_aggregated(data, TableSchema.load(schema)).n_groups
        if args.compare_intercept:
            no_icpt = tmpdir / "schema-nointercept.json"
            write_schema(no_icpt, {**SCHEMA, "intercept": False})
            times: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(args.compare_intercept):
                for icpt in (False, True):
                    r = fit(schema if icpt else no_icpt)
                    if r.returncode != 0:
                        sys.exit(f"oracledp fit exited with code {r.returncode}")
                    times[icpt].append(r.seconds)
            print(f"intercept feature: with {min(times[True]):.1f}-{max(times[True]):.1f}s, "
                  f"without {min(times[False]):.1f}-{max(times[False]):.1f}s; ratio of the "
                  f"medians {np.median(times[True]) / np.median(times[False]):.2f}x", flush=True)
    for line in run.stdout.splitlines():
        if line.strip().startswith(("guarantee:", "│ records", "│ privacy")):
            print(" ", line.strip(" │"))
    what = f"synth fit --method {args.synth}" if args.synth else f"fit --model {args.model}"
    print(f"oracledp {what}: {run.seconds:.1f}s wall, peak RSS {run.peak_mb:,.0f} MB; "
          f"{groups:,} distinct encoded rows")
    print(load_after, flush=True)
    met = run.peak_mb < PEAK_TARGET_MB and run.seconds < SECONDS_TARGET
    print(f"rows={args.rows} file_mb={file_mb:.1f} groups={groups} peak_mb={run.peak_mb:.0f} "
          f"seconds={run.seconds:.1f} targets_met={'yes' if met else 'no'}")


if __name__ == "__main__":
    main()
