"""Wall time of the full Accuracy First logistic reproduction on KDD-99 (n = 100,000, p = 38).

Times :func:`oracledp.experiments.accuracy_first.run` from a cold start: loading and
encoding KDD-99, computing theta* (Newton), then 7 alphas x 40 trials of OutputNR
(T = 1000 levels) and of the DoublingMethod with output perturbation, writing the
records to a temporary directory (deleted afterwards; nothing is resumed).  Target:
<= 120 s on 2 cores.  Results do not depend on --n-jobs (one recorded seed per trial).

Prints a table per alpha (mean ex-post epsilon and mean seconds per trial, per method)
and, last, ``seconds=<x>`` (the whole run, data loading included).

Usage: python benchmarks/accuracy_first_kdd.py [--n-jobs 1] [--trials 40]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from oracledp.experiments import accuracy_first as exp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--trials", type=int, default=40)
    args = ap.parse_args()

    cfg = exp.Config(task="logistic", trials=args.trials, n_jobs=args.n_jobs)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        records = exp.run(cfg, Path(tmp))
        seconds = time.perf_counter() - t0
    rows = exp.summarize(cfg, records)
    nr, db = cfg.methods
    print(f"KDD-99 logistic: n={cfg.n:,}, p={cfg.p}, {len(cfg.alphas)} alphas x {cfg.trials} "
          f"trials x 2 methods = {len(records)} trials, n_jobs={cfg.n_jobs}")
    print(f"{'alpha':>7} {'NR eps':>8} {'Dbl eps':>8} {'theory':>8} {'NR s/trial':>11} "
          f"{'Dbl s/trial':>12} {'no-halt':>8}")
    for r in rows:
        no_halt = r["nr_no_halt"] + r["doubling_no_halt"]
        print(f"{r['alpha']:>7g} {r['nr_eps_mean']:>8.3f} {r['doubling_eps_mean']:>8.3f} "
              f"{r['theory_eps']:>8.3f} {r['nr_run_s_mean']:>11.3f} "
              f"{r['doubling_run_s_mean']:>12.3f} {no_halt:>8d}")
    per = {m: sum(x["run_s"] for x in records if x["method"] == m) for m in (nr, db)}
    print(f"trial time: {nr} {per[nr]:.1f} s, {db} {per[db]:.1f} s (summed over trials); "
          f"data + theta* + overhead {seconds - sum(per.values()):.1f} s (wall minus trials; "
          "negative with workers)")
    print(f"seconds={seconds:.1f}")


if __name__ == "__main__":
    main()
