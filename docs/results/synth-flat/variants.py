"""The health-panel stand-in with the wide-grid rules switched off and on (not private: reads
the real table).  Run from the repository root:

    PYTHONPATH=src python docs/results/synth-flat/variants.py TABLE EPS FIRST LAST JSON...

TABLE: ``panel`` (benchmarks/synth_health_panel.py's stand-in, 13,781 rows; income 0-1,000,000
in steps of 1), ``panel-heaped`` (every income rounded to the nearest 5,000) or
``panel-heaped1k`` (to the nearest 1,000).  Each JSON is a variant: ``{}`` the code as it is;
``{"ROUND_POINTS": false}`` without the round values as fine bins of their own;
``{"ROUND_POINTS": false, "flat": false}`` also without the flattened shape (the rule before
both); ``{"FLAT_KAPPA": 2}``: another kappa of the flattening test.  Seeds FIRST..LAST-1; each line: mean over the seeds of the largest numeric column's
1-way TV at the real octiles (and the worst seed's), income's and age's, the mean 2-way TV at
the octiles (± standard error) and at 5 and 16 quantiles.
"""

import json
import sys

import numpy as np

sys.path.insert(0, "benchmarks")
import oracledp.synth._numeric as nm
import synth_health_panel as P
from oracledp.synth import TableSynthesizer, evaluate_synthetic
from oracledp.tabular import TableSchema

table = sys.argv[1]
real = P.table(13_781, 0)
if table in ("panel-heaped", "panel-heaped1k"):
    unit = 5000 if table == "panel-heaped" else 1000
    real["income"] = (np.round(real["income"] / unit) * unit).astype(int)
elif table != "panel":
    raise SystemExit(f"unknown table {table!r}")
schema = TableSchema.from_dict(P.SCHEMA)
eps = float(sys.argv[2])
seeds = range(int(sys.argv[3]), int(sys.argv[4]))
inner = nm.tree_histogram


def no_flat(counts, rng, **kw):
    plain = inner(counts, rng, **{k: v for k, v in kw.items() if k not in ("flat", "keep",
                                                                           "widths")})
    return (plain, plain) if "flat" in kw else plain


for v in sys.argv[5:]:
    kw = json.loads(v)
    nm.ROUND_POINTS = kw.get("ROUND_POINTS", True)
    nm.FLAT_KAPPA = kw.get("FLAT_KAPPA", 4.0)
    nm.tree_histogram = no_flat if kw.get("flat", True) is False else inner
    res = []
    for s in seeds:
        syn = TableSynthesizer("oracle-query-pgm", epsilon=eps, random_state=s).fit(real, schema)
        fake = syn.sample(len(real), random_state=s + 1000)
        ev = evaluate_synthetic(fake, real, schema, orders=(2,), random_state=s,
                                classifier=False)["data_resolution"]
        num = {c["column"]: c["tv"] for c in ev["columns"] if c["kind"] == "numeric"}
        q = [evaluate_synthetic(fake, real, schema, orders=(2,), random_state=s,
                                classifier=False, quantiles=k)["data_resolution"]["two_way"][
            "mean_tv"] for k in (5, 16)]
        res.append([max(num.values()), num["income"], num["age"], ev["two_way"]["mean_tv"], *q])
    r = np.array(res)
    m = r.mean(0)
    se = r.std(0, ddof=1) / np.sqrt(len(r))
    print(f"{table} eps={eps:g} {v}: max1w {m[0]:.4f} (worst {r[:, 0].max():.3f}) income "
          f"{m[1]:.4f} age {m[2]:.4f} 2w {m[3]:.4f}±{se[3]:.4f} q5 {m[4]:.4f} q16 {m[5]:.4f}",
          flush=True)
