"""MST and AIM: graphical-model synthesizers of the Private-PGM family, as baselines.

Optional: needs the ``peers`` extra (``pip install 'oracledp[peers]'``), which
installs ``mbi`` (Private-PGM's estimation library, JAX-based).  ``mbi`` is
imported lazily inside :func:`mst` and :func:`aim`; the rest of oracledp never
imports it.  What ``mbi`` does here is only *estimation* (post-processing): given
noisy marginal measurements, mirror descent over the marginal polytope finds a
graphical model that fits them (McKenna, Sheldon, Miklau, ICML 2019).  The
selection, the noise, the budget accounting, the evaluation of the model's
marginals and the sampling are written here, from the papers' algorithm
descriptions.

MST (McKenna, Miklau, Sheldon 2021)
-----------------------------------
"Winning the NIST Contest: A scalable and general approach to differentially
private synthetic data", Journal of Privacy and Confidentiality 11(3), the MST
mechanism (section and equation numbers not checked against the text).  With a
zCDP budget ``rho`` split in three equal parts:

1. measure every 1-way marginal (count table) with Gaussian noise,
   ``sigma_1 = Delta_2 sqrt(3 d / (2 rho))`` (d Gaussian measurements at
   ``rho / (3d)`` each);
2. estimate a model ``p1`` from them (Private-PGM) and select ``d - 1`` pairs of
   attributes by a private Kruskal algorithm: each of the ``d - 1`` steps picks one
   pair joining two different connected components with the exponential mechanism,
   score ``w_ij = || M_ij(D) - M_ij(p1) ||_1`` (counts), probability
   ``∝ exp(eps_sel w_ij / (2 Delta_1))``, ``eps_sel = sqrt(8 (rho/3) / (d - 1))``
   (each step ``eps_sel^2 / 8``-zCDP); the selected pairs form a spanning tree;
3. measure the ``d - 1`` selected 2-way marginals with
   ``sigma_2 = Delta_2 sqrt(3 (d - 1) / (2 rho))``;
4. estimate the final model from all the measurements (Private-PGM).

Not implemented: the paper's domain compression (merging rare levels of an
attribute after step 1); all levels are kept.

AIM (McKenna, Mullins, Sheldon, Miklau 2022)
--------------------------------------------
"AIM: An Adaptive and Iterative Mechanism for Differentially Private Synthetic
Data", PVLDB 15(11), the AIM algorithm (its pseudocode; algorithm number not
checked against the text).  The workload ``W`` (here: the blocks of a
:class:`~oracledp.synth.workload.MarginalWorkload`, all with weight 1) is closed
downward into the candidate set ``W+`` (every non-empty subset of a workload
clique); candidate ``r`` has weight ``w_r = sum_{s in W} |r ∩ s|``.  With
``T = 16 d`` (``rounds``) and ``alpha = 0.9``:

* initialisation: every 1-way marginal is measured with noise multiplier
  ``s_0 = sqrt(T / (2 alpha rho))`` (noise std ``Delta_2 s_0`` counts); the
  per-round exponential-mechanism parameter starts at ``eps_0 = sqrt(8 (1 - alpha) rho / T)``;
* round t, while budget remains: charge ``eps_t^2 / 8 + 1 / (2 s_t^2)``; the
  candidates ``C_t`` are the ``r`` in ``W+`` whose addition keeps the junction tree
  of the model at most ``(rho_used / rho) * max_model_size`` MB (here: or at most its
  current size, when the cap is below it -- an addition for degenerate caps, so that
  ``C_t`` is never empty); select ``r_t``
  with the exponential mechanism, score
  ``q_r = w_r (|| M_r(D) - M_r(p_{t-1}) ||_1 - sqrt(2/pi) sigma_t n_r)``
  (``sigma_t = Delta_2 s_t`` the noise std of this round, ``n_r`` the number of
  cells of ``r``), probability ``∝ exp(eps_t q_r / (2 Delta))``,
  ``Delta = Delta_1 max_{r in C_t} w_r``; measure ``M_{r_t}(D)`` with noise
  ``sigma_t``; re-estimate ``p_t`` (Private-PGM, warm start);
* annealing: if ``|| M_{r_t}(p_t) - M_{r_t}(p_{t-1}) ||_1 <= sqrt(2/pi) sigma_t n_{r_t}``
  then ``s_{t+1} = s_t / 2``, ``eps_{t+1} = 2 eps_t``; if the remaining budget is at
  most twice the cost of the next round, the next round is the last and spends all
  that remains: ``s = sqrt(1 / (2 alpha rho_left))``, ``eps = sqrt(8 (1 - alpha) rho_left)``;
* output: the model estimated from all the measurements.

Neighbouring relation and sensitivities
---------------------------------------
Both papers state their guarantees for add/remove-one neighbours, under which a
marginal count table has L2 sensitivity ``Delta_2 = 1`` and the L1 distance
between the data's marginal and a fixed model's marginal moves by at most
``Delta_1 = 1``.  oracledp's synthesizers use *replace-one* neighbours (n public),
and ``neighbours="replace-one"`` (the default) uses the replace-one sensitivities:
replacing a record removes one count from one cell and adds one to another cell of
every marginal table, so ``Delta_2 = sqrt(2)`` and ``Delta_1 = 2`` (every score
``w_r ||M_r(D) - M_r(p)||_1`` moves by at most ``2 w_r``; the model p depends only
on earlier releases).  The noise std is ``Delta_2`` times the paper's noise
multiplier, so every Gaussian measurement costs the same ``rho`` as in the paper.
``neighbours="add-remove"`` runs the papers' setting: n is then private, and the
model's total is mbi's minimum-variance estimate from the noisy 1-way marginals
instead of n.

Privacy accounting (both): a Gaussian measurement with noise std ``sigma`` of a
query of L2 sensitivity ``Delta_2`` is ``Delta_2^2 / (2 sigma^2)``-zCDP (Bun,
Steinke 2016, Prop. 1.6); an ``eps``-DP exponential mechanism is ``eps^2 / 8``-zCDP
(Cesar, Rogers 2021, bounded range; the bound both papers use); zCDP composes
additively (Bun, Steinke 2016, Lemma 2.3).  The total ``rho`` is converted to
``(epsilon, delta)``-DP with Bun-Steinke Prop. 1.3,
``epsilon = rho + 2 sqrt(rho ln(1/delta))``, i.e. ``rho`` is the largest value
with that bound <= epsilon -- the conversion :mod:`oracledp.synth.oracle_query`
uses, so that all the synthesizers compared at one (epsilon, delta) get the same
kind of statement.  (The papers' code converts with Canonne-Kamath-Steinke 2020,
which allows a somewhat larger rho at the same (epsilon, delta); ours is
conservative.)  Estimation, evaluation and sampling are post-processing.

Evaluation and sampling (the "smartnoise sampler problem" avoided)
------------------------------------------------------------------
Comparisons must not go through a sampler: smartnoise-synth's MST/AIM wrappers
sampled synthetic records from the graphical model with a faulty sampler, which
inflated their workload errors (issue 13).  Here :meth:`PGMResult.answer` evaluates the
workload on the *estimated model itself*: each marginal of the model
``p(x) ∝ exp(sum_c theta_c(x_c))`` is computed exactly by a tensor contraction
of the model's factors (no sampling error).  :meth:`PGMResult.sample` draws
i.i.d. records exactly from the model by ancestral sampling along the reversed
elimination order of the model's junction tree (each attribute from its
conditional given its already-drawn neighbours in the triangulated graph, which
is exact for a chordal graph), with the caller's numpy Generator; mbi's own
``synthetic_data`` (randomized rounding with numpy's global random state) is not
used.

Many fits in one process
------------------------
In one long process (the ``synth-adult --peers`` benchmark, about 70 mbi fits) jaxlib
crashed with a segmentation fault in libgcc's unwinder, while the same fit ran cleanly
in a new process.  The benchmark therefore runs every MST and AIM fit in a fresh
process (:mod:`oracledp.experiments.synth_adult`); do the same for long sweeps.

Parameters of AIM and cost
--------------------------
AIM keeps the paper's parameters (``T = 16 d``, ``alpha = 0.9``,
``max_model_size = 80`` MB).  On Adult the full domain (1,317,120 cells, 10.5 MB)
is below the cap, so the cap only limits the early rounds.  The cost of a fit is
dominated by JAX compiling mbi's mirror-descent program once per new model
structure (about 4-5 s per round on one core for Adult), not by the iterations
(1000 iterations take 0.2-0.4 s once compiled); hence ``round_iters = 500`` after
each round (warm-started) and ``final_iters = 3000`` at the end.  Measured on
Adult (8 categorical attributes, n = 30,718, 3-way workload of 18,597 queries,
delta = 1e-6, replace-one, seed 0, one shared core): AIM ran 8 / 18 / 21 rounds in
35 / 79 / 65 s at epsilon = 0.1 / 0.5 / 1; MST fits take 9-13 s.

JAX: :func:`mst` and :func:`aim` switch JAX to the CPU backend (when no backend is
initialised yet), enable float64 (``jax_enable_x64``) and disable JAX's persistent
compilation cache.  These are process-wide JAX settings.  Nothing is printed.

Guarantees hold under idealized numerics (see :mod:`oracledp.guarantees`).
"""

