"""Blood pressures heaped at multiples of 10 (sweep 9's clinical.csv, from gen.py here): the
default's synthetic share at multiples of 10, the column's 1-way TV at the real octiles and the
mean 2-way TV, per epsilon, averaged over tuning seeds 100-103.

    PYTHONPATH=../../../../src python heaps.py > heaps.txt   (after python gen.py)
"""
import json

import numpy as np
import pandas as pd

from oracledp.synth import TableSynthesizer, evaluate_synthetic
from oracledp.tabular import TableSchema

real = pd.read_csv("clinical.csv")
sch = TableSchema.from_dict(json.load(open("clinical.schema.json")))
print("real share at multiples of 10: %.3f" % (real.sbp % 10 == 0).mean())
for eps in (0.5, 1.0, 3.0):
    res = []
    for seed in range(100, 104):
        f = TableSynthesizer("oracle-query-pgm", epsilon=eps, random_state=seed).fit(
            real, sch).sample(len(real), random_state=seed + 100)
        ev = evaluate_synthetic(f, real, sch, classifier=False, orders=(1, 2))
        cc = {c["column"]: c for c in ev["data_resolution"]["columns"]}
        res.append([ev["data_resolution"]["two_way"]["mean_tv"], (f.sbp % 10 == 0).mean(),
                    cc["sbp"]["tv"]])
    r = np.array(res).mean(0)
    print(f"eps {eps}: mean 2-way TV {r[0]:.4f}, sbp at multiples of 10 {r[1]:.3f}, "
          f"sbp 1-way TV {r[2]:.3f}", flush=True)
