"""The fine histograms summed onto the model's bins (what the fit is given as released 1-way
tables) against the real coarse counts and the model's, on the stand-in (not private).

    PYTHONPATH=src python coarse_sd.py ROWS DATA_SEED EPS FIRST LAST
"""
import sys, numpy as np
sys.path.insert(0, "benchmarks")
import synth_health_panel as P
from oracledp.tabular import TableSchema
from oracledp.synth import TableSynthesizer
import oracledp.synth._table_synthesizer as TS
cap = {}
orig = TS.TableSynthesizer._measure_numeric
def wrap(self, *a, **k):
    out = orig(self, *a, **k); cap['hist'] = out[3]; return out
TS.TableSynthesizer._measure_numeric = wrap
n, ds, eps = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
real = P.table(n, ds); schema = TableSchema.from_dict(P.SCHEMA)
for s in range(int(sys.argv[4]), int(sys.argv[5])):
    syn = TableSynthesizer("oracle-query-pgm", epsilon=eps, random_state=s).fit(real, schema)
    tdom = syn.table_domain_; names = [a.name for a in tdom.attrs]
    rows, counts = tdom.count(real)
    for c in ["age", "income", "visits"]:
        i = names.index(c)
        realc = np.bincount(rows[:, i], weights=counts, minlength=tdom.domain.shape[i])
        mod = np.asarray(syn.synthesizer_.marginal((i,))).ravel(); mod = mod / mod.sum() * n
        h, sd = cap['hist'][c]
        print(s, c, "real", realc.astype(int).tolist(), "\n   hist", np.round(h).astype(int).tolist(), "sd", np.round(sd, 1) if np.ndim(sd) == 0 else np.round(sd, 1).tolist(), "\n   model", np.round(mod).astype(int).tolist(),
              "TV hist", round(0.5 * np.abs(h - realc).sum() / n, 3), "model", round(0.5 * np.abs(mod - realc).sum() / n, 3))
