"""Numeric columns at the data's own resolution: a private fine 1-way histogram per column.

A synthesizer models a gridded numeric column on a few coarse bins (its 2-way and higher
measurements need few cells).  Drawing a value uniformly inside a coarse bin destroys what
the column looks like at its own resolution: a count that is 0 in 91 % of the records and
declared 0-365 comes back 0 in 3 % of them.  So each such column is also measured on its own,
at fine resolution, and the synthetic value is drawn from that measurement:

* **fine bins**: the column's grid points ``lower + k step``, k = 0..K, or, when there are more
  than :data:`FINE_BINS`, that many bins of consecutive grid points (equal shares: point k in
  bin ``floor(k m / (K + 1))``, m = :data:`FINE_BINS`), split so that the grid's bounds and
  round values (:func:`round_points`) are fine bins of their own, and so are its points near
  the lower bound (:func:`low_points`: every point up to 255, then every 10th, ... while
  finer than a share);
* **a hierarchical histogram** of the fine bins (:func:`tree_histogram`): a tree of
  ``branching``-ary ranges over the fine bins, every level's counts released with Gaussian
  noise (zCDP methods) or Laplace noise (pure methods), the budget split equally over the
  levels; the count of the root (the number of records, public under replace-one
  neighbours) is not measured.  Replacing one record changes two counts of each level by
  one: squared l2 sensitivity 2, l1 sensitivity 2, per level.  A column's missing cells
  are in no leaf: their count is released with each level beside its nodes
  (``outside``), so the root is n again.
* **estimation** (post-processing): the least-squares estimate consistent with the tree
  (each node the sum of its children, the root n; weighted by the known noise variances,
  computed exactly by one pass up and one pass down), then, from the root down, each node's
  children projected onto the nonnegative vectors summing to the node's estimate (Euclidean
  projection onto the scaled simplex): counts ``>= 0`` summing to n.
* **far tails** (:func:`far_tails`, post-processing): where the column is declared far wider
  than its data, the nonnegative estimate keeps the positive part of the empty nodes' noise
  and the even splits spread it over them (a spend column with data to 1,540, declared
  0-100,000, came back with means of 45-2,720 against 28).  Beyond a fence well outside the
  estimate's 5 % and 95 % quantiles, the tree nodes are emptied from the grid's end inward
  while their summed estimate is below two standard deviations of that sum's noise and each
  node's below two of its own; the thin tails near the data's bulk are never touched.
* **coarse bins at private quantiles** (:func:`quantile_starts`, post-processing): a fine bin
  holding at least 1/B of the estimated mass is a coarse bin of its own (when these bins and
  the runs of fine bins between them are at most B; else neighbouring bins of least mass are
  merged); the rest is cut at the estimated quantiles into at most B bins in all.  Nothing
  about the bins is read from the data other than through the noisy histogram.

The synthetic value of a record in coarse bin b is a fine bin drawn with the estimated
probabilities of the fine bins inside b, then a grid point drawn uniformly inside that fine
bin (:class:`~oracledp.synth._table.TableDomain` ``within``).  Those probabilities come from
the estimate with every split the noise cannot tell from even made even (``tree_histogram``'s
``flat``, :data:`FLAT_KAPPA`), except on a level whose splits together depart from even beyond
noise (:func:`level_test`): most differences between neighbouring narrow bins are noise, and
drawn as such they put mass on the wrong side of the data's quantiles, while heaps spread over
many nodes (hours worked heaped at multiples of 5, ages in whole years on a half-year grid) are
the data's own resolution; without the level test, flattening them cost health_insurance at
epsilon 0.5 (docs/results/synth-flat).  A split whose parent holds less than the noise of its
children is made even when its own flat test passes, whatever its level's test says: drawn
plain, a heap elsewhere on the level (40 % of a column at one value) had made noise heaps of
1.5-1.7 % (3.5-3.9 % for independent marginals) at values holding 0.1-0.3 %
(docs/results/synth-heap).  A split made even keeps the count of a child holding one of the
grid's bounds when freeing that child is worth a flat test's degree of freedom
(:data:`BOUND_HEAPS`): heaps lie at the bounds (a money column's zeros, a top-coded value),
and beside a wide grid's equal shares a bound is a fine bin of one point, whose share of an
even split is next to nothing (docs/results/synth-bound-heaps).  Privacy: the histograms and
the synthesizer's own measurements compose (zCDP: rho adds up; pure: epsilon adds up); the
release states their sum (:class:`~oracledp.synth.TableSynthesizer`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp.privacy import _noise as noise

__all__ = ["BOUND_HEAPS", "BRANCHING", "FINE_BINS", "FLAT_KAPPA", "LEVEL_Z", "LOW_POINTS",
           "ROUND_POINTS", "TAIL_FENCE", "TAIL_FLOOR", "TAIL_PASSES", "TAIL_QUANTILES", "TAIL_Z",
           "cover_nodes", "far_tails", "fine_bin_count", "fine_starts", "flat_test",
           "level_test", "low_points", "project_simplex",
           "quantile_starts", "range_nodes", "round_points", "tree_histogram", "tree_levels"]

#: A grid of more points is cut into this many equal shares (:func:`fine_bin_count`), which
#: its round values (:func:`round_points`) and its low points (:func:`low_points`) split
#: further: a grid of 100,000 points (0-99,999) has 3,454 fine bins, its 1,024 shares split at
#: its 1,001 round values (the multiples of 100 and the upper bound) and its points below 256
#: and multiples of 10 below 2,560, a tree of 6 levels instead of 5 (each level's noise about
#: 10 % larger).
FINE_BINS = 1024

#: Whether a wide grid's round values (:func:`round_points`) are fine bins of their own.
ROUND_POINTS = True

#: A wide grid's first this many points are fine bins of their own, then every 10th point
#: up to 10 times as far, and so on (:func:`low_points`); 0 switches them off.
LOW_POINTS = 256

#: Children per node of the hierarchical histogram.
BRANCHING = 4

#: TableSynthesizer's ``flat`` for :func:`tree_histogram`: the shape drawn within a coarse
#: bin is flattened where the noise cannot tell it from even (kappa of :func:`flat_test`: a
#: split whose departure from even has a sum of squares below 4 (k - 1) noise variances;
#: noise alone passes that with probability above 99 % for 4 children).  On the health-panel
#: stand-in at epsilon 1 (seeds 100-105, docs/results/synth-flat; income's wide grid alone
#: flattened, before the level test) income's 1-way TV at the real octiles was 0.0334 under
#: the rule before (no round values, the plain shape), 0.0270, 0.0164, 0.0166 and 0.0170 with
#: kappa 1, 2, 4 and 8 and the round values (the mean 2-way TV 0.0231, then 0.0226, 0.0212,
#: 0.0212, 0.0213): level from 2 to 8.
FLAT_KAPPA = 4.0

#: Whether a flattened split keeps the share of a child holding one of the grid's bounds
#: when freeing it is worth a flat test's degree of freedom (:func:`_even_split`).
BOUND_HEAPS = True

#: :func:`level_test`: a level whose splits together depart from even by more than this many
#: standard deviations of their noise-only chi-square keeps every split plain.
LEVEL_Z = 3.0


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
    return min(len(cover_nodes(a, b, m, branching)),
               len(cover_nodes(0, a, m, branching)) + len(cover_nodes(b, m, m, branching)))


def cover_nodes(a: int, b: int, m: int, branching: int = BRANCHING) -> list[tuple[int, int]]:
    """The fewest measured nodes of the tree over ``m`` leaves whose leaves are exactly
    ``a .. b - 1``, as ``(first leaf, end)`` pairs from left to right (none when a >= b).

    >>> cover_nodes(1, 16, 16)
    [(1, 2), (2, 3), (3, 4), (4, 8), (8, 12), (12, 16)]
    """
    L = tree_levels(m, branching)
    blocks = _level_blocks(m, L, branching)  # leaves per node, largest first
    out, p = [], a
    while p < b:
        end = min(p + next(s for s in blocks if p % s == 0 and min(p + s, m) <= b), m)
        out.append((p, end))
        p = end
    return out


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
                   branching: int = BRANCHING, flat: float | None = None,
                   widths: NDArray[np.floating] | None = None, keep: int | None = None,
                   outside: float | None = None, heaps: Sequence[int] = ()) -> Any:
    """The private estimate of a histogram of ``m = len(counts)`` fine bins (module docstring).

    Exactly one of ``sigma`` (Gaussian noise of every measured node) or ``laplace_scale``
    (Laplace noise).  The caller sets them from the budget of the column:
    ``sigma = sqrt(L / rho)`` makes the L levels rho-zCDP together, ``laplace_scale =
    2 L / epsilon`` epsilon-DP together (L = :func:`tree_levels`).  The total ``n =
    counts.sum()`` is used as public.  Returns nonnegative counts summing to n.

    ``outside``: the count of the records in no leaf (a column's missing cells); the root is
    then ``n = counts.sum() + outside`` (public), and every level's release holds one more
    count, ``outside``'s, beside its nodes (a record moved between a leaf and outside changes
    one node and that count by one: the level's sensitivities stay 2).  The estimate of
    ``outside`` (the mean of its L noisy counts) joins the root's children in the least
    squares under the root n and their nonnegative projection, and is returned as one more
    entry after the leaves.  It shares no node with a leaf: as a leaf after the grid, its
    nodes had held the grid's top bins, whose noise took its count (below).

    ``flat`` (a number kappa > 0): also return, from the same noisy counts, the estimate
    with the splits the noise cannot tell from even flattened (:func:`flat_test`): from the
    root down, a node whose children's least-squares counts (given the node's estimate)
    depart from the node's even split (in proportion to ``widths``, the grid points of each
    leaf; default 1 each) by a sum of squares below ``kappa (children - 1)`` times one
    node's noise variance splits its estimate evenly (by width) among its children; the
    other nodes split as the plain estimate does (least squares, then the nonnegative
    projection), and so does every node of a level below the root's children whose splits
    together depart from even beyond noise (:func:`level_test`; the root's one split has
    :func:`flat_test` alone), except a node whose estimate is below its children's noise
    (``sqrt(children var)``), which splits evenly when its own split passes whatever its
    level's test says (it cannot show a split beyond noise: drawn plain, its noise made
    heaps of several percent beside a real heap elsewhere on the level).  A split made
    even keeps the count of a child holding the first leaf or the last of the first
    ``keep`` (a bound of the grid) where freeing it lowers the even split's squared
    departures by at least ``kappa`` variances (:func:`_even_split`, :data:`BOUND_HEAPS`), and
    so does a child holding one of ``heaps`` (leaf indices the caller knows from public facts
    alone to be likely heaps: a column's declared fill value for missing cells).  Each node
    is tested on its own children, so structure seen only at a finer level is kept.  Only
    nodes within the first ``keep`` leaves (default all) may split evenly.  Returns
    ``(estimate, flattened estimate)`` then: both nonnegative and summing to n.
    Post-processing of the same release.
    """
    if (sigma is None) == (laplace_scale is None):
        raise ValueError("pass exactly one of sigma and laplace_scale")
    x = np.asarray(counts, dtype=np.float64)
    m = len(x)
    n = float(x.sum()) + (0.0 if outside is None else float(outside))  # the root: public
    L = tree_levels(m, branching)
    blocks = _level_blocks(m, L, branching)
    var = sigma**2 if sigma is not None else 2.0 * laplace_scale**2  # type: ignore[operator]
    # the flattening's tests compare departures with var; a huge epsilon's var underflows
    # to 0, where the smallest normal float keeps them finite (the counts are then exact)
    var = max(var, float(np.finfo(np.float64).tiny))
    # noisy counts of every level's nodes (level l: ceil(m / block) nodes)
    csum = np.concatenate([[0.0], np.cumsum(x)])
    noisy: list[NDArray[np.float64]] = []
    out_noisy: list[float] = []
    for block in blocks:
        starts = np.arange(0, m, block)
        true = csum[np.minimum(starts + block, m)] - csum[starts]
        size = len(true) + (outside is not None)  # the outside count with each level
        if sigma is not None:
            draw = noise.gaussian(rng, sigma, size)
        else:
            draw = noise.laplace(rng, laplace_scale, size)
        noisy.append(true + draw[:len(true)])
        if outside is not None:
            out_noisy.append(float(outside) + float(draw[-1]))
    # up: z = the best estimate of each node from its own count and its subtree's
    z: list[NDArray[np.float64]] = [np.empty(0)] * L
    V: list[NDArray[np.float64]] = [np.empty(0)] * L
    # variances in units of one node's (every node has the same): the least squares below
    # read only their ratios, and a huge epsilon's tiny variance cannot overflow them
    z[L - 1], V[L - 1] = noisy[L - 1].copy(), np.ones(len(noisy[L - 1]))
    for lev in range(L - 2, -1, -1):
        parent_of = np.arange(len(z[lev + 1])) // branching
        s = np.bincount(parent_of, weights=z[lev + 1], minlength=len(noisy[lev]))
        vs = np.bincount(parent_of, weights=V[lev + 1], minlength=len(noisy[lev]))
        prec = 1.0 + 1.0 / vs
        z[lev] = (noisy[lev] + s / vs) / prec
        V[lev] = 1.0 / prec
    # down: least squares under the sums (the root is n), then nonnegative projections;
    # the outside count (variance 1 / L of a node's) is one more child of the root
    if outside is None:
        top_ls = z[0] + V[0] / V[0].sum() * (n - z[0].sum())
        est = project_simplex(top_ls, n)
    else:
        o_hat, o_var = float(np.mean(out_noisy)), 1.0 / L
        gap = n - z[0].sum() - o_hat
        top_ls = z[0] + V[0] / (V[0].sum() + o_var) * gap
        both = project_simplex(np.append(top_ls, o_hat + o_var / (V[0].sum() + o_var) * gap),
                               n)
        est, o_est = both[:-1], float(both[-1])
        n -= o_est  # the leaves' estimated total
    if flat is not None:
        w_leaf = (np.ones(m) if widths is None
                  else np.asarray(widths, dtype=np.float64))
        keep_ = m if keep is None else int(keep)
        if not (isinstance(flat, (int, float)) and not isinstance(flat, bool)
                and math.isfinite(flat) and flat > 0):
            raise ValueError("flat must be a positive number")
        if w_leaf.shape != (m,) or not (w_leaf > 0).all() or not 0 <= keep_ <= m:
            raise ValueError("widths must be m positive numbers and 0 <= keep <= m")
        wsum = np.concatenate([[0.0], np.cumsum(w_leaf)])
        # the root's children: all flat when the whole shape is within noise
        nw = _node_widths(wsum, blocks[0], m)
        bound_leaves = ((0, keep_ - 1) if BOUND_HEAPS and keep_ > 0 else ()) + tuple(
            int(h) for h in heaps if 0 <= int(h) < keep_)
        f_est = (_even_split(top_ls, nw, n, _bound_children(bound_leaves, blocks[0], 0,
                                                            len(top_ls)), var, flat)
                 if keep_ == m and flat_test(top_ls, nw, var, flat) else est.copy())
    for lev in range(1, L):
        parent_of = np.arange(len(z[lev])) // branching
        s = np.bincount(parent_of, weights=z[lev], minlength=len(est))
        vs = np.bincount(parent_of, weights=V[lev], minlength=len(est))
        ls = z[lev] + V[lev] / vs[parent_of] * (est - s)[parent_of]
        out = np.empty_like(ls)
        for p in range(len(est)):
            lo, hi = p * branching, min((p + 1) * branching, len(ls))
            out[lo:hi] = project_simplex(ls[lo:hi], float(est[p]))
        if flat is not None:
            nw = _node_widths(wsum, blocks[lev], m)
            f_ls = z[lev] + V[lev] / vs[parent_of] * (f_est - s)[parent_of]
            f_out = np.empty_like(ls)
            even = level_test(f_ls, nw, branching, var, [
                min((p + 1) * blocks[lev - 1], m) <= keep_ for p in range(len(f_est))])
            for p in range(len(f_est)):
                lo, hi = p * branching, min((p + 1) * branching, len(ls))
                inside = min((p + 1) * blocks[lev - 1], m) <= keep_  # the parent's leaves
                # a parent holding less than its children's noise (sqrt(children) node
                # standard deviations) cannot show a split beyond noise: split evenly when
                # its own split passes, whatever the level (a heap elsewhere on the level
                # made noise heaps of such parents, drawn plain)
                few = f_est[p] < math.sqrt((hi - lo) * var)
                if (even or few) and inside and flat_test(f_ls[lo:hi], nw[lo:hi], var, flat):
                    f_out[lo:hi] = _even_split(
                        f_ls[lo:hi], nw[lo:hi], float(f_est[p]),
                        _bound_children(bound_leaves, blocks[lev], lo, hi), var, flat)
                else:
                    f_out[lo:hi] = project_simplex(f_ls[lo:hi], float(f_est[p]))
            f_est = f_out
        est = out
    if outside is not None:
        est = np.append(est, o_est)
        if flat is not None:
            f_est = np.append(f_est, o_est)
    if flat is not None:
        return est, f_est
    return est


#: :func:`far_tails`: the fence lies this many spreads (the grid points between the estimate's
#: ``TAIL_QUANTILES``) beyond the outer quantile on each side.  Tuned on seeds 100-105 of a
#: new user's tables (docs/results/synth-far-tails): spend declared 0-100,000 with data to
#: 1,540 (mean 28), cost declared 0-50,000 with a log-normal tail to 27,500, the 5,000-row
#: health panel's counts and incomes.
TAIL_FENCE = 3.0

#: :func:`far_tails`: the estimate's quantiles whose range is the spread.
TAIL_QUANTILES = (0.05, 0.95)

#: :func:`far_tails`: the fence lies at least this share of the grid beyond the quantile.
TAIL_FLOOR = 0.02

#: :func:`far_tails`: at most this many passes, each with the quantiles of what the passes
#: before kept (noise beyond the data can hold more than 5 % of the estimate at small n and
#: epsilon, and move the 95 % quantile into it).
TAIL_PASSES = 3

#: :func:`far_tails`: the range beyond a fence is emptied when its estimated count is below
#: this many standard deviations of its noise.
TAIL_Z = 2.0


def far_tails(h: NDArray[np.float64], widths: NDArray[np.float64], sd: float,
              leaves: int | None = None, branching: int = BRANCHING) -> NDArray[np.bool_]:
    """The fine bins of the estimate ``h`` (counts over consecutive fine bins of ``widths``
    grid points) that lie far beyond the estimated bulk and whose estimated count, together,
    is within noise of zero: on each side, the bins wholly beyond the fence (the estimate's
    ``TAIL_QUANTILES`` quantile moved out by ``TAIL_FENCE`` times the grid points between the
    two quantiles, at least ``TAIL_FLOOR`` of the grid) whose summed estimate is below
    ``TAIL_Z`` times the noise of a sum over the tree nodes covering them (``sd`` times the
    square root of their number; the tree over ``leaves``, default ``len(h)``) and each of
    those nodes holds less than ``TAIL_Z sd`` (:func:`_within_noise`), taking the covering
    nodes from the grid's end inward, one more at a time, until a run fails (a real cluster
    far out keeps its node and everything nearer, the noise beyond it goes); again, with the
    quantiles of what is left, until nothing more goes (at most ``TAIL_PASSES`` passes).

    Post-processing.  A node within noise of zero cannot tell an empty range from a thin
    real tail; the fence keeps the rule away from the data's own tails (a 0-100 score's 10 %
    below 32 lies within it), and far beyond it the noise's positive part, spread evenly
    over a declared range wider than the data, is what the estimate held.  A real cluster
    far out is kept when its node's estimate holds 2 sd (3 % of 1,500 records at epsilon 3),
    emptied below that (the same cluster at epsilon 1, 1.8 sd): noise can take a cluster of
    3 sd below 2, so only one of about 3 sd or more is kept reliably; a real thin tail beyond
    the fence (a log-normal's last 1 %) goes.

    >>> h = np.concatenate([[100.0, 300, 400, 200, 100], np.zeros(9), [3, 0, 2, 0, 4, 0, 3]])
    >>> far_tails(h, np.ones(21), 5.0).nonzero()[0].tolist()  # beyond 4 + 3 (4 - 0)
    [17, 18, 19, 20]
    >>> far_tails(h, np.ones(21), 0.5).any()  # 7 records there: not noise at this sd
    np.False_
    """
    h = np.maximum(np.asarray(h, dtype=np.float64), 0.0)
    m = len(h)
    out = np.zeros(m, dtype=bool)
    total = float(h.sum())
    if m < 3 or not total > 0:
        return out
    first = np.concatenate([[0.0], np.cumsum(widths)[:-1]])  # each bin's first grid point
    last = first + np.asarray(widths, dtype=np.float64) - 1.0
    n_leaves = m if leaves is None else int(leaves)
    lo_q, hi_q = TAIL_QUANTILES
    for _ in range(TAIL_PASSES):  # the quantiles again without what went: noise moved them
        rest = np.where(out, 0.0, h)
        cdf = np.cumsum(rest) / rest.sum()
        i_lo = int(np.searchsorted(cdf, lo_q, side="left"))
        i_hi = min(int(np.searchsorted(cdf, hi_q, side="left")), m - 1)
        lo, hi = first[i_lo], last[i_hi]
        reach = max(TAIL_FENCE * (hi - lo), TAIL_FLOOR * (last[-1] + 1.0))
        before = out.copy()
        above = np.flatnonzero(first > hi + reach)
        if above.size:  # nodes from the top, one more at a time, while they hold only noise
            for a, _ in reversed(cover_nodes(int(above[0]), m, n_leaves, branching)):
                if not _within_noise(h, a, m, sd, n_leaves, branching):
                    break
                out[a:] = True
        below = np.flatnonzero(last < lo - reach)
        if below.size:  # and from the bottom
            for _, b in cover_nodes(0, int(below[-1]) + 1, n_leaves, branching):
                if not _within_noise(h, 0, b, sd, n_leaves, branching):
                    break
                out[:b] = True
        if (out == before).all():
            break
    return out


def _within_noise(h: NDArray[np.float64], a: int, b: int, sd: float, leaves: int,
                  branching: int) -> bool:
    """Whether the estimate's bins ``a .. b - 1`` (a < b) hold no more than noise: their
    sum below ``TAIL_Z`` times ``sd`` times the square root of the number of tree nodes
    covering them (:func:`cover_nodes`; each projected node keeps the positive part of its
    own noise, so the fewer nodes of the range's complement would understate the sum's), and
    each of those nodes below ``TAIL_Z sd`` (a real cluster in one node can be below the
    first and not the second)."""
    nodes = cover_nodes(a, b, leaves, branching)
    return (float(h[a:b].sum()) < TAIL_Z * sd * math.sqrt(len(nodes))
            and all(float(h[lo:hi].sum()) < TAIL_Z * sd for lo, hi in nodes))


def level_test(values: NDArray[np.float64], widths: NDArray[np.float64], branching: int,
               var: float, testable: Sequence[bool]) -> bool:
    """Whether one level's splits, taken together, are within noise of even: the sum over
    its ``testable`` parents (consecutive groups of ``branching`` of ``values``) of the
    squared departures from each parent's even split (by ``widths``), over its expectation
    under noise of variance ``var`` alone, ``(children - 1) var`` summed, is at most
    ``1 + LEVEL_Z sqrt(2 / df)`` (df: that sum of ``children - 1``; the chi-square's
    standard deviation is ``sqrt(2 df)``).  A level that fails it keeps every split plain:
    structure too weak to see in one node but present across many (ages in whole years on a
    half-year grid, hours heaped at multiples of 5) is the data's, not noise.  True where
    nothing is testable.  The threshold is a Gaussian chi-square's; under Laplace noise (the
    pure methods) the statistic spreads more, so a level of noise alone is kept plain
    somewhat more often, the safe direction.

    >>> flat = np.array([50.0, 52, 49, 51] * 20)
    >>> level_test(flat, np.ones(80), 4, 100.0, [True] * 20)
    True
    >>> level_test(np.array([80.0, 20, 80, 20] * 20), np.ones(80), 4, 100.0, [True] * 20)
    False
    """
    num = df = 0.0
    for p, ok in enumerate(testable):
        lo, hi = p * branching, min((p + 1) * branching, len(values))
        if not ok or hi - lo < 2:
            continue
        c, w = values[lo:hi], widths[lo:hi]
        dev = c - c.sum() * w / w.sum()
        num += float(dev @ dev)
        df += hi - lo - 1
    return df == 0 or num / (df * var) <= 1.0 + LEVEL_Z * math.sqrt(2.0 / df)


def flat_test(children: NDArray[np.float64], widths: NDArray[np.float64], var: float,
              kappa: float) -> bool:
    """Whether ``children``'s counts are within noise of their sum split in proportion to
    ``widths``: ``sum (c_i - C w_i / W)^2 < kappa (len - 1) var`` (a single child: True).

    >>> flat_test(np.array([52.0, 47, 55, 46]), np.ones(4), 100.0, 4.0)
    True
    >>> flat_test(np.array([600.0, 20, 20, 20]), np.ones(4), 100.0, 4.0)
    False
    """
    k = len(children)
    if k < 2:
        return True
    dev = children - children.sum() * widths / widths.sum()
    return float(dev @ dev) < kappa * (k - 1) * var


def _bound_children(leaves: Sequence[int], block: int, lo: int, hi: int) -> list[int]:
    """The positions among the nodes ``lo .. hi - 1`` (of ``block`` leaves each) of those
    holding one of ``leaves``."""
    return sorted({leaf // block - lo for leaf in leaves if lo <= leaf // block < hi})


def _even_split(children: NDArray[np.float64], widths: NDArray[np.float64], total: float,
                bounds: Sequence[int], var: float, kappa: float) -> NDArray[np.float64]:
    """``total`` split in proportion to ``widths``, except each child among ``bounds`` (those
    holding a bound of the grid) whose count in ``children`` lies above its share of that
    split by enough: freeing it alone (it keeps its count, the others split the rest by
    width) lowers the split's sum of squared departures by at least ``kappa`` noise
    variances ``var`` (the flat test's ``kappa`` per freed count).  Such a child keeps its
    count (within 0 and ``total``).  A grid's bounds are where heaps lie (a money column's
    zeros, a top-coded value), and beside the wide equal shares of a wide grid a bound is a
    fine bin of one point, whose share of an even split is next to nothing: 3.6 % of 4,000
    incomes top-coded at 200,000 (beside a share of 195 points) came back as 0.4 % of the
    synthetic incomes at epsilon 0.5 without this, 1.8 % with it (8 seeds)."""
    w = np.asarray(widths, dtype=np.float64)
    if not bounds:  # most splits: nothing to test (this runs once per flattened node)
        return _spread(total, w)
    c = np.asarray(children, dtype=np.float64)
    even = c.sum() * w / w.sum()
    sse0 = float(((c - even) ** 2).sum())
    free = []
    for b in bounds:
        rest = np.arange(len(c)) != b
        if not rest.any() or c[b] <= even[b]:
            continue
        e1 = (c.sum() - c[b]) * w[rest] / w[rest].sum()
        if sse0 - float(((c[rest] - e1) ** 2).sum()) >= kappa * var:
            free.append(b)
    if not free:
        return _spread(total, w)
    out = np.zeros(len(c))
    out[free] = np.clip(c[free], 0.0, total)
    if out.sum() > total:
        out *= total / out.sum()
    rest = np.ones(len(c), dtype=bool)
    rest[free] = False
    if rest.any():
        out[rest] = _spread(max(total - float(out.sum()), 0.0), w[rest])
    elif out.sum() > 0:
        out *= total / out.sum()
    return out


def _node_widths(wsum: NDArray[np.float64], block: int, m: int) -> NDArray[np.float64]:
    """The total width of each node of ``block`` leaves (cumulative leaf widths ``wsum``)."""
    st = np.arange(0, m, block)
    return wsum[np.minimum(st + block, m)] - wsum[st]


def _spread(total: float, widths: NDArray[np.float64]) -> NDArray[np.float64]:
    """``total`` split in proportion to ``widths``."""
    return total * widths / widths.sum()


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


def round_points(K: int, lower: float, step: float) -> NDArray[np.int64]:
    """The grid indices of a wide grid's round values, each a fine bin of its own: on a grid
    of more than :data:`FINE_BINS` points ``lower + k step``, k = 0..K, its two bounds and
    the values that are multiples of ``10^j step`` for the smallest j >= 1 with at most
    FINE_BINS of them (only the bounds where ``lower`` is not a whole number of steps; none
    on a grid of at most FINE_BINS points, whose fine bins are its points).

    Values people round to (incomes to the thousand) are the data's heaps; inside a fine bin
    of many grid points a heap would be drawn uniformly over the bin, half of it on the wrong
    side of a quantile cut at the heap.  Public: the declared grid only.

    >>> round_points(1_000_000, 0, 1)[:3].tolist(), len(round_points(1_000_000, 0, 1))
    ([0, 1000, 2000], 1001)
    >>> round_points(5000, 0.3, 1).tolist()  # 0.3, 1.3, ...: only the bounds
    [0, 5000]
    >>> round_points(2000, -5, 0.5)[:2].tolist(), len(round_points(100, 0, 1))  # -5, 0
    ([0, 10], 0)
    """
    if K + 1 <= FINE_BINS:
        return np.empty(0, dtype=np.int64)
    ends = np.array([0, K], dtype=np.int64)  # the bounds: a count's 0, a top-coded value
    base = lower / step
    if abs(base - round(base)) > 1e-9:
        return ends
    j = 1
    while (K + 1) / 10**j > FINE_BINS - 1:
        j += 1
    period = 10**j
    first = (-round(base)) % period
    return np.union1d(ends, np.arange(first, K + 1, period, dtype=np.int64))


def low_points(K: int) -> NDArray[np.int64]:
    """The grid indices that are fine bins of their own near a wide grid's lower bound:
    the first :data:`LOW_POINTS` points (indices 0 .. LOW_POINTS - 1), then every 10th
    index up to 10 LOW_POINTS, every 100th up to 100 LOW_POINTS, and so on while that
    spacing is finer than the grid's equal shares (:func:`fine_starts`); none on a grid of at
    most :data:`FINE_BINS` points, whose fine bins are its points.

    Counts and amounts are declared with generous public bounds and lie near the lower one:
    visits declared 0-10,000 with 72 % zeros and 23 % ones, amounts declared 0-1,000,000
    with data 3-421.  In equal shares of 9.8 and 977 points the ones were drawn evenly over
    1-9 and the amounts over 1-976.  Here each value below 256 is a bin of its own, and a
    bin never spans more than 4 % of the values it holds up to the equal shares' width.
    Public: the declared grid only.

    >>> low_points(10_000)[-3:].tolist(), len(low_points(10_000))  # shares 9.8 wide
    ([253, 254, 255], 256)
    >>> p = low_points(1_000_000)  # shares 977 wide: 1, 10 and 100 apart
    >>> p[255:258].tolist(), p[-1].item(), len(p), len(low_points(1000))
    ([255, 260, 270], 25500, 716, 0)
    """
    if K + 1 <= FINE_BINS or LOW_POINTS <= 0:
        return np.empty(0, dtype=np.int64)
    share = (K + 1) / FINE_BINS
    out = [np.arange(min(LOW_POINTS, K + 1), dtype=np.int64)]
    spacing = 10
    while spacing < share and spacing * LOW_POINTS // 10 <= K:
        first = -(-(spacing * LOW_POINTS // 10) // spacing) * spacing  # a multiple of it
        out.append(np.arange(first, min(spacing * LOW_POINTS, K + 1), spacing, dtype=np.int64))
        spacing *= 10
    return np.unique(np.concatenate(out))


def fine_bin_count(K: int) -> int:
    """The number of equal-share fine bins of a grid with K + 1 points (before round values
    and declared cut points split them)."""
    return int(min(K + 1, FINE_BINS))
