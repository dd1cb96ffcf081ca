import json, sys, numpy as np, pandas as pd
import oracledp.synth._numeric as nm
from oracledp.synth import TableSynthesizer, evaluate_synthetic
from oracledp.tabular import TableSchema
real = pd.read_csv('odd.csv'); sch = TableSchema.from_dict(json.load(open('odd.schema.json')))
for lp in (0, 256):
    nm.LOW_POINTS = lp
    for eps in (0.5, 1.0, 3.0):
        for seed in (0, 1):
            f = TableSynthesizer('oracle-query-pgm', epsilon=eps, random_state=seed).fit(real, sch).sample(len(real), random_state=seed + 100)
            ev = evaluate_synthetic(f, real, sch, classifier=False, orders=(1, 2))
            cols = {c['column']: c for c in ev['data_resolution']['columns']}
            print(lp, eps, seed, '2w %.4f' % ev['data_resolution']['two_way']['mean_tv'],
                  'amount tv %.3f med %.0f (real %.0f) >max %.3f' % (cols['amount']['tv'], f.amount.median(), real.amount.median(), (f.amount > real.amount.max()).mean()),
                  '| visits tv %.3f share1 %.3f (real %.3f) mean %.2f (%.2f)' % (cols['visits']['tv'], (f.visits == 1).mean(), (real.visits == 1).mean(), f.visits.mean(), real.visits.mean()), flush=True)
