"""The patch behind more-seeds-*.log's "no floor" runs (commit 9790b56): floor_rounds set to 0.
Arguments as tune.py."""

import runpy
import sys

import oracledp.synth._oracle_query_pgm as q

q.floor_rounds = lambda *a, **k: 0
print("no floor (floor_rounds patched to 0)", flush=True)
sys.argv = ["tune.py", *sys.argv[1:]]
runpy.run_path("docs/results/synth-cover/tune.py", run_name="__main__")
