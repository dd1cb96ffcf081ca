"""``oracledp fit --budget FILE`` (and ``synth fit``): the declared per-person budget of a fit,
booked in the ledger before the data are read, then settled with what the release charged (or
cancelled if nothing was drawn), and the line that reports it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import typer

from oracledp._cli_table import (
    _fail,
    _warn,
)


def _declared(model: str, epsilon: float | None, delta: float | None,
              max_epsilon: float | None) -> tuple[float, float | None, str]:
    """The per-record ``(epsilon, delta, kind)`` a fit declares before it reads the data:
    accuracy-first its cap (ex-post), rspm pure, the others ``delta`` (None: ``1/n^2``)."""
    if model == "accuracy-first":
        assert max_epsilon is not None
        return max_epsilon, 0.0, "ex-post"
    assert epsilon is not None
    if model == "rspm":
        return epsilon, 0.0, "pure"
    return epsilon, delta, "approximate"


def _per_person_or_fail(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """The per-person loss for the schema's records_per_person (exit 2 if vacuous)."""
    from oracledp.privacy._budget_file import BudgetFileError, per_person

    try:
        return per_person(epsilon, delta, k)
    except BudgetFileError as exc:
        _fail(f"{exc}: lower --epsilon or --delta, or the schema's records_per_person; nothing "
              "was read or fitted")


def _delta_note(delta: float, n: int | None, k: int) -> str | None:
    """A caution when the per-person delta is not below 1 / (number of people): a mechanism
    may then expose someone's records outright with that probability (the usual choice is a
    delta far below it).  ``None`` when it is, or when ``n`` is not known."""
    if not n or not delta:
        return None
    people = n / k
    if delta < 1.0 / people:
        return None
    who = "record" if k == 1 else "person"
    return (f"delta {delta:.3g} per {who} is not below 1 / the number of {who}s: with that "
            f"probability a mechanism may reveal some {who}'s data outright; the usual choice "
            f"is a delta far below it (e.g. 1 / the square of the number of {who}s)")


#: A default delta (1/n^2) is said to be weak when it is not far below 1 / the number of
#: records (or people): at least this share of it, i.e. on 10 records or fewer.
_WEAK_DEFAULT_DELTA = 0.1


def _default_delta_note(delta: float, n: int | None, k: int) -> str | None:
    """The caution :func:`_delta_note` gives an explicit --delta, for the default 1/n^2 on a
    table so small that it is not far below 1 / the number of records (people): ``None``
    otherwise."""
    if not n or not delta or delta < _WEAK_DEFAULT_DELTA * k / n:
        return None
    who = "record" if k == 1 else "person"
    why = ("weak on so few records" if k == 1 else
           f"weak here: group privacy over {k} records per person multiplies it")
    return (f"delta {delta:.3g} per {who} comes from the default 1/n^2 (n the number of "
            f"records, at least 2), which is {why}: with that probability a mechanism may "
            f"reveal some {who}'s data outright; pass a smaller --delta (e.g. 1e-6: it adds "
            "noise, but a delta far below 1 / the number of records is the usual choice)")


def _persons(schema: Any, budget: Path | None) -> Any:
    """The schema with the records per person a fit under ``budget`` states and charges: the
    larger of the schema's and the budget file's ``records_per_person`` (the file's had
    raised the charge while the printed and saved guarantee kept the schema's)."""
    from dataclasses import replace

    k_file = 1 if budget is None else _read_budget(budget).records_per_person
    if k_file <= schema.records_per_person:
        return schema
    typer.echo(f"note: records per person {k_file}, the budget file's records_per_person (the "
               f"schema says {schema.records_per_person}): every guarantee below is stated, "
               "saved and charged per person for it", err=True)
    return replace(schema, records_per_person=k_file)


def _read_budget(budget: Path) -> Any:
    from oracledp.privacy._budget_file import BudgetFileError, read_budget_file

    try:
        return read_budget_file(budget)
    except BudgetFileError as exc:
        _fail(f"--budget {budget}: {exc}")


def _reserve_budget(budget: Path, model: str, declared: tuple[float, float | None, str],
                    k: int, data: Path, out: Path, *, zcdp: bool = False
                    ) -> tuple[tuple[str, float | None], Any]:
    """Check the declared budget against the ledger and book it there, before DATA is read.

    The charge is per person, for the larger of the schema's and the budget file's records
    per person (applied once).  ``zcdp``: the method accounts in zCDP (its rho is
    ``zcdp_rho(epsilon, delta)`` per record, ``k^2`` times that per person); a pure fit's rho
    is ``epsilon^2 / 2``; other releases have none, which a zCDP ledger refuses.  Returns the
    charge's id with the booked rho, and the accountant the fit reports to (its total is the
    booked budget, so the fit declares exactly what was booked)."""
    from oracledp.privacy import BudgetAccountant, PrivacyGuarantee, zcdp_rho
    from oracledp.privacy._budget_file import BudgetFileError, book
    from oracledp.privacy._group import group_rho

    eps, delta, kind = declared
    if delta is None:
        _fail(f"--budget needs --delta for --model {model}: its default 1/n^2 depends on the "
              "number of records, which is read only after the budget is checked; nothing was "
              "read or fitted")
    k = max(k, _read_budget(budget).records_per_person)
    eps_k, delta_k = _per_person_or_fail(eps, delta, k)
    rho = (eps_k * eps_k / 2.0 if kind == "pure" else
           group_rho(zcdp_rho(eps, delta), k) if zcdp else None)
    command = (f"oracledp synth fit --method {model.removeprefix('synth ')}"
               if model.startswith("synth ") else f"oracledp fit --model {model}")
    source = f"the declared budget of `{command}`"
    statement = (PrivacyGuarantee.ex_post(eps, source=source) if kind == "ex-post" else
                 PrivacyGuarantee.pure(eps, source=source) if delta == 0 else
                 PrivacyGuarantee.approximate(eps, delta, source=source))
    what = "max-epsilon" if kind == "ex-post" else "epsilon"
    label = f"{command} --{what} {eps:g}" + (f" --delta {delta:g}" if delta else "")
    details: dict[str, Any] = {
        "model": model, "records_per_person": k,
        **({"max_epsilon": eps} if kind == "ex-post" else {}),
        "data": str(data), "out": str(out)}
    try:
        charge_id = book(budget, eps_k, delta_k, rho, label=label, declared=statement,
                         details=details)
    except BudgetFileError as exc:
        _fail(f"--budget {budget}: {exc}; nothing was read, fitted or charged")
    except OSError as exc:
        _fail(f"--budget {budget}: cannot write it ({exc.strerror or exc}); nothing was read or "
              "fitted")
    return (charge_id, rho), BudgetAccountant(eps_k, delta_k, records_per_person=k)


