"""OR-Tools CP-SAT model of the monolithic MIP, with an explicit exact integer scaling.

Private helper of :mod:`oracledp.oracles._monolithic`, whose module docstring states the
formulation and why CP-SAT's bound is trusted at every scale: the objective is multiplied
by a power of two ``S`` and the noise coefficients rounded to integers, with worst-case
rounding error ``E``, so CP-SAT's integer bound ``B`` gives the valid bound
``n_total + (B - E) / S``.  Holds :class:`_CpSatModel` (built once per problem; a new
``eta`` rebuilds only the objective and hints the previous k; no-good clauses and a
cutoff on a copy of the model for the tie check).  OR-Tools is imported only inside
:class:`_CpSatModel` (it may not share a process with highspy, see
:mod:`oracledp.oracles._monolithic`).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles._base import OracleStatus
from oracledp.oracles._mono_structure import _Raw, _Structure

_CPSAT_PRECISION = 1e-9  # aim: worst-case rounding gap 2 E / S <= (d k_max + 1) / S <= this
_EXACT = 2.0**52  # magnitudes kept below this stay exact in float64 and int64


# --------------------------------------------------------------------------------------------
# CP-SAT
# --------------------------------------------------------------------------------------------
class _CpSatModel:
    def __init__(self, st: _Structure, time_limit: float, threads: int, verbose: bool) -> None:
        from ortools.sat.python import cp_model

        self._cp = cp_model
        self.st = st
        self.time_limit, self.threads, self.verbose = time_limit, threads, verbose
        m = cp_model.CpModel()
        vals = [int(a) for a in st.values]
        self.k = [m.new_int_var(-st.k_max, st.k_max, f"k{j}") for j in range(st.d)]
        sq_terms: list[Any] = []
        sq_coefs: list[int] = []
        self.z: list[list[Any]] = []
        for j in range(st.d):
            z = [m.new_bool_var(f"z{j}_{a}") for a in vals]
            self.z.append(z)
            m.add_at_most_one(z)
            m.add(self.k[j] == cp_model.LinearExpr.weighted_sum(z, vals))
            sq_terms += z
            sq_coefs += [a * a for a in vals]
        self.u = [m.new_bool_var(f"u{v}") for v in st.norms]
        m.add_exactly_one(self.u)
        m.add(
            cp_model.LinearExpr.weighted_sum(sq_terms, sq_coefs)
            == cp_model.LinearExpr.weighted_sum(self.u, [int(v) for v in st.norms])
        )

        def score(g: int) -> Any:
            row = st.N[g]
            nz = np.flatnonzero(row)
            return cp_model.LinearExpr.weighted_sum([self.k[j] for j in nz], [int(row[j]) for j in nz])

        self.a: dict[int, Any] = {}
        self.b: dict[int, Any] = {}
        for g in st.pos:
            self.a[int(g)] = lit = m.new_bool_var(f"a{g}")
            m.add(score(int(g)) >= 1).only_enforce_if(lit)
        for g in st.neg:
            self.b[int(g)] = lit = m.new_bool_var(f"b{g}")
            m.add(score(int(g)) <= -1).only_enforce_if(lit)
            if int(g) in self.a:
                m.add_bool_or([self.a[int(g)].Not(), lit.Not()])
        self.model = m
        self.loss_vars = list(self.a.values()) + list(self.b.values())
        self.loss_coefs = [int(st.n_pos[g]) for g in self.a] + [int(st.n_neg[g]) for g in self.b]
        self.shape = {"variables": len(m.proto.variables), "constraints": len(m.proto.constraints)}
        self.hint = np.zeros(st.d, dtype=np.int64)

    def _scaled_objective(self, eta: NDArray[np.float64]) -> tuple[float, list[int], list[int], float]:
        """Scale S = 2^s, integer noise coefficients, and the worst-case rounding error E."""
        st = self.st
        c_k, c_u = st.costs(eta)
        magnitude = st.n_total + st.k_max * float(np.abs(c_k).sum()) + float(np.abs(c_u).max()) + 1.0
        wanted = math.ceil(math.log2((st.d * st.k_max + 1) / _CPSAT_PRECISION))
        s = min(wanted, math.floor(math.log2(_EXACT / magnitude)))  # |objective| * S <= 2^52
        if s < 0:
            raise ValueError("objective too large for an exact integer scaling (n or |eta| ~ 2^52)")
        S = 2.0**s
        ck_s, cu_s = c_k * S, c_u * S  # exact: multiplication by a power of two
        ck_i, cu_i = np.rint(ck_s), np.rint(cu_s)
        E = st.k_max * float(np.abs(ck_i - ck_s).sum()) + float(np.abs(cu_i - cu_s).max())
        return S, [int(c) for c in ck_i], [int(c) for c in cu_i], E

    def solve(self, eta: NDArray[np.float64], exclude: list[NDArray[np.int64]] | None = None,
              cutoff: float = math.inf, time_limit: float | None = None) -> _Raw:
        """Solve for eta; ``exclude``: points to cut off and ``cutoff``: keep only points whose
        true objective may be below it (both on a copy of the model, exact integers)."""
        cp_model, st = self._cp, self.st
        S, ck, cu, E = self._scaled_objective(eta)
        iS = int(S)
        self.model.clear_hints()  # start from the previous answer (k = 0 at first)
        for var, value in zip(self.k, self.hint, strict=True):
            self.model.add_hint(var, int(value))
        coefs = [-iS * c for c in self.loss_coefs] + ck + cu
        self.model.minimize(
            cp_model.LinearExpr.weighted_sum(self.loss_vars + self.k + self.u, coefs)
        )
        model = self.model
        if exclude or math.isfinite(cutoff):
            model = self.model.clone()
            lit = model.get_bool_var_from_proto_index
            for k in exclude or []:
                clause = []
                for j, kj in enumerate(np.asarray(k, dtype=np.int64)):
                    if kj == 0:
                        clause += [lit(z.index) for z in self.z[j]]
                    else:
                        a = int(np.flatnonzero(st.values == kj)[0])
                        clause.append(lit(self.z[j][a].index).Not())
                model.add_bool_or(clause)
            if math.isfinite(cutoff):
                # a point whose true objective is below the cutoff has a scaled objective
                # below S (cutoff - n_total) + E: keep exactly those (integer arithmetic)
                rhs = math.floor(S * (cutoff - st.n_total) + E)
                variables = [model.get_int_var_from_proto_index(v.index)
                             for v in self.loss_vars + self.k + self.u]
                model.add(cp_model.LinearExpr.weighted_sum(variables, coefs) <= rhs)
        solver = cp_model.CpSolver()
        p = solver.parameters
        p.max_time_in_seconds = float(self.time_limit if time_limit is None
                                      else max(time_limit, 1e-3))
        p.num_workers = int(self.threads)
        p.log_search_progress = bool(self.verbose)
        p.absolute_gap_limit = 0.0
        p.relative_gap_limit = 0.0
        p.random_seed = 0
        t = time.perf_counter()
        code = solver.solve(model)
        solve_s = time.perf_counter() - t
        status = {
            cp_model.OPTIMAL: OracleStatus.OPTIMAL,
            cp_model.FEASIBLE: OracleStatus.TIME_LIMIT,  # only a limit stops a feasible search
            cp_model.UNKNOWN: OracleStatus.TIME_LIMIT,
            cp_model.INFEASIBLE: OracleStatus.INFEASIBLE,
        }.get(code, OracleStatus.ERROR)
        k = None
        if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            k = np.array([solver.value(v) for v in self.k], dtype=np.int64)
            self.hint = k
        B = float(solver.best_objective_bound)
        if status is OracleStatus.INFEASIBLE:
            bound = math.inf
        elif k is not None and math.isfinite(B) and abs(B) < _EXACT:
            # (with no solution, status UNKNOWN, the response's bound is an unset 0)
            # valid for the true objective: the rounding moves any point by at most E / S;
            # the last term covers float rounding in the exact re-evaluation (~1e-16 relative)
            bound = st.n_total + (B - E) / S
            bound -= 4 * np.finfo(float).eps * (st.n_total + float(np.abs(eta).sum()) + 1.0)
        else:
            bound = -math.inf
        return _Raw(
            k,
            float(bound),
            status,
            {
                "solver_status": solver.status_name(code),
                "scale": S,
                "rounding_bound": E / S,
                "branches": int(solver.num_branches),
                "solve_s": solve_s,
                "bound_trusted": True,  # exact integer arithmetic
            },
        )
