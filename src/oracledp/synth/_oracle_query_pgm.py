"""OracleQuery with measurements: the game selects, Gaussian measurements are estimated.

:class:`~oracledp.synth._oracle_query.OracleQuerySynthesizer` spends its whole budget on
*selecting* queries (the query player's best responses) and releases the data player's
average play; the answers to the selected queries are never measured.  This variant
(``OracleQueryPGM``) keeps the game's query player and spends most of the budget on
measuring what it selects, then releases a Private-PGM style estimate
(:mod:`oracledp.synth._estimation`, fitted by :func:`oracledp.synth._graphical.estimate_model`)
of those measurements:

1. **Start** (a fraction ``one_way_fraction`` of the budget; by default 0.1, and where the
   rounds select and the budget asks for fewer rounds than d - 1 :func:`one_way_share`:
   enough for each 1-way table to get a round's budget, at most 0.5, where it asks for at
   most (d - 1) / 2, falling linearly to 0.1 at d - 1): every 1-way marginal table is
   measured with Gaussian noise, the share split among them as their numbers of cells to the
   power 2/3 (:func:`one_way_sigmas`).
2. **Each of T rounds**: the data player's play ``D_t`` is the current estimate (the
   distribution fitted to the measurements so far: post-processing, no privacy cost).
   The query player's class is the cells of every j-way marginal for j in ``orders``
   (default pairs, ``(2,)``), with their negations.  With ``selection="query"`` it selects a
   query ``qbar`` in ``Q ∪ ¬Q`` by the exponential mechanism with score
   ``n (qbar(S) - qbar(D_t))``, exactly as OracleQuery's ``"noisy-min"`` player, and the
   table containing that cell is measured.  With ``selection="table"`` it selects the
   table directly, by the exponential mechanism over the tables with score "the count
   error of the table's worst query", ``max_q |n (q(S) - q(D_t))|`` (each query's count
   moves by at most 1, so the maximum does too: sensitivity 1).  A table is one
   candidate instead of its hundreds of cells, so at a small budget the selection is far
   less diluted by the many cells with small errors.  With ``selection="l1"`` the table's
   score is its L1 count error minus the expected L1 norm of its measurement noise,
   ``sum_q |n (q(S) - q(D_t))| - sqrt(2/pi) sigma |cells|`` (AIM's quality score with
   weight 1; sensitivity 2).  ``selection="auto"`` (the default) scores the first
   :func:`cover_rounds` rounds by L1 (cover: the tables with the most misfit mass net of
   noise; ``min(T, 3 (d - 1))`` where a round's selection budget is at least 0.01, else
   ``min(d - 1, ceil(T / 2))``) and the later ones by the worst query (refine); but when
   the rounds would measure at least half of the candidate tables and a model over all of
   them is allowed (:func:`measures_all`), it selects nothing and measures every candidate table once with
   the rounds' whole budget (``selection="all"``: small tables such as titanic's 4 columns,
   or 8-column Adult from eps = 0.5, whose model is one clique).  Either way the oracle is
   enumeration of the explicit workload, so it is exact (no certification question
   arises).  The selected marginal table is measured with Gaussian noise and the
   estimate is refitted (warm start).  With public coarser codes of some attributes
   (``fit``'s ``coarse``; ``pair_resolution="select"``, the default) a table holding such an
   attribute is a candidate on its cells and on the coarser cells, and is measured on the
   cells selected (the estimate fits a coarse table through the public sum onto its cells).
   The last round, where some attributes lie in no measured table of two or more
   (:func:`alone_attributes`, a function of the released selections), selects nothing: its
   whole budget measures those attributes' 1-way tables, split as in step 1
   (``last_round="cover"``).  An attribute the selection never pairs (one independent of
   the others) otherwise keeps only its share of the 1-way budget.
3. **Release**: the final estimate, refitted with more iterations; ``sample`` draws
   records from it.  With ``"all"`` (every table measured, none selected) a measured pair
   whose interaction is, with confidence, below its own noise is fitted by its two margins
   (:func:`~oracledp.synth._estimation.margins_within_noise`; post-processing): a noisy,
   nearly independent pair of many cells otherwise made the release worse than
   independent marginals; the other pairs' interactions are shrunk toward independence by
   the share of their energy the noise explains
   (:func:`~oracledp.synth._estimation.shrink_interaction`, modelled on James-Stein;
   post-processing).

The estimate is one :class:`~oracledp.synth._graphical.GraphicalModel` held on a junction
tree.  With ``estimator="auto"`` (default) on a domain of at most 2,000,000 cells the tree
is one clique over all attributes (the product domain: every table fits, so no candidate
is excluded, and T uses :func:`default_rounds`'s divisor 100); above that, or with
``estimator="graphical"``, it is the triangulation of the measured sets, and each round's
candidates are the tables that keep it within ``max_model_cells`` (divisor 50; where that
asks for fewer rounds than ``d - 1``, ``"auto"`` raises T to :func:`floor_rounds`).

Privacy (replace-one neighbours, n public), accounted in zCDP (the full proof, including
why the selection costs ``eps_sel^2 / 8`` and not the ``eps_sel^2 / 2`` of OracleQuery's
pure rounds: ``docs/proofs/oracle-query-pgm-selection.md``):

* Gaussian mechanism on a count table: one record replaced moves two cells by 1, so the
  L2 sensitivity is ``sqrt(2)`` and noise ``N(0, sigma^2)`` per cell is
  ``(sqrt 2)^2 / (2 sigma^2) = 1 / sigma^2``-zCDP (Bun-Steinke 2016, Prop. 1.6).
* Exponential mechanism with score sensitivity 1 and probabilities
  ``∝ exp(eps_sel score / 2)``: ``eps_sel``-DP and ``eps_sel``-bounded range, hence
  ``eps_sel^2 / 8``-zCDP (Cesar-Rogers 2021, Lemma 3.2 with Durfee-Rogers 2019's
  bounded-range property of the exponential mechanism).
* The last round's cover: which attributes it measures is a function of earlier releases,
  and its 1-way tables' rho add up to a round's, ``(1 - f) rho / T``.
* Adaptive composition adds the rho's (Bun-Steinke 2016, Lemma 2.3); the total rho is
  converted by ``(rho + 2 sqrt(rho ln(1/delta)), delta)`` (Prop. 1.3), the conversion used
  by every zCDP mechanism in this package.  The total rho is chosen so that this equals
  the target epsilon, and the ledger is recomputed before release.

The accounting is the privacy core's: the budget is :func:`oracledp.privacy.zcdp_rho`, each
step is a :class:`oracledp.privacy.Spend` whose rho is
:func:`~oracledp.privacy.gaussian_rho` (squared sensitivity 2) or
:func:`~oracledp.privacy.exponential_mechanism_rho`, and the guarantee is
:func:`~oracledp.privacy.ledger_guarantee` of the ledger (zCDP composition).

The estimate is post-processing of the measurements; the accuracy bound of the game
(``oracle_query_bound``) does **not** cover this variant (the data player does not run
a no-regret algorithm): its accuracy is measured, not proven.  The defaults (T, the
budget fractions, the iteration counts) are fixed constants or functions of public
quantities (n, epsilon, delta, d), chosen on the Adult benchmark and the bundled tables
(each function's docstring says with which seeds), never read from the data of a fit.
The query player's default class is pairs, selected as tables (``orders=(2,)``): with 5
tuning seeds at eps = 0.1 (worst-query scores), ``(3,)`` and ``(2, 3)`` were worse and
``selection_fraction=0.25`` beat 0.1 and 0.4.  The ``"auto"`` selection was chosen with
tuning seeds 100-105 on the four benchmark tables (``docs/synthetic-data.md``): the L1
score alone wins at the smallest budgets and loses at larger ones (it keeps re-measuring
small tables), the worst-query score the opposite.
"""

from __future__ import annotations

