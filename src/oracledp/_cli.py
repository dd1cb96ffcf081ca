"""The ``oracledp`` command line (typer + rich).

Commands: ``datasets`` (bundled data files and their checksums), ``solvers``
(oracle backends), ``demo`` (OPDisc on Adult, see
:mod:`oracledp.experiments.demo`), and for your own CSV (see :mod:`oracledp.tabular`
and docs/your-own-data.md) ``schema infer``, ``schema check``, ``fit``, ``predict``, ``evaluate`` and
``export-sample``.  All logic lives in importable modules; this
file parses options and prints.
"""

from __future__ import annotations

import math
import time
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

from oracledp import __version__
from oracledp._cli_table import register as _register_table_commands
from oracledp._errors import OracleDPError
from oracledp._provenance import environment_line

app = typer.Typer(
    name="oracledp",
    help="Differentially private learning with optimization oracles.",
    no_args_is_help=True,
    add_completion=False,
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
    from oracledp.experiments.demo import Config, run_demo, write_outputs
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


# --- reproductions ---------------------------------------------------------------------------
reproduce_app = typer.Typer(help="Reproduce the papers' experiments.", no_args_is_help=True)
app.add_typer(reproduce_app, name="reproduce")


_SEED = typer.Option("--seed", min=0, help="Master seed.")
_N_JOBS = typer.Option("--n-jobs", min=1, help="Parallel workers.")
_OUT = typer.Option("--out", file_okay=False, help="Output directory.")


def _print_written(console: Console, out: Path, stem: str, figures: list[Path], t0: float,
                   fmt: str) -> None:
    """The files a reproduction wrote in ``out`` (``stem``.jsonl/.csv, summary, figures)."""
    console.print(f"  wrote {out / (stem + '.jsonl')}, {stem}.csv, summary.json, "
                  f"{', '.join(p.name for p in figures)} in {time.perf_counter() - t0:{fmt}}s")


def _experiment_config(exp: Any, quick: bool, **settings: Any) -> Any:
    """An experiment's Config (or its quick variant) from the options that were given."""
    overrides = {key: value for key, value in settings.items() if value is not None}
    try:
        return exp.quick_config(**overrides) if quick else exp.Config(**overrides)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


@reproduce_app.command("icml2020-adult")
def reproduce_icml2020(
    quick: Annotated[bool, typer.Option("--quick", help="3 runs at eps 0.1 and 1.")] = False,
    runs: Annotated[int | None, typer.Option("--runs", min=1, help="Runs per (method, eps).")]
    = None,
    epsilon: Annotated[str | None, _epsilon_option("Comma-separated epsilons.")] = None,
    methods: Annotated[
        str, typer.Option("--methods", help="Comma-separated: opdisc,rspm,dpsgd,opsamp.")
    ] = "opdisc,rspm,dpsgd",
    n_jobs: Annotated[int, _N_JOBS] = 1,
    seed: Annotated[int, _SEED] = 0,
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds per oracle call.")]
    = 300.0,
    out: Annotated[Path, _OUT] = Path("out/icml2020-adult"),
) -> None:
    """OPDisc vs RSPM vs DP-SGD logistic regression (and OPSamp) on Adult (ICML 2020, Sec. 5).

    Resumes: runs already in OUT/runs.jsonl are skipped.
    """
    from oracledp.experiments import icml2020 as exp

    cfg = _experiment_config(
        exp, quick, seed=seed, n_jobs=n_jobs, time_limit=time_limit,
        methods=tuple(m.strip() for m in methods.split(",") if m),
        epsilons=_epsilons(epsilon), runs=runs,
    )
    console = Console()
    t0 = time.perf_counter()
    runs_out = _with_progress(console, lambda report: exp.run_reproduction(cfg, out, report))
    rows = exp.summarize(runs_out)
    table = Table(title=f"Adult, delta = 1/n^2: {len(runs_out)} runs", title_justify="center")
    for col in ("method", "epsilon", "runs", "failures", "train acc", "test acc",
                "time med / max s"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            r["method"], f"{r['eps']:g}", str(r["runs"]), str(r["failures"]),
            _mean_std(r["train_mean"], r["train_std"]), _mean_std(r["test_mean"], r["test_std"]),
            f"{r['time_median_s']:.1f} / {r['time_max_s']:.1f}",
        )
    console.print(table)
    console.print("  failures: oracle not certified (nothing released; not counted in accuracy)")
    _print_written(console, out, "runs", exp.write_figures(runs_out, out), t0, ".0f")


def _g(x: float | None, fmt: str = ".3g") -> str:
    return "—" if x is None else format(x, fmt)


def _exp_or_none(x: float) -> float | None:
    return math.exp(x) if x < 700 else None


def _halted(row: dict[str, Any], prefix: str) -> str:
    k, n = row[f"{prefix}_halted"], row[f"{prefix}_trials"]
    return f"{k}/{n}" if k == n else f"[red]{k}/{n}[/red]"


@reproduce_app.command("accuracy-first")
def reproduce_accuracy_first(
    task: Annotated[
        str, typer.Option("--task", help="logistic (KDD-99) or ridge (KDD-99 stand-in for Twitter).")
    ] = "logistic",
    trials: Annotated[int | None, typer.Option("--trials", min=1, help="Trials per (method, alpha) [40].")]
    = None,
    alphas: Annotated[
        str | None, typer.Option("--alphas", help="Comma-separated target excess risks alpha.")
    ] = None,
    quick: Annotated[bool, typer.Option("--quick", help="3 alphas x 5 trials.")] = False,
    n_jobs: Annotated[int, _N_JOBS] = 1,
    seed: Annotated[int, _SEED] = 0,
    out: Annotated[Path | None, _OUT] = None,
    n: Annotated[int | None, typer.Option("--n", hidden=True, min=2, help="Subsample (tests).")]
    = None,
) -> None:
    """NoiseReduction vs DoublingMethod vs theory: ex-post privacy for a target accuracy.

    Accuracy First (Ligett et al., NeurIPS 2017), Section 4 / Appendix B. Resumes:
    trials already in OUT/trials.jsonl are skipped.
    """
    from oracledp.experiments import accuracy_first as exp

    if task not in exp.TASKS:
        raise typer.BadParameter(f"{task!r} is not one of: {', '.join(exp.TASKS)}",
                                 param_hint="'--task'")
    cfg = _experiment_config(
        exp, quick, task=task, seed=seed, n_jobs=n_jobs,
        alphas=None if alphas is None else _parse_positive_list(alphas, "--alphas", "alpha",
                                                                  "0.01,0.05"),
        trials=trials, n=n,
    )
    out_dir = out if out is not None else Path(f"out/accuracy-first-{task}")
    console = Console()
    t0 = time.perf_counter()

    def work(report: Any) -> Any:
        try:
            return exp.run(cfg, out_dir, report)
        except ValueError as exc:  # e.g. OUT holds trials of another configuration
            raise OracleDPError(str(exc)) from None

    records = _with_progress(console, work)
    rows = exp.summarize(cfg, records)
    label = exp.dataset_label(cfg.task)
    nr_m, db_m = cfg.methods
    table = Table(
        title=(f"Accuracy First, {label}: n={cfg.n:,}, p={cfg.p}, λ={cfg.lam:g}, "
               f"γ={cfg.gamma:g}, T={cfg.T}, {cfg.trials} trials per (method, α)"),
        show_edge=False, pad_edge=False, collapse_padding=True,
        caption=(f"NR = {nr_m}, Dbl = {db_m}. ε = test + hyp(othesis): mean ex-post loss "
                 "over the halted trials (halt); e^ε: mean of e^ε; theory: "
                 + ("Thm 3.3" if cfg.task == "logistic" else "Thm 3.1")
                 + " (one run at the ε whose expected excess risk is α). excess (mean L(θ) − L(θ*)) and ok "
                 "(share with excess ≤ α): non-private diagnostic."),
    )
    for col in ("α", "", "ε", "test", "hyp", "e^ε", "excess", "ok", "‖θ‖", "halt"):
        table.add_column(col, justify="right", no_wrap=True)
    theory_name = "theory"
    for r in rows:
        for prefix, name in (("nr", "NR"), ("doubling", "Dbl")):
            table.add_row(
                f"{r['alpha']:g}" if prefix == "nr" else "", name,
                _g(r[f"{prefix}_eps_mean"]), _g(r[f"{prefix}_eps_test_mean"]),
                _g(r[f"{prefix}_eps_hyp_mean"]), _g(r[f"{prefix}_exp_eps_mean"]),
                _g(r[f"{prefix}_excess_mean"], ".2g"), _g(r[f"{prefix}_success_rate"], ".0%"),
                _g(r[f"{prefix}_norm_mean"]), _halted(r, prefix),
            )
        table.add_row("", theory_name, _g(r["theory_eps"]), "", "", _g(_exp_or_none(r["theory_eps"])),
                      "", "", "", "", end_section=True)
    console.print(table)
    if cfg.task == "ridge":
        console.print(f"  {exp.RIDGE_NOTE}")
    no_halt = sum(1 for r in records if not r["halted"])
    if no_halt:
        console.print(f"  [red]{no_halt} no-halt trials[/red]: nothing released; recorded with "
                      "their refusal loss, counted as failures, excluded from the ε means")
    _print_written(console, out_dir, "trials", exp.write_figures(cfg, records, out_dir), t0, ".0f")


@reproduce_app.command("ftpl")
def reproduce_ftpl(
    quick: Annotated[bool, typer.Option("--quick", help="d=4, eps 0.3 and 1, T<=200, 3 runs.")]
    = False,
    epsilon: Annotated[str | None, _epsilon_option("Comma-separated per-round epsilons.")]
    = None,
    runs: Annotated[int | None, typer.Option("--runs", min=1, help="Streams per d.")] = None,
    seed: Annotated[int, _SEED] = 0,
    out: Annotated[Path, _OUT] = Path("out/ftpl"),
) -> None:
    """Regret of Follow the Private Leader vs T and eps (Neel, Roth, Wu FOCS 2019, Sec. V, Thm 11).

    Monotone conjunctions (0/1 loss) on a synthetic noisy-conjunction stream; RSPM with
    fresh noise each round and an exact brute-force oracle.
    """
    from oracledp.experiments import ftpl as exp

    cfg = _experiment_config(
        exp, quick, seed=seed, epsilons=_epsilons(epsilon), runs=runs,
    )
    console = Console()
    t0 = time.perf_counter()
    records = _with_progress(console, lambda report: exp.run(cfg, out, report))
    rows = exp.summarize(records)
    table = Table(
        title=(f"Follow the Private Leader: average regret, {cfg.runs} streams per d "
               f"(p={cfg.p:g}, label noise {cfg.label_noise:g})"),
        caption=("bound: (e^ε−1) + 2m²/(εT), explicit form of Thm 11 (expected regret). "
                 "ε seq: privacy of the T plays, basic composition (T−1)ε (Thm 6 + Thm 2, "
                 f"reported); adv: advanced composition at δ'={cfg.delta_prime:g}. "
                 "Regret itself is not private."),
    )
    for col in ("d", "learner", "T", "regret", "bound", "ε seq", "ε adv"):
        table.add_column(col, justify="right")
    for r in rows:
        learner = "FTL" if r["method"] == "ftl" else f"FTPL ε={r['eps']:g}"
        table.add_row(str(r["d"]), learner, str(r["T"]),
                      _mean_std(r["regret_mean"], r["regret_std"]), _g(r["bound"]),
                      _g(r["eps_basic"]), _g(r["eps_advanced"]),
                      end_section=r["T"] == cfg.T)
    console.print(table)
    _print_written(console, out, "runs", exp.write_figures(records, out), t0, ".1f")


@reproduce_app.command("synth-adult")
def reproduce_synth_adult(
    quick: Annotated[bool, typer.Option("--quick", help="1 run at eps=1, few rounds (< 60 s).")]
    = False,
    epsilon: Annotated[str | None, _epsilon_option("Comma-separated epsilons.")] = None,
    k: Annotated[int | None, typer.Option("--k", min=1, help="Marginal order (default 3).")]
    = None,
    runs: Annotated[int | None, typer.Option("--runs", min=1, help="Runs per epsilon.")] = None,
    seed: Annotated[int, _SEED] = 0,
    query_player: Annotated[
        str, typer.Option("--query-player", help="OracleQuery query player: noisy-min, rspm or prsma.")
    ] = "noisy-min",
    data_player: Annotated[
        str, typer.Option("--data-player", help="OracleQuery data player: hedge or ftpl.")
    ] = "hedge",
    peers: Annotated[bool, typer.Option(
        "--peers", help="Also run MST and AIM in the same run (needs oracledp[peers]).")] = False,
    out: Annotated[Path, _OUT] = Path("out/synth-adult"),
) -> None:
    """Synthetic Adult (8 categorical attributes): OracleQuery, OracleQueryPGM, MWEM, marginals (+ MST, AIM).

    Max and mean k-way marginal error of the released distribution, fit and sample time.
    """
    from oracledp.experiments import synth_adult as exp

    cfg = _experiment_config(
        exp, quick, seed=seed, query_player=query_player, data_player=data_player,
        epsilons=_epsilons(epsilon), k=k, runs=runs, peers=peers or None,
    )
    console = Console()
    if cfg.peers:
        try:
            exp.check_peers_available()
        except ImportError as exc:
            console.print(f"error: {exc}", style="red", markup=False)
            raise typer.Exit(2) from None
    t0 = time.perf_counter()
    records = _with_progress(console, lambda report: exp.run(cfg, out, report))
    rows = exp.summarize(records)
    table = Table(
        title=f"Adult categorical, {cfg.k}-way marginals: error of the released distribution "
        f"({cfg.runs} run(s) per ε)",
        caption=(f"oracle_query, oracle_query_pgm, mst, aim: (ε, δ={cfg.delta:g})-DP by zCDP; "
                 "mwem and independent: pure ε-DP; all replace-one. Errors are fractions of n, "
                 "of the released model's exact answers."),
    )
    for col in ("method", "ε", "T", "max error", "mean error", "fit time", "sample n"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(r["method"], f"{r['eps']:g}", "-" if r["rounds"] is None else str(r["rounds"]),
                      _err_std(r["max_error_mean"], r["max_error_std"]),
                      _err_std(r["mean_error_mean"], r["mean_error_std"]),
                      f"{r['seconds_mean']:.1f}s", f"{r['sample_seconds_mean']:.2f}s")
    console.print(table)
    _print_written(console, out, "runs", exp.write_figures(records, out), t0, ".1f")
    console.print(environment_line(), markup=False)


def _err_std(mean: float, std: float) -> str:
    return f"{mean:.3g}" if math.isnan(std) else f"{mean:.3g} ± {std:.2g}"


def _mean_std(mean: float, std: float) -> str:
    if math.isnan(mean):
        return "-"
    return f"{mean:.3f}" if math.isnan(std) else f"{mean:.3f} ± {std:.3f}"


# --- your own table: schema infer / fit / predict / evaluate / models (see _cli_table.py) --

_register_table_commands(app)


if __name__ == "__main__":  # pragma: no cover
    app()
