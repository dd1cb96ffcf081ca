"""Tuning runs of docs/results/synth-cover (run from the repository root with PYTHONPATH=src):
the default (TableSynthesizer "oracle-query-pgm", benchmarks/_synth_grid.py's run_one: fit,
sample as many rows, native 2-way TV) on TABLE at EPSILONS (comma-separated) for seeds
FIRST..LAST-1, with optional TableSynthesizer keyword sets as JSON (e.g.
'{"options": {"selection": "l1"}}').

    python docs/results/synth-cover/tune.py TABLE EPSILONS FIRST LAST [JSON ...]
"""

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, "benchmarks")
import _synth_grid as g
from oracledp.datasets import table_csv, table_schema
from oracledp.tabular import TableSchema

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
        print(f"{table} eps={e} {json.dumps(v)}: {res.mean():.4f} ± "
              f"{res.std(ddof=1) / np.sqrt(len(res)):.4f}  {np.round(res, 4).tolist()}",
              flush=True)
