"""The share at the fill value 50 of sweep 12's messy_clean score, real (after filling) and
synthetic (the default method):  python fill_share.py DATA EPSILONS FIRST LAST  from the
repository root with PYTHONPATH=src, DATA the directory gen.py wrote.  Not private."""
import sys, json
import numpy as np, pandas as pd
from oracledp.synth import TableSynthesizer
from oracledp.tabular import TableSchema
schema = TableSchema.from_dict(json.load(open("docs/results/synth-sweep-12/messy_clean_fill.schema.json")))
df = pd.read_csv(f"{sys.argv[1]}/messy_clean.csv", dtype=str, keep_default_na=False)
real = pd.to_numeric(df["score"].replace("", "50"), errors="coerce")
print("real share at 50:", round(float((real == 50).mean()), 4), "49-51 excl 50:", round(float(((real >= 49) & (real <= 51) & (real != 50)).mean()), 4))
for eps in map(float, sys.argv[2].split(",")):
    for seed in range(int(sys.argv[3]), int(sys.argv[4])):
        syn = TableSynthesizer(epsilon=eps, random_state=seed).fit(df, schema)
        s = pd.to_numeric(syn.sample(len(df), random_state=seed)["score"])
        print(eps, seed, "at 50:", round(float((s == 50).mean()), 4), "49-51 excl 50:", round(float(((s >= 49) & (s <= 51) & (s != 50)).mean()), 4), flush=True)
