"""Time to a certificate of the branch-and-bound oracle alone, per coordinate-order rule.

Used to choose ``BranchBoundOracle.order_rule`` (the order never changes the answer, only
the number of nodes): for one suite table (``benchmarks/oracle_suite.py``), OPDisc noise at
the given eps (delta = 1/n^2, the suite's) and RSPM weights at eps = 1, seeds 0..draws-1.

Usage: python benchmarks/oracle_branch.py [--table breast-cancer-30] [--eps 1.0]
       [--draws 5] [--rules product,spread,mass] [--time-limit 60] [--rspm]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

from oracledp._provenance import environment_line
from oracledp.learners._opdisc import opdisc_sigma
from oracledp.learners._rspm import rspm_perturbation, rspm_scale, rspm_space
from oracledp.oracles._branch import BranchBoundOracle
from oracledp.oracles._halfspace import HalfspaceProblem

sys.path.insert(0, str(Path(__file__).parent))
from oracle_suite import TABLES


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", default="breast-cancer-30", choices=sorted(TABLES))
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--draws", type=int, default=5)
    ap.add_argument("--rules", default="product,spread,mass")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--rspm", action="store_true", help="RSPM weights (eps) instead of OPDisc")
    args = ap.parse_args()
    print(environment_line(), flush=True)
    X, y, schema = TABLES[args.table]()
    space = rspm_space(X.shape[1]) if args.rspm else None
    p = HalfspaceProblem.from_data(X, y, space, schema=schema)
    print(f"{args.table}: n={p.n} d={p.d} groups={p.n_groups} "
          f"{'rspm' if args.rspm else 'opdisc'} eps={args.eps}", flush=True)
    for rule in args.rules.split(","):
        oracle = BranchBoundOracle(time_limit=args.time_limit)
        oracle.order_rule = rule
        times = []
        for s in range(args.draws):
            rng = np.random.default_rng(s)
            if args.rspm:
                eta = rspm_perturbation(p.space, rng.laplace(0, rspm_scale(args.eps, 2 * p.d),
                                                             2 * p.d))
            else:
                sig = opdisc_sigma(args.eps, 1 / p.n**2, p)
                eta = rng.normal(0, sig, p.d + 1)
            r = oracle.solve(p, eta)
            times.append(r.wall_time if r.certified else args.time_limit)
            print(f"  {rule:<8} draw {s}: {r.wall_time:7.2f} s certified={r.certified} "
                  f"nodes={r.info['nodes']}", flush=True)
        print(f"{rule}: median_s={statistics.median(times):.2f} max_s={max(times):.2f}",
              flush=True)


if __name__ == "__main__":
    main()
