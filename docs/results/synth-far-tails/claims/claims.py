"""A new user's claims table (gen.py and schemas.py of the new-user sweep of 2026-11-30, run in
this directory first): claim_amount declared 0-1,000,000, 2.7 % of 4,000 claims at
180,000-240,000, the rest below 5,200.  Per method, epsilon and seed: the synthetic share
above 240,000, in the cluster, between 5,300 and 180,000, the largest value and the mean.

    cd docs/results/synth-far-tails/claims && python gen.py && python schemas.py
    PYTHONPATH=../../../../src python claims.py
"""
import json

import pandas as pd

from oracledp.synth import TableSynthesizer
real = pd.read_csv('./a_claims.csv'); sch = json.load(open('./a_claims.schema.json'))
col = 'claim_amount'
r = real[col]
print('real: share>240k', (r > 240000).mean(), 'cluster 180-240k', ((r >= 180000) & (r <= 240000)).mean().round(4), 'mean', round(r.mean()))
for method in ('oracle-query-pgm', 'independent'):
  for eps in (0.5, 1.0, 3.0):
    for seed in (0, 1):
        f = TableSynthesizer(method, epsilon=eps, random_state=seed).fit(real, sch).sample(len(real), random_state=seed + 100)[col]
        print(method[:5], eps, seed, 'share>240k', round(float((f > 240000).mean()), 4), 'cluster', round(float(((f >= 180000) & (f <= 240000)).mean()), 4), '5.3k-180k', round(float(((f > 5300) & (f < 180000)).mean()), 4), 'max', f.max(), 'mean', round(f.mean()), flush=True)
