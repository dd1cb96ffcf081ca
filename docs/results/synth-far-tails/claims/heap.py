"""A new user's 450-row houses table (gen.py and schemas.py here, run first): price_k declared
0-5,000, 10.2 % of the real values at 400, 58.9 % at multiples of 50.  Per epsilon and seed:
the fine bin of 400, its true count, the plain estimate, the flattened shape drawn, sigma;
then the synthetic shares at 400 and at multiples of 50, and the coarse bins.

    PYTHONPATH=../../../../src python heap.py > heap.txt
"""
import json, numpy as np, pandas as pd
import oracledp.synth._numeric as nm
from oracledp.synth import TableSynthesizer
real = pd.read_csv('c_houses.csv'); sch = json.load(open('c_houses.schema.json'))
outs = []
inner = nm.tree_histogram
def logged(counts, rng, **kw):
    out = inner(counts, rng, **kw); outs.append((counts, out, kw)); return out
nm.tree_histogram = logged
print('real share at 400', (real.price_k == 400).mean(), 'mult of 50', (real.price_k % 50 == 0).mean(), 'n', len(real))
for eps in (1.0, 3.0):
  for seed in (0, 1):
    outs.clear()
    ts = TableSynthesizer('oracle-query-pgm', epsilon=eps, random_state=seed).fit(real, sch)
    a = [x for x in ts.table_domain_.attrs if x.name == 'price_k'][0]
    starts = a.within[0]
    j = int(np.searchsorted(starts, 400, side='right') - 1)
    for counts, (est, flat), kw in outs:
        if len(counts) == len(starts) + a.missing:
            print(eps, seed, 'true', counts[j], 'est', round(est[j], 1), 'flat', round(flat[j], 1), 'sigma', round(kw.get('sigma') or 0, 1), 'bins', len(starts))
    f = ts.sample(len(real), random_state=seed + 1)
    print('   synth share 400', (f.price_k == 400).mean(), 'mult50', (f.price_k % 50 == 0).mean(), 'coarse', a.labels)
