"""The budget accountant: one privacy budget for a whole session of releases.

Every release of oracledp states its own guarantee; nothing in a single fit knows how many
other fits ran on the same records.  A :class:`BudgetAccountant` does: while it is active,
every estimator's ``fit`` and every synthesizer's ``fit`` report to it, and it

* **refuses a fit before any noise is drawn** (:class:`~oracledp._errors.BudgetError`) when
  the fit's declared ``(epsilon, delta)`` -- known from its public parameters, and ``n`` for
  ``delta=None`` -- would take the session beyond its total;
* **charges** every release once its mechanism has started: the release's own guarantee
  when the fit returns, the *declared* budget when the fit fails after its mechanism started
  (an oracle that did not certify, an interrupt: noise was drawn and the failure itself is an
  observable, data-dependent event), and the ex-post loss of an Accuracy First refusal
  (:class:`~oracledp._errors.NoHaltError`, its ``epsilon_refusal``).  A fit refused before
  its mechanism started (bad parameters, data outside the public bounds, this accountant's
  own refusal) drew no noise and is not charged;
* composes the charges by **basic composition** (``composition="basic"``: epsilons add,
  deltas add; Dwork-Roth 2014, Thm 3.16) or by **zCDP** (``composition="zcdp"``: only pure
  releases, ``rho = eps^2/2``, and releases accounted in zCDP by their mechanism, ``rho``
  adds; Bun-Steinke 2016, Prop. 1.4, Lemma 1.7, converted to ``(epsilon, delta)`` by
  Prop. 1.3).  A zCDP accountant refuses any other release: an ``(epsilon, delta)``
  statement cannot be turned back into zCDP.

**Ex-post releases** (Accuracy First) report their loss only after the release: the
accountant charges the realised loss afterwards, so it can only refuse the *next* release.
To keep the session within its total, such a fit is pre-checked with its public cap
``max_epsilon`` (no run of it, released or refused, loses more) and refused when the cap
exceeds what remains; a fit without a cap is refused while an accountant is active.  With
that pre-check, charging realised ex-post losses keeps the whole session
``(total_epsilon, total_delta)``-DP: ``docs/proofs/budget-accountant.md``.

**Releases without a guarantee** (``guarantee.holds`` False: ``allow_uncertified=True``,
``allow_no_halt=True`` releasing theta*, ``calibration="paper"``) and releases with
non-private diagnostics (``keep_diagnostics=True``) are charged an infinite epsilon: nothing
bounds what they revealed, so the budget is exhausted and every later fit is refused.

**Neighbours and persons.**  The accountant states its total for replace-one neighbours.  A
release stated for add/remove neighbours (MST or AIM with ``neighbouring="add-remove"``) is
charged by group privacy of size 2 (a replacement is a removal then an addition).  With
``records_per_person=k`` every charge is the guarantee for a person's ``k`` records
(:func:`~oracledp.privacy.group_privacy`): the total is then a budget per person.

**Which accountant.**  ``with BudgetAccountant(...) as acct:`` activates ``acct`` for the
block (blocks nest; the innermost wins); :func:`set_default_accountant` sets one for the
whole process outside any block.  Activation is process-wide, so fits in other threads of
the process (the threading backend of joblib) report to it; fits in *other processes* cannot:
scikit-learn's searches with a process backend (``n_jobs > 1``) refuse to fit a clone made
while an accountant was active (:class:`~oracledp._errors.BudgetError`), rather than release
uncharged.  Under an accountant, scikit-learn's searches and cross-validations must pass
``error_score="raise"`` (refused when they clone the estimator otherwise): with the default a
fit the budget refuses is recorded as a failed fit, and the search quietly chooses among the
fits the budget allowed.  The learner functions (:func:`oracledp.opdisc`, :func:`oracledp.mwem`...) do not
report: call :meth:`BudgetAccountant.check` before and :meth:`BudgetAccountant.charge` after.
How a fit reports (its declared budget, its session, scikit-learn's clones) is in
:mod:`oracledp.privacy._accountant`.

Comparisons allow a relative ``1e-9`` for floating-point sums (``0.1 + 0.2`` fits in a total
of ``0.3``), far below the idealized numerics every guarantee is stated under.
"""

