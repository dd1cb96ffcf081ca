"""The ``oracledp`` command line (typer + rich).

Commands: ``datasets`` (bundled data files and their checksums), ``solvers``
(oracle backends), ``demo`` (OPDisc on Adult, see
:mod:`oracledp._demo`), and for your own CSV (see :mod:`oracledp.tabular`
and docs/your-own-data.md) ``schema infer``, ``schema check``, ``fit``, ``predict``, ``evaluate`` and
``export-sample``, and ``synth fit | sample | evaluate`` (private synthetic data, see
:mod:`oracledp._cli_synth`).  All logic lives in importable modules; this
file parses options and prints.  The papers' reproductions are not part of the package: they
live in the repository's ``lab/`` (``python -m lab --help`` from a clone).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from typer.core import TyperGroup

from oracledp import __version__
from oracledp._cli_synth import register as _register_synth_commands
from oracledp._cli_table import register as _register_table_commands
from oracledp._errors import OracleDPError
from oracledp._provenance import environment_line

#: The parser's usage error (a bad type, a missing argument, an unknown option or command, a
#: failed path check, a bad choice, a ``typer.BadParameter``); found through the public
#: ``typer.BadParameter`` because typer may bundle its own copy of click.
_UsageError: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


_RICH_BROKEN_PIPE = Console.on_broken_pipe


def _quiet_broken_pipe(self: Console) -> None:
    """rich's Console on a closed stdout pipe: the command line's rule (exit 0, nothing said),
    not rich's exit code 1, so that `oracledp evaluate ... | head -1` ends as
    `oracledp predict ... | head` and `oracledp synth sample ... | head` do.  A console on
    stderr keeps rich's rule."""
    if self.stderr:
        _RICH_BROKEN_PIPE(self)
        return
    from oracledp._cli_table import _reader_closed

    _reader_closed()


# rich documents on_broken_pipe as the method to override; the command line's consoles all
# follow the rule above (the library itself prints nothing through rich)
Console.on_broken_pipe = _quiet_broken_pipe  # type: ignore[method-assign]


def _stdout_closed() -> bool:
    """Whether stdout's reader has closed the pipe (poll reports an error or a hang-up on
    it); True where that cannot be asked (no poll, no file number), the former rule."""
    import select

    try:
        p = select.poll()
        p.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in p.poll(0))
    except (AttributeError, OSError, ValueError):
        return True


@contextmanager
def _one_line_usage_errors() -> Iterator[None]:
    """A usage error becomes one line ``error: ...`` on stderr and exit code 2 (no usage
    banner, no box); bare ``oracledp`` and ``oracledp schema`` still print their help.  A
    closed stdout pipe ends the command quietly with exit code 0."""
    try:
        yield
        sys.stdout.flush()  # here, so that a closed pipe is caught below, not at exit
    except BrokenPipeError:  # `oracledp predict ... | head`: as `synth sample`, exit 0
        if not _stdout_closed():  # (stderr's pipe: not the reader of the output)
            raise
        from oracledp._cli_table import _reader_closed

        _reader_closed()
    except _UsageError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            raise
        ctx = getattr(exc, "ctx", None)
        message = " ".join(exc.format_message().split())  # type: ignore[attr-defined]
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        typer.echo(f"error: {message}{hint}", err=True)
        raise typer.Exit(2) from None


class _OneLineErrors(TyperGroup):
    """The ``oracledp`` group: its own options are parsed in ``make_context``; every
    subcommand (and ``schema``'s) is parsed and run inside ``invoke``."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None,
                     **extra: Any) -> Any:
        with _one_line_usage_errors():
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: Any) -> Any:
        with _one_line_usage_errors():
            return super().invoke(ctx)


app = typer.Typer(
    name="oracledp",
    help="Differentially private learning with optimization oracles.",
    no_args_is_help=True,
    add_completion=False,
    cls=_OneLineErrors,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"oracledp {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Differentially private learning with optimization oracles."""


# --- datasets / solvers ------------------------------------------------------------------------


def _size(n: int | None) -> str:
    if n is None:
        return "missing"
    return f"{n / 1e6:.2f} MB" if n >= 1e6 else f"{n / 1e3:.1f} kB"


