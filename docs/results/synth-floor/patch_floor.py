"""The temporary patch behind tried-floor-everywhere.log (run from the repository root with
PYTHONPATH=src at commit bff4f46, before floor_rounds existed): default_rounds raised to
min(100, int(FLOOR (d - 1))) wherever that is more and the selection budget there, with the
default shares 0.25 and 0.9, is at least 0.01.  FLOOR=3 python patch_floor.py TABLE EPS FIRST
LAST, as tune.py.  (The panel runs imported the same patch before
benchmarks/synth_health_panel.py.)"""

import math
import os
import runpy
import sys

import oracledp.synth._oracle_query_pgm as q
from oracledp.privacy import zcdp_rho

orig = q.default_rounds
span = float(os.environ.get("FLOOR", "3"))


def patched(n, epsilon, delta, d, *, max_rounds=100, divisor=100.0):  # type: ignore[no-untyped-def]
    T = orig(n, epsilon, delta, d, max_rounds=max_rounds, divisor=divisor)
    rho = zcdp_rho(epsilon, delta)
    F = min(max_rounds, int(span * (d - 1)))
    if F > T and math.sqrt(8 * 0.25 * 0.9 * rho / F) >= 0.01:
        return F
    return T


q.default_rounds = patched
print("floor", span, flush=True)
sys.argv = ["tune.py", *sys.argv[1:]]
runpy.run_path("docs/results/synth-cover/tune.py", run_name="__main__")