import itertools
import math
import operator
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp._diagnostics import (
    NonPrivateDiagnostics,
    check_diagnostics_flag,
    release_diagnostics,
)
from oracledp._validation import RandomLike, check_choice, check_delta, check_epsilon, check_rng
from oracledp.privacy import (
    Spend,
    exponential_mechanism_rho,
    gaussian_rho,
    ledger_guarantee,
    zcdp_epsilon,
    zcdp_rho,
)
from oracledp.privacy import _noise as noise
from oracledp.privacy._accountant import begin_release
from oracledp.synth._base import Synthesizer
from oracledp.synth._domain import Domain
from oracledp.synth._estimation import (
    MarginalMeasurement,
    coarse_shape,
    margins_within_noise,
    project,
    project_index,
    shrink_interaction,
)
from oracledp.synth._graphical import GraphicalModel, estimate_model
from oracledp.synth._junction_tree import JunctionTree, junction_tree_cells
from oracledp.synth._workload import (
    MarginalWorkload,
    answer,
    check_sample_weight,
    kway_marginal_workload,
)

__all__ = ["COVER_FLOOR_MAX", "COVER_SPAN", "DEFAULT_PAIR_RESOLUTION", "L1_SELECTION_EPS",
           "ONE_WAY_POWER", "OracleQueryPGM", "alone_attributes",
           "cover_rounds", "default_model_cells", "default_rounds", "floor_rounds",
           "measures_all", "one_way_share", "one_way_sigmas"]

#: Above this many candidate tables, the junction-tree estimator tests a table's effect on
#: the model size only when the selection reaches it (:class:`_LazyAllowed`; same
#: distribution).  Below it every table is tested first (:func:`_allowed_blocks`), which
#: keeps the random draws of the smaller tables' fits as they were.
_LAZY_BLOCKS = 300
#: ``estimator="auto"`` holds the model on one clique over every attribute (the product
#: domain) up to this many cells (Adult: 1.3 M), and on a capped junction tree above it.
_ONE_CLIQUE_CELLS = 2_000_000
#: :func:`default_rounds`' divisor with the model on a capped junction tree (100 on one
#: clique): twice the rounds, which the model-size cap keeps cheap.
_TREE_DIVISOR = 50.0
#: OracleQueryPGM's default ``pair_resolution``: a table may also be measured on the public
#: coarser codes ``fit`` is given (``coarse``).
DEFAULT_PAIR_RESOLUTION = "select"


def default_rounds(n: int, epsilon: float, delta: float, d: int, *,
                   max_rounds: int = 100, divisor: float = 100.0) -> int:
    """Default T: ``max(d - 1, round(n sqrt(rho) / divisor))``, at most ``max_rounds``.

    ``divisor`` is 100 for a model on one clique over the whole domain and 50 for a capped
    junction tree (twice the rounds: its model-size cap keeps the extra rounds cheap; on doctor_visits
    at eps = 1, seed 0, the mean 2-way TV error fell from 0.0295 to 0.0236, on Adult with
    all columns at eps = 0.1 from 0.110 to 0.108, two seeds -- benchmark data, so the
    benchmark's numbers for this choice are not held out).

    Reads only public quantities (n, epsilon, delta, the number of attributes d).  Each
    round's measurement has noise ``sigma ~ sqrt(T / rho)`` counts, so at fixed T the
    relative noise ``sigma / n`` falls like ``1 / (n sqrt(rho))``; scaling T with
    ``n sqrt(rho)`` buys more measured tables as the signal grows.  The floor ``d - 1`` is
    the number of pairs a spanning tree over the attributes needs.  The constant 1/100 was
    chosen on the Adult benchmark (n = 30,718, d = 8: T = 7, 20, 41 at epsilon = 0.1, 0.5,
    1 with delta = 1e-6).
    """
    return int(min(max_rounds, max(1, d - 1, _wanted_rounds(n, epsilon, delta, divisor))))


def _wanted_rounds(n: int, epsilon: float, delta: float, divisor: float) -> int:
    """``round(n sqrt(rho) / divisor)``: the rounds the budget asks for before any cap."""
    return round(n * math.sqrt(zcdp_rho(epsilon, delta)) / divisor)


def default_model_cells(n: int, epsilon: float, delta: float, *,
                        max_rounds: int = 100, divisor: float = _TREE_DIVISOR) -> int:
    """Default junction-tree cap: 100,000 cells, or 500,000 when the budget asks for more
    than half of T's cap in rounds.

    That is when :func:`default_rounds`'s formula ``round(n sqrt(rho) / divisor)`` asks for
    more than ``max_rounds / 2``: the budget then buys enough precision per table that a
    larger model can use it (tables that a 100,000-cell tree excludes get measured).  Public:
    n, epsilon, delta only.  First chosen with tuning seeds 100-102 on Adult with all 12
    columns at eps = 2, whose rounds saturate (more than ``max_rounds``): mean 2-way TV error
    0.0201 with 100,000 cells, 0.0188 with 300,000, 0.0175 with 500,000, 0.0170 with
    1,000,000 (3.6x, 5.7x the fit time of 100,000).  The threshold was lowered from
    ``max_rounds`` to half of it at the data's own resolution (tuning seeds 100-102,
    ``docs/results/synth-cover/``): health_insurance at eps = 2 (87 rounds asked) 0.0125 ->
    0.0119, doctor_visits at eps = 2 (79) level (0.0231 -> 0.0233); at eps = 1
    health_insurance (44, below the threshold) would have gone 0.0186 -> 0.0181.
    """
    return 500_000 if _wanted_rounds(n, epsilon, delta, divisor) > max_rounds / 2 else 100_000


#: floor_rounds: no floor where ``COVER_SPAN (d - 1)`` rounds would be more than this (half
#: of :func:`default_rounds`' cap of 100).
COVER_FLOOR_MAX = 50


def floor_rounds(n: int, epsilon: float, delta: float, d: int) -> int:
    """The rounds ``selection="auto"`` on a capped junction tree raises T to where the budget
    asks for fewer than a spanning tree's ``d - 1``: ``COVER_SPAN (d - 1)`` when that is at
    most ``COVER_FLOOR_MAX`` (50), else 0 (no floor).

    Public: n, epsilon, delta, d only.  :meth:`OracleQueryPGM._default_T` applies it only
    on a capped junction tree (not with the model on one clique), and only when a round's
    selection budget at that many rounds is still at least :data:`L1_SELECTION_EPS`, so the
    L1 cover rule scores every round (:func:`cover_rounds`).  Where :func:`default_rounds`'
    formula ``round(n sqrt(rho) / 50)`` falls below ``d - 1``, every table is measured with
    much noise, and T = d - 1 rounds left the L1 rule too few tables to find the dependence
    worth measuring.  Chosen with tuning seeds (``docs/results/synth-floor/``): biopsy (10
    attributes with the class, 699 records) 0.2270 -> 0.1992 at eps = 1 and 0.1437 -> 0.1266
    at 2 (seeds 100-105), 0.2199 -> 0.1982 and 0.1390 -> 0.1314 over seeds 106-125, checked
    after the choice.  No floor past 50 rounds (d > 17): on nhefs (40 attributes, 1,629
    records) 100 rounds cost 0.0070 at eps = 1 (seeds 100-105), and 50 rounds, level there,
    were worse on the 15 seeds checked after the choice (+0.0041 +- 0.0025 at eps = 0.5,
    +0.0009 +- 0.0017 at 1, -0.0006 +- 0.0007 at 2).  Where the budget asks for d - 1 rounds or
    more it changes nothing: raising T to 3 (d - 1) there helped health_insurance and
    doctor_visits at eps = 0.5 but cost the health-panel stand-in at eps = 1 (mean 2-way TV
    0.0231 -> 0.0244 at the octiles, seeds 100-105), so it was not kept.  Not with one clique:
    there a floored T would often reach half of the candidate tables and switch
    ``measures_all`` on, a path no bundled table exercised.
    """
    F = COVER_SPAN * (d - 1)
    if F > COVER_FLOOR_MAX or _wanted_rounds(n, epsilon, delta, _TREE_DIVISOR) >= d - 1:
        return 0
    return F


#: one_way_share: the 1-way tables' default share of the budget is at least this and at most
#: ONE_WAY_CAP.
ONE_WAY_FLOOR = 0.1
ONE_WAY_CAP = 0.5
#: one_way_sigmas: each 1-way table's part of the budget they share grows as its number of
#: cells to this power (the split that minimises their summed expected L1 noise).
ONE_WAY_POWER = 2.0 / 3.0


