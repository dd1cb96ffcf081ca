"""python cmp.py REAL SYN [sep] [xtab colA:colB ...] -- my own fidelity check"""
import sys, pandas as pd, numpy as np
real_f, syn_f = sys.argv[1], sys.argv[2]
sep = sys.argv[3] if len(sys.argv) > 3 and ":" not in sys.argv[3] else ","
xt = [a for a in sys.argv[3:] if ":" in a]
na = ["NA", "?", ""]
R = pd.read_csv(real_f, sep=sep, na_values=na, keep_default_na=True, encoding="utf-8-sig")
S = pd.read_csv(syn_f, na_values=na, keep_default_na=True)
print(f"rows real {len(R)} syn {len(S)}; cols syn {list(S.columns)}")
for c in R.columns:
    if c not in S.columns: print(f"  {c}: MISSING from synthetic"); continue
    r, s = R[c], S[c]
    if pd.api.types.is_numeric_dtype(r) and r.nunique() > 12:
        s = pd.to_numeric(s, errors="coerce")
        qs = [0, .01, .1, .25, .5, .75, .9, .99, 1]
        rq = r.quantile(qs).round(3).tolist(); sq = s.quantile(qs).round(3).tolist()
        mode = r.mode().iloc[0]
        out = ((s < r.min()) | (s > r.max())).mean()
        print(f"  {c}: real q {rq}\n  {' '*len(c)}  syn  q {sq}\n  {' '*len(c)}  mode {mode}: real {np.mean(r==mode):.4f} syn {np.mean(s==mode):.4f}; syn top value {s.mode().iloc[0]} share {np.mean(s==s.mode().iloc[0]):.4f}; outside real range {out:.4f}; missing real {r.isna().mean():.4f} syn {s.isna().mean():.4f}; mean real {r.mean():.3f} syn {s.mean():.3f}")
        # octile TV
        edges = np.unique(r.quantile(np.linspace(0,1,9)).values)
        rb = pd.cut(r, edges, include_lowest=True).value_counts(normalize=True)
        sb = pd.cut(s.clip(edges[0], edges[-1]), edges, include_lowest=True).value_counts(normalize=True)
        print(f"  {' '*len(c)}  octile TV {0.5*(rb-sb.reindex(rb.index, fill_value=0)).abs().sum():.4f}")
    else:
        rv = r.astype(str).value_counts(normalize=True); sv = s.astype(str).value_counts(normalize=True)
        allk = sorted(set(rv.index) | set(sv.index))
        tv = 0.5 * sum(abs(rv.get(k, 0) - sv.get(k, 0)) for k in allk)
        print(f"  {c}: TV {tv:.4f} " + ", ".join(f"{k}: {rv.get(k,0):.4f}/{sv.get(k,0):.4f}" for k in allk[:15]))
for x in xt:
    a, b = x.split(":")
    print(f"  crosstab {a} x {b} (real | syn, row-normalized)")
    f = lambda D: pd.crosstab(D[a].astype(str), D[b].astype(str), normalize="index").round(3)
    print(pd.concat([f(R), f(S)], axis=1, keys=["real", "syn"]).to_string())
