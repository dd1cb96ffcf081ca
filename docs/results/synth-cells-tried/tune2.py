"""Tuning runs of docs/results/synth-cells-tried (run from the repository root with
PYTHONPATH=src): docs/results/synth-cover/tune.py (same arguments, same output lines) with
module constants patched first.  PATCH is a comma-separated list of NAME=VALUE (a constant of
oracledp.synth._table_synthesizer) or MODULE.NAME=VALUE (a constant of oracledp.synth.MODULE),
e.g. PATCH=MODEL_BINS=16.  Not private: the evaluation reads the real table.

    PATCH=... python docs/results/synth-cells-tried/tune2.py TABLE EPSILONS FIRST LAST [JSON ...]
"""

import importlib
import os
import runpy

import oracledp.synth._table_synthesizer as ts

for kv in filter(None, os.environ.get("PATCH", "").split(",")):
    key, value = kv.split("=")
    mod = ts
    if "." in key:
        name, key = key.rsplit(".", 1)
        mod = importlib.import_module("oracledp.synth." + name)
    old = getattr(mod, key)
    setattr(mod, key, int(value) if isinstance(old, int) else type(old)(float(value)))

print(f"# PATCH={os.environ.get('PATCH', '')}", flush=True)
runpy.run_path("docs/results/synth-cover/tune.py", run_name="__main__")
