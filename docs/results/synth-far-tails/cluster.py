"""A real far cluster: 3 % of the records uniform on 50,000-60,000, the rest on 0-100, spend
declared 0-100,000 (from the review of 12c0891).  Prints, per table size, epsilon and seed, the
real and synthetic shares above 1,000 / 10,000 / 40,000 and where far_tails cut.

    PYTHONPATH=src python docs/results/synth-far-tails/cluster.py > cluster.txt
"""
import numpy as np
import pandas as pd

import oracledp.synth._numeric as nm
from oracledp.synth import TableSynthesizer
from oracledp.tabular import TableSchema

SCHEMA = TableSchema.from_dict({
    "target": {"name": "churn", "labels": ["no", "yes"]},
    "columns": [{"name": "spend", "type": "numeric", "lower": 0, "upper": 100000, "step": 1},
                {"name": "member", "type": "categorical",
                 "levels": ["basic", "silver", "gold"]}]})
cuts = []
inner = nm.far_tails


def logged(h, widths, sd, leaves=None, branching=nm.BRANCHING):
    out = inner(h, widths, sd, leaves, branching)
    cuts.append(out)
    return out


nm.far_tails = logged


def table(n, seed):
    rng = np.random.default_rng(seed)
    far = rng.random(n) < 0.03
    s = np.where(far, rng.integers(50000, 60001, n), rng.integers(0, 101, n))
    return pd.DataFrame({"spend": s.astype(int),
                         "member": rng.choice(["basic", "silver", "gold"], n),
                         "churn": rng.choice(["no", "yes"], n)})


thr = [1000, 10000, 40000]
for n in (1500, 3000):
    d = table(n, n)
    print(n, "records; real share above", thr, np.round([float((d.spend > t).mean())
                                                          for t in thr], 4), flush=True)
    for eps in (0.5, 1.0, 3.0):
        for seed in (0, 1):
            cuts.clear()
            ts = TableSynthesizer(epsilon=eps, random_state=seed).fit(d, SCHEMA)
            f = ts.sample(n, random_state=seed + 10).spend
            cut = np.flatnonzero(cuts[0])
            starts = ts.table_domain_.attrs[0].within[0]
            where = f"from {starts[cut[0]]} ({len(cut)} fine bins)" if cut.size else "none"
            print(f"  eps {eps} seed {seed}: synthetic share above", np.round(
                [float((f > t).mean()) for t in thr], 4), "max", f.max(), "cut", where,
                flush=True)
