"""The temporary patch behind everywhere.log (commit 3498234): OracleQueryPGM's 1-way share
owf = max(0.1, K d / (T + K d)) where rounds select (not 'all').
KAPPA=1 python patch_owf.py SCRIPT ARGS..."""
import math, os, runpy, sys
import oracledp.synth._oracle_query_pgm as q
from oracledp.privacy import zcdp_rho

K = float(os.environ.get("KAPPA", "1"))

def _plan(self, d, T, *, select=True):
    rho = zcdp_rho(self.epsilon, self.delta)
    owf = self.one_way_fraction
    if select and owf == 0.1:
        owf = max(0.1, K * d / (T + K * d))
    rho_one = owf * rho / d
    rho_round = (1.0 - owf) * rho / T
    rho_sel = self.selection_fraction * rho_round if select else 0.0
    rho_meas = rho_round - rho_sel
    return rho, 1.0 / math.sqrt(rho_one), math.sqrt(8.0 * rho_sel), 1.0 / math.sqrt(rho_meas)

q.OracleQueryPGM._plan = _plan
print("kappa", K, flush=True)
script = sys.argv[1]
sys.argv = [script, *sys.argv[2:]]
runpy.run_path(script, run_name="__main__")
