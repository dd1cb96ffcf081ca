"""``oracledp schema infer | schema check | fit | predict | evaluate | models | export-sample``.

The commands parse options, call :mod:`oracledp.tabular` and print; see docs/your-own-data.md.
Every refusal is one ``error: ...`` line on stderr with exit code 2, decided from public
parameters and the schema before any randomness; no message prints a record value or a row.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from oracledp._errors import OracleDPError, OracleFailure
from oracledp._guidance import (
    EPSILON_CAP,
    GAUSSIAN_RSPM_NOTE,
    MODEL_GUIDE,
    OPSAMP_WARNING,
    RECOMMENDED_MODELS,
    check_epsilon_cap,
)
from oracledp._registry import EXACT_MODELS, check_model_name, make_estimator, model_schema
from oracledp._validation import check_delta, check_epsilon, check_positive, check_sep
from oracledp.privacy import group_privacy

schema_app = typer.Typer(help="Table schemas for your own CSV (see docs/your-own-data.md).",
                         no_args_is_help=True)


#: Exit code of a fit stopped by Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130


def _fail(message: str) -> NoReturn:
    """One plain paragraph on stderr (no markup, no traceback), exit code 2."""
    typer.echo(f"error: {' '.join(str(message).split())}", err=True)
    raise typer.Exit(2)


def _warn(message: str) -> None:
    typer.echo(f"warning: {' '.join(str(message).split())}", err=True)


@contextlib.contextmanager
def _clipping_on_stderr() -> Iterator[None]:
    """The library's ClippedValuesWarning (columns clipped as the schema declares) as one
    ``warning:`` line on stderr, printed once the block is done (even if it fails)."""
    from oracledp._errors import ClippedValuesWarning

    others: list[Any] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ClippedValuesWarning)
            try:
                yield
            finally:
                for w in caught:
                    if issubclass(w.category, ClippedValuesWarning):
                        _warn(str(w.message))
                    else:
                        others.append(w)
    finally:  # not ours to print: shown as it would have been, once recording has stopped
        for w in others:  # (re-issued while recording, each would be recorded again, forever)
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _load_schema(path: Path) -> Any:
    from oracledp.tabular import TableSchema

    try:
        return TableSchema.load(path)
    except OSError as exc:
        _fail(f"{path}: cannot read the schema ({exc.strerror})")
    except ValueError as exc:
        _fail(str(exc))


@contextmanager
def _reading(path: Path) -> Iterator[Any]:
    """A transient progress bar on stderr (a terminal only) while DATA is read, for the
    readers' ``verbose=``: the bytes read out of the file's size.  Both depend on the data
    (the size is not a row count, but grows with the file); they are shown on the user's own
    terminal, like the fit's elapsed time, and are never saved or released."""
    console = Console(stderr=True)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                  DownloadColumn(), TimeElapsedColumn(), console=console, transient=True,
                  disable=not console.is_terminal) as progress:
        task = progress.add_task(f"reading {escape(path.name)}", total=None)

        def report(phase: str, done: int, total: int | None) -> None:
            progress.update(task, description=f"{phase} {escape(path.name)}",
                            completed=done, total=total)

        yield report


def _read_table(path: Path, schema: Any, sep: str, with_target: bool, *,
                ignore_extra: bool = True, check: bool = True) -> Any:
    from oracledp.tabular import read_csv

    try:
        with _reading(path) as report:
            return read_csv(path, schema, sep=sep, with_target=with_target,
                            ignore_extra=ignore_extra, check=check, verbose=report)
    except (OracleDPError, ValueError) as exc:
        _fail(f"{path}: {exc}" if str(path) not in str(exc) else str(exc))


#: The models with an exact oracle: they take --solver, --time-limit, --space, --work-limit.
_AGGREGATED_MODELS = EXACT_MODELS

#: Models fitted from the distinct encoded rows with their record counts (``read_aggregated``,
#: then ``est.fit(X, y, sample_weight=counts)``): memory grows with the distinct rows, not with
#: the records.  The exact models fit the same problem; DP-SGD the same run as on the table
#: that lists each distinct row as many times as it has records (its Poisson batches are drawn
#: over the records).  The others need the whole encoded matrix.
_READ_AGGREGATED = (*EXACT_MODELS, "dpsgd", "auto")


