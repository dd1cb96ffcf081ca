import numpy as np, pandas as pd
import oracledp.synth._numeric as nm
from oracledp.synth import TableSynthesizer
from oracledp.tabular import TableSchema
rng = np.random.default_rng(5)
n = 4000
job = rng.choice(["a", "b", "c"], n)
inc = np.minimum(np.round(np.exp(rng.normal(11.2 + 0.2 * (job == "b"), 0.5, n))), 200_000).astype(int)
y = np.where(rng.random(n) < 0.3 + 0.2 * (inc == 200_000), "yes", "no")
data = pd.DataFrame(dict(income=inc, job=job, y=y))
schema = TableSchema.from_dict({"target": {"name": "y", "labels": ["no", "yes"]}, "columns": [
    {"name": "income", "type": "numeric", "lower": 0, "upper": 200000, "step": 1},
    {"name": "job", "type": "categorical", "levels": ["a", "b", "c"]}]})
print('real top', (inc == 200_000).mean())
for eps in (0.25, 0.5, 1.0):
  for bh in (False, True):
    nm.BOUND_HEAPS = bh
    z = [(TableSynthesizer("oracle-query-pgm", epsilon=eps, random_state=s).fit(data, schema).sample(n, random_state=s).income == 200_000).mean() for s in range(8)]
    print(eps, bh, np.round(z, 3), 'mean %.3f' % np.mean(z), flush=True)
