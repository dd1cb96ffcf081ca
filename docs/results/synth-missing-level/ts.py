import sys, json, numpy as np, pandas as pd
from oracledp.synth import TableSynthesizer
real = pd.read_csv('/tmp/sweep11/a/odd2.csv', dtype=str, keep_default_na=False)
sch = json.load(open('/tmp/sweep11/a/odd2.schema.json'))
r = pd.read_csv('/tmp/sweep11/a/odd2.csv')
top, miss, lo, tv = [], [], [], []
q = np.quantile(r.bp.dropna(), np.arange(1, 8) / 8)
rb = np.bincount(np.searchsorted(q, r.bp.dropna(), side='right'), minlength=8) / r.bp.notna().sum()
for seed in range(int(sys.argv[1]), int(sys.argv[2])):
    ts = TableSynthesizer('oracle-query-pgm', epsilon=float(sys.argv[3]), random_state=seed).fit(real, sch)
    d = ts.sample(len(real), random_state=seed + 1000)
    b = pd.to_numeric(d.bp.replace('', np.nan))
    top.append((b >= 232).mean()); miss.append(b.isna().mean()); lo.append((b > 167).mean())
    sb = np.bincount(np.searchsorted(q, b.dropna(), side='right'), minlength=8) / b.notna().sum()
    tv.append(0.5 * np.abs(sb - rb).sum())
print('share >=232 %.4f  >167 %.4f  missing %.4f (real %.4f)  bp 1-way TV octiles %.4f' % (
    np.mean(top), np.mean(lo), np.mean(miss), r.bp.isna().mean(), np.mean(tv)))
print(np.round(top, 3).tolist(), np.round(miss, 3).tolist())
