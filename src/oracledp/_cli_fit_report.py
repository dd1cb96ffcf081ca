"""What ``oracledp fit`` prints: the oracle's limit and why it could not certify, the summary
table of the fitted model and its guarantee, and the coefficients plot saved beside model.json.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from oracledp._cli_table import _AGGREGATED_MODELS, _warn
from oracledp._errors import OracleFailure
from oracledp._guidance import OPSAMP_WARNING, RECOMMENDED_MODELS
from oracledp.privacy import group_privacy


def _limit_text(time_limit: float | None, work_limit: int | None) -> str:
    """The oracle's limit per call, in words (the library's rule: estimators/_exact.build_oracle)."""
    if time_limit is None and work_limit is None:
        return "the default deterministic work limit, about 1.5 minutes of a quiet 2-core machine"
    parts = ([] if work_limit is None else [f"--work-limit {work_limit}"]) + (
        [] if time_limit is None else [f"{time_limit:g}s"])
    return " and ".join(parts)


def _more_work(time_limit: float | None, work_limit: int | None) -> str:
    """The advice to let the oracle work longer, in terms of the limit that stopped it."""
    if time_limit is not None and work_limit is None:
        return (f"a larger --time-limit (now {time_limit:g}s per oracle call) or a "
                "deterministic --work-limit")
    return f"a larger --work-limit (now {_limit_text(time_limit, work_limit)} per oracle call)"


def _oracle_failure_message(model: str, solver: str, time_limit: float | None,
                            exc: OracleFailure, work_limit: int | None = None) -> str:
    """What to do when the oracle did not certify: advice in terms of this command's options."""
    info = getattr(getattr(exc, "result", None), "info", None)
    reason = info.get("reason") if isinstance(info, dict) else None
    said = f" The oracle reports: {reason}." if isinstance(reason, str) and reason else ""
    if model == "auto":
        from oracledp._cli_auto import oracle_failure_message

        return oracle_failure_message(exc, solver, _limit_text(time_limit, work_limit))
    if model in _AGGREGATED_MODELS:
        return (
            f"the {model} fit stopped: the oracle (--solver {solver}) did not certify an exact "
            f"optimum, and {model}'s privacy proof needs the exact minimizer, so nothing was "
            f"released or written.{said} What to try: {_more_work(time_limit, work_limit)}; "
            "another --solver (see `oracledp solvers`); a smaller W (--space norm2=R with a "
            "smaller R); a "
            "coarser public grid in the schema (a larger 'step', fewer 'bins' or levels, so "
            "that the oracle has a smaller problem); or a model that needs no exact oracle "
            "(--model dpsgd or accuracy-first; see `oracledp models`). Whether the oracle "
            "certifies depends on the data (see the README's guarantee section)."
        )
    others = ", ".join(m for m in RECOMMENDED_MODELS if m != model)
    return (f"the {model} fit stopped: the optimizer could not certify the accuracy its privacy "
            f"calibration needs, so nothing was released or written.{said} Try another --model "
            f"({others}).")


def _coef_plot(path: Path, names: list[str], coef: Any, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(4.0, 0.35 * len(names) + 1.5), 4.0))
    ax.bar(range(len(names)), coef, color=["tab:blue" if c >= 0 else "tab:red" for c in coef])
    ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=8)
    ax.axhline(0.0, color="black", linewidth=0.6)
    ax.set_ylabel("coefficient")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _report_fit(model: str, schema: Any, est: Any, run: dict[str, Any], path: Path, out: Path,
                verbose: bool) -> None:
    if model == "opsamp":
        _warn(OPSAMP_WARNING)
    _print_fit(Console(), model, schema, est, run["n_rows"], run["n_features"],
               run["seconds"] if verbose else None, run.get("default_delta", False),
               run.get("persons_source", "schema's"))
    Console().print(f"  wrote {path} and {out / 'coefficients.png'}", markup=False)


#: ``fit`` lists every coefficient when the schema has at most this many encoded features;
#: a wider table lists the nonzero ones and counts the zeros (model.json has them all).
_LIST_ALL_COEFFICIENTS = 20


def _print_fit(console: Console, model: str, schema: Any, est: Any, n_rows: int,
               n_features: int, fit_seconds: float | None, default_delta: bool = False,
               persons_source: str = "schema's") -> None:
    g = est.guarantee_
    coef = est.coef_.ravel()
    table = Table(title=f"oracledp fit --model {model}")
    table.add_column("feature")
    table.add_column("coefficient", justify="right")
    list_all = len(coef) <= _LIST_ALL_COEFFICIENTS
    for name, c in zip(schema.feature_names, coef, strict=True):
        if list_all or c != 0:
            table.add_row(escape(name), f"{c:+.4g}")
    if est.intercept_:
        table.add_row("(intercept)", f"{est.intercept_:+.4g}")
    console.print(table)
    zeros = 0 if list_all else sum(1 for c in coef if c == 0)
    if zeros:
        listed = (f"all {zeros} encoded features have coefficient 0" if zeros == len(coef) else
                  f"{len(coef) - zeros} nonzero coefficient(s) listed; the other {zeros} of "
                  f"the {len(coef)} encoded features have coefficient 0")
        console.print(f"  {listed} (model.json and coefficients.png have every coefficient)",
                      markup=False, highlight=False)
    summary = Table(title="summary", show_header=False)
    summary.add_column("item")
    summary.add_column("value")
    k = schema.records_per_person
    person = group_privacy(g, k)
    for item, value in (
        ("model", model),
        ("records, encoded features", f"{n_rows:,}, {n_features}"),
        ("labels (-1 / +1)", f"{est.classes_[0]} / {est.classes_[1]}"),
        ("records per person", f"{k} ({persons_source} records_per_person)"),
        ("privacy per record", f"epsilon {g.epsilon:.4g}, delta {g.delta:.3g} ({g.kind})"),
        *([("privacy per person", f"epsilon {person.epsilon:.4g}, delta {person.delta:.3g} "
                                  f"({person.kind}; group privacy, {k} records)")]
          if k > 1 else []),
        *([("parameter space", est.space_description_.removeprefix("parameter space "))]
          if hasattr(est, "space_description_") else []),
        *(_auto_rows(est) if model == "auto" else []),
        ("exact oracle assumed", "yes (certified)" if g.requires_exact_oracle else "no"),
        ("guarantee holds", "yes" if g.holds else "NO"),
        *([("time (non-private diagnostic)", f"{fit_seconds:.1f}s")]
          if fit_seconds is not None else []),
    ):
        summary.add_row(item, escape(value))
    console.print(summary)
    console.print(f"  in plain words: {person.in_plain_words()}", markup=False,
                  highlight=False)
    console.print(f"  guarantee: {g.describe()}", markup=False, highlight=False)
    from oracledp._cli_budget import _default_delta_note, _delta_note

    caution = ((_default_delta_note(person.delta, n_rows, k) if default_delta else None)
               or _delta_note(person.delta, n_rows, k))
    if caution:
        console.print(f"  note: {caution}", markup=False, highlight=False)
    if schema.clipping_note():
        console.print(f"  note: {schema.clipping_note()}", markup=False, highlight=False)
    if k > 1:
        console.print(f"  guarantee per person: {person.describe()}", markup=False,
                      highlight=False)


def _auto_rows(est: Any) -> list[tuple[str, str]]:
    from oracledp._cli_auto import summary_rows

    return summary_rows(est)
