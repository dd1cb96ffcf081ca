"""Time to a certified optimum of the OPDisc oracle on Adult (ICML 2020 setting).

Structured decomposition (default ``highs`` oracle) over 5 noise draws at each eps in
{0.1, 0.5, 1, 2} and 5 cold no-noise solves (eps = none), against the monolithic
big-M MIP with the same solver (HiGHS) in the same run on the first 3 eps = 1 draws
(60 s limit; a run that hits the limit counts as 60 s).  delta = 1/n^2, sigma from
Algorithm 1.  One oracle per eps (its inner models are reused across that eps's
draws, as in a fit); the first draw of each eps includes building them.

Prints a per-eps table (median and max seconds, median CPU seconds of the process: all its
threads, so less sensitive to other load than wall-clock time; certified count) and, last,
``median_certified_s=<x> ratio=<y>``: the median over all structured solves (an
uncertified one counts as +inf) and the ratio of the monolithic median to the
structured median on the shared eps = 1 draws.
Writes benchmarks/results/oracle_adult.json.

Usage: python benchmarks/oracle_adult.py [--draws 5] [--eps 0.1,0.5,1,2,none]
       [--mono-draws 3] [--mono-limit 60] [--seed 0] [--rows N]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path

import numpy as np

from oracledp._provenance import environment, environment_line
from oracledp.datasets import load_adult
from oracledp.learners._opdisc import opdisc_sigma
from oracledp.oracles import HalfspaceProblem, make_oracle
from oracledp.oracles._dispatch import default_workers


def _run(oracle, problem, eta):
    t0, c0 = time.perf_counter(), time.process_time()
    res = oracle.solve(problem, eta)
    return {"seconds": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
            "certified": res.certified,
            "status": str(res.status), "loss": res.loss, "objective": res.objective,
            "solver": res.solver}


def _eps_name(eps: float) -> str:
    return "none" if math.isinf(eps) else f"{eps:g}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=5)
    ap.add_argument("--mono-draws", type=int, default=3)
    ap.add_argument("--mono-limit", type=float, default=60.0)
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eps", default="0.1,0.5,1,2,none",
                    help="comma-separated privacy levels; 'none' = no noise")
    ap.add_argument("--workers", type=int, default=None,
                    help="inner problems the structured oracle solves at once "
                         "(default: the usable CPUs, at most 2)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    ap.add_argument("--rows", type=int, default=None,
                    help="use only the first ROWS records (the smoke test; default: all)")
    args = ap.parse_args()

    print(environment_line(), flush=True)
    data = load_adult()
    X, y = np.asarray(data.X)[: args.rows], np.asarray(data.y)[: args.rows]
    problem = HalfspaceProblem.from_data(X, y, schema=data.feature_schema)
    n, d = problem.n, problem.d
    delta = 1.0 / n**2
    rng = np.random.default_rng(args.seed)
    workers = args.workers or default_workers()
    print(f"Adult: n={n}, d={d}, distinct rows={problem.n_groups}, delta=1/n^2, HiGHS threads=1, "
          f"structured workers={workers}")

    records: list[dict] = []
    eta_eps1: list[np.ndarray] = []
    eps_list = [math.inf if e.strip().lower() in ("none", "inf") else float(e)
                for e in args.eps.split(",")]
    for eps in eps_list:
        oracle = make_oracle("highs", time_limit=args.time_limit, workers=workers)
        sigma = 0.0 if math.isinf(eps) else opdisc_sigma(eps, delta, problem)
        for i in range(args.draws):
            if math.isinf(eps):
                oracle = make_oracle("highs", time_limit=args.time_limit, workers=workers)  # cold every time
                eta = np.zeros(d + 1)
            else:
                eta = rng.normal(0.0, sigma, size=d + 1)
            if eps == 1.0:
                eta_eps1.append(eta)
            rec = {"method": "structured", "eps": eps, "draw": i, **_run(oracle, problem, eta)}
            records.append(rec)
            print(f"  structured eps={_eps_name(eps):<4} draw {i}: {rec['seconds']:6.2f} s "
                  f"(cpu {rec['cpu_s']:6.2f} s) certified={rec['certified']} loss={rec['loss']}",
                  flush=True)

    mono = make_oracle("highs-monolithic", time_limit=args.mono_limit)
    for i, eta in enumerate(eta_eps1[: args.mono_draws]):
        rec = {"method": "monolithic", "eps": 1.0, "draw": i, **_run(mono, problem, eta)}
        if not rec["certified"]:
            rec["seconds"] = max(rec["seconds"], args.mono_limit)
        records.append(rec)
        print(f"  monolithic eps=1.0  draw {i}: {rec['seconds']:6.2f} s "
              f"certified={rec['certified']} status={rec['status']}", flush=True)

    def times(method: str, eps: float | None = None, draws: int | None = None) -> list[float]:
        out = [r["seconds"] if (r["certified"] or method == "monolithic") else math.inf
               for r in records if r["method"] == method and (eps is None or r["eps"] == eps)
               and (draws is None or r["draw"] < draws)]
        return out

    print("\nmethod       eps    runs  median_s  max_s  median_cpu_s  certified")
    rows = [("structured", e) for e in eps_list]
    if eta_eps1[: args.mono_draws]:
        rows.append(("monolithic", 1.0))
    for method, eps in rows:
        ts = times(method, eps)
        cert = sum(r["certified"] for r in records if r["method"] == method and r["eps"] == eps)
        cpu = statistics.median(r["cpu_s"] for r in records
                                if r["method"] == method and r["eps"] == eps)
        print(f"{method:<12} {_eps_name(eps):<6} {len(ts):>4}  {statistics.median(ts):8.2f}  "
              f"{max(ts):6.2f}  {cpu:12.2f}  {cert}/{len(ts)}")
    median_all = statistics.median(times("structured"))
    shared = min(args.mono_draws, args.draws)
    mono_ts = times("monolithic")
    ratio = (statistics.median(mono_ts) / statistics.median(times("structured", 1.0, shared))
             if mono_ts else math.nan)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "oracle_adult.json").write_text(json.dumps(
        {"records": records, "median_certified_s": median_all, "ratio": ratio,
         "config": vars(args) | {"out": str(args.out), "workers": workers},
         "environment": environment()},
        indent=2, default=str))
    print(f"median_certified_s={median_all:.2f} ratio={ratio:.1f}")


if __name__ == "__main__":
    main()
