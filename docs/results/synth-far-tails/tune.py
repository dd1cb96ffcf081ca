"""Tuning runs of docs/results/synth-far-tails (from the repository root, PYTHONPATH=src): the
default TableSynthesizer on the sweep's tables (gen.py's a, b, c, e in TABLES_DIR), the
6-visit cost panel (benchmarks/synth_panel_pairs.py) and the 5,000-row health panel
(benchmarks/synth_health_panel.py), fit at each epsilon and seed, as many records sampled
(seed + 10), evaluated by evaluate_synthetic at the real octiles: the mean 2-way TV and, per
numeric column, its 1-way TV, W1 over the declared range, mean and share outside the real
range.  Each JSON variant sets constants of oracledp.synth._numeric (the rule's defaults
first; '{"TAIL_Z": 0}' switches the cut off).

    python docs/results/synth-far-tails/tune.py OUT.json TABLES_DIR TABLES EPSILONS FIRST LAST [JSON ...]
"""
import json
import sys

import pandas as pd
from joblib import Parallel, delayed

sys.path.insert(0, "benchmarks")


def tables(tdir):
    import synth_health_panel as hp
    import synth_panel_pairs as pp

    out = {}
    for t in "abce":
        with open(f"{tdir}/{t}.schema.json") as f:
            out[t] = (pd.read_csv(f"{tdir}/{t}.csv"), json.load(f))
    out["hp5000"] = (hp.table(5000, 0), hp.SCHEMA)
    out["pairs"] = (pp.panel(), pp.SCHEMA)
    return out


def one(tdir, tab, eps, seed, variant):
    import oracledp.synth._numeric as nm
    from oracledp.synth import TableSynthesizer, evaluate_synthetic

    base = {"TAIL_Z": 2.0, "TAIL_FENCE": 3.0, "TAIL_FLOOR": 0.02,
            "TAIL_QUANTILES": (0.05, 0.95), "TAIL_PASSES": 3}
    for k, v in {**base, **variant}.items():
        setattr(nm, k, tuple(v) if isinstance(v, list) else v)
    real, schema = tables(tdir)[tab]
    fake = TableSynthesizer("oracle-query-pgm", epsilon=eps, random_state=seed).fit(
        real, schema).sample(len(real), random_state=seed + 10)
    ev = evaluate_synthetic(fake, real, schema, classifier=False, orders=(1, 2))
    cols = {c["column"]: {"tv": c["tv"], "w1": c["w1_over_range"], "mr": c["mean_real"],
                          "ms": c["mean_synthetic"], "out": c["outside_real_range"]}
            for c in ev["data_resolution"]["columns"] if c["kind"] == "numeric"}
    return {"tab": tab, "eps": eps, "seed": seed, "variant": json.dumps(variant),
            "tv2": ev["data_resolution"]["two_way"]["mean_tv"], "cols": cols}


if __name__ == "__main__":
    out, tdir = sys.argv[1], sys.argv[2]
    tabs = sys.argv[3].split(",")
    epss = [float(e) for e in sys.argv[4].split(",")]
    seeds = range(int(sys.argv[5]), int(sys.argv[6]))
    variants = [json.loads(v) for v in sys.argv[7:]] or [{}]
    jobs = [(t, e, s, v) for t in tabs for e in epss for s in seeds for v in variants]
    res = Parallel(n_jobs=2, verbose=5)(delayed(one)(tdir, *j) for j in jobs)
    with open(out, "w") as f:
        json.dump(res, f)
