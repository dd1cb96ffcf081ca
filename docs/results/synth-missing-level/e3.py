import json, numpy as np, pandas as pd
import oracledp.synth._numeric as nm
from oracledp.synth import TableSynthesizer
real = pd.read_csv('/tmp/s38/ft/e.csv', dtype=str, keep_default_na=False)
sch = json.load(open('/tmp/s38/ft/e.schema.json'))
r = pd.read_csv('/tmp/s38/ft/e.csv'); lab = r.lab.dropna().astype(int)
q = np.quantile(lab, np.arange(1, 8) / 8)
rb = np.bincount(np.searchsorted(q, lab, side='right'), minlength=8) / len(lab)
inner = nm.tree_histogram
got = []
def logged(counts, rng, **kw):
    out = inner(counts, rng, **kw); got.append((len(counts), out)); return out
nm.tree_histogram = logged
tp, tf, ts_ = [], [], []
for seed in range(100, 108):
    got.clear()
    ts = TableSynthesizer('oracle-query-pgm', epsilon=1.0, random_state=seed).fit(real, sch)
    m, (est, flat) = [g for g in got if g[0] >= 500][0]
    for h, acc in ((est[:501], tp), (flat[:501], tf)):
        cdf_bins = np.array([h[:int(np.floor(x)) + 1].sum() for x in q]) / h.sum()
        p = np.diff(np.concatenate([[0], cdf_bins, [1]]))
        acc.append(0.5 * np.abs(p - rb).sum())
    d = ts.sample(len(real), random_state=seed + 1000)
    b = pd.to_numeric(d.lab.replace('', np.nan)).dropna()
    sb = np.bincount(np.searchsorted(q, b, side='right'), minlength=8) / len(b)
    ts_.append(0.5 * np.abs(sb - rb).sum())
print('octile TV: plain hist %.4f flat hist %.4f sampled %.4f' % (np.mean(tp), np.mean(tf), np.mean(ts_)))