from __future__ import annotations

import itertools
import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._validation import (
    RandomLike,
    check_choice,
    check_delta,
    check_epsilon,
    check_positive,
    check_rng,
)
from oracledp.diagnostics import (
    NonPrivateDiagnostics,
    check_diagnostics_flag,
    release_diagnostics,
)
from oracledp.guarantees import GuaranteeKind, PrivacyGuarantee, rho_for_epsilon
from oracledp.synth.domain import Domain
from oracledp.synth.workload import MarginalWorkload, kway_marginal_workload

__all__ = [
    "PGMMeasurement",
    "PGMResult",
    "aim",
    "mst",
    "require_mbi",
    "zcdp_rho",
]

_NEIGHBOURS = ("replace-one", "add-remove")
_AIM_ALPHA = 0.9  # AIM: share of each round's budget for measurement
_SAMPLE_CHUNK = 100_000
_INSTALL_HINT = (
    "MST and AIM need the optional dependencies mbi and jax; install them with "
    "pip install 'oracledp[peers]'"
)


# ---------------------------------------------------------------------------
# Privacy accounting
# ---------------------------------------------------------------------------


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest zCDP ``rho`` with ``rho + 2 sqrt(rho ln(1/delta)) <= epsilon``.

    Bun, Steinke 2016, Prop. 1.3: ``rho``-zCDP implies
    ``(rho + 2 sqrt(rho ln(1/delta)), delta)``-DP.  Solving for ``rho`` gives
    ``sqrt(rho) = sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta))``; the value is
    shrunk if floating point would make the recomputed epsilon exceed the target.
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    return rho_for_epsilon(eps, dlt)


