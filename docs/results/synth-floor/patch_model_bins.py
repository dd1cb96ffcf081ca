"""The patch behind tried-eps2.log's model_bins runs (commit bff4f46): the numeric columns held
on MB bins (MODEL_BINS) instead of 10.  MB=16 python patch_model_bins.py TABLE EPS FIRST LAST,
as tune.py."""

import os
import runpy
import sys

import oracledp.synth._table_synthesizer as ts

mb = int(os.environ.get("MB", "10"))
ts.MODEL_BINS = mb
print("model_bins", mb, flush=True)
sys.argv = ["tune.py", *sys.argv[1:]]
runpy.run_path("docs/results/synth-cover/tune.py", run_name="__main__")
