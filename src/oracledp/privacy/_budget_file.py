"""A budget in a file: the saved form of one :class:`~oracledp.privacy.BudgetAccountant`.

``oracledp fit --budget FILE`` and :func:`open_budget_file` keep a session's budget in a JSON
file, the accountant's :meth:`~oracledp.privacy.BudgetAccountant.to_dict`.  A person starts it
as ``{"total_epsilon": E}`` (and ``"total_delta"`` for releases with a delta); every rule
(basic or zCDP composition, refusals, what a release is charged) is the accountant's own.

**One ledger, whatever path reaches it.**  A symbolic link is followed to the file it names,
and the lock and the write act on that file, so ``link.json`` and the real file are one
ledger.  A file with several names (hard links) is refused: replacing it atomically would
give each name its own copy, and each copy could spend the whole budget.  Anything but a
regular file (a directory, a pipe, a device) is refused, and so is a file larger than the
strict reader's cap (:mod:`oracledp._jsonfile`: hostile numbers and nesting are one error).

**Every change is one locked read-modify-write**: an advisory lock on the directory that
holds the real file (a lock file could be deleted while held), then the whole file is read,
changed and replaced atomically (a temporary file in the same
directory, ``fsync``, ``os.replace``, the original's permission bits).  Two processes that
share a budget cannot both take its last part.

The command line books a fit's declared budget (per person, for the schema's
``records_per_person``) before it reads the data, so a crash or an interrupt after the fit
started leaves it charged; settles it with the release's own charge when the fit ends (the
declared budget if it failed after its mechanism drew noise); and removes it when the fit was
refused before any noise.  Proof that this keeps every session within its total:
``docs/proofs/budget-accountant.md``.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from oracledp import _jsonfile
from oracledp._errors import BudgetError
from oracledp.privacy._budget import RESERVED, BudgetAccountant
from oracledp.privacy._group import group_loss
from oracledp.privacy._guarantees import PrivacyGuarantee

__all__ = ["BudgetFileError", "open_budget_file", "read_budget_file"]

START = ("create it with your total budget, e.g. {\"total_epsilon\": 1.0} (and "
         "\"total_delta\": 1e-6 for releases with a delta)")


_LOCAL = threading.local()


def _held() -> set[str]:
    """The budget files this thread holds open (opening one again would wait for itself;
    other threads wait for the lock like other processes)."""
    held: set[str] | None = getattr(_LOCAL, "held", None)
    if held is None:
        held = set()
        _LOCAL.held = held
    return held



class BudgetFileError(ValueError):
    """The budget file cannot be used (missing, unreadable, not a budget, or linked)."""


def _real_file(path: str | Path) -> Path:
    """The regular file ``path`` names, symbolic links followed; refused if it has several
    names (hard links) or is not a regular file."""
    real = Path(os.path.realpath(path))
    try:
        st = os.stat(real)
    except FileNotFoundError:
        raise BudgetFileError(f"no such file; {START}") from None
    except OSError as exc:
        raise BudgetFileError(f"cannot read it ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise BudgetFileError("not a regular file (a budget is a JSON file)")
    if st.st_nlink > 1:
        raise BudgetFileError(
            "the file has other names (hard links); a budget must have one name, or its "
            "copies could each spend the whole total. Keep one name, and reach it from "
            "elsewhere through a symbolic link (ln -s)")
    return real


def _load(real: Path) -> BudgetAccountant:
    try:
        text = _jsonfile.read_text(real)
        return BudgetAccountant.from_dict(_jsonfile.loads(text))
    except OSError as exc:
        raise BudgetFileError(f"cannot read it ({exc.strerror})") from None
    except (ValueError, TypeError) as exc:
        raise BudgetFileError(str(exc)) from None


def read_budget_file(path: str | Path) -> BudgetAccountant:
    """The accountant saved in ``path``, checked (BudgetFileError, one message, otherwise);
    not locked and not activated: to look, not to spend."""
    return _load(_real_file(path))


@contextlib.contextmanager
def _locked(real: Path) -> Iterator[None]:
    """An advisory lock on the directory that holds ``real`` (none where ``fcntl`` does not
    exist).  Not on the file, which each write replaces, nor on a lock file, which could be
    deleted while held: the directory stays the same inode while the ledger is in it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    key = str(real.parent)
    held = _held()
    if key in held:  # this thread would wait for itself for ever
        raise BudgetFileError("a budget file in this directory is already open here (a budget "
                              "file is opened once: spend from the accountant already open)")
    try:
        fd = os.open(real.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise BudgetFileError(f"cannot lock its directory ({exc.strerror})") from None
    held.add(key)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        held.discard(key)
        os.close(fd)  # closing releases the lock


def _write(real: Path, acct: BudgetAccountant) -> None:
    """Replace ``real`` atomically with the accountant's saved form."""
    import json

    text = json.dumps(acct.to_dict(), indent=2, allow_nan=False) + "\n"
    mode = stat.S_IMODE(os.stat(real).st_mode)
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def open_budget_file(path: str | Path, *, activate: bool = True
                     ) -> Iterator[BudgetAccountant]:
    """The accountant saved in the budget file ``path``, locked for the block and saved back
    as each fit in it books, settles or drops its budget, and at its end if anything changed
    (also when the block raises: what was charged stays charged).  A process killed inside
    the block leaves every fit that had started charged its declared budget.  Opening the
    same file again inside the block is refused (BudgetFileError).

    With ``activate=True`` (default) the accountant is active in the block, so every fit
    reports to it (refused before any noise beyond the total, charged otherwise).  The lock
    is held for the whole block: ``oracledp fit --budget`` on the same file waits for it.

    >>> import json, tempfile, pathlib
    >>> from oracledp.privacy import open_budget_file
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "budget.json"
    >>> _ = path.write_text('{"total_epsilon": 1.0}')
    >>> with open_budget_file(path) as acct:
    ...     acct.total
    (1.0, 0.0)
    """
    real = _real_file(path)
    with _locked(real):
        if _real_file(path) != real:  # a link retargeted between the lock and the read
            raise BudgetFileError("its path changed while it was being opened (a symbolic "
                                  "link was retargeted); try again")
        acct = _load(real)
        before = acct.to_dict()
        # saved as each fit books, settles or drops its budget: a process killed inside the
        # block leaves every reservation charged (fits still running are saved as reserved)
        acct._on_change = lambda: _write(real, acct)
        try:
            if activate:
                with acct:
                    yield acct
            else:
                yield acct
        finally:
            acct._on_change = None
            if acct.to_dict() != before:  # a refusal or a look leaves the file as it was
                _write(real, acct)


# --- the command line's protocol ------------------------------------------------------------
def per_person(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """A per-record loss charged for ``k`` records per person (group privacy); BudgetFileError
    when the person-level statement would be vacuous (delta >= 1)."""
    eps_k, delta_k = group_loss(epsilon, delta, k)
    if not delta_k < 1.0:
        raise BudgetFileError(f"with records_per_person = {k} the per-person guarantee of "
                              f"({epsilon:g}, {delta:.3g})-DP would be vacuous (delta >= 1)")
    return eps_k, delta_k


def records_per_person(path: Path) -> int:
    """The budget file's records per person (its accountant's group size)."""
    return read_budget_file(path).records_per_person


def book(path: Path, epsilon: float, delta: float, rho: float | None, *, label: str,
         declared: PrivacyGuarantee, details: dict[str, Any]) -> str:
    """Charge the declared per-person ``(epsilon, delta)`` and ``rho`` (None: not a zCDP
    statement) if they fit; the charge's id.  BudgetFileError (nothing written) otherwise."""
    with open_budget_file(path, activate=False) as acct:
        try:
            return acct._book(epsilon, delta, rho, label=label, guarantee=declared,
                              status=RESERVED, details=details).id
        except BudgetError as exc:
            raise BudgetFileError(str(exc)) from None


def settle(path: Path, charge_id: str, *, epsilon: float, delta: float, rho: float | None,
           guarantee: PrivacyGuarantee | None, status: str) -> BudgetAccountant:
    """Set what charge ``charge_id`` charges (kept as booked if it has gone: a hand edit)."""
    with open_budget_file(path, activate=False) as acct:
        acct._rebook(charge_id, epsilon=epsilon, delta=delta, rho=rho, guarantee=guarantee,
                     status=status)
        return acct


def keep(path: Path, charge_id: str, status: str) -> BudgetAccountant:
    """Keep charge ``charge_id`` at its declared budget, with ``status``."""
    with open_budget_file(path, activate=False) as acct:
        c = next((c for c in acct.spends if c.id == charge_id), None)
        if c is not None:
            acct._rebook(charge_id, epsilon=c.epsilon, delta=c.delta, rho=c.rho,
                         guarantee=c.guarantee, status=status)
        return acct


def cancel(path: Path, charge_id: str) -> None:
    """Remove charge ``charge_id``: its fit was refused before its mechanism drew anything."""
    with open_budget_file(path, activate=False) as acct:
        acct._unbook(charge_id)

