"""How far the exact oracle's bounds are from the incumbent on a wide mixed table.

Runs the branch-and-bound for a while to get an incumbent U, then counts the numeric weight
vectors (all numeric coordinates fixed) whose branch bound is still <= U, and how many of
them the structured decomposition's cell-wise bound keeps
then tries the structured inner
problem (LP bound, then MIP) on the best of them.  A development measurement: its numbers
are quoted in the README's oracle section (health-insurance, eps = 1, draw 0).

Usage: python benchmarks/bound_gap.py [TABLE] [EPS] [SEED] [BRANCH_SECONDS] [INNER_COUNT]
       (default: health-insurance 1 0 30 40
       TABLE from benchmarks/oracle_suite.py)
"""
import sys
import time

import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
from oracle_suite import _table
from oracledp.learners._opdisc import opdisc_sigma
from oracledp.oracles import _structured as S
from oracledp.oracles._branch import BranchBoundOracle
from oracledp.oracles._halfspace import as_perturbation

args = sys.argv[1:] + ["health-insurance", "1", "0", "30", "40"][len(sys.argv) - 1:]
name, eps, seed = args[0], float(args[1]), int(args[2])
sys.argv = [sys.argv[0], *args]
pr = _table(name, False)["opdisc"]
sig = opdisc_sigma(eps, 1/pr.n**2, pr)
eta = np.random.default_rng(seed).normal(0, sig, pr.d + 1)
br = BranchBoundOracle(time_limit=float(sys.argv[4]) if len(sys.argv) > 4 else 30)
t = time.perf_counter()
r = br.solve(pr, eta)
print("branch", r.status, round(time.perf_counter() - t, 1), "obj", r.objective, "bound", r.bound)
U = r.objective
sp = pr.space
kmax, cap = sp.k_max, sp.k_norm2_max
pert = as_perturbation(sp, eta)
num_cols = np.flatnonzero(~pr.binary_columns)
cat_cols = np.flatnonzero(pr.binary_columns)
# numeric-only BFS with the branch bounds: reuse branch internals
data = br._data(pr)
vc_all = pert.value_cost
spread = vc_all.max(axis=1) - vc_all.min(axis=1)
order = br._order(data, spread)
nnum = len(num_cols)
assert set(order[:nnum]) == set(num_cols)
G, H = br._pert_tables(pert, order, kmax, cap)
Rnum = br._radius_tables(data, order, kmax, cap, np.int64, only=~data.binary)
cell_info = br._cell_tables(data, order, kmax, cap)
pos_g = np.flatnonzero(data.w_pos > 0)
neg_g = np.flatnonzero(data.w_neg > 0)
Rt = br._radius_tables(data, order, kmax, cap, np.int64)
vals = np.arange(-kmax, kmax + 1)
sq = vals * vals
Nord = data.N[:, order]
g = data.N.shape[0]
const = float(data.const)
S_, r_, fc_, K_ = np.zeros((1, g), dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(1), np.zeros((1, 0), dtype=np.int64)
t = time.perf_counter()
for lvl in range(nnum):
    rc = r_[:, None] + sq[None, :]
    ok = rc <= cap
    fcc = fc_[:, None] + vc_all[order[lvl]][None, :]
    plb = fcc + np.where(ok, H[lvl + 1, np.minimum(rc, cap)], np.inf) + const
    mi, vi = np.nonzero(ok & (plb <= U))
    out_S, out_lb = [], []
    for s0 in range(0, len(mi), 64):
        m2, v2 = mi[s0:s0+64], vi[s0:s0+64]
        Sc = S_[m2] + vals[v2][:, None] * Nord[:, lvl][None, :]
        rcc = rc[m2, v2]
        R = Rt(lvl + 1, cap - rcc)
        llb = (Sc <= -R).astype(float) @ data.w_pos + (Sc >= R).astype(float) @ data.w_neg
        cb = (br._cell_bound(Sc, Rnum(lvl + 1, cap - rcc), cap - rcc, cell_info[lvl + 1], data,
                             pos_g, neg_g) if cell_info[lvl + 1] is not None else 0.0)
        out_S.append(Sc)
        out_lb.append(plb[m2, v2] + np.maximum(llb, cb))
    Sc = np.concatenate(out_S)
    lb = np.concatenate(out_lb)
    keep = lb <= U
    S_, r_, fc_, K_ = Sc[keep], rc[mi, vi][keep], fcc[mi, vi][keep], np.hstack([K_[mi], vals[vi][:, None]])[keep]
    print("level", lvl, "kept", int(keep.sum()), "of", len(keep), round(time.perf_counter() - t, 1), "s", flush=True)
# leaves: V in original numeric column order
pos_in_order = {c: i for i, c in enumerate(order[:nnum])}
V = np.stack([K_[:, pos_in_order[c]] for c in num_cols], axis=1)
print("numeric leaves with bound <= U:", len(V))
orc = S.StructuredOracle(time_limit=60, max_candidates=10**9, workers=1)
Vn2 = (V ** 2).sum(axis=1)
B = (pr.N[:, cat_cols] // pr.Q).astype(np.int8)
cells, cog = np.unique(B, axis=0, return_inverse=True)
cog = cog.ravel()
cs = cells.sum(axis=1).astype(np.int64)
Tc = np.minimum(cs * kmax, np.floor(np.sqrt(cs * cap) + 1e-9)).astype(np.int64)
T = int(Tc.max())
t = time.perf_counter()
lt = S.StructuredOracle._loss_tables(pr, num_cols, V, cog, len(cells), T)
print("loss tables", round(time.perf_counter() - t, 1), "s", lt.shape)
prep = S._Prepared(num_cols=num_cols, cat_cols=cat_cols, V=V, Vn2=Vn2, cells=cells, n_cells=len(cells), cell_size=cs, T=T, T_cell=Tc, loss_tables=lt, models={})
slb = orc._lower_bounds(pr, prep, pert)
print("structured simple bound <= U:", int((slb <= U).sum()))
idx = np.flatnonzero(slb <= U)[np.argsort(slb[slb <= U])]
t = time.perf_counter()
n_lp = 0
n_mip = 0

count = int(sys.argv[5])
for vi in idx[:count]:
    st, val, u, b = orc._inner(pr, prep, int(vi), pert, U, 60, lp_threshold=U)
    n_lp += st == "lp_pruned"
    n_mip += st != "lp_pruned"
print("inner on", min(len(idx), count), "leaves: lp_pruned", n_lp, "mip", n_mip, "time", round(time.perf_counter() - t, 1))
