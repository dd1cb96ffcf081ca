"""What the exact oracles' default work limits mean in seconds on this machine (issue 40).

The default limit of the exact learners is deterministic work (``DEFAULT_WORK_LIMIT`` of
:mod:`oracledp.oracles._structured`: LP relaxations + MIP solves + nodes; of
:mod:`oracledp.oracles._branch`: nodes), sized to about a minute of a quiet 2-core machine.
This script solves, without any limit:

* the structured decomposition on Adult (OPDisc noise, eps 1 and 2, ``--draws`` draws each,
  the default workers, one oracle per eps as in a fit);
* the branch-and-bound on the 135-feature stand-in of ``benchmarks/synth_wide.py`` (OPDisc's
  auto W there, ||k||^2 <= 2; eps 1 and 2);

and prints, per formulation, the work done, the wall and CPU seconds, the rate (work per wall
second) and the wall seconds the default limit stands for at that rate.  Writes
``OUT/work_rate.json``.  Rates fall with machine load: read them with the load printed.

Usage: PYTHONPATH=src python benchmarks/work_rate.py [--draws 3] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from oracledp._provenance import environment, environment_line
from oracledp.datasets import load_adult
from oracledp.learners._opdisc import opdisc_sigma
from oracledp.oracles import HalfspaceProblem, make_oracle
from oracledp.oracles._branch import DEFAULT_WORK_LIMIT as BRANCH_WORK
from oracledp.oracles._structured import DEFAULT_WORK_LIMIT as STRUCTURED_WORK


def _wide_problem() -> HalfspaceProblem:
    """The 135-feature stand-in with OPDisc's auto W (the rule reads the 0/1 columns)."""
    sys.path.insert(0, str(Path(__file__).parent))
    import synth_wide
    from oracledp.estimators._space_spec import parameter_space
    from oracledp.tabular import TableSchema, read_aggregated

    schema = TableSchema.from_dict(synth_wide.schema())
    X, y, counts = read_aggregated(synth_wide.table(4075, 0), schema).weighted_rows()
    fs = schema.feature_schema()
    n_num = int((~np.asarray(fs.binary_mask, dtype=bool)).sum())
    space = parameter_space("auto", X.shape[1], n_numeric=n_num)
    yy = np.where(np.asarray(y) == schema.labels[1], 1, -1)
    return HalfspaceProblem.from_data(np.repeat(X, counts, axis=0), np.repeat(yy, counts),
                                      space, schema=fs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = ap.parse_args()
    print(environment_line(), flush=True)
    rng = np.random.default_rng(args.seed)
    data = load_adult()
    adult = HalfspaceProblem.from_data(np.asarray(data.X), np.asarray(data.y),
                                       schema=data.feature_schema)
    cases = [("structured", "adult", adult, STRUCTURED_WORK), ("branch", "wide-135",
                                                                _wide_problem(), BRANCH_WORK)]
    records = []
    for form, name, problem, _ in cases:
        delta = 1.0 / problem.n**2
        for eps in (1.0, 2.0):
            oracle = make_oracle("highs", formulation=form, time_limit=float("inf"))
            sigma = opdisc_sigma(eps, delta, problem)
            for i in range(args.draws):
                eta = rng.normal(0.0, sigma, size=problem.d + 1)
                t0, c0 = time.perf_counter(), time.process_time()
                res = oracle.solve(problem, eta)
                rec = {"formulation": form, "table": name, "eps": eps, "draw": i,
                       "work": int(res.info.get("work", 0)), "certified": bool(res.certified),
                       "seconds": time.perf_counter() - t0, "cpu_s": time.process_time() - c0}
                records.append(rec)
                print(f"  {form:<10} {name:<9} eps={eps:g} draw {i}: work {rec['work']:>7} "
                      f"{rec['seconds']:6.2f} s (cpu {rec['cpu_s']:6.2f} s) "
                      f"certified={rec['certified']}", flush=True)
    print("\nformulation  work   wall_s   cpu_s  work/wall_s  default  default_as_wall_s")
    summary = []
    for form, name, _, default in cases:
        rs = [r for r in records if r["formulation"] == form]
        work = sum(r["work"] for r in rs)
        wall = sum(r["seconds"] for r in rs)
        cpu = sum(r["cpu_s"] for r in rs)
        rate = work / wall if wall else float("nan")
        summary.append({"formulation": form, "table": name, "work": work, "wall_s": wall,
                        "cpu_s": cpu, "rate": rate, "default": default,
                        "default_as_wall_s": default / rate if rate else float("nan")})
        print(f"{form:<12} {work:>6} {wall:8.1f} {cpu:7.1f} {rate:12.1f} {default:>8} "
              f"{default / rate:18.1f}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "work_rate.json").write_text(json.dumps(
        {"records": records, "summary": summary, "config": vars(args) | {"out": str(args.out)},
         "environment": environment()}, indent=2, default=str))


if __name__ == "__main__":
    main()