from __future__ import annotations

import datetime as _dt
import math
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from oracledp._errors import BudgetError
from oracledp._validation import check_epsilon, check_open_unit
from oracledp.privacy._composition import zcdp_epsilon, zcdp_rho
from oracledp.privacy._group import check_records_per_person, group_loss, group_rho
from oracledp.privacy._guarantees import (
    ADD_REMOVE,
    REPLACE_ONE,
    GuaranteeKind,
    PrivacyGuarantee,
)

__all__ = ["BudgetAccountant", "Charge", "active_accountant", "set_default_accountant"]

#: Relative slack of every budget comparison (floating-point sums).
RTOL = 1e-9

_COMPOSITIONS = ("basic", "zcdp")


@dataclass(frozen=True)
class Charge:
    """One release charged to a :class:`BudgetAccountant`.

    Attributes
    ----------
    label:
        What ran (the estimator or synthesizer and its declared budget, or the caller's label).
    guarantee:
        The release's own (per-record) guarantee; for a fit that failed after its mechanism
        started, the declared statement it was charged.
    epsilon, delta:
        What was charged, in the accountant's terms (replace-one, per person with
        ``records_per_person``); ``epsilon = inf`` for a release without a guarantee.
    rho:
        The zCDP charged (``composition="zcdp"``), else None.
    status:
        ``"released"``, or how the fit ended after its mechanism started.
    id, date:
        The charge's identifier and when it was made (UTC, ISO 8601).
    details:
        What the caller recorded with it (the command line: the model, the data and output
        paths, the records per person); saved with the charge.

    A charge read from a saved ledger (:meth:`BudgetAccountant.from_dict`) that a person
    added by hand, ``{"epsilon": ..., "delta": ...}``, has ``guarantee`` None.
    """

    label: str
    guarantee: PrivacyGuarantee | None
    epsilon: float
    delta: float
    rho: float | None
    status: str
    id: str = ""
    date: str = ""
    details: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_dict(self) -> dict[str, Any]:
        """The charge as JSON-ready data (an unbounded epsilon as the string ``"inf"``)."""
        g = self.guarantee
        d: dict[str, Any] = {"id": self.id, "date": self.date, "label": self.label}
        if g is not None:
            d["kind"] = str(g.kind)
        d.update({"epsilon": _json_loss(self.epsilon), "delta": self.delta})
        if self.rho is not None:
            d["rho"] = _json_loss(self.rho)
        d["status"] = self.status
        d.update(self.details)
        if g is not None:
            d["guarantee"] = g.to_dict()
        return d


@dataclass(frozen=True)
class _Cost:
    epsilon: float
    delta: float
    rho: float | None


#: The status of a charge booked before its fit ran (or of a fit still running when saved).
RESERVED = "reserved: the fit started or was interrupted; its declared budget is charged"
_SAVED_KEYS = frozenset({"total_epsilon", "total_delta", "composition", "records_per_person",
                         "note", "spends"})
_CHARGE_KEYS = frozenset({"id", "date", "label", "kind", "epsilon", "delta", "rho", "status",
                          "guarantee"})


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _json_loss(x: float) -> float | str:
    return x if math.isfinite(x) else "inf"


def _loss(v: Any, what: str, *, lo_open: bool = False, hi: float = math.inf,
          unbounded: bool = False) -> float:
    """A saved loss: a finite JSON number in its range (``"inf"`` where ``unbounded``)."""
    if unbounded and v == "inf":
        return math.inf
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{what} must be a number, got {type(v).__name__}")
    try:
        x = float(v)
    except OverflowError:  # pragma: no cover - the strict reader refuses such integers
        raise ValueError(f"{what} must be a finite number") from None
    if not math.isfinite(x) or x < 0 or (lo_open and x == 0) or x >= hi:
        interval = f"{'(' if lo_open else '['}0, {hi:g})"
        raise ValueError(f"{what} must be a finite number in {interval}")
    return x


def _kind_of(c: Charge) -> str | None:
    """A charge's kind: its guarantee's, else the one written by hand."""
    if c.guarantee is not None:
        return str(c.guarantee.kind)
    kind = c.details.get("kind")
    return kind if isinstance(kind, str) else None


