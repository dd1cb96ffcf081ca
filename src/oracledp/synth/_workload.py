"""k-way marginal workloads and their evaluation.

A k-way marginal query is a conjunction of k literals ``attribute = level`` on
k *distinct* attributes; its answer on a dataset of n records is the fraction
of records satisfying all k literals.  The workload of all such queries is
grouped by attribute set ("block"): block ``b`` holds the ``prod(shape[A_b])``
cells of the marginal table over the attribute tuple ``A_b`` (attributes in
domain order, cells in C order), and the queries are numbered block by block.

Evaluation builds each marginal table once with ``np.bincount`` over the joint
cell index, so answering the whole Adult 3-way workload (56 blocks, 18,597
queries, n = 30,718) costs 56 bincounts.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp.synth._domain import Domain

__all__ = [
    "MarginalWorkload",
    "answer",
    "answer_distribution",
    "cells_text",
    "check_sample_weight",
    "errors",
    "kway_marginal_workload",
    "marginal_tables",
]


@dataclass(frozen=True)
class MarginalWorkload:
    """All k-way marginal queries of a domain.

    Attributes
    ----------
    domain, k:
        The domain and the number of literals per query.
    blocks:
        Attribute-position tuples (increasing), one per marginal table.
    offsets:
        ``offsets[b]`` is the index of block ``b``'s first query;
        ``offsets[-1]`` is the number of queries.
    """

    domain: Domain
    k: int
    blocks: tuple[tuple[int, ...], ...]
    offsets: tuple[int, ...]

    def __len__(self) -> int:
        return self.offsets[-1]

    def block_shape(self, b: int) -> tuple[int, ...]:
        shape = self.domain.shape
        return tuple(shape[a] for a in self.blocks[b])

    def literals(self, j: int) -> tuple[tuple[int, int], ...]:
        """Query ``j`` as ``((attribute position, level code), ...)``."""
        if not 0 <= j < len(self):
            raise IndexError(f"query index {j} outside 0..{len(self) - 1}")
        b = int(np.searchsorted(self.offsets, j, side="right")) - 1
        cell = np.unravel_index(j - self.offsets[b], self.block_shape(b))
        return tuple((a, int(c)) for a, c in zip(self.blocks[b], cell, strict=True))

    def describe(self, j: int) -> str:
        """Query ``j`` in words, e.g. ``sex='Male' AND race='White'``."""
        d = self.domain
        return " AND ".join(f"{d.attributes[a]}={d.levels[a][c]!r}" for a, c in self.literals(j))


def cells_text(cells: int) -> str:
    """A number of cells for a message: ``1,234,567``, or ``about 10^58`` when it is huge."""
    cells = int(cells)
    return f"{cells:,}" if cells < 10**15 else f"about 10^{len(str(cells)) - 1}"


def check_sample_weight(sample_weight: object, n_rows: int) -> NDArray[np.float64]:
    """Validate record counts of distinct rows: 1-d, length ``n_rows``, integers >= 0, sum >= 1.

    Returned as float64 (exact: counts below 2**53).  Messages name the rule, never a
    count or a row (they are data).
    """
    try:
        w = np.asarray(sample_weight)
    except Exception as exc:  # pragma: no cover - exotic inputs
        raise TypeError("sample_weight must be a 1-d array of record counts") from exc
    if w.ndim != 1 or w.shape[0] != n_rows:
        raise ValueError(f"sample_weight must be 1-d with one count per row ({n_rows}), "
                         f"got shape {w.shape}")
    if w.dtype == bool or not (np.issubdtype(w.dtype, np.integer)
                               or np.issubdtype(w.dtype, np.floating)):
        raise TypeError(f"sample_weight must hold integer record counts, got dtype {w.dtype}")
    wf = w.astype(np.float64)
    if not np.all(np.isfinite(wf)) or (wf < 0).any() or (wf != np.round(wf)).any():
        raise ValueError("sample_weight must hold whole record counts >= 0 (each record "
                         "counts once in the privacy analysis)")
    if wf.sum() < 1 or wf.sum() >= 2.0**53:
        raise ValueError("sample_weight must count at least one record (and fewer than 2**53)")
    return wf


def kway_marginal_workload(domain: Domain, k: int) -> MarginalWorkload:
    """All conjunctions of k ``attribute = level`` literals on distinct attributes."""
    if not isinstance(domain, Domain):
        raise TypeError(f"domain must be a Domain, got {type(domain).__name__}")
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise TypeError(f"k must be an integer, got {type(k).__name__}")
    k = int(k)
    if not 1 <= k <= len(domain):
        raise ValueError(f"k must be in 1..{len(domain)} (the number of attributes), got {k}")
    blocks = tuple(itertools.combinations(range(len(domain)), k))
    shape = domain.shape
    sizes = [math.prod(shape[a] for a in blk) for blk in blocks]
    offsets = (0, *itertools.accumulate(sizes))
    return MarginalWorkload(domain, k, blocks, tuple(int(o) for o in offsets))


def answer(workload: MarginalWorkload, codes: ArrayLike,
           sample_weight: ArrayLike | None = None) -> NDArray[np.float64]:
    """Answers of every query of the workload on the records ``codes``, as fractions of n.

    ``sample_weight``: a count per row (distinct rows with their multiplicities); the
    answers are those of the expanded records (n = the sum of the counts).
    """
    arr = workload.domain.check_codes(codes)
    if sample_weight is not None:
        w = check_sample_weight(sample_weight, arr.shape[0])
        n = float(w.sum())
        out = np.empty(len(workload), dtype=np.float64)
        for b, blk in enumerate(workload.blocks):
            joint = np.ravel_multi_index(tuple(arr[:, a] for a in blk), workload.block_shape(b))
            size = workload.offsets[b + 1] - workload.offsets[b]
            out[workload.offsets[b]: workload.offsets[b + 1]] = np.bincount(
                joint, weights=w, minlength=size) / n
        return out
    n = arr.shape[0]
    out = np.empty(len(workload), dtype=np.float64)
    for b, blk in enumerate(workload.blocks):
        bshape = workload.block_shape(b)
        joint = np.ravel_multi_index(tuple(arr[:, a] for a in blk), bshape)
        size = workload.offsets[b + 1] - workload.offsets[b]
        out[workload.offsets[b] : workload.offsets[b + 1]] = np.bincount(joint, minlength=size) / n
    return out


def answer_distribution(workload: MarginalWorkload, p: ArrayLike) -> NDArray[np.float64]:
    """Answers of every query on a distribution over the full domain.

    ``p`` has shape ``domain.shape`` (or ``domain.size``, C order), is
    non-negative and sums to 1 (checked to 1e-9).
    """
    shape = workload.domain.shape
    arr = np.asarray(p, dtype=np.float64).reshape(shape)
    if not np.all(np.isfinite(arr)) or (arr < 0).any():
        raise ValueError("p must be finite and non-negative")
    if abs(arr.sum() - 1.0) > 1e-9:
        raise ValueError(f"p must sum to 1, got {arr.sum()!r}")
    out = np.empty(len(workload), dtype=np.float64)
    for b, table in enumerate(marginal_tables(arr, workload.blocks)):
        out[workload.offsets[b] : workload.offsets[b + 1]] = table.ravel()
    return out


def marginal_tables(p: NDArray[np.float64],
                    cliques: Sequence[tuple[int, ...]]) -> list[NDArray[np.float64]]:
    """Marginals of ``p`` (an array of the domain's shape) on each attribute tuple (increasing).

    Marginal tables share intermediate sums: the table over the kept axes K is the
    parent table over K + {x} (x = smallest axis not in K) summed over x, memoized.
    The full table is touched only about d times, not once per clique.
    """
    d = p.ndim
    memo: dict[tuple[int, ...], NDArray[np.float64]] = {tuple(range(d)): p}

    def table(keep: tuple[int, ...]) -> NDArray[np.float64]:
        got = memo.get(keep)
        if got is None:
            x = next(i for i in range(d) if i not in keep)
            parent_keep = tuple(sorted((*keep, x)))
            got = table(parent_keep).sum(axis=parent_keep.index(x))
            memo[keep] = got
        return got

    return [table(tuple(c)) for c in cliques]


def errors(true: ArrayLike, est: ArrayLike) -> dict[str, float]:
    """Max and mean absolute error between two answer vectors."""
    t = np.asarray(true, dtype=np.float64)
    e = np.asarray(est, dtype=np.float64)
    if t.shape != e.shape or t.ndim != 1 or t.size == 0:
        raise ValueError(
            f"answer vectors must be 1-d, non-empty, of equal length: {t.shape} vs {e.shape}"
        )
    diff = np.abs(t - e)
    return {"max": float(diff.max()), "mean": float(diff.mean())}
