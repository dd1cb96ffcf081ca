"""Per-pair native 2-way TV (octiles) of methods on one table, eps and seed, by pair kind (not private: reads the real table).

    PYTHONPATH=src python docs/results/synth-one-way/anatomy.py TABLE EPS SEED METHOD,METHOD
"""
import sys, tempfile, itertools, json
from pathlib import Path
import numpy as np, pandas as pd
from oracledp.datasets import table_csv, table_schema
from oracledp.tabular import TableSchema
from oracledp.synth import TableSynthesizer
from oracledp.synth._table_evaluate import _column_codes, _tv

table, eps, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
methods = sys.argv[4].split(",")
path = table_csv(table, Path(tempfile.mkdtemp()) / f"{table}.csv", split="all")
schema = TableSchema.from_dict(table_schema(table))
real = pd.read_csv(path, dtype=str, keep_default_na=False)
out = {}
for m in methods:
    syn = TableSynthesizer(m, epsilon=eps, random_state=seed).fit(path, schema)
    fake = syn.sample(len(real), random_state=seed + 1000)
    cols = _column_codes(schema, real, fake, 8)
    one = {c[0]: _tv(c[2], c[3], c[4]) for c in cols}
    two = {}
    for i, j in itertools.combinations(range(len(cols)), 2):
        size = cols[i][4] * cols[j][4]
        a = cols[i][2] * cols[j][4] + cols[j][2]
        b = cols[i][3] * cols[j][4] + cols[j][3]
        two[f"{cols[i][0]}|{cols[j][0]}"] = (_tv(a, b, size), cols[i][1], cols[j][1])
    out[m] = (one, two)
    print(m, "mean2", np.mean([v[0] for v in two.values()]), flush=True)
names = list(out[methods[0]][0])
print("1-way:", *(f"{n}: " + " / ".join(f"{out[m][0][n]:.4f}" for m in methods) for n in names), sep="\n  ")
kinds = {}
for k, (v, a, b) in out[methods[0]][1].items():
    key = "-".join(sorted(["num" if a == "numeric" else "cat", "num" if b == "numeric" else "cat"]))
    kinds.setdefault(key, []).append(k)
for key, ks in kinds.items():
    print(key, len(ks), " / ".join(f"{np.mean([out[m][1][k][0] for k in ks]):.4f}" for m in methods))
diff = sorted(out[methods[0]][1], key=lambda k: out[methods[0]][1][k][0] - out[methods[-1]][1][k][0])
for k in diff[-12:]:
    print(k, " / ".join(f"{out[m][1][k][0]:.4f}" for m in methods))
