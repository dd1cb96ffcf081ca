import sys, itertools, pandas as pd, numpy as np
R = pd.read_csv(sys.argv[1]); cols = [c for c in sys.argv[3].split(",")]
def disc(D, c):
    r = R[c]
    if pd.api.types.is_numeric_dtype(r) and r.nunique() > 12:
        e = np.unique(r.quantile(np.linspace(0, 1, 9)).values); e[0] = -np.inf; e[-1] = np.inf
        return pd.cut(D[c], e).astype(str)
    return D[c].astype(str)
for f in sys.argv[2].split(","):
    S = pd.read_csv(f); out = []
    for a, b in itertools.combinations(cols, 2):
        rr = pd.crosstab(disc(R, a), disc(R, b), normalize=True).stack()
        ss = pd.crosstab(disc(S, a), disc(S, b), normalize=True).stack()
        k = rr.index.union(ss.index)
        out.append((f"{a}x{b}", 0.5 * (rr.reindex(k, fill_value=0) - ss.reindex(k, fill_value=0)).abs().sum()))
    print(f.split('/')[-1][:28].ljust(28), " ".join(f"{n}={v:.3f}" for n, v in out), f"mean={np.mean([v for _, v in out]):.4f}")
