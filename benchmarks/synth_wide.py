"""A wide table through every synthesizer of ``oracledp synth`` (issue 38, item 4).

Generates the shape of the table a user reported: 4,075 rows, 83 ordinal columns with codes
0-9 (declared numeric, 0-9 step 1: one bin per code; each column depends on its left
neighbour), one nominal column of 41 levels, one of 10, and a binary target (86 attributes).
Runs ``oracledp synth fit`` (epsilon 1 by default) then ``oracledp synth sample`` (as many
rows as the table) through the command line for every method, each in a fresh process with a
timeout, and prints one line per method: the outcome (model, refused with its ``error:``
line, traceback, timeout), the fit and sample seconds and the peak RSS of each process.

    PYTHONPATH=src python benchmarks/synth_wide.py [--rows 4075] [--epsilon 1] [--seed 0]
        [--methods oracle-query-pgm,mst,aim,mwem,independent] [--timeout 300] [--spread 1]
        [--out DIR]

Writes DIR/results.json (and the table, schema, models and samples under DIR).  The seconds
are wall-clock on whatever machine runs it (the issue's target: 120 s, 2 GB on 2 cores).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

METHODS = ("oracle-query-pgm", "mst", "aim", "mwem", "independent")
N_ORDINAL = 83


def schema(spread: int = 1) -> dict[str, Any]:
    """The public schema: 83 numeric 0-9 step 1 (0 to 10 spread - 1 with ``--spread``), two
    categorical (41, 10 levels), target."""
    cols: list[dict[str, Any]] = [{"name": f"q{i:02d}", "type": "numeric", "lower": 0,
                                   "upper": 10 * spread - 1, "step": 1}
                                  for i in range(N_ORDINAL)]
    cols.append({"name": "region", "type": "categorical",
                 "levels": [f"r{j:02d}" for j in range(41)]})
    cols.append({"name": "sector", "type": "categorical",
                 "levels": [f"s{j}" for j in range(10)]})
    return {"target": {"name": "y", "labels": ["no", "yes"]}, "columns": cols}


def table(n: int, seed: int = 0, spread: int = 1) -> pd.DataFrame:
    """n seeded rows: each ordinal column is its left neighbour plus -1/0/+1 (clipped to 0-9)
    with probability 0.7, uniform otherwise; region and sector skewed; y from q00 and sector.
    ``spread`` > 1: each code c becomes a value in c spread .. c spread + spread - 1 (uniform),
    so the columns have more grid points than coarse bins (fine histograms, and the default's
    model bins)."""
    rng = np.random.default_rng(seed)
    q = np.empty((n, N_ORDINAL), dtype=np.int64)
    q[:, 0] = rng.binomial(9, 0.4, n)
    for i in range(1, N_ORDINAL):
        step = np.clip(q[:, i - 1] + rng.integers(-1, 2, n), 0, 9)
        q[:, i] = np.where(rng.random(n) < 0.7, step, rng.integers(0, 10, n))
    pr = 1.0 / np.arange(1, 42)
    region = rng.choice(41, n, p=pr / pr.sum())
    sector = (region + rng.integers(0, 3, n)) % 10
    logit = 0.4 * (q[:, 0] - 4) + 0.3 * (sector < 3) - 0.5
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
    if spread > 1:
        q = q * spread + np.random.default_rng(seed + 1).integers(0, spread, q.shape)
    df = pd.DataFrame(q, columns=[f"q{i:02d}" for i in range(N_ORDINAL)])
    df["region"] = [f"r{j:02d}" for j in region]
    df["sector"] = [f"s{j}" for j in sector]
    df["y"] = y
    return df


def _run(cmd: list[str], timeout: float) -> dict[str, Any]:
    """Run ``cmd`` in a new process group: exit code, seconds, peak RSS (MB), stderr tail."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err,
                                start_new_session=True)
        timed_out = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                timed_out = True
                break
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    return {"rc": proc.returncode, "seconds": round(time.monotonic() - start, 2),
            "rss_mb": round(usage.ru_maxrss / 1024.0, 1), "timed_out": timed_out,
            "stderr": stderr}


