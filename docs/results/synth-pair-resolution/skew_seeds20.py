import sys, numpy as np
sys.path.insert(0, "benchmarks")
from synth_skewed_column import table, SCHEMA
from oracledp.synth import TableSynthesizer, evaluate_synthetic
from oracledp.tabular import TableSchema
real = table(3000)
schema = TableSchema.from_dict(SCHEMA)
for cfg in ("select",):
    v = []
    for seed in [*range(0, 10), *range(100, 110)]:
        s = TableSynthesizer(epsilon=1.0, random_state=seed, options={"pair_resolution": cfg}).fit(real, schema)
        fake = s.sample(3000, random_state=seed + 1)
        r = evaluate_synthetic(fake, real, schema, bins=s.table_domain_.bins, classifier=False, random_state=seed)
        v.append(r["data_resolution"]["two_way"]["mean_tv"])
    print(cfg, " ".join(f"{x:.4f}" for x in v), f"mean {np.mean(v):.4f} se {np.std(v, ddof=1)/np.sqrt(len(v)):.4f}", flush=True)
