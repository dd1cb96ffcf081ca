"""Wall time of TableSynthesizer.fit with one round (the data pass and the numeric histograms
dominate) on the health-panel stand-in drawn at N rows, three fits:

    PYTHONPATH=src python docs/results/synth-flat/speed.py N

Run from a checkout of each commit compared (e.g. a git worktree), one after the other on the
same machine.
"""
import sys
import time

sys.path.insert(0, "benchmarks")
import synth_health_panel as P  # noqa: E402
from oracledp.synth import TableSynthesizer  # noqa: E402
from oracledp.tabular import TableSchema  # noqa: E402

n = int(sys.argv[1])
real = P.table(n, 0)
schema = TableSchema.from_dict(P.SCHEMA)
ts = []
for rep in range(3):
    t0 = time.perf_counter()
    TableSynthesizer("oracle-query-pgm", epsilon=1.0, random_state=rep,
                     options={"rounds": 1}).fit(real, schema)
    ts.append(time.perf_counter() - t0)
print(f"n={n} fit (1 round) " + " ".join(f"{t:.2f}s" for t in ts), flush=True)