def _outcome(r: dict[str, Any]) -> tuple[str, str]:
    lines = [ln for ln in r["stderr"].splitlines() if ln.strip()]
    if r["timed_out"]:
        return "timeout", ""
    if "Traceback" in r["stderr"]:
        return "traceback", lines[-1] if lines else ""
    if r["rc"] == 0:
        return "ok", ""
    errors = [ln for ln in lines if ln.startswith("error:")]
    if r["rc"] == 2 and len(errors) == 1:
        return "refused", errors[0]
    return f"exit {r['rc']}", lines[-1] if lines else ""


def run_method(method: str, out: Path, rows: int, epsilon: float, seed: int,
               timeout: float) -> dict[str, Any]:
    cli = [sys.executable, "-m", "oracledp", "synth"]
    model = out / f"model-{method}"
    fit = _run([*cli, "fit", str(out / "real.csv"), "--schema", str(out / "schema.json"),
                "--epsilon", str(epsilon), "--method", method, "--seed", str(seed),
                "--out", str(model), "--force"], timeout)
    res: dict[str, Any] = {"method": method, "fit_seconds": fit["seconds"],
                           "fit_rss_mb": fit["rss_mb"]}
    res["fit"], res["fit_message"] = _outcome(fit)
    res["outcome"] = {"ok": "model"}.get(res["fit"], res["fit"])
    if res["fit"] != "ok":
        res["message"] = res["fit_message"]
        return res
    synthetic = out / f"synthetic-{method}.csv"
    synthetic.unlink(missing_ok=True)
    smp = _run([*cli, "sample", str(model), "--rows", str(rows), "--seed", str(seed + 1),
                "--out", str(synthetic)], timeout)
    res["sample_seconds"], res["sample_rss_mb"] = smp["seconds"], smp["rss_mb"]
    res["sample"], res["sample_message"] = _outcome(smp)
    written = None
    if synthetic.exists():
        with open(synthetic, encoding="utf-8") as fh:
            written = max(0, sum(1 for _ in csv.reader(fh)) - 1)
    res["sample_rows_written"] = written
    if res["sample"] != "ok" or written != rows:
        res["outcome"] = f"model, sample {res['sample']}"
        res["message"] = res["sample_message"] + (
            "" if written is None else f" [{out.name}/{synthetic.name}: {written} rows left]")
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=4075)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per command")
    ap.add_argument("--spread", type=int, default=1,
                    help="declare the ordinal columns 0 to 10 spread - 1 and spread their "
                         "values (default 1: codes 0-9)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="synth-wide-"))
    out.mkdir(parents=True, exist_ok=True)
    table(args.rows, args.seed, args.spread).to_csv(out / "real.csv", index=False)
    (out / "schema.json").write_text(json.dumps(schema(args.spread)))
    print(f"{args.rows} rows, {N_ORDINAL + 3} columns, epsilon {args.epsilon}, seed "
          f"{args.seed}, timeout {args.timeout:g} s per command ({out})")
    print(f"{'method':<18}{'outcome':<26}{'fit s':>8}{'sample s':>10}{'fit MB':>8}"
          f"{'sample MB':>11}")
    results = []
    for method in [m.strip() for m in args.methods.split(",") if m.strip()]:
        r = run_method(method, out, args.rows, args.epsilon, args.seed, args.timeout)
        results.append(r)
        print(f"{method:<18}{r['outcome']:<26}{r['fit_seconds']:>8.1f}"
              f"{r.get('sample_seconds', float('nan')):>10.1f}{r['fit_rss_mb']:>8.0f}"
              f"{r.get('sample_rss_mb', float('nan')):>11.0f}", flush=True)
        if r.get("message"):
            print(f"    {r['message'][:300]}", flush=True)
    (out / "results.json").write_text(json.dumps(
        {"rows": args.rows, "epsilon": args.epsilon, "seed": args.seed,
         "timeout": args.timeout, "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
