import json, sys, numpy as np
from collections import defaultdict
res = json.load(open(sys.argv[1]))
by = defaultdict(dict)
for r in res:
    by[(r['tab'], r['eps'], r['seed'])][r['on']] = r
cells = defaultdict(list)
for (t, e, s), d in by.items():
    if len(d) == 2: cells[(t, e)].append(d)
print('table eps | tv2 off on diff+-se | per col: tv off/on ; lo real/off/on ; hi real/off/on')
for (t, e), ds in sorted(cells.items()):
    off = np.array([d[False]['tv2'] for d in ds]); on = np.array([d[True]['tv2'] for d in ds])
    diff = on - off
    line = f"{t:9s} {e:3.1f} n{len(ds)} | {off.mean():.4f} {on.mean():.4f} {diff.mean():+.4f}+-{diff.std(ddof=1)/np.sqrt(len(ds)) if len(ds)>1 else 0:.4f} |"
    for c in ds[0][False]['cols']:
        g = lambda k, v: np.mean([d[v]['cols'][c][k] for d in ds])
        line += f" {c}: tv {g('tv',False):.3f}/{g('tv',True):.3f}; lo {g('lo_r',False):.3f}/{g('lo_s',False):.3f}/{g('lo_s',True):.3f}; hi {g('hi_r',False):.3f}/{g('hi_s',False):.3f}/{g('hi_s',True):.3f} |"
    print(line)
