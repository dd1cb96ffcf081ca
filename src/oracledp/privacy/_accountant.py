"""How fits report to the active budget accountant (:mod:`oracledp.privacy._budget`).

Every estimator's and synthesizer's ``fit`` is wrapped by :func:`accounted_fit` (one session
per fit) and declares its budget with :func:`begin_release` just before its mechanism draws
noise: an active accountant refuses it there, before any noise, or reserves it.  A fit that
returns is charged its guarantee; one that fails after its generator was used is charged its
declared budget (an Accuracy First refusal: its ex-post loss); one that fails before is not
charged.  :func:`note_clone` handles scikit-learn's clones inside its model selection: a
:class:`~oracledp._errors.PrivacyWarning` without an accountant; with one, a mark that
refuses a fit in another process, and ``error_score="raise"`` required.  The rules the
accountant applies are in :mod:`oracledp.privacy._budget`.
"""

from __future__ import annotations

import functools
import math
import os
import sys
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from oracledp._errors import BudgetError, NoHaltError, PrivacyWarning
from oracledp.privacy._budget import BudgetAccountant, _Cost, active_accountant
from oracledp.privacy._composition import zcdp_rho
from oracledp.privacy._guarantees import REPLACE_ONE, GuaranteeKind, PrivacyGuarantee

__all__ = ["accounted_fit", "begin_release", "note_clone"]


# --- the fits' side: one session per fit ----------------------------------------------------
@dataclass
class _Declared:
    epsilon: float
    delta: float
    rho: float | None
    kind: GuaranteeKind
    neighbouring: str

    def statement(self, source: str) -> PrivacyGuarantee:
        fields: dict[str, Any] = {"source": source, "neighbouring": self.neighbouring}
        if self.kind is GuaranteeKind.EX_POST:
            return PrivacyGuarantee.ex_post(self.epsilon, **fields)
        if self.delta == 0:
            return PrivacyGuarantee.pure(self.epsilon, **fields)
        return PrivacyGuarantee.approximate(self.epsilon, self.delta, **fields)


class _Session:
    """One fit: whether its mechanism started, and under which accountant."""

    def __init__(self, owner: object) -> None:
        self.name = type(owner).__name__
        self.owner = owner
        self.accountant: BudgetAccountant | None = None
        self.token = -1
        self.declared: _Declared | None = None
        self.label = f"{self.name}.fit"
        self.rng: Any = None
        self.rng_state: Any = None
        self.covers_inner = False

    @property
    def started(self) -> bool:
        return self.declared is not None

    def drew(self) -> bool:
        """Whether the fit's generator was used since :func:`begin_release` (a draw, or child
        generators spawned for parallel workers)."""
        return bool(self.rng is None or _rng_state(self.rng) != self.rng_state)

    def fail(self, exc: BaseException) -> None:
        """The fit raised: charge it if its mechanism had drawn noise."""
        acct, declared = self.accountant, self.declared
        if acct is None or declared is None:
            return
        if not self.drew():  # refused by the mechanism's own checks: nothing was drawn
            acct._cancel(self.token)
            return
        what = type(exc).__name__
        if isinstance(exc, NoHaltError) and declared.kind is GuaranteeKind.EX_POST:
            g = PrivacyGuarantee.ex_post(exc.epsilon_refusal, source=(
                "the ex-post loss of the refusal to release theta* (no level passed)"),
                neighbouring=declared.neighbouring)
            acct._settle(self.token, self.label, g, acct._actual_cost(g, None),
                         f"refused after its mechanism started ({what}): the refusal's "
                         "ex-post loss is charged")
            return
        g = declared.statement(f"the declared budget of a {self.name} fit that failed after "
                               "its mechanism started")
        cost = acct._declared_cost(declared.epsilon, declared.delta, declared.rho,
                                   declared.neighbouring)
        acct._settle(self.token, self.label, g, cost,
                     f"failed after its mechanism started ({what}): the declared budget is "
                     "charged")

    def succeed(self) -> None:
        """The fit returned: charge its guarantee."""
        g = getattr(self.owner, "guarantee_", None)
        if self.declared is None:
            acct = active_accountant()
            if acct is not None and isinstance(g, PrivacyGuarantee):  # pragma: no cover
                acct.charge(g, label=self.label, status="released (charged after the fit: "
                            "it did not declare its budget first)")
            return
        acct = self.accountant
        if acct is None:
            return
        if not isinstance(g, PrivacyGuarantee):  # pragma: no cover - every fit sets one
            g = self.declared.statement("the declared budget (the fit stated no guarantee)")
        rho = self.declared.rho if g.kind is not GuaranteeKind.EX_POST else None
        status = "released"
        if not g.holds:
            status = "released WITHOUT a guarantee: the budget is exhausted"
        elif g.diagnostics_released:
            status = "released with non-private diagnostics: the budget is exhausted"
        acct._settle(self.token, self.label, g, acct._actual_cost(g, rho), status)


