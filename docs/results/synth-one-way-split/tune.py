"""Tuning runs of docs/results/synth-one-way-split (from the repository root): the default
TableSynthesizer under named variants, per table, epsilon and seed; the mean 2-way TV at the
real data's octiles (evaluate_synthetic's data_resolution) and each column's 1-way TV there.

    PYTHONPATH=src:docs/results/synth-one-way-split python docs/results/synth-one-way-split/tune.py \
        OUT.json DATA TABLES EPSILONS FIRST LAST VARIANTS

DATA: a directory with s9/ (docs/results/synth-sweeps-9-10/sweep9/gen.py run there, with
retail and clinical schemas copied from that directory), s10/ (sweep10/gen.py and its
schemas), ft/ (docs/results/synth-far-tails/gen.py), cl/ (docs/results/synth-far-tails/claims
gen.py and schemas.py); the bundled tables are written to DATA/bundled/ on first use; hp5000
is benchmarks/synth_health_panel.py's 5,000-row panel (data seed 0).  VARIANTS: comma
separated, each "base" (the code as it is) or "+"-joined "set:MODULE.NAME=VALUE" (MODULE nm
= synth._numeric, oq = synth._oracle_query_pgm; every upper-case constant is reset first) and
"opt:KEY=VALUE" (a keyword of the method, as TableSynthesizer's options).
Not private: the evaluation reads the real tables.
"""
import json, sys, os
import numpy as np, pandas as pd
from joblib import Parallel, delayed

def load(data, tab):
    sys.path.insert(0, "benchmarks")
    if tab == "hp5000":
        import synth_health_panel as hp
        return hp.table(5000, 0), hp.SCHEMA
    from oracledp.datasets import table_csv, table_schema
    if tab in ("health_insurance", "doctor_visits", "biopsy", "titanic", "nhefs"):
        from pathlib import Path
        p = Path(f"{data}/bundled/{tab}.csv")
        if not p.exists():
            p.parent.mkdir(exist_ok=True)
            table_csv(tab, p, split="all")
        return str(p), table_schema(tab)
    for sub in ("s9", "s10", "ft", "cl", "s11"):  # s11: sweep 11 (synth-missing-level)
        p = f"{data}/{sub}/{tab}.csv"
        if os.path.exists(p):
            return pd.read_csv(p), json.load(open(f"{data}/{sub}/{tab}.schema.json"))
    raise SystemExit(f"no table {tab}")

_D = {}
def _defaults():
    import oracledp.synth._numeric as nm
    import oracledp.synth._oracle_query_pgm as oq
    if not _D:  # once per process, before any variant is set (tune is imported by reference)
        _D.update({(m, k): getattr(mod, k) for m, mod in (("nm", nm), ("oq", oq))
                   for k in dir(mod) if k.isupper()})
    return _D

def variant(name):
    import oracledp.synth._numeric as nm
    import oracledp.synth._oracle_query_pgm as oq
    opts = {}
    DEFAULTS = _defaults()
    for (m, k), v in DEFAULTS.items():
        setattr({"nm": nm, "oq": oq}[m], k, v)
    for part in name.split("+"):
        if part == "base":
            pass
        elif part.startswith("opt:"):  # opt:KEY=VALUE: an OracleQueryPGM keyword (a string)
            key, val = part[4:].split("=", 1)
            opts[key] = val
        elif part.startswith("set:"):  # set:module.ATTR=value
            mod, rest = part[4:].split(".", 1)
            attr, val = rest.split("=")
            setattr({"nm": nm, "oq": oq}[mod], attr, eval(val))
        else:
            raise SystemExit(f"unknown variant {part}")
    return opts

def one(data, tab, eps, seed, var):
    from oracledp.synth import TableSynthesizer, evaluate_synthetic
    from oracledp.tabular import TableSchema
    opts = variant(var)
    real, schema = load(data, tab)
    ts = TableSynthesizer("oracle-query-pgm", epsilon=eps, random_state=seed,
                          options=opts or None).fit(real, schema)
    if isinstance(real, str):
        real = pd.read_csv(real, dtype=str, keep_default_na=False)
    fake = ts.sample(len(real), random_state=seed + 1000)
    sch = schema if isinstance(schema, TableSchema) else TableSchema.from_dict(schema)
    ev = evaluate_synthetic(fake, real, sch, classifier=False)
    dr = ev["data_resolution"]
    cols = {c["column"]: round(c["tv"], 4) for c in dr["columns"]}
    return {"tab": tab, "eps": eps, "seed": seed, "var": var, "tv2": dr["two_way"]["mean_tv"],
            "ind": round(dr["references"]["independent_marginals"]["two_way"]["mean_tv"], 4),
            "cols": cols}

if __name__ == "__main__":
    out, data = sys.argv[1:3]
    tabs = sys.argv[3].split(",")
    epss = [float(e) for e in sys.argv[4].split(",")]
    seeds = range(int(sys.argv[5]), int(sys.argv[6]))
    vars_ = sys.argv[7].split(",")
    jobs = [(t, e, s, v) for t in tabs for e in epss for s in seeds for v in vars_]
    import tune as me  # by reference: a worker keeps the module's defaults (DEFAULTS)
    res = Parallel(n_jobs=2, verbose=0)(delayed(me.one)(data, *j) for j in jobs)
    json.dump(res, open(out, "w"), indent=0)
    import collections
    agg = collections.defaultdict(list)
    for r in res:
        agg[(r["tab"], r["eps"], r["var"])].append(r)
    for (t, e, v), rs in sorted(agg.items()):
        cols = {k: np.mean([r["cols"][k] for r in rs]) for k in rs[0]["cols"]}
        print(f"{t:10s} eps {e:<4g} {v:28s} tv2 {np.mean([r['tv2'] for r in rs]):.4f} "
              "[" + ' '.join('%.3f' % r['tv2'] for r in rs) + f"] ind {rs[0]['ind']} "
              + " ".join(f"{k[:6]}={x:.3f}" for k, x in cols.items()))