def _out_of_memory(data: Path, model: str, *, loading: bool = True) -> str:
    """The message of a MemoryError (exit 2, no traceback): what needs the memory, what to do."""
    when = ("while reading it; nothing was released or written" if loading
            else "while fitting or saving")
    if model in _READ_AGGREGATED:
        return (f"{data}: not enough memory for --model {model} {when}: the table has too many "
                "distinct encoded rows (memory grows with them, not with the number of "
                "records). Coarsen the schema (a larger 'step', fewer 'bins' or levels) or fit "
                "on a smaller file.")
    return (f"{data}: not enough memory for --model {model} {when}: this model needs the whole "
            "encoded table in memory. Use --model rspm, opdisc or dpsgd (they read the file "
            "in one pass and keep only its distinct encoded rows), or fit on a smaller file.")


def _read_aggregated(path: Path, schema: Any, sep: str, model: str, ignore_extra: bool,
                     engine: str = "duckdb", scheduler: str | None = None) -> Any:
    """DATA read in one pass into its distinct encoded rows and label counts (exit 2 if
    bad)."""
    from oracledp.tabular import read_aggregated

    try:
        with _reading(path) as report:
            return read_aggregated(path, schema, sep=sep, ignore_extra=ignore_extra,
                                   verbose=report, engine=engine, scheduler=scheduler)
    except (OracleDPError, ValueError) as exc:
        _fail(f"{path}: {exc}" if str(path) not in str(exc) else str(exc))
    except MemoryError:
        _fail(_out_of_memory(path, model))


def _sep(value: str) -> str:
    """``--sep``, checked as it is parsed (before any file is read); ``\\t`` spells a tab."""
    try:
        return check_sep("\t" if value == "\\t" else value, "the delimiter")
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


_SEP = typer.Option("--sep", callback=_sep, help="Field delimiter of the CSV (one character; "
                                                 "\\t for a tab).")


def _engine(value: str) -> str:
    if value not in ("duckdb", "dask"):
        raise typer.BadParameter(f"must be 'duckdb' or 'dask', got {value!r}")
    return value


_ENGINE = typer.Option("--engine", callback=_engine,
                       help="Data engine of the reading pass: duckdb (default, this machine) "
                            "or dask (a Dask cluster: docs/cluster.md); the same counts and "
                            "the same release either way.")
_SCHEDULER = typer.Option("--scheduler", metavar="ADDRESS",
                          help="With --engine dask: the address of a running Dask scheduler "
                               "(e.g. tcp://host:8786); default a local cluster.")


def schema_infer(
    data: Annotated[Path, typer.Argument(help="CSV file with a header line, or Parquet.")],
    target: Annotated[str, typer.Option("--target", help="The label column (two labels).")],
    sep: Annotated[str, _SEP] = ",",
    max_levels: Annotated[
        int, typer.Option("--max-levels", min=1,
                          help="Text columns with more distinct values are left unresolved "
                               "(and so is a --categorical column of integers whose range is "
                               "wider).")
    ] = 50,
    categorical: Annotated[
        list[str] | None,
        typer.Option("--categorical", metavar="NAME",
                     help="Propose this column as categorical (repeat for several): whole "
                          "numbers get every integer from their smallest to their largest "
                          "value as a level. Integer codes are numeric otherwise.")
    ] = None,
) -> None:
    """Propose a schema from DATA (NOT private): JSON on stdout, to be confirmed by hand."""
    from oracledp.tabular import TableSchema, read_csv

    if not target.strip():
        _fail("--target must name the label column, got an empty name")
    try:
        with _reading(data) as report:
            df = read_csv(data, sep=sep, verbose=report)
        schema, warnings = TableSchema.infer(df, target=target, max_levels=max_levels,
                                             categorical=categorical or ())
    except (OracleDPError, ValueError) as exc:
        _fail(str(exc))
    typer.echo(schema.to_json())
    _warn(f"every level, bound, step and label in this schema was read from {data} and is "
          "marked \"from_data\": true. Reading them from private data is not differentially "
          "private: replace them with public values (or confirm they are public) and delete "
          "the flags; `oracledp fit` refuses the schema until then.")
    for w in warnings:
        _warn(w)
    if schema.intercept:
        _warn("the schema adds the public intercept feature \"(intercept)\" (\"intercept\": "
              "true); set it to false for halfspaces through the origin.")