def _sensitivities(neighbours: str) -> tuple[float, float]:
    """(L2 sensitivity of a marginal count table, sensitivity of an L1 score)."""
    if neighbours == "replace-one":
        return math.sqrt(2.0), 2.0
    return 1.0, 1.0


# ---------------------------------------------------------------------------
# Lazy mbi / JAX import
# ---------------------------------------------------------------------------


def require_mbi() -> None:
    """Raise :class:`ImportError` with the install hint unless the ``peers`` extra is installed.

    Only checks that ``mbi`` and ``jax`` can be found; imports and configures nothing.
    """
    import importlib.util

    for name in ("jax", "mbi"):
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ImportError(_INSTALL_HINT)


def _import_mbi() -> Any:
    """Import mbi with JAX on CPU, float64, no compilation cache, no output."""
    try:
        import jax
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from exc
    try:
        jax.config.update("jax_platforms", "cpu")
    except RuntimeError:  # pragma: no cover - a backend is already initialised
        pass
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_compilation_cache", False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import mbi
            import mbi.estimation
            import mbi.junction_tree
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from exc
    return mbi


# ---------------------------------------------------------------------------
# Exact evaluation of a graphical model (numpy, no JAX)
# ---------------------------------------------------------------------------


def _model_marginal(
    factors: Sequence[tuple[tuple[int, ...], NDArray[np.float64]]],
    shape: tuple[int, ...],
    attrs: Sequence[int],
) -> NDArray[np.float64]:
    """The exact marginal probability table over ``attrs`` (in that order).

    The model is ``p(x) ∝ prod_c exp(theta_c(x_c))``; each factor is shifted by its
    maximum (a constant that cancels in the normalisation) and the product is
    contracted over the other attributes.
    """
    operands: list[Any] = []
    for clique, theta in factors:
        operands.append(np.exp(theta - theta.max()))
        operands.append(list(clique))
    for a in attrs:  # attributes in no factor are uniform: keep their axes
        operands.append(np.ones(shape[a]))
        operands.append([a])
    operands.append(list(attrs))
    table = np.einsum(*operands, optimize="greedy")
    total = table.sum()
    if not (np.isfinite(total) and total > 1e-280):
        raise FloatingPointError(
            "the model's marginal underflowed; its potentials are too extreme to "
            "contract in float64"
        )
    return np.asarray(table / total, dtype=np.float64)


@dataclass(frozen=True)
class PGMMeasurement:
    """One released noisy marginal: attribute positions, noise std (counts), values."""

    clique: tuple[int, ...]
    sigma: float
    values: NDArray[np.float64] = field(repr=False, compare=False)


