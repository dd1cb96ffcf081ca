"""A column with one heap (docs/results/synth-heap; not private: reads the real table).

A new user's table (2026-11-30): 5,000 rows; ``heap`` on 0-50 step 0.1 with 39.5 % of the
rows at 12.3 and the rest uniform on the grid (about 0.12 % a value), ``temp`` uniform on
-30-45 step 0.1 (a control without a heap), a binary ``label``.  Fits ``TableSynthesizer``
(METHOD, epsilon 1) for seeds 0-2, samples 5,000 rows, and prints for ``heap``: the share at
12.3, the largest share at any other value (real: about 0.2 %), the distinct values, and the
TV at 2.5-unit bins, beside a resample of the real rows.  Run with the code to test on
PYTHONPATH:

    PYTHONPATH=src python docs/results/synth-heap/heap_table.py [METHOD ...]
"""

import sys

import numpy as np
import pandas as pd

from oracledp.synth import TableSynthesizer
from oracledp.tabular import TableSchema

rng = np.random.default_rng(2026)
n = 5000
heap = np.where(rng.random(n) < 0.395, 123, rng.integers(0, 501, n)) / 10
temp = rng.integers(0, 751, n) / 10 - 30
label = np.where(rng.random(n) < 0.5 + 0.3 * (temp > 10), "warm", "cold")
real = pd.DataFrame({"temp": temp, "heap": heap, "label": label})
schema = TableSchema.from_dict({
    "target": {"name": "label", "labels": ["cold", "warm"]},
    "columns": [{"name": "temp", "type": "numeric", "lower": -30, "upper": 45, "step": 0.1},
                {"name": "heap", "type": "numeric", "lower": 0, "upper": 50, "step": 0.1}]})
edges = np.arange(0, 52.5, 2.5)


def tv(a: pd.Series, b: pd.Series) -> float:
    ha = np.histogram(a, edges)[0] / len(a)
    hb = np.histogram(b, edges)[0] / len(b)
    return float(0.5 * np.abs(ha - hb).sum())


boot = real.sample(n, replace=True, random_state=1)
print(f"real: at 12.3 {np.mean(real.heap == 12.3):.3f}, largest other "
      f"{real.heap[real.heap != 12.3].round(1).value_counts().max() / n:.4f},"
      f" distinct {real.heap.nunique()}; resample TV at 2.5-unit bins {tv(real.heap, boot.heap):.3f}")
for method in sys.argv[1:] or ["oracle-query-pgm", "independent"]:
    for seed in range(3):
        syn = TableSynthesizer(method, epsilon=1.0, random_state=seed).fit(real, schema)
        fake = syn.sample(n, random_state=seed + 1000)
        h = fake.heap.round(1)
        other = h[h != 12.3].value_counts() / n
        print(f"{method:17} seed {seed}: at 12.3 {np.mean(h == 12.3):.3f}, largest other "
              f"{other.max():.4f} (at {other.idxmax():g}), distinct {h.nunique()}, TV at "
              f"2.5-unit bins {tv(real.heap, fake.heap):.3f}", flush=True)
