"""Per-pair 2-way TV at the real octiles (docs/results/synth-cells-tried; not private: reads
the real table).  Run from the repository root with PYTHONPATH=src:

    [OUT=pairs.json] python docs/results/synth-cells-tried/pairs.py TABLE METHOD EPS FIRST LAST

Fits ``TableSynthesizer(METHOD, epsilon=EPS, random_state=seed)`` on the whole bundled TABLE
for seeds FIRST..LAST-1, samples as many rows (``random_state=seed + 1000``, as
benchmarks/_synth_grid.py does), and prints each seed's mean 2-way TV at the real octiles,
then the mean over seeds by kind of pair (categorical, numeric, target).  OUT: the mean TV of
every pair as JSON.
"""

import itertools
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from oracledp.datasets import table_csv, table_schema
from oracledp.synth import TableSynthesizer
from oracledp.synth._table_evaluate import _column_codes, _tv
from oracledp.tabular import TableSchema

table, method, eps = sys.argv[1], sys.argv[2], float(sys.argv[3])
seeds = range(int(sys.argv[4]), int(sys.argv[5]))
path = table_csv(table, Path(tempfile.mkdtemp()) / f"{table}.csv", split="all")
schema = TableSchema.from_dict(table_schema(table))
real = pd.read_csv(path, dtype=str, keep_default_na=False)
acc: dict[tuple[str, str], list[float]] = {}
kinds: dict[str, str] = {}
for s in seeds:
    syn = TableSynthesizer(method, epsilon=eps, random_state=s).fit(path, schema)
    fake = syn.sample(len(real), random_state=s + 1000)
    cols = _column_codes(schema, real, fake, 8)
    kinds = {c[0]: c[1] for c in cols}
    res = {}
    for i, j in itertools.combinations(range(len(cols)), 2):
        a = cols[i][2] * cols[j][4] + cols[j][2]
        b = cols[i][3] * cols[j][4] + cols[j][3]
        res[(cols[i][0], cols[j][0])] = _tv(a, b, cols[i][4] * cols[j][4])
    for k, v in res.items():
        acc.setdefault(k, []).append(v)
    print(s, round(float(np.mean(list(res.values()))), 4), flush=True)
m = {k: float(np.mean(v)) for k, v in acc.items()}
print("mean", round(float(np.mean(list(m.values()))), 4))
groups: dict[str, list[float]] = {}
for (a, b), v in m.items():
    groups.setdefault("-".join(sorted([kinds[a][:3], kinds[b][:3]])), []).append(v)
for k, v in groups.items():
    print(k, len(v), "pairs, mean", round(float(np.mean(v)), 4))
if os.environ.get("OUT"):
    Path(os.environ["OUT"]).write_text(json.dumps({"|".join(k): v for k, v in m.items()}))
