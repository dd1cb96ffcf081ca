import time, sys, numpy as np, pandas as pd
import oracledp.synth._numeric as nm
from oracledp.synth import TableSynthesizer
from oracledp.tabular import TableSchema
rng = np.random.default_rng(5)
n = 4000
job = rng.choice(["a", "b", "c"], n)
inc = np.where(rng.random(n) < 0.05, 0, np.round(np.exp(rng.normal(10.6 + 0.2 * (job == "b"), 0.6, n)))).astype(int)
y = np.where(rng.random(n) < 0.3 + 0.2 * (inc == 0), "yes", "no")
data = pd.DataFrame(dict(income=inc, job=job, y=y))
schema = TableSchema.from_dict({"target": {"name": "y", "labels": ["no", "yes"]}, "columns": [
    {"name": "income", "type": "numeric", "lower": 0, "upper": 1000000, "step": 1},
    {"name": "job", "type": "categorical", "levels": ["a", "b", "c"]}]})
for eps in (0.25, 0.5, 1.0):
  for lp, bh in ((0, False), (0, True), (256, True)):
    nm.LOW_POINTS = lp; nm.BOUND_HEAPS = bh
    z = [(TableSynthesizer("oracle-query-pgm", epsilon=eps, random_state=s).fit(data, schema).sample(n, random_state=s).income == 0).mean() for s in range(8)]
    print(eps, lp, bh, np.round(z, 3), 'mean %.3f' % np.mean(z), flush=True)
