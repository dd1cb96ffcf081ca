"""OracleQuery for k-way marginals over a public categorical domain (tractable variant).

Reference: Neel, Roth, Wu (FOCS 2019) Section IV, Theorem 10, as reconstructed in
``docs/specs/oracle-query.md`` Section 6.  The game (spec 6.1): the data player picks a
distribution ``D`` over the domain X, the query player a query ``qbar`` in
``Qbar = Q ∪ ¬Q`` (``Q`` = the k-way marginal workload), and the data player's loss
is ``A(D, qbar) = qbar(S) - qbar(D)``; the value of the game is 0.

What this module implements, and how it differs from spec 6.2-6.4
-----------------------------------------------------------------
* **Data player ``"hedge"`` (default): multiplicative weights over the full domain.**
  Record ``x`` earns gain ``qbar_t(x) ∈ [0, 1]`` each round; the play is
  ``D_t(x) ∝ exp(eta * sum_{tau<t} qbar_tau(x))`` with
  ``eta = sqrt(8 ln|X| / T)`` (the standard Hedge tuning, regret
  ``R_T <= sqrt(T ln|X| / 2)``).  Hedge *is* Follow-the-Perturbed-Leader over
  records with an i.i.d. Gumbel(1/eta) perturbation per record (Gumbel-max
  trick), but not the spec's dual-separator FTPL.  Because the domain (1.3M
  cells for Adult) fits in memory, ``D_t`` is used exactly (the spec's
  ``s -> infinity``, ``gamma = 0``).  Only public computation: no privacy cost.
* **Data player ``"ftpl"``: spec 6.2, FTPL with dual-separator perturbation.**
  The dual separator is the m one-hot indicators ``g_j`` (dictators; m = sum of
  the numbers of levels, 59 for complete-rows Adult).  Each round draws ``samples``
  (the spec's s) independent ``xi ~ Lap(b)^m`` and plays, for each, the exact
  data oracle ``argmax_x sum_{tau<t} qbar_tau(x) - sum_j xi_j g_j(x)`` by
  enumerating the full domain (vectorized, :func:`_ftpl_samples`); ``Dhat_t`` is
  the empirical law of the s records and ``b = sqrt(T m / (4 sqrt(2) Lam))``
  (spec 6.2).  Not the default: on Adult (eps = 1) it is slower (about 0.5 s per
  round at s = 200) and less accurate than Hedge at the same T (spec 6.2's regret
  ``4.76 sqrt(T m Lam)`` is far weaker than Hedge's ``sqrt(T ln|X| / 2)``, and the
  s samples add a sampling error ``gamma``).
* **Query player ``"noisy-min"`` (default): exponential mechanism over Q ∪ ¬Q.**  The
  score of ``qbar`` is the data player's loss in counts,
  ``n (qbar(S) - qbar(D_t))``; for ``¬q`` it is minus the score of ``q``.
  Under replace-one neighbours (n public) each count moves by at most 1, so
  the score sensitivity is 1 and selection with probability
  ``∝ exp(eps0 * score / 2)`` (McSherry-Talwar 2007; sampled by the Gumbel-max
  trick) is pure ``eps0``-DP per round.
* **Query player ``"rspm"``: spec 6.3 PrivBR.**  A k-way marginal query is a
  monotone conjunction of k of the m one-hot indicators (on distinct
  attributes); the separator is ``u_l = 1 - e_l`` (all indicators on except l;
  not a valid record, allowed by spec 2), with ``q(u_l) = 1`` iff literal l is
  not in q, so the pattern map is injective (tested).  Per round: (i) RSPM on Q
  with ``eps0/3`` (``eta_l ~ Lap(2m/(eps0/3))``), (ii) RSPM on ¬Q with ``eps0/3``
  (fresh noise), (iii) report-noisy-min between the two candidates' exact
  objectives with ``Lap(2/(eps0/3))`` noise each (:func:`_privbr_rspm`).  The
  weighted oracle is **exact by enumeration** of the explicit workload (the
  data part comes from the marginal tables, the separator part is
  ``sum(eta) - sum_{l in q} eta_l``), so certification is trivial: every oracle
  call returns the true minimizer (ties have probability 0).  Each round is
  pure ``eps0``-DP (Thm 6 for (i), (ii); report-noisy-min for (iii); basic
  composition inside the round); the ledger holds three ``eps0/3`` entries per
  round, which zCDP composes as ``rho = 3 (eps0/3)^2 / 2`` per round.  The
  noise is large: on Adult (m = 59) the perturbation of one 3-way query is a sum
  of 3 Laplaces of scale ``6m/eps0`` counts, so at eps = 1 RSPM is far less
  accurate than the exponential mechanism.
* **Query player ``"prsma"``: PrivBR wrapped in PRSMA (robust to the oracle).**  Each
  round runs :func:`oracledp.learners._prsma.prsma` with the base "PrivBR-RSPM on
  the part's records against the current ``D_t``" (``size`` independent runs of
  :func:`_privbr_rspm` at ``e3 = eps'/3``, counts over the part, so each run is
  ``eps'``-DP with an exact oracle), giving an ``(eps0, delta0)``-DP round
  **whatever the oracle does** (Neel-Roth-Wu 2019 Thm 8).  The oracle here is exact
  enumeration and never fails; ``oracle_failure`` (a test hook: a predicate on a
  part's records) makes it return FAIL, e.g. always or when a record is present.
  When PRSMA returns FAIL the query player makes no update that round (the data
  player keeps its play); the round's ledger entry releases no query and its
  ``(eps0, delta0)`` is still spent.  Even with a perfect oracle a round fails with
  probability about 1/4 (see :mod:`oracledp.learners._prsma`).  Cost: ``T * K * R``
  base runs in the worst case; the fit refuses (:class:`~oracledp._errors.BudgetError`),
  before any randomness, when it exceeds ``max_calls`` or when n < K.  Practical
  only for tiny demos with very large epsilon and delta: on Adult at eps = 1,
  delta = 1e-6 a single round already needs about 2.8e11 runs.
* **Output:** the uniform mixture ``Dbar = (D_1 + ... + D_T) / T`` (Hedge) or of
  the ``Dhat_t`` (FTPL: the concatenation of the sT samples of spec 6.4).
  ``sample(m)`` draws i.i.d. records from it.
* **Accuracy** (spec 6.5): with probability >= 1 - beta, for every ``q`` in Q,
  ``|q(S) - q(Dbar)| <= R_T/T + alpha0 + gamma``.  Hedge: ``R_T/T <= sqrt(ln|X| / (2T))``,
  ``gamma = 0``; FTPL: ``R_T/T <= 4.76 sqrt(m Lam / T)``,
  ``gamma = sqrt(ln(4T|Qbar|/beta) / (2s))``.  Exponential mechanism:
  ``alpha0 = 2 ln(2|Q| T / beta) / (eps0 n)``.  RSPM [R]: an RSPM answer's excess
  count is at most ``sum_l |eta_l| |q*(u_l) - qhat(u_l)|`` (spec 3), and q*, qhat
  differ on at most 2k separator points, so
  ``alpha0 <= (2k (6m/eps0) ln(4mT/beta) + (12/eps0) ln(4T/beta)) / n``.
  ``rounds=None`` picks T in 1..max_rounds minimizing the bound of the chosen
  players (it uses n, public here, never the data).

Privacy accounting (spec 6.5, "Composition")
--------------------------------------------
The only access to the data is one pure ``eps0``-DP step per round (one
selection, or the three ``eps0/3`` parts of PrivBR), composed adaptively over T
rounds:

* ``delta > 0``: zCDP (Bun, Steinke 2016, Prop. 1.4: pure ``eps0``-DP is
  ``eps0^2/2``-zCDP; Lemma 2.3: zCDP composes additively; Prop. 1.3:
  ``rho``-zCDP implies ``(rho + 2 sqrt(rho ln(1/delta)), delta)``-DP), so
  ``rho = T eps0^2 / 2``.  If basic composition (``T eps0 <= epsilon``,
  delta = 0) allows a larger ``eps0`` (small T), basic composition is used
  instead.  ``composition_`` says which.
* ``delta == 0``: basic composition, ``eps0 = epsilon / T``, pure.

* ``query_player="prsma"``: the rounds are ``(eps0, delta0)``-DP, which zCDP does
  not cover.  Two compositions are considered and the one with the larger ``eps0``
  is used (``composition_``): **advanced composition** (Dwork, Rothblum, Vadhan
  2010; Dwork-Roth Thm 3.20) with ``delta0 = delta / (2T)`` and slack
  ``delta' = delta - sum delta_t`` (= delta/2):
  ``eps = sqrt(2 ln(1/delta') sum eps_t^2) + sum eps_t (e^{eps_t} - 1)``, total delta =
  delta (``"advanced"``); or **basic composition** ``(T eps0, T delta0)`` with
  ``eps0 = epsilon / T``, ``delta0 = delta / T`` (``"basic"``).  ``eps0`` is capped
  at 31 (Theorem 8 needs eps0/62 <= 1/2).  ``delta = 0`` is refused.

``eps0`` is taken from the closed form and then shrunk, if floating point
makes it necessary, until the composed total recomputed from the ledger does
not exceed the target.  The ledger is a sequence of :class:`oracledp.privacy.Spend`
(one per round, three per round for ``"rspm"``), composed by
:func:`oracledp.privacy.compose`; the guarantee is built from it by
:func:`oracledp.privacy.ledger_guarantee`, which checks the composition once more.
Guarantees hold under idealized numerics (see :mod:`oracledp.privacy._guarantees`).

Layout: this module holds :class:`OracleQuerySynthesizer` (the game loop and the
release); the calibrations and the accuracy bound are in
:mod:`oracledp.synth._oracle_query_calibration`, the players' exact oracles (PrivBR-RSPM,
FTPL) in :mod:`oracledp.synth._oracle_query_players`; the public names (and the private ones the tests use) are importable from here.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp._diagnostics import (
    NonPrivateDiagnostics,
    check_diagnostics_flag,
    release_diagnostics,
    research_diagnostics,
)
from oracledp._errors import BudgetError
from oracledp._validation import RandomLike, check_choice, check_epsilon, check_rng
from oracledp.learners._prsma import PRSMAParameters, prsma
from oracledp.privacy import Spend, compose, ledger_guarantee
from oracledp.privacy import _noise as noise
from oracledp.privacy._accountant import begin_release
from oracledp.synth._domain import Domain
from oracledp.synth._oracle_query_calibration import (
    _calibrate,
    _calibrate_player,
    _default_rounds,
    _ftpl_scale,
    _prsma_plan,
    oracle_query_bound,
)
from oracledp.synth._oracle_query_players import (
    _ftpl_samples,
    _privbr_rspm,
    _PrivBRBase,
    separator_patterns,
    workload_literals,
)
from oracledp.synth._release import DistributionRelease
from oracledp.synth._workload import (
    answer,
    answer_distribution,
    kway_marginal_workload,
)

__all__ = [
    "OracleQuerySynthesizer",
    "oracle_query_bound",
    "separator_patterns",
    "workload_literals",
]

_MAX_CELLS = 50_000_000
_QUERY_CLASSES = ("conjunctions",)
_QUERY_PLAYERS = ("noisy-min", "rspm", "prsma")
_DATA_PLAYERS = ("hedge", "ftpl")


class OracleQuerySynthesizer(DistributionRelease):
    """(epsilon, delta)-DP synthetic data for k-way marginals by the OracleQuery game.

    Parameters
    ----------
    epsilon, delta:
        Target privacy (replace-one neighbours, n public).  ``delta = 0`` gives a
        pure guarantee by basic composition.
    queries:
        The query class; only ``"conjunctions"`` (all k-way marginal cells,
        i.e. conjunctions of k ``attribute = level`` literals on distinct
        attributes, and their negations) is supported.
    k:
        Literals per query.
    rounds:
        T.  ``None``: minimize the accuracy bound over 1..``max_rounds``.
    query_player:
        ``"noisy-min"`` (exponential mechanism over Q ∪ ¬Q, default), ``"rspm"``
        (spec 6.3 PrivBR: RSPM on Q and ¬Q plus report-noisy-min, exact oracle) or
        ``"prsma"`` (PrivBR wrapped in PRSMA: (eps0, delta0)-DP rounds whatever the
        oracle does; needs delta > 0 and is very expensive, see ``max_calls``).
    data_player:
        ``"hedge"`` (default, exact multiplicative weights) or ``"ftpl"`` (spec 6.2
        FTPL with dual-separator Laplace noise, ``samples`` draws per round).
    samples:
        The FTPL ``s`` (ignored by Hedge).
    random_state:
        Seed or Generator for all randomness (selection and sampling).
    max_calls:
        ``"prsma"`` only: refuse (BudgetError, before any randomness) a fit whose
        worst-case number of base runs ``T * K * R`` exceeds this.
    n_jobs:
        ``"prsma"`` only: joblib workers over PRSMA's parts.
    oracle_failure:
        ``"prsma"`` only, a test hook: ``oracle_failure(part_records) -> bool``; True
        makes the (otherwise exact) oracle fail on that part.
    keep_diagnostics:
        Keep the fit's non-private diagnostics as ``diagnostics_`` (a
        :class:`~oracledp._diagnostics.NonPrivateDiagnostics`: ``fit_seconds``, and for
        ``"prsma"`` the per-round PRSMA diagnostics ``prsma_rounds``), for research:
        issues a :class:`~oracledp._errors.DiagnosticsWarning`, sets
        ``guarantee_.diagnostics_released``; ``diagnostics_`` is never pickled.

    Attributes after :meth:`fit`: ``distribution_`` (the released mixture over the
    full domain, shape ``domain.shape``), ``rounds_``, ``eps0_``,
    ``composition_``, ``learning_rate_`` (Hedge eta, or the FTPL Laplace scale b),
    ``ledger_`` (one :class:`~oracledp.privacy.Spend` per round, three for ``"rspm"``; its
    ``released`` is the selected query's index in ``Q ∪ ¬Q``, ``¬q`` being ``q + |Q|``,
    and is empty for a PRSMA round that returned FAIL), ``guarantee_``, ``workload_``, ``n_``;
    for ``"prsma"`` also ``delta0_`` and ``prsma_parameters_`` (per-round K, R, eps', cost).

    Examples
    --------
    100 records over a domain of 12 cells, all 2-way marginals (16 queries):

    >>> import numpy as np
    >>> from oracledp.synth import Domain, OracleQuerySynthesizer
    >>> domain = Domain(("a", "b", "c"), ((0, 1), (0, 1), (0, 1, 2)))
    >>> codes = np.array([[0, 0, 0], [0, 1, 1], [1, 1, 2], [1, 0, 2], [1, 1, 1]] * 20)
    >>> syn = OracleQuerySynthesizer(1.0, 1e-6, k=2, random_state=0).fit(codes, domain)
    >>> syn.rounds_, syn.distribution_.shape, syn.answer().shape, syn.sample_codes(5).shape
    (2, (2, 2, 3), (16,), (5, 3))
    >>> syn.guarantee_.describe().split(";")[0]  # T = 2 pure rounds, basic composition
    '1-DP (pure), replace-one neighbours'
    """

    def __init__(
        self,
        epsilon: float,
        delta: float = 1e-6,
        *,
        queries: str = "conjunctions",
        k: int = 3,
        rounds: int | None = None,
        max_rounds: int = 300,
        query_player: str = "noisy-min",
        data_player: str = "hedge",
        samples: int = 200,
        random_state: RandomLike = None,
        max_calls: int = 10**6,
        n_jobs: int = 1,
        oracle_failure: Callable[[NDArray[np.int64]], bool] | None = None,
        keep_diagnostics: bool = False,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        if isinstance(delta, bool) or not isinstance(delta, int | float | np.floating):
            raise TypeError(f"delta must be a real number, got {type(delta).__name__}")
        if not 0.0 <= float(delta) < 1.0:
            raise ValueError(f"delta must be in [0, 1), got {delta!r}")
        self.delta = float(delta)
        self.queries = check_choice(queries, "query class", _QUERY_CLASSES)
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or int(k) < 1:
            raise ValueError(f"k must be an integer >= 1, got {k!r}")
        self.k = int(k)
        for name, v in (("rounds", rounds), ("max_rounds", max_rounds), ("samples", samples)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | np.integer)
                                  or int(v) < 1):
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        self.rounds = None if rounds is None else int(rounds)
        self.max_rounds = int(max_rounds)
        self.samples = int(samples)
        self.query_player = check_choice(query_player, "query_player", _QUERY_PLAYERS)
        self.data_player = check_choice(data_player, "data_player", _DATA_PLAYERS)
        self.random_state = random_state
        if isinstance(max_calls, bool) or not isinstance(max_calls, int | np.integer) \
                or int(max_calls) < 1:
            raise ValueError(f"max_calls must be an integer >= 1, got {max_calls!r}")
        self.max_calls = int(max_calls)
        self.n_jobs = n_jobs
        if oracle_failure is not None and not callable(oracle_failure):
            raise TypeError("oracle_failure must be None or a callable on a part's records")
        self.oracle_failure = oracle_failure
        self.keep_diagnostics = check_diagnostics_flag(keep_diagnostics, "keep_diagnostics")
        if self.query_player == "prsma" and self.delta == 0.0:
            raise ValueError("query_player='prsma' needs delta > 0 (PRSMA is (eps, delta)-DP)")

    # ------------------------------------------------------------------ fit
    def fit(self, data: pd.DataFrame | NDArray[np.integer], domain: Domain) -> OracleQuerySynthesizer:
        """Run the T-round game on ``data`` over the public ``domain`` (never inferred)."""
        codes = self._encode(data, domain)
        if self.k > len(domain):
            raise ValueError(f"k={self.k} exceeds the number of attributes ({len(domain)})")
        if domain.size > _MAX_CELLS:
            raise ValueError(
                f"the full domain has {domain.size:,} cells (> {_MAX_CELLS:,}); this data "
                "player keeps one weight per cell"
            )
        start = time.perf_counter()
        n = codes.shape[0]
        workload = kway_marginal_workload(domain, self.k)
        nq = len(workload)
        lit = workload_literals(workload)
        m = int(sum(domain.shape))
        player = {"query_player": self.query_player, "data_player": self.data_player,
                  "m": m, "k": self.k, "samples": self.samples}
        max_rounds = self.max_rounds
        if self.query_player == "prsma" and self.rounds is None:
            # only affordable T are candidates (the cost grows with T); none: T = 1, refused
            lo, hi = 1, max_rounds
            while lo < hi:
                mid = (lo + hi + 1) // 2
                try:
                    _prsma_plan(n, self.epsilon, self.delta, mid, self.max_calls)
                    lo = mid
                except BudgetError:
                    hi = mid - 1
            max_rounds = lo
        T = self.rounds if self.rounds is not None else _default_rounds(
            n, domain, 2 * nq, self.epsilon, self.delta, max_rounds, **player)
        delta0 = 0.0
        pparams: PRSMAParameters | None = None
        if self.query_player == "prsma":
            eps0, delta0, comp, pparams = _prsma_plan(n, self.epsilon, self.delta, T,
                                                      self.max_calls)
        else:
            eps0, comp = _calibrate_player(self.epsilon, self.delta, T, self.query_player)
        rng = check_rng(self.random_state)  # all validation is done: randomness starts here
        # declared to an active BudgetAccountant: pure rounds by basic composition, zCDP, or
        # (epsilon, delta) by advanced composition
        begin_release(self, self.epsilon, 0.0 if comp == "basic" else self.delta, rng=rng,
                      zcdp=comp == "zcdp")
        logx = math.log(domain.size) if domain.size > 1 else 1.0
        if self.data_player == "hedge":
            eta = math.sqrt(8.0 * logx / T)
        else:
            eta = _ftpl_scale(T, m, logx)  # Laplace scale b of the dual-separator noise

        true = answer(workload, codes)
        gain = np.zeros(domain.shape)  # sum_{tau<t} qbar_tau(x), up to a constant
        avg = np.zeros(domain.shape)
        ledger: list[Spend] = []
        prsma_rounds: list[dict[str, Any]] = []
        for t in range(T):
            if self.data_player == "hedge":
                w = np.exp(eta * (gain - gain.max()))
                p = w / w.sum()
            else:
                cells = _ftpl_samples(gain, noise.laplace(rng, eta, size=(self.samples, m)),
                                      domain.shape)
                p = np.bincount(cells, minlength=domain.size).reshape(domain.shape)
                p = p / self.samples
            avg += p  # D_t (hedge) or Dhat_t (ftpl), the data player's play this round
            diff = n * (true - answer_distribution(workload, p))  # score of q; ¬q gets -diff
            if self.query_player == "noisy-min":
                scores = np.concatenate([diff, -diff])
                # each count score moves by at most 1 under replace-one: sensitivity 1
                j = noise.exponential_mechanism(rng, scores, eps0, 1.0)
                neg = j >= nq
                q = j - nq if neg else j
                ledger.append(Spend("exponential mechanism over Q ∪ ¬Q", eps0, round=t + 1,
                                    released=(j,)))
            elif self.query_player == "prsma":
                assert pparams is not None
                base = _PrivBRBase(workload, lit, m, answer_distribution(workload, p),
                                   self.oracle_failure)
                batch = max(1, min(pparams.R, 2**22 // max(1, nq * self.k + 2 * m)))
                with research_diagnostics():  # one warning for the whole fit, below
                    res = prsma(codes, base, eps0, delta0, random_state=rng, n_jobs=self.n_jobs,
                                max_calls=pparams.calls, batch=batch,
                                return_diagnostics=self.keep_diagnostics)
                if res.diagnostics is not None:
                    prsma_rounds.append(res.diagnostics.to_dict())
                name = "PRSMA(PrivBR-RSPM) (Neel-Roth-Wu 2019 Thm 8)"
                if res.failed:  # no update: the data player keeps its play
                    ledger.append(Spend(name, eps0, delta0, round=t + 1))  # FAIL: spent
                    continue
                q, neg = int(res.output[0]), bool(res.output[1])
                ledger.append(Spend(name, eps0, delta0, round=t + 1,
                                    released=(q + nq if neg else q,)))
            else:
                e3 = _calibrate(self.epsilon, self.delta, 3 * T)[0]  # eps0 = 3 e3
                qa, na, q1, q2 = _privbr_rspm(diff, lit, m, e3, 1, rng)
                q, neg = int(qa[0]), bool(na[0])
                ledger += [Spend("RSPM on Q", e3, round=t + 1, released=(int(q1[0]),)),
                           Spend("RSPM on ¬Q", e3, round=t + 1, released=(int(q2[0]) + nq,)),
                           Spend("report-noisy-min of the 2 candidates", e3, round=t + 1,
                                 released=(q + nq if neg else q,))]
            idx: list[slice | int] = [slice(None)] * len(domain)
            for a, c in workload.literals(q):
                idx[a] = c
            # gain qbar(x): q(x), or 1 - q(x) for ¬q (same as -q(x) up to a constant)
            gain[tuple(idx)] += -1.0 if neg else 1.0
        dist = avg / T
        dist /= dist.sum()

        eps_tot, delta_tot = compose(ledger, comp, self.delta)
        if self.query_player == "rspm":
            per_round = ("PrivBR per round (spec 6.3): RSPM on Q, RSPM on ¬Q, report-noisy-min, "
                         "eps0/3 each (Neel-Roth-Wu 2019 Thm 6; exact oracle = enumeration of "
                         "the explicit workload, certified by construction)")
        else:
            per_round = "exponential mechanism (McSherry-Talwar 2007) per round"
        if self.query_player == "prsma":
            n_failed = sum(not r.released for r in ledger)
            source = ("OracleQuery (Neel-Roth-Wu 2019 §IV; spec oracle-query.md §6), PrivBR "
                      "wrapped in PRSMA per round (Thm 8, robust to the oracle), "
                      + ("advanced composition (Dwork-Rothblum-Vadhan 2010)"
                         if comp == "advanced" else "basic composition"))
            notes = (f"T={T} rounds of (eps0={eps0:.6g}, delta0={delta0:.3g}); composed "
                     f"eps={eps_tot:.6g} at delta={delta_tot:.3g}; {n_failed} round(s) failed "
                     f"(spent, no update); replace-one, n={n} public")
        elif comp == "basic":
            source = ("OracleQuery (Neel-Roth-Wu 2019 §IV; spec oracle-query.md §6), "
                      f"{per_round}, basic composition")
            notes = (f"T={T} rounds of eps0={eps0:.6g}; composed eps={eps_tot:.6g}; "
                     f"replace-one, n={n} public")
        else:
            source = ("OracleQuery (Neel-Roth-Wu 2019 §IV; spec oracle-query.md §6), "
                      f"{per_round}, zCDP composition (Bun-Steinke 2016, Props 1.3, 1.4)")
            notes = (f"T={T} rounds of pure eps0={eps0:.6g} "
                     f"(rho={math.fsum(r.rho for r in ledger):.6g}); "
                     f"composed eps={eps_tot:.6g} at delta={delta_tot:g}; replace-one, "
                     f"n={n} public")
        # (epsilon, delta)-DP, or pure epsilon-DP when the composed delta is 0 (basic
        # composition of pure rounds); refused if the ledger exceeds the target
        guarantee = ledger_guarantee(ledger, comp, self.epsilon, self.delta, source=source,
                                     requires_exact_oracle=self.query_player == "rspm",
                                     notes=notes)
        if self.keep_diagnostics:
            guarantee = release_diagnostics(guarantee, "OracleQuerySynthesizer")
            diag: dict[str, Any] = {"fit_seconds": time.perf_counter() - start}
            if self.query_player == "prsma":
                diag["prsma_rounds"] = tuple(prsma_rounds)
            self.diagnostics_ = NonPrivateDiagnostics("oracle_query", diag)
        self._store_release(n, domain, workload, T, guarantee, dist, rng, eps0_=eps0,
                            delta0_=delta0, prsma_parameters_=pparams, composition_=comp,
                            learning_rate_=eta, ledger_=tuple(ledger))
        return self
