"""Prints tune.py's JSON: per table, epsilon and variant, the mean 2-way TV and each numeric column's
1-way TV, W1 / range, synthetic / real mean and share outside the real range (means over seeds).

    python docs/results/synth-far-tails/show.py OUT.json [...]
"""
import json, sys, collections
import numpy as np
res = [r for f in sys.argv[1:] for r in json.load(open(f))]
g = collections.defaultdict(list)
for r in res: g[(r['tab'], r['eps'], r['variant'])].append(r)
for (tab, eps, var), rs in sorted(g.items()):
    line = f"{tab:6s} {eps:4} {var:10s} n={len(rs)} tv2 {np.mean([r['tv2'] for r in rs]):.4f}"
    for c in rs[0]['cols']:
        ms = np.mean([r['cols'][c]['ms'] for r in rs]); mr = rs[0]['cols'][c]['mr']
        line += f" | {c}: tv {np.mean([r['cols'][c]['tv'] for r in rs]):.3f} w1 {np.mean([r['cols'][c]['w1'] for r in rs]):.4f} mean {ms:.4g}/{mr:.4g} out {np.mean([r['cols'][c]['out'] for r in rs]):.3f}"
    print(line)
