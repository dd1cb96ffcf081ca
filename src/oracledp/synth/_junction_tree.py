"""The junction tree of a graphical model (:mod:`oracledp.synth._graphical`).

The model graph joins the attributes of each measured set; a greedy elimination order
(fewest cells first) triangulates it, its maximal elimination cliques are the junction tree's
cliques, and a maximum-weight spanning tree of the clique intersection graph (weight: shared
attributes) is a junction tree (running intersection property; the components of a
disconnected graph are joined by empty separators).  Reads only the public domain shape and
the measured attribute sets.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

__all__ = ["JunctionTree", "junction_tree_cells"]


class JunctionTree:
    """A junction tree of the graph joining the attributes of each of ``cliques``.

    Attributes: ``cliques`` (sorted attribute tuples, the tree's nodes), ``order`` (a
    breadth-first order from the root 0), ``parent`` (-1 for the root), ``sep`` (the
    separator with the parent, sorted), ``cells`` (the number of cells of all cliques).
    """

    def __init__(self, shape: Sequence[int], cliques: Sequence[Sequence[int]], *,
                 nodes: bool = False) -> None:
        """``nodes=True``: ``cliques`` are the tree's own cliques (a saved tree's
        ``cliques``, rebuilt exactly), not measured sets to triangulate."""
        self.shape = tuple(int(s) for s in shape)
        if nodes:
            given = sorted({tuple(sorted(int(a) for a in c)) for c in cliques})
            if (not given or any(not c or len(set(c)) != len(c) for c in given)
                    or any(not 0 <= a < len(self.shape) for c in given for a in c)
                    or sorted({a for c in given for a in c}) != list(range(len(self.shape)))
                    or any(set(c) < set(o) for c in given for o in given)):
                raise ValueError("the tree's cliques must be distinct, maximal sets of "
                                 "attribute positions that cover every attribute")
            self.cliques: tuple[tuple[int, ...], ...] = tuple(given)
        else:
            masks = _elimination_cliques(self.shape, cliques)
            self.cliques = tuple(sorted(_bits(c) for c in masks))
        m = len(self.cliques)
        sets = [set(c) for c in self.cliques]
        # Kruskal: maximum-weight spanning tree on |C_i ∩ C_j| (zero joins components)
        pairs = sorted(((len(sets[i] & sets[j]), i, j) for i, j in
                        itertools.combinations(range(m), 2)), key=lambda t: (-t[0], t[1], t[2]))
        comp = list(range(m))

        def find(x: int) -> int:
            while comp[x] != x:
                comp[x] = comp[comp[x]]
                x = comp[x]
            return x

        adj: dict[int, list[int]] = {i: [] for i in range(m)}
        for _, i, j in pairs:
            ri, rj = find(i), find(j)
            if ri != rj:
                comp[ri] = rj
                adj[i].append(j)
                adj[j].append(i)
        self.adj = adj
        self.parent = [-1] * m
        self.order = [0]
        seen = {0}
        for i in self.order:  # grows while iterating: breadth-first
            for j in sorted(adj[i]):
                if j not in seen:
                    seen.add(j)
                    self.parent[j] = i
                    self.order.append(j)
        self.sep: list[tuple[int, ...]] = [
            () if self.parent[i] < 0 else tuple(sorted(sets[i] & sets[self.parent[i]]))
            for i in range(m)]
        self.children: list[list[int]] = [[] for _ in range(m)]
        for i in self.order[1:]:
            self.children[self.parent[i]].append(i)
        self.cells = int(sum(math.prod(self.shape[a] for a in c) for c in self.cliques))

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the matrix-product operators of big cliques (rebuilt on demand)."""
        state = dict(self.__dict__)
        state.pop("_operators", None)
        return state

    def separator(self, i: int, j: int) -> tuple[int, ...]:
        """The attributes shared by cliques ``i`` and ``j`` (sorted)."""
        return tuple(sorted(set(self.cliques[i]) & set(self.cliques[j])))

    def path(self, i: int, j: int) -> list[int]:
        """The cliques on the tree path from ``i`` to ``j`` (both included)."""
        up_i, up_j = [i], [j]
        depth = self._depth()
        while depth[up_i[-1]] > depth[up_j[-1]]:
            up_i.append(self.parent[up_i[-1]])
        while depth[up_j[-1]] > depth[up_i[-1]]:
            up_j.append(self.parent[up_j[-1]])
        while up_i[-1] != up_j[-1]:
            up_i.append(self.parent[up_i[-1]])
            up_j.append(self.parent[up_j[-1]])
        return up_i + up_j[-2::-1]

    def _depth(self) -> list[int]:
        depth = [0] * len(self.cliques)
        for i in self.order[1:]:
            depth[i] = depth[self.parent[i]] + 1
        return depth

    def clique_shape(self, i: int) -> tuple[int, ...]:
        return tuple(self.shape[a] for a in self.cliques[i])

    def home(self, attrs: Sequence[int]) -> int:
        """The smallest clique containing ``attrs`` (ValueError if none does)."""
        key = tuple(attrs)
        memo = self.__dict__.setdefault("_homes", {})
        if key not in memo:
            memo[key] = self._home(key)
        return int(memo[key])

    def _home(self, attrs: Sequence[int]) -> int:
        want = set(attrs)
        best = [i for i, c in enumerate(self.cliques) if want <= set(c)]
        if not best:
            raise ValueError(f"no clique of the junction tree contains {tuple(attrs)}")
        return min(best, key=lambda i: (math.prod(self.clique_shape(i)), i))