def one_way_share(d: int, T: int, *, wanted: int) -> float:
    """The 1-way tables' share of the budget (``one_way_fraction=None``, the default) where the
    T rounds select.  ``wanted``: the rounds the budget asks for, ``round(n sqrt(rho) / 50)``
    (:func:`floor_rounds`' quantity, with either model).  Where that is at most half of the
    ``d - 1`` pairs of a spanning tree, the share is the smallest of at least 0.1 that gives
    each of the d 1-way tables at least the budget of one round, ``d / (T + d)``, at most
    0.5; it falls linearly to 0.1 as ``wanted`` goes from ``(d - 1) / 2`` to ``d - 1``, and
    is 0.1 from there on.

    Public: d, T and ``wanted`` (functions of n, epsilon, delta, d and the model's kind).
    With a share f, each 1-way table gets ``f rho / d`` and each round ``(1 - f) rho / T``.
    Where the budget asks for fewer rounds than d - 1, the default T is d - 1 or
    :func:`floor_rounds`' 3 (d - 1), so 0.1 gave a 1-way table ``T / (9 d)`` of a round's
    budget, about a ninth to a third: its noise was about 3 to 1.7 times that of a round's
    whole budget, at budgets where each column's own distribution is most of what a release
    can get right.  Chosen with tuning seeds 100-105 (``docs/results/synth-one-way/``; on
    each, ``wanted`` is at most (d - 1) / 2): mean native 2-way TV on nhefs (40 attributes,
    1,629 records: share 0.5) 0.4045 -> 0.3746, 0.1284 -> 0.1181, 0.0724 -> 0.0705, 0.0446
    -> 0.0413 at eps = 0.1, 0.5, 1, 2; biopsy (share 0.27) 0.1992 -> 0.1910 at eps = 1 and
    0.1266 -> 0.1282 at 2 (within noise); health_insurance and doctor_visits at eps = 0.1
    (share 0.5) 0.0833 -> 0.0803 and 0.1387 -> 0.1259.  On seeds 106-117, checked after the
    choice (paired differences): nhefs -0.0190, -0.0124, -0.0036, -0.0025, health_insurance
    and doctor_visits at eps = 0.1 -0.0077 and -0.0094, each beyond 1.7 standard errors;
    biopsy level.  Not where the budget asks for d - 1 rounds or more: there the same share
    cost the health-panel stand-in at eps = 1 (28 rounds asked, 12 attributes: share 0.3;
    mean 2-way TV at the octiles 0.0231 -> 0.0238, higher at 5, 10 and 16 quantiles too) and
    left health_insurance at eps = 0.5 and 1 and doctor_visits at eps = 0.5 level.  The
    linear part replaces a jump of up to 0.4 at ``wanted = d - 1`` by steps of at most
    ``2 (a - 0.1) / (d - 1)`` per round asked (a the share below the knee; for d <= 3 no
    whole ``wanted`` lies between the knee and d - 1, and the jump remains); no table of the
    tuning lies there.  A linear fall over the whole range (from ``wanted = 0``) was about
    level with the kept rule (docs/results/synth-one-way).
    Without selection (:func:`measures_all`: every pair table is measured, each attribute's
    1-way table within d - 1 of them) the caller keeps 0.1.

    >>> one_way_share(40, 39, wanted=4), one_way_share(10, 27, wanted=2)
    (0.5, 0.2702702702702703)
    >>> one_way_share(12, 28, wanted=28), one_way_share(8, 100, wanted=0)
    (0.1, 0.1)
    >>> round(one_way_share(40, 39, wanted=29), 4)  # 0.1 + 0.4 * 2 (1 - 29 / 39)
    0.3051
    """
    if isinstance(d, bool) or isinstance(T, bool) or not (int(d) >= 1 and int(T) >= 1):
        raise ValueError("one_way_share needs d >= 1 and T >= 1")
    if d < 2:
        return ONE_WAY_FLOOR
    top = max(ONE_WAY_FLOOR, min(ONE_WAY_CAP, d / (T + d)))
    ramp = min(1.0, max(0.0, 2.0 * (1.0 - wanted / (d - 1))))
    return ONE_WAY_FLOOR + (top - ONE_WAY_FLOOR) * ramp


def one_way_sigmas(cells: Sequence[int], rho: float, *, power: float | None = None
                   ) -> NDArray[np.float64]:
    """The Gaussian noise of 1-way tables of ``cells`` cells each that share ``rho`` (zCDP).

    Table a gets ``rho_a = rho c_a^p / sum_b c_b^p`` (p = ``power``, default
    :data:`ONE_WAY_POWER`, 2/3; 0 splits equally) and
    noise ``sigma_a = 1 / sqrt(rho_a)`` per cell: one record replaced moves two of its cells
    by 1 (squared l2 sensitivity 2), so it is ``2 / (2 sigma_a^2) = rho_a``-zCDP and the
    tables together ``rho`` (Bun-Steinke 2016, Prop. 1.6 and Lemma 2.3).  Public: the cells
    and rho only.

    The split minimises the tables' summed expected L1 noise, ``sqrt(2/pi) sum_a c_a
    sigma_a = sqrt(2/pi) sum_a c_a rho_a^(-1/2)`` under ``sum_a rho_a = rho`` (Lagrange:
    ``c_a rho_a^(-3/2)`` is the same for every a, so ``rho_a`` grows as ``c_a^(2/3)``).
    An equal split gave a 15-level column the budget of a 2-level one: on a new user's
    2,000 sales at eps = 1, 15 stores in no selected pair came out with a 1-way TV of 0.13
    against 0.05 for independent marginals.  Measured with tuning seeds 100-102
    (``docs/results/synth-one-way-split/``; mean native 2-way TV, the rules before -> this
    split and the last round's cover, ``last_round="cover"``): doctor_visits at eps = 2
    0.0228 -> 0.0218, nhefs at eps = 1 and 2 0.0675 -> 0.0630 and 0.0383 -> 0.0356, a
    30-city table 0.2145 -> 0.1951 (0.2099 with the cover alone); lower or level on 12 + 3 of
    15 new users' tables and 17 of the 20 bundled cells, the other three higher within their
    seeds' spread.

    A table of one cell (an attribute with one level) holds the public n: it gets no
    budget, ``sigma = inf``, and the caller does not measure it; the others share all of
    ``rho`` (with any ``power``).  Weight 1 had left 14 % of a 1-way share unspent on an
    attribute of levels (1, 3, 4, 2).  If every table has one cell, they share ``rho``
    equally (the model needs a measurement, and there is nothing else to measure).

    >>> [round(float(s), 3) for s in one_way_sigmas([8, 8], 0.5)]  # equal cells: equal split
    [2.0, 2.0]
    >>> s = one_way_sigmas([2, 16], 0.09)  # rho_a in proportion 1 : 4
    >>> [round(float(x), 3) for x in s], round(float((1 / s**2).sum()), 6)
    ([7.454, 3.727], 0.09)
    >>> [float(x) for x in one_way_sigmas([1, 4, 4], 0.5, power=0)]  # one level: public
    [inf, 2.0, 2.0]
    """
    c = np.asarray(cells, dtype=np.float64)
    if c.ndim != 1 or len(c) == 0 or not (c >= 1).all() or not (rho > 0):
        raise ValueError("one_way_sigmas needs at least one table of >= 1 cells and rho > 0")
    w = np.where(c > 1, c ** (ONE_WAY_POWER if power is None else float(power)), 0.0)
    if not w.any():
        w = np.ones(len(c))
    with np.errstate(divide="ignore"):
        return 1.0 / np.sqrt(rho * w / w.sum())


def alone_attributes(d: int, measured: Sequence[tuple[int, ...]]) -> list[int]:
    """The attributes ``0 .. d - 1`` that no table of ``measured`` (their attribute tuples)
    with two or more attributes holds: those whose 1-way tables are all the release says of
    them.  A function of the released selections only.

    >>> alone_attributes(5, [(0,), (1,), (0, 2), (2, 3)])
    [1, 4]
    """
    held = {a for axes in measured if len(axes) >= 2 for a in axes}
    return [a for a in range(d) if a not in held]


#: cover_rounds: from this selection budget per round (``eps_sel``) up, the L1 rule scores
#: up to ``COVER_SPAN (d - 1)`` rounds (see :func:`cover_rounds`).
L1_SELECTION_EPS = 0.01
#: cover_rounds: with a selection budget of at least ``L1_SELECTION_EPS`` per round, the L1
#: rule scores at most this many times ``d - 1`` rounds.
COVER_SPAN = 3


