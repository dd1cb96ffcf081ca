"""Tuning runs of docs/results/synth-bound-heaps and docs/results/synth-low-points (from the
repository root, PYTHONPATH=src): the default TableSynthesizer with a switch off and on, per
table, epsilon and seed: the mean 2-way TV at the real octiles (evaluate_synthetic) and, per
numeric column, its 1-way TV, the shares at its declared lower and upper bounds (real and
synthetic) and its most common real value's shares.  SWITCH: "bound" (BOUND_HEAPS False /
True) or "low" (LOW_POINTS 0 / 256).  Tables: a, b, c, e from
docs/results/synth-far-tails/gen.py in FT_DIR; a_claims, b_panel, c_houses, d_credit from
docs/results/synth-far-tails/claims/gen.py and schemas.py in CLAIMS_DIR; hp5000 and hp2000
(benchmarks/synth_health_panel.py, data seeds 0 and 1), pairs (benchmarks/synth_panel_pairs.py)
and control (below: a log-normal cost with no zeros, an age 18-90).

    python tune.py OUT.json FT_DIR CLAIMS_DIR TABLES EPSILONS FIRST LAST SWITCH
"""
import json, sys
import numpy as np, pandas as pd
from joblib import Parallel, delayed
sys.path.insert(0, "benchmarks")

def control(seed=3):
    rng = np.random.default_rng(seed)
    n = 3000
    grp = rng.choice(["a", "b", "c"], n)
    cost = np.round(np.exp(rng.normal(7 + 0.3 * (grp == "b"), 0.7, n))).clip(1, 50000).astype(int)
    age = rng.integers(18, 91, n)
    y = np.where(rng.random(n) < 0.2 + 0.3 * (cost > 2000), "yes", "no")
    sch = {"target": {"name": "y", "labels": ["no", "yes"]}, "columns": [
        {"name": "grp", "type": "categorical", "levels": ["a", "b", "c"]},
        {"name": "cost", "type": "numeric", "lower": 0, "upper": 50000, "step": 1},
        {"name": "age", "type": "numeric", "lower": 18, "upper": 90, "step": 1}]}
    return pd.DataFrame(dict(grp=grp, cost=cost, age=age, y=y)), sch

def tables(ft, cl):
    import synth_health_panel as hp
    import synth_panel_pairs as pp
    out = {}
    for t in "abce":
        out[t] = (pd.read_csv(f"{ft}/{t}.csv"), json.load(open(f"{ft}/{t}.schema.json")))
    for t in ("a_claims", "b_panel", "c_houses", "d_credit"):
        out[t] = (pd.read_csv(f"{cl}/{t}.csv"), json.load(open(f"{cl}/{t}.schema.json")))
    out["hp5000"] = (hp.table(5000, 0), hp.SCHEMA)
    out["hp2000"] = (hp.table(2000, 1), hp.SCHEMA)
    out["pairs"] = (pp.panel(), pp.SCHEMA)
    out["control"] = control()
    return out

def one(ft, cl, switch, tab, eps, seed, on):
    import oracledp.synth._numeric as nm
    from oracledp.synth import TableSynthesizer, evaluate_synthetic
    from oracledp.tabular import TableSchema
    if switch == "bound":
        nm.BOUND_HEAPS = on
    else:
        nm.LOW_POINTS = 256 if on else 0
    real, schema = tables(ft, cl)[tab]
    ts = TableSynthesizer("oracle-query-pgm", epsilon=eps, random_state=seed).fit(real, schema)
    fake = ts.sample(len(real), random_state=seed + 10)
    sch = schema if isinstance(schema, TableSchema) else TableSchema.from_dict(schema)
    ev = evaluate_synthetic(fake, real, sch, classifier=False, orders=(1, 2))
    cols = {}
    for c in ev["data_resolution"]["columns"]:
        if c["kind"] != "numeric":
            continue
        col = next(x for x in sch.columns if x.name == c["column"])
        r, f = pd.to_numeric(real[col.name], errors="coerce"), pd.to_numeric(fake[col.name], errors="coerce")
        cols[col.name] = {"tv": c["tv"], "lo_r": float((r == col.lower).mean()), "lo_s": float((f == col.lower).mean()),
                          "hi_r": float((r == col.upper).mean()), "hi_s": float((f == col.upper).mean()),
                          "mc": c["most_common_real"], "mc_r": c["most_common_share_real"], "mc_s": c["most_common_share_synthetic"]}
    return {"tab": tab, "eps": eps, "seed": seed, "on": on, "tv2": ev["data_resolution"]["two_way"]["mean_tv"], "cols": cols}

if __name__ == "__main__":
    out, ft, cl = sys.argv[1:4]
    tabs = sys.argv[4].split(",")
    epss = [float(e) for e in sys.argv[5].split(",")]
    seeds = range(int(sys.argv[6]), int(sys.argv[7]))
    switch = sys.argv[8]
    jobs = [(t, e, s, on) for t in tabs for e in epss for s in seeds for on in (False, True)]
    res = Parallel(n_jobs=2, verbose=2)(delayed(one)(ft, cl, switch, *j) for j in jobs)
    json.dump(res, open(out, "w"))
