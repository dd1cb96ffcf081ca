"""Follow the Private Leader (Neel, Roth, Wu, FOCS 2019, Section V, Definition 12, Theorem 11).

Online learning over a finite class ``Q`` (spec ``docs/specs/oracle-query.md`` section 8).  In
rounds ``t = 1..T`` the learner plays

    q^t = RSPM(S_t),   S_t = (x^1, .., x^{t-1}),   fresh Laplace noise every round

(:func:`oracledp.learners._rspm_class.rspm_class`; at ``t = 1`` the history is empty
and RSPM minimizes its perturbation alone), then observes ``x^t`` and incurs
``q^t(x^t)``.  For a hypothesis class ``H`` and labelled examples use the 0/1-loss
class ``Q = H.zero_one_loss()`` with points ``(z, y)``.

Regret
------
Expected average regret ``R(T) = E[(1/T) sum_t q^t(x^t)] - min_q (1/T) sum_t q(x^t)``.
004 **Theorem 11** states only ``R(T) <= O(eps + delta + E||Z||_inf / T)`` for an
(eps, delta)-DP pERM with perturbation ``Z`` (its proof, Appendix F, is not
available to us).  :func:`ftpl_regret_bound` is an explicit-constant version that
we derive here [R] for a *fixed (oblivious) stream*:

* be-the-leader (Kalai-Vempala 2005) with the perturbation as a round-0 loss:
  ``sum_t q^{t+1}(x^t) <= min_q L_T(q) + (max_q Z_q - min_q Z_q)`` (for an oblivious
  stream fresh noise gives the same expected losses as one fixed draw);
* stability from privacy: ``S_{t+1}`` adds one record to ``S_t``, which moves each
  ``q``'s objective by ``q(x^t) in [0, 1]``, so Theorem 6's proof gives
  ``E q^t(x^t) <= e^eps E q^{t+1}(x^t)``, i.e. at most ``e^eps - 1`` per round;
* for RSPM ``Z_q = sum_i eta_i q(u_i)``, so ``max Z - min Z <= ||eta||_1`` and
  ``E||eta||_1 = m * 2m/eps``.

Hence ``R(T) <= (e^eps - 1) + 2 m^2 / (eps T)`` (``e^eps - 1 <= (e - 1) eps`` for
eps <= 1, matching Theorem 11's ``O(eps + E||Z||_inf/T)`` with delta = 0).

Privacy
-------
Section V states **no** privacy guarantee for the sequence of plays: there FTPL is
a no-regret learner that *uses* per-round privacy as stability (spec section 8:
"nothing is released privately here").  What follows is our accounting with the
paper's tools, for replace-one neighbouring *streams* (one example ``x^s``
replaced), a stream fixed in advance, and an exact (certified) oracle:

* each round is eps-DP in its history (004 **Theorem 6**, RSPM);
* ``x^s`` enters the histories of rounds ``s+1..T`` only, and ``x^T`` enters none,
  so ``k = T - 1`` rounds touch the data; the round-1 play is data-independent;
* **reported**: basic (adaptive) composition, 004 **Theorem 2** applied k-1 times:
  ``(k eps)``-DP, pure;
* also computed: advanced composition (Dwork, Rothblum, Vadhan 2010, Theorem III.3;
  Dwork-Roth 2014 Theorem 3.20) for a chosen ``delta'``:
  ``(sqrt(2k ln(1/delta')) eps + k eps (e^eps - 1), delta')``-DP.

The per-round losses, the regret and the best fixed hypothesis use the whole stream
(``x^T`` included) without noise: they are diagnostics, **not** private releases.
:func:`ftpl` therefore returns only the plays and the public configuration unless
``return_diagnostics=True`` (which warns and flags the guarantees); the non-private
:func:`follow_the_leader` always returns them.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._diagnostics import (
    NonPrivateDiagnostics,
    check_diagnostics_flag,
    release_diagnostics,
)
from oracledp._errors import OracleFailure
from oracledp._validation import (
    RandomLike,
    check_epsilon,
    check_integer,
    check_rng,
)
from oracledp.learners._rspm_class import (
    certifiable_class_oracle,
    rspm_class,
    rspm_class_guarantee,
    rspm_class_scale,
)
from oracledp.privacy import _noise as noise
from oracledp.privacy._composition import advanced_composition_k
from oracledp.privacy._guarantees import PrivacyGuarantee
from oracledp.query_classes._base import ENUMERATE_LIMIT, QueryClass, WeightedOracle

__all__ = [
    "FTPLPrivacy",
    "FTPLResult",
    "follow_the_leader",
    "ftpl",
    "ftpl_privacy",
    "ftpl_regret_bound",
]

SOURCE_REGRET = "Neel, Roth, Wu (FOCS 2019) Theorem 11 (explicit constants derived here)"
SOURCE_BASIC = ("Neel, Roth, Wu (FOCS 2019) Theorem 6 per round + Theorem 2 (basic composition) "
                "over the T-1 data-dependent rounds")
SOURCE_ADVANCED = ("Neel, Roth, Wu (FOCS 2019) Theorem 6 per round + advanced composition "
                   "(Dwork, Rothblum, Vadhan 2010 Thm III.3; Dwork-Roth 2014 Thm 3.20)")


def _check_rounds(T: object) -> int:
    rounds = check_integer(T, "T")
    if rounds < 2:
        raise ValueError(f"T must be >= 2 (with T = 1 no play depends on the data), got {T}")
    return rounds


def _expm1(x: float) -> float:
    return math.expm1(x) if x < 700.0 else math.inf


def ftpl_regret_bound(epsilon: float, T: int, m: int) -> float:
    """Bound on FTPL-with-RSPM's expected *average* regret after T rounds.

    ``(e^eps - 1) + 2 m^2 / (eps T)``: the explicit form of 004 Theorem 11
    (``O(eps + delta + E||Z||_inf / T)``, delta = 0) derived in the module
    docstring; ``m`` is the separator size.  Valid for a fixed stream, losses in
    [0, 1] and an exact oracle.  ``inf`` when ``e^eps`` overflows (eps >= 700).
    """
    eps = check_epsilon(epsilon)
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or int(T) < 1:
        raise ValueError(f"T must be an integer >= 1, got {T!r}")
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or int(m) < 1:
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    return _expm1(eps) + 2.0 * int(m) ** 2 / (eps * int(T))


@dataclass(frozen=True)
class FTPLPrivacy:
    """Privacy of the whole sequence of plays ``(q^1..q^T)`` (see module docstring).

    ``reported`` is the basic-composition guarantee (pure); ``advanced`` the
    advanced-composition one at ``delta_prime`` (``None`` if not requested).
    """

    per_round: PrivacyGuarantee
    rounds_using_data: int
    reported: PrivacyGuarantee
    advanced: PrivacyGuarantee | None
    paper_statement: str = (
        "004 Section V gives no privacy statement for the sequence (Theorem 11 is a regret "
        "bound that uses per-round DP as stability); the totals are our composition.")

    def to_dict(self) -> dict[str, object]:
        return {"per_round": self.per_round.to_dict(), "rounds_using_data": self.rounds_using_data,
                "reported": self.reported.to_dict(),
                "advanced": None if self.advanced is None else self.advanced.to_dict(),
                "paper_statement": self.paper_statement}


def ftpl_privacy(epsilon: float, T: int, delta_prime: float | None = 1e-6) -> FTPLPrivacy:
    """Per-round eps (004 Thm 6) composed over the ``T - 1`` data-dependent rounds.

    Reported: ``((T-1) eps)``-DP (004 Theorem 2, basic composition).  Also, for
    ``delta_prime`` in (0, 1): ``(sqrt(2k ln(1/delta')) eps + k eps (e^eps - 1),
    delta')`` with ``k = T - 1`` (advanced composition, DRV10); ``advanced`` is
    ``None`` when not requested or not finite (eps >= 700).
    """
    eps = check_epsilon(epsilon)
    T = _check_rounds(T)
    if delta_prime is not None and not (0.0 < float(delta_prime) < 1.0):
        raise ValueError(f"delta_prime must be in (0, 1) or None, got {delta_prime!r}")
    k = T - 1
    per = rspm_class_guarantee(eps)
    basic = PrivacyGuarantee.pure(
        k * eps, source=SOURCE_BASIC, requires_exact_oracle=True,
        notes=f"sequence of {T} plays, {k} rounds use data; fixed stream, replace-one "
              "neighbouring streams; losses/regret are not private")
    adv = None
    if delta_prime is not None:
        dp = float(delta_prime)
        e_adv = advanced_composition_k(eps, k, dp)
        if math.isfinite(e_adv):
            adv = PrivacyGuarantee.approximate(
                e_adv, dp, source=SOURCE_ADVANCED, requires_exact_oracle=True,
                notes=f"k = {k} eps-DP rounds; alternative to the reported basic composition")
    return FTPLPrivacy(per_round=per, rounds_using_data=k, reported=basic, advanced=adv)


@dataclass(frozen=True)
class FTPLResult:
    """Output of :func:`ftpl` / :func:`follow_the_leader`.

    ``plays[t]`` is the hypothesis played at round t+1 (the released sequence);
    ``epsilon``, ``T``, ``m``, ``privacy`` and ``bound`` (:func:`ftpl_regret_bound`)
    are public.  ``privacy`` and ``bound`` are ``None`` for the non-private Follow
    the Leader.

    ``diagnostics`` (None for :func:`ftpl` unless ``return_diagnostics=True``; always
    set by :func:`follow_the_leader`) is a
    :class:`~oracledp._diagnostics.NonPrivateDiagnostics` with ``losses``
    (``losses[t] = plays[t](x^{t+1})``), ``cumulative_losses``, ``best_params`` and
    ``best_cumulative_loss`` (the best fixed hypothesis in hindsight), ``regret``
    (realized average regret after T rounds), ``regret_total``, ``regret_curve``
    (``regret_curve[t-1]``: realized average regret of the prefix of length t;
    FTPL does not depend on the horizon, so each prefix is a run of FTPL with
    horizon t; ``None`` when the class is too large to enumerate) and ``timings``.
    """

    plays: NDArray[np.int64]
    epsilon: float | None
    T: int
    m: int
    privacy: FTPLPrivacy | None
    bound: float | None
    diagnostics: NonPrivateDiagnostics | None = field(default=None, repr=False)


def _setup(cls: QueryClass, stream: ArrayLike, oracle: str | WeightedOracle
           ) -> tuple[NDArray[np.float64], WeightedOracle]:
    if not isinstance(cls, QueryClass):
        raise TypeError(f"cls must be a QueryClass, got {type(cls).__name__}")
    X = cls.check_points(stream, "stream")
    _check_rounds(X.shape[0])
    orc = certifiable_class_oracle(cls, oracle, "FTPL")
    return X, orc


def _regret_diagnostics(cls: QueryClass, X: NDArray[np.float64], orc: WeightedOracle,
                        plays: NDArray[np.int64], mechanism: str,
                        timings: dict[str, float]) -> NonPrivateDiagnostics:
    """Losses, the best fixed hypothesis in hindsight and the regret: NOT private."""
    T = X.shape[0]
    losses = cls.evaluate(plays, X)[np.arange(T), np.arange(T)].astype(np.float64)
    cum = np.cumsum(losses)
    best = orc.solve(X, np.ones(T))
    if not best.certified or best.params is None:
        raise OracleFailure("the best fixed hypothesis in hindsight was not certified",
                            result=best)
    best_loss = float(cls.evaluate(best.params, X)[0].sum())
    curve = None
    if cls.size <= ENUMERATE_LIMIT and cls.size * T <= 50_000_000:
        cum_all = np.cumsum(cls.evaluate(cls.enumerate(), X), axis=1, dtype=np.float64)
        if not math.isclose(float(cum_all[:, -1].min()), best_loss, abs_tol=1e-9):
            raise OracleFailure("oracle and enumeration disagree on the best fixed hypothesis",
                                result=best)
        curve = (cum - cum_all.min(axis=0)) / np.arange(1, T + 1)
    reg_total = float(cum[-1] - best_loss)
    return NonPrivateDiagnostics(mechanism, {
        "losses": losses, "cumulative_losses": cum,
        "best_params": np.asarray(best.params, dtype=np.int64),
        "best_cumulative_loss": best_loss, "regret": reg_total / T,
        "regret_total": reg_total, "regret_curve": curve, "timings": timings})


def ftpl(
    cls: QueryClass,
    stream: ArrayLike,
    epsilon: float,
    *,
    oracle: str | WeightedOracle = "brute",
    random_state: RandomLike = None,
    delta_prime: float | None = 1e-6,
    return_diagnostics: bool = False,
) -> FTPLResult:
    """Run Follow the Private Leader (004 Definition 12) with Laplace RSPM on a fixed stream.

    Parameters
    ----------
    cls:
        The loss class ``Q`` (e.g. ``MonotoneConjunctions(d).zero_one_loss()``).
    stream:
        ``(T, cls.point_dim)`` points ``x^1..x^T`` (``T >= 2``), fixed in advance.
    epsilon:
        Per-round RSPM privacy eps > 0 (Laplace scale ``2m/eps``, fresh every round).
    oracle:
        ``"brute"`` (enumeration, default), ``"highs"`` or a certifiable
        :class:`~oracledp.query_classes.WeightedOracle` for ``cls``.
    random_state:
        Seed or numpy Generator: the only source of randomness.
    delta_prime:
        delta' of the advanced-composition statement (``None``: skip it).
    return_diagnostics:
        Attach the non-private losses, best fixed hypothesis, exact regret (best
        fixed hypothesis by the exact oracle, cross-checked by enumeration) and
        timings as ``diagnostics``.  For research only: issues a
        :class:`~oracledp._errors.DiagnosticsWarning` and sets
        ``diagnostics_released`` on the guarantees of ``privacy``.

    Returns
    -------
    FTPLResult with the plays, ``bound`` = :func:`ftpl_regret_bound` (004 Theorem 11)
    and ``privacy`` = :func:`ftpl_privacy` (reported: basic composition,
    ``((T-1) eps)``-DP).  All inputs are validated before any noise is drawn; an
    uncertified oracle answer raises :class:`~oracledp._errors.OracleFailure`.

    Examples
    --------
    A stream of four labelled points ``(z_1, z_2, y)``, monotone conjunctions over two
    attributes (0/1 loss), the exact brute-force oracle:

    >>> import numpy as np
    >>> from oracledp.query_classes import MonotoneConjunctions
    >>> from oracledp.learners._ftpl import ftpl
    >>> stream = np.array([[1, 1, 1], [0, 1, 0], [1, 0, 0], [1, 1, 1]], dtype=float)
    >>> res = ftpl(MonotoneConjunctions(2).zero_one_loss(), stream, 0.5, random_state=3)
    >>> res.plays.tolist()
    [[0, 0], [1, 1], [0, 0], [1, 0]]
    >>> res.privacy.reported.epsilon, res.privacy.reported.is_pure  # (T - 1) eps
    (1.5, True)
    """
    want_diag = check_diagnostics_flag(return_diagnostics)
    eps = check_epsilon(epsilon)
    X, orc = _setup(cls, stream, oracle)
    privacy = ftpl_privacy(eps, X.shape[0], delta_prime)
    gen = check_rng(random_state)
    T = X.shape[0]
    U = cls.separator()
    m = int(U.shape[0])
    scale = rspm_class_scale(eps, m)
    plays = np.empty((T, cls.param_dim), dtype=np.int64)
    t0 = time.perf_counter()
    # round 1: empty history, RSPM minimizes its perturbation alone (data-independent)
    first = orc.solve(U, noise.laplace(gen, scale, size=m))
    if not first.certified or first.params is None:
        raise OracleFailure("round 1: oracle answer not certified; nothing released", result=first)
    plays[0] = first.params
    for t in range(1, T):
        plays[t] = rspm_class(cls, X[:t], None, eps, oracle=orc, random_state=gen).params
    t1 = time.perf_counter()
    diagnostics = None
    if want_diag:
        timings = {"plays_s": t1 - t0}
        diagnostics = _regret_diagnostics(cls, X, orc, plays, "ftpl", timings)
        timings["total_s"] = time.perf_counter() - t0
        privacy = FTPLPrivacy(
            per_round=release_diagnostics(privacy.per_round, "FTPL"),
            rounds_using_data=privacy.rounds_using_data,
            reported=privacy.reported.with_diagnostics_released(),
            advanced=None if privacy.advanced is None
            else privacy.advanced.with_diagnostics_released(),
        )
    return FTPLResult(plays=plays, epsilon=eps, T=T, m=m, privacy=privacy,
                      bound=ftpl_regret_bound(eps, T, m), diagnostics=diagnostics)


def follow_the_leader(cls: QueryClass, stream: ArrayLike, *,
                      oracle: str | WeightedOracle = "brute") -> FTPLResult:
    """Non-private Follow the Leader: ``q^t = argmin_q L_{t-1}(q)`` by the exact oracle.

    Ties follow the oracle's deterministic rule (brute force: first enumerated row);
    round 1 plays the oracle's answer on an empty objective.  No privacy: the
    result always carries its (non-private) ``diagnostics`` (losses, regret...).
    """
    X, orc = _setup(cls, stream, oracle)
    T = X.shape[0]
    m = int(cls.separator().shape[0])
    plays = np.empty((T, cls.param_dim), dtype=np.int64)
    t0 = time.perf_counter()
    for t in range(T):
        r = orc.solve(X[:t], np.ones(t))
        if not r.certified or r.params is None:
            raise OracleFailure(f"round {t + 1}: oracle answer not certified", result=r)
        plays[t] = r.params
    diagnostics = _regret_diagnostics(cls, X, orc, plays, "follow_the_leader",
                                      {"plays_s": time.perf_counter() - t0})
    return FTPLResult(plays=plays, epsilon=None, T=T, m=m, privacy=None, bound=None,
                      diagnostics=diagnostics)
