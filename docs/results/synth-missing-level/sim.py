import numpy as np, pandas as pd
from oracledp.synth._numeric import tree_histogram, far_tails, FLAT_KAPPA, tree_levels
r = pd.read_csv('/tmp/sweep11/a/odd2.csv')
bp = r.bp.dropna().astype(int) - 40
m = 211
grid = np.bincount(bp, minlength=m).astype(float)
miss = float(r.bp.isna().sum())
for label, true, leaves in (("with missing leaf", np.append(grid, miss), m + 1),
                            ("no missing leaf", grid, m)):
    tops, misses = [], []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        est, flat = tree_histogram(true, rng, sigma=38.9, flat=FLAT_KAPPA, keep=m,
                                   widths=np.ones(leaves))
        n = flat.sum()
        tops.append(flat[192:m].sum() / n)
        misses.append(flat[m:].sum() / n)
    tops = np.array(tops)
    print(label, "mean share at 232-250 %.4f" % tops.mean(), "P(>1%%) %.2f" % (tops > .01).mean(),
          "missing %.4f" % np.mean(misses), "real missing %.4f" % (miss / len(r)))
