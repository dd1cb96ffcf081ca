"""Records from a released graphical model: forward sampling along its junction tree.

Sampling is post-processing of the release: whatever the sampler and however many records are
drawn, the records carry the release's guarantee.  Two samplers share one walk down the tree
(:func:`forward_sample`); at each clique ``C`` with separator ``S`` (the attributes already
drawn) the new attributes ``C \\ S`` are drawn from the clique's conditional given ``S``:

``"rounded"`` (the default of every ``sample`` in :mod:`oracledp.synth`)
    The records are split into groups by their value of ``S`` (one group at the root).  In a
    group of ``m`` records the conditional's cumulative distribution is read at the ``m``
    evenly spaced points ``(u + j) / m``, ``j = 0 .. m-1``, with one uniform offset ``u`` per
    group (systematic sampling), and the values are dealt to the group's records in a uniformly
    random order.  So a value of conditional probability ``p`` goes to ``floor(m p)`` or
    ``ceil(m p)`` records of the group, ``m p`` in expectation, and every record, taken alone,
    has exactly the model's distribution.  The records are exchangeable but not independent:
    the synthetic table's counts follow the model's expected counts more closely than
    independent draws would (Private-PGM samples its synthetic data by rounding expected
    counts in the same spirit).  Above :data:`SAMPLE_CHUNK` records each block of that size is
    rounded on its own.
``"iid"``
    Independent draws: every record is drawn from the model independently of the others (an
    inverse-CDF draw with one uniform per record and clique).

Both read only the model's calibrated clique marginals.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["SAMPLERS", "SAMPLE_CHUNK", "check_sampler", "forward_sample"]

#: The samplers every ``sample`` of :mod:`oracledp.synth` takes (module docstring).
SAMPLERS = ("rounded", "iid")
#: Records drawn at a time (memory stays bounded); the rounded sampler rounds each block alone.
SAMPLE_CHUNK = 200_000


def check_sampler(sampler: Any) -> str:
    """``sampler`` checked against :data:`SAMPLERS` (a ValueError naming the choices)."""
    if not isinstance(sampler, str) or sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {', '.join(map(repr, SAMPLERS))}, "
                         f"got {sampler!r}")
    return sampler


def forward_sample(model: Any, size: int, rng: np.random.Generator,
                   sampler: str = "rounded") -> NDArray[np.int64]:
    """``size`` records (codes, one column per attribute) of the graphical ``model`` (its
    ``shape``, ``tree`` and calibrated ``marginals_``), drawn with ``sampler``."""
    check_sampler(sampler)
    out = np.zeros((size, len(model.shape)), dtype=np.int64)
    if sampler == "iid":
        _walk(model, out, rng, _iid)
    else:
        for lo in range(0, size, SAMPLE_CHUNK):
            _walk(model, out[lo:lo + SAMPLE_CHUNK], rng, _rounded)
    return out


class _Step:
    """One clique of the walk: its new attributes and its table (rows: separator values,
    columns: the new attributes' cells), as cumulative sums."""

    def __init__(self, model: Any, i: int) -> None:
        jt, shape = model.tree, model.shape
        c, s = jt.cliques[i], jt.sep[i]
        self.sep = s
        self.new = tuple(a for a in c if a not in s)
        self.sep_shape = tuple(shape[a] for a in s)
        self.new_shape = tuple(shape[a] for a in self.new)
        mu = model.marginals_[i].transpose([c.index(a) for a in (*s, *self.new)])
        self.width = math.prod(self.new_shape)
        tab = mu.reshape(-1, self.width)
        self.cum = np.cumsum(tab.ravel())
        self.start = np.concatenate(([0.0], self.cum[self.width - 1::self.width][:-1]))
        self.tot = tab.sum(axis=1)

    def groups(self, out: NDArray[np.int64]) -> NDArray[np.intp]:
        """Each record's separator value (one flat index; 0 at the root)."""
        return (np.ravel_multi_index(tuple(out[:, a] for a in self.sep), self.sep_shape)
                if self.sep else np.zeros(len(out), dtype=np.intp))

    def cell(self, rows: NDArray[np.intp], pos: NDArray[np.float64]) -> NDArray[np.intp]:
        """The new attributes' cell at quantile ``pos`` of each record's conditional."""
        col = (np.searchsorted(self.cum, self.start[rows] + pos * self.tot[rows], side="right")
               - rows * self.width)
        return np.clip(col, 0, self.width - 1)

    def put(self, out: NDArray[np.int64], at: Any, col: NDArray[np.intp]) -> None:
        for a, v in zip(self.new, np.unravel_index(col, self.new_shape), strict=True):
            out[at, a] = v


def _walk(model: Any, out: NDArray[np.int64], rng: np.random.Generator, draw: Any) -> None:
    """Fill ``out`` clique by clique in the tree's order (``draw(out, step, rng)``)."""
    for i in model.tree.order:
        step = _Step(model, i)
        if step.new:
            draw(out, step, rng)


def _iid(out: NDArray[np.int64], step: _Step, rng: np.random.Generator) -> None:
    for lo in range(0, len(out), SAMPLE_CHUNK):
        block = out[lo:lo + SAMPLE_CHUNK]
        step.put(block, slice(None), step.cell(step.groups(block), rng.random(len(block))))


def _rounded(out: NDArray[np.int64], step: _Step, rng: np.random.Generator) -> None:
    m = len(out)
    if m == 0:
        return
    rows = step.groups(out)
    order = np.lexsort((rng.permutation(m), rows))  # by group, a random order inside each
    g = rows[order]
    first = np.ones(m, dtype=bool)
    first[1:] = g[1:] != g[:-1]
    starts = np.flatnonzero(first)
    gid = np.cumsum(first) - 1
    sizes = np.diff(np.append(starts, m))
    rank = np.arange(m) - starts[gid]
    pos = (rng.random(len(starts))[gid] + rank) / sizes[gid]  # (u + j) / m, in [0, 1)
    step.put(out, order, step.cell(g, pos))