def schema_check(
    data: Annotated[Path, typer.Argument(help="The table with the target: CSV (plain, gzip, zstd; a header line) or Parquet (a file, a directory or a glob).")],
    schema_path: Annotated[Path, typer.Option("--schema", help="The table schema (JSON).")],
    sep: Annotated[str, _SEP] = ",",
    ignore_extra: Annotated[
        bool, typer.Option("--ignore-extra", help="Leave out data columns the schema does "
                                                  "not mention (a problem otherwise).")
    ] = False,
    engine: Annotated[str, _ENGINE] = "duckdb",
    scheduler: Annotated[str | None, _SCHEDULER] = None,
) -> None:
    """Check DATA against a schema without fitting: every problem, one line each (exit 2)."""
    from oracledp.tabular import check_table

    schema = _load_schema(schema_path)
    try:
        with _clipping_on_stderr():
            problems = check_table(data, schema, sep=sep, ignore_extra=ignore_extra,
                                   engine=engine, scheduler=scheduler)
    except MemoryError:  # pragma: no cover - one chunk at a time
        _fail(f"{data}: not enough memory to read a chunk of the file")
    for problem in problems:
        typer.echo(f"error: {' '.join(problem.split())}", err=True)
    if problems:
        raise typer.Exit(2)
    typer.echo(f"ok: {data} fits the schema {schema_path} (every cell of its "
               f"{len(schema.columns)} declared column(s) and the target checked); "
               "`oracledp fit` would accept it.")


_OUT_FILES = ("model.json", "coefficients.png")


def _check_out(out: Path, force: bool) -> None:
    """Refuse (exit 2) an --out that already holds a saved model, unless --force."""
    if out.exists() and not out.is_dir():
        _fail(f"--out {out} exists and is not a directory")
    present = [name for name in _OUT_FILES if (out / name).exists()]
    if present and not force:
        _fail(f"--out {out} already holds {' and '.join(present)}; nothing was fitted. Choose "
              "another --out directory, or pass --force to overwrite the saved model.")


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


def _interrupted() -> NoReturn:
    typer.echo("interrupted: the fit was stopped by Ctrl-C; nothing was released or written.",
               err=True)
    raise typer.Exit(EXIT_INTERRUPTED)


def _run_interruptibly(work: Any) -> Any:
    """``work()`` in a worker thread, waited for in the main thread, so that Ctrl-C (which
    Python delivers to the main thread) stops the wait at once even while a solver runs in
    native code.  The abandoned worker is a daemon thread: its result is never used, and
    nothing is written by it (saving happens in the main thread, after this returns)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # re-raised in the main thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="oracledp-fit", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.1)
    if "error" in box:
        raise box["error"]
    return box["value"]


class _NoInterrupt:
    """Ignore Ctrl-C while the model files are written (a model is saved whole or not at all
    by the fit; ``save_model`` itself refuses to write an invalid file)."""

    def __enter__(self) -> None:
        self._old = None
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, signal.SIG_IGN)

    def __exit__(self, *exc: object) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)


def _check_option(check: Any, value: Any, *args: Any) -> Any:
    """``check(value, *args)``: the validator the library itself applies, called with the
    option's name so that its one-line refusal names the option (exit 2)."""
    try:
        return check(value, *args)
    except (TypeError, ValueError) as exc:
        _fail(str(exc))


#: The options of ``fit`` that apply to some models only (the others apply to every model).
#: An option given for a model it does not apply to is refused, never silently ignored.
_MODEL_OPTIONS: dict[str, tuple[str, ...]] = {
    "epsilon": ("opdisc", "rspm", "gaussian-rspm", "opsamp", "dpsgd", "auto"),
    "delta": ("opdisc", "gaussian-rspm", "opsamp", "dpsgd", "auto"),  # rspm: pure epsilon-DP
    "alpha": ("accuracy-first",),
    "max_epsilon": ("accuracy-first",),
    "solver": (*_AGGREGATED_MODELS, "auto"),
    "time_limit": (*_AGGREGATED_MODELS, "auto"),
    "space": _AGGREGATED_MODELS,
    "work_limit": (*_AGGREGATED_MODELS, "auto"),
}