def _charge_from_dict(s: Any, what: str) -> Charge:
    if not isinstance(s, dict) or "epsilon" not in s or "delta" not in s:
        raise ValueError(f"{what} must be an object with \"epsilon\" and \"delta\" (what the "
                         "release was charged)")
    epsilon = _loss(s["epsilon"], f"{what}.epsilon", unbounded=True)
    delta = _loss(s["delta"], f"{what}.delta", hi=math.nextafter(1.0, 2.0))  # 1: exhausted
    rho = None if s.get("rho") is None else _loss(s["rho"], f"{what}.rho", unbounded=True)
    g = None
    if s.get("guarantee") is not None:
        g = PrivacyGuarantee.from_dict(s["guarantee"], f"{what}.guarantee")
    for key in ("id", "date", "label", "status"):
        if not isinstance(s.get(key, ""), str):
            raise ValueError(f"{what}.{key} must be a string")
    details = {k: v for k, v in s.items() if k not in _CHARGE_KEYS}
    if g is None and "kind" in s:
        details["kind"] = s["kind"]  # kept as written: nothing derives it
    elif g is not None and s.get("kind", str(g.kind)) != str(g.kind):
        raise ValueError(f"{what}.kind is not its guarantee's kind")
    return Charge(s.get("label", "recorded by hand"), g, epsilon, delta, rho,
                  s.get("status", "recorded by hand"), id=s.get("id", ""),
                  date=s.get("date", ""), details=details)


