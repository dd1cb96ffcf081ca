"""``oracledp fit | models | export-sample`` and what the table commands share.

``schema infer | check`` are in :mod:`oracledp._cli_schema`, ``predict | evaluate`` in
:mod:`oracledp._cli_predict`; the fit's ledger (``--budget``) in :mod:`oracledp._cli_budget` and
its printed summary in :mod:`oracledp._cli_fit_report`.

The commands parse options, call :mod:`oracledp.tabular` and print; see docs/your-own-data.md.
Every refusal is one ``error: ...`` line on stderr with exit code 2, decided from public
parameters and the schema before any randomness; no message prints a record value or a row.
"""

from __future__ import annotations

import contextlib
import re
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

from oracledp._errors import OracleDPError, OracleFailure
from oracledp._guidance import (
    EPSILON_CAP,
    GAUSSIAN_RSPM_NOTE,
    MODEL_GUIDE,
    OPSAMP_WARNING,
    RECOMMENDED_MODELS,
    check_epsilon_cap,
    check_person_cap,
)
from oracledp._registry import EXACT_MODELS, check_model_name, make_estimator, model_schema
from oracledp._validation import check_delta, check_epsilon, check_positive, check_sep

schema_app = typer.Typer(help="Table schemas for your own CSV (see docs/your-own-data.md).",
                         no_args_is_help=True)


#: Exit code of a fit stopped by Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130


def _fail(message: str) -> NoReturn:
    """One plain paragraph on stderr (no markup, no traceback), exit code 2."""
    _error(message)
    raise typer.Exit(2)


def _reader_closed() -> NoReturn:
    """stdout's reader closed the pipe (``| head``: it has what it wanted): exit 0 quietly,
    with stdout pointed at /dev/null so that the interpreter's last flush cannot fail."""
    import os
    import sys

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    raise typer.Exit(0)


def _error(message: str) -> None:
    """One ``error:`` line on stderr, in the command line's words (the library's delimiter
    hint names the option)."""
    message = str(message).replace("try sep=", "try --sep ")
    typer.echo(f"error: {' '.join(message.split())}", err=True)


def _warn(message: str) -> None:
    typer.echo(f"warning: {' '.join(str(message).split())}", err=True)


@contextlib.contextmanager
def _clipping_on_stderr(prefix: str = "warning") -> Iterator[None]:
    """The library's ClippedValuesWarning (columns clipped as the schema declares) as one
    ``warning:`` (or ``prefix:``) line on stderr, printed once the block is done (even if it
    fails); the same message issued again (e.g. by a second read) is printed once."""
    from oracledp._errors import ClippedValuesWarning

    others: list[Any] = []
    said: set[str] = set()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ClippedValuesWarning)
            try:
                yield
            finally:
                for w in caught:
                    if issubclass(w.category, ClippedValuesWarning):
                        if str(w.message) not in said:
                            said.add(str(w.message))
                            typer.echo(f"{prefix}: {' '.join(str(w.message).split())}",
                                       err=True)
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


def _naming(path: Path, exc: BaseException) -> str:
    """The message of a refusal to read ``path``, naming the file once."""
    return f"{path}: {exc}" if str(path) not in str(exc) else str(exc)


@contextmanager
def _reading_or_failing(path: Path) -> Iterator[Any]:
    """:func:`_reading`, with a refusal of DATA (OracleDPError or ValueError) turned into one
    error line naming the file (:func:`_fail`, exit 2)."""
    try:
        with _reading(path) as report:
            yield report
    except (OracleDPError, ValueError) as exc:
        _fail(_naming(path, exc))


def _read_table(path: Path, schema: Any, sep: str, with_target: bool, *,
                ignore_extra: bool = True, check: bool = True) -> Any:
    from oracledp.tabular import read_csv

    with _reading_or_failing(path) as report:
        return read_csv(path, schema, sep=sep, with_target=with_target,
                        ignore_extra=ignore_extra, check=check, verbose=report)


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


