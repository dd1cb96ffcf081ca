"""Ages declared 18-100 with data 25-89 (sweep 9's clinical.csv, from gen.py here): per seed,
the default's synthetic share outside the real range of age, bmi and sbp, and age's node noise
with the plain and the flattened estimates' counts outside the real ages.

    PYTHONPATH=../../../../src python edges.py EPS FIRST LAST > edges.txt   (edges.txt: 3 0 6)
"""
import json, sys, numpy as np, pandas as pd
import oracledp.synth._numeric as nm
from oracledp.synth import TableSynthesizer
real = pd.read_csv('clinical.csv'); sch = json.load(open('clinical.schema.json'))
outs = []
inner = nm.tree_histogram
def logged(counts, rng, **kw):
    out = inner(counts, rng, **kw); outs.append((counts, out, kw)); return out
nm.tree_histogram = logged
eps = float(sys.argv[1])
for seed in range(int(sys.argv[2]), int(sys.argv[3])):
    outs.clear()
    ts = TableSynthesizer('oracle-query-pgm', epsilon=eps, random_state=seed).fit(real, sch)
    f = ts.sample(len(real), random_state=seed + 100)
    line = []
    for col in ('age', 'bmi', 'sbp'):
        lo, hi = real[col].min(), real[col].max()
        line.append(f"{col} out {((f[col] < lo) | (f[col] > hi)).mean():.3f}")
    a = [x for x in ts.table_domain_.attrs if x.name == 'age'][0]
    for counts, (est, flat), kw in outs:
        if len(counts) == 83 + a.missing:
            line.append(f"sigma {kw['sigma']:.1f} plain out {(est[:7].sum() + est[72:83].sum()):.1f} flat out {(flat[:7].sum() + flat[72:83].sum()):.1f}")
    print(seed, ' | '.join(line), 'coarse', a.labels[0], a.labels[-1], flush=True)
