import sys, json, numpy as np, pandas as pd
from oracledp.synth import TableSynthesizer
real = pd.read_csv('/tmp/s38/ft/e.csv', dtype=str, keep_default_na=False)
sch = json.load(open('/tmp/s38/ft/e.schema.json'))
r = pd.read_csv('/tmp/s38/ft/e.csv')
q = np.quantile(r.lab.dropna(), np.arange(1, 8) / 8)
rb = np.bincount(np.searchsorted(q, r.lab.dropna(), side='right'), minlength=8) / r.lab.notna().sum()
eps = float(sys.argv[1]); miss, tv, beyond = [], [], []
for seed in range(100, 108):
    ts = TableSynthesizer('oracle-query-pgm', epsilon=eps, random_state=seed).fit(real, sch)
    d = ts.sample(len(real), random_state=seed + 1000)
    b = pd.to_numeric(d.lab.replace('', np.nan))
    miss.append(b.isna().mean()); beyond.append((b > 328).mean())
    sb = np.bincount(np.searchsorted(q, b.dropna(), side='right'), minlength=8) / b.notna().sum()
    tv.append(0.5 * np.abs(sb - rb).sum())
print('eps', eps, 'missing |err| %.4f (real %.4f)  present-shape TV %.4f  >328 %.4f' % (
    np.mean(np.abs(np.array(miss) - r.lab.isna().mean())), r.lab.isna().mean(), np.mean(tv), np.mean(beyond)))