@dataclass(frozen=True, eq=False)
class PGMResult:
    """A graphical model estimated by MST or AIM from noisy marginals.

    Attributes
    ----------
    method:
        ``"MST"`` or ``"AIM"``.
    domain, n:
        The domain, and the number of records n of the input (public under
        replace-one neighbours).  None under add-remove neighbours, where n is
        private and not part of the release.
    total:
        The model's total count: n (replace-one) or mbi's estimate from the noisy
        1-way marginals (add-remove).
    rho:
        The zCDP budget spent (the sum of the ledger).
    measurements:
        Every released noisy marginal, in order.
    selected:
        MST: the ``d - 1`` pairs of attribute positions of the spanning tree, in
        selection order.  AIM: the clique selected in each round.
    factors:
        The model's log-potentials, ``(clique, theta)`` with ``theta`` of shape
        ``domain.shape[clique]``: ``p(x) ∝ exp(sum theta(x_clique))``.
    guarantee:
        The privacy statement (see the module docstring).
    diagnostics:
        None unless ``return_diagnostics=True``: then the wall-clock times
        (``seconds`` for the whole fit, ``estimation_seconds`` in mbi) -- non-private.
    """

    method: str
    domain: Domain
    n: int | None
    total: float
    rho: float
    measurements: tuple[PGMMeasurement, ...]
    selected: tuple[tuple[int, ...], ...]
    factors: tuple[tuple[tuple[int, ...], NDArray[np.float64]], ...] = field(repr=False)
    guarantee: PrivacyGuarantee
    diagnostics: NonPrivateDiagnostics | None = field(default=None, repr=False)

    @property
    def rounds(self) -> int:
        """Number of selection rounds (MST: d - 1 tree edges; AIM: rounds run)."""
        return len(self.selected)

    def marginal(self, attrs: Sequence[int]) -> NDArray[np.float64]:
        """The model's exact marginal distribution over attribute positions ``attrs``.

        Shape ``tuple(domain.shape[a] for a in attrs)``, axes in the given order, sums to 1.
        """
        d = len(self.domain)
        idx = [int(a) for a in attrs]
        if not idx or len(set(idx)) != len(idx) or any(not 0 <= a < d for a in idx):
            raise ValueError(f"attrs must be distinct attribute positions in 0..{d - 1}, "
                             f"got {list(attrs)!r}")
        return _model_marginal(self.factors, self.domain.shape, idx)

    def answer(self, workload: MarginalWorkload) -> NDArray[np.float64]:
        """Exact workload answers of the model (fractions; no sampling error)."""
        if not isinstance(workload, MarginalWorkload):
            raise TypeError(f"workload must be a MarginalWorkload, got {type(workload).__name__}")
        if workload.domain != self.domain:
            raise ValueError("the workload is over a different domain")
        out = np.empty(len(workload), dtype=np.float64)
        for b, blk in enumerate(workload.blocks):
            out[workload.offsets[b] : workload.offsets[b + 1]] = self.marginal(blk).ravel()
        return out

    def sample(self, m: int | None = None, random_state: RandomLike = None) -> NDArray[np.int64]:
        """``m`` records (default n, or the model's total under add-remove), drawn
        i.i.d. and exactly from the model.

        Ancestral sampling along the reversed elimination order of the model's
        junction tree (module docstring); all randomness from ``random_state``.
        """
        if m is None:
            size = self.n if self.n is not None else max(1, round(self.total))
        elif isinstance(m, bool) or not isinstance(m, int | np.integer) or int(m) < 1:
            raise ValueError(f"the number of records to sample must be an integer >= 1, got {m!r}")
        else:
            size = int(m)
        rng = check_rng(random_state)
        shape = self.domain.shape
        out = np.empty((size, len(shape)), dtype=np.int64)
        for a, parents in reversed(_elimination_order(shape, [c for c, _ in self.factors])):
            joint = _model_marginal(self.factors, shape, [*parents, a])
            cdf = np.cumsum(joint, axis=-1)  # unnormalised conditional CDFs of a | parents
            for s in range(0, size, _SAMPLE_CHUNK):
                e = min(size, s + _SAMPLE_CHUNK)
                rows = cdf[tuple(out[s:e, p] for p in parents)] if parents else cdf[None, :]
                u = rng.random(e - s) * rows[:, -1]
                pick = (rows <= u[:, None]).sum(axis=1)
                out[s:e, a] = np.minimum(pick, shape[a] - 1)
        return out


