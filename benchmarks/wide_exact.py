"""The exact learners on a 135-feature table with default options (issue 40, item 2).

The table is the stand-in of ``benchmarks/synth_wide.py`` (83 ordinal 0-9 columns, nominal
columns of 41 and 10 levels, binary target; 135 encoded features): ``--rows`` rows with seed 0
to fit, as many with seed 1 to test.  Each model runs with the defaults of ``make_estimator``
(as ``oracledp fit`` runs it): the default deterministic oracle work limit, no time limit,
``space="auto"``.  For each model, eps and seed it records whether the fit released or
refused, the wall and CPU seconds, W, and the test accuracy, beside the majority rate.

Usage: PYTHONPATH=src python benchmarks/wide_exact.py [--rows 4075] [--eps 1,2] [--seeds 3]
       [--models opdisc,rspm,dpsgd] [--out docs/results/wide-exact]
Writes OUT/results.json and OUT/results.csv and prints a table.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from oracledp import make_estimator
from oracledp._errors import OracleFailure
from oracledp._provenance import environment, environment_line
from oracledp.tabular import TableSchema, read_aggregated

sys.path.insert(0, str(Path(__file__).parent))
import synth_wide


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=4075)
    ap.add_argument("--eps", default="1,2")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--models", default="opdisc,rspm,dpsgd")
    ap.add_argument("--out", type=Path, default=Path("docs/results/wide-exact"))
    args = ap.parse_args()
    print(environment_line(), flush=True)
    schema = TableSchema.from_dict(synth_wide.schema())
    X, y, counts = read_aggregated(synth_wide.table(args.rows, 0), schema).weighted_rows()
    test = synth_wide.table(args.rows, 1)
    Xt, yt = schema.encode(test), schema.labels_of(test)
    majority = max(float(np.mean(yt == lab)) for lab in schema.labels)
    print(f"train {args.rows} rows, {X.shape[1]} features, {len(X)} weighted rows; "
          f"test majority {majority:.3f}", flush=True)
    rows = []
    for model in args.models.split(","):
        for eps in (float(e) for e in args.eps.split(",")):
            for seed in range(args.seeds):
                est = make_estimator(model, schema, epsilon=eps, random_state=seed)
                t0, c0 = time.perf_counter(), time.process_time()
                try:
                    est.fit(X, y, sample_weight=counts)
                    outcome, acc = "released", float(np.mean(est.predict(Xt) == yt))
                except OracleFailure:
                    outcome, acc = "refused", None
                space = getattr(est, "space_", None)
                rows.append({"model": model, "eps": eps, "seed": seed, "outcome": outcome,
                             "test_accuracy": acc, "seconds": round(time.perf_counter() - t0, 2),
                             "cpu_s": round(time.process_time() - c0, 2),
                             "W": None if space is None else
                             f"||k||^2 <= {space.k_norm2_max}, |k_j| <= {space.k_max}"})
                r = rows[-1]
                print(f"  {model:<7} eps={eps:g} seed {seed}: {outcome:<8} acc="
                      f"{'-' if acc is None else f'{acc:.3f}'} {r['seconds']:7.1f} s "
                      f"(cpu {r['cpu_s']:6.1f} s) {r['W'] or ''}", flush=True)
    print(f"\nmodel    eps  released  median_acc  median_s  median_cpu_s   (majority "
          f"{majority:.3f})")
    for model in args.models.split(","):
        for eps in (float(e) for e in args.eps.split(",")):
            rs = [r for r in rows if r["model"] == model and r["eps"] == eps]
            accs = [r["test_accuracy"] for r in rs if r["test_accuracy"] is not None]
            rel = sum(r["outcome"] == "released" for r in rs)
            print(f"{model:<8} {eps:<4g} {rel}/{len(rs):<7} "
                  f"{statistics.median(accs) if accs else float('nan'):10.3f} "
                  f"{statistics.median(r['seconds'] for r in rs):9.1f} "
                  f"{statistics.median(r['cpu_s'] for r in rs):13.1f}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(
        {"rows": rows, "majority": majority, "config": vars(args) | {"out": str(args.out)},
         "environment": environment()}, indent=2, default=str))
    with open(args.out / "results.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
