"""Tuning runs of docs/results/synth-cells-tried (run from the repository root with
PYTHONPATH=src): docs/results/synth-cover/tune.py with module constants patched first.
PATCH is a comma-separated list of NAME=VALUE (a constant of
oracledp.synth._table_synthesizer) or MODULE.NAME=VALUE (a constant of oracledp.synth.MODULE),
e.g. PATCH=MODEL_BINS=16.  Not private: the evaluation reads the real table.

    PATCH=... python docs/results/synth-cells-tried/tune2.py TABLE EPSILONS FIRST LAST [JSON ...]
"""

import importlib
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, "benchmarks")
import _synth_grid as g
import oracledp.synth._table_synthesizer as ts
from oracledp.datasets import table_csv, table_schema
from oracledp.tabular import TableSchema

for kv in filter(None, os.environ.get("PATCH", "").split(",")):
    key, value = kv.split("=")
    mod = ts
    if "." in key:
        name, key = key.rsplit(".", 1)
        mod = importlib.import_module("oracledp.synth." + name)
    old = getattr(mod, key)
    setattr(mod, key, int(value) if isinstance(old, int) else type(old)(float(value)))

table = sys.argv[1]
epsilons = [float(x) for x in sys.argv[2].split(",")]
seeds = range(int(sys.argv[3]), int(sys.argv[4]))
variants = [json.loads(v) for v in sys.argv[5:]] or [{}]
path = table_csv(table, Path(tempfile.mkdtemp()) / f"{table}.csv", split="all")
schema = TableSchema.from_dict(table_schema(table))
real = pd.read_csv(path, dtype=str, keep_default_na=False)
for e in epsilons:
    for v in variants:
        res = np.array([g.run_one(table, "oracle-query-pgm", e, s, path, real, schema, v)[0]
                        .get("native_2way_tv", float("nan")) for s in seeds])
        print(f"{os.environ.get('PATCH', '')} {table} eps={e} {json.dumps(v)}: "
              f"{res.mean():.4f} ± {res.std(ddof=1) / np.sqrt(len(res)):.4f}  "
              f"{np.round(res, 4).tolist()}", flush=True)