def _left_out(data: Path, schema: Any, sep: str) -> list[str]:
    """The data's columns that ``--ignore-extra`` left out (not in the schema), by the data
    engine's reading of the header (CSV, Parquet, a directory or glob); [] where the header
    cannot be read again.  Names of columns, never a value (sweep 11: the flag said
    nothing of what it dropped, so a misspelt column went unnoticed)."""
    from oracledp.tabular._sources import _open, connect

    try:
        con = connect(1)
        try:
            header = _open(con, str(data), sep).header
        finally:
            con.close()
    except Exception:  # the fit read it; a second reading that fails says nothing
        return []
    known = {c.name for c in schema.columns} | ({schema.target} if schema.target else set())
    return [h for h in header if h not in known]


def _read_aggregated(path: Path, schema: Any, sep: str, model: str, ignore_extra: bool,
                     engine: str = "duckdb", scheduler: str | None = None) -> Any:
    """DATA read in one pass into its distinct encoded rows and label counts (exit 2 if
    bad)."""
    from oracledp.tabular import read_aggregated

    try:
        with _reading_or_failing(path) as report:
            return read_aggregated(path, schema, sep=sep, ignore_extra=ignore_extra,
                                   verbose=report, engine=engine, scheduler=scheduler)
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
_IGNORE_EXTRA = typer.Option("--ignore-extra", help="Leave out data columns the schema does not "
                                                    "mention (refused otherwise).")


def _engine(value: str) -> str:
    if value not in ("duckdb", "dask"):
        raise typer.BadParameter(f"must be 'duckdb' or 'dask', got {value!r}")
    return value


_ENGINE = typer.Option("--engine", callback=_engine,
                       help="Data engine of the reading pass: duckdb (default, this machine) "
                            "or dask (a Dask cluster: docs/cluster.md); the same counts and "
                            "the same release either way.")
_ENGINE_CHECK = typer.Option("--engine", callback=_engine,
                             help="Data engine of the checking pass: duckdb (default, this "
                                  "machine) or dask (a Dask cluster: docs/cluster.md); the "
                                  "same problems found either way.")
_SCHEDULER = typer.Option("--scheduler", metavar="ADDRESS",
                          help="With --engine dask only (refused otherwise): the address of a "
                               "running Dask scheduler (e.g. tcp://host:8786); default a local "
                               "cluster.")


def _check_scheduler(engine: str, scheduler: str | None) -> None:
    """Refuse (exit 2) --scheduler without --engine dask (it would be ignored)."""
    if scheduler is not None and engine != "dask":
        _fail(f"--scheduler applies to --engine dask only (the address of its Dask "
              f"scheduler), and the engine is {engine}: add --engine dask, or leave "
              "--scheduler out")




_OUT_FILES = ("model.json", "coefficients.png")


def _check_out_writable(out: Path) -> None:
    """Refuse (exit 2) an --out directory that cannot be created or written, before any data
    are read: a path component that is a file, or a nearest existing directory in which no
    entry can be made (checked by making and removing an empty directory there, so the
    check holds for root and read-only file systems too; nothing is left behind)."""
    import os
    import tempfile

    if out.exists() and not out.is_dir():
        _fail(f"--out {out} exists and is not a directory")
    existing = Path(os.path.abspath(out))
    while not (existing.exists() or existing.is_symlink()):  # the nearest existing ancestor
        existing = existing.parent
    if not existing.is_dir():
        _fail(f"--out {out}: {existing} is not a directory, so --out cannot be created; "
              "nothing was read or fitted")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".oracledp-out-check-", dir=existing))
    except OSError as exc:
        where = "write in it" if existing == Path(os.path.abspath(out)) else (
            f"create it in {existing}")
        _fail(f"--out {out}: cannot {where} ({exc.strerror or exc}); nothing was read or "
              "fitted")


