"""OracleQuery for k-way marginals over a public categorical domain (tractable variant).

Reference: Neel, Roth, Wu (FOCS 2019) Section IV, Theorem 10, as reconstructed in
``specs/oracle-query.md`` Section 6.  The game (spec 6.1): the data player picks a
distribution ``D`` over the domain X, the query player a query ``qbar`` in
``Qbar = Q ∪ ¬Q`` (``Q`` = the k-way marginal workload), and the data player's loss
is ``A(D, qbar) = qbar(S) - qbar(D)``; the value of the game is 0.

What this module implements, and how it differs from spec 6.2-6.4
-----------------------------------------------------------------
* **Data player = Hedge (multiplicative weights) over the full domain.**  Record
  ``x`` earns gain ``qbar_t(x) ∈ [0, 1]`` each round; the play is
  ``D_t(x) ∝ exp(eta * sum_{tau<t} qbar_tau(x))`` with
  ``eta = sqrt(8 ln|X| / T)`` (the standard Hedge tuning, regret
  ``R_T <= sqrt(T ln|X| / 2)``).  Hedge *is* Follow-the-Perturbed-Leader over
  records with an i.i.d. Gumbel(1/eta) perturbation per record (Gumbel-max
  trick), so it is an exact FTPL data player, but **not** the spec's FTPL with
  the dual-separator (Laplace on ``m2`` separator records) perturbation of
  spec 6.2.  Because the domain (1.3M cells for Adult) fits in memory, we
  use ``D_t`` exactly instead of ``s`` samples ``Dhat_t`` (the spec's
  ``s -> infinity``, ``gamma = 0``).  Only public computation: no privacy cost.
* **Query player = exponential mechanism ("noisy-min") over Q ∪ ¬Q.**  The
  score of ``qbar`` is the data player's loss in counts,
  ``n (qbar(S) - qbar(D_t))``; for ``¬q`` it is minus the score of ``q``.
  Under replace-one neighbours (n public) each count moves by at most 1, so
  the score sensitivity is 1 and selection with probability
  ``∝ exp(eps0 * score / 2)`` (McSherry-Talwar 2007; sampled by the Gumbel-max
  trick) is pure ``eps0``-DP per round.  This replaces spec 6.3's PrivBR
  (RSPM on Q and on ¬Q plus report-noisy-min), which needs an exact RSPM
  oracle over k-literal conjunctions; ``query_player="rspm"`` raises
  :class:`NotImplementedError`.
* **Output:** the uniform mixture ``Dbar = (D_1 + ... + D_T) / T`` (spec 6.4
  outputs the concatenation of the samples ``Dhat_t``, whose law is ``Dbar``
  as ``s -> infinity``).  ``sample(m)`` draws i.i.d. records from ``Dbar``.
* **Accuracy** (spec 6.5 with ``gamma = 0``): with probability >= 1 - beta,
  for every ``q`` in Q, ``|q(S) - q(Dbar)| <= R_T/T + alpha0`` with
  ``R_T/T <= sqrt(ln|X| / (2T))`` and
  ``alpha0 = 2 ln(2|Q| T / beta) / (eps0 n)`` (exponential-mechanism utility
  with a union bound over rounds).  ``rounds=None`` picks T in 1..max_rounds
  minimizing this bound (it uses n, public here, never the data).

Privacy accounting (spec 6.5, "Composition")
--------------------------------------------
The only access to the data is one pure ``eps0``-DP selection per round,
composed adaptively over T rounds:

* ``delta > 0``: zCDP (Bun, Steinke 2016, Prop. 1.4: pure ``eps0``-DP is
  ``eps0^2/2``-zCDP; Lemma 2.3: zCDP composes additively; Prop. 1.3:
  ``rho``-zCDP implies ``(rho + 2 sqrt(rho ln(1/delta)), delta)``-DP), so
  ``rho = T eps0^2 / 2``.  If basic composition (``T eps0 <= epsilon``,
  delta = 0) allows a larger ``eps0`` (small T), basic composition is used
  instead.  ``composition_`` says which.
* ``delta == 0``: basic composition, ``eps0 = epsilon / T``, pure.

``eps0`` is taken from the closed form and then shrunk, if floating point
makes it necessary, until the composed total recomputed from the ledger does
not exceed the target.  Guarantees hold under idealized numerics (see
:mod:`oracledp.guarantees`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp._validation import RandomLike, check_choice, check_epsilon, check_rng
from oracledp.guarantees import GuaranteeKind, PrivacyGuarantee
from oracledp.synth.domain import Domain
from oracledp.synth.workload import (
    MarginalWorkload,
    answer,
    answer_distribution,
    kway_marginal_workload,
)

__all__ = [
    "OracleQuerySynthesizer",
    "RoundSpend",
    "compose_ledger",
    "oracle_query_bound",
]

_MAX_CELLS = 50_000_000
_QUERY_CLASSES = ("conjunctions",)
_QUERY_PLAYERS = ("noisy-min", "rspm")
_COMPOSITIONS = ("basic", "zcdp")


@dataclass(frozen=True)
class RoundSpend:
    """Privacy spent by one round: a pure ``epsilon``-DP selection (``rho = epsilon^2 / 2``)."""

    round: int
    mechanism: str
    epsilon: float
    query: int  # index in the workload
    negated: bool  # True when the selected query is ¬q

    @property
    def rho(self) -> float:
        return self.epsilon**2 / 2.0


def compose_ledger(
    ledger: tuple[RoundSpend, ...] | list[RoundSpend], composition: str, delta: float
) -> tuple[float, float]:
    """The ``(epsilon, delta)`` of the adaptive composition of the ledger's rounds.

    ``"basic"``: ``(sum eps_t, 0)``.  ``"zcdp"``: ``rho = sum eps_t^2 / 2``, then
    ``(rho + 2 sqrt(rho ln(1/delta)), delta)`` (Bun-Steinke 2016, Props 1.3-1.4).
    """
    check_choice(composition, "composition", _COMPOSITIONS)
    if composition == "basic":
        return math.fsum(r.epsilon for r in ledger), 0.0
    if not 0.0 < delta < 1.0:
        raise ValueError(f"zCDP conversion needs delta in (0, 1), got {delta!r}")
    rho = math.fsum(r.rho for r in ledger)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta)), delta


def _calibrate(epsilon: float, delta: float, T: int) -> tuple[float, str]:
    """Per-round eps0 and the composition, such that the T-fold total stays <= epsilon."""
    eps_basic = epsilon / T
    if delta > 0:
        L = math.log(1.0 / delta)
        r = math.sqrt(L + epsilon) - math.sqrt(L)  # sqrt(rho): rho + 2 sqrt(rho L) = epsilon
        eps_z = math.sqrt(2.0 * r * r / T)
        if eps_z > eps_basic:
            eps0, comp = eps_z, "zcdp"
        else:
            eps0, comp = eps_basic, "basic"
    else:
        eps0, comp = eps_basic, "basic"

    def total(e0: float) -> float:
        fake = [RoundSpend(t, "", e0, 0, False) for t in range(T)]
        return compose_ledger(fake, comp, delta)[0]

    while total(eps0) > epsilon:  # floating-point safety: never overshoot
        eps0 *= 1.0 - 1e-12
    return eps0, comp


def oracle_query_bound(
    T: int, *, n: int, log_domain: float, n_queries: int, epsilon: float, delta: float,
    beta: float = 0.05,
) -> float:
    """The accuracy bound ``sqrt(ln|X|/(2T)) + 2 ln(2|Q|T/beta)/(eps0 n)`` (module docstring)."""
    eps0, _ = _calibrate(epsilon, delta, T)
    regret = math.sqrt(log_domain / (2.0 * T))
    alpha0 = 2.0 * math.log(2.0 * n_queries * T / beta) / (eps0 * n)
    return regret + alpha0


def _default_rounds(n: int, domain: Domain, n_queries: int, epsilon: float, delta: float,
                    max_rounds: int) -> int:
    logx = math.log(domain.size) if domain.size > 1 else 1.0
    best_T, best = 1, math.inf
    for T in range(1, max_rounds + 1):
        b = oracle_query_bound(T, n=n, log_domain=logx, n_queries=n_queries,
                               epsilon=epsilon, delta=delta)
        if b < best:
            best_T, best = T, b
    return best_T


class OracleQuerySynthesizer:
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
        ``"noisy-min"`` (exponential mechanism over Q ∪ ¬Q) or ``"rspm"`` (not
        implemented).
    random_state:
        Seed or Generator for all randomness (selection and sampling).

    Attributes after :meth:`fit`: ``distribution_`` (the released mixture over the
    full domain, shape ``domain.shape``), ``rounds_``, ``eps0_``,
    ``composition_``, ``learning_rate_``, ``ledger_`` (one :class:`RoundSpend`
    per round), ``guarantee_``, ``workload_``, ``n_``, ``fit_seconds_``.
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
        random_state: RandomLike = None,
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
        for name, v in (("rounds", rounds), ("max_rounds", max_rounds)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | np.integer)
                                  or int(v) < 1):
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        self.rounds = None if rounds is None else int(rounds)
        self.max_rounds = int(max_rounds)
        self.query_player = check_choice(query_player, "query_player", _QUERY_PLAYERS)
        if self.query_player == "rspm":
            raise NotImplementedError(
                "query_player='rspm' (spec 6.3: RSPM on k-literal conjunctions and on their "
                "negations, plus report-noisy-min) is not implemented: it needs an exact "
                "RSPM oracle over conjunctions restricted to k literals of a categorical "
                "domain. Use query_player='noisy-min' (exponential mechanism over Q ∪ ¬Q)."
            )
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def _encode(self, data: Any, domain: Domain) -> NDArray[np.int64]:
        if not isinstance(domain, Domain):
            raise TypeError(f"domain must be a Domain, got {type(domain).__name__}")
        if isinstance(data, pd.DataFrame):
            return domain.encode(data)
        if isinstance(data, np.ndarray):
            return domain.check_codes(data, "data")
        raise TypeError(
            "data must be a pandas DataFrame (columns = the domain's attributes) or an "
            f"integer code matrix of shape (n, {len(domain)}), got {type(data).__name__}"
        )

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
        rng = check_rng(self.random_state)  # all validation is done: randomness starts here
        start = time.perf_counter()
        n = codes.shape[0]
        workload = kway_marginal_workload(domain, self.k)
        nq = len(workload)
        T = self.rounds if self.rounds is not None else _default_rounds(
            n, domain, 2 * nq, self.epsilon, self.delta, self.max_rounds)
        eps0, comp = _calibrate(self.epsilon, self.delta, T)
        logx = math.log(domain.size) if domain.size > 1 else 1.0
        eta = math.sqrt(8.0 * logx / T)

        true = answer(workload, codes)
        logw = np.zeros(domain.shape)
        p = np.full(domain.shape, 1.0 / domain.size)
        avg = np.zeros(domain.shape)
        ledger: list[RoundSpend] = []
        for t in range(T):
            avg += p  # D_t, the data player's play this round
            diff = n * (true - answer_distribution(workload, p))  # score of q; ¬q gets -diff
            scores = np.concatenate([diff, -diff])
            j = int(np.argmax(eps0 * scores / 2.0 + rng.gumbel(size=scores.size)))
            neg = j >= nq
            q = j - nq if neg else j
            ledger.append(RoundSpend(t + 1, "exponential mechanism over Q ∪ ¬Q", eps0, q, neg))
            idx: list[slice | int] = [slice(None)] * len(domain)
            for a, c in workload.literals(q):
                idx[a] = c
            # gain qbar(x): q(x), or 1 - q(x) for ¬q (same as -q(x) after normalization)
            logw[tuple(idx)] += -eta if neg else eta
            w = np.exp(logw - logw.max())
            p = w / w.sum()
        dist = avg / T
        dist /= dist.sum()

        eps_tot, delta_tot = compose_ledger(ledger, comp, self.delta)
        if eps_tot > self.epsilon:  # _calibrate guarantees this cannot happen
            raise AssertionError("composed privacy exceeds the target")
        if comp == "basic":
            guarantee = PrivacyGuarantee(
                epsilon=self.epsilon, delta=0.0, kind=GuaranteeKind.PURE,
                requires_exact_oracle=False,
                source="OracleQuery (Neel-Roth-Wu 2019 §IV; spec oracle-query.md §6), "
                "exponential mechanism (McSherry-Talwar 2007) per round, basic composition",
                notes=f"T={T} rounds of eps0={eps0:.6g}; composed eps={eps_tot:.6g}; "
                f"replace-one, n={n} public",
            )
        else:
            guarantee = PrivacyGuarantee(
                epsilon=self.epsilon, delta=self.delta, kind=GuaranteeKind.APPROXIMATE,
                requires_exact_oracle=False,
                source="OracleQuery (Neel-Roth-Wu 2019 §IV; spec oracle-query.md §6), "
                "exponential mechanism per round, zCDP composition (Bun-Steinke 2016, "
                "Props 1.3, 1.4)",
                notes=f"T={T} rounds of pure eps0={eps0:.6g} (rho={T * eps0**2 / 2:.6g}); "
                f"composed eps={eps_tot:.6g} at delta={delta_tot:g}; replace-one, n={n} public",
            )
        self.n_ = n
        self.domain_ = domain
        self.workload_: MarginalWorkload = workload
        self.rounds_ = T
        self.eps0_ = eps0
        self.composition_ = comp
        self.learning_rate_ = eta
        self.ledger_ = tuple(ledger)
        self.guarantee_ = guarantee
        self.distribution_ = dist
        self.fit_seconds_ = time.perf_counter() - start
        self._rng = rng
        return self

    # -------------------------------------------------------------- outputs
    def _check_fitted(self) -> None:
        if not hasattr(self, "distribution_"):
            raise RuntimeError("call fit(data, domain) first")

    def answer(self, workload: MarginalWorkload | None = None) -> NDArray[np.float64]:
        """Exact answers of a workload (default: the fitted one) under the released mixture."""
        self._check_fitted()
        wl = self.workload_ if workload is None else workload
        if wl.domain != self.domain_:
            raise ValueError("the workload is over a different domain")
        return answer_distribution(wl, self.distribution_)

    def sample(self, n: int | None = None) -> NDArray[np.int64]:
        """``n`` synthetic records (default: the private n) drawn i.i.d. from the mixture."""
        self._check_fitted()
        if n is None:
            n = self.n_
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or int(n) < 1:
            raise ValueError(f"the number of records to sample must be an integer >= 1, got {n!r}")
        flat = self.distribution_.ravel()
        cells = self._rng.choice(flat.size, size=int(n), p=flat / flat.sum())
        return np.stack(np.unravel_index(cells, self.domain_.shape), axis=1).astype(np.int64)

    def sample_frame(self, n: int | None = None) -> pd.DataFrame:
        """Like :meth:`sample`, decoded to the domain's levels."""
        return self.domain_.decode(self.sample(n))