_LOCAL = threading.local()


def _sessions() -> dict[int, _Session]:
    sessions: dict[int, _Session] | None = getattr(_LOCAL, "sessions", None)
    if sessions is None:
        sessions = {}
        _LOCAL.sessions = sessions
    return sessions


#: Set on a clone made inside scikit-learn's model selection while an accountant was active:
#: the id of the process that holds the accountant.
_CLONE_MARK = "_oracledp_accountant_pid"

F = TypeVar("F", bound=Callable[..., Any])


def accounted_fit(fit: F) -> F:
    """Wrap a ``fit`` so that it reports to the active accountant (see the module docstring).

    The estimator's ``fit`` calls :func:`begin_release` once, after its parameters and data
    are checked and before any noise is drawn.  A nested call on the same object (a
    subclass's ``fit`` calling ``super().fit``) is one session.
    """

    @functools.wraps(fit)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        sessions = _sessions()
        if id(self) in sessions or any(s.covers_inner for s in sessions.values()):
            return fit(self, *args, **kwargs)  # one session: this object's, or its owner's
        pid = getattr(self, _CLONE_MARK, None)
        if pid is not None and pid != os.getpid() and active_accountant() is None:
            raise BudgetError(
                f"{type(self).__name__} was cloned by scikit-learn while a BudgetAccountant "
                "was active, but is fitted in another process, which that accountant cannot "
                "see: its release would go uncharged. Run the search with n_jobs=1 (or "
                "joblib's threading backend); refused before any noise.")
        session = _Session(self)
        sessions[id(self)] = session
        try:
            # fit(X, y[, sample_weight=...]): hand X and y over in a plain call and keep no
            # reference here (a *args tuple would hold them for the whole fit), so a fit that
            # is done with X can free it (memory only: a 10 M-row table's fit peaked about
            # 260 MB lower, docs/results/large-tables/fit-narrow)
            held, kw = list(args), dict(kwargs)
            del args, kwargs
            if len(held) == 2 and not kw:
                result = fit(self, held.pop(0), held.pop(0))
            elif len(held) == 2 and set(kw) == {"sample_weight"}:
                result = fit(self, held.pop(0), held.pop(0),
                             sample_weight=kw.pop("sample_weight"))
            else:
                result = fit(self, *held, **kw)
        except BaseException as exc:
            del sessions[id(self)]
            session.fail(exc)
            raise
        del sessions[id(self)]
        session.succeed()
        return result

    wrapper.__accounted__ = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def _rng_state(rng: Any) -> Any:
    bits = rng.bit_generator
    return bits.state, getattr(bits.seed_seq, "n_children_spawned", None)


