"""Numeric columns at the data's own resolution: a private fine 1-way histogram per column.

A synthesizer models a gridded numeric column on a few coarse bins (its 2-way and higher
measurements need few cells).  Drawing a value uniformly inside a coarse bin destroys what
the column looks like at its own resolution: a count that is 0 in 91 % of the records and
declared 0-365 comes back 0 in 3 % of them.  So each such column is also measured on its own,
at fine resolution, and the synthetic value is drawn from that measurement:

* **fine bins**: the column's grid points ``lower + k step``, k = 0..K, or, when there are more
  than :data:`FINE_BINS`, that many bins of consecutive grid points (equal shares: point k in
  bin ``floor(k m / (K + 1))``, m = :data:`FINE_BINS`);
* **a hierarchical histogram** of the fine bins (:func:`tree_histogram`): a tree of
  ``branching``-ary ranges over the fine bins, every level's counts released with Gaussian
  noise (zCDP methods) or Laplace noise (pure methods), the budget split equally over the
  levels; the count of the root (the number of records, public under replace-one
  neighbours) is not measured.  Replacing one record changes two counts of each level by
  one: squared l2 sensitivity 2, l1 sensitivity 2, per level.
* **estimation** (post-processing): the least-squares estimate consistent with the tree
  (each node the sum of its children, the root n; weighted by the known noise variances,
  computed exactly by one pass up and one pass down), then, from the root down, each node's
  children projected onto the nonnegative vectors summing to the node's estimate (Euclidean
  projection onto the scaled simplex): counts ``>= 0`` summing to n.
* **coarse bins at private quantiles** (:func:`quantile_starts`, post-processing): a fine bin
  holding at least 1/B of the estimated mass is a coarse bin of its own (when these bins and
  the runs of fine bins between them are at most B; else neighbouring bins of least mass are
  merged); the rest is cut at the estimated quantiles into at most B bins in all.  Nothing
  about the bins is read from the data other than through the noisy histogram.

The synthetic value of a record in coarse bin b is a fine bin drawn with the estimated
probabilities of the fine bins inside b, then a grid point drawn uniformly inside that fine
bin (:class:`~oracledp.synth._table.TableDomain` ``within``).  Privacy: the histograms and the
synthesizer's own measurements compose (zCDP: rho adds up; pure: epsilon adds up); the
release states their sum (:class:`~oracledp.synth.TableSynthesizer`).
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.typing import NDArray

from oracledp.privacy import _noise as noise

__all__ = ["BRANCHING", "FINE_BINS", "fine_bin_count", "fine_starts", "project_simplex",
           "quantile_starts", "range_nodes", "tree_histogram", "tree_levels"]

#: At most this many fine bins per numeric column (more grid points: equal shares of them).
FINE_BINS = 1024

#: Children per node of the hierarchical histogram.
BRANCHING = 4


def tree_levels(m: int, branching: int = BRANCHING) -> int:
    """The number of measured levels of the tree over ``m`` fine bins (the leaves' level
    included, the root's not): the smallest L >= 1 with ``branching**L >= m``."""
    if m < 1 or branching < 2:
        raise ValueError("need m >= 1 fine bins and branching >= 2")
    L = 1
    while branching**L < m:
        L += 1
    return L


def _level_blocks(m: int, L: int, branching: int) -> list[int]:
    """Leaves per node at levels 1..L (level L: 1 leaf per node)."""
    return [branching ** (L - level) for level in range(1, L + 1)]


def range_nodes(a: int, b: int, m: int, branching: int = BRANCHING) -> int:
    """How many measured nodes of the tree over ``m`` leaves (:func:`tree_histogram`'s
    levels; the root, the public n, is not one) a sum must use to count the leaves ``a .. b -
    1``: the fewest aligned nodes covering the range, or its complement (n minus them).  The
    least-squares estimate of that range (the best linear unbiased one, before
    :func:`tree_histogram`'s nonnegativity step) has at most that many nodes' noise variance;
    TableSynthesizer uses it as a fitting weight only (no privacy claim rests on it).

    >>> range_nodes(0, 16, 16), range_nodes(1, 16, 16), range_nodes(1, 15, 16)
    (0, 1, 2)
    """
    if not 0 <= a < b <= m:
        raise ValueError("need 0 <= a < b <= m")
    L = tree_levels(m, branching)
    blocks = _level_blocks(m, L, branching)  # leaves per node, largest first

    def cover(lo: int, hi: int) -> int:
        nodes, p = 0, lo
        while p < hi:
            p = min(p + next(s for s in blocks if p % s == 0 and min(p + s, m) <= hi), m)
            nodes += 1
        return nodes

    return min(cover(a, b), cover(0, a) + cover(b, m))


def project_simplex(v: NDArray[np.float64], total: float) -> NDArray[np.float64]:
    """The Euclidean projection of ``v`` onto ``{x >= 0, sum x = total}`` (``total >= 0``).

    >>> project_simplex(np.array([3.0, -1.0, 1.0]), 2.0).tolist()
    [2.0, 0.0, 0.0]
    >>> project_simplex(np.array([1e22, -3e21, 5e21]), 300.0).tolist()
    [300.0, 0.0, 0.0]
    """
    if total <= 0:
        return np.zeros_like(v)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - total
    k = np.arange(1, len(u) + 1)
    ok = u - css / k > 0
    idx = np.flatnonzero(ok)
    if not idx.size:  # k = 1 always qualifies in exact arithmetic; it is lost only when the
        # largest value swamps total (noise of 1e20 against counts of 300): the projection
        # is then total on the largest value
        out = np.zeros_like(v, dtype=np.float64)
        out[int(np.argmax(v))] = total
        return out
    r = int(idx[-1])
    tau = css[r] / (r + 1)
    return np.maximum(v - tau, 0.0)


def tree_histogram(counts: NDArray[np.floating], rng: np.random.Generator, *,
                   sigma: float | None = None, laplace_scale: float | None = None,
                   branching: int = BRANCHING) -> NDArray[np.float64]:
    """The private estimate of a histogram of ``m = len(counts)`` fine bins (module docstring).

    Exactly one of ``sigma`` (Gaussian noise of every measured node) or ``laplace_scale``
    (Laplace noise).  The caller sets them from the budget of the column:
    ``sigma = sqrt(L / rho)`` makes the L levels rho-zCDP together, ``laplace_scale =
    2 L / epsilon`` epsilon-DP together (L = :func:`tree_levels`).  The total ``n =
    counts.sum()`` is used as public.  Returns nonnegative counts summing to n.
    """
    if (sigma is None) == (laplace_scale is None):
        raise ValueError("pass exactly one of sigma and laplace_scale")
    x = np.asarray(counts, dtype=np.float64)
    m = len(x)
    n = float(x.sum())
    L = tree_levels(m, branching)
    blocks = _level_blocks(m, L, branching)
    var = sigma**2 if sigma is not None else 2.0 * laplace_scale**2  # type: ignore[operator]
    # noisy counts of every level's nodes (level l: ceil(m / block) nodes)
    csum = np.concatenate([[0.0], np.cumsum(x)])
    noisy: list[NDArray[np.float64]] = []
    for block in blocks:
        starts = np.arange(0, m, block)
        true = csum[np.minimum(starts + block, m)] - csum[starts]
        if sigma is not None:
            draw = noise.gaussian(rng, sigma, len(true))
        else:
            draw = noise.laplace(rng, laplace_scale, len(true))
        noisy.append(true + draw)
    # up: z = the best estimate of each node from its own count and its subtree's
    z: list[NDArray[np.float64]] = [np.empty(0)] * L
    V: list[NDArray[np.float64]] = [np.empty(0)] * L
    z[L - 1], V[L - 1] = noisy[L - 1].copy(), np.full(len(noisy[L - 1]), var)
    for lev in range(L - 2, -1, -1):
        parent_of = np.arange(len(z[lev + 1])) // branching
        s = np.bincount(parent_of, weights=z[lev + 1], minlength=len(noisy[lev]))
        vs = np.bincount(parent_of, weights=V[lev + 1], minlength=len(noisy[lev]))
        prec = 1.0 / var + 1.0 / vs
        z[lev] = (noisy[lev] / var + s / vs) / prec
        V[lev] = 1.0 / prec
    # down: least squares under the sums (the root is n), then nonnegative projections
    top = project_simplex(z[0] + V[0] / V[0].sum() * (n - z[0].sum()), n)
    est = top
    for lev in range(1, L):
        parent_of = np.arange(len(z[lev])) // branching
        s = np.bincount(parent_of, weights=z[lev], minlength=len(est))
        vs = np.bincount(parent_of, weights=V[lev], minlength=len(est))
        ls = z[lev] + V[lev] / vs[parent_of] * (est - s)[parent_of]
        out = np.empty_like(ls)
        for p in range(len(est)):
            lo, hi = p * branching, min((p + 1) * branching, len(ls))
            out[lo:hi] = project_simplex(ls[lo:hi], float(est[p]))
        est = out
    return est


def quantile_starts(h: NDArray[np.float64], bins: int) -> NDArray[np.int64]:
    """The first fine bin of each of at most ``bins`` coarse bins cut from the estimate ``h``
    (module docstring): always starts with 0, strictly increasing.

    >>> quantile_starts(np.array([91.0, 0, 3, 3, 3]), 4).tolist()
    [0, 1, 3, 4]
    """
    h = np.maximum(np.asarray(h, dtype=np.float64), 0.0)
    m = len(h)
    if bins >= m:
        return np.arange(m, dtype=np.int64)
    total = h.sum()
    if not total > 0:
        return (np.arange(bins) * m // bins).astype(np.int64)
    heavy = np.flatnonzero(h >= total / bins)
    starts = {0}
    for f in heavy:
        starts.update({int(f), int(f) + 1})
    starts.discard(m)
    segments = [*sorted(starts), m]
    # the bins left after the heavy ones go to the other segments by their mass
    heavy_set = set(heavy.tolist())
    light = [(a, b) for a, b in itertools.pairwise(segments)
             if not (b - a == 1 and a in heavy_set)]
    left = bins - (len(segments) - 1)
    mass = np.array([h[a:b].sum() for a, b in light])
    if left > 0 and len(light) and mass.sum() > 0:
        share = np.floor(left * mass / mass.sum()).astype(int)
        for i in np.argsort(-(left * mass / mass.sum() - share))[: left - int(share.sum())]:
            share[i] += 1
        for (a, b), extra in zip(light, share, strict=True):
            if extra <= 0 or b - a < 2:
                continue
            cum = np.cumsum(h[a:b])
            seg = cum[-1]
            if not seg > 0:
                continue
            for j in range(1, extra + 1):
                f = int(np.searchsorted(cum, seg * j / (extra + 1), side="left"))
                if a + f + 1 < b:
                    starts.add(a + f + 1)
    out = sorted(starts)
    while len(out) > bins:  # merge the two neighbouring bins of least mass
        ends = [*out[1:], m]
        mass_of = [h[a:b].sum() for a, b in zip(out, ends, strict=True)]
        j = min(range(1, len(out)), key=lambda i: mass_of[i - 1] + mass_of[i])
        del out[j]
    return np.array(out, dtype=np.int64)


def fine_starts(K: int, m: int) -> NDArray[np.int64]:
    """The first grid index of each of ``m`` equal shares of the grid points 0..K (point k in
    share ``floor(k m / (K + 1))``)."""
    i = np.arange(m, dtype=np.int64)
    return -((-i * (K + 1)) // m)  # ceil(i (K + 1) / m)


def fine_bin_count(K: int) -> int:
    """The number of fine bins of a grid with K + 1 points."""
    return int(min(K + 1, FINE_BINS))