def _elimination_order(
    shape: tuple[int, ...], cliques: Sequence[tuple[int, ...]]
) -> list[tuple[int, tuple[int, ...]]]:
    """A greedy elimination order of the model graph, each attribute with its parents.

    Attributes are eliminated one at a time (the one whose current neighbourhood has
    the fewest cells first); the parents of ``a`` are its neighbours when it is
    eliminated, all eliminated later, and they are joined pairwise (fill-in).  The
    filled graph is chordal with this perfect elimination order, so under the model
    ``a`` is independent of all later-eliminated attributes given its parents:
    drawing attributes in the reverse order, each from ``p(a | parents)``, draws an
    exact sample of the model.
    """
    d = len(shape)
    nbrs: dict[int, set[int]] = {a: set() for a in range(d)}
    for c in cliques:
        for u, v in itertools.combinations(c, 2):
            nbrs[u].add(v)
            nbrs[v].add(u)
    order: list[tuple[int, tuple[int, ...]]] = []
    while nbrs:
        a = min(nbrs, key=lambda x: (math.prod(shape[y] for y in nbrs[x]) * shape[x], x))
        ns = nbrs.pop(a)
        for u, v in itertools.combinations(sorted(ns), 2):
            nbrs[u].add(v)
            nbrs[v].add(u)
        for u in ns:
            nbrs[u].discard(a)
        order.append((a, tuple(sorted(ns))))
    return order


# ---------------------------------------------------------------------------
# Shared pieces of the two mechanisms
# ---------------------------------------------------------------------------


def _check_common(
    codes: ArrayLike, domain: Domain, epsilon: float, delta: float, neighbours: str
) -> tuple[NDArray[np.int64], float, float, str]:
    if not isinstance(domain, Domain):
        raise TypeError(f"domain must be a Domain, got {type(domain).__name__}")
    arr = domain.check_codes(codes)
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    check_choice(neighbours, "neighbours", _NEIGHBOURS)
    return arr, eps, dlt, neighbours


def _check_iters(value: object, name: str) -> int:
    return int(check_positive(value, name, integer=True))


def _counts(arr: NDArray[np.int64], shape: tuple[int, ...], clique: tuple[int, ...]
            ) -> NDArray[np.float64]:
    """The marginal count table of ``clique`` (attribute positions), C order, flattened."""
    sub = tuple(shape[a] for a in clique)
    joint = np.ravel_multi_index(tuple(arr[:, a] for a in clique), sub)
    return np.bincount(joint, minlength=math.prod(sub)).astype(np.float64)