def begin_release(owner: object, epsilon: float | None, delta: float = 0.0, *, rng: Any,
                  rho: float | None = None, zcdp: bool = False, ex_post: bool = False,
                  neighbouring: str = REPLACE_ONE, covers_inner: bool = False) -> None:
    """Called by a fit just before it calls its mechanism: its declared budget.

    ``epsilon``, ``delta``: the fit's declared per-record loss (ex-post: its cap,
    ``max_epsilon``, None when it has none); ``rho``: its zCDP when its mechanism accounts in
    zCDP (``zcdp=True``: ``zcdp_rho(epsilon, delta)``, the budget such a mechanism plans
    with); ``rng``: the numpy Generator all of the fit's noise comes from.  Raises
    BudgetError, before any noise, when an active accountant cannot take it; otherwise
    reserves it.  From then on the fit is charged even if it fails, unless it fails before
    ``rng`` was used (the mechanism's own checks refused it: nothing was drawn).

    ``covers_inner=True``: the declared budget covers every accounted fit the owner's fit
    runs from now on in this thread (a composite release, such as
    :class:`~oracledp.synth.TableSynthesizer`'s measurements and the synthesizer it runs
    with the rest of its budget): those fits are not charged again, and they must draw
    from ``rng``.
    """
    session = _sessions().get(id(owner))
    if session is None:  # pragma: no cover - only fits call this, inside their session
        return
    kind = (GuaranteeKind.EX_POST if ex_post else
            GuaranteeKind.PURE if delta == 0 else GuaranteeKind.APPROXIMATE)
    acct = active_accountant()
    if acct is not None:
        if epsilon is not None and not (epsilon > 0 and 0 <= delta < 1):
            raise ValueError(f"{session.name}: epsilon must be > 0 and delta in [0, 1), got "
                             f"{epsilon!r} and {delta!r}")
        if zcdp and rho is None and epsilon is not None:
            rho = zcdp_rho(epsilon, delta)
        if epsilon is None:
            raise BudgetError(
                f"{session.name}: an ex-post fit without a cap could lose more than the "
                f"remaining budget (epsilon {acct.remaining[0]:.4g}); set max_epsilon to at "
                "most that. Refused before any noise.")
        session.label = (f"{session.name}.fit (" + ("max_epsilon" if ex_post else "epsilon")
                         + f" {epsilon:g}" + (f", delta {delta:.3g}" if delta else "") + ")")
        cost = acct._declared_cost(epsilon, delta, None if ex_post else rho, neighbouring)
        if ex_post:
            cost = _Cost(cost.epsilon, cost.delta, None)
        try:
            session.token = acct._reserve(cost, session.label)
        except BudgetError:
            module = _refitter()
            if module is not None and _error_score() != "raise":
                warnings.warn(f"{session.label} was refused by the active BudgetAccountant "
                              f"inside scikit-learn ({module}); if that code skips failed "
                              "fits, its result was chosen among the fits the budget allowed",
                              PrivacyWarning, stacklevel=3)
            raise
        session.accountant = acct
    session.rng, session.rng_state = rng, _rng_state(rng)
    session.covers_inner = bool(covers_inner)
    session.declared = _Declared(math.inf if epsilon is None else float(epsilon), float(delta),
                                 None if ex_post else rho, kind, neighbouring)


# --- scikit-learn's model selection -------------------------------------------------------
#: scikit-learn modules whose code clones an estimator to fit it again and again on the same
#: records (searches, cross-validation, feature selection by CV, calibration, ensembles).
_REFITTERS = ("sklearn.model_selection", "sklearn.feature_selection", "sklearn.calibration",
              "sklearn.multiclass", "sklearn.multioutput", "sklearn.ensemble")

REFIT_WARNING = (
    "{name} is being cloned by scikit-learn ({module}) to be fitted repeatedly: every fit of a "
    "clone is a separate private release on the same or overlapping records, so the privacy "
    "loss of the whole search or cross-validation is the SUM of the fits' epsilons (and "
    "deltas), not the epsilon of one fit. Account for it with "
    "oracledp.privacy.BudgetAccountant (`with BudgetAccountant(total_epsilon) as acct:`), which "
    "sums the fits and refuses any beyond the total.")


SEARCH_ERROR = (
    "{name} is being cloned by scikit-learn ({module}) under an active BudgetAccountant with "
    "error_score={error_score!r}: scikit-learn would record a fit the budget refuses as a "
    "failed fit and carry on, so the search would quietly choose among the fits the budget "
    "allowed. Pass error_score='raise': a refusal then stops the search (before the refused "
    "fit draws any noise; the fits already made stay charged). Refused before any fit.")


def _error_score() -> Any:
    """The ``error_score`` of the scikit-learn model-selection call on the stack (a search's
    attribute or cross-validation's argument), None if there is none."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if isinstance(name, str) and name.startswith("sklearn.model_selection"):
            local = frame.f_locals
            if "error_score" in local:
                return local["error_score"]
            owner = local.get("self")
            if owner is not None and hasattr(owner, "error_score"):
                return owner.error_score
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _refitter() -> str | None:
    """The scikit-learn refitting module on the call stack, if any."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if isinstance(name, str) and name.startswith(_REFITTERS):
            return name
        frame = frame.f_back  # type: ignore[assignment]
    return None


def note_clone(original: object, clone: object) -> None:
    """Called when scikit-learn clones a private estimator.

    Inside scikit-learn's model selection (and other refitting meta-estimators): with an
    active accountant the clone is marked with this process's id (so that a fit in another
    process is refused); without one a :class:`~oracledp._errors.PrivacyWarning` says that
    the fits add up.
    """
    module = _refitter()
    if module is None:
        return
    if active_accountant() is not None:
        error_score = _error_score()
        if error_score is not None and not (isinstance(error_score, str)
                                            and error_score == "raise"):
            raise BudgetError(SEARCH_ERROR.format(name=type(original).__name__, module=module,
                                                  error_score=error_score))
        object.__setattr__(clone, _CLONE_MARK, os.getpid())
        return
    warnings.warn(REFIT_WARNING.format(name=type(original).__name__, module=module),
                  PrivacyWarning, stacklevel=4)