def _out_path(text: str, what: str, nothing: str) -> Path:
    """``--out`` as given: an empty path (or spaces only) is refused (it would name the
    current directory, or a directory of spaces)."""
    if not text.strip():
        _fail(f"--out is empty: give {what}; {nothing}")
    return Path(text)


def _check_out(out: Path, force: bool) -> None:
    """Refuse (exit 2) an --out that cannot be created or written, or that already holds a
    saved model (unless --force)."""
    _check_out_writable(out)
    present = [name for name in _OUT_FILES if (out / name).exists()]
    if present and not force:
        _fail(f"--out {out} already holds {' and '.join(present)}; nothing was fitted. Choose "
              "another --out directory, or pass --force to overwrite the saved model.")


def _interrupted() -> NoReturn:
    typer.echo("interrupted: the fit was stopped by Ctrl-C; nothing was released or written.",
               err=True)
    raise typer.Exit(EXIT_INTERRUPTED)


#: Seconds between the progress lines ``fit`` and ``synth fit`` print when stderr is not a
#: terminal (on a terminal: a live status).
_HEARTBEAT_SECONDS = 30.0


@contextmanager
def _heartbeat_lines(what: str, every: float) -> Iterator[None]:
    """While the block runs, the line ``what: N s elapsed`` on stderr every ``every`` seconds,
    for a stderr that is not a terminal: a log shows the fit is alive (wall time only, never
    saved or released; a fit that ends, or is refused, within the first interval prints
    none, so a refusal stays one ``error:`` line)."""
    stop = threading.Event()
    start = time.monotonic()

    def beat() -> None:
        while not stop.wait(every):
            typer.echo(f"{what}: {time.monotonic() - start:.0f} s elapsed", err=True)

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


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
        from oracledp.learners._certify import _UNWEIGHTED_BACKENDS

        if model in ("rspm", "gaussian-rspm") and solver in _UNWEIGHTED_BACKENDS:
            _fail(f"--solver {solver} works for --model opdisc only: --model {model} needs a "
                  "weighted oracle (--solver highs or brute)")
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
    return None