def _check_model_options(ctx: typer.Context, model: str) -> None:
    """Refuse (exit 2) the options given on the command line that ``--model`` does not take."""
    _check_option(check_model_name, model, "--model")
    given = [name for name, models in _MODEL_OPTIONS.items() if model not in models
             and getattr(ctx.get_parameter_source(name), "name", "DEFAULT") != "DEFAULT"]
    if given:
        which = "; ".join(f"--{n.replace('_', '-')} is an option of "
                          f"{', '.join(_MODEL_OPTIONS[n])} only" for n in given)
        options = ", ".join(f"--{n.replace('_', '-')}" for n in given)
        _fail(f"{options} {'does' if len(given) == 1 else 'do'} not apply to --model {model} "
              f"({which}); see `oracledp fit --help`")


def _check_fit_options(model: str, epsilon: float | None, delta: float | None, alpha: float,
                       max_epsilon: float | None, allow_large: bool, solver: str,
                       time_limit: float | None, space: str = "auto",
                       work_limit: int | None = None) -> float | None:
    """The options of ``fit`` checked before any file is read; returns max_epsilon.

    Which options a model takes is decided by :data:`_MODEL_OPTIONS` (checked first, by
    :func:`_check_model_options`); each value is checked by the library's own validator (the
    one the estimator or learner applies to the same parameter), given the option's name;
    the epsilon cap is the command line's own policy.
    """
    _check_option(check_model_name, model, "--model")
    if model == "accuracy-first":
        _check_option(check_positive, alpha, "--alpha")
        cap = EPSILON_CAP if max_epsilon is None else max_epsilon
        _check_option(check_positive, cap, "--max-epsilon")
        msg = check_epsilon_cap(cap, "--max-epsilon", allow_large)
        if msg:
            _fail(msg)
        return cap
    if epsilon is None:
        _fail(f"--epsilon is required for --model {model}")
    _check_option(check_epsilon, epsilon, "--epsilon")
    msg = check_epsilon_cap(epsilon, "--epsilon", allow_large)
    if msg:
        _fail(msg)
    if delta is not None:
        _check_option(check_delta, delta, "--delta")
    if model in (*_AGGREGATED_MODELS, "auto"):
        from oracledp.oracles import check_solver_name

        try:
            check_solver_name(solver)
        except (TypeError, ValueError) as exc:
            _fail(f"--solver: {exc}")
        if time_limit is not None:
            _check_option(check_positive, time_limit, "--time-limit")
        from oracledp.estimators._space_spec import parameter_space
        from oracledp.oracles._base import check_work_limit

        try:  # whether R and B reach tau = 1 does not depend on d: checked with d = 1
            if model != "auto":  # auto's candidates use their default W
                parameter_space(space, 1, model="rspm" if model == "gaussian-rspm" else model)
        except (TypeError, ValueError) as exc:
            _fail(f"--space: {exc}")
        _check_option(check_work_limit, work_limit, "--work-limit")
    if model == "auto":
        from oracledp._cli_auto import saving_refusal

        if (refusal := saving_refusal()) is not None:
            _fail(refusal)
    return None


