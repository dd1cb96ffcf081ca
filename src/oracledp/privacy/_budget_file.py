"""The command line's privacy ledger: ``oracledp fit --budget FILE``.

``FILE`` is a JSON object the user starts as ``{"total_epsilon": E}`` (and ``"total_delta"``
for models with a delta).  Every release ``fit`` makes appends its spend to ``"spends"``;
the spends add up by basic composition, and a fit whose declared budget would exceed what
remains is refused before the data file is read and before any noise.  The budget is per
person: each spend is the release's guarantee for the schema's ``records_per_person``
records (group privacy), the same rules as :class:`oracledp.privacy.BudgetAccountant`
(``docs/proofs/budget-accountant.md``):

* the declared budget is written **before** the data are read (``"status": "reserved ..."``),
  so a crash or an interrupt after the fit started leaves it charged;
* a fit refused before its mechanism drew anything removes that entry again;
* a fit that ends updates it: the release's guarantee (Accuracy First: its realised ex-post
  loss, after a pre-check with its cap ``--max-epsilon``), or, when it failed after its
  mechanism started, the declared budget (Accuracy First's refusal: its own ex-post loss).

Every write replaces the file atomically (a temporary file in the same directory, then
``os.replace``), under an advisory lock on ``FILE.lock`` so that two fits sharing a budget
cannot both take its last part.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracledp.privacy._accountant import RTOL
from oracledp.privacy._group import group_loss

__all__ = ["BudgetFileError", "Ledger", "read_ledger"]

_TOP_KEYS = frozenset({"total_epsilon", "total_delta", "spends", "note"})
STARTED = "reserved: the fit started or was interrupted; its declared budget is charged"


class BudgetFileError(ValueError):
    """The budget file cannot be used (unreadable, not JSON, or not a budget)."""


def _number(v: Any, what: str, *, lo: float, hi: float, lo_open: bool) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise BudgetFileError(f"{what} must be a number, got {json.dumps(v)[:40]}")
    x = float(v)
    if not math.isfinite(x) or x < lo or (lo_open and x == lo) or x >= hi:
        interval = f"{'(' if lo_open else '['}{lo:g}, {hi:g})"
        raise BudgetFileError(f"{what} must be a finite number in {interval}, got {v!r}")
    return x


@dataclass
class Ledger:
    """A parsed budget file: the totals and the spends (each a JSON object)."""

    path: Path
    total_epsilon: float
    total_delta: float
    spends: list[dict[str, Any]] = field(default_factory=list)
    note: Any = None

    @property
    def spent(self) -> tuple[float, float]:
        """``(sum epsilon, sum delta)`` of every spend (basic composition)."""
        return (math.fsum(s["epsilon"] for s in self.spends),
                math.fsum(s["delta"] for s in self.spends))

    @property
    def remaining(self) -> tuple[float, float]:
        eps, delta = self.spent
        return max(0.0, self.total_epsilon - eps), max(0.0, self.total_delta - delta)

    def refusal(self, epsilon: float, delta: float) -> str | None:
        """Why a spend of ``(epsilon, delta)`` does not fit (None if it does)."""
        eps_spent, delta_spent = self.spent
        if (eps_spent + epsilon <= self.total_epsilon * (1.0 + RTOL)
                and delta_spent + delta <= self.total_delta * (1.0 + RTOL)):
            return None
        left_eps, left_delta = self.remaining
        return (f"this fit would spend epsilon {epsilon:.4g}, delta {delta:.3g} but only "
                f"epsilon {left_eps:.4g}, delta {left_delta:.3g} of the total "
                f"({self.total_epsilon:g}, {self.total_delta:g}) remain ({len(self.spends)} "
                "release(s) recorded)")

    def to_json(self) -> str:
        doc: dict[str, Any] = {"total_epsilon": self.total_epsilon,
                               "total_delta": self.total_delta}
        if self.note is not None:
            doc["note"] = self.note
        doc["spends"] = self.spends
        return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def _parse(path: Path, text: str) -> Ledger:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise BudgetFileError(f"not valid JSON ({exc}); start it as "
                              "{\"total_epsilon\": 1.0}") from None
    if not isinstance(doc, dict):
        raise BudgetFileError("a budget file is a JSON object such as {\"total_epsilon\": 1.0}")
    extra = sorted(set(doc) - _TOP_KEYS)
    if extra:
        raise BudgetFileError(f"unknown keys {extra} (a budget has total_epsilon, total_delta, "
                              "spends and an optional note)")
    if "total_epsilon" not in doc:
        raise BudgetFileError("it has no \"total_epsilon\" (start it as "
                              "{\"total_epsilon\": 1.0}, and \"total_delta\" for models with a "
                              "delta)")
    total_eps = _number(doc["total_epsilon"], "total_epsilon", lo=0.0, hi=math.inf,
                        lo_open=True)
    total_delta = _number(doc.get("total_delta", 0.0), "total_delta", lo=0.0, hi=1.0,
                          lo_open=False)
    spends = doc.get("spends", [])
    if not isinstance(spends, list):
        raise BudgetFileError("\"spends\" must be a list (the releases recorded so far)")
    for i, s in enumerate(spends):
        if not isinstance(s, dict) or "epsilon" not in s or "delta" not in s:
            raise BudgetFileError(f"spends[{i}] must be an object with \"epsilon\" and "
                                  "\"delta\" (what the release was charged)")
        _number(s["epsilon"], f"spends[{i}].epsilon", lo=0.0, hi=math.inf, lo_open=False)
        _number(s["delta"], f"spends[{i}].delta", lo=0.0, hi=math.inf, lo_open=False)
    return Ledger(path, total_eps, total_delta, list(spends), doc.get("note"))


def read_ledger(path: Path) -> Ledger:
    """The budget file at ``path``, checked (BudgetFileError, one message, otherwise)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BudgetFileError("no such file; create it with your total budget, e.g. "
                              "{\"total_epsilon\": 1.0} (and \"total_delta\": 1e-6 for models "
                              "with a delta)") from None
    except UnicodeDecodeError:
        raise BudgetFileError("not UTF-8 text") from None
    except OSError as exc:
        raise BudgetFileError(f"cannot read it ({exc.strerror})") from None
    return _parse(Path(path), text)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An advisory lock on ``path.lock`` (none where ``fcntl`` does not exist)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    lock = path.with_name(path.name + ".lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise BudgetFileError(f"cannot lock it ({exc.strerror})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _write(ledger: Ledger) -> None:
    """Replace the file atomically."""
    path = ledger.path
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(ledger.to_json())
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def per_person(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """A per-record loss charged for ``k`` records per person (group privacy); BudgetFileError
    when the person-level statement would be vacuous (delta >= 1)."""
    eps_k, delta_k = group_loss(epsilon, delta, k)
    if not delta_k < 1.0:
        raise BudgetFileError(f"with records_per_person = {k} the per-person guarantee of "
                              f"({epsilon:g}, {delta:.3g})-DP would be vacuous (delta >= 1)")
    return eps_k, delta_k


def reserve(path: Path, entry: dict[str, Any]) -> str:
    """Append ``entry`` (its ``epsilon``/``delta`` the declared per-person budget) if it fits;
    returns its id.  BudgetFileError (nothing written) if it does not fit."""
    with _locked(path):
        ledger = read_ledger(path)
        why = ledger.refusal(entry["epsilon"], entry["delta"])
        if why is not None:
            raise BudgetFileError(f"privacy budget exceeded: {why}")
        entry = {"id": uuid.uuid4().hex, "date": _now(), **entry, "status": STARTED}
        ledger.spends.append(entry)
        _write(ledger)
        return str(entry["id"])


def update(path: Path, entry_id: str, **fields: Any) -> Ledger:
    """Set ``fields`` on the entry ``entry_id`` (kept as reserved if it has gone: a hand edit)."""
    with _locked(path):
        ledger = read_ledger(path)
        for s in ledger.spends:
            if s.get("id") == entry_id:
                s.update(fields)
                s["date"] = _now()
                break
        _write(ledger)
        return ledger


def cancel(path: Path, entry_id: str) -> None:
    """Remove the entry ``entry_id``: its fit was refused before its mechanism drew anything."""
    with _locked(path):
        ledger = read_ledger(path)
        ledger.spends = [s for s in ledger.spends if s.get("id") != entry_id]
        _write(ledger)


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