@app.command()
def datasets() -> None:
    """List the bundled data files, their sizes, record counts and SHA-256 checks."""
    from oracledp.datasets import list_datasets

    console = Console()
    table = Table(title="Bundled datasets (checked against recorded SHA-256)")
    for col, kw in (("name", {}), ("file", {}), ("size", {"justify": "right"}),
                    ("records", {"justify": "right"}), ("sha256", {}), ("verified", {})):
        table.add_column(col, **kw)
    rows = list_datasets()
    for r in rows:
        table.add_row(
            r["name"], r["file"], _size(r["bytes"]), f"{r['records']:,}",
            f"{r['sha256'][:16]}…",
            "[green]yes[/green]" if r["verified"] else "[red]NO[/red]",
        )
    console.print(table)
    bad = [r["file"] for r in rows if not r["verified"]]
    if bad:
        console.print(f"[red]error:[/red] checksum mismatch or missing file: {', '.join(bad)}; "
                      "reinstall oracledp to restore the data.")
        raise typer.Exit(1)


@app.command()
def solvers() -> None:
    """List the oracle backends (names for --solver, the estimators' oracle=)."""
    from oracledp.oracles import available_oracles

    console = Console()
    table = Table(title="Oracle backends")
    table.add_column("name", style="bold")
    table.add_column("description")
    for name, desc in available_oracles().items():
        table.add_row(name + (" (default)" if name == "highs" else ""), desc)
    console.print(table)


# --- demo -------------------------------------------------------------------------------------


def _parse_positive_list(value: str, option: str, noun: str, example: str
                         ) -> tuple[float, ...]:
    """``OPTION 0.1,1``: distinct finite numbers > 0, or a clean usage error naming OPTION."""
    hint = f"'{option}'"
    parts = [p.strip() for p in value.split(",")]
    if not value.strip() or any(not p for p in parts):
        raise typer.BadParameter(
            f"{value!r} is not a comma-separated list of numbers (example: {option} {example})",
            param_hint=hint,
        )
    out: list[float] = []
    for p in parts:
        try:
            a = float(p)
        except ValueError:
            raise typer.BadParameter(
                f"{p!r} is not a number (example: {option} {example})", param_hint=hint
            ) from None
        if not (math.isfinite(a) and a > 0):
            raise typer.BadParameter(
                f"every {noun} must be a finite number > 0, got {p!r}", param_hint=hint
            )
        if a in out:
            raise typer.BadParameter(f"{noun} {p} is listed twice", param_hint=hint)
        out.append(a)
    return tuple(out)


def _epsilon_option(help: str) -> Any:
    """``--epsilon`` (a comma-separated list), the one spelling of every command."""
    return typer.Option("--epsilon", help=help)


def _epsilons(epsilon: str | None) -> tuple[float, ...] | None:
    """The epsilons of ``--epsilon`` (a comma-separated list)."""
    return None if epsilon is None else _parse_positive_list(epsilon, "--epsilon", "epsilon",
                                                             "0.1,1")


def _fmt_acc(stats: dict[str, float | None]) -> str:
    if stats["mean"] is None:
        return "—"
    std = stats["std"]
    return f"{stats['mean']:.3f}" + ("" if std is None else f" ± {std:.3f}")


def _fmt_time(t: float | None) -> str:
    return "—" if t is None else f"{t:.1f}"


def _print_demo(console: Console, result: dict[str, Any]) -> None:
    data = result["data"]
    table = Table(
        title=(f"OPDisc on Adult: n_train={data['n_train']:,}, n_test={data['n_test']:,}, "
               f"d={data['d']}, delta=1/n²={data['delta']:.3g}"),
        caption="accuracy: mean ± std over certified runs; uncertified runs are failures",
    )
    table.add_column("epsilon", justify="right", min_width=11)
    for header in ("runs", "train acc", "test acc", "oracle s\nmed / max", "certified"):
        table.add_column(header, justify="right", no_wrap=True)
    for row in result["summary"]:
        k, n = row["certified"], row["runs"]
        cert = f"{k}/{n}" if k == n else f"[red]{k}/{n}[/red]"
        table.add_row(
            f"{row['epsilon']:g}", str(n), _fmt_acc(row["train_acc"]), _fmt_acc(row["test_acc"]),
            f"{_fmt_time(row['oracle_time_s']['median'])} / "
            f"{_fmt_time(row['oracle_time_s']['max'])}",
            cert,
        )
    np_ = result["non_private"]
    acc = (lambda v: "—" if v is None else f"{v:.3f}")  # noqa: E731
    table.add_section()
    table.add_row(
        np_["label"].replace(" ", "\n", 1), "1", acc(np_["train_acc"]), acc(np_["test_acc"]),
        _fmt_time(np_["oracle_time_s"]),
        "optimal" if np_["certified"] else f"[yellow]no ({np_['status']})[/yellow]",
    )
    console.print(table)
    seen: set[float] = set()
    for r in result["runs"]:
        if r["ok"] and r["epsilon"] not in seen:
            seen.add(r["epsilon"])
            console.print(f"  eps={r['epsilon']:g}: each run is {r['guarantee_text']}")
    console.print(f"  {np_['label']} is not private: reference only.")
    chance = result.get("chance")
    if chance is not None:
        console.print(f"  {chance['label']}: test accuracy {chance['test_acc']:.3f} "
                      "(not private: reference only)")
    for r in result["runs"]:
        if not (r["ok"] and r["certified"]):
            console.print(
                f"[red]failed:[/red] eps={r['epsilon']:g} run {r['run']} (seed {r['seed']}): "
                f"oracle status {r['status']}, nothing released"
            )