def cover_rounds(T: int, d: int, eps_sel: float = 0.0) -> int:
    """Rounds that ``selection="auto"`` scores by the L1 rule before the worst-query rule.

    Public: T, d and the round's selection budget ``eps_sel`` only.  Where ``eps_sel`` is
    at least :data:`L1_SELECTION_EPS` (0.01), ``min(T, 3 (d - 1))``; below it,
    ``min(d - 1, ceil(T / 2))`` (at most the d - 1 tables a spanning tree needs, and at
    most half the rounds).

    The worst-query score ignores the measurement noise: once a table is measured, its
    estimate's error is largely that noise, and where the noise is large (small n, tables
    of many cells) the worst cell of a noisy table outscores the dependence the other
    tables still miss; the L1 score subtracts the noise's expected L1 norm and does not
    fall for it (on biopsy at eps = 2 it measures the nine tables of the class with a
    feature, the worst-query rule re-measures 100-cell feature pairs).  Its sensitivity is
    2 against the worst query's 1, which costs most where the selection budget is
    smallest: at eps_sel about 0.003 (health_insurance and doctor_visits at eps = 0.1) the
    mixed rule stays better.  Past 3 (d - 1) rounds the L1 rule re-measures small tables
    (health_insurance at eps = 2, 87 rounds).  Chosen with tuning seeds 100-102 or 100-105
    (not the benchmark's 0-2; ``docs/results/synth-cover/``): mean native 2-way TV error
    health_insurance 0.0314 -> 0.0290 at eps 0.5, 0.0196 -> 0.0186 at 1, 0.0133 -> 0.0125
    at 2; doctor_visits 0.0505 -> 0.0502, 0.0323 -> 0.0321, 0.0249 -> 0.0231 at 0.5, 1, 2;
    biopsy 0.2594 -> 0.2270 at 1, 0.1624 -> 0.1437 at 2; nhefs level; the health-panel
    stand-in at eps 1 0.0248 -> 0.0233 (octiles); unchanged at eps 0.1 (eps_sel about
    0.003, below 0.01: every round L1 would have cost 0.005-0.007 there).  The earlier
    rule (``min(d - 1, ceil(T / 2))`` throughout) was chosen the same way on the 8-bin
    encoding of these tables (``docs/synthetic-data.md``).
    """
    if eps_sel >= L1_SELECTION_EPS:
        return min(T, COVER_SPAN * (d - 1))
    return min(d - 1, math.ceil(T / 2))


def measures_all(T: int, shape: tuple[int, ...], blocks: list[tuple[int, ...]],
                 cap: int | None) -> bool:
    """Whether ``selection="auto"`` measures every candidate table once, without selection.

    When the rounds would measure at least half of the candidate tables ``blocks``
    (``2 T >= len(blocks)``) and a model over all of them is allowed (``cap`` None: a model
    on one clique over the whole domain; else a junction tree of all of them within ``cap``
    cells), selecting
    is not worth its budget: every candidate is measured once with the rounds' whole budget.
    Public: T, the domain's shape, the candidates and the cap only.  Chosen with tuning
    seeds 100-129 on titanic (4 columns, 6 pairs; mean 2-way TV error of "all" against the
    adaptive rounds: 0.196 vs 0.218 at eps = 0.1, 0.057 vs 0.062 at 0.5, 0.0299 vs 0.0297 at
    1, 0.0155 vs 0.0186 at 2) and checked on the 8-column Adult of ``lab/synth_adult``
    (``docs/synthetic-data.md``; ``benchmarks/synth_selection.py`` reproduces both).
    """
    if 2 * T < len(blocks):
        return False
    return cap is None or junction_tree_cells(shape, blocks) <= cap


