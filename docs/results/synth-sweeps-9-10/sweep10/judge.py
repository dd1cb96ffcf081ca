import sys, json, numpy as np, pandas as pd, itertools
real_p, syn_p, schema_p = sys.argv[1:4]
S = json.load(open(schema_p)); R = pd.read_csv(real_p); Y = pd.read_csv(syn_p)
cols = [c for c in S["columns"]] + [{"name": S["target"]["name"], "type": "categorical"}]
rng = np.random.default_rng(0)
def binner(c):
    if c["type"] == "numeric":
        e = np.unique(np.quantile(R[c["name"]], np.arange(1, 8) / 8))
        return lambda x: np.searchsorted(e, np.asarray(x, float), side="left")
    lv = {v: i for i, v in enumerate(sorted(R[c["name"]].astype(str).unique()))}
    return lambda x: np.array([lv.get(str(v), -1) for v in x])
B = {c["name"]: binner(c) for c in cols}
def tv1(a, b):
    k = max(a.max(), b.max()) + 2
    return 0.5 * np.abs(np.bincount(a + 1, minlength=k) / len(a) - np.bincount(b + 1, minlength=k) / len(b)).sum()
def joint(a, b):
    s = pd.Series(list(zip(a, b))).value_counts(normalize=True); return s
def tv2(j1, j2):
    idx = j1.index.union(j2.index); return 0.5 * np.abs(j1.reindex(idx, fill_value=0) - j2.reindex(idx, fill_value=0)).sum()
out = {}
for c in S["columns"]:
    if c["type"] != "numeric": 
        a, b = B[c["name"]](R[c["name"]]), B[c["name"]](Y[c["name"]]); print(f"{c['name']:8s} cat 1wTV={tv1(a,b):.3f}"); continue
    r, y = R[c["name"]].to_numpy(float), Y[c["name"]].to_numpy(float)
    mode = pd.Series(r).mode().iloc[0]
    q = [1, 25, 50, 75, 99]
    print(f"{c['name']:8s} zeros {np.mean(r==0):.3f}/{np.mean(y==0):.3f}  top@{c['upper']} {np.mean(r==c['upper']):.3f}/{np.mean(y==c['upper']):.3f}  mode {mode:g} {np.mean(r==mode):.3f}/{np.mean(y==mode):.3f}  "
          f"past[min,max] {np.mean(y<r.min()):.3f}/{np.mean(y>r.max()):.3f} (max syn {y.max():g}) mean {r.mean():.1f}/{y.mean():.1f} 1wTV={tv1(B[c['name']](r),B[c['name']](y)):.3f}")
    print("   q real", np.round(np.percentile(r, q), 2), " syn", np.round(np.percentile(y, q), 2))
names = [c["name"] for c in cols]
Rb = {k: B[k](R[k]) for k in names}; Yb = {k: B[k](Y[k]) for k in names}
boot = rng.integers(0, len(R), len(R)); Bb = {k: Rb[k][boot] for k in names}
t_s, t_i, t_b = [], [], []
for a, b in itertools.combinations(names, 2):
    jr = joint(Rb[a], Rb[b]); t_s.append(tv2(jr, joint(Yb[a], Yb[b]))); t_b.append(tv2(jr, joint(Bb[a], Bb[b])))
    pa = pd.Series(Rb[a]).value_counts(normalize=True); pb = pd.Series(Rb[b]).value_counts(normalize=True)
    ind = pd.Series({(i, j): pa[i] * pb[j] for i in pa.index for j in pb.index}); t_i.append(tv2(jr, ind))
print(f"2wTV syn {np.mean(t_s):.4f} indep {np.mean(t_i):.4f} boot {np.mean(t_b):.4f}  per-pair syn {np.round(t_s,3).tolist()} ind {np.round(t_i,3).tolist()}")