def fit_table(
    ctx: typer.Context,
    data: Annotated[Path, typer.Argument(help="Training table with the target: CSV (plain, gzip, zstd; a header line) or Parquet (a file, a directory or a glob).")],
    schema_path: Annotated[
        Path, typer.Option("--schema", help="Confirmed table schema (JSON).")
    ],
    out: Annotated[Path, typer.Option("--out", help="Directory for model.json and the plot.",
                                      file_okay=False)],
    model: Annotated[str, typer.Option(
        "--model", help=f"One of {', '.join(RECOMMENDED_MODELS)} (see `oracledp models`); "
                        "gaussian-rspm and opsamp are accepted too (`oracledp models --all`).")] = "opdisc",
    epsilon: Annotated[
        float | None,
        typer.Option("--epsilon", help=f"Privacy parameter (all models but accuracy-first); at "
                                       f"most {EPSILON_CAP:g} unless --allow-large-epsilon."),
    ] = None,
    delta: Annotated[
        float | None,
        typer.Option("--delta", help="delta for opdisc/gaussian-rspm/opsamp/dpsgd (default 1/n^2, n public)."),
    ] = None,
    alpha: Annotated[
        float, typer.Option("--alpha", help="accuracy-first: target excess logistic risk (see "
                                            "docs/choosing-a-model.md for small tables).")
    ] = 0.1,
    max_epsilon: Annotated[
        float | None, typer.Option(
            "--max-epsilon", help=f"accuracy-first: cap on the ex-post privacy loss; its grid "
                                  f"of levels ends there [default: {EPSILON_CAP:g}].")
    ] = None,
    allow_large_epsilon: Annotated[
        bool, typer.Option("--allow-large-epsilon",
                           help=f"Accept --epsilon or --max-epsilon above {EPSILON_CAP:g}.")
    ] = False,
    ignore_extra: Annotated[
        bool, typer.Option("--ignore-extra", help="Leave out data columns the schema does "
                                                  "not mention (refused otherwise).")
    ] = False,
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, help="Seed of the noise (not saved).")
    ] = None,
    solver: Annotated[str, typer.Option(
        "--solver", help="Oracle of opdisc/rspm/gaussian-rspm: the estimator's oracle= (see `oracledp solvers`)."
    )] = "highs",
    time_limit: Annotated[
        float | None, typer.Option(
            "--time-limit", help="Seconds per oracle call (opdisc/rspm/gaussian-rspm); given "
                                 "alone it replaces the default work limit, so whether a fit "
                                 "certifies then depends on the machine and its load.")
    ] = None,
    space: Annotated[str, typer.Option(
        "--space", help="Parameter space W of opdisc/rspm/gaussian-rspm (public): auto (a rule on d, the "
                        "encoded features: ||k||^2 <= min(d, 4); rspm keeps the box {-1,0,1}^d "
                        "for d <= 12), paper (the ICML 2020 W), or norm2=R[,bound=B] (see "
                        "docs/choosing-a-model.md).")] = "auto",
    work_limit: Annotated[
        int | None, typer.Option(
            "--work-limit", help="Deterministic work per oracle call (opdisc/rspm/gaussian-rspm; "
                                 "LPs + MIP nodes): whether a fit certifies is the same on "
                                 "every machine. Default (neither limit given): the oracle's "
                                 "own, about 1.5 minutes of a quiet 2-core machine. See "
                                 "docs/oracles.md.")
    ] = None,
    sep: Annotated[str, _SEP] = ",",
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite a model already saved in --out.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", help="Also print the fit's wall time in the summary (a "
                                             "NON-private diagnostic: it depends on the data).")
    ] = False,
    budget: Annotated[
        Path | None, typer.Option(
            "--budget", dir_okay=False,
            help="Privacy ledger (JSON you start as {\"total_epsilon\": E}, plus "
                 "\"total_delta\" for models with a delta): a fit that would exceed the total "
                 "is refused before DATA is read; each release is appended to it. See "
                 "docs/your-own-data.md.")
    ] = None,
    engine: Annotated[str, _ENGINE] = "duckdb",
    scheduler: Annotated[str | None, _SCHEDULER] = None,
) -> None:
    """Fit a private linear classifier on DATA with a confirmed schema; save model.json."""
    _check_model_options(ctx, model)
    if engine == "dask" and model not in _READ_AGGREGATED:
        _fail(f"--engine dask counts the table for the models fitted from its distinct rows "
              f"({', '.join(sorted(_READ_AGGREGATED))}); --model {model} reads every record")
    try:
        _fit(data, schema_path, out, model, epsilon, delta, alpha, max_epsilon,
             allow_large_epsilon, ignore_extra, seed, solver, time_limit, sep, force, verbose,
             budget, space=space, work_limit=work_limit, engine=engine, scheduler=scheduler)
    except KeyboardInterrupt:
        _interrupted()


