"""The two samplers of a released model, side by side, at the data's own resolution.

For each bundled table, epsilon and seed: one fit of a method through ``TableSynthesizer``
(``random_state=seed``), then as many records as the real table sampled twice from the same
release, once with ``sampler="rounded"`` (the default) and once with ``sampler="iid"`` (both
with ``random_state=seed + 1000``), each scored by ``evaluate_synthetic`` as
``benchmarks/synth_native.py`` scores its runs (native 2-way TV: numeric columns cut at the real
table's octiles; the worst numeric column's 1-way TV there).  The fit is the same for both, so
the difference is the sampler's alone.  Tuning seeds (100 on) by default, never the benchmark's.

Writes ``OUT/runs.json`` (every run, the machine, versions) and ``OUT/summary.csv`` and prints a
table.  The evaluation reads the real table: these numbers are NOT differentially private.

    PYTHONPATH=src nice -n 5 python benchmarks/synth_sampler.py --tables health_insurance \\
        doctor_visits --epsilons 0.5 1 2 --seeds 3
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _synth_grid as g

SAMPLERS = ("rounded", "iid")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", nargs="+", default=["health_insurance", "doctor_visits"],
                    choices=g.TABLES)
    ap.add_argument("--method", default="oracle-query-pgm", choices=g.METHODS)
    ap.add_argument("--epsilons", nargs="+", type=float, default=[0.5, 1.0, 2.0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=100)
    ap.add_argument("--out", type=Path, default=Path("docs/results/synth-sampler"))
    ap.add_argument("--quick", action="store_true", help="titanic, epsilon 1, one seed")
    args = ap.parse_args(argv)
    if args.quick:
        args.tables, args.epsilons, args.seeds = ["titanic"], [1.0], 1
    from oracledp.datasets import table_csv, table_schema
    from oracledp.synth import TableSynthesizer
    from oracledp.tabular import TableSchema

    meta = {"start": g.machine(), "versions": g.versions(), "method": args.method,
            "not_private": "the evaluation reads the real table; these numbers are not DP"}
    runs: list[dict[str, Any]] = []
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"{'table':16} {'eps':>5} {'seed':>4} {'fit s':>6}  native 2-way TV: "
          + "  ".join(f"{s:>8}" for s in SAMPLERS), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for table in args.tables:
            path = table_csv(table, Path(tmp) / f"{table}.csv", split="all")
            schema = TableSchema.from_dict(table_schema(table))
            real = pd.read_csv(path, dtype=str, keep_default_na=False)
            for eps in args.epsilons:
                for seed in range(args.first_seed, args.first_seed + args.seeds):
                    t0 = time.perf_counter()
                    syn = TableSynthesizer(args.method, epsilon=eps, random_state=seed).fit(
                        path, schema)
                    rec: dict[str, Any] = {"table": table, "eps": eps, "seed": seed,
                                           "fit_seconds": time.perf_counter() - t0}
                    for s in SAMPLERS:
                        fake = syn.sample(len(real), random_state=seed + 1000, sampler=s)
                        score, _ = g.score(fake, real, schema, seed, False)
                        rec[s] = {k: score[k] for k in ("native_2way_tv",
                                                        "native_max_numeric_1way_tv",
                                                        "bins_2way_tv")}
                    runs.append(rec)
                    print(f"{table:16} {eps:5g} {seed:4d} {rec['fit_seconds']:6.1f}  "
                          f"{'':16}" + "  ".join(f"{rec[s]['native_2way_tv']:8.4f}"
                                                 for s in SAMPLERS), flush=True)
                    meta["end"] = g.machine()
                    (args.out / "runs.json").write_text(json.dumps(
                        {"meta": meta, "runs": runs}, indent=1) + "\n")
    rows = []
    for table in args.tables:
        for eps in args.epsilons:
            rs = [r for r in runs if r["table"] == table and r["eps"] == eps]
            row = {"table": table, "eps": eps, "seeds": len(rs)}
            for s in SAMPLERS:
                for k in ("native_2way_tv", "native_max_numeric_1way_tv"):
                    vals = [r[s][k] for r in rs if not np.isnan(r[s][k])]
                    row[f"{s}_{k}"] = round(float(np.mean(vals)), 5) if vals else float("nan")
            rows.append(row)
    with (args.out / "summary.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print("\nmean over seeds: native 2-way TV (rounded / iid), worst numeric 1-way TV at the "
          "octiles (rounded / iid)")
    for r in rows:
        print(f"{r['table']:16} {r['eps']:5g}  {r['rounded_native_2way_tv']:.4f} / "
              f"{r['iid_native_2way_tv']:.4f}   {r['rounded_native_max_numeric_1way_tv']:.4f}"
              f" / {r['iid_native_max_numeric_1way_tv']:.4f}")
    print(f"started {meta['start']}; ended {meta['end']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
