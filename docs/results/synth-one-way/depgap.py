"""The dependence of each pair of numeric columns (TV of the real joint against the product of
its marginals) at 5, 8 and 10 real quantile bins (not private).  python depgap.py TABLE"""
import sys, tempfile, itertools
from pathlib import Path
import numpy as np, pandas as pd
from oracledp.datasets import table_csv, table_schema
from oracledp.tabular import TableSchema
from oracledp.synth._table_evaluate import _column_codes
table = sys.argv[1]
path = table_csv(table, Path(tempfile.mkdtemp()) / f"{table}.csv", split="all")
schema = TableSchema.from_dict(table_schema(table))
real = pd.read_csv(path, dtype=str, keep_default_na=False)
res = {}
for q in (5, 8, 10):
    cols = _column_codes(schema, real, real, q)
    for i, j in itertools.combinations(range(len(cols)), 2):
        if cols[i][1] != "numeric" or cols[j][1] != "numeric":
            continue
        a, b = cols[i][2], cols[j][2]
        size = cols[i][4] * cols[j][4]
        p = np.bincount(a * cols[j][4] + b, minlength=size) / len(a)
        ind = np.outer(np.bincount(a, minlength=cols[i][4]), np.bincount(b, minlength=cols[j][4])).ravel() / len(a) ** 2
        res.setdefault(f"{cols[i][0]}|{cols[j][0]}", []).append(round(0.5 * np.abs(p - ind).sum(), 4))
for k, v in res.items():
    print(k, v)
