"""The sweep's spend column declared 0-5,000 instead of 0-100,000 (tables from gen.py in
/tmp/s/rec/tables): the synthetic mean per seed 100-105 at epsilon 0.5 and 3."""
import json, sys, numpy as np, pandas as pd
from oracledp.synth import TableSynthesizer
sch = json.load(open('/tmp/s/rec/tables/b.schema.json')); sch['columns'][0]['upper'] = 5000
real = pd.read_csv('/tmp/s/rec/tables/b.csv')
for eps in (0.5, 3.0):
    ms = []
    for seed in range(100, 106):
        f = TableSynthesizer('oracle-query-pgm', epsilon=eps, random_state=seed).fit(real, sch).sample(len(real), random_state=seed + 10)
        ms.append(round(float(f.spend.mean()), 1))
    print(eps, min(ms), max(ms), ms, flush=True)