def _with_progress(console: Console, work: Any) -> Any:
    """Run ``work(report)`` under a rich progress bar; library errors exit cleanly."""
    try:
        with Progress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
            MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True,
        ) as progress:
            task = progress.add_task("starting", total=None)

            def report(done: int, total: int, desc: str) -> None:
                progress.update(task, completed=done, total=total, description=desc)

            return work(report)
    except OracleDPError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1) from None


@app.command()
def demo(
    epsilon: Annotated[str, _epsilon_option("Comma-separated privacy levels epsilon.")] = "0.1,1",
    runs: Annotated[int, typer.Option("--runs", min=1, help="Private runs per epsilon.")] = 3,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Master seed; each run's seed derives from it.")
    ] = 0,
    solver: Annotated[
        str, typer.Option("--solver", help="Oracle backend, the estimator's oracle= (see "
                                            "`oracledp solvers`).")
    ] = "highs",
    time_limit: Annotated[
        float, typer.Option("--time-limit", help="Seconds per oracle call.")
    ] = 300.0,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Directory for demo.json and demo.png.", file_okay=False),
    ] = None,
    n_train: Annotated[
        int | None, typer.Option("--n-train", hidden=True, min=2, help="Subsample (tests).")
    ] = None,
    n_test: Annotated[
        int | None, typer.Option("--n-test", hidden=True, min=2, help="Subsample (tests).")
    ] = None,
) -> None:
    """Train OPDisc on Adult (ICML 2020 setting) at each epsilon, against the non-private optimum."""
    from oracledp._demo import Config, run_demo, write_outputs
    from oracledp.oracles import check_solver_name

    epsilons = _epsilons(epsilon)
    assert epsilons is not None
    try:
        check_solver_name(solver)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--solver'") from None
    if not (math.isfinite(time_limit) and time_limit > 0):
        raise typer.BadParameter(f"must be > 0, got {time_limit}", param_hint="'--time-limit'")
    config = Config(epsilons=epsilons, runs=runs, seed=seed, solver=solver,
                    time_limit=time_limit, n_train=n_train, n_test=n_test)

    console = Console()
    try:
        result = _with_progress(console, lambda report: run_demo(config, progress=report))
    except ValueError as exc:  # e.g. an eps outside OPDisc's proven range, found before any run
        raise typer.BadParameter(str(exc), param_hint="'--epsilon'") from None

    _print_demo(console, result)
    cal = result.get("calibration") or []
    if cal:
        ratios = ", ".join(f"ε={c['epsilon']:g}: {c['ratio_to_paper']:.3f}" for c in cal)
        console.print(f"  σ is the proven calibration (docs/proofs/opdisc-calibration.md); "
                      f"σ / Theorem 1's σ: {ratios}")
    console.print(f"  total time {result['elapsed_s']:.1f}s")
    console.print(environment_line(result.get("environment")))
    if out is not None:
        paths = write_outputs(result, out)
        console.print(f"  wrote {paths['json']} and {paths['png']}")


# --- your own table: schema infer / fit / predict / evaluate / models (see _cli_table.py) --

_register_table_commands(app)
_register_synth_commands(app)


if __name__ == "__main__":  # pragma: no cover
    app()
