"""``oracledp models --schema S --epsilon E [--delta D] [DATA]``: advice from public facts.

:func:`oracledp._guidance.advise_model` decides from d (the schema's encoded features),
epsilon, n and |W| of the default parameter space; this module only reads the schema, counts
DATA's records through the readers ``oracledp fit`` uses (which check the file against the
schema: a bad file is one ``error:`` line, exit 2) and prints.  No record value is printed;
n is the only fact taken from DATA, public here as in ``oracledp fit`` (delta defaults to
1/n^2; ``--delta`` as in ``fit``).
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

import typer

from oracledp._guidance import ModelAdvice, advise_model
from oracledp._validation import check_delta, check_epsilon

_WIDTH = 100


def _usage_checks(schema_path: Path | None, epsilon: float | None, data: Path | None,
                  delta: float | None = None) -> float:
    """The options checked before any file is read: exit 2 with one line if inconsistent."""
    from oracledp._cli_table import _fail

    if schema_path is None:
        what = "DATA" if data is not None else "--epsilon"
        _fail(f"{what} needs --schema: the advice for a table is read from its schema "
              "(`oracledp models --schema S --epsilon E [DATA]`); plain `oracledp models` "
              "prints the general guide")
    if epsilon is None:
        _fail("--schema needs --epsilon: the advice depends on the privacy parameter "
              "(`oracledp models --schema S --epsilon E [DATA]`)")
    if delta is not None and data is None:
        _fail("--delta needs DATA: the W that delta sizes is the one of a fit on DATA's n "
              "records (`oracledp models --schema S --epsilon E --delta D DATA`)")
    try:
        if delta is not None:
            check_delta(delta, "--delta")
        return check_epsilon(epsilon, "--epsilon")
    except (TypeError, ValueError) as exc:
        _fail(str(exc))


def _count_records(data: Path, schema: Any, sep: str, ignore_extra: bool) -> int:
    """n, read as ``oracledp fit`` reads DATA (checked against the schema); nothing else kept."""
    from oracledp._cli_table import _fail, _read_table

    try:
        df = _read_table(data, schema, sep, with_target=True, ignore_extra=ignore_extra)
    except MemoryError:
        _fail(f"{data}: not enough memory to read it; the advice needs only its number of "
              "records: run without DATA, or on a smaller file")
    return len(df)


def _wrapped(text: str, first: str, rest: str = "      ") -> list[str]:
    return textwrap.wrap(" ".join(text.split()), width=_WIDTH, initial_indent=first,
                         subsequent_indent=rest, break_on_hyphens=False)


def advice_lines(advice: ModelAdvice, schema_name: str, data_name: str | None) -> list[str]:
    """The advice in plain lines (no record value: only d, n, epsilon and |W|)."""
    a = advice
    lines = _wrapped(f"Advice for the table of {schema_name} at epsilon {a.epsilon:g}, from "
                     "public facts only (no record value is read):", "", "  ")
    lines += _wrapped(f"d = {a.d} encoded features (the schema's, intercept included)", "  ")
    if a.n is None:
        lines += _wrapped("n not given: pass DATA to check the records per feature (only their "
                          "number is read) and to get delta's default 1/n^2", "  ")
    else:
        if a.delta is None:
            delta = ""
        elif a.delta_given:
            delta = f"; delta {a.delta:.3g} (--delta)"
        else:
            delta = (f"; delta defaults to 1/n^2 = {a.delta:.3g} (pass it as --delta under "
                     "--budget)")
        lines += _wrapped(f"n = {a.n:,} record{'' if a.n == 1 else 's'} in {data_name} (public, as in `oracledp fit`), "
                          f"{a.n / a.d:.1f} per encoded feature{delta}", "  ")
    sizes = dict(a.space_sizes)
    lines += _wrapped(f"default parameter space (--space auto, as fit sizes it): opdisc |W| = "
                      f"{sizes['opdisc']:,}; rspm and gaussian-rspm |W| = {sizes['rspm']:,}",
                      "  ")
    lines += _wrapped("exact fits certifying within the default oracle limit: "
                      + ", ".join(f"{m} {c}" for m, c in a.certify), "  ")
    lines.append(f"use: {a.model}" + (
        f" (oracledp fit --model auto: {a.exact_model} or dpsgd, chosen privately at your "
        "total epsilon)" if a.model == "auto" else ""))
    for why in a.reasons:
        lines += _wrapped(why, "  why: ")
    for warning in a.warnings:
        lines += _wrapped(warning, "  warning: ")
    lines += _wrapped("numbers: docs/choosing-a-model.md (measured on the bundled tables; "
                      "benchmarks/advice_check.py says how this advice did on them)", "  ")
    return lines


def _person_lines(k: int, eps: float, delta: float | None) -> list[str]:
    """What the schema's records_per_person makes of the epsilon (and delta) per record, and
    the per-person cap ``fit`` holds them to (its refusal, said before the fit)."""
    if k <= 1:
        return []
    from oracledp._guidance import EPSILON_CAP, check_person_cap
    from oracledp.privacy._group import group_loss

    eps_k, delta_k = group_loss(eps, delta or 0.0, k)
    lines = _wrapped(f"records_per_person {k}: epsilon {eps:g} per record is epsilon {eps_k:g} "
                     "per person (group privacy)"
                     + (f", delta {delta:.3g} is {delta_k:.3g} per person" if delta else "")
                     + f"; the records come from at least 1/{k} as many people", "  ")
    if check_person_cap(eps, k, "--epsilon", False):
        lines += _wrapped(f"`oracledp fit` and `synth fit` refuse this: epsilon {eps_k:g} per "
                          f"person is above the cap of {EPSILON_CAP:g}; use --epsilon at most "
                          f"{math.floor(EPSILON_CAP / k * 1e4) / 1e4:g} (or "
                          "--allow-large-epsilon)", "  warning: ")
    return lines


def print_advice(schema_path: Path | None, epsilon: float | None, data: Path | None,
                 sep: str, ignore_extra: bool, delta: float | None = None) -> None:
    """``oracledp models --schema S --epsilon E [--delta D] [DATA]``."""
    from oracledp._cli_table import _fail, _load_schema

    eps = _usage_checks(schema_path, epsilon, data, delta)
    assert schema_path is not None
    schema = _load_schema(schema_path)
    try:
        schema.require_target("`oracledp models`")
    except ValueError as exc:
        _fail(str(exc))
    n = None if data is None else _count_records(data, schema, sep, ignore_extra)
    try:
        advice = advise_model(schema, eps, n=n, delta=delta)
    except (TypeError, ValueError) as exc:
        _fail(str(exc))
    lines = advice_lines(advice, str(schema_path), None if data is None else str(data))
    lines += _person_lines(schema.records_per_person, eps, advice.delta)
    unconfirmed = len(schema.unconfirmed())
    if unconfirmed:
        lines += _wrapped(f"{unconfirmed} schema entr{'y is' if unconfirmed == 1 else 'ies are'} "
                          "still marked \"from_data\": `oracledp fit` refuses the schema until "
                          "you replace or confirm them, which may change d", "  note: ")
    typer.echo("\n".join(lines))
