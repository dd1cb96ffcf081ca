"""nhefs with the first form of floor_rounds (50 rounds) against no floor on the seeds checked
after the choice: seeds 106-117 (more-seeds-nhefs.log) and the benchmark's 0-2 (the first form
in ../synth-floor-bench/run.log, no floor in ../synth-cover-bench/runs.json). Paired differences,
mean +- standard error. Run from the repository root."""

import json
import re
from pathlib import Path

import numpy as np

here = Path("docs/results/synth-floor")
vals: dict[tuple[str, float], list[float]] = {}
mode = ""
for line in (here / "more-seeds-nhefs.log").read_text().splitlines():
    if line.startswith("no floor"):
        mode = "old"
    elif line.startswith("floor"):
        mode = "new"
    m = re.match(r"nhefs eps=([\d.]+) .*\[(.*)\]", line)
    if m:
        vals[(mode, float(m.group(1)))] = [float(x) for x in m.group(2).split(",")]
before = json.loads(Path("docs/results/synth-cover-bench/runs.json").read_text())["runs"]
first = {}  # (eps, seed) -> native 2-way TV of the first form, from the benchmark's console log
for line in Path("docs/results/synth-floor-bench/run.log").read_text().splitlines():
    f = line.split()
    if f[:2] == ["nhefs", "oracle-query-pgm"]:
        first[(float(f[2]), int(f[3]))] = float(f[6])
for eps in (0.5, 1.0, 2.0):
    old = vals[("old", eps)] + [r["native_2way_tv"] for r in sorted(before, key=lambda r: r["seed"])
                                if r["table"] == "nhefs" and r["eps"] == eps
                                and r["method"] == "oracle-query-pgm"]
    new = vals[("new", eps)] + [first[(eps, s)] for s in (0, 1, 2)]
    d = np.array(new) - np.array(old)
    print(f"nhefs eps={eps}: {len(d)} seeds, no floor {np.mean(old):.4f}, 50 rounds "
          f"{np.mean(new):.4f}, difference {d.mean():+.4f} +- {d.std(ddof=1) / np.sqrt(len(d)):.4f}"
          f", worse on {int((d > 0).sum())}")
