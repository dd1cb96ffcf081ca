"""The default synthesizer on a panel whose wide column is independent of the others.

A new user's panel (issue 38's sweep 6): 2,000 people x 6 visits = 12,000 rows, columns
``visit`` (1-6), ``age`` (18-85 at the first visit, declared 18-90; one year older from
the fourth visit), ``cost`` (0-50,000
step 50; log-normal, 0 in 37 % of the rows, real maximum 27,500), ``dx`` (30 levels D00-D29,
geometric, independent of visit, age and cost) and a binary ``outcome`` that depends on age,
cost and dx.  Two defects showed on it:

* with 5 columns the default measures every pair once (``measures_all``), and the pairs of
  ``dx`` with visit, age and cost (120-180 cells) are mostly noise at eps 0.5-1: the
  release was worse than plain
  independent marginals (:func:`oracledp.synth._estimation.margins_within_noise` is the fix);
* the cost column's synthetic mean was 1.1-1.6 times the real one on average (2.4 times in
  one run), some values spread toward the declared bound
  (:func:`oracledp.synth._numeric.far_tails` is the fix; docs/results/synth-far-tails).

Reports each ``--method`` (and ``l1``: the default with ``selection="l1"``, adaptive rounds)
at each epsilon over ``--seeds`` seeds: the mean 2-way TV at the real octiles, beside exact
independent marginals and a resample of the real rows, and the cost column's synthetic mean
(the real one beside it), share of rows above the real maximum and Wasserstein-1 over the
declared range; delta 1/n^2 (the CLI's default).

    PYTHONPATH=src python benchmarks/synth_panel_pairs.py [--epsilons 0.5 1 1.5 3] [--seeds 3]
        [--first-seed 0] [--methods oracle-query-pgm independent l1] [--out DIR]

Writes DIR/results.json and DIR/results.csv and prints a table.  The evaluation reads the real
table: its numbers are NOT differentially private.  About a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd

LEVELS = [f"D{i:02d}" for i in range(30)]
SCHEMA = {
    "target": {"name": "outcome", "labels": ["0", "1"]},
    "records_per_person": 6,
    "columns": [
        {"name": "visit", "type": "numeric", "lower": 1, "upper": 6, "step": 1},
        {"name": "age", "type": "numeric", "lower": 18, "upper": 90, "step": 1},
        {"name": "cost", "type": "numeric", "lower": 0, "upper": 50000, "step": 50},
        {"name": "dx", "type": "categorical", "levels": LEVELS},
    ],
}


def panel(people: int = 2000, visits: int = 6, seed: int = 0) -> pd.DataFrame:
    """The seeded panel described above (cost rounded to its grid of 50)."""
    rng = np.random.default_rng(seed)
    visit = np.tile(np.arange(1, visits + 1), people)
    age = np.repeat(rng.integers(18, 85, people), visits) + (visit - 1) // 3
    m = people * visits
    cost = np.minimum(np.round(rng.lognormal(5, 1.5, m) / 50) * 50, 50000)
    cost[rng.random(m) < 0.3] = 0
    code = np.minimum(rng.geometric(0.12, m) - 1, 29)
    logit = -2 + 0.03 * (age - 50) + 0.0003 * cost + (code % 5 == 0)
    outcome = (rng.random(m) < 1 / (1 + np.exp(-logit))).astype(int)
    return pd.DataFrame({"visit": visit, "age": age, "cost": cost.astype(int),
                         "dx": np.array(LEVELS)[code], "outcome": outcome.astype(str)})


def run(method: str, eps: float, seed: int, real: pd.DataFrame, schema: object
        ) -> dict[str, object]:
    from oracledp.synth import TableSynthesizer, evaluate_synthetic

    options = {"selection": "l1"} if method == "l1" else None
    name = "oracle-query-pgm" if method == "l1" else method
    t0 = time.perf_counter()
    syn = TableSynthesizer(name, epsilon=eps, random_state=seed, options=options).fit(
        real, schema)
    fit_s = time.perf_counter() - t0
    inner = syn.synthesizer_
    fake = syn.sample(len(real), random_state=seed + 1000)
    dr = evaluate_synthetic(fake, real, schema, orders=(2,), random_state=seed,
                            classifier=False)["data_resolution"]
    refs = dr["references"]
    return {"method": method, "eps": eps, "seed": seed, "fit_seconds": round(fit_s, 3),
            "mean_2way_tv": dr["two_way"]["mean_tv"],
            "independent_2way_tv": refs["independent_marginals"]["two_way"]["mean_tv"],
            "resample_2way_tv": refs["resample_of_real_rows"]["two_way"]["mean_tv"],
            "cost_mean": float(fake["cost"].mean()), "real_cost_mean": float(real["cost"].mean()),
            "cost_above_real_max": float((fake["cost"] > real["cost"].max()).mean()),
            "cost_w1_over_range": next(c for c in dr["columns"]
                                       if c["column"] == "cost")["w1_over_range"],
            "within_noise": [list(a) for a in getattr(inner, "within_noise_", ())]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epsilons", nargs="+", type=float, default=[0.5, 1.0, 1.5, 3.0])
    ap.add_argument("--methods", nargs="+", default=["oracle-query-pgm", "independent", "l1"])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("synth-panel-pairs-out"))
    args = ap.parse_args()
    from oracledp.tabular import TableSchema

    schema = TableSchema.from_dict(SCHEMA)
    real = panel()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit,
            "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "load_at_start": os.getloadavg()[0], "rows": len(real)}
    rows = []
    print(f"real cost: mean {real['cost'].mean():.0f}, maximum {real['cost'].max():,}")
    print(f"{'method':18} {'eps':>5} {'2-way TV (octiles)':>24} {'indep. exact':>13} "
          f"{'resample':>9} {'cost mean':>10} {'> max':>7} {'cost W1':>8} {'fit s':>6}",
          flush=True)
    for eps in args.epsilons:
        for method in args.methods:
            got = [run(method, eps, s, real, schema)
                   for s in range(args.first_seed, args.first_seed + args.seeds)]
            rows.extend(got)
            tv = np.array([g["mean_2way_tv"] for g in got])
            se = tv.std(ddof=1) / np.sqrt(len(tv)) if len(tv) > 1 else float("nan")
            print(f"{method:18} {eps:5g} {tv.mean():15.4f} +- {se:.4f} "
                  f"{got[0]['independent_2way_tv']:13.4f} "
                  f"{np.mean([g['resample_2way_tv'] for g in got]):9.4f} "
                  f"{np.mean([g['cost_mean'] for g in got]):10.0f} "
                  f"{100 * np.mean([g['cost_above_real_max'] for g in got]):6.2f}% "
                  f"{np.mean([g['cost_w1_over_range'] for g in got]):8.4f} "
                  f"{np.mean([g['fit_seconds'] for g in got]):6.2f}", flush=True)

    meta["load_at_end"] = os.getloadavg()[0]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps({"meta": meta, "runs": rows}, indent=1))
    pd.DataFrame([{k: v for k, v in r.items() if k != "within_noise"} for r in rows]).to_csv(
        args.out / "results.csv", index=False)
    print(f"wrote {args.out}/results.json and results.csv")


if __name__ == "__main__":
    main()