def _fit(data: Path, schema_path: Path, out: Path, model: str, epsilon: float | None,
         delta: float | None, alpha: float, max_epsilon: float | None, allow_large: bool,
         ignore_extra: bool, seed: int | None, solver: str, time_limit: float | None, sep: str,
         force: bool, verbose: bool, budget: Path | None = None, *,
         space: str = "auto", work_limit: int | None = None, engine: str = "duckdb",
         scheduler: str | None = None) -> None:
    max_epsilon = _check_fit_options(model, epsilon, delta, alpha, max_epsilon, allow_large,
                                     solver, time_limit, space, work_limit)
    _check_out(out, force)  # before the data are read: a refused --out spends no budget
    if budget is not None:
        _read_budget(budget)  # a malformed ledger is refused before anything else is read
    schema = _load_schema(schema_path)
    try:  # what a Python user calls: the registry refuses an unconfirmed schema
        schema = model_schema(model, schema)
        opts: dict[str, Any] = (
            {"alpha": alpha, "max_epsilon": max_epsilon} if model == "accuracy-first"
            else {"oracle": solver, "time_limit": time_limit, "space": space,
                  "work_limit": work_limit} if model in _AGGREGATED_MODELS
            else {"oracle": solver, "time_limit": time_limit, "work_limit": work_limit}
            if model == "auto" else {})
        est = make_estimator(model, schema, None if model == "accuracy-first" else epsilon,
                             None if model in ("accuracy-first", "rspm") else delta,
                             random_state=seed, **opts)
    except (OracleDPError, ValueError) as exc:
        _fail(str(exc))
    declared = _declared(model, epsilon, delta, max_epsilon)
    k = schema.records_per_person
    if declared[1] is not None:  # before the data are read: a vacuous per-person statement
        _per_person_or_fail(declared[0], declared[1], k)
    run: dict[str, Any] = {}
    if budget is None:
        path, run = _fit_and_save(est, data, schema, out, model, sep, ignore_extra, solver,
                                  time_limit, force, None, declared, run, engine=engine,
                                  scheduler=scheduler)
        _report_fit(model, schema, est, run, path, out, verbose)
        return
    entry, local = _reserve_budget(budget, model, declared, k, data, out)
    try:
        path, run = _fit_and_save(est, data, schema, out, model, sep, ignore_extra, solver,
                                  time_limit, force, local, declared, run, engine=engine,
                                  scheduler=scheduler)
    except BaseException as exc:
        _settle_budget(budget, entry, local, declared, run, exc)
        raise
    ledger = _settle_budget(budget, entry, local, declared, run, None)
    _report_fit(model, schema, est, run, path, out, verbose)
    _print_budget(budget, ledger, local, k)


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
        _fail(f"--budget {budget}: {exc}; nothing was read or fitted")
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
        return None
    except (OSError, BudgetFileError) as exc2:
        why = exc2.strerror if isinstance(exc2, OSError) and exc2.strerror else str(exc2)
        if exc is None:
            _fail(f"--budget {budget}: the model was fitted but the ledger could not be "
                  f"updated ({why}); its declared budget stays charged")
        _warn(f"--budget {budget}: the ledger could not be updated ({why}); the fit's declared "
              "budget stays charged")
        return None


def _print_budget(budget: Path, ledger: Any, local: Any, k: int) -> None:
    if ledger is None:  # pragma: no cover - a successful fit always updates its entry
        return
    c = local.spends[0]
    eps, delta = ledger.spent
    left_eps, left_delta = ledger.remaining
    total_eps, total_delta = ledger.total
    k = local.records_per_person  # the schema's or the budget file's, the larger
    who = f" per person ({k} records)" if k > 1 else ""
    typer.echo(f"  budget {budget}: charged epsilon {c.epsilon:.4g}, delta {c.delta:.3g}{who}; "
               f"spent epsilon {eps:.4g} of {total_eps:g}, delta {delta:.3g} of "
               f"{total_delta:g} in {len(ledger.spends)} release(s); remaining epsilon "
               f"{left_eps:.4g}, delta {left_delta:.3g}")


def _fits_counted_rows(est: Any) -> bool:
    """Whether ``est.fit`` takes :class:`~oracledp.oracles._row_blocks.CountedRows` (the
    exact classifiers: the same problem as from the weighted rows, no float matrix)."""
    from oracledp.estimators._exact import ExactHalfspaceClassifier

    return isinstance(est, ExactHalfspaceClassifier)