def _settle_budget(budget: Path, entry: tuple[str, float | None], local: Any,
                   declared: tuple[float, float | None, str], run: dict[str, Any],
                   exc: BaseException | None) -> Any:
    """Record how the fit ended: its charge, the declared budget kept, or no charge at all."""
    from oracledp.privacy import GuaranteeKind
    from oracledp.privacy._budget_file import BudgetFileError, cancel, keep, settle

    charge_id, booked_rho = entry
    charges = local.spends
    interrupted = isinstance(exc, KeyboardInterrupt) and run.get("fitting", False)
    try:
        if charges:
            c = charges[0]
            pure = c.guarantee is not None and c.guarantee.kind is GuaranteeKind.PURE
            rho = (math.inf if not math.isfinite(c.epsilon) else
                   c.epsilon * c.epsilon / 2.0 if pure else booked_rho)
            ledger = settle(budget, charge_id, epsilon=c.epsilon, delta=c.delta, rho=rho,
                            guarantee=c.guarantee, status=c.status)
            if exc is not None:
                _warn(f"--budget {budget}: the fit drew noise before it stopped, so it is "
                      f"charged epsilon {c.epsilon:.4g}, delta {c.delta:.3g} ({c.status})")
            return ledger
        if interrupted or local._pending:
            _warn(f"--budget {budget}: the fit was stopped after it started; its declared "
                  "budget stays charged")
            return keep(budget, charge_id, "interrupted after the fit started: its declared "
                                           "budget is charged")
        cancel(budget, charge_id)  # refused before its mechanism drew anything
        if exc is not None and not isinstance(exc, KeyboardInterrupt):
            _warn(f"--budget {budget}: the fit stopped before any noise was drawn, so nothing "
                  "was charged")
        return None
    except (OSError, BudgetFileError) as exc2:
        why = exc2.strerror if isinstance(exc2, OSError) and exc2.strerror else str(exc2)
        if exc is None:
            _fail(f"--budget {budget}: the model was fitted but the ledger could not be "
                  f"updated ({why}); its declared budget stays charged")
        _warn(f"--budget {budget}: the ledger could not be updated ({why}); the fit's declared "
              "budget stays charged")
        return None


def _print_budget(budget: Path, ledger: Any, local: Any, k: int,
                  entry: tuple[str, float | None] | None = None) -> None:
    if ledger is None:  # pragma: no cover - a successful fit always updates its entry
        return
    c = local.spends[0]
    eps, delta = ledger.spent
    left_eps, left_delta = ledger.remaining
    total_eps, total_delta = ledger.total
    k = local.records_per_person  # the schema's or the budget file's, the larger
    who = f" per person ({k} records)" if k > 1 else ""
    if ledger.composition == "zcdp":  # the ledger's unit is rho: say it in rho
        from oracledp.privacy import GuaranteeKind, zcdp_rho

        pure = c.guarantee is not None and c.guarantee.kind is GuaranteeKind.PURE
        rho = c.epsilon * c.epsilon / 2.0 if pure else (entry[1] if entry else None)
        charged = f"rho {rho:.4g} " if rho is not None else ""
        typer.echo(f"  budget {budget} (zCDP): charged {charged}(epsilon {c.epsilon:.4g}, delta "
                   f"{c.delta:.3g}{who}); spent rho {ledger.spent_rho:.4g} of "
                   f"{zcdp_rho(total_eps, total_delta):.4g} (the total epsilon {total_eps:g} "
                   f"at delta {total_delta:g}), {len(ledger.spends)} release(s); what remains "
                   f"allows one more pure release of epsilon up to {left_eps:.4g}"
                   + (" per person" if k > 1 else ""))
        return
    typer.echo(f"  budget {budget}: charged epsilon {c.epsilon:.4g}, delta {c.delta:.3g}{who}; "
               f"spent epsilon {eps:.4g} of {total_eps:g}, delta {delta:.3g} of "
               f"{total_delta:g} in {len(ledger.spends)} release(s); remaining epsilon "
               f"{left_eps:.4g}, delta {left_delta:.3g}")
