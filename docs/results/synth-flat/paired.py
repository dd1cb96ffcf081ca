"""The flattened within-bin shape against the plain one, paired on the same fits (not private:
reads the real table).  Each fit is run once with the code as it is (the shape drawn within a
coarse bin flattened where the noise hides it, ``FLAT_KAPPA``); the plain estimate of the same
noisy tree is captured during the fit, and the same model is sampled again (same seed) with it.
The fit itself is the same either way (the flattening is post-processing and draws no noise).
``--narrow``: flatten the trees of grids of at most 1,024 points too (where the code keeps the
plain shape; the variant not kept), from the same noise.

    PYTHONPATH=src python docs/results/synth-flat/paired.py TABLE EPS FIRST LAST
    PYTHONPATH=src python docs/results/synth-flat/paired.py panel EPS FIRST LAST
    PYTHONPATH=src python docs/results/synth-flat/paired.py panel-heaped EPS FIRST LAST

TABLE: a bundled table, scored as benchmarks/_synth_grid.py's run_one scores it (native 2-way
TV); ``panel``: benchmarks/synth_health_panel.py's stand-in (13,781 rows), scored at the real
octiles (max numeric 1-way TV, mean 2-way TV) and at 5 and 16 quantiles; ``panel-heaped``: the
same with every income rounded to the nearest 5,000 (heaps, as survey incomes have).
"""

import copy
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, "benchmarks")
import _synth_grid as g
import oracledp.synth._numeric as nm
from oracledp.synth import TableSynthesizer, evaluate_synthetic
from oracledp.synth._table import TableDomain
from oracledp.tabular import TableSchema

table, eps = sys.argv[1], float(sys.argv[2])
seeds = range(int(sys.argv[3]), int(sys.argv[4]))  # then optionally --narrow
if table.startswith("panel"):
    import synth_health_panel as P
    real = P.table(13_781, 0)
    if table == "panel-heaped":  # incomes reported to the nearest 5,000 (heaps)
        real["income"] = (np.round(real["income"] / 5000) * 5000).astype(int)
    schema = TableSchema.from_dict(P.SCHEMA)
    data = real
else:
    from oracledp.datasets import table_csv, table_schema
    data = table_csv(table, Path(tempfile.mkdtemp()) / f"{table}.csv", split="all")
    schema = TableSchema.from_dict(table_schema(table))
    real = pd.read_csv(data, dtype=str, keep_default_na=False)

narrow = "--narrow" in sys.argv  # also flatten grids of at most 1,024 points (not kept)
captured: list[tuple[np.ndarray, np.ndarray]] = []  # (plain, flattened) of each tree
inner = nm.tree_histogram


def capture(counts, rng, **kw):
    state = copy.deepcopy(rng.bit_generator.state)
    out = inner(counts, rng, **kw)
    if isinstance(out, tuple):
        captured.append(out)
    elif narrow:  # the same noise (the rng state replayed), flattened over every leaf
        probe = np.random.default_rng()
        probe.bit_generator.state = state
        captured.append(inner(counts, probe, flat=nm.FLAT_KAPPA, **kw))
    else:
        captured.append((out, out))
    return out


nm.tree_histogram = capture


def scores(fake: pd.DataFrame, seed: int) -> list[float]:
    if not table.startswith("panel"):
        return [g.score(fake, real, schema, seed, False)[0]["native_2way_tv"]]
    ev = evaluate_synthetic(fake, real, schema, orders=(2,), random_state=seed,
                            classifier=False)["data_resolution"]
    one = max(c["tv"] for c in ev["columns"] if c["kind"] == "numeric")
    q = [evaluate_synthetic(fake, real, schema, orders=(2,), random_state=seed, classifier=False,
                            quantiles=k)["data_resolution"]["two_way"]["mean_tv"] for k in (5, 16)]
    return [one, ev["two_way"]["mean_tv"], *q]


names = ["native 2-way"] if not table.startswith("panel") else ["max num 1-way", "2-way oct", "2-way q5",
                                                    "2-way q16"]
rows = []
for s in seeds:
    captured.clear()
    syn = TableSynthesizer("oracle-query-pgm", epsilon=eps, random_state=s).fit(data, schema)
    td = syn.table_domain_
    refined = [a for a in td.attrs if a.within is not None]
    assert len(refined) == len(captured), "one tree per refined column"
    got = []
    for which in (0, 1):  # 0: the plain shape, 1: the flattened one
        within = {}
        for a, pair in zip(refined, captured, strict=True):
            m = len(a.within[0])
            e = pair[which][:m]
            within[a.name] = (a.within[0], e / e.sum() if e.sum() > 0 else np.ones(m) / m)
        one = copy.copy(syn)
        one.table_domain_ = TableDomain(schema, td.bins, within=within)
        got.append(scores(one.sample(len(real), random_state=s + 1000), s))
    plain, flat = got
    rows.append(plain + flat)
    print(s, "plain", np.round(plain, 4).tolist(), "flat", np.round(flat, 4).tolist(), flush=True)
r = np.array(rows)
k = len(names)
for i, nme in enumerate(names):
    d = r[:, k + i] - r[:, i]
    print(f"{table} eps={eps} seeds {seeds.start}-{seeds.stop - 1} {nme}: plain "
          f"{r[:, i].mean():.4f} flat {r[:, k + i].mean():.4f} paired diff {d.mean():+.4f} ± "
          f"{d.std(ddof=1) / np.sqrt(len(d)):.4f}", flush=True)