def fit_table(
    ctx: typer.Context,
    data: Annotated[Path, typer.Argument(help="Training table with the target: CSV (plain, gzip, zstd; a header line) or Parquet (a file, a directory or a glob).")],
    schema_path: Annotated[
        Path, typer.Option("--schema", help="Confirmed table schema (JSON).")
    ],
    out_text: Annotated[str, typer.Option("--out", help="Directory for model.json and the plot.")],
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
        typer.Option("--delta", help="delta for opdisc/gaussian-rspm/opsamp/dpsgd/auto (default 1/n^2, n "
                                     "public)."),
    ] = None,
    alpha: Annotated[
        float, typer.Option("--alpha", help="accuracy-first: target excess logistic risk (see "
                                            "docs/choosing-a-model.md for small tables).")
    ] = 0.1,
    max_epsilon: Annotated[
        float | None, typer.Option(
            "--max-epsilon", help=f"accuracy-first: cap on the ex-post privacy loss; its grid "
                                  f"of levels ends there (default: {EPSILON_CAP:g}).")
    ] = None,
    allow_large_epsilon: Annotated[
        bool, typer.Option("--allow-large-epsilon",
                           help=f"Accept --epsilon or --max-epsilon above {EPSILON_CAP:g}.")
    ] = False,
    ignore_extra: Annotated[bool, _IGNORE_EXTRA] = False,
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, help="Seed of the noise (not saved).")
    ] = None,
    solver: Annotated[str, typer.Option(
        "--solver", help="Oracle of opdisc/rspm/gaussian-rspm/auto: the estimator's oracle= (see "
                         "`oracledp solvers`). highs (default) and brute work for every one of "
                         "them; highs-monolithic and cpsat for opdisc only (rspm and "
                         "gaussian-rspm refuse them, and so does auto when the exact model it "
                         "tries is not opdisc)."
    )] = "highs",
    time_limit: Annotated[
        float | None, typer.Option(
            "--time-limit", help="Seconds per oracle call (opdisc/rspm/gaussian-rspm/auto); given "
                                 "alone it replaces the default work limit, so whether a fit "
                                 "certifies then depends on the machine and its load.")
    ] = None,
    space: Annotated[str, typer.Option(
        "--space", help="Parameter space W of opdisc/rspm/gaussian-rspm (public): auto (a rule on d, the "
                        "encoded features: ||k||^2 <= min(d, 4), lowered where the schema's "
                        "columns not declared 0/1 would make W too large to search; rspm keeps "
                        "the box {-1,0,1}^d for d <= 12; for opdisc then moved by its noise at "
                        "n, epsilon and delta: down to 1 on small tables at small epsilon, up to "
                        "5 on large ones), paper (the ICML 2020 W), or norm2=R[,bound=B] (see "
                        "docs/choosing-a-model.md).")] = "auto",
    work_limit: Annotated[
        int | None, typer.Option(
            "--work-limit", help="Deterministic work per oracle call (opdisc/rspm/gaussian-rspm/"
                                 "auto; "
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
    out = _out_path(out_text, "a directory for the model", "nothing was fitted")
    _check_model_options(ctx, model)
    _check_scheduler(engine, scheduler)
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
    from oracledp._cli_budget import (
        _declared,
        _per_person_or_fail,
        _persons,
        _print_budget,
        _read_budget,
        _reserve_budget,
        _settle_budget,
    )
    from oracledp._cli_fit_report import _report_fit

    given_cap = max_epsilon
    max_epsilon = _check_fit_options(model, epsilon, delta, alpha, max_epsilon, allow_large,
                                     solver, time_limit, space, work_limit)
    _check_out(out, force)  # before the data are read: a refused --out spends no budget
    if budget is not None:
        _read_budget(budget)  # a malformed ledger is refused before anything else is read
    loaded = _load_schema(schema_path)
    schema = _persons(loaded, budget)
    persons_source = ("schema's" if schema.records_per_person == loaded.records_per_person
                      else "the --budget file's")
    if model == "accuracy-first" and given_cap is None and schema.records_per_person > 1:
        max_epsilon = EPSILON_CAP / schema.records_per_person  # the cap holds per person
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
    message = check_person_cap(declared[0], k, "--max-epsilon" if model == "accuracy-first"
                               else "--epsilon", allow_large)
    if message:
        _fail(message)
    if declared[1] is not None:  # before the data are read: a vacuous per-person statement
        _per_person_or_fail(declared[0], declared[1], k)
    run: dict[str, Any] = {"persons_source": persons_source}
    if model == "accuracy-first" and given_cap is None and k > 1:
        run["cap_note"] = (
            f" (--max-epsilon was not given: it is the cap of {EPSILON_CAP:g} per person, "
            f"{max_epsilon:.6g} per record for records_per_person {k}; a larger one is given "
            "with --max-epsilon, and above 10 per person with --allow-large-epsilon too)")
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
    _print_budget(budget, ledger, local, k, entry)


#: The accuracy-first search's Python words, as ``fit`` names them (its refusals come from
#: :mod:`oracledp.erm`, written for a Python caller).
_ACCURACY_FIRST_WORDS = (
    (re.compile(r"^(outputnr|doubling): "), "accuracy-first: "),
    (re.compile(r"\bmax_epsilon( =)?"), "--max-epsilon"),
    (re.compile(r"\balpha( =)?(?= \d)"), "--alpha"),
    (re.compile(r"\b(Raise|raise) --max-epsilon or alpha\b"), r"\1 --max-epsilon or --alpha"),
    (re.compile(r"\b(Raise|raise) alpha\b"), r"\1 --alpha"),
    (re.compile(r"Use a larger eps_max or alpha, or pass allow_no_halt=True[^.]*\."),
     "Use a larger --max-epsilon or --alpha, or more records (a release with no guarantee "
     "is not offered)."),
)


def _in_options(text: str) -> str:
    """An accuracy-first refusal in ``fit``'s option names."""
    for pattern, words in _ACCURACY_FIRST_WORDS:
        text = pattern.sub(words, text)
    return text


def _too_small(data: Path, model: str, default_delta: bool) -> str:
    """The refusal of a table of fewer than 2 records, saying what refuses it (no count)."""
    why = ("the default --delta 1/n^2 is then not below 1, not a valid delta; give --delta "
           "below 1, or fit on a larger table" if default_delta else
           f"--model {model}{' (which takes no delta)' if model == 'rspm' else ''} needs at "
           "least 2 records; fit on a larger table")
    return (f"{data} has fewer than 2 records, too small for --model {model}: {why}; nothing "
            "was fitted or released")


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
    from oracledp._cli_budget import _per_person_or_fail
    from oracledp._cli_fit_report import _coef_plot, _limit_text, _oracle_failure_message

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
    run["default_delta"] = declared[1] is None
    if n_rows < 2:  # before any noise: the default delta 1/n^2 is 1 at n = 1
        _fail(_too_small(data, model, declared[1] is None))
    if declared[1] is None and schema.records_per_person > 1:  # delta = 1/n^2, n now known
        _per_person_or_fail(declared[0], 1.0 / n_rows**2, schema.records_per_person)

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
            lines = (contextlib.nullcontext() if err_console.is_terminal else
                     _heartbeat_lines(f"fit --model {model}: fitting", _HEARTBEAT_SECONDS))
            with lines, accountant if accountant is not None else contextlib.nullcontext():
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
        said = _in_options(str(exc)) if model == "accuracy-first" else str(exc)
        _fail(f"the fit stopped: {said}"
              + (run.get("cap_note", "") if "--max-epsilon" in said else ""))
    except OSError as exc:  # e.g. --out not writable, or a model.json appeared meanwhile
        _fail(f"cannot write the model to {out}: {exc.strerror or exc}")
    except MemoryError:
        _fail(_out_of_memory(data, model, loading=False))
    run["seconds"] = time.perf_counter() - t0
    return path, run



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
    delta: Annotated[float | None, typer.Option(
        "--delta", help="The delta you mean to fit with (with --schema and DATA; default "
                        "1/n^2, as fit's): opdisc's W is sized at it, as fit sizes it.")] = None,
    sep: Annotated[str, _SEP] = ",",
    ignore_extra: Annotated[bool, _IGNORE_EXTRA] = False,
) -> None:
    """Which model to use for your table: in brief, or from its public facts with --schema."""
    if schema_path is not None or epsilon is not None or data is not None or delta is not None:
        from oracledp._cli_advice import print_advice

        print_advice(schema_path, epsilon, data, sep, ignore_extra, delta)
        return
    lines = ["Which model (measured by benchmarks/your_tables.py on 5 public tables; numbers in "
             "docs/choosing-a-model.md):"]
    rows = [*MODEL_GUIDE, *([("gaussian-rspm", *GAUSSIAN_RSPM_NOTE),
                             ("opsamp", "not recommended", OPSAMP_WARNING)] if all_models
                            else [])]
    for name, when, why in rows:
        lines.append(f"  {name:<15} {when}: {why}")
    lines.append(f"fit refuses --epsilon above {EPSILON_CAP:g} per person unless "
                 "--allow-large-epsilon; accuracy-first's --max-epsilon defaults to the same "
                 "cap.")
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
    from oracledp._cli_schema import schema_check, schema_infer

    app.add_typer(schema_app, name="schema")
    schema_app.command("infer")(schema_infer)
    schema_app.command("check")(schema_check)
    app.command("fit")(fit_table)
    from oracledp._cli_predict import evaluate_table, predict_table

    app.command("predict")(predict_table)
    app.command("evaluate")(evaluate_table)
    app.command("models")(models)
    app.command("export-sample")(export_sample)
