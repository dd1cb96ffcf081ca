"""Where the health-panel stand-in's numeric 1-way error came from, under the rule before this
record (no round values, the plain shape; not private: reads the real table):

    PYTHONPATH=src python docs/results/synth-flat/diagnose.py EPS FIRST LAST

For income and age, seeds FIRST..LAST-1: the synthetic column's 1-way TV at the model's own
coarse bins and at the real octiles, and the octiles' TV when the same records are redrawn
uniformly over the grid points of their coarse bin (the coarse masses kept, the fine shape
dropped).
"""

import sys

import numpy as np

sys.path.insert(0, "benchmarks")
import oracledp.synth._numeric as nm
import synth_health_panel as P
from oracledp.synth import TableSynthesizer
from oracledp.tabular import TableSchema

nm.ROUND_POINTS = False
inner = nm.tree_histogram


def no_flat(counts, rng, **kw):
    plain = inner(counts, rng, **{k: v for k, v in kw.items() if k not in ("flat", "keep",
                                                                           "widths")})
    return (plain, plain) if "flat" in kw else plain


nm.tree_histogram = no_flat
real = P.table(13_781, 0)
schema = TableSchema.from_dict(P.SCHEMA)
eps, seeds = float(sys.argv[1]), range(int(sys.argv[2]), int(sys.argv[3]))


def tv_at(edges, r, f):
    a = np.bincount(np.searchsorted(edges, r, side="right"), minlength=len(edges) + 1) / len(r)
    b = np.bincount(np.searchsorted(edges, f, side="right"), minlength=len(edges) + 1) / len(f)
    return 0.5 * np.abs(a - b).sum()


acc: dict[str, list[float]] = {}
for s in seeds:
    syn = TableSynthesizer("oracle-query-pgm", epsilon=eps, random_state=s).fit(real, schema)
    fake = syn.sample(len(real), random_state=s + 1000)
    rng = np.random.default_rng(s)
    for a in syn.table_domain_.attrs:
        if a.name not in ("income", "age"):
            continue
        c = next(c for c in schema.columns if c.name == a.name)
        r, f = real[a.name].to_numpy(float), fake[a.name].to_numpy(float)
        g = np.round((f - c.lower) / c.step).astype(int)
        b = np.searchsorted(a.first, g, side="right") - 1
        model_edges = c.lower + (a.first[1:] - 0.5) * c.step
        oct_edges = np.unique(np.quantile(r, np.arange(1, 8) / 8)) + 0.5 * c.step
        u = a.first[b] + np.floor(rng.random(len(f)) * (a.last[b] - a.first[b] + 1)).astype(int)
        for key, val in ((f"{a.name} at the model's bins", tv_at(model_edges, r, f)),
                         (f"{a.name} at the octiles", tv_at(oct_edges, r, f)),
                         (f"{a.name} at the octiles, uniform in the coarse bin",
                          tv_at(oct_edges, r, c.lower + u * c.step))):
            acc.setdefault(key, []).append(val)
for k, v in acc.items():
    print(f"eps={eps:g} seeds {seeds.start}-{seeds.stop - 1} {k}: {np.mean(v):.4f}",
          np.round(v, 3).tolist())