class BudgetAccountant:
    """A privacy budget for a session: refuses releases beyond it, charges every release.

    Parameters
    ----------
    total_epsilon : float
        The session's total epsilon (finite, > 0).
    total_delta : float, default=0.0
        The session's total delta, in [0, 1); 0 admits only pure and ex-post releases
        (``composition="basic"``).  ``composition="zcdp"`` needs ``total_delta > 0``.
    composition : {"basic", "zcdp"}, default="basic"
        ``"basic"``: epsilons and deltas add.  ``"zcdp"``: zCDP ``rho`` adds and the session
        is ``(zcdp_epsilon(rho, total_delta), total_delta)``-DP; only pure releases and
        releases their mechanism accounts in zCDP (OracleQueryPGM, MST, AIM, OracleQuery with
        zCDP composition) are accepted.
    records_per_person : int, default=1
        Charge every release for a person's ``k`` records (group privacy), so that the
        total is a budget per person.

    Examples
    --------
    >>> import numpy as np
    >>> from oracledp import BudgetError
    >>> from oracledp.privacy import BudgetAccountant
    >>> from oracledp.synth import Domain, IndependentMarginalsSynthesizer
    >>> dom = Domain(("a", "b"), ((0, 1), (0, 1, 2)))
    >>> codes = np.array([[0, 1], [1, 2], [1, 0], [0, 1]])
    >>> with BudgetAccountant(1.0) as acct:
    ...     _ = IndependentMarginalsSynthesizer(0.6, random_state=0).fit(codes, dom)
    ...     try:
    ...         IndependentMarginalsSynthesizer(0.6, random_state=1).fit(codes, dom)
    ...     except BudgetError:
    ...         print("refused before any noise")
    refused before any noise
    >>> acct.spent, [c.label for c in acct.spends]
    ((0.6, 0.0), ['IndependentMarginalsSynthesizer.fit (epsilon 0.6)'])
    """

    def __init__(self, total_epsilon: float, total_delta: float = 0.0,
                 composition: str = "basic", *, records_per_person: int = 1) -> None:
        self._total_epsilon = check_epsilon(total_epsilon, "total_epsilon")
        if total_delta != 0:
            check_open_unit(total_delta, "total_delta", interval="[0, 1)")
        self._total_delta = float(total_delta)
        if composition not in _COMPOSITIONS:
            raise ValueError(f"composition must be one of {', '.join(_COMPOSITIONS)}, got "
                             f"{composition!r}")
        if composition == "zcdp" and self._total_delta == 0:
            raise ValueError("composition='zcdp' needs total_delta > 0 (zCDP converts to "
                             "(epsilon, delta)-DP at that delta)")
        self._composition = composition
        self._k = check_records_per_person(records_per_person)
        self._rho_total = (zcdp_rho(self._total_epsilon, self._total_delta)
                           if composition == "zcdp" else math.inf)
        self._charges: list[Charge] = []
        #: A free note kept with the saved form (:meth:`to_dict`).
        self.note: Any = None
        self._on_change: Callable[[], None] | None = None
        self._pending: dict[int, _Cost] = {}
        self._next_token = 0
        self._lock = threading.RLock()

    # --- state ------------------------------------------------------------------------------
    @property
    def composition(self) -> str:
        return self._composition

    @property
    def records_per_person(self) -> int:
        return self._k

    @property
    def total(self) -> tuple[float, float]:
        """``(total_epsilon, total_delta)``."""
        return self._total_epsilon, self._total_delta

    @property
    def spends(self) -> tuple[Charge, ...]:
        """Every release charged so far, in order."""
        with self._lock:
            return tuple(self._charges)

    def _costs(self) -> list[_Cost]:
        return [*(_Cost(c.epsilon, c.delta, c.rho) for c in self._charges),
                *self._pending.values()]

    @property
    def spent(self) -> tuple[float, float]:
        """The composed ``(epsilon, delta)`` of the charges (and of fits still running, at
        their declared budget).  zCDP: ``(zcdp_epsilon(rho, total_delta), total_delta)``."""
        with self._lock:
            costs = self._costs()
            if not costs:
                return 0.0, 0.0
            if self._composition == "zcdp":
                rho = math.fsum(c.rho if c.rho is not None else math.inf for c in costs)
                return zcdp_epsilon(rho, self._total_delta), self._total_delta
            return (math.fsum(c.epsilon for c in costs), math.fsum(c.delta for c in costs))

    @property
    def spent_rho(self) -> float:
        """The zCDP ``rho`` charged so far (``composition="zcdp"``; inf if a charge has none)."""
        with self._lock:
            return math.fsum(c.rho if c.rho is not None else math.inf for c in self._costs())

    @property
    def remaining(self) -> tuple[float, float]:
        """``total - spent`` (never below 0).  zCDP: the largest pure epsilon one more release
        may have, ``sqrt(2 (rho_total - rho_spent))``, and delta 0."""
        with self._lock:
            if self._composition == "zcdp":
                left = max(0.0, self._rho_total - self.spent_rho)
                return math.sqrt(2.0 * left), 0.0
            eps, delta = self.spent
            return max(0.0, self._total_epsilon - eps), max(0.0, self._total_delta - delta)

    # --- the rules --------------------------------------------------------------------------
    def _cost(self, epsilon: float, delta: float, rho: float | None,
              neighbouring: str) -> _Cost:
        """A statement in the accountant's terms: replace-one, per person."""
        if neighbouring == ADD_REMOVE:  # a replacement is a removal then an addition
            epsilon, delta = group_loss(epsilon, delta, 2)
            rho = None if rho is None else group_rho(rho, 2)
        elif neighbouring != REPLACE_ONE:
            raise BudgetError(f"the accountant composes replace-one (or add/remove) "
                              f"statements; this release is stated for {neighbouring!r}")
        epsilon, delta = group_loss(epsilon, delta, self._k)
        rho = None if rho is None else group_rho(rho, self._k)
        if not delta < 1.0:
            epsilon, delta = math.inf, 1.0
        return _Cost(epsilon, delta, rho)

    def _refusal(self, cost: _Cost, label: str) -> str | None:
        """Why ``cost`` does not fit (None if it does); the caller holds the lock."""
        if self._composition == "zcdp":
            if cost.rho is None:
                return (f"{label} is not a pure or zCDP release; a composition='zcdp' "
                        "accountant cannot compose it (use composition='basic')")
            left = self._rho_total - self.spent_rho
            if cost.rho > left * (1.0 + RTOL) or math.isinf(cost.rho):
                return (f"{label} would spend rho = {cost.rho:.4g} (zCDP) but only "
                        f"{max(left, 0.0):.4g} of rho = {self._rho_total:.4g} remains "
                        f"(total ({self._total_epsilon:g}, {self._total_delta:g}))")
            return None
        spent_eps, spent_delta = self.spent
        eps_ok = spent_eps + cost.epsilon <= self._total_epsilon * (1.0 + RTOL)
        delta_ok = spent_delta + cost.delta <= self._total_delta * (1.0 + RTOL)
        if eps_ok and delta_ok and math.isfinite(cost.epsilon):
            return None
        who = " per person" if self._k > 1 else ""
        return (f"{label} would spend epsilon {cost.epsilon:.4g}, delta {cost.delta:.3g}{who} "
                f"but only epsilon {max(self._total_epsilon - spent_eps, 0.0):.4g}, delta "
                f"{max(self._total_delta - spent_delta, 0.0):.3g} of the total "
                f"({self._total_epsilon:g}, {self._total_delta:g}) remain "
                f"({len(self._charges)} release(s) charged)")

    def check(self, epsilon: float, delta: float = 0.0, *, rho: float | None = None,
              neighbouring: str = REPLACE_ONE, label: str = "this release") -> tuple[float, float]:
        """Raise BudgetError unless a release with this declared loss fits; else its cost.

        ``epsilon``, ``delta``: the release's declared per-record loss (for an ex-post
        release, its cap); ``rho``: its zCDP, if its mechanism accounts in zCDP (a pure
        release's ``eps^2 / 2`` is used when omitted and ``delta = 0``).  Returns what the
        release would be charged: ``(epsilon, delta)`` in the accountant's terms.  Reserves
        nothing: a fit reserves its declared budget itself.
        """
        with self._lock:
            cost = self._declared_cost(epsilon, delta, rho, neighbouring)
            why = self._refusal(cost, label)
            if why is not None:
                raise BudgetError(f"privacy budget exceeded: {why}; refused before any noise")
            return cost.epsilon, cost.delta

    def _declared_cost(self, epsilon: float, delta: float, rho: float | None,
                       neighbouring: str) -> _Cost:
        if rho is None and delta == 0 and math.isfinite(epsilon):
            rho = epsilon * epsilon / 2.0  # pure -> zCDP (Bun-Steinke 2016, Prop. 1.4)
        return self._cost(float(epsilon), float(delta), rho, neighbouring)

    def charge(self, guarantee: PrivacyGuarantee, *, label: str,
               rho: float | None = None, status: str = "released") -> Charge:
        """Record a release that happened (a learner function's result): its guarantee is
        charged as it is, even beyond the total (it was released); later releases are then
        refused.  Use :meth:`check` first to refuse it before it runs."""
        with self._lock:
            return self._record(label, guarantee, self._actual_cost(guarantee, rho), status)

    def _actual_cost(self, g: PrivacyGuarantee, rho: float | None) -> _Cost:
        if not g.holds or g.diagnostics_released:
            return _Cost(math.inf, 0.0, math.inf)
        if g.kind is GuaranteeKind.EX_POST:
            if g.delta > 0:
                return _Cost(math.inf, 0.0, math.inf)
            rho = None  # an ex-post loss is not a zCDP statement
        elif g.kind is GuaranteeKind.PURE and rho is None:
            rho = g.epsilon * g.epsilon / 2.0
        try:
            return self._cost(g.epsilon, g.delta, rho, g.neighbouring)
        except BudgetError:
            return _Cost(math.inf, 0.0, math.inf)

    def _record(self, label: str, guarantee: PrivacyGuarantee | None, cost: _Cost,
                status: str, details: dict[str, Any] | None = None) -> Charge:
        charge = Charge(label, guarantee, cost.epsilon, cost.delta,
                        cost.rho if self._composition == "zcdp" else None, status,
                        id=uuid.uuid4().hex, date=_now(), details=dict(details or {}))
        self._charges.append(charge)
        self._changed()
        return charge

    # --- charges made before and settled after a fit in another process (the saved ledger) -
    def _book(self, epsilon: float, delta: float, rho: float | None, *, label: str,
              guarantee: PrivacyGuarantee, status: str, details: dict[str, Any]) -> Charge:
        """Charge ``(epsilon, delta)`` and zCDP ``rho`` (None: no zCDP statement) now if they
        fit (BudgetError otherwise).  They are in the accountant's terms already (replace-one,
        per person: the caller applied its records per person, at least this accountant's):
        the command line books a fit's declared budget in the saved ledger before it reads
        the data, then settles or drops the charge (:meth:`_rebook`, :meth:`_unbook`)."""
        with self._lock:
            cost = _Cost(float(epsilon), float(delta), rho)
            why = self._refusal(cost, label)
            if why is not None:
                raise BudgetError(f"privacy budget exceeded: {why}")
            return self._record(label, guarantee, cost, status, details)

    def _rebook(self, charge_id: str, *, epsilon: float, delta: float, rho: float | None,
                guarantee: PrivacyGuarantee | None, status: str) -> Charge | None:
        """Replace what charge ``charge_id`` charges, in the accountant's terms (None if the
        charge is not there: a hand edit)."""
        with self._lock:
            for i, c in enumerate(self._charges):
                if c.id == charge_id:
                    self._charges[i] = replace(
                        c, epsilon=epsilon, delta=delta,
                        rho=rho if self._composition == "zcdp" else None,
                        guarantee=guarantee, status=status, date=_now())
                    self._changed()
                    return self._charges[i]
            return None

    def _unbook(self, charge_id: str) -> None:
        """Drop charge ``charge_id``: its fit was refused before its mechanism drew anything."""
        with self._lock:
            self._charges = [c for c in self._charges if c.id != charge_id]
            self._changed()

    def _changed(self) -> None:
        """Tell the file this accountant is saved in (if any) that its charges changed: a
        budget file is written as each fit books, settles or drops its budget, not only when
        its block ends (:func:`oracledp.privacy.open_budget_file`)."""
        if self._on_change is not None:
            self._on_change()

    # --- the saved form ---------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The accountant as JSON-ready data: its totals, rules and charges (fits still
        running are saved as charges of their declared budget).  :meth:`from_dict` reads it
        back; :func:`oracledp.privacy.open_budget_file` keeps it in a file."""
        with self._lock:
            doc: dict[str, Any] = {"total_epsilon": self._total_epsilon,
                                   "total_delta": self._total_delta}
            if self._composition != "basic":
                doc["composition"] = self._composition
            if self._k > 1:
                doc["records_per_person"] = self._k
            if self.note is not None:
                doc["note"] = self.note
            pending = [Charge("a fit still running", None, c.epsilon, c.delta, c.rho,
                              RESERVED, id=f"pending-{token}", date=_now())
                       for token, c in self._pending.items()]
            doc["spends"] = [c.to_dict() for c in (*self._charges, *pending)]
            return doc

    @classmethod
    def from_dict(cls, doc: Any) -> BudgetAccountant:
        """An accountant from its saved form (:meth:`to_dict`), checked strictly: ValueError
        with one message naming the first problem.  A person may start one by hand as
        ``{"total_epsilon": 1.0}`` (and ``"total_delta"``), and record a release made
        elsewhere as a spend ``{"epsilon": 0.5, "delta": 0}``.  Under ``"composition":
        "zcdp"`` a spend counts its ``"rho"``; one without a rho counts ``epsilon^2 / 2`` if
        it is pure (its guarantee's kind, or ``"kind": "pure"`` written with it) and exhausts
        the budget otherwise (nothing else converts to zCDP)."""
        if not isinstance(doc, dict):
            raise ValueError("a budget is a JSON object such as {\"total_epsilon\": 1.0}")
        extra = sorted(set(doc) - _SAVED_KEYS)
        if extra:
            raise ValueError(f"unknown keys {extra} (a budget has {', '.join(sorted(_SAVED_KEYS))})")
        if "total_epsilon" not in doc:
            raise ValueError("it has no \"total_epsilon\" (start it as {\"total_epsilon\": "
                             "1.0}, and \"total_delta\" for releases with a delta)")
        total_eps = _loss(doc["total_epsilon"], "total_epsilon", lo_open=True)
        total_delta = _loss(doc.get("total_delta", 0.0), "total_delta", hi=1.0)
        k = doc.get("records_per_person", 1)
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError("records_per_person must be an integer >= 1")
        composition = doc.get("composition", "basic")
        if composition not in _COMPOSITIONS:
            raise ValueError(f"composition must be one of {', '.join(_COMPOSITIONS)}")
        acct = cls(total_eps, total_delta, composition, records_per_person=k)
        acct.note = doc.get("note")
        spends = doc.get("spends", [])
        if not isinstance(spends, list):
            raise ValueError("\"spends\" must be a list (the releases recorded so far)")
        acct._charges = [_charge_from_dict(s, f"spends[{i}]") for i, s in enumerate(spends)]
        if composition == "zcdp":  # a pure charge without rho: eps^2 / 2; any other: none
            acct._charges = [replace(c, rho=c.epsilon * c.epsilon / 2.0)
                             if c.rho is None and _kind_of(c) == "pure" else c
                             for c in acct._charges]
        return acct

    # --- reservations (the fits' protocol) ----------------------------------------------------
    def _reserve(self, cost: _Cost, label: str) -> int:
        with self._lock:
            why = self._refusal(cost, label)
            if why is not None:
                raise BudgetError(f"privacy budget exceeded: {why}; refused before any noise "
                                  "was drawn")
            token = self._next_token
            self._next_token += 1
            self._pending[token] = cost
            self._changed()
            return token

    def _cancel(self, token: int) -> None:
        with self._lock:
            self._pending.pop(token, None)
            self._changed()

    def _settle(self, token: int, label: str, guarantee: PrivacyGuarantee,
                cost: _Cost, status: str) -> Charge:
        with self._lock:
            self._pending.pop(token, None)
            return self._record(label, guarantee, cost, status)

    # --- activation ---------------------------------------------------------------------------
    def __enter__(self) -> BudgetAccountant:
        with _STATE_LOCK:
            _STACK.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        with _STATE_LOCK:
            if not _STACK or _STACK[-1] is not self:
                raise RuntimeError("BudgetAccountant blocks must be exited in the reverse "
                                   "order of entry")
            _STACK.pop()

    def describe(self) -> str:
        """One line: total, spent, remaining, number of releases."""
        eps, delta = self.spent
        left_eps, left_delta = self.remaining
        who = f", per person of {self._k} records" if self._k > 1 else ""
        return (f"budget ({self._total_epsilon:g}, {self._total_delta:g}) by "
                f"{self._composition} composition{who}: spent ({eps:.4g}, {delta:.3g}) in "
                f"{len(self.spends)} release(s); remaining ({left_eps:.4g}, {left_delta:.3g})")

    def __repr__(self) -> str:
        extra = f", records_per_person={self._k}" if self._k > 1 else ""
        return (f"BudgetAccountant(total_epsilon={self._total_epsilon!r}, total_delta="
                f"{self._total_delta!r}, composition={self._composition!r}{extra})")


# --- which accountant is active -------------------------------------------------------------
_STATE_LOCK = threading.RLock()
_STACK: list[BudgetAccountant] = []
_DEFAULT: list[BudgetAccountant | None] = [None]


def set_default_accountant(accountant: BudgetAccountant | None) -> BudgetAccountant | None:
    """Make ``accountant`` the process-wide accountant outside ``with`` blocks (None: none);
    returns the previous default.

    >>> from oracledp.privacy import BudgetAccountant, active_accountant, set_default_accountant
    >>> previous = set_default_accountant(BudgetAccountant(2.0))
    >>> active_accountant()
    BudgetAccountant(total_epsilon=2.0, total_delta=0.0, composition='basic')
    >>> _ = set_default_accountant(previous)
    """
    if accountant is not None and not isinstance(accountant, BudgetAccountant):
        raise TypeError(f"accountant must be a BudgetAccountant or None, got "
                        f"{type(accountant).__name__}")
    with _STATE_LOCK:
        previous, _DEFAULT[0] = _DEFAULT[0], accountant
    return previous


def active_accountant() -> BudgetAccountant | None:
    """The accountant fits report to: the innermost ``with`` block's, else the default."""
    with _STATE_LOCK:
        return _STACK[-1] if _STACK else _DEFAULT[0]