class OracleQueryPGM(Synthesizer):
    """(epsilon, delta)-DP synthetic data: OracleQuery's query player selects, measurements are estimated.

    See the module docstring for the algorithm and ``docs/proofs/oracle-query-pgm-selection.md``
    for the proof.  Guarantee:
    ``(epsilon, delta)``-DP, approximate (not ex-post), replace-one neighbours with n
    public; it does not depend on any solver (the selection enumerates the workload and
    the estimate is post-processing).

    Parameters
    ----------
    epsilon, delta:
        Target privacy; ``delta`` in (0, 1) (the Gaussian mechanism needs it).
    k:
        Literals per query (the workload is every k-way marginal cell).
    rounds:
        T, the number of select-and-measure rounds.  ``None``: :func:`default_rounds`
        (``max(d - 1, round(n sqrt(rho) / c))``, c = 100 with the one-clique model and 50
        with the capped junction tree); on the capped junction tree with
        ``selection="auto"``, where ``round(n sqrt(rho) / 50) < d - 1``, :func:`floor_rounds`'s
        ``3 (d - 1)`` if that is at most 50 and each round's selection budget there is still
        at least 0.01; from public n, d, epsilon, delta and the parameters only.
    orders:
        Marginal orders the query player selects among.  Default ``(2,)`` (``(1,)`` when
        k = 1): pairs, whose estimate (a pairwise graphical model) answers the k-way
        workload; on Adult it beat ``(3,)`` and ``(2, 3)`` at eps = 0.1 and was within
        10% of them at eps = 0.5 and 1, at half the fit time.
    selection:
        ``"auto"`` (default: the L1 score for the first :func:`cover_rounds` rounds, the
        worst query after; ``"all"`` when :func:`measures_all` holds), ``"l1"`` (select a
        table by its L1 error net of the expected measurement noise), ``"table"`` (select a
        table by its worst query; the rule before 0.1.0's release), ``"query"`` (select a
        query, measure its table) or ``"all"`` (no selection: every candidate table once,
        ``rounds_`` is their number and ``eps_selection_`` 0).
    one_way_fraction:
        Share of the budget (of rho) spent on the 1-way marginals at the start.  None
        (default): :func:`one_way_share`: where the rounds select and the budget asks for
        at most (d - 1) / 2 rounds, enough for each 1-way table to get a round's budget (at
        least 0.1, at most 0.5), falling linearly to 0.1 at d - 1 rounds; else 0.1.  The
        share used is ``one_way_fraction_``.
    selection_fraction:
        Share of each round's rho spent on the selection (the rest measures).
    iterations, final_iterations:
        Mirror-descent iterations after each round (warm start) and for the release.
    estimator:
        The junction tree the one estimator (:func:`~oracledp.synth._graphical.estimate_model`)
        holds the model on.  ``"auto"`` (default): one clique over every attribute when the
        domain has at most 2,000,000 cells (no candidate is excluded), else as
        ``"graphical"``: the triangulation of the measured sets, capped by
        ``max_model_cells`` (memory is the tree's cells, so 20 columns of 2-30 levels fit).
        Either tree gives the same iterates up to rounding for the same measurements; the
        rules differ (T's divisor, the cap on the candidates).
    max_model_cells:
        Capped junction tree only (``"graphical"``, or ``"auto"`` above 2,000,000 cells):
        each round's candidates are the tables whose measurement
        keeps the junction tree at most this many cells (a public rule on the released
        selections; proof: ``docs/proofs/oracle-query-pgm-selection.md``, Lemma C').
        ``None`` (default): :func:`default_model_cells` (100,000; 500,000 when the budget
        asks for more than 50 rounds, half of T's cap; from public n, epsilon, delta only).
    pair_resolution:
        ``"select"`` (default): when :meth:`fit` is given public coarser codes of some
        attributes (``coarse``; :class:`~oracledp.synth.TableSynthesizer` gives the budget's
        bins of numeric columns held on :data:`~oracledp.synth._table_budget.MODEL_BINS`),
        each table of two or more attributes that include such an attribute is a candidate
        twice, on the model's codes and on the coarser ones, with the same scores computed on
        its cells (fewer, larger cells; the L1 score's noise term counts them), and the table
        selected is measured on its own cells: the selection pays for the finer table only
        where it measures better.  ``"model"``: every table on the model's codes (``coarse``
        is ignored).  Without ``coarse`` the two are the same.  With ``selection="all"``
        (every table measured once, no selection) a table is measured on its coarser codes
        where it has them; no effect with ``selection="query"``.
    one_way_split:
        How the 1-way tables share their part of rho: ``"cells"`` (default) as their numbers
        of cells to the power :data:`ONE_WAY_POWER` (:func:`one_way_sigmas`), ``"equal"``
        equally (the rule before; reproductions of earlier records use it).
    last_round:
        ``"cover"`` (default): where some attributes lie in no measured table of two or more
        by the last round (:func:`alone_attributes`), that round selects nothing and spends
        its whole budget on their 1-way tables (split as ``one_way_split`` says; proof:
        Lemma C″); ``"select"``: it selects like every round (the rule before).  No effect
        with ``selection="all"`` or ``T = 1``.
    random_state:
        Seed or Generator for all randomness.
    keep_diagnostics:
        Keep non-private diagnostics (``fit_seconds``) as ``diagnostics_``; flags the
        guarantee ``diagnostics_released``.

    Attributes after :meth:`fit`: ``model_`` (the released estimate, a
    :class:`~oracledp.synth._graphical.GraphicalModel`; ``model_.dense()`` is the full
    distribution on small domains), ``rounds_``, ``rho_``, ``ledger_`` (a
    :class:`~oracledp.privacy.Spend` per
    step, zCDP, whose ``released`` is the measured table's attributes, empty for a
    selection: which table each round measured is part of the release),
    ``measured_axes_``, ``measurements_`` (the noisy tables, each a
    :class:`~oracledp.synth._estimation.MarginalMeasurement`: they are the released
    measurements the estimate post-processes, covered by the same guarantee),
    ``within_noise_`` (the measured pairs the estimate fitted by their margins; ``"all"``
    only),
    ``sigma_`` (a round's measurement noise), ``sigma_one_way_`` (each attribute's 1-way
    table's, :func:`one_way_sigmas`), ``eps_selection_``, ``one_way_fraction_`` (the 1-way
    tables' share of rho used), ``last_round_attributes_`` (the attributes whose 1-way
    tables the last round measured; empty where it selected), ``guarantee_``,
    ``workload_``, ``n_``, ``max_model_cells_`` (the junction-tree cap used; None with the
    one-clique model).

    Examples
    --------
    100 records over a domain of 12 cells, all 2-way marginals:

    >>> import numpy as np
    >>> from oracledp.synth import Domain, OracleQueryPGM
    >>> domain = Domain(("a", "b", "c"), ((0, 1), (0, 1), (0, 1, 2)))
    >>> codes = np.array([[0, 0, 0], [0, 1, 1], [1, 1, 2], [1, 0, 2], [1, 1, 1]] * 20)
    >>> pgm = OracleQueryPGM(1.0, 1e-6, k=2, random_state=0).fit(codes, domain)
    >>> pgm.rounds_, pgm.model_.dense().shape, pgm.sample_codes(5).shape  # every pair measured
    (3, (2, 2, 3), (5, 3))
    >>> pgm.model_.tree.cliques  # a small domain: one clique over every attribute
    ((0, 1, 2),)
    >>> pgm.measured_axes_
    ((0,), (1,), (2,), (0, 1), (0, 2), (1, 2))
    >>> pgm.guarantee_.describe().split(";")[0]
    '(1, 1e-06)-DP, replace-one neighbours'
    """

    def __init__(
        self,
        epsilon: float,
        delta: float = 1e-6,
        *,
        k: int = 3,
        rounds: int | None = None,
        one_way_fraction: float | None = None,
        selection_fraction: float = 0.25,
        orders: tuple[int, ...] | None = None,
        selection: str = "auto",
        iterations: int = 10,
        final_iterations: int = 150,
        estimator: str = "auto",
        max_model_cells: int | None = None,
        pair_resolution: str = DEFAULT_PAIR_RESOLUTION,
        one_way_split: str = "cells",
        last_round: str = "cover",
        random_state: RandomLike = None,
        keep_diagnostics: bool = False,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        for name, v, lo in (("k", k, 1), ("rounds", 1 if rounds is None else rounds, 1),
                            ("iterations", iterations, 1),
                            ("final_iterations", final_iterations, 1)):
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or int(v) < lo:
                raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
        self.k = int(k)
        self.rounds = None if rounds is None else int(rounds)
        self.iterations = int(iterations)
        self.final_iterations = int(final_iterations)
        for name, v, none in (("one_way_fraction", one_way_fraction, "None or "),
                              ("selection_fraction", selection_fraction, "")):
            if v is None and none:
                continue
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0.0 < v < 1.0:
                raise ValueError(f"{name} must be {none}in (0, 1), got {v!r}")
        self.one_way_fraction = None if one_way_fraction is None else float(one_way_fraction)
        self.selection_fraction = float(selection_fraction)
        if orders is not None:
            if not orders or any(isinstance(o, bool) or not isinstance(o, int | np.integer)
                                 or not 1 <= int(o) <= self.k for o in orders):
                raise ValueError(f"orders must be a non-empty tuple of integers in 1..k={self.k}, "
                                 f"got {orders!r}")
            orders = tuple(sorted({int(o) for o in orders}))
        self.orders = orders
        self.selection = check_choice(selection, "selection",
                                      ("auto", "query", "table", "l1", "all"))
        self.estimator = check_choice(estimator, "estimator", ("auto", "graphical"))
        if max_model_cells is not None and (
                isinstance(max_model_cells, bool)
                or not isinstance(max_model_cells, int | np.integer) or int(max_model_cells) < 1):
            raise ValueError(f"max_model_cells must be None or an integer >= 1, "
                             f"got {max_model_cells!r}")
        self.max_model_cells = None if max_model_cells is None else int(max_model_cells)
        self.pair_resolution = check_choice(pair_resolution, "pair_resolution",
                                            ("model", "select"))
        self.one_way_split = check_choice(one_way_split, "one_way_split", ("cells", "equal"))
        self.last_round = check_choice(last_round, "last_round", ("cover", "select"))
        self.random_state = random_state
        self.keep_diagnostics = check_diagnostics_flag(keep_diagnostics, "keep_diagnostics")

    def orders_for(self, d: int) -> tuple[int, ...]:
        """The marginal orders the query player selects among (default ``(min(2, k),)``)."""
        return self.orders if self.orders is not None else (min(2, self.k, d),)

    def _plan(self, T: int, *, share: float, select: bool = True
              ) -> tuple[float, float, float, float]:
        """``(rho, rho_1way, eps_sel, sigma_round)`` from public parameters only; ``share``:
        the 1-way tables' share of rho (:meth:`_one_way_fraction`), ``rho_1way = share rho``
        (split among them by :func:`one_way_sigmas`).

        ``select=False`` (every candidate measured, no selection): ``eps_sel`` is 0 and the
        round's whole budget measures.
        """
        rho = zcdp_rho(self.epsilon, self.delta)
        rho_round = (1.0 - share) * rho / T
        rho_sel = self.selection_fraction * rho_round if select else 0.0
        rho_meas = rho_round - rho_sel
        return rho, share * rho, math.sqrt(8.0 * rho_sel), 1.0 / math.sqrt(rho_meas)

    def _one_way_fraction(self, d: int, T: int, *, wanted: int, select: bool = True) -> float:
        """The 1-way tables' share of rho: ``one_way_fraction``, or where it is None
        :func:`one_way_share` when the rounds select and :data:`ONE_WAY_FLOOR` when they do
        not.  ``wanted``: :meth:`_wanted`.  Public parameters only."""
        if self.one_way_fraction is not None:
            return self.one_way_fraction
        return one_way_share(d, T, wanted=wanted) if select else ONE_WAY_FLOOR

    def _wanted(self, n: int) -> int:
        """The rounds the budget asks for, ``round(n sqrt(rho) / 50)`` (:func:`floor_rounds`'
        quantity; the same with either model, so that a given ``rounds`` releases the same on
        one clique and on a junction tree).  Public: n, epsilon, delta."""
        return _wanted_rounds(n, self.epsilon, self.delta, _TREE_DIVISOR)

    def _default_T(self, n: int, d: int, whole: bool) -> int:
        """T when ``rounds`` is None: :func:`default_rounds` (divisor 100 with the model on one
        clique over every attribute, ``whole``; 50 on a capped junction tree), and on a capped
        junction tree with ``selection="auto"`` :func:`floor_rounds` where that is more and a
        round's selection budget at that many rounds is still at least
        :data:`L1_SELECTION_EPS`.  Public: n, d, epsilon, delta, the model's kind (from the
        public domain's size) and the parameters only."""
        T = default_rounds(n, self.epsilon, self.delta, d,
                           divisor=100.0 if whole else _TREE_DIVISOR)
        if whole or self.selection != "auto":
            return T
        F = floor_rounds(n, self.epsilon, self.delta, d)
        if F <= T:
            return T
        share = self._one_way_fraction(d, F, wanted=self._wanted(n))  # the share F runs with
        return F if self._plan(F, share=share)[2] >= L1_SELECTION_EPS else T

    def one_clique(self, cells: int) -> bool:
        """Whether a fit over a domain of ``cells`` cells holds its model on one clique over
        every attribute (else on a capped junction tree); a public rule."""
        return self.estimator == "auto" and cells <= _ONE_CLIQUE_CELLS

    def check_domain(self, domain_shape: tuple[int, ...] | list[int], n: int) -> None:
        """Refuse, before any noise, a domain this fit cannot handle (ValueError).

        Public quantities only: the domain's shape (an upper bound of the final one is
        enough), the number of records ``n``, epsilon, delta and the parameters: ``k`` above
        the number of attributes; ``selection="all"`` on a capped junction tree when a tree
        over every candidate table exceeds ``max_model_cells``.  :meth:`fit` calls it first.
        """
        shape = tuple(int(s) for s in domain_shape)
        d = len(shape)
        if self.k > d:
            raise ValueError(f"k={self.k} exceeds the number of attributes ({d})")
        if not self.one_clique(math.prod(shape)) and self.selection == "all":
            blocks = [b for j in self.orders_for(d) for b in itertools.combinations(range(d), j)]
            cap = self.max_model_cells if self.max_model_cells is not None else (
                default_model_cells(n, self.epsilon, self.delta))
            if not measures_all(len(blocks), shape, blocks, cap):
                raise ValueError(f"selection='all' measures every candidate table, and a "
                                 f"junction tree over all of them exceeds max_model_cells="
                                 f"{cap:,}: raise max_model_cells or select")

    def fit(self, data: pd.DataFrame | NDArray[np.integer], domain: Domain, *,
            sample_weight: object = None,
            coarse: dict[int, tuple[int, ...]] | None = None,
            released: Sequence[MarginalMeasurement] = ()) -> OracleQueryPGM:
        """Run the rounds on ``data`` over the public ``domain`` (never inferred).

        ``sample_weight``: record counts of distinct rows; the release equals that of the
        expanded records (each record counts once in the privacy analysis).  ``coarse``:
        public coarser codes of some attributes (position -> the coarse code of each of its
        codes), used by ``pair_resolution="select"``; they must not be read from the data
        (unless through a released measurement).  ``released``: noisy tables of the data
        **already released and accounted by the caller** (TableSynthesizer's fine
        histograms summed onto the model's bins), fitted with the measurements at no cost
        here (post-processing of their release); never pass tables computed from the data
        without noise.
        """
        for name in ("model_", "guarantee_"):
            self.__dict__.pop(name, None)
        codes = self._encode(data, domain)
        w = None if sample_weight is None else check_sample_weight(sample_weight, len(codes))
        d = len(domain)
        n = int(codes.shape[0]) if w is None else int(w.sum())
        self.check_domain(domain.shape, n)
        coarse_maps = _check_coarse(coarse, domain.shape)
        known = list(released)
        for m in known:
            if not isinstance(m, MarginalMeasurement) or not m.fits(domain.shape):
                raise ValueError("released: each must be a MarginalMeasurement over the "
                                 "domain's attributes, with a table of its shape")
        whole = self.one_clique(domain.size)
        start = time.perf_counter()
        shape = domain.shape
        workload = kway_marginal_workload(domain, self.k)
        # the query player's class: the cells of every j-way marginal, j in `orders`
        plays = [kway_marginal_workload(domain, j) for j in self.orders_for(d)]
        blocks = [b for w in plays for b in w.blocks]
        nq = sum(len(w) for w in plays)
        T = self.rounds if self.rounds is not None else self._default_T(n, d, whole)
        # the junction-tree cap: None with one clique over every attribute (every table fits)
        cap = None if whole else self.max_model_cells if self.max_model_cells is not None else (
            default_model_cells(n, self.epsilon, self.delta))
        rule = self.selection
        if rule == "auto" and measures_all(T, shape, blocks, cap):
            rule = "all"
        if rule == "all":  # every candidate table once, no selection (public: T, blocks)
            if cap is not None and self.selection == "all" and not measures_all(
                    len(blocks), shape, blocks, cap):
                raise ValueError(f"selection='all' measures every candidate table, and a "
                                 f"junction tree over all of them exceeds max_model_cells="
                                 f"{cap:,}: raise max_model_cells or select")
            T = len(blocks)
        share = self._one_way_fraction(d, T, select=rule != "all", wanted=self._wanted(n))
        rho, rho_one, eps_sel, sigma = self._plan(T, share=share, select=rule != "all")
        power = None if self.one_way_split == "cells" else 0.0
        sigma1 = one_way_sigmas(shape, rho_one, power=power)  # each attribute's 1-way table
        # the last selecting round covers the attributes in no measured pair (public rule)
        covers = self.last_round == "cover" and rule != "all" and T >= 2
        rng = check_rng(self.random_state)  # all validation is done: randomness starts here
        begin_release(self, self.epsilon, self.delta, rng=rng, rho=rho)  # zCDP rho planned

        def table(axes: tuple[int, ...]) -> NDArray[np.float64]:
            sub = tuple(shape[a] for a in axes)
            joint = np.ravel_multi_index(tuple(codes[:, a] for a in axes), sub)
            if w is not None:
                return np.bincount(joint, weights=w, minlength=math.prod(sub)).reshape(sub)
            return np.bincount(joint, minlength=math.prod(sub)).reshape(sub).astype(float)

        ledger: list[Spend] = []
        meas: list[MarginalMeasurement] = []

        def one_way(a: int, s: float, name: str, t_round: int = 0) -> None:
            """Attribute a's 1-way table with N(0, s^2) per cell (squared l2 sensitivity 2)."""
            t = table((a,))
            meas.append(MarginalMeasurement((a,), t + noise.gaussian(rng, s, t.shape), s))
            ledger.append(Spend(name, zcdp=gaussian_rho(s, sensitivity_sq=2.0),
                                round=t_round, released=(a,)))

        for a in range(d):  # one level: its table is the public n (sigma inf, no budget)
            if not math.isinf(sigma1[a]):
                one_way(a, float(sigma1[a]), "Gaussian mechanism (1-way table)")
        meas.extend(known)  # released before this fit: no spend (post-processing)
        tree = JunctionTree(shape, [tuple(range(d))], nodes=True) if whole else None
        model = estimate_model(shape, meas, n, iterations=self.iterations * 3, tree=tree)
        # the selection's inputs ("all" selects nothing: the true answers are not read)
        true = (np.concatenate([answer(wl, codes, w) for wl in plays]) if rule != "all"
                else np.empty(0))
        block_of = np.concatenate([np.repeat(np.arange(len(w.blocks)), np.diff(w.offsets))
                                   + sum(len(v.blocks) for v in plays[:i])
                                   for i, w in enumerate(plays)])
        # candidates: (block, maps); a table may be measured on public coarser codes
        cands = _candidates(blocks, coarse_maps if rule != "query"
                            and self.pair_resolution == "select" else {})
        # ("all" measures each table once, on its coarser codes where it has them)
        offsets = np.concatenate([[0], np.cumsum([math.prod(shape[a] for a in b)
                                                  for b in blocks])]).astype(int)
        coarsest = {b: mp for b, mp in cands if mp is not None}
        cand_block = np.array([b for b, _ in cands], dtype=np.intp)
        cand_cells = np.array([math.prod(coarse_shape(tuple(shape[a] for a in blocks[b]), mp))
                               for b, mp in cands], dtype=float)
        cand_of = np.repeat(np.arange(len(cands)), cand_cells.astype(int))
        plain = all(mp is None for _, mp in cands) and len(cands) == len(blocks)
        # each candidate's cells as sums of the workload's cells: cell i of the workload
        # adds to cell dst[i] of the candidates' vector (once per candidate holding it)
        src, dst = (np.empty(0, dtype=np.intp),) * 2
        if not plain:
            starts = np.concatenate([[0], np.cumsum(cand_cells.astype(int))])
            parts_src, parts_dst = [], []
            for c, (b, mp) in enumerate(cands):
                cells = np.arange(offsets[b], offsets[b + 1])
                here = (np.arange(len(cells)) if mp is None else project_index(
                    tuple(shape[a] for a in blocks[b]), mp))
                parts_src.append(cells)
                parts_dst.append(starts[c] + here)
            src, dst = np.concatenate(parts_src), np.concatenate(parts_dst)
        total = int(cand_cells.sum())

        def cand_diff(diff: NDArray[np.float64]) -> NDArray[np.float64]:
            if plain:
                return diff
            return np.bincount(dst, weights=diff[src], minlength=total)
        cover = cover_rounds(T, d, eps_sel)

        def select(t_round: int) -> tuple[tuple[int, ...], Any]:
            """Round t's table by the exponential mechanism; its spend goes on the ledger."""
            lazy: _LazyAllowed | None = None
            ok: NDArray[np.bool_] | None = None
            est = np.concatenate([_model_answers(model, wl) for wl in plays])
            # candidates: the tables whose measurement keeps the junction tree within
            # max_model_cells (a function of the released selections only); one clique
            # over every attribute holds every table
            if cap is not None and len(blocks) > _LAZY_BLOCKS:  # many: test those needed
                lazy = _LazyAllowed(shape, blocks, [m.axes for m in meas], cap)
            elif cap is not None:
                ok = _allowed_blocks(shape, blocks, [m.axes for m in meas], cap)
            diff = n * (true - est)  # score of q; ¬q gets -diff
            if rule == "query":
                scores = np.concatenate([diff, -diff])
                # exponential mechanism, sensitivity 1: P ∝ exp(eps_sel * score / 2) (Gumbel-max)
                if lazy is not None:
                    j = lazy.select(rng, scores, eps_sel, 1.0, np.tile(block_of, 2))
                elif ok is None:
                    j = noise.exponential_mechanism(rng, scores, eps_sel, 1.0)
                else:
                    cand = np.flatnonzero(np.tile(ok[block_of], 2))
                    j = int(cand[noise.exponential_mechanism(rng, scores[cand], eps_sel, 1.0)])
                name = "exponential mechanism over Q ∪ ¬Q"
                axes, maps = blocks[int(block_of[j % nq])], None
            else:
                step = rule
                if step == "auto":  # cover, then refine (public: t, T, d and eps_sel only)
                    step = "l1" if t_round <= cover else "table"
                bscores, sens, name = table_scores(cand_diff(diff), cand_of, cand_cells, step,
                                                   sigma)
                if lazy is not None:
                    j = lazy.select(rng, bscores, eps_sel, sens, cand_block)
                elif ok is None:
                    j = noise.exponential_mechanism(rng, bscores, eps_sel, sens)
                else:
                    cand = np.flatnonzero(ok[cand_block])
                    j = int(cand[noise.exponential_mechanism(rng, bscores[cand], eps_sel, sens)])
                axes, maps = blocks[int(cand_block[j])], cands[j][1]
            ledger.append(Spend(name, zcdp=exponential_mechanism_rho(eps_sel), round=t_round))
            return axes, maps

        alone: list[int] = []  # after the loop: the last round's cover, if it had one
        last_note = ""
        for t_round in range(1, T + 1):
            alone = ([a for a in alone_attributes(d, [m.axes for m in meas]) if shape[a] > 1]
                     if covers and t_round == T else [])
            if alone:
                # the last round's whole budget (selection and measurement) on the 1-way
                # tables of the attributes no measured pair holds: chosen from the released
                # selections (adaptive composition), no selection spent
                s_last = one_way_sigmas([shape[a] for a in alone], (1.0 - share) * rho / T,
                                        power=power)
                last_note = (f"; the last round measured the 1-way tables of {len(alone)} "
                             f"attribute(s) in no measured pair, sigma={_span(s_last)}")
                for a, s_a in zip(alone, s_last.tolist(), strict=True):
                    one_way(a, s_a, "Gaussian mechanism (1-way table, last round)", t_round)
                model = estimate_model(shape, meas, n, iterations=self.iterations, warm=model)
                continue
            # "all": no selection, the next table in the workload's order, on its coarser
            # codes where it has them (every table measured: the fewer cells, the less noise)
            axes, maps = ((blocks[t_round - 1], coarsest.get(t_round - 1)) if rule == "all"
                          else select(t_round))
            tab = project(table(axes), maps)
            meas.append(MarginalMeasurement(axes, tab + noise.gaussian(rng, sigma, tab.shape),
                                            sigma, maps))
            ledger.append(Spend("Gaussian mechanism (marginal table)",
                                zcdp=gaussian_rho(sigma, sensitivity_sq=2.0), round=t_round,
                                released=axes))
            if rule == "all":
                continue  # one estimate after the last table (post-processing)
            model = estimate_model(shape, meas, n, iterations=self.iterations, warm=model)
        # "all" skipped the rounds' warm-started refits: the final estimate does their work
        final = self.final_iterations + (T * self.iterations if rule == "all" else 0)
        # "all" measured every table, selected or not: a pair whose interaction is, with
        # confidence, below its own noise is fitted by its margins (post-processing)
        margins = [margins_within_noise(m) if rule == "all" and len(m.axes) == 2 else None
                   for m in meas]
        fitted = [x for m, mg in zip(meas, margins, strict=True) for x in (mg or (m,))]
        if rule == "all":  # the other pairs' interactions shrunk by what noise explains
            fitted = [shrink_interaction(m) if len(m.axes) == 2 else m for m in fitted]
        quiet = [m.axes for m, mg in zip(meas, margins, strict=True) if mg]
        model = estimate_model(shape, fitted, n, iterations=final, warm=model)
        model.n = n

        rho_spent = math.fsum(s.rho for s in ledger)
        eps_spent = zcdp_epsilon(rho_spent, self.delta)
        # the plan keeps eps_spent <= epsilon (up to rounding): ledger_guarantee checks it
        guarantee = ledger_guarantee(
            ledger, "zcdp", self.epsilon, self.delta, rtol=1e-9,
            source="OracleQuery's query player (Neel-Roth-Wu 2019 §IV; exponential mechanism, "
            "eps^2/8-zCDP by Cesar-Rogers 2021 Lemma 3.2) with Gaussian measurements "
            "(Bun-Steinke 2016 Prop. 1.6) and a Private-PGM style estimate (post-processing); "
            "zCDP composition (Bun-Steinke 2016 Lemma 2.3, Prop. 1.3)",
            notes=f"T={T} rounds; rho={rho_spent:.6g} composed to eps={eps_spent:.6g} "
            f"at delta={self.delta:g}; 1-way tables {share:.4g} of rho, "
            f"sigma(1-way)={_span(sigma1)}, sigma(k-way)={sigma:.4g} "
            f"counts, eps_sel={eps_sel:.4g}{last_note}; replace-one, n={n} public",
        )
        if self.keep_diagnostics:
            guarantee = release_diagnostics(guarantee, "OracleQueryPGM")
            self.diagnostics_ = NonPrivateDiagnostics(
                "oracle_query_pgm", {"fit_seconds": time.perf_counter() - start})
        self.n_, self.domain_, self.workload_, self.rounds_ = n, domain, workload, T
        self.rho_, self.sigma_, self.sigma_one_way_, self.eps_selection_ = (
            rho, sigma, tuple(float(x) for x in sigma1), eps_sel)
        self.ledger_ = tuple(ledger)
        self.measured_axes_ = tuple(s.released for s in ledger if s.released)
        self.measurements_ = tuple(meas)
        self.within_noise_ = tuple(quiet)
        self.max_model_cells_ = cap
        self.one_way_fraction_ = share
        self.last_round_attributes_ = tuple(alone)
        self.guarantee_ = guarantee
        self.model_ = model
        self._rng = rng  # kept to continue sampling; never pickled
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise RuntimeError("call fit(data, domain) first")

    def answer(self, workload: MarginalWorkload | None = None) -> NDArray[np.float64]:
        """Exact answers of a workload (default: the fitted one) under the released estimate."""
        wl = self._workload(workload)  # checks fitted first
        return _model_answers(self.model_, wl)

    def marginal(self, attrs: tuple[int, ...] | list[int]) -> NDArray[np.float64]:
        """The released estimate's marginal over attribute positions ``attrs`` (that order)."""
        self._check_fitted()
        return self.model_.marginal(attrs)

    def _sample_codes(self, n: int, rng: np.random.Generator,
                      sampler: str = "rounded") -> NDArray[np.int64]:
        return self.model_.sample(n, rng, sampler=sampler)

    def __repr__(self) -> str:
        return (f"OracleQueryPGM(epsilon={self.epsilon!r}, delta={self.delta!r}, k={self.k}, "
                f"rounds={self.rounds})")


def _span(x: NDArray[np.float64]) -> str:
    """``"a"`` or ``"a-b"``: the least and the largest of ``x``'s finite values (4 significant
    digits; an attribute of one level is not measured, sigma inf), ``"none"`` if none."""
    x = np.asarray(x)[np.isfinite(x)]
    if len(x) == 0:
        return "none"
    lo, hi = f"{float(np.min(x)):.4g}", f"{float(np.max(x)):.4g}"
    return lo if lo == hi else f"{lo}-{hi}"


def _check_coarse(coarse: Mapping[int, Sequence[int]] | None, shape: tuple[int, ...]
                  ) -> dict[int, tuple[int, ...]]:
    """The public coarser codes of ``fit``'s ``coarse`` (ValueError if malformed): attribute
    -> a map of each of its codes onto codes ``0..m-1``, every one of them used, ``m`` smaller
    than the attribute's size."""
    out: dict[int, tuple[int, ...]] = {}
    for a, m in (coarse or {}).items():
        if isinstance(a, bool) or not isinstance(a, int | np.integer) or not 0 <= a < len(shape):
            raise ValueError(f"coarse: {a!r} is not an attribute position")
        try:
            codes = tuple(operator.index(v) for v in m)
        except TypeError:
            raise ValueError(f"coarse: the map of attribute {a} must hold integer codes"
                             ) from None
        if len(codes) != shape[a] or set(codes) != set(range(max(codes, default=-1) + 1)) \
                or len(set(codes)) >= shape[a]:
            raise ValueError(f"coarse: the map of attribute {a} must send its {shape[a]} codes "
                             "onto fewer codes 0..m-1, each used")
        out[int(a)] = codes
    return out


def _candidates(blocks: list[tuple[int, ...]], coarse: dict[int, tuple[int, ...]]
                ) -> list[tuple[int, Any]]:
    """The candidate measurements ``(block, maps)``, public (the blocks and the maps): every
    table on its attributes' codes, and a table of two or more attributes of which some have
    coarser codes (``coarse``) also on those (``maps``: the map of each attribute, or None)."""
    out: list[tuple[int, Any]] = []
    for b, blk in enumerate(blocks):
        out.append((b, None))
        maps = tuple(coarse.get(a) for a in blk)
        if len(blk) >= 2 and any(m is not None for m in maps):
            out.append((b, maps))
    return out


def table_scores(diff: NDArray[np.float64], block_of: NDArray[np.integer],
                 block_cells: NDArray[np.float64], selection: str, sigma: float
                 ) -> tuple[NDArray[np.float64], float, str]:
    """The tables' selection scores, their sensitivity, and the ledger's name for the step.

    ``diff`` is ``n (q(S) - q(D_t))`` for every cell of every candidate table, ``block_of``
    the table of each cell and ``block_cells`` each table's number of cells (public).

    * ``"table"``: a table's worst cell, ``max_q |diff_q|``.  One record replaced moves
      each count by at most 1, so the maximum moves by at most 1: sensitivity 1.
    * ``"l1"``: the table's L1 count error minus the expected L1 norm of its measurement
      noise, ``sum_q |diff_q| - sqrt(2/pi) sigma |cells|`` (AIM's quality score, McKenna et
      al. 2022, with this round's sigma; the penalty is public).  One record replaced moves
      two cells of the table by 1 each: sensitivity 2.
    """
    nblocks = len(block_cells)
    if selection == "table":
        scores = np.zeros(nblocks)
        np.maximum.at(scores, block_of, np.abs(diff))
        return scores, 1.0, "exponential mechanism over the tables (score: worst query)"
    if selection == "l1":
        scores = (np.bincount(block_of, weights=np.abs(diff), minlength=nblocks)
                  - math.sqrt(2.0 / math.pi) * sigma * block_cells)
        return scores, 2.0, "exponential mechanism over the tables (score: L1 error - noise)"
    raise ValueError(f"unknown table selection {selection!r}")


def _model_answers(model: GraphicalModel, workload: MarginalWorkload) -> NDArray[np.float64]:
    """The workload's answers under a junction-tree model (exact marginals; the pairs in
    one batch, :meth:`GraphicalModel.pair_marginals`)."""
    pairs = [b for b in workload.blocks if len(b) == 2]
    got = dict(zip(pairs, model.pair_marginals(pairs), strict=True)) if pairs else {}
    return np.concatenate([(got[b] if len(b) == 2 else model.marginal(b)).ravel()
                           for b in workload.blocks])


class _LazyAllowed:
    """The candidates of :func:`_allowed_blocks`, tested one table at a time, on demand.

    :meth:`select` is the exponential mechanism over the allowed candidates by Gumbel-max,
    as :func:`oracledp.privacy._noise.exponential_mechanism` (one Gumbel draw for every
    score, allowed or not): the noisy scores are visited from the largest down and the
    first allowed candidate is returned, which is the argmax over the allowed ones, so the
    selection has exactly the distribution of the exponential mechanism over them.  The
    allowed set is :func:`_allowed_blocks`'s (public shape, released selections, cap); only
    the tables visited are tested (a junction tree each), not all of them, which is what
    makes a wide table's thousands of pairs affordable.  If none is allowed, those of the
    smallest resulting tree are, as in :func:`_allowed_blocks`.
    """

    def __init__(self, shape: tuple[int, ...], blocks: list[tuple[int, ...]],
                 measured: list[tuple[int, ...]], cap: int) -> None:
        self.shape, self.blocks, self.measured, self.cap = shape, blocks, measured, cap
        self.tree = JunctionTree(shape, measured)
        self.sets = [set(c) for c in self.tree.cliques]
        self.sizes: dict[int, int] = {}

    def size(self, b: int) -> int:
        """Cells of the junction tree after measuring table ``b``."""
        if b not in self.sizes:
            blk = set(self.blocks[b])
            self.sizes[b] = (self.tree.cells if any(blk <= c for c in self.sets) else
                             junction_tree_cells(self.shape, [*self.measured, self.blocks[b]]))
        return self.sizes[b]

    def select(self, rng: np.random.Generator, scores: NDArray[np.float64], eps: float,
               sensitivity: float, block_of: NDArray[np.integer]) -> int:
        """Index into ``scores`` (candidate i measures table ``block_of[i]``)."""
        order = noise.exponential_mechanism_order(rng, scores, eps, sensitivity)
        for i in order:
            if self.size(int(block_of[i])) <= self.cap:
                return int(i)
        smallest = min(self.sizes.values())  # none allowed: every table was tested
        return int(next(i for i in order if self.sizes[int(block_of[i])] == smallest))


def _allowed_blocks(shape: tuple[int, ...], blocks: list[tuple[int, ...]],
                    measured: list[tuple[int, ...]], cap: int) -> NDArray[np.bool_]:
    """Tables whose measurement keeps the junction tree at most ``cap`` cells.

    A table inside a clique of the current tree is always allowed (its measurement does
    not grow the tree), so the set is never empty once a table was measured; if no table
    fits, those of the smallest resulting tree are allowed.  Reads only the public shape
    and the released measured sets.
    """
    tree = JunctionTree(shape, measured)
    sets = [set(c) for c in tree.cliques]
    sizes = np.empty(len(blocks))
    for b, blk in enumerate(blocks):
        if any(set(blk) <= c for c in sets):
            sizes[b] = tree.cells
        else:
            sizes[b] = junction_tree_cells(shape, [*measured, blk])
    ok = sizes <= cap
    return ok if ok.any() else sizes == sizes.min()
