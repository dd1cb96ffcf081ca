"""Accuracy First just above its pre-noise floor: how often ``oracledp fit --model
accuracy-first`` releases, by the number of records.

``fit`` refuses before any noise below about ``4,500 / (alpha x max-epsilon)`` records
(``oracledp._guidance.ACCURACY_FIRST_N``: the accuracy test's own epsilon plus the first level
within the cap).  Just above that floor the test takes most of the cap, the levels left are
small, and the search may spend its ex-post loss and then refuse (NoHaltError).  This script
measures where that band ends on one table: a public stand-in of a health outcome (5 columns:
age, income, region, smoker, bmi; a logistic outcome with about 14 % positives), written here
from a fixed seed, at the defaults (alpha 0.1, max-epsilon 10), for n in ``--rows`` and seeds
0..``--seeds``-1, through the CLI as a user runs it.

    python benchmarks/accuracy_first_floor.py [--rows 4600 5000 5500 6000 7000 9000]
        [--seeds 3] [--out docs/results/accuracy-first-floor]

Writes ``runs.json`` (one row per fit: n, seed, released or refused, the ex-post loss) and
prints a table.  The record is one table: where the band ends depends on the data (how
private a level can meet alpha), so the docs quote it as measured here, not as a rule.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

SCHEMA = {"target": {"name": "outcome", "labels": ["healthy", "sick"]}, "columns": [
    {"name": "age", "type": "numeric", "lower": 18, "upper": 100, "step": 1},
    {"name": "income", "type": "numeric", "lower": 0, "upper": 500000, "step": 1000},
    {"name": "region", "type": "categorical", "levels": ["east", "north", "south", "west"]},
    {"name": "smoker", "type": "categorical", "levels": ["no", "yes"]},
    {"name": "bmi", "type": "numeric", "lower": 10, "upper": 60, "step": 0.1}]}


def table(n: int, seed: int = 1) -> pd.DataFrame:
    """The stand-in table (its first ``n`` of 20,000 rows drawn from ``seed``)."""
    rng = np.random.default_rng(seed)
    m = 20_000
    age = rng.integers(18, 90, m)
    income = np.round(rng.lognormal(10, 0.8, m), -2).clip(0, 500_000)
    region = rng.choice(["north", "south", "east", "west"], m, p=[.4, .3, .2, .1])
    smoker = rng.choice(["no", "yes"], m, p=[.75, .25])
    bmi = np.round(rng.normal(26, 4, m), 1).clip(12, 60)
    logit = (-3 + 0.03 * (age - 50) + 0.8 * (smoker == "yes") + 0.1 * (bmi - 26)
             + 0.3 * (region == "south"))
    y = np.where(rng.random(m) < 1 / (1 + np.exp(-logit)), "sick", "healthy")
    df = pd.DataFrame({"age": age, "income": income, "region": region, "smoker": smoker,
                       "bmi": bmi, "outcome": y})
    return df.iloc[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[4600, 5000, 5500, 6000, 7000, 9000])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path("docs/results/accuracy-first-floor"))
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.out / "work"
    work.mkdir(exist_ok=True)
    (work / "schema.json").write_text(json.dumps(SCHEMA))
    oracledp = str(Path(sys.executable).with_name("oracledp"))
    runs = []
    t0 = time.perf_counter()
    for n in args.rows:
        data = work / f"t{n}.csv"
        table(n).to_csv(data, index=False)
        for seed in range(args.seeds):
            res = subprocess.run([oracledp, "fit", str(data), "--schema",
                                  str(work / "schema.json"), "--model", "accuracy-first",
                                  "--seed", str(seed), "--out", str(work / "m"), "--force"],
                                 capture_output=True, text=True, env={"COLUMNS": "200",
                                                                      "PATH": ""})
            said = " ".join((res.stdout + res.stderr).split())
            loss = re.search(r"ex-post loss ([0-9.]+)", said)
            row = {"n": n, "seed": seed, "released": res.returncode == 0,
                   "ex_post_epsilon": float(loss.group(1)) if loss else None,
                   "refusal": None if res.returncode == 0 else (
                       "no level passed (charged)" if "did not halt" in said
                       else "before noise" if "before any noise" in said
                       or "below the smallest ex-post loss" in said else said[:120])}
            runs.append(row)
            print(f"n {n:>6,} seed {seed}: "
                  + (f"released, ex-post {row['ex_post_epsilon']:.3f}" if row["released"]
                     else f"refused ({row['refusal']})"), flush=True)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "python": platform.python_version(), "cpu": platform.processor() or platform.machine(),
            "seconds": round(time.perf_counter() - t0, 1), "alpha": 0.1, "max_epsilon": 10,
            "floor": "4,500 / (alpha x max-epsilon) = 4,500"}
    (args.out / "runs.json").write_text(json.dumps({"meta": meta, "runs": runs}, indent=1))
    for p in work.glob("t*.csv"):
        p.unlink()
    print("\n| n | n / floor | released | ex-post loss (released) |\n|---|---|---|---|")
    for n in args.rows:
        rows = [r for r in runs if r["n"] == n]
        losses = [r["ex_post_epsilon"] for r in rows if r["released"]]
        shown = f"{min(losses):.2f}-{max(losses):.2f}" if losses else "-"
        print(f"| {n:,} | {n / 4500:.2f} | {len(losses)} of {len(rows)} | {shown} |")


if __name__ == "__main__":
    main()
