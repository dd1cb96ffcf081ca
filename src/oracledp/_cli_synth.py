"""``oracledp synth fit | sample | evaluate``: private synthetic data for your own table.

The commands parse options, call :class:`oracledp.synth.TableSynthesizer` and
:func:`oracledp.synth.evaluate_synthetic`, and print; see docs/synthetic-data.md.  Every
refusal is one ``error: ...`` line on stderr with exit code 2, decided before any
randomness; no message prints a record value, a row or a count.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from oracledp._cli_table import (
    _SEP,
    _clipping_on_stderr,
    _fail,
    _load_schema,
    _reading,
)
from oracledp._errors import OracleDPError
from oracledp._guidance import EPSILON_CAP, check_epsilon_cap

synth_app = typer.Typer(help="Private synthetic data for your own table (see "
                             "docs/synthetic-data.md).", no_args_is_help=True)

_METHOD_HELP = ("oracle-query-pgm (default), mst, aim (the peers extra), mwem or independent "
                "(pure epsilon-DP).")


def _bins_option(value: str | None) -> Any:
    """``--bins``: a count for every gridded numeric column, or ``col=4,col2=0:10:20`` entries."""
    if value is None:
        return None
    text = value.strip()
    try:
        if "=" not in text:
            return int(text)
        out: dict[str, Any] = {}
        for part in text.split(","):
            name, _, spec = part.partition("=")
            if not name.strip() or not spec.strip():
                raise ValueError
            spec = spec.strip()
            out[name.strip()] = ([float(x) for x in spec.split(":")] if ":" in spec
                                 else int(spec))
        return out
    except ValueError:
        raise typer.BadParameter(f"expected a count (e.g. 10) or column=count / column=c1:c2:... "
                                 f"entries separated by commas, got {value!r}") from None


_BINS = typer.Option("--bins", help="Public bins of gridded numeric columns: a count (default "
                                    "10), or COL=COUNT / COL=C1:C2:... (cut points), comma "
                                    "separated.")


def synth_fit(
    data: Annotated[Path, typer.Argument(help="The table (CSV with a header and the target).")],
    schema_path: Annotated[Path, typer.Option("--schema", help="Confirmed table schema (JSON).")],
    epsilon: Annotated[float, typer.Option("--epsilon", help=f"Privacy budget; at most "
                                                             f"{EPSILON_CAP:g} unless "
                                                             "--allow-large-epsilon.")],
    out: Annotated[Path, typer.Option("--out", file_okay=False,
                                      help="Directory for the released model.")],
    delta: Annotated[float | None, typer.Option(
        "--delta", help="delta (default 1/n^2, n public) for methods that need one.")] = None,
    method: Annotated[str, typer.Option("--method", help=_METHOD_HELP)] = "oracle-query-pgm",
    seed: Annotated[int | None, typer.Option("--seed", min=0,
                                             help="Seed of the noise (not saved).")] = None,
    bins: Annotated[str | None, _BINS] = None,
    sep: Annotated[str, _SEP] = ",",
    allow_large_epsilon: Annotated[bool, typer.Option(
        "--allow-large-epsilon", help=f"Accept --epsilon above {EPSILON_CAP:g}.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite a model already in "
                                                        "--out.")] = False,
) -> None:
    """Fit a private synthetic-data model on DATA with a confirmed schema; save it to --out."""
    from oracledp.synth import TableDomain, TableSynthesizer
    from oracledp.synth._table_synthesizer import MODEL_FILE, RELEASE_FILE

    message = check_epsilon_cap(epsilon, "--epsilon", allow_large_epsilon)
    if message:
        _fail(message)
    bins_spec = _bins_option(bins)
    syn = TableSynthesizer(method, epsilon=epsilon, delta=delta, random_state=seed,
                           bins=10 if bins_spec is None else bins_spec, sep=sep)
    try:
        syn._check_params()
    except (ValueError, TypeError) as exc:
        _fail(str(exc))
    if out.exists() and not out.is_dir():
        _fail(f"--out {out} exists and is not a directory")
    present = [f for f in (MODEL_FILE, RELEASE_FILE) if (out / f).exists()]
    if present and not force:
        _fail(f"--out {out} already holds {' and '.join(present)}; nothing was fitted. Choose "
              "another --out directory, or pass --force to overwrite it.")
    schema = _load_schema(schema_path)
    try:
        schema.check_confirmed()
        tdom = TableDomain(schema, syn.bins)
    except (OracleDPError, ValueError, TypeError) as exc:
        _fail(str(exc))
    if method == "oracle-query-pgm":  # a dense estimator's cap, if it has one: before reading
        import oracledp.synth._oracle_query_pgm as oqp

        cap = getattr(oqp, "_MAX_CELLS", None)
        if cap is not None and tdom.domain.size > cap:
            _fail(f"the schema's public domain has {tdom.domain.size:,} cells, more than the "
                  f"{cap:,} --method oracle-query-pgm can hold; use fewer --bins or fewer "
                  "columns, or --method mst; nothing was read")
    if method in ("mst", "aim"):
        from oracledp.synth._peers import require_mbi

        try:
            require_mbi()
        except ImportError as exc:
            _fail(str(exc))
    try:
        with _clipping_on_stderr(), _reading(data) as report:
            syn.verbose = report
            syn.fit(data, schema)
    except (OracleDPError, ValueError, TypeError) as exc:
        _fail(f"{data}: {exc}" if str(data) not in str(exc) else str(exc))
    except MemoryError:
        _fail(f"{data}: not enough memory: the domain has {tdom.domain.size:,} cells; use "
              "fewer --bins or fewer columns")
    syn.verbose = False
    path = syn.save(out)
    typer.echo(f"oracledp synth fit --method {method}: {len(tdom.domain)} columns "
               f"({', '.join(f'{a.name} {len(a.labels)}' for a in tdom.attrs)} levels/bins), "
               f"{tdom.domain.size:,} cells in the public domain")
    typer.echo(f"guarantee: {syn.guarantee_}")
    typer.echo(f"in plain words: {syn.guarantee_in_plain_words()}")
    typer.echo(f"wrote {path} and {out / RELEASE_FILE} (the released model only: no record)")


def synth_sample(
    model_dir: Annotated[Path, typer.Argument(help="Directory written by `oracledp synth fit`.")],
    rows: Annotated[int, typer.Option("--rows", min=1, help="Number of synthetic records.")],
    seed: Annotated[int | None, typer.Option("--seed", min=0,
                                             help="Seed of the sampling.")] = None,
    out: Annotated[Path | None, typer.Option("--out", dir_okay=False,
                                             help="CSV file (default: stdout).")] = None,
) -> None:
    """Write ROWS synthetic records as CSV (the schema's columns, target last)."""
    from oracledp.synth import TableSynthesizer

    try:
        syn = TableSynthesizer.load(model_dir)
    except (OracleDPError, ValueError) as exc:
        _fail(str(exc))
    df = syn.sample(rows, random_state=seed)
    if out is None:
        df.to_csv(sys.stdout, index=False, lineterminator="\n")
    else:
        df.to_csv(out, index=False, lineterminator="\n")
        typer.echo(f"wrote {rows:,} synthetic records to {out}; {syn.guarantee_}", err=True)


def synth_evaluate(
    synthetic: Annotated[Path, typer.Argument(help="Synthetic CSV.")],
    real: Annotated[Path, typer.Argument(help="Real CSV (read directly: NOT private).")],
    schema_path: Annotated[Path, typer.Option("--schema", help="The table schema (JSON).")],
    bins: Annotated[str | None, _BINS] = None,
    max_sets: Annotated[int, typer.Option(
        "--max-sets", min=1, help="Most column sets per order (a random subset above).")] = 200,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the subset and the "
                                                            "cross-validation folds.")] = 0,
    sep: Annotated[str, _SEP] = ",",
) -> None:
    """Compare SYNTHETIC with REAL: 1-, 2-, 3-way marginal TV errors and classifier accuracy
    (NOT private)."""
    from oracledp.synth import evaluate_synthetic

    bins_spec = _bins_option(bins)
    schema = _load_schema(schema_path)
    try:
        res = evaluate_synthetic(synthetic, real, schema,
                                 bins=10 if bins_spec is None else bins_spec,
                                 max_sets=max_sets, random_state=seed, sep=sep)
    except (OracleDPError, ValueError, TypeError) as exc:
        _fail(str(exc))
    typer.echo(res["non_private"])
    typer.echo("marginal errors (total variation distance, synthetic vs real):")
    for j, m in res["marginals"].items():
        which = (f"a random {m['sets']} of {m['of']} column sets" if m["sampled"]
                 else f"all {m['of']} column sets")
        typer.echo(f"  {j}-way: mean {m['mean_tv']:.4f}, max {m['max_tv']:.4f} ({which})")
    c = res.get("classification")
    if c:
        cv = c["train_real_cv"]
        typer.echo(f"accuracy on REAL for the target {schema.target!r} (logistic regression "
                   "on the schema's encoding):")
        typer.echo(f"  train on synthetic, test on real: {c['train_synthetic_test_real']:.4f}")
        typer.echo("  train on real (5-fold cross-validation): "
                   + ("n/a" if cv is None else f"{cv:.4f}"))
        typer.echo(f"  majority label rate: {c['majority_label_rate']:.4f}")


def register(app: typer.Typer) -> None:
    """Add ``synth fit | sample | evaluate`` to the ``oracledp`` app."""
    app.add_typer(synth_app, name="synth")
    synth_app.command("fit")(synth_fit)
    synth_app.command("sample")(synth_sample)
    synth_app.command("evaluate")(synth_evaluate)
