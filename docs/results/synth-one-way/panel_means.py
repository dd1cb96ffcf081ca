"""The health-panel stand-in's means over seeds 100-105 quoted in README.md and the docs: mean
2-way TV at the octiles and at 5 / 10 / 16 quantiles, for the default
(../synth-floor/panel-default/), the share everywhere (everywhere-panel/) and the kept rule
(kept-panel/), from each run's results.json (benchmarks/synth_health_panel.py --seeds 6
--first-seed 100 --quantiles 5 10 16).  Run from the repository root."""

import json
from pathlib import Path

import numpy as np

for name, path in (("default", "docs/results/synth-floor/panel-default"),
                   ("share everywhere", "docs/results/synth-one-way/everywhere-panel"),
                   ("kept rule", "docs/results/synth-one-way/kept-panel")):
    runs = json.loads((Path(path) / "results.json").read_text())["runs"]
    octiles = np.mean([r["mean_2way_tv"] for r in runs])
    other = {q: np.mean([r["other_quantiles"][q]["mean_2way_tv"] for r in runs])
             for q in runs[0]["other_quantiles"]}
    print(f"{name}: octiles {octiles:.4f}; "
          + ", ".join(f"{q} quantiles {v:.4f}" for q, v in other.items()))