def _fit_and_save(est: Any, data: Path, schema: Any, out: Path, model: str, sep: str,
                  ignore_extra: bool, solver: str, time_limit: float | None, force: bool,
                  accountant: Any, declared: tuple[float, float | None, str],
                  run: dict[str, Any] | None = None, *, engine: str = "duckdb",
                  scheduler: str | None = None) -> tuple[Path, dict[str, Any]]:
    """Read DATA, fit (reporting to ``accountant`` if any), save; ``run`` gets the counts."""
    run = {} if run is None else run
    if model in _READ_AGGREGATED:
        # the distinct encoded rows with their record counts: est.fit(X, y, sample_weight=...)
        with _clipping_on_stderr():
            table = _read_aggregated(data, schema, sep, model, ignore_extra, engine, scheduler)
        n_rows = table.n
        try:
            if _fits_counted_rows(est):  # decoded block by block inside the fit
                X, y, counts = table.counted_rows(), None, None
            else:
                X, y, counts = table.weighted_rows()
        except MemoryError:
            _fail(_out_of_memory(data, model))
        del table
    else:
        counts = None
        try:
            df = _read_table(data, schema, sep, with_target=True, ignore_extra=ignore_extra)
            y = schema.labels_of(df)
            with _clipping_on_stderr():
                X = schema.encode(df)
            del df
        except MemoryError:
            _fail(_out_of_memory(data, model))
        n_rows = X.shape[0]
    run["n_rows"], run["n_features"] = n_rows, schema.n_features
    if declared[1] is None and schema.records_per_person > 1:  # delta = 1/n^2, n now known
        _per_person_or_fail(declared[0], 1.0 / n_rows**2 if n_rows > 1 else 0.5,
                            schema.records_per_person)

    from oracledp.tabular import save_model

    err_console = Console(stderr=True)
    t0 = time.perf_counter()
    work_limit = getattr(est, "work_limit", None)  # the exact models' (None: the default)
    limit = (f" (oracle limit: {_limit_text(time_limit, work_limit)})"
             if model in _AGGREGATED_MODELS else "")
    try:
        # A live status on stderr: what runs and the elapsed time (the only data-dependent
        # item it shows; it disappears when the fit ends and is not saved).
        with Progress(SpinnerColumn(), TimeElapsedColumn(), TextColumn("{task.description}"),
                      console=err_console, transient=True,
                      disable=not err_console.is_terminal) as progress:
            progress.add_task(f"{limit.strip()} fitting {model}; Ctrl-C stops, writes nothing",
                              total=None)
            with accountant if accountant is not None else contextlib.nullcontext():
                run["fitting"] = True
                # the fit takes the matrix over (no reference stays here), so the exact
                # learners free it once they have encoded it
                held = [X]
                del X
                _run_interruptibly(lambda: est.fit(held.pop(), y) if counts is None
                                   else est.fit(held.pop(), y, sample_weight=counts))
        # the columns clipped to public bounds (declared, so public) go into the guarantee
        est.guarantee_ = schema.annotate_guarantee(est.guarantee_)
        with _NoInterrupt():
            out.mkdir(parents=True, exist_ok=True)
            path = save_model(out, model_type=model, schema=schema, estimator=est,
                              overwrite=force)
            coef = est.coef_.ravel()
            _coef_plot(out / "coefficients.png", schema.feature_names, coef,
                       f"{model}: {est.guarantee_.describe().split(';')[0]}")
    except OracleFailure as exc:  # the oracle could not certify an answer: nothing released
        _fail(_oracle_failure_message(model, solver, time_limit, exc, work_limit))
    except (OracleDPError, ValueError) as exc:
        _fail(f"the fit stopped: {exc}")
    except OSError as exc:  # e.g. --out not writable, or a model.json appeared meanwhile
        _fail(f"cannot write the model to {out}: {exc.strerror or exc}")
    except MemoryError:
        _fail(_out_of_memory(data, model, loading=False))
    run["seconds"] = time.perf_counter() - t0
    return path, run


def _report_fit(model: str, schema: Any, est: Any, run: dict[str, Any], path: Path, out: Path,
                verbose: bool) -> None:
    if model == "opsamp":
        _warn(OPSAMP_WARNING)
    _print_fit(Console(), model, schema, est, run["n_rows"], run["n_features"],
               run["seconds"] if verbose else None)
    Console().print(f"  wrote {path} and {out / 'coefficients.png'}", markup=False)


#: ``fit`` lists every coefficient when the schema has at most this many encoded features;
#: a wider table lists the nonzero ones and counts the zeros (model.json has them all).
_LIST_ALL_COEFFICIENTS = 20


