"""``oracledp synth fit | sample | evaluate``: private synthetic data for your own table.

The commands parse options, call :class:`oracledp.synth.TableSynthesizer` and
:func:`oracledp.synth.evaluate_synthetic`, and print; see docs/synthetic-data.md.  Every
refusal is one ``error: ...`` line on stderr with exit code 2, decided before any
randomness; no message prints a record value, a row or a count.
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from oracledp._cli_budget import (
    _default_delta_note,
    _delta_note,
    _per_person_or_fail,
    _persons,
    _print_budget,
    _read_budget,
    _reserve_budget,
    _settle_budget,
)
from oracledp._cli_table import (
    _ENGINE,
    _HEARTBEAT_SECONDS,
    _IGNORE_EXTRA,
    _SCHEDULER,
    _SEP,
    _check_option,
    _check_out_writable,
    _check_scheduler,
    _clipping_on_stderr,
    _fail,
    _heartbeat_lines,
    _interrupted,
    _left_out,
    _load_schema,
    _naming,
    _out_path,
    _reader_closed,
    _reading,
    _sep,
)
from oracledp._errors import OracleDPError
from oracledp._guidance import EPSILON_CAP, check_epsilon_cap, check_person_cap

synth_app = typer.Typer(help="Private synthetic data for your own table (see "
                             "docs/synthetic-data.md).", no_args_is_help=True)

#: Most records ``synth sample --rows`` writes (a 10-billion-row CSV is not a sample).
_MAX_ROWS = 10**9

_METHOD_HELP = ("oracle-query-pgm (default), mst, aim, mwem or independent (pure epsilon-DP); "
                "mwem is a baseline, whose columns can come out far from the data's.")

class TimeLimitExpired(BaseException):
    """``synth fit --time-limit`` expired (a BaseException, like Ctrl-C: no library code may
    catch it and carry on; a budget ledger's status names it)."""


def _bins_option(value: str | None) -> Any:
    """``--bins``: a count for every gridded numeric column, or ``col=4,col2=10:20`` entries."""
    if value is None:
        return None
    text = value.strip()
    try:
        if "=" not in text:
            return int(text)
        out: dict[str, Any] = {}
        for part in _bins_entries(text):
            name, _, spec = part.rpartition("=")  # (a spec holds no "=", a name may)
            if not name.strip() or not spec.strip():
                raise ValueError
            spec = spec.strip()
            if name.strip() in out:
                raise typer.BadParameter(f"column {name.strip()!r} is given twice in --bins")
            cuts = spec.split(":")
            if ":" in spec and cuts[-1] == "":  # "c=0.5:": one cut point
                cuts = cuts[:-1]
            if ":" in spec and (not cuts or "" in cuts):
                raise ValueError
            out[name.strip()] = [float(x) for x in cuts] if ":" in spec else int(spec)
        return out
    except ValueError:
        raise typer.BadParameter(f"expected a count (e.g. 10) or column=count / column=c1:c2:... "
                                 f"(one cut point: column=c1:) entries separated by commas, got "
                                 f"{value!r}") from None


def _bins_entries(text: str) -> list[str]:
    """``--bins``'s COL=SPEC entries: split at the commas, where a piece with no ``=`` is part
    of the next entry's column name (a spec never holds a comma), so a column named
    ``"income, net"`` is given as ``income, net=4``."""
    entries, name = [], ""
    for piece in text.split(","):
        if "=" in piece:
            entries.append(name + piece)
            name = ""
        else:
            name += piece + ","
    if name:
        raise ValueError  # a trailing piece with no "="
    return entries


_BINS_SPEC = ("a count for those whose schema entry has no \"synth_bins\", or COL=COUNT / "
              "COL=C1:C2:... (cut points, COL=C1: for one; overrides synth_bins), comma "
              "separated (a name with a comma is written as it is: 'income, net=4').")
_BINS = typer.Option("--bins", help="Coarse bins of gridded numeric columns: " + _BINS_SPEC
                     + " Default: a count chosen from n and the budget.")
_BINS_EVAL = typer.Option("--bins", help="Bins to measure on, written as for `synth fit`; "
                          "a count is cut in equal shares of each column's grid (as `synth "
                          "fit --bin-edges equal-width` cuts it; the fit's default cuts at "
                          "private quantiles are in its model: give --model for the fit's "
                          "own bins): " + _BINS_SPEC + " Default: 10.")


def synth_fit(
    data: Annotated[Path, typer.Argument(help="The table (with its target, if the schema has one): CSV (plain, gzip, zstd) or Parquet (a file, a directory or a glob).")],
    schema_path: Annotated[Path, typer.Option("--schema", help="Confirmed table schema (JSON).")],
    epsilon: Annotated[float, typer.Option("--epsilon", help=f"Privacy budget; at most "
                                                             f"{EPSILON_CAP:g} unless "
                                                             "--allow-large-epsilon.")],
    out_text: Annotated[str, typer.Option("--out", help="Directory for the released model.")],
    delta: Annotated[float | None, typer.Option(
        "--delta", help="delta (default 1/n^2, n public) for methods that need one.")] = None,
    method: Annotated[str, typer.Option("--method", help=_METHOD_HELP)] = "oracle-query-pgm",
    seed: Annotated[int | None, typer.Option("--seed", min=0,
                                             help="Seed of the noise (not saved).")] = None,
    bins: Annotated[str | None, _BINS] = None,
    bin_edges: Annotated[str, typer.Option(
        "--bin-edges", help="Where the coarse bins of a numeric column are cut: 'quantiles' "
                            "(default: at its private quantiles, from the private fine "
                            "histogram the fit measures anyway) or 'equal-width' (equal "
                            "shares of the grid); cut points given in --bins/synth_bins are "
                            "kept.")] = "quantiles",
    sep: Annotated[str, _SEP] = ",",
    allow_large_epsilon: Annotated[bool, typer.Option(
        "--allow-large-epsilon", help=f"Accept --epsilon above {EPSILON_CAP:g}.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite a model already in "
                                                        "--out.")] = False,
    ignore_extra: Annotated[bool, _IGNORE_EXTRA] = False,
    budget: Annotated[Path | None, typer.Option(
        "--budget", dir_okay=False,
        help="Privacy ledger shared with `oracledp fit` (JSON you start as "
             "{\"total_epsilon\": E, \"total_delta\": D}): a fit that would exceed it is "
             "refused before DATA is read; the release is appended to it.")] = None,
    time_limit: Annotated[float | None, typer.Option(
        "--time-limit", help="Stop the fit after this many seconds (reading included): "
                             "nothing is released; a fit stopped after its mechanism "
                             "started stays charged under --budget.")] = None,
    engine: Annotated[str, _ENGINE] = "duckdb",
    scheduler: Annotated[str | None, _SCHEDULER] = None,
) -> None:
    """Fit a private synthetic-data model on DATA with a confirmed schema; save it to --out.

    Progress goes to stderr: a spinner on a terminal, else a line every 30 s while the fit
    runs (wall time only: shown to you, never saved or released)."""
    from oracledp._validation import check_delta, check_epsilon
    from oracledp.synth import TableDomain, TableSynthesizer
    from oracledp.synth._table_synthesizer import MODEL_FILE, RELEASE_FILE

    _check_option(check_epsilon, epsilon, "--epsilon")  # the option named, as by `fit`
    _check_scheduler(engine, scheduler)
    if time_limit is not None and not (math.isfinite(time_limit) and time_limit > 0):
        _fail("--time-limit must be a finite number of seconds > 0")
    message = check_epsilon_cap(epsilon, "--epsilon", allow_large_epsilon)
    if message:
        _fail(message)
    if delta is not None:
        _check_option(check_delta, delta, "--delta")
    bins_spec = _bins_option(bins)
    if bin_edges not in ("quantiles", "equal-width"):
        _fail(f"--bin-edges must be 'quantiles' or 'equal-width', got {bin_edges!r}")
    syn = TableSynthesizer(method, epsilon=epsilon, delta=delta, random_state=seed,
                           bins="auto" if bins_spec is None else bins_spec, sep=sep,
                           bin_edges=bin_edges, ignore_extra=ignore_extra, engine=engine,
                           scheduler=scheduler)
    try:
        _, needs_delta = syn._check_params()
    except (ValueError, TypeError) as exc:
        _fail(str(exc))
    out = _out_path(out_text, "a directory for the model", "nothing was fitted")
    _check_out_writable(out)  # before the data are read: a refused --out spends no budget
    present = [f for f in (MODEL_FILE, RELEASE_FILE) if (out / f).exists()]
    _refuse_overwrite(f"--out {out} already holds {' and '.join(present)}", bool(present),
                      force, "nothing was fitted", "another --out directory")
    if budget is not None:
        _read_budget(budget)  # a malformed ledger is refused before anything else is read
    schema = _persons(_load_schema(schema_path), budget)
    try:
        schema.check_confirmed()
        tdom = TableDomain(schema, syn.bins)
    except (OracleDPError, ValueError, TypeError) as exc:
        _fail(str(exc))
    k = schema.records_per_person
    message = check_person_cap(epsilon, k, "--epsilon", allow_large_epsilon)
    if message:
        _fail(message)
    declared = ((epsilon, delta, "approximate") if needs_delta
                else (epsilon, 0.0, "pure"))
    if declared[1] is not None:  # before the data are read: a vacuous per-person statement
        _per_person_or_fail(declared[0], declared[1], k)
    run: dict[str, Any] = {}
    entry: Any = ("", None)
    local: Any = None
    run["time_limit"] = time_limit
    if budget is None:
        _fit(syn, data, schema, tdom, None, run)
    else:
        if declared[1] is None:
            _fail(f"--budget needs --delta for --method {method}: its default 1/n^2 depends "
                  "on the number of records, which is read only after the budget is checked; "
                  "nothing was read or fitted")
        entry, local = _reserve_budget(budget, f"synth {method}", declared, k, data, out,
                                       zcdp=needs_delta)
        try:
            _fit(syn, data, schema, tdom, local, run)
        except BaseException as exc:
            _settle_budget(budget, entry, local, declared, run, exc)
            raise
    try:
        path = syn.save(out)
    except OSError as exc:
        if budget is not None:
            _settle_budget(budget, entry, local, declared, run, exc)
        _fail(f"cannot write the model to {out}: {exc.strerror or exc}")
    ledger = (None if budget is None
              else _settle_budget(budget, entry, local, declared, run, None))
    fitted = syn.table_domain_
    d = len(fitted.domain)
    typer.echo(f"oracledp synth fit --method {method}: {d} column{'s' if d != 1 else ''} "
               f"({', '.join(f'{a.name} {len(a.labels)}' for a in fitted.attrs)} levels/bins), "
               f"{fitted.domain.size:,} cells in the model's domain")
    plan = getattr(syn, "plan_", None) or {}
    if plan.get("summary"):
        typer.echo(f"what the budget affords: {plan['summary']}")
    numeric = getattr(syn, "numeric_", None) or {}
    loud: list[str] = []  # columns whose histogram is mostly noise (said once, below)
    sds: dict[str, float] = {}
    if numeric.get("columns"):
        share = (f"rho {numeric['rho_each']:.4g} each" if "rho_each" in numeric
                 else f"epsilon {numeric['epsilon_each']:.4g} each")
        typer.echo(f"numeric columns at fine resolution: {', '.join(numeric['columns'])} "
                   f"(private histograms, {share}; the method ran at epsilon "
                   f"{numeric['method_epsilon']:.4g}); coarse bins: "
                   + _bins_sources(syn, schema, bins_spec, numeric["columns"]))
        sds = numeric.get("node_sd") or {}
        if sds and getattr(syn, "n_", None):  # n public under replace-one neighbours
            typer.echo("  noise of each node of those histograms (a range of the column's "
                       "values; standard deviation, in records and as a share of them): "
                       + ", ".join(f"{name} {sd:.3g} ({_percent_text(100 * sd / syn.n_)} %)"
                                   for name, sd in sds.items())
                       + "; ranges holding fewer records than about twice that (a heap, a "
                       "thin tail, the data's edge) cannot be told from noise")
            loud = [name for name, sd in sds.items() if sd / syn.n_ >= NOISY_NODE_SHARE]
            if (not loud and not plan.get("independent_note")
                    and max(sds.values()) / syn.n_ >= CAUTION_NODE_SHARE):
                typer.echo(f"note: each node carries noise of "
                           f"{_percent_text(100 * CAUTION_NODE_SHARE)} % of the records or "
                           "more: the numeric columns' shapes at the data's own resolution "
                           "can be off by several percent, and exact independent marginals "
                           "of the real rows (not private; synth evaluate reports them) may "
                           "come closer than this release")
            if loud:
                typer.echo(f"note: {', '.join(loud)}: each node of the private histogram "
                           f"carries noise of {_percent_text(100 * NOISY_NODE_SHARE)} % of the "
                           "records or more; the column's shape is mostly noise at this "
                           "budget: synthetic values can spread over its declared range, "
                           "far past the data's (synth evaluate shows how far). A larger "
                           "epsilon, fewer numeric columns or bounds that fit the data help.")
    from oracledp.synth._numeric import FINE_BINS
    from oracledp.tabular._columns import number_text

    wide = [(c.name, (c.K + 1) * c.step / FINE_BINS, _low_text(c)) for c in schema.columns
            if c.name in (numeric.get("columns") or ()) and c.step is not None
            and c.K + 1 > FINE_BINS]
    if wide:
        typer.echo(f"note: a grid of more than {FINE_BINS:,} points is measured in "
                   f"{FINE_BINS:,} equal shares of its declared range, with its round values "
                   "(multiples of a power of 10) as bins of their own and narrower bins near "
                   "its lower bound ("
                   + ", ".join(f"{name}: {low}shares about {w:.3g} wide"
                               for name, w, low in wide)
                   + "); values are drawn evenly within a bin. Declared bounds that fit the "
                   "column measure it more finely.")
    attrs = {a.name: a for a in syn.table_domain_.attrs}
    for name, ranges in (numeric.get("emptied") or {}).items():
        where = " and ".join(f"{number_text(lo)} to {number_text(hi)}" for lo, hi in ranges)
        advice = ("" if any(name == w for w, _, _ in wide) else
                  " Declared bounds that fit the column measure it more finely.")
        if name in loud:  # its shape is noise (said above): where noise ended says nothing
            continue
        a = attrs[name]
        inside = sum(1 for f, g in zip(a.first, a.last, strict=True)
                     if any(lo <= a.lower + f * a.step and a.lower + g * a.step <= hi
                            for lo, hi in ranges))
        drawn = ("no synthetic value is drawn there" if not inside else
                 f"no synthetic value is drawn there but the records the model gives to the "
                 f"{inside} declared or equal-width bin(s) lying wholly inside it, each at "
                 "its edge nearest the data")
        thin = (f" Real values there, fewer in all than about twice the node noise "
                f"({2 * sds[name]:.3g} records), could not be told from it: a thin real tail "
                "is cut, and with it its share of a total." if name in sds else "")
        typer.echo(f"note: {name}: the private histogram held no more than its noise from "
                   f"{where}, far beyond the rest of its values; {drawn} (post-processing)."
                   f"{thin}{advice}")
    typer.echo("guarantee of the released model:")
    for line in syn.guarantee_lines():
        typer.echo(f"  {line}")
    typer.echo(f"in plain words: {syn.guarantee_in_plain_words()}")
    who = syn.guarantee_per_person_ if k > 1 else syn.guarantee_
    caution = (_default_delta_note(who.delta, syn.n_, k) if needs_delta and delta is None
               else None) or _delta_note(who.delta, syn.n_, k)
    if caution:
        typer.echo(f"note: {caution}")
    if schema.clipping_note():
        typer.echo(f"note: {schema.clipping_note()}")
    if method == "mwem":
        typer.echo("note: mwem is a baseline for comparison: its columns, even one column's own "
                   "distribution, can come out far from the data's (docs/synthetic-data.md); "
                   "the default method is oracle-query-pgm")
    left = _left_out(data, schema, sep) if ignore_extra else []
    if left:
        shown = ", ".join(map(repr, left[:10])) + (f" and {len(left) - 10} more"
                                                    if len(left) > 10 else "")
        typer.echo(f"note: --ignore-extra left out the data's column(s) {shown}: the schema "
                   "does not declare them")
    typer.echo(f"wrote {path} and {out / RELEASE_FILE} (the released model only: no record)")
    if budget is not None:
        _print_budget(budget, ledger, local, k, entry)


def _refuse_overwrite(said: str, exists: bool, force: bool, nothing: str, other: str) -> None:
    """Refuse (exit 2) to overwrite what ``said`` describes unless ``--force``: the check
    `synth fit` and `synth sample` share."""
    if exists and not force:
        _fail(f"{said}; {nothing}. Choose {other}, or pass --force to overwrite it.")


def _sample_target(out: Path, force: bool, model_dir: Path) -> tuple[Path, bool]:
    """Where ``synth sample --out`` writes, checked before any randomness: ``(path,
    direct)``.  ``direct``: ``out`` is (or links to) a FIFO, a character device, a socket or
    another node that is not a regular file, written through as the shell's ``>`` would,
    never unlinked or replaced.  Else the records go to a temporary file renamed over
    ``path`` (``out``, or the file a symlink ``out`` points to: the link is kept), which must
    not exist unless ``--force``.  Refused even with ``--force``: a directory, a path in the
    model directory being sampled, and a file that is one of the model's (a hard link or a
    symlink to it): the model would be destroyed."""
    import os
    import stat

    from oracledp.synth._table_synthesizer import MODEL_FILE, RELEASE_FILE

    never = "; nothing was sampled (--force does not apply)"
    try:
        st = os.stat(out)  # follows a symlink: what a write would reach
    except FileNotFoundError:
        st = None
    except OSError as exc:
        _fail(f"--out {out}: {exc.strerror or exc}; nothing was sampled")
    if os.path.dirname(os.path.realpath(out)) == os.path.realpath(model_dir):
        _fail(f"--out {out} is a file of the model directory {model_dir} being sampled: write "
              f"the sample outside it{never}")
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            _fail(f"--out {out} is a directory: give a file path{never}")
        inputs = [model_dir / MODEL_FILE, model_dir / RELEASE_FILE]
        for inp in inputs:
            with contextlib.suppress(OSError):
                if os.path.samefile(out, inp):
                    _fail(f"--out {out} is the file {inp.name} of the model {model_dir} being "
                          f"sampled{never}")
        if not stat.S_ISREG(st.st_mode):
            return out, True
    target = Path(os.path.realpath(out)) if out.is_symlink() else out
    _refuse_overwrite(f"--out {out} already exists", st is not None, force,
                      "nothing was sampled", "another --out file")
    return target, False


def _bins_sources(syn: Any, schema: Any, bins_spec: Any, columns: list[str]) -> str:
    """The coarse bins of the numeric columns measured at fine resolution, each said with
    where its count came from: --bins, the schema's synth_bins, or chosen from n and the
    budget (only where --bins and synth_bins say nothing)."""
    # the bins of the values, and the missing level apart (sweep 13: "--bins 3" read "4")
    counts = {a.name: f"{len(a.labels) - a.missing}" + (" + missing" if a.missing else "")
              for a in syn.table_domain_.attrs}
    declared = {c.name: c.synth_bins for c in schema.columns}
    groups: dict[str, list[str]] = {}
    for name in columns:
        if isinstance(bins_spec, dict) and name in bins_spec:
            source = "as declared by --bins"
        elif declared.get(name) is not None:
            source = "as declared by the schema's synth_bins"
        elif isinstance(bins_spec, int):
            source = "as declared by --bins"
        elif (syn.numeric_ or {}).get("model_bins"):
            source = (f"held on up to {syn.numeric_['model_bins']} bins; each table with them "
                      f"counted on these or on the {syn.numeric_['auto_bins']} bins chosen for "
                      "n and the budget, as the selection chose")
        else:
            source = "chosen for n and the budget"
        groups.setdefault(source, []).append(f"{name} {counts[name]}")
    return "; ".join(f"{', '.join(names)} ({source})" for source, names in groups.items())


def _time_limit(seconds: float | None) -> contextlib.AbstractContextManager[None]:
    """Raise :class:`TimeLimitExpired` in the main thread after ``seconds`` (POSIX interval
    timer; no limit where there is none)."""
    from oracledp._alarm import alarm

    return alarm(seconds, TimeLimitExpired)


@contextlib.contextmanager
def _heartbeat(what: str) -> Iterator[None]:
    """While the block runs: a spinner on a terminal's stderr, else a line on stderr every
    :data:`_HEARTBEAT_SECONDS` (so a log shows the fit is alive; a refusal in the first
    interval stays one ``error:`` line)."""
    from rich.console import Console

    console = Console(stderr=True)
    if console.is_terminal:
        with console.status(what):
            yield
        return
    with _heartbeat_lines(what, _HEARTBEAT_SECONDS):
        yield


def _fit(syn: Any, data: Path, schema: Any, tdom: Any, accountant: Any,
         run: dict[str, Any]) -> None:
    """Count DATA and fit ``syn`` (reporting to ``accountant`` if any); exit 2 if refused."""
    limit = run.get("time_limit")
    try:
        with (_clipping_on_stderr(), _time_limit(limit), _reading(data) as report,
              _heartbeat(f"synth fit --method {syn.method}: reading {data.name} and fitting")):
            syn.verbose = report
            with accountant if accountant is not None else contextlib.nullcontext():
                run["fitting"] = True
                syn.fit(data, schema)
    except TimeLimitExpired:
        # settled by the caller as any failure: charged if the mechanism had drawn noise
        drew = accountant is not None and bool(accountant.spends)
        _fail(f"synth fit stopped at --time-limit {limit:g} s; nothing was released or written"
              + ("; its mechanism had started, so it stays charged in --budget" if drew
                 else ""))
    except (OracleDPError, ValueError, TypeError, FloatingPointError) as exc:
        _fail(_naming(data, exc))
    except MemoryError:
        _fail(f"{data}: not enough memory: the domain has {tdom.domain.size:,} cells; use "
              "fewer --bins or fewer columns")
    except KeyboardInterrupt:  # exit 130, one line; a --budget entry is settled by the caller
        _interrupted()
    finally:
        syn.verbose = False


def synth_sample(
    model_dir: Annotated[Path, typer.Argument(help="Directory written by `oracledp synth fit`.")],
    rows: Annotated[int, typer.Option("--rows", min=1, max=_MAX_ROWS,
                                      help="Number of synthetic records.")],
    seed: Annotated[int | None, typer.Option("--seed", min=0,
                                             help="Seed of the sampling (default: fresh "
                                                  "randomness).")] = None,
    out_text: Annotated[str | None, typer.Option(
        "--out", help="CSV file (stdout if left out or -); an existing file only with "
                      "--force. A FIFO or device (e.g. /dev/stdout) is written through.")
    ] = None,
    sampler: Annotated[str, typer.Option(
        "--sampler", help="rounded (default: every record has the model's law, and the "
        "table's counts stay within one of the model's expected counts in each group, "
        "chunk by chunk) or iid (independent records).")] = "rounded",
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --out "
                                                        "file.")] = False,
) -> None:
    """Write ROWS synthetic records as CSV (the schema's columns, target last)."""
    import numpy as np

    from oracledp.synth import TableSynthesizer
    from oracledp.synth._sampling import check_sampler

    out = None if out_text in (None, "-") else _out_path(
        out_text, "a file path (or leave --out out to write to stdout)", "nothing was sampled")
    try:
        check_sampler(sampler)
    except ValueError as exc:
        _fail(str(exc))
    target, direct = (None, False) if out is None else _sample_target(out, force, model_dir)
    try:
        syn = TableSynthesizer.load(model_dir)
    except (OracleDPError, ValueError) as exc:
        _fail(str(exc))
    rng = np.random.default_rng(seed)  # None: fresh randomness from the OS
    try:
        if target is None:
            _write_samples(syn, rows, rng, sys.stdout, sampler)
            sys.stdout.flush()
        elif direct:  # a FIFO or device: written through, never replaced
            with open(target, "w", encoding="utf-8", newline="") as fh:
                _write_samples(syn, rows, rng, fh, sampler)
        else:
            _write_samples_to(syn, rows, rng, target, sampler)
    except BrokenPipeError:  # e.g. `| head`: the reader has what it wanted
        _reader_closed()
    except OSError as exc:
        _fail(f"cannot write {'stdout' if out is None else out}: {exc.strerror or exc}")
    except (OracleDPError, ValueError, FloatingPointError) as exc:
        _fail(f"cannot sample from {model_dir}: {exc}"
              + ("" if out is None else f"; {out} was not written"))
    except MemoryError:
        _fail(f"cannot sample from {model_dir}: not enough memory"
              + ("" if out is None else f"; {out} was not written"))
    if out is not None:
        k = syn.table_domain_.schema.records_per_person
        said = (f"per person (up to {k} records, group privacy): {syn.guarantee_per_person_}; "
                f"per record: {syn.guarantee_}" if k > 1 else str(syn.guarantee_))
        typer.echo(f"wrote {rows:,} synthetic records to {out}; guarantee of the model: "
                   f"{said}", err=True)



