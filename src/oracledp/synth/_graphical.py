"""Private-PGM estimation over a junction tree: the product domain is never materialized.

The problem is the one of :mod:`oracledp.synth._estimation` (McKenna, Sheldon, Miklau 2019,
problem (2)): given noisy marginal count tables ``y_r`` over attribute sets ``C_r`` with
Gaussian noise ``sigma_r``, minimize

    L(p) = 1/2 sum_r w_r || M_r p - y_r / n ||_2^2,     w_r = (n / sigma_r)^2.

Entropic mirror descent started from the uniform distribution keeps every iterate in the
exponential family ``p(x) ∝ exp(sum_r phi_r(x_{C_r}))``: the update ``p <- p exp(-eta
grad L(p)) / Z`` with ``grad L(p)(x) = sum_r w_r (M_r p - y_r / n)(x_{C_r})`` only adds
``-eta w_r (M_r p - y_r / n)`` to each ``phi_r``.  So the iterates are those of mirror
descent on the dense vector ``p`` (one probability per cell of the product domain; the
tests keep that dense version as a reference), but held as the potentials ``phi_r`` of a
graphical model.  Everything the update and its step-size test need is a marginal of ``p`` on a measured set or the log
partition function, which belief propagation on a junction tree computes exactly:

* the junction tree of the measured sets (:mod:`oracledp.synth._junction_tree`: a greedy
  triangulation and a maximum-weight spanning tree of its cliques);
* each measured set is assigned to one clique containing it; the clique's log-potential
  is the sum of its sets' ``phi_r``;
* sum-product in log space (one pass up, one pass down) gives every clique marginal
  ``mu_C`` and ``log Z``.

Step sizes: the same Armijo backtracking on the relative-smoothness inequality
``L(q) <= L(p) + <grad, q - p> + KL(q || p) / eta`` as on the dense vector, with
``<grad, q - p> = sum_r w_r <res_r(p), M_r q - M_r p>`` and
``KL(q || p) = -eta E_q[grad] - (log Z(q) - log Z(p))``, both from marginals.  The memory
is the junction tree's cells (``cells``), not the product domain's.  The tree is the
triangulation of the measured sets, or one given by the caller that holds every measured
set (one clique over all attributes: the product domain itself, for small domains).

Released models answer any marginal (pruning the tree to the cliques that carry the
asked attributes, then contracting ``prod mu_C / prod mu_S``) and draw records by forward
sampling along the tree (the root clique from its marginal, then every clique's new
attributes from their conditional given its separator; :mod:`oracledp.synth._sampling`:
counts rounded at random by default, or independent records).  All of it is
post-processing of the measurements.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp._validation import RandomLike, check_rng, check_sample_size
from oracledp.synth._estimation import (
    MarginalMeasurement,
    expand,
    loss_terms,
    mirror_descent_step,
    project,
    project_index,
)
from oracledp.synth._junction_tree import JunctionTree
from oracledp.synth._workload import cells_text

__all__ = ["GraphicalModel", "estimate_model", "model_of_tables"]

#: Most cells of a marginal table (or of :meth:`GraphicalModel.dense`) that is materialized:
#: 50,000,000 floats are 400 MB.
_DENSE_CELLS = 50_000_000
#: A clique of more cells than this sums its measured sets' potentials in and their
#: marginals out by matrix products (:class:`_MarginalOperator`; faster on big cliques, the
#: same up to rounding), a smaller one by direct sums.
_OPERATOR_CELLS = 1 << 18


def _expand(arr: NDArray[np.float64], sub: Sequence[int], clique: Sequence[int],
            shape: Sequence[int]) -> NDArray[np.float64]:
    """``arr`` over the sorted ``sub`` (a subset of the sorted ``clique``), broadcastable."""
    s = set(sub)
    return arr.reshape([shape[a] if a in s else 1 for a in clique])


def _sum_to(arr: NDArray[np.float64], clique: Sequence[int], keep: Sequence[int]
            ) -> NDArray[np.float64]:
    k = set(keep)
    axes = tuple(j for j, a in enumerate(clique) if a not in k)
    return arr.sum(axis=axes) if axes else arr


def _lse_to(arr: NDArray[np.float64], clique: Sequence[int], keep: Sequence[int]
            ) -> NDArray[np.float64]:
    """log sum exp of ``arr`` (over ``clique``) down to the attributes ``keep``."""
    k = set(keep)
    axes = tuple(j for j, a in enumerate(clique) if a not in k)
    if not axes:
        return arr
    mx = arr.max(axis=axes, keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    with np.errstate(divide="ignore"):  # no mass: log 0 = -inf
        out = np.log(np.exp(arr - mx).sum(axis=axes, keepdims=True)) + mx
    return out.reshape([s for j, s in enumerate(arr.shape) if j not in axes])


def _lse_keep(arr: NDArray[np.float64], axes: tuple[int, ...]) -> NDArray[np.float64]:
    """log sum exp of ``arr`` over ``axes``, kept as axes of length 1 (as :func:`_lse_to`);
    the caller silences log 0."""
    if not axes:
        return arr
    mx = arr.max(axis=axes, keepdims=True)
    if not np.isfinite(mx).all():
        mx = np.where(np.isfinite(mx), mx, 0.0)
    return np.log(np.exp(arr - mx).sum(axis=axes, keepdims=True)) + mx


def _calibration_plan(jt: JunctionTree) -> list[Any]:
    """Per clique (not the root): the axes summed out for its separator, the separator's
    shape in its parent's layout, the parent's axes summed out for it, its own layout of
    the separator; cached on the tree (it depends on the tree only)."""
    plan = jt.__dict__.get("_plan")
    if plan is None:
        shape = jt.shape
        plan = [None] * len(jt.cliques)
        for i in jt.order[1:]:
            c, p, s = jt.cliques[i], jt.cliques[jt.parent[i]], set(jt.sep[i])
            plan[i] = (tuple(j for j, a in enumerate(c) if a not in s),
                       tuple(shape[a] if a in s else 1 for a in p),
                       tuple(j for j, a in enumerate(p) if a not in s),
                       tuple(shape[a] if a in s else 1 for a in c))
        jt.__dict__["_plan"] = plan
    return plan


class _MarginalOperator:
    """The marginal maps ``p -> M_r p`` of a table onto subsets and their adjoint, by matmul.

    ``p`` is a table of shape ``shape`` (a big junction-tree clique: one over every
    attribute is the whole product domain) and ``cliques`` are subsets of its axes.  Its
    axes are split into a leading part (``A`` cells) and a trailing part (``B`` cells) and
    ``p`` is viewed as an ``A x B`` matrix.  For clique ``C`` with
    trailing attributes ``C_hi``, ``p @ R`` (``R``: the ``B x |C_hi|`` 0/1 matrix mapping a
    trailing cell to its ``C_hi`` cell) sums out the other trailing attributes; the leading
    attributes outside ``C`` are then summed on the small ``A x |C_hi|`` result.  All the
    distinct ``R`` are stacked, so one ``A x B x K`` product serves every clique (and one
    product its transpose for the gradient), instead of d passes of strided reductions
    over the full array (a 1.3-million-cell table onto 36 subsets: 20 times faster).
    """

    def __init__(self, shape: tuple[int, ...], cliques: Sequence[tuple[int, ...]]) -> None:
        d = len(shape)
        # trailing part: as many trailing attributes as keep B <= 2048 (at least one)
        h = d - 1
        while h > 0 and math.prod(shape[h - 1:]) <= 2048:
            h -= 1
        self.shape, self.h = shape, h
        self.lo_shape, hi_shape = shape[:h], shape[h:]
        self.A, self.B = math.prod(self.lo_shape), math.prod(hi_shape)
        hi_idx = np.indices(hi_shape).reshape(len(hi_shape), -1)
        cols: dict[tuple[int, ...], slice] = {}
        blocks = []
        k = 0
        self.plan = []
        for c in cliques:
            c_lo = tuple(a for a in c if a < h)
            c_hi = tuple(a - h for a in c if a >= h)
            if c_hi not in cols:
                size = math.prod(hi_shape[a] for a in c_hi)
                col = (np.ravel_multi_index(tuple(hi_idx[a] for a in c_hi),
                                            tuple(hi_shape[a] for a in c_hi))
                       if c_hi else np.zeros(self.B, dtype=np.intp))
                R = np.zeros((self.B, size))
                R[np.arange(self.B), col] = 1.0
                blocks.append(R)
                cols[c_hi] = slice(k, k + size)
                k += size
            drop = tuple(a for a in range(h) if a not in c_lo)
            out_shape = tuple(shape[a] for a in c)
            self.plan.append((cols[c_hi], drop, out_shape, c_lo))
        self.R = np.hstack(blocks)  # B x K

    def marginals(self, p: NDArray[np.float64]) -> list[NDArray[np.float64]]:
        Y = p.reshape(self.A, self.B) @ self.R  # A x K
        out = []
        for sl, drop, out_shape, _ in self.plan:
            part = Y[:, sl].reshape((*self.lo_shape, sl.stop - sl.start))
            out.append(part.sum(axis=drop).reshape(out_shape) if drop else
                       part.reshape(out_shape))
        return out

    def adjoint(self, tables: Sequence[NDArray[np.float64]]) -> NDArray[np.float64]:
        """``G(x) = sum_r tables[r][x_{C_r}]`` over the full domain."""
        U = np.zeros((self.A, self.R.shape[1]))
        h = self.h
        for (sl, _, _, c_lo), t in zip(self.plan, tables, strict=True):
            width = sl.stop - sl.start
            bshape = [self.shape[a] if a in c_lo else 1 for a in range(h)] + [width]
            U[:, sl] += np.broadcast_to(t.reshape(bshape), (*self.lo_shape, width)).reshape(
                self.A, width)
        return (U @ self.R.T).reshape(self.shape)


def _conditional(mu: NDArray[np.float64], clique: Sequence[int], sep: Sequence[int],
                 shape: Sequence[int]) -> NDArray[np.float64]:
    """``mu_C / mu_S``: the clique's conditional given its separator ``sep`` (0 where
    ``mu_S = 0``).  Each entry is at most 1: no overflow however small ``mu_S`` is (its
    inverse overflows below 1e-308)."""
    if not sep:
        return mu
    mu_s = _expand(_sum_to(mu, clique, sep), sep, clique, shape)
    return np.divide(mu, mu_s, out=np.zeros_like(mu), where=mu_s > 0)


class GraphicalModel:
    """A distribution ``p(x) ∝ exp(sum_r phi_r(x_{C_r}))`` held on a junction tree.

    Attributes: ``shape`` (the domain's), ``tree`` (:class:`JunctionTree`), ``potentials``
    (``{C_r: phi_r}``), ``marginals_`` (one calibrated marginal per tree clique, each
    summing to 1), ``log_partition``, ``n`` (the public number of records or None).
    """

    def __init__(self, shape: Sequence[int], potentials: Mapping[tuple[int, ...], Any],
                 tree: JunctionTree | None = None, n: int | None = None, *,
                 theta: Sequence[NDArray[np.float64]] | None = None) -> None:
        """``theta``: the tree cliques' log-potentials when the caller has them already
        (:meth:`clique_potentials`, up to rounding; the estimator updates them in place of
        summing every measured set in again)."""
        self.shape = tuple(int(s) for s in shape)
        self.potentials = {tuple(c): np.asarray(v, dtype=np.float64)
                           for c, v in potentials.items()}
        self.tree = tree if tree is not None else JunctionTree(self.shape, list(self.potentials))
        self.n = n
        self._assign = {c: self.tree.home(c) for c in self.potentials}
        self._sets: dict[int, tuple[tuple[int, ...], ...]] = {}  # tree clique -> its sets
        for c, i in self._assign.items():
            self._sets[i] = (*self._sets.get(i, ()), c)
        self.calibrate(theta)

    @classmethod
    def from_factors(cls, shape: Sequence[int],
                     factors: Sequence[tuple[Sequence[int], Any]],
                     n: int | None = None) -> GraphicalModel:
        """The model ``p(x) ∝ exp(sum theta(x_clique))`` of log-factors over any attribute
        order (e.g. ``mbi``'s, or :attr:`factors`); repeated cliques are added."""
        shape = tuple(int(s) for s in shape)
        pots: dict[tuple[int, ...], NDArray[np.float64]] = {}
        for clique, theta in factors:
            c = tuple(int(a) for a in clique)
            key = tuple(sorted(c))
            arr = np.asarray(theta, dtype=np.float64).transpose([c.index(a) for a in key])
            if arr.shape != tuple(shape[a] for a in key):
                raise ValueError(f"a factor over {c} has shape {arr.shape}")
            pots[key] = pots[key] + arr if key in pots else arr
        for a in range(len(shape)):  # attributes in no factor: uniform
            if not any(a in c for c in pots):
                pots[(a,)] = np.zeros(shape[a])
        return cls(shape, pots, None, n)

    # -- inference -------------------------------------------------------------------
    def _operator(self, i: int) -> _MarginalOperator | None:
        """The matrix-product marginals of tree clique ``i`` onto its measured sets, when it
        is big (more than ``_OPERATOR_CELLS`` cells and more than one set); cached on the tree."""
        jt = self.tree
        sets = self._sets.get(i, ())
        if len(sets) < 2 or math.prod(jt.clique_shape(i)) <= _OPERATOR_CELLS:
            return None
        ops = jt.__dict__.setdefault("_operators", {})  # the last set list of each clique
        if i not in ops or ops[i][1] != sets:
            pos = {a: j for j, a in enumerate(jt.cliques[i])}
            ops[i] = (_MarginalOperator(jt.clique_shape(i),
                                        [tuple(pos[a] for a in c) for c in sets]), sets)
        return ops[i][0]

    def clique_potentials(self, tables: Mapping[tuple[int, ...], NDArray[np.float64]] | None
                          = None) -> list[NDArray[np.float64]]:
        """The log-potential of every tree clique (the sum of its measured sets' phi), or
        the same sums of other ``tables`` over the measured sets (keys: those of
        ``potentials``)."""
        jt, shape = self.tree, self.shape
        src = self.potentials if tables is None else tables
        theta = [np.zeros(jt.clique_shape(i)) for i in range(len(jt.cliques))]
        for i in range(len(jt.cliques)):
            op = self._operator(i)
            if op is not None:  # sets in the order of the potentials
                theta[i] = op.adjoint([src[c] for c in self._sets[i]])
        for c in self.potentials:
            i = self._assign[c]
            if self._operator(i) is None:
                theta[i] = theta[i] + _expand(src[c], c, jt.cliques[i], shape)
        return theta

    def calibrate(self, theta: Sequence[NDArray[np.float64]] | None = None) -> None:
        """Sum-product in log space: every clique marginal and ``log Z`` (``theta``: the
        cliques' log-potentials, default :meth:`clique_potentials`)."""
        jt = self.tree
        plan = _calibration_plan(jt)
        belief = list(theta) if theta is not None else self.clique_potentials()
        up: list[NDArray[np.float64] | None] = [None] * len(jt.cliques)
        with np.errstate(divide="ignore", invalid="ignore"):  # no mass: log 0 = -inf
            for i in reversed(jt.order[1:]):
                axes, in_parent, _, _ = plan[i]
                msg = _lse_keep(belief[i], axes).reshape(in_parent)
                up[i] = msg
                p = jt.parent[i]
                belief[p] = belief[p] + msg
            # the root's belief is final after the upward pass: exp once for log Z and mu
            root = belief[jt.order[0]]
            mx = float(root.max())
            mx = mx if math.isfinite(mx) else 0.0
            mu_root = np.exp(root - mx)
            z = float(mu_root.sum())
            log_z = math.log(z) + mx if z > 0.0 else -math.inf
            for i in jt.order:
                for c in jt.children[i]:
                    own = up[c]
                    assert own is not None
                    _, _, down, in_child = plan[c]  # -inf - -inf: no mass either way
                    rest = belief[i] - own
                    if np.isnan(rest).any():
                        rest = np.where(np.isnan(rest), -np.inf, rest)
                    msg = _lse_keep(rest, down)
                    belief[c] = belief[c] + msg.reshape(in_child)
        if not np.isfinite(log_z):
            raise FloatingPointError("the model's log-partition function is not finite: its "
                                     "potentials are not a distribution")
        self.log_partition = log_z
        mu_root /= z
        self.marginals_ = [mu_root if i == jt.order[0] else np.exp(b - log_z)
                           for i, b in enumerate(belief)]

    def measured_marginal(self, c: tuple[int, ...]) -> NDArray[np.float64]:
        """The marginal on a set contained in a tree clique (attributes sorted)."""
        i = self._assign[c] if c in self._assign else self.tree.home(c)
        return _sum_to(self.marginals_[i], self.tree.cliques[i], c)

    def measured_marginals(self) -> dict[tuple[int, ...], NDArray[np.float64]]:
        """The marginal on every measured set (each key of ``potentials``)."""
        out: dict[tuple[int, ...], NDArray[np.float64]] = {}
        for i in range(len(self.tree.cliques)):
            op = self._operator(i)
            if op is not None:
                sets = list(self._sets[i])
                out.update(zip(sets, op.marginals(self.marginals_[i]), strict=True))
        for c in self.potentials:
            if c not in out:
                out[c] = self.measured_marginal(c)
        return out

    @property
    def cells(self) -> int:
        return self.tree.cells

    @property
    def factors(self) -> tuple[tuple[tuple[int, ...], NDArray[np.float64]], ...]:
        """``(clique, theta)`` log-factors with ``p(x) = prod exp(theta(x_clique))`` exactly.

        The calibrated form: the root clique's log-marginal and, for every other clique, the
        log of its conditional ``mu_C / mu_S`` given its separator (``-inf`` where
        ``mu_C = 0``).  Each factor is at most 0 and their product sums to 1, so contracting
        them cannot underflow the way raw potentials can.
        """
        jt, out = self.tree, []
        for i, c in enumerate(jt.cliques):
            mu = _conditional(self.marginals_[i], c, jt.sep[i], self.shape)
            with np.errstate(divide="ignore"):
                out.append((c, np.log(mu)))
        return tuple(out)

    def marginal(self, attrs: Sequence[int]) -> NDArray[np.float64]:
        """The exact marginal over ``attrs`` (distinct positions, in the given order).

        Leaves of the tree that carry none of ``attrs`` beyond their separator are pruned
        (summing them out is exact); the rest is ``prod mu_C / prod mu_S`` contracted.
        """
        d = len(self.shape)
        idx = [int(a) for a in attrs]
        if not idx or len(set(idx)) != len(idx) or any(not 0 <= a < d for a in idx):
            raise ValueError(f"attrs must be distinct attribute positions in 0..{d - 1}, "
                             f"got {list(attrs)!r}")
        cells = math.prod(self.shape[a] for a in idx)
        if cells > _DENSE_CELLS:
            raise ValueError(f"a marginal over {len(idx)} attributes has {cells_text(cells)} cells "
                             f"(> {_DENSE_CELLS:,}): ask for fewer attributes at a time")
        want = set(idx)
        jt = self.tree
        key = tuple(sorted(idx))
        perm = [key.index(a) for a in idx]
        try:
            i = jt.home(key)  # the smallest clique holding every attribute asked
        except ValueError:
            pass
        else:
            return _sum_to(self.marginals_[i], jt.cliques[i], key).transpose(perm)
        if len(idx) == 2:
            return self._pair_marginal(idx[0], idx[1])
        alive = set(range(len(jt.cliques)))
        changed = True
        while changed and len(alive) > 1:
            changed = False
            for i in sorted(alive):
                nb = [j for j in jt.adj[i] if j in alive]
                if len(nb) == 1:
                    own = set(jt.cliques[i]) - set(jt.cliques[nb[0]])
                    if not own & want:
                        alive.discard(i)
                        changed = True
                        break
        return self._subtree_marginal(idx, alive)

    def _subtree_marginal(self, idx: list[int], alive: set[int]) -> NDArray[np.float64]:
        """The marginal of ``idx`` from the subtree ``alive`` that holds all of its attributes.

        Rooted at one of its cliques, ``p = mu_root prod_i mu_i / mu_{S_i}`` (``S_i`` the
        separator of clique i with its parent); each clique, leaves first, multiplies its
        conditional ``mu_i / mu_{S_i}`` by its children's messages and sums out everything
        but ``S_i`` and the wanted attributes seen so far (running intersection: nothing
        summed out occurs nearer the root).  A message is at most a clique times the wanted
        attributes, so no contraction grows past that, unlike one einsum over the subtree.
        """
        jt, want = self.tree, set(idx)
        root = min(alive)
        parent: dict[int, int | None] = {root: None}
        order = [root]
        for i in order:
            for j in jt.adj[i]:
                if j in alive and j not in parent:
                    parent[j] = i
                    order.append(j)
        msgs: dict[int, tuple[NDArray[np.float64], tuple[int, ...]]] = {}
        for i in reversed(order):
            c = jt.cliques[i]
            mu = self.marginals_[i]
            up = parent[i]
            sep: tuple[int, ...] = ()
            if up is not None:
                sep = tuple(sorted(set(c) & set(jt.cliques[up])))
            ops: list[tuple[NDArray[np.float64], tuple[int, ...]]] = [
                (_conditional(mu, c, sep, self.shape), c)]
            seen = set(c)
            for j in [j for j in jt.adj[i] if parent.get(j) == i]:
                arr, labs = msgs.pop(j)
                ops.append((arr, labs))
                seen |= set(labs)
            out = tuple(sorted(set(sep) | (seen & want)))
            labels: dict[int, int] = {}
            args: list[Any] = []
            for arr, labs in ops:
                args += [arr, [labels.setdefault(a, len(labels)) for a in labs]]
            if len(labels) > 52:
                raise ValueError("this marginal spans too many attributes of the model to "
                                 "contract")
            args.append([labels[a] for a in out])
            msgs[i] = (np.einsum(*args, optimize="greedy"), out)
        table, labs = msgs[root]
        table = table.transpose([labs.index(a) for a in idx])
        return np.asarray(table / table.sum(), dtype=np.float64)

    def _pair_marginal(self, u: int, v: int) -> NDArray[np.float64]:
        """The marginal of ``(u, v)`` in two different cliques: messages along the tree path.

        Along the path ``c_0 ... c_k`` (``u`` in ``c_0``, ``v`` in ``c_k``) the table over
        ``{u} ∪ S_l`` is multiplied by ``mu_{c_l} / mu_{S_l}`` and summed down to
        ``{u} ∪ S_{l+1}``; by the running intersection property nothing summed out occurs
        further along the path.
        """
        jt = self.tree
        path = jt.path(jt.home((u,)), jt.home((v,)))
        first = jt.cliques[path[0]]
        cur = tuple(sorted({u, *jt.separator(path[0], path[1])}))
        table = _sum_to(self.marginals_[path[0]], first, cur)
        for step, i in enumerate(path[1:], start=1):
            c = jt.cliques[i]
            s_prev = jt.separator(path[step - 1], i)
            nxt = (tuple(sorted({u, v})) if step == len(path) - 1
                   else tuple(sorted({u, *jt.separator(i, path[step + 1])})))
            cond = _conditional(self.marginals_[i], c, s_prev, self.shape)
            labels: dict[int, int] = {}

            def lab(t: Sequence[int], labels: dict[int, int] = labels) -> list[int]:
                return [labels.setdefault(a, len(labels)) for a in t]

            table = np.einsum(table, lab(cur), cond, lab(c), lab(nxt))
            cur = nxt
        out = table if (u < v) else table.T
        return np.asarray(out / out.sum(), dtype=np.float64)

    def pair_marginals(self, pairs: Sequence[tuple[int, int]]) -> list[NDArray[np.float64]]:
        """The exact marginals of many pairs ``(u, v)`` at once (each as ``marginal([u, v])``).

        A pair inside one clique is summed from it.  The others are grouped by ``u``: one
        pass over the tree from ``u``'s smallest clique carries the joint table of ``u`` and
        each separator outwards (``P(u, S) -> P(u, C) = P(u, S) mu_C / mu_S``, summed down
        to the next separator), and reads ``P(u, v)`` off the first clique holding ``v``.
        One pass per distinct ``u`` instead of one path per pair: all pairs of a wide model
        cost about ``d`` passes over its cells.  Post-processing (the model's own marginals).
        """
        d = len(self.shape)
        jt, shape = self.tree, self.shape
        out: list[NDArray[np.float64] | None] = [None] * len(pairs)
        todo: dict[int, dict[int, list[int]]] = {}
        where: list[set[int]] = [set() for _ in range(d)]  # the cliques holding each attribute
        for i, c in enumerate(jt.cliques):
            for a in c:
                where[a].add(i)
        for k, (u, v) in enumerate(pairs):
            u, v = int(u), int(v)
            if u == v or not (0 <= u < d and 0 <= v < d):
                raise ValueError(f"a pair must be two distinct attribute positions in "
                                 f"0..{d - 1}, got {(u, v)!r}")
            if where[u] & where[v]:
                out[k] = self.marginal([u, v])
            else:
                todo.setdefault(u, {}).setdefault(v, []).append(k)
        conds: dict[tuple[int, int], NDArray[np.float64]] = {}
        sets = [set(c) for c in jt.cliques]
        for u, wanted in todo.items():
            left = set(wanted)
            h = jt.home((u,))
            stack: list[tuple[int, int, NDArray[np.float64] | None]] = [(h, -1, None)]
            while stack and left:
                i, up, msg = stack.pop()
                c = jt.cliques[i]
                if u in sets[i]:  # the clique's own marginal carries u
                    joint, labs = self.marginals_[i], c
                else:  # P(u, C) = P(u, S) mu_C / mu_S (S: the separator with `up`)
                    assert msg is not None
                    sep = tuple(a for a in c if a in sets[up])
                    if (i, up) not in conds:
                        conds[(i, up)] = _conditional(self.marginals_[i], c, sep, shape)
                    m = msg.reshape((shape[u], *[shape[a] if a in sets[up] else 1
                                                 for a in c]))
                    joint, labs = m * conds[(i, up)][None], (u, *c)
                    for a in c:
                        if a in left:
                            pair = _sum_to(joint, labs, (u, a))
                            for k in wanted[a]:
                                out[k] = np.asarray(pair / pair.sum(), dtype=np.float64)
                            left.discard(a)
                for j in jt.adj[i]:
                    if j == up:
                        continue
                    if u in sets[j]:
                        stack.append((j, i, None))
                        continue
                    keep = (u, *[a for a in c if a in sets[j]])
                    red = _sum_to(joint, labs, keep)  # axes in labs' order: u first here
                    if labs[0] != u:  # u inside the clique: move its axis first
                        order = [a for a in labs if a in set(keep)]
                        red = np.moveaxis(red, order.index(u), 0)
                    stack.append((j, i, red))
        return [np.asarray(t) for t in out]  # type: ignore[arg-type]

    def dense(self) -> NDArray[np.float64]:
        """The full distribution (small domains only: it has ``prod(shape)`` cells)."""
        cells = math.prod(self.shape)
        if cells > _DENSE_CELLS:
            raise ValueError(f"the full distribution has {cells_text(cells)} cells (> "
                             f"{_DENSE_CELLS:,}): "
                             "ask for marginals, or sample records")
        return self.marginal(list(range(len(self.shape))))

    # -- sampling -------------------------------------------------------------------
    def sample(self, size: int | None = None, random_state: RandomLike = None, *,
               sampler: str = "rounded") -> NDArray[np.int64]:
        """``size`` records drawn from the model by forward sampling along its junction tree
        (:mod:`oracledp.synth._sampling`): ``"rounded"`` (default) deals each clique's
        conditional counts rounded at random (every record alone has the model's law; counts
        close to the expected ones), ``"iid"`` draws the records independently."""
        from oracledp.synth._sampling import check_sampler, forward_sample

        size = check_sample_size(size, self.n)
        check_sampler(sampler)
        return forward_sample(self, size, check_rng(random_state), sampler)


def model_of_tables(shape: Sequence[int],
                    tables: Sequence[tuple[Sequence[int], Any]]) -> GraphicalModel:
    """The :class:`GraphicalModel` of independent probability tables over disjoint attribute
    sets that cover the domain (one table over every attribute for a released distribution,
    one per attribute for independent marginals): potentials ``log p`` (``-inf`` where p is
    0; negative entries count as 0).  Every release samples through this one model type."""
    shape = tuple(int(sz) for sz in shape)
    covered = sorted(int(a) for c, _ in tables for a in c)
    if covered != list(range(len(shape))):
        raise ValueError("probability tables must cover each attribute exactly once")
    pots: dict[tuple[int, ...], NDArray[np.float64]] = {}
    for clique, p in tables:
        c = tuple(int(a) for a in clique)
        arr = np.maximum(np.asarray(p, dtype=np.float64).reshape([shape[a] for a in c]), 0.0)
        if not (np.isfinite(arr).all() and arr.sum() > 0):
            raise ValueError(f"the table over {c} is not a finite distribution")
        order = np.argsort(c)
        with np.errstate(divide="ignore"):
            pots[tuple(sorted(c))] = np.log(arr / arr.sum()).transpose(order)
    return GraphicalModel(shape, pots)


def estimate_model(
    shape: Sequence[int],
    measurements: Sequence[MarginalMeasurement],
    n: int,
    *,
    iterations: int = 200,
    warm: GraphicalModel | None = None,
    tree: JunctionTree | None = None,
) -> GraphicalModel:
    """Approximately minimize ``L(p)`` (module docstring) by mirror descent on a junction tree.

    ``n`` is the public number of records (the measurements are counts); ``warm`` a model
    returned earlier (its potentials start the descent; new measured sets start at 0).
    ``tree``: the junction tree to hold the model on (it must have a clique containing
    each measured set); default: the warm model's tree when it holds every measured set,
    else the triangulation of the measured sets.  Whatever the tree, the iterates are
    those of mirror descent on the dense distribution (same starting point and step rule)
    up to floating point.  Post-processing only.
    """
    shape = tuple(int(s) for s in shape)
    terms = loss_terms(shape, measurements, n)
    targets = [m.values / n for m in terms]
    weights = [(n / m.sigma) ** 2 for m in terms]
    cliques = list(dict.fromkeys(m.axes for m in terms))  # one potential per attribute set
    slot = [cliques.index(m.axes) for m in terms]
    smooth = float(sum(weights))  # a projection never increases an l1 norm: still a bound
    old = warm.potentials if warm is not None else {}
    phi = {c: (old[c].copy() if c in old else np.zeros(tuple(shape[a] for a in c)))
           for c in cliques}
    if tree is None and warm is not None and all(
            any(set(c) <= set(t) for t in warm.tree.cliques) for c in cliques):
        tree = warm.tree
    model = GraphicalModel(shape, phi, tree, n)
    theta = model.clique_potentials()

    # a term on coarser codes: where each cell of its attribute set's marginal is summed
    # (kept: project and its adjoint run every iteration)
    index = [None if m.maps is None else project_index(tuple(shape[a] for a in m.axes),
                                                       m.maps) for m in terms]

    def loss_res(mod: GraphicalModel) -> tuple[float, list[NDArray[np.float64]], list[Any]]:
        got = mod.measured_marginals()
        margs = [got[c] for c in cliques]
        res = [project(margs[s], terms[i].maps, index[i]) - targets[i]
               for i, s in enumerate(slot)]
        f = 0.5 * sum(w * float(np.vdot(r, r)) for w, r in zip(weights, res, strict=True))
        return f, res, margs

    def gradient(res: list[NDArray[np.float64]]) -> list[NDArray[np.float64]]:
        g: list[Any] = [0.0] * len(cliques)
        for k, (i, w, r) in enumerate(zip(slot, weights, res, strict=True)):
            g[i] = g[i] + expand(w * r, terms[k].maps, index[k])
        return g

    f, res, margs = loss_res(model)
    eta = 1.0 / smooth
    for _ in range(iterations):
        g = gradient(res)
        # the gradient summed into the tree's cliques once: a step moves theta by -eta of it
        grad = model.clique_potentials(dict(zip(cliques, g, strict=True)))

        def attempt(eta: float, model: GraphicalModel = model, f: float = f,
                    margs: list[Any] = margs, g: list[NDArray[np.float64]] = g,
                    theta: list[NDArray[np.float64]] = theta,
                    grad: list[NDArray[np.float64]] = grad,
                    ) -> tuple[tuple[GraphicalModel, list[NDArray[np.float64]], float, list[Any],
                                     list[Any]], bool] | None:
            with np.errstate(all="ignore"):
                th = [t - eta * gt for t, gt in zip(theta, grad, strict=True)]
                try:
                    cand = GraphicalModel(shape, {c: model.potentials[c] - eta * gc
                                                  for c, gc in zip(cliques, g, strict=True)},
                                          model.tree, n, theta=th)
                except FloatingPointError:
                    return None
                if not (math.isfinite(cand.log_partition)
                        and all(np.all(np.isfinite(mu)) for mu in cand.marginals_)):
                    return None
                f_new, res_new, margs_new = loss_res(cand)
                inner = sum(float(np.vdot(gc, mq - mp))
                            for gc, mq, mp in zip(g, margs_new, margs, strict=True))
                eg = sum(float(np.vdot(gc, mq)) for gc, mq in zip(g, margs_new, strict=True))
                kl = -eta * eg - (cand.log_partition - model.log_partition)
                bound = f + inner + kl / eta
            if not (math.isfinite(f_new) and math.isfinite(bound)):
                return None
            return ((cand, th, f_new, res_new, margs_new),
                    f_new <= bound + 1e-12 * max(1.0, abs(f)))

        eta, got = mirror_descent_step(eta, smooth, attempt)
        if got is None:
            break
        model, theta, f, res, margs = got
    if iterations > 0:  # the release is a function of its potentials and tree alone (a saved
        model.calibrate()  # model rebuilds it bit for bit), not of the running theta
    return model
