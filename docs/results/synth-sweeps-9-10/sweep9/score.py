"""User-side fidelity check: python score.py real.csv synth.csv schema.json [--no-refs]"""
import sys, json, itertools, numpy as np, pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.preprocessing import StandardScaler
from sklearn.pipeline import make_pipeline
real_p, syn_p, sch_p = sys.argv[1:4]
sch = json.load(open(sch_p)); tgt = sch["target"]["name"]
cols = [c["name"] for c in sch["columns"]] + [tgt]
nums = [c["name"] for c in sch["columns"] if c["type"] == "numeric"]
cats = [c for c in cols if c not in nums]
R = pd.read_csv(real_p, dtype={c: str for c in cats})[cols]
S = pd.read_csv(syn_p, dtype={c: str for c in cats})[cols]
cuts = {c: np.unique(np.quantile(R[c], np.arange(1, 8) / 8)) for c in nums}
def disc(df):
    out = {}
    for c in cols:
        if c in nums: out[c] = np.searchsorted(cuts[c], df[c].to_numpy(float), side="left")
        else: out[c] = df[c].astype(str).to_numpy()
    return pd.DataFrame(out)
def tv(a, b):
    pa = a.value_counts(normalize=True); pb = b.value_counts(normalize=True)
    return 0.5 * pa.subtract(pb, fill_value=0).abs().sum()
def tv2(A, B, c1, c2):
    ka = A[c1].astype(str) + "|" + A[c2].astype(str); kb = B[c1].astype(str) + "|" + B[c2].astype(str)
    return tv(ka, kb)
DR = disc(R)
def two_way(D): return np.mean([tv2(DR, D, a, b) for a, b in itertools.combinations(cols, 2)])
res = {}
DS = disc(S)
print(f"rows real {len(R)} syn {len(S)}")
for c in nums:
    r, s = R[c].to_numpy(float), S[c].to_numpy(float)
    vc = R[c].value_counts(normalize=True).head(3)
    heaps = " ".join(f"{v:g}:{p:.3f}/{np.mean(np.isclose(s, v)):.3f}" for v, p in vc.items())
    r10 = np.mean(np.isclose(r % 10, 0) | np.isclose(r % 10, 10)); s10 = np.mean(np.isclose(s % 10, 0) | np.isclose(s % 10, 10))
    q = lambda x: "/".join(f"{v:g}" for v in np.quantile(x, [.01, .5, .99]))
    print(f"  {c:13s} 1wTV@oct {tv(DR[c], DS[c]):.4f}  heaps(real/syn) {heaps}  mult10 {r10:.3f}/{s10:.3f}  "
          f"q1/50/99 real {q(r)} syn {q(s)}  max {r.max():g}/{s.max():g} >realmax {np.mean(s > r.max()):.3f} <realmin {np.mean(s < r.min()):.3f} mean {r.mean():.4g}/{s.mean():.4g}")
for c in cats:
    print(f"  {c:13s} 1wTV {tv(DR[c], DS[c]):.4f}")
res["syn"] = two_way(DS)
if "--no-refs" not in sys.argv:
    rng = np.random.default_rng(0)
    ind, boot = [], []
    for k in range(3):
        I = pd.DataFrame({c: R[c].to_numpy()[rng.integers(0, len(R), len(R))] for c in cols})
        ind.append(two_way(disc(I)))
        boot.append(two_way(disc(R.iloc[rng.integers(0, len(R), len(R))].reset_index(drop=True))))
    res["indep"] = np.mean(ind); res["boot"] = np.mean(boot)
print("  2wTV@oct syn %.4f" % res["syn"] + ("  indep %.4f  boot %.4f" % (res["indep"], res["boot"]) if "indep" in res else ""))
# per-pair: the strongest real dependencies
def X(df, ref):
    return pd.get_dummies(df.drop(columns=[tgt]), columns=[c for c in cats if c != tgt]).reindex(columns=ref, fill_value=0).astype(float)
Xr = pd.get_dummies(R.drop(columns=[tgt]), columns=[c for c in cats if c != tgt]).astype(float); ref = Xr.columns
yr = R[tgt].astype(str); ys = S[tgt].astype(str)
m = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
cv = cross_val_score(m, Xr, yr, cv=5).mean()
if ys.nunique() > 1:
    tstr = m.fit(X(S, ref), ys).score(Xr, yr)
else:
    tstr = float("nan")
print(f"  logreg TSTR {tstr:.4f}  real-CV {cv:.4f}  majority {yr.value_counts(normalize=True).max():.4f}")
json.dump(dict(res, tstr=tstr, cv=cv), open(syn_p + ".score.json", "w"))