def _write_samples_to(syn: Any, rows: int, rng: Any, out: Path, sampler: str) -> None:
    """Write the records to a temporary file beside ``out``, renamed to ``out`` only when
    every record is written: a failed or interrupted sample leaves no empty or partial
    ``out`` (an existing ``out`` stays as it was)."""
    import os
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent)
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # as open() would create it (mkstemp: owner only)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            _write_samples(syn, rows, rng, fh, sampler)
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_samples(syn: Any, rows: int, rng: Any, fh: Any, sampler: str = "rounded") -> None:
    """``rows`` records of ``syn`` as CSV on ``fh``, block by block as
    :meth:`~oracledp.synth.TableSynthesizer.iter_sample` draws them (the rows ``sample``
    gives in Python; memory stays bounded whatever --rows is), one header, with a progress
    bar on a terminal's stderr when there are several blocks."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from oracledp.synth._sampling import SAMPLE_CHUNK

    console = Console(stderr=True)
    with Progress(TextColumn("sampling"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True,
                  disable=not console.is_terminal or rows <= SAMPLE_CHUNK) as progress:
        task = progress.add_task("sampling", total=rows)
        done = 0
        for block in syn.iter_sample(rows, random_state=rng, sampler=sampler):
            block.to_csv(fh, index=False, header=done == 0, lineterminator="\n")
            done += len(block)
            progress.update(task, completed=done)


def synth_evaluate(
    synthetic: Annotated[Path, typer.Argument(help="Synthetic CSV.")],
    real: Annotated[Path, typer.Argument(help="Real table, CSV or Parquet (read directly: NOT private).")],
    schema_path: Annotated[Path | None, typer.Option(
        "--schema", help="The table schema (JSON); or --model.")] = None,
    model_dir: Annotated[Path | None, typer.Option(
        "--model", file_okay=False,
        help="Directory written by `synth fit`: its schema and bins (instead of --schema "
             "and --bins).")] = None,
    bins: Annotated[str | None, _BINS_EVAL] = None,
    max_sets: Annotated[int, typer.Option(
        "--max-sets", min=1, help="Most column sets per order (a random subset above).")] = 200,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the subset and the "
                                                            "cross-validation folds.")] = 0,
    sep: Annotated[str, typer.Option(
        "--sep", callback=_sep, help="Field delimiter of REAL (one character; \\t for a "
                                     "tab).")] = ",",
    synthetic_sep: Annotated[str, typer.Option(
        "--synthetic-sep", callback=_sep,
        help="Field delimiter of SYNTHETIC (`synth sample` writes commas).")] = ",",
) -> None:
    """Compare SYNTHETIC with REAL: 1-, 2-, 3-way marginal TV errors on the synthesizer's bins
    and at the real data's resolution (beside exact independent marginals and a resample of
    the real rows), and classifier accuracy (NOT private)."""
    from oracledp.synth import evaluate_synthetic

    bins_spec = _bins_option(bins)
    if schema_path is None and model_dir is None:
        _fail("give --schema (and --bins, written as for `synth fit`) or --model (the directory "
              "`synth fit` wrote): the columns of SYNTHETIC and REAL are read by one of them")
    if schema_path is not None and model_dir is not None:
        _fail("give --schema (and --bins, written as for `synth fit`) or --model (the directory "
              "`synth fit` wrote), not both")
    if model_dir is not None:
        if bins_spec is not None:
            _fail("--bins comes from --model (the bins of the fit); leave it out")
        from oracledp.synth import TableSynthesizer

        try:
            fitted = TableSynthesizer.load(model_dir)
        except (OracleDPError, ValueError) as exc:
            _fail(str(exc))
        schema, bins_spec = fitted.table_domain_.schema, fitted.table_domain_.bins
    else:
        assert schema_path is not None
        schema = _load_schema(schema_path)
    try:
        with _clipping_on_stderr(prefix="note"):
            res = evaluate_synthetic(synthetic, real, schema,
                                     bins=10 if bins_spec is None else bins_spec,
                                     max_sets=max_sets, random_state=seed, sep=sep,
                                     synthetic_sep=synthetic_sep)
    except (OracleDPError, ValueError, TypeError) as exc:
        msg = str(exc)
        _fail(msg.replace("try synthetic_sep=", "try --synthetic-sep "))
    typer.echo(res["non_private"])
    for which, cols in res["ignored_columns"].items():
        if cols:
            shown = ", ".join(repr(c) for c in cols[:5]) + (
                f" and {len(cols) - 5} more" if len(cols) > 5 else "")
            typer.echo(f"note: the {which} table's column(s) {shown} are not in the schema: "
                       "ignored, not compared", err=True)
    own = model_dir is not None  # --bins: the cuts given, not the fit's (review 18: a
    # count is cut in equal shares, the fit's default at its private quantiles)
    on = ("on the fit's bins" if own else
          "on the bins of --bins (a count cut in equal shares of each numeric column's grid), "
          "not necessarily the fit's: give --model for those" if bins_spec is not None else
          "on 10 equal shares of each numeric column's grid, not the fit's bins: give --model "
          "for those")
    typer.echo(f"marginal errors (total variation distance, synthetic vs real; {on}):")
    for j, m in res["marginals"].items():
        which = (f"a random {m['sets']} of {m['of']} column sets" if m["sampled"]
                 else f"all {m['of']} column sets" if m["of"] != 1 else "the one column set")
        typer.echo(f"  {j}-way: mean {m['mean_tv']:.4f}, max {m['max_tv']:.4f} ({which})")
    _echo_data_resolution(res["data_resolution"], "the fit's bins" if own else "those bins")
    c = res.get("classification")
    if c:
        cv = c["train_real_cv"]
        typer.echo(f"accuracy on REAL for the target {schema.target!r} (logistic regression "
                   "on the schema's encoding):")
        typer.echo(f"  train on synthetic, test on real: {c['train_synthetic_test_real']:.4f}")
        typer.echo("  train on real (5-fold cross-validation): "
                   + ("n/a" if cv is None else f"{cv:.4f}"))
        typer.echo(f"  majority label rate: {c['majority_label_rate']:.4f}")
        used = c.get("classifier_rows", {})
        if used.get("synthetic", 0) < res["rows"]["synthetic"] or (
                used.get("real", 0) < res["rows"]["real"]):
            typer.echo(f"  (the classifier used a random {used['synthetic']:,} synthetic and "
                       f"{used['real']:,} real rows, to bound memory)")


def _echo_data_resolution(r: dict[str, Any], bins: str) -> None:
    """The errors at the real data's own resolution, with the two plain references (``bins``:
    what the figures above were measured on)."""
    ind, boot = (r["references"]["independent_marginals"],
                 r["references"]["resample_of_real_rows"])
    typer.echo(f"at the real data's resolution (numeric columns cut at the real table's "
               f"{r['quantiles']}-quantiles, categorical columns at their levels; {bins} "
               "above can hide what these show):")
    typer.echo(f"  {'':<28}{'this table':>12}{'independent':>13}{'resample':>10}")
    one, two = r["one_way"], r["two_way"]
    typer.echo(f"  {'1-way TV, mean':<28}{one['mean_tv']:>12.4f}{0.0:>13.4f}"
               f"{boot['one_way']['mean_tv']:>10.4f}")
    if two.get("sets"):
        which = (f"a random {two['sets']} of {two['of']} pairs" if two["sampled"]
                 else f"all {two['of']} pairs")
        typer.echo(f"  {'2-way TV, mean':<28}{two['mean_tv']:>12.4f}"
                   f"{ind['two_way']['mean_tv']:>13.4f}{boot['two_way']['mean_tv']:>10.4f}"
                   f"  ({which})")
    typer.echo("  (independent: exact independent marginals of the real table; resample: "
               "the real rows drawn again with replacement)")
    if two.get("sets"):
        dep, won = two["dependent_pairs"], two["dependent_closer_than_independent"]
        if not dep:
            closer_on = ""
        elif dep == 1:
            closer_on = f", and it is {'closer' if won else 'not closer'} on it"
        else:
            closer_on = f", and it is closer on {won} of them"
        typer.echo(f"  pair by pair: closer than independent marginals on "
                   f"{two['closer_than_independent']} of {two['sets']} pairs; "
                   f"{dep} {'pair depends' if dep == 1 else 'pairs depend'} on each other "
                   "beyond sampling noise (the real counts reject independence: "
                   f"chi-square test at level 0.001, where its approximation holds){closer_on}")
        above = two["mean_tv"] > ind["two_way"]["mean_tv"]
        if dep and not won:
            typer.echo("  at this resolution this table has learned nothing about how the "
                       "columns go together that the columns' own distributions would not "
                       "give" + ("; its mean 2-way TV is even above that of exact "
                                 "independent marginals" if above else ""))
        elif above and not dep:
            typer.echo("  no pair depends on another beyond sampling noise at this "
                       "resolution: exact independent marginals are the reference, and this "
                       "table's mean 2-way TV is above theirs")
        elif above:
            typer.echo("  the mean 2-way TV is above that of exact independent marginals "
                       "(the counts above say on which pairs)")
    for col in r["columns"]:
        w1 = col.get("w1_over_range")
        extra = "" if w1 is None else f", Wasserstein-1 / range {w1:.4f}"
        if "mean_real" in col:  # a tail moved toward a bound shows here, not in the bins
            ms, mr = (_value_text(float(f"{col[k]:.4g}"))
                      for k in ("mean_synthetic", "mean_real"))
            extra += f", mean {ms} (real {mr})"
        if "range_real" in col:  # and values past the real ones here
            (lo, hi), (slo, shi) = col["range_real"], col["range_synthetic"]
            extra += (f", range {_value_text(slo)} to {_value_text(shi)} (real "
                      f"{_value_text(lo)} to {_value_text(hi)}; "
                      f"{_share_text(col['outside_real_range'])} of the values outside it)")
        typer.echo(f"  {col['column']}: 1-way TV {col['tv']:.4f} over {col['bins']} bins{extra}")
        if "quantiles_real" in col:  # the tails and heaps a data scientist looks at
            pct = "/".join(f"{100 * q:g}" for q in col["quantiles"])
            real_q = ", ".join(_value_text(v) for v in col["quantiles_real"])
            syn_q = ", ".join(_value_text(v) for v in col["quantiles_synthetic"])
            heap = ("" if "most_common_real" not in col else
                    f"; the real values' most common, {_value_text(col['most_common_real'])}: "
                    f"{_share_text(col['most_common_share_synthetic'])} of the synthetic "
                    f"values (real {_share_text(col['most_common_share_real'])})")
            typer.echo(f"    quantiles {pct} %: {syn_q} (real {real_q}){heap}")


def _low_text(c: Any) -> str:
    """How a wide grid's low points (:func:`~oracledp.synth._numeric.low_points`) cut the
    values near its lower bound, for the wide-grid note (each spacing up to the first value of
    its last bin): ``"bins of one value up to 255, of 10 wide up to 2550, then "``."""
    from oracledp.synth._numeric import low_points
    from oracledp.tabular._columns import number_text

    p = low_points(c.K)
    if not p.size:
        return ""
    parts, k = [], 0
    while k < len(p) - 1:
        gap = int(p[k + 1] - p[k])
        j = k
        while j + 1 < len(p) and int(p[j + 1] - p[j]) == gap:
            j += 1
        width = number_text(round(gap * c.step, 12))
        parts.append(f"{'one value' if gap == 1 else width + ' wide'} up to "
                     f"{number_text(round(c.lower + int(p[j]) * c.step, 12))}")
        k = j + 1 if j > k else k + 1
    return "bins of " + ", of ".join(parts) + ", then "


#: ``synth fit`` notes a numeric column whose histogram's node noise is at least this share
#: of the records (sweep 10: 800 incomes at epsilon 1 under ``independent``, 13 % per node,
#: came back with 12.5 % of their values past the real maximum).
NOISY_NODE_SHARE = 0.05

#: Below NOISY_NODE_SHARE, a histogram whose node noise is at least this share of the
#: records gets a caution unless the plan gave one (sweep 12: 2,000 rows of four numeric
#: columns at epsilon 1, node noise 2.8 % of n: the release's mean 2-way TV at the octiles
#: level with exact independent marginals, 0.192 against 0.194, and no word of it; 1,500 rows
#: at 3.3 %: 0.084-0.105 against 0.055, where the plan had said it).
CAUTION_NODE_SHARE = 0.025


def _percent_text(p: float) -> str:
    """A percentage with 2 significant digits (all the digits of a whole number), never an
    exponent.

    >>> _percent_text(4.61), _percent_text(0.35), _percent_text(156.0), _percent_text(99.7)
    ('4.6', '0.35', '156', '100')
    >>> _percent_text(3e-5)
    '0.00003'
    """
    if abs(p) >= 99.5:
        return f"{p:.0f}"
    return np.format_float_positional(float(p), precision=2, unique=True, fractional=False,
                                      trim="-")


def _share_text(share: float) -> str:
    """A share as a percentage with 2 decimals, never an exponent, and a share too small for
    them said as such rather than as none: ``0.00 %`` only for 0.

    >>> _share_text(1.0), _share_text(0.25), _share_text(0.00004), _share_text(0.0)
    ('100.00 %', '25.00 %', 'below 0.01 %', '0.00 %')
    """
    if 0 < share < 0.00005:
        return "below 0.01 %"
    return f"{100 * share:.2f} %"


def _value_text(v: float) -> str:
    """A value of a numeric column for ``synth evaluate``: six significant digits, in full
    (no exponent) from 10^-12 up to 10^15.

    >>> _value_text(17741.3), _value_text(1234567.8), _value_text(1.234e-07), _value_text(0.0)
    ('17741.3', '1234568', '0.0000001234', '0')
    """
    if 1e-12 <= abs(v) < 1e-4:
        return np.format_float_positional(float(v), precision=6, unique=True,
                                          fractional=False, trim="-")
    return f"{v:.6g}" if abs(v) < 1e6 or abs(v) >= 1e15 else f"{v:.0f}"


def register(app: typer.Typer) -> None:
    """Add ``synth fit | sample | evaluate`` to the ``oracledp`` app."""
    app.add_typer(synth_app, name="synth")
    synth_app.command("fit")(synth_fit)
    synth_app.command("sample")(synth_sample)
    synth_app.command("evaluate")(synth_evaluate)