class _Fitter:
    """mbi estimation of a model from the measurements so far (post-processing)."""

    def __init__(self, mbi: Any, domain: Domain, total: float | None, seconds: list[float]):
        self.mbi = mbi
        self.names = domain.attributes
        self.mdomain = mbi.Domain(domain.attributes, domain.shape)
        self.known_total = total
        self.seconds = seconds

    def cliques_mb(self, cliques: Sequence[tuple[int, ...]]) -> float:
        """Size in MB of the junction tree of a model over ``cliques`` (float64 cells)."""
        named = [tuple(self.names[a] for a in c) for c in cliques]
        return float(self.mbi.junction_tree.hypothetical_model_size(self.mdomain, named))

    def fit(self, measurements: Sequence[PGMMeasurement], iters: int, warm: Any = None
            ) -> tuple[Any, tuple[tuple[tuple[int, ...], NDArray[np.float64]], ...], float]:
        start = time.perf_counter()
        lms = [
            self.mbi.LinearMeasurement(
                np.asarray(m.values), tuple(self.names[a] for a in m.clique), stddev=m.sigma
            )
            for m in measurements
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = self.mbi.estimation.MirrorDescent().estimate(
                self.mdomain, lms, known_total=self.known_total, iters=iters, warm_start=warm
            )
        factors = []
        for cl in model.potentials.cliques:
            f = model.potentials[cl]
            pos = tuple(self.names.index(a) for a in f.domain.attributes)
            factors.append((pos, np.asarray(f.values, dtype=np.float64)))
        total = float(model.total)
        self.seconds.append(time.perf_counter() - start)
        return model, tuple(factors), total


def _measure(arr: NDArray[np.int64], shape: tuple[int, ...], clique: tuple[int, ...],
             sigma: float, rng: np.random.Generator) -> PGMMeasurement:
    """Gaussian mechanism on a marginal count table (Bun-Steinke 2016, Prop. 1.6)."""
    counts = _counts(arr, shape, clique)
    return PGMMeasurement(clique, sigma, counts + rng.normal(0.0, sigma, size=counts.size))


def _exp_mech(scores: NDArray[np.float64], eps: float, sensitivity: float,
              rng: np.random.Generator) -> int:
    """Exponential mechanism, P(i) ∝ exp(eps * score_i / (2 sensitivity)), by Gumbel-max."""
    return int(np.argmax(eps * scores / (2.0 * sensitivity) + rng.gumbel(size=scores.size)))


def _finish(
    method: str, domain: Domain, n: int, total: float, rho: float, spent: float,
    measurements: list[PGMMeasurement], selected: list[tuple[int, ...]],
    factors: tuple[tuple[tuple[int, ...], NDArray[np.float64]], ...], eps: float, dlt: float,
    neighbours: str, source: str, notes: str, want_diag: bool, diag: dict[str, Any],
) -> PGMResult:
    if spent > rho * (1.0 + 1e-9):  # pragma: no cover - guarded by construction
        raise AssertionError(f"{method} spent rho = {spent!r} > budget {rho!r}")
    guarantee = PrivacyGuarantee(
        epsilon=eps,
        delta=dlt,
        kind=GuaranteeKind.APPROXIMATE,
        requires_exact_oracle=False,
        source=source,
        neighbouring=neighbours,
        notes=notes,
    )
    diagnostics = None
    if want_diag:
        guarantee = release_diagnostics(guarantee, method)
        diagnostics = NonPrivateDiagnostics(method.lower(), diag)
    public_n = n if neighbours == "replace-one" else None
    return PGMResult(method, domain, public_n, total, spent, tuple(measurements), tuple(selected),
                     factors, guarantee, diagnostics)


_ACCOUNTING = ("zCDP: Gaussian Delta_2^2/(2 sigma^2) (Bun-Steinke 2016 Prop 1.6), exponential "
               "mechanism eps^2/8 (Cesar-Rogers 2021), additive composition (Bun-Steinke Lemma "
               "2.3), (rho + 2 sqrt(rho ln(1/delta)), delta)-DP (Bun-Steinke Prop 1.3)")


# ---------------------------------------------------------------------------
# MST
# ---------------------------------------------------------------------------


def mst(
    codes: ArrayLike,
    domain: Domain,
    epsilon: float,
    delta: float,
    random_state: RandomLike = None,
    *,
    neighbours: str = "replace-one",
    iters: int = 3000,
    return_diagnostics: bool = False,
) -> PGMResult:
    """(epsilon, delta)-DP MST (McKenna, Miklau, Sheldon 2021), see the module docstring.

    Parameters
    ----------
    codes, domain:
        The records (integer codes, shape ``(n, d)``, d >= 2) and their public domain.
    epsilon, delta:
        The target guarantee; the zCDP budget is :func:`zcdp_rho` ``(epsilon, delta)``.
    random_state:
        Seed or numpy Generator: all the noise and selections come from it.
    neighbours:
        ``"replace-one"`` (default; n public; ``Delta_2 = sqrt(2)``, score sensitivity 2)
        or ``"add-remove"`` (the paper's setting; ``Delta_2 = 1``, score sensitivity 1).
    iters:
        Mirror-descent iterations of each Private-PGM estimation (post-processing).
    return_diagnostics:
        Attach wall-clock times (non-private diagnostics; flags the guarantee).

    Returns
    -------
    PGMResult
        ``selected`` holds the ``d - 1`` edges of the spanning tree.
    """
    want_diag = check_diagnostics_flag(return_diagnostics)
    arr, eps, dlt, neighbours = _check_common(codes, domain, epsilon, delta, neighbours)
    n_iters = _check_iters(iters, "iters")
    rng = check_rng(random_state)
    d = len(domain)
    if d < 2:
        raise ValueError("MST needs at least 2 attributes (it selects a spanning tree of pairs)")
    mbi = _import_mbi()
    start = time.perf_counter()
    n = arr.shape[0]
    shape = domain.shape
    rho = zcdp_rho(eps, dlt)
    delta2, delta1 = _sensitivities(neighbours)
    est_seconds: list[float] = []
    fitter = _Fitter(mbi, domain, float(n) if neighbours == "replace-one" else None, est_seconds)

    # MST step 1: all 1-way marginals, rho/3 in total (d Gaussian measurements).
    sigma1 = delta2 * math.sqrt(3.0 * d / (2.0 * rho))
    measurements = [_measure(arr, shape, (a,), sigma1, rng) for a in range(d)]
    spent = d * delta2**2 / (2.0 * sigma1**2)

    # MST step 2: private Kruskal on the L1 errors of the 1-way model's 2-way marginals.
    model1, factors1, total1 = fitter.fit(measurements, n_iters)
    del model1
    eps_sel = math.sqrt(8.0 * (rho / 3.0) / (d - 1))
    pairs = list(itertools.combinations(range(d), 2))
    weights = np.array([
        np.abs(_counts(arr, shape, p) - total1 * _model_marginal(factors1, shape, p).ravel()).sum()
        for p in pairs
    ])
    component = list(range(d))
    tree: list[tuple[int, ...]] = []
    for _ in range(d - 1):
        cand = [i for i, (u, v) in enumerate(pairs) if component[u] != component[v]]
        pick = cand[_exp_mech(weights[cand], eps_sel, delta1, rng)]
        u, v = pairs[pick]
        old, new = component[v], component[u]
        component = [new if c == old else c for c in component]
        tree.append(pairs[pick])
        spent += eps_sel**2 / 8.0

    # MST step 3: the d - 1 selected 2-way marginals, rho/3 in total.
    sigma2 = delta2 * math.sqrt(3.0 * (d - 1) / (2.0 * rho))
    measurements += [_measure(arr, shape, e, sigma2, rng) for e in tree]
    spent += (d - 1) * delta2**2 / (2.0 * sigma2**2)

    # MST step 4: final estimation (post-processing).
    _, factors, total = fitter.fit(measurements, n_iters)
    notes = (
        f"rho = {rho:.6g} split in thirds; {neighbours}: Delta_2 = {delta2:g}, score "
        f"sensitivity {delta1:g}; sigma_1way = {sigma1:.4g}, eps_select = {eps_sel:.4g} "
        f"x {d - 1}, sigma_2way = {sigma2:.4g} (counts)"
    )
    diag = {"seconds": time.perf_counter() - start, "estimation_seconds": sum(est_seconds)}
    return _finish("MST", domain, n, total, rho, spent, measurements, tree, factors, eps, dlt,
                   neighbours, "McKenna, Miklau, Sheldon 2021 (MST); " + _ACCOUNTING,
                   notes, want_diag, diag)


# ---------------------------------------------------------------------------
# AIM
# ---------------------------------------------------------------------------


def aim(
    codes: ArrayLike,
    domain: Domain,
    epsilon: float,
    delta: float,
    random_state: RandomLike = None,
    workload: MarginalWorkload | None = None,
    *,
    neighbours: str = "replace-one",
    max_model_size: float = 80.0,
    rounds: int | None = None,
    round_iters: int = 500,
    final_iters: int = 3000,
    return_diagnostics: bool = False,
) -> PGMResult:
    """(epsilon, delta)-DP AIM (McKenna, Mullins, Sheldon, Miklau 2022), see the module docstring.

    Parameters
    ----------
    codes, domain:
        The records (integer codes, shape ``(n, d)``) and their public domain.
    epsilon, delta:
        The target guarantee; the zCDP budget is :func:`zcdp_rho` ``(epsilon, delta)``.
    random_state:
        Seed or numpy Generator: all the noise and selections come from it.
    workload:
        The marginal workload AIM adapts to (every block weight 1); default all
        3-way marginals (all k-way with k = min(3, d)).
    neighbours:
        ``"replace-one"`` (default; n public; ``Delta_2 = sqrt(2)``, score sensitivity
        ``2 w_r``) or ``"add-remove"`` (the paper's; ``Delta_2 = 1``, sensitivity ``w_r``).
    max_model_size:
        The paper's MAX-SIZE, in MB of junction-tree cells (float64): round t only
        considers candidates keeping the model within ``(rho_used / rho) * max_model_size``.
        The paper uses 80.
    rounds:
        The paper's T (default ``16 d``): sets the initial per-round budget
        ``rho / T``; the number of rounds actually run follows the annealing.
    round_iters, final_iters:
        Mirror-descent iterations of the Private-PGM estimation after each round
        (warm-started) and of the final estimation (post-processing only).
    return_diagnostics:
        Attach wall-clock times (non-private diagnostics; flags the guarantee).

    Returns
    -------
    PGMResult
        ``selected`` holds the clique selected in each round.
    """
    want_diag = check_diagnostics_flag(return_diagnostics)
    arr, eps, dlt, neighbours = _check_common(codes, domain, epsilon, delta, neighbours)
    d = len(domain)
    if workload is None:
        workload = kway_marginal_workload(domain, min(3, d))
    if not isinstance(workload, MarginalWorkload):
        raise TypeError(f"workload must be a MarginalWorkload, got {type(workload).__name__}")
    if workload.domain != domain:
        raise ValueError("the workload is over a different domain")
    max_mb = check_positive(max_model_size, "max_model_size")
    T = 16 * d if rounds is None else _check_iters(rounds, "rounds")
    n_round = _check_iters(round_iters, "round_iters")
    n_final = _check_iters(final_iters, "final_iters")
    # Candidates W+: the downward closure of the workload's cliques, with weights
    # w_r = sum_{s in W} |r ∩ s| (AIM paper).
    closure = sorted(
        {sub for blk in workload.blocks for k in range(1, len(blk) + 1)
         for sub in itertools.combinations(blk, k)},
        key=lambda c: (len(c), c),
    )
    cand_w = np.array([sum(len(set(r) & set(s)) for s in workload.blocks) for r in closure],
                      dtype=np.float64)
    one_way = [r for r in closure if len(r) == 1]
    if T <= _AIM_ALPHA * len(one_way):
        raise ValueError(f"rounds must exceed 0.9 x the number of 1-way marginals "
                         f"({len(one_way)}) so that the initialisation leaves budget, got {T}")
    rng = check_rng(random_state)
    mbi = _import_mbi()
    start = time.perf_counter()
    n = arr.shape[0]
    shape = domain.shape
    rho = zcdp_rho(eps, dlt)
    delta2, delta1 = _sensitivities(neighbours)
    est_seconds: list[float] = []
    fitter = _Fitter(mbi, domain, float(n) if neighbours == "replace-one" else None, est_seconds)
    true = {r: _counts(arr, shape, r) for r in closure}
    cells = np.array([true[r].size for r in closure], dtype=np.float64)

    # Initialisation: every 1-way marginal with noise multiplier s0 = sqrt(T / (2 alpha rho)).
    s = math.sqrt(T / (2.0 * _AIM_ALPHA * rho))
    e = math.sqrt(8.0 * (1.0 - _AIM_ALPHA) * rho / T)
    measurements = [_measure(arr, shape, r, delta2 * s, rng) for r in one_way]
    spent = len(one_way) / (2.0 * s * s)
    model, factors, total = fitter.fit(measurements, n_round)
    selected: list[tuple[int, ...]] = []
    sigmas: list[float] = []
    final = False
    while not final:
        left = rho - spent
        if left <= 2.0 * (1.0 / (2.0 * s * s) + e * e / 8.0):
            # Last round: spend what remains (shrunk by 1e-12 against rounding).
            left *= 1.0 - 1e-12
            s = math.sqrt(1.0 / (2.0 * _AIM_ALPHA * left))
            e = math.sqrt(8.0 * (1.0 - _AIM_ALPHA) * left)
            final = True
        spent += e * e / 8.0 + 1.0 / (2.0 * s * s)
        sigma = delta2 * s
        # Candidates whose addition keeps the junction tree within the growing size cap
        # (never below the current model's size, so that a cap smaller than the model
        # still admits the candidates that do not enlarge it, e.g. 1-way marginals).
        model_cliques = [c for c, _ in factors]
        cap = max(spent / rho * max_mb, fitter.cliques_mb(model_cliques))
        ok = [i for i, r in enumerate(closure) if fitter.cliques_mb([*model_cliques, r]) <= cap]
        est = {closure[i]: total * _model_marginal(factors, shape, closure[i]).ravel() for i in ok}
        scores = np.array([
            cand_w[i] * (np.abs(true[closure[i]] - est[closure[i]]).sum()
                         - math.sqrt(2.0 / math.pi) * sigma * cells[i])
            for i in ok
        ])
        sens = delta1 * float(cand_w[ok].max())
        r = closure[ok[_exp_mech(scores, e, sens, rng)]]
        measurements.append(_measure(arr, shape, r, sigma, rng))
        selected.append(r)
        sigmas.append(sigma)
        model, factors, total = fitter.fit(measurements, n_round, warm=model)
        # Annealing: halve the noise when the new measurement barely moved the model.
        moved = np.abs(total * _model_marginal(factors, shape, r).ravel() - est[r]).sum()
        if moved <= math.sqrt(2.0 / math.pi) * sigma * cells[closure.index(r)]:
            s /= 2.0
            e *= 2.0
    _, factors, total = fitter.fit(measurements, n_final, warm=model)
    notes = (
        f"rho = {rho:.6g}; T = {T}, alpha = {_AIM_ALPHA}, max_model_size = {max_mb:g} MB; "
        f"{neighbours}: Delta_2 = {delta2:g}, score sensitivity {delta1:g} x max w_r; "
        f"{len(selected)} rounds, noise std (counts) from {sigmas[0]:.4g} to {sigmas[-1]:.4g}"
    )
    diag = {"seconds": time.perf_counter() - start, "estimation_seconds": sum(est_seconds),
            "rounds": len(selected)}
    return _finish("AIM", domain, n, total, rho, spent, measurements, selected, factors, eps,
                   dlt, neighbours,
                   "McKenna, Mullins, Sheldon, Miklau 2022 (AIM); " + _ACCOUNTING,
                   notes, want_diag, diag)
