"""A declared fill value's heap through the default fit (docs/results/synth-fill-heap).

    PYTHONPATH=src python docs/results/synth-fill-heap/run.py EPSILONS FIRST LAST  (from the root)

The table of tests/synth/test_bound_heaps.py::test_a_fill_values_heap_through_the_fit (1,500
scores declared 0-100 by 0.1, 8 % missing cells filled with 50, a dept column): for each
epsilon and seed, the synthetic share at 50 with the fill value passed to tree_histogram as a
heap (the code) and without (heaps ignored).  Not private: it reads the real table.
"""
import sys

import numpy as np
import pandas as pd

import oracledp.synth._numeric as nm
from oracledp.synth import TableSynthesizer

sys.path.insert(0, "tests/synth")
from test_bound_heaps import fill_table  # the test's table

data, schema = fill_table()
n = len(data)
real = pd.to_numeric(data["score"].replace("", "50"))
print(f"real share at 50: {(real == 50).mean():.4f}")
plain = nm.tree_histogram


def share(eps, seed):
    s = TableSynthesizer(epsilon=eps, random_state=seed).fit(data, schema).sample(
        n, random_state=seed)["score"]
    return float((s == 50).mean())


print("eps seed  with-heap  without")
for eps in map(float, sys.argv[1].split(",")):
    on, off = [], []
    for seed in range(int(sys.argv[2]), int(sys.argv[3])):
        nm.tree_histogram = plain
        on.append(share(eps, seed))
        nm.tree_histogram = lambda *a, heaps=(), **k: plain(*a, **k)
        off.append(share(eps, seed))
        print(f"{eps:3g} {seed:4d}  {on[-1]:.4f}     {off[-1]:.4f}", flush=True)
    print(f"{eps:3g} mean  {np.mean(on):.4f}     {np.mean(off):.4f}")
nm.tree_histogram = plain
