import json, numpy as np, pandas as pd
from oracledp.synth import TableSynthesizer
real = pd.read_csv('/tmp/s38/ft/e.csv', dtype=str, keep_default_na=False)
sch = json.load(open('/tmp/s38/ft/e.schema.json'))
r = pd.read_csv('/tmp/s38/ft/e.csv'); lab = r.lab.dropna()
q = np.quantile(lab, np.arange(1, 8) / 8)
rb = np.bincount(np.searchsorted(q, lab, side='right'), minlength=8) / len(lab)
out = []
import sys
for seed in range(int(sys.argv[1]), int(sys.argv[2])):
    ts = TableSynthesizer('oracle-query-pgm', epsilon=float(sys.argv[3]) if len(sys.argv) > 3 else 1.0, random_state=seed).fit(real, sch)
    d = ts.sample(100000, random_state=seed + 1000)
    b = pd.to_numeric(d.lab.replace('', np.nan))
    sb = np.bincount(np.searchsorted(q, b.dropna(), side='right'), minlength=8) / b.notna().sum()
    out.append((0.5 * np.abs(sb - rb).sum(), b.isna().mean(), ts.table_domain_.attrs[ts.table_domain_.columns.index('lab')].labels[:3] if False else len(ts.table_domain_.attrs[ts.table_domain_.columns.index('lab')].labels)))
o = np.array(out)
print('expected octile TV %.4f  per seed %s  missing %.4f (real %.4f) coarse labels %s' % (o[:, 0].mean(), np.round(o[:, 0], 3).tolist(), o[:, 1].mean(), r.lab.isna().mean(), o[:, 2].tolist()))