def _bits(mask: int) -> tuple[int, ...]:
    out = []
    a = 0
    while mask:
        if mask & 1:
            out.append(a)
        mask >>= 1
        a += 1
    return tuple(out)


def _elimination_cliques(shape: Sequence[int], cliques: Sequence[Sequence[int]]) -> list[int]:
    """The maximal cliques (bitmasks) of the greedy triangulation of the model graph.

    The graph joins the attributes of each clique; attributes are eliminated one at a time,
    the one whose neighbourhood with itself has the fewest cells first (ties: the lowest
    position), its neighbours joined pairwise (fill-in).  The elimination cliques of this
    perfect elimination order are the cliques of the chordal fill; the maximal ones are
    returned (sorted, distinct).
    """
    d = len(shape)
    logs = [math.log(s) for s in shape]
    # log-cells of a bitmask, one table lookup per 8 attributes
    tables = []
    for k in range(0, d, 8):
        t = [0.0] * 256
        for byte in range(1, 256):
            low = (byte & -byte).bit_length() - 1
            t[byte] = t[byte & (byte - 1)] + (logs[k + low] if k + low < d else 0.0)
        tables.append(t)

    def wsum(mask: int) -> float:
        return sum(t[(mask >> (8 * k)) & 255] for k, t in enumerate(tables))

    nbr = [0] * d
    for c in cliques:
        m = 0
        for a in c:
            m |= 1 << int(a)
        for a in c:
            nbr[int(a)] |= m & ~(1 << int(a))
    weight = [logs[x] + wsum(nbr[x]) for x in range(d)]
    alive = list(range(d))
    elim: list[int] = []
    while alive:
        best, best_w = -1, math.inf
        for x in alive:  # increasing positions: ties go to the lowest
            if weight[x] < best_w - 1e-9:
                best, best_w = x, weight[x]
        ns = nbr[best]
        for y in _bits(ns):
            new = (nbr[y] | ns) & ~(1 << y) & ~(1 << best)
            if new != nbr[y]:
                nbr[y] = new
                weight[y] = logs[y] + wsum(new)
        alive.remove(best)
        elim.append(ns | (1 << best))
    uniq = sorted(set(elim))
    return [c for c in uniq if not any(c != o and c & o == c for o in uniq)]


def junction_tree_cells(shape: Sequence[int], cliques: Sequence[Sequence[int]]) -> int:
    """Cells of the junction tree of a model over ``cliques`` (its memory, in floats)."""
    return int(sum(math.prod(shape[a] for a in _bits(c))
                   for c in _elimination_cliques(shape, cliques)))
