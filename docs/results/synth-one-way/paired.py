"""Paired differences of the kept rule against a share of 0.1 on the seeds checked after the
choice (106-117, held-out.log: each table and epsilon has a line '{}' for the default and one
with one_way_fraction 0.1). Mean +- standard error; run from the repository root.  The
means are of the log's four-decimal values, so they can differ from the log's own means in
the fourth decimal."""

import re
from pathlib import Path

import numpy as np

vals: dict[tuple[str, float, str], list[float]] = {}
for line in Path("docs/results/synth-one-way/held-out.log").read_text().splitlines():
    m = re.match(r"(\w+) eps=([\d.]+) (.*): .*\[(.*)\]", line)
    if m:
        kind = "old" if "one_way_fraction" in m.group(3) else "new"
        vals[(m.group(1), float(m.group(2)), kind)] = [float(x) for x in m.group(4).split(",")]
for table, eps in sorted({(t, e) for t, e, _ in vals}):
    if (table, eps, "old") not in vals or (table, eps, "new") not in vals:
        continue
    old, new = np.array(vals[(table, eps, "old")]), np.array(vals[(table, eps, "new")])
    d = new - old
    print(f"{table} eps={eps}: {len(d)} seeds, share 0.1 {old.mean():.4f}, kept rule "
          f"{new.mean():.4f}, difference {d.mean():+.4f} +- {d.std(ddof=1) / np.sqrt(len(d)):.4f}"
          f", worse on {int((d > 0).sum())}")