def _print_fit(console: Console, model: str, schema: Any, est: Any, n_rows: int,
               n_features: int, fit_seconds: float | None) -> None:
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
        ("records per person", f"{k} (schema's records_per_person)"),
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
    if schema.clipping_note():
        console.print(f"  note: {schema.clipping_note()}", markup=False, highlight=False)
    if k > 1:
        console.print(f"  guarantee per person: {person.describe()}", markup=False,
                      highlight=False)


def _auto_rows(est: Any) -> list[tuple[str, str]]:
    from oracledp._cli_auto import summary_rows

    return summary_rows(est)



def models(
    data: Annotated[Path | None, typer.Argument(
        help="With --schema: your CSV, read only for its number of records n (checked "
             "against the schema as fit reads it).")] = None,
    all_models: Annotated[bool, typer.Option("--all", help="Also list models that are not "
                                                           "recommended (gaussian-rspm, opsamp).")] = False,
    schema_path: Annotated[Path | None, typer.Option(
        "--schema", help="Advice for this table: from its encoded features d, --epsilon, n "
                         "(with DATA) and the default W's size |W|; nothing else is read.")] = None,
    epsilon: Annotated[float | None, typer.Option(
        "--epsilon", help="The privacy parameter you mean to fit with (with --schema).")] = None,
    sep: Annotated[str, _SEP] = ",",
    ignore_extra: Annotated[
        bool, typer.Option("--ignore-extra", help="Leave out data columns the schema does "
                                                  "not mention (refused otherwise).")
    ] = False,
) -> None:
    """Which model to use for your table: in brief, or from its public facts with --schema."""
    if schema_path is not None or epsilon is not None or data is not None:
        from oracledp._cli_advice import print_advice

        print_advice(schema_path, epsilon, data, sep, ignore_extra)
        return
    lines = ["Which model (measured by benchmarks/your_tables.py on 5 public tables; numbers in "
             "docs/choosing-a-model.md):"]
    rows = [*MODEL_GUIDE, *([("gaussian-rspm", *GAUSSIAN_RSPM_NOTE),
                             ("opsamp", "not recommended", OPSAMP_WARNING)] if all_models
                            else [])]
    for name, when, why in rows:
        lines.append(f"  {name:<15} {when}: {why}")
    lines.append(f"fit refuses --epsilon above {EPSILON_CAP:g} unless --allow-large-epsilon; "
                 "accuracy-first's --max-epsilon defaults to the same cap.")
    lines.append("For your table (from d, n, epsilon and |W| only): oracledp models --schema S "
                 "--epsilon E [DATA]")
    typer.echo("\n".join(lines))


def export_sample(
    name: Annotated[str, typer.Argument(help="adult or kdd99.")],
    out: Annotated[Path, typer.Argument(help="CSV file to write.")],
    n: Annotated[int, typer.Option("--n", min=1, help="Number of records.")] = 2000,
    split: Annotated[str, typer.Option("--split", help="adult: train or test.")] = "train",
    seed: Annotated[int, typer.Option("--seed", min=0, help="Sampling seed.")] = 0,
) -> None:
    """Write a small raw CSV sample of a bundled dataset (a stand-in for your own table)."""
    from oracledp.datasets import adult_csv, kdd99_csv

    try:
        if name == "adult":
            path = adult_csv(out, n=n, split=split, random_state=seed)
        elif name == "kdd99":
            if split != "train":
                _fail("kdd99 has a single file: --split does not apply")
            path = kdd99_csv(out, n=n, random_state=seed)
        else:
            _fail(f"unknown sample {name!r}: choose adult or kdd99")
    except ValueError as exc:
        _fail(str(exc))
    typer.echo(f"wrote {n:,} records to {path}")


def register(app: typer.Typer) -> None:
    """Add these commands to the ``oracledp`` app."""
    app.add_typer(schema_app, name="schema")
    schema_app.command("infer")(schema_infer)
    schema_app.command("check")(schema_check)
    app.command("fit")(fit_table)
    from oracledp._cli_predict import evaluate_table, predict_table

    app.command("predict")(predict_table)
    app.command("evaluate")(evaluate_table)
    app.command("models")(models)
    app.command("export-sample")(export_sample)
