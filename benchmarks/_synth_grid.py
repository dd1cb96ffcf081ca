"""The grid shared by ``synth_native.py`` and ``synth_tables.py`` (not a benchmark itself).

Each run fits ``TableSynthesizer(method, epsilon=e, random_state=seed).fit(path, schema)`` on a
bundled table (``split="all"``), samples as many rows as the real table (``random_state=seed +
1000``) and scores them with ``evaluate_synthetic(fake, real, schema, orders=(2,),
random_state=seed, classifier=...)``: the data's own resolution (``data_resolution``: numeric
columns cut at the real table's octiles) and the ``bins`` resolution (``marginals``:
``evaluate_synthetic``'s default bins, 10 equal-width bins between each numeric column's
declared bounds).  A method that refuses the table (MWEM past its cell cap, AIM on nhefs) is
recorded as ``{"skipped": its message}``.

Per (table, seed), the two references: **exact independent marginals** and a **resample of the
real rows**, at the data's own resolution (``evaluate_synthetic``'s own, from the first run of
that (table, seed)) and, with ``bins_references=True``, at the bins resolution
(:func:`bins_references`: the products of the real 1-way marginals against the real pairs on
every pair; a resample of the real rows, drawn with ``seed``, scored by ``evaluate_synthetic``).

Every output is written through a temporary file renamed into place after every run, so an
interrupted grid leaves valid files.  The evaluation reads the real table: NOT private.
"""

from __future__ import annotations

import csv
import datetime as dt
import itertools
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

TABLES = ("health_insurance", "doctor_visits", "nhefs", "titanic", "biopsy")
METHODS = ("oracle-query-pgm", "aim", "mst", "independent", "mwem")
DEFAULT = "oracle-query-pgm"
PEER = "aim"
EPSILONS = (0.1, 0.5, 1.0, 2.0)
REFERENCES = {"independent_marginals": "exact independent marginals",
              "resample_of_real_rows": "resample of real rows"}
TIME_TARGET = 0.5

# --- the machine --------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    """Load average and CPU count now."""
    return {"time": dt.datetime.now().isoformat(timespec="seconds"),
            "loadavg": [round(x, 2) for x in os.getloadavg()], "cpu_count": os.cpu_count()}


def versions() -> dict[str, Any]:
    """numpy, pandas, the repository's HEAD, and where oracledp was imported from."""
    import oracledp

    here = Path(__file__).resolve().parent

    def git(*cmd: str) -> str | None:
        try:
            return subprocess.run(["git", *cmd], capture_output=True, text=True, check=True,
                                  cwd=here).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return None

    src = Path(oracledp.__file__).resolve().parent
    in_repo = src.is_relative_to(here.parent)
    dirty = git("status", "--porcelain", "--", "src") if in_repo else None
    return {"python": sys.version.split()[0], "numpy": np.__version__, "pandas": pd.__version__,
            "oracledp_commit": git("rev-parse", "HEAD"), "oracledp_imported_from": str(src),
            "src_has_uncommitted_changes": bool(dirty) if in_repo else None}


# --- one run ------------------------------------------------------------------------------------


def score(fake: pd.DataFrame, real: pd.DataFrame, schema: Any, seed: int, classifier: bool
          ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``evaluate_synthetic``'s figures of one synthetic table: (the run's fields, the native
    references and, with ``classifier``, the real table's own accuracies)."""
    from oracledp.synth import evaluate_synthetic

    ev = evaluate_synthetic(fake, real, schema, orders=(2,), random_state=seed,
                            classifier=classifier)
    dr = ev["data_resolution"]
    num = {c["column"]: c["tv"] for c in dr["columns"] if c["kind"] == "numeric"}
    w1 = {c["column"]: c["w1_over_range"] for c in dr["columns"]
          if c["kind"] == "numeric" and c.get("w1_over_range") is not None}
    other = [c["tv"] for c in dr["columns"] if c["kind"] != "numeric"]
    rec = {"native_2way_tv": dr["two_way"]["mean_tv"],
           "native_mean_1way_tv": dr["one_way"]["mean_tv"],
           "native_mean_other_1way_tv": float(np.mean(other)) if other else float("nan"),
           "native_max_2way_tv": dr["two_way"]["max_tv"],
           "native_max_numeric_1way_tv": max(num.values()) if num else float("nan"),
           "native_worst_numeric_column": max(num, key=num.get) if num else None,
           "native_numeric_1way_tv": num,
           "native_w1_over_range": w1,
           "native_mean_w1_over_range": float(np.mean(list(w1.values()))) if w1 else float("nan"),
           "native_max_w1_over_range": max(w1.values()) if w1 else float("nan"),
           "bins_2way_tv": ev["marginals"][2]["mean_tv"],
           "bins_max_2way_tv": ev["marginals"][2]["max_tv"],
           "native_pairs": f"{dr['two_way']['sets']} of {dr['two_way']['of']}",
           "bins_pairs": f"{ev['marginals'][2]['sets']} of {ev['marginals'][2]['of']}"}
    refs: dict[str, Any] = {}
    for key in REFERENCES:
        r = dr["references"][key]
        refs[key] = {"native_2way_tv": r["two_way"]["mean_tv"],
                     "native_max_2way_tv": r["two_way"]["max_tv"],
                     "one_way_max_tv": r["one_way"].get("max_tv", float("nan"))}
    if classifier:
        cl = ev["classification"]
        rec["tstr_accuracy"] = cl["train_synthetic_test_real"]
        refs["classification"] = {"train_real_cv": cl["train_real_cv"],
                                  "majority_label_rate": cl["majority_label_rate"]}
    return rec, refs


def run_one(table: str, method: str, eps: float, seed: int, path: Path,
            real: pd.DataFrame, schema: Any, settings: dict[str, Any] | None = None,
            classifier: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """One fit, sample and evaluation: (the run's record, the references of (table, seed)).
    ``settings``: further TableSynthesizer keywords (``--set``).  A refusal of the method
    (ValueError before anything is fitted) gives ``{"skipped": message}`` and no references."""
    from oracledp.synth import TableSynthesizer

    head = {"table": table, "method": method, "eps": eps, "seed": seed, "rows": len(real)}
    w0, c0 = time.perf_counter(), time.process_time()
    try:
        syn = TableSynthesizer(method, epsilon=eps, random_state=seed, **(settings or {})).fit(
            path, schema)
    except ValueError as exc:
        return {**head, "skipped": str(exc)}, {}
    fit_s, fit_cpu = time.perf_counter() - w0, time.process_time() - c0
    fake = syn.sample(len(real), random_state=seed + 1000)
    rec, refs = score(fake, real, schema, seed, classifier)
    return ({**head, "fit_seconds": fit_s, "fit_cpu_seconds": fit_cpu, **rec,
             "guarantee": syn.guarantee_.describe().split(";")[0]},
            {"table": table, "seed": seed, **refs})


def bins_references(real: pd.DataFrame, schema: Any, seed: int) -> dict[str, float]:
    """The two references at ``evaluate_synthetic``'s default bins: mean 2-way TV of the
    products of the real 1-way marginals against the real pairs (every pair), and of a resample
    of the real rows (as many as the real table, drawn with ``seed``) as
    ``evaluate_synthetic`` scores it."""
    from oracledp.synth import evaluate_synthetic
    from oracledp.synth._table import DEFAULT_BINS, TableDomain

    rows, counts = TableDomain(schema, DEFAULT_BINS).count(real)
    shape = [int(rows[:, j].max()) + 1 for j in range(rows.shape[1])]
    one = [np.bincount(rows[:, j], weights=counts, minlength=shape[j]) / counts.sum()
           for j in range(rows.shape[1])]
    tv = []
    for i, j in itertools.combinations(range(rows.shape[1]), 2):
        joint = np.bincount(rows[:, i] * shape[j] + rows[:, j], weights=counts,
                            minlength=shape[i] * shape[j]) / counts.sum()
        tv.append(0.5 * float(np.abs(joint - np.outer(one[i], one[j]).ravel()).sum()))
    boot = real.iloc[np.random.default_rng(seed).integers(0, len(real), size=len(real))]
    ev = evaluate_synthetic(boot.reset_index(drop=True), real, schema, orders=(2,),
                            random_state=seed, classifier=False)
    return {"independent_marginals": float(np.mean(tv)),
            "resample_of_real_rows": ev["marginals"][2]["mean_tv"]}


# --- summaries ----------------------------------------------------------------------------------


def stats(values: Iterable[float | None]) -> tuple[float, float, float]:
    """Mean, standard deviation (ddof=1; nan for one value) and standard error of the values
    that are numbers (all nan when there are none)."""
    a = np.asarray([v for v in values if v is not None and not math.isnan(v)], dtype=float)
    if not len(a):
        return float("nan"), float("nan"), float("nan")
    sd = float(a.std(ddof=1)) if len(a) > 1 else float("nan")
    return float(a.mean()), sd, sd / math.sqrt(len(a))


def done(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs that fitted (not refused)."""
    return [r for r in runs if "skipped" not in r]


def cells(runs: list[dict[str, Any]]) -> dict[tuple[str, str, float], list[dict[str, Any]]]:
    """The fitted runs by (table, method, eps), in table, method and epsilon order."""
    groups: dict[tuple[str, str, float], list[dict[str, Any]]] = {}
    for r in done(runs):
        groups.setdefault((r["table"], r["method"], r["eps"]), []).append(r)
    order = {m: i for i, m in enumerate(METHODS)}
    return dict(sorted(groups.items(), key=lambda kv: (
        TABLES.index(kv[0][0]) if kv[0][0] in TABLES else len(TABLES), kv[0][0],
        order.get(kv[0][1], len(order)), kv[0][1], kv[0][2])))


def method_order(runs: list[dict[str, Any]]) -> list[str]:
    """The methods of the fitted runs, in :data:`METHODS` order, then the others."""
    have = dict.fromkeys(r["method"] for r in done(runs))
    return [m for m in METHODS if m in have] + [m for m in have if m not in METHODS]


def ref_tables(refs: list[dict[str, Any]]) -> list[str]:
    """The tables with references, in :data:`TABLES` order."""
    have = {r["table"] for r in refs}
    return [t for t in TABLES if t in have] + sorted(have - set(TABLES))


def _round(x: float) -> float | str:
    return "" if math.isnan(x) else round(x, 5)


def summarize(runs: list[dict[str, Any]], refs: list[dict[str, Any]], keys: tuple[str, ...],
              ref_keys: tuple[str, ...] = ("native_2way_tv",)) -> list[dict[str, Any]]:
    """Mean and standard deviation over seeds of ``keys`` per table x method x epsilon, then
    per table the two references (``ref_keys`` filled, the rest blank)."""
    rows: list[dict[str, Any]] = []
    for (table, method, eps), rs in cells(runs).items():
        row: dict[str, Any] = {"table": table, "method": method, "eps": eps, "seeds": len(rs)}
        for k in keys:
            m, sd, _ = stats(r.get(k) for r in rs)
            row[f"{k}_mean"], row[f"{k}_sd"] = _round(m), _round(sd)
        rows.append(row)
    for table in ref_tables(refs):
        rr = [r for r in refs if r["table"] == table]
        for key, label in REFERENCES.items():
            row = {"table": table, "method": label, "eps": "", "seeds": len(rr)}
            for k in keys:
                m, sd, _ = stats(r[key].get(k) for r in rr) if k in ref_keys else (
                    float("nan"),) * 3
                row[f"{k}_mean"], row[f"{k}_sd"] = _round(m), _round(sd)
            rows.append(row)
    return rows


def verdict(runs: list[dict[str, Any]], refs: list[dict[str, Any]], meta: dict[str, Any]
            ) -> str:
    """Markdown: the default against AIM per table x epsilon at the data's own resolution, the
    references, the cells worse than exact independent marginals, and the run."""
    by_cell: dict[tuple[str, float], dict[str, list[dict[str, Any]]]] = {}
    for (table, method, eps), rs in cells(runs).items():
        by_cell.setdefault((table, eps), {})[method] = rs
    grid = meta["grid"]
    per_table = len(grid["methods"]) * len(grid["epsilons"]) * grid["seeds"]
    expected = len(grid["tables"]) * per_table
    done_tables = [t for t in grid["tables"] if sum(r["table"] == t for r in runs) == per_table]
    status = ("complete" if len(runs) >= expected else
              f"**PARTIAL**: {len(runs)} of {expected} runs finished; complete tables: "
              f"{', '.join(done_tables) or 'none'}; not (fully) run: "
              f"{', '.join(t for t in grid['tables'] if t not in done_tables)}")
    lines = ["# The default (oracle-query-pgm) against AIM at the data's own resolution",
             "", f"Grid status: {status}.", "",
             "Mean 2-way TV at the data's own resolution (`evaluate_synthetic`'s "
             "`data_resolution`), mean ± standard error over seeds.  **win**: the default's "
             "mean is lower than AIM's by more than the larger of the two standard errors; "
             "anything else (higher, or lower within noise) is a **loss**.  Time ratio: the "
             "default's mean fit wall-clock seconds over AIM's, measured in the same run "
             f"(target <= {TIME_TARGET}); CPU ratio: the same with process CPU seconds.",
             "",
             "| table | ε | seeds | default | AIM | difference | verdict | default s | AIM s "
             "| time ratio | CPU ratio | time target |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    wins = total = time_ok = 0
    for (table, eps), by in by_cell.items():
        if DEFAULT not in by or PEER not in by:
            continue
        ma, _, sea = stats(r["native_2way_tv"] for r in by[DEFAULT])
        mb, _, seb = stats(r["native_2way_tv"] for r in by[PEER])
        win = bool(mb - ma > max(sea, seb))  # nan margin (one seed): never a win
        ta, tb, ca, cb = (stats(r[k] for r in by[m])[0] for k, m in (
            ("fit_seconds", DEFAULT), ("fit_seconds", PEER), ("fit_cpu_seconds", DEFAULT),
            ("fit_cpu_seconds", PEER)))
        total += 1
        wins += win
        time_ok += ta / tb <= TIME_TARGET
        lines.append(
            f"| {table} | {eps:g} | {len(by[DEFAULT])}/{len(by[PEER])} | {ma:.4f} ± {sea:.4f} | "
            f"{mb:.4f} ± {seb:.4f} | {ma - mb:+.4f} | {'win' if win else 'loss'} | {ta:.1f} | "
            f"{tb:.1f} | {ta / tb:.2f} | {ca / cb:.2f} | "
            f"{'met' if ta / tb <= TIME_TARGET else 'missed'} |")
    lines += ["", f"The default wins {wins} of {total} (table, ε) cells; its fit-time ratio "
              f"meets the target (<= {TIME_TARGET}) in {time_ok} of {total}.", ""]
    merged = sorted({r["method"] for r in runs if r.get("source")})
    if merged:
        lines += [f"The runs of {', '.join(merged)} were merged from another record (each "
                  "run's `source`), fitted at another time, load and commit: the time ratios "
                  "compare runs that were not measured together.", ""]
    lines += ["## References (per table, mean ± sd over seeds)", "",
              "| table | exact independent marginals | resample of real rows |", "|---|---|---|"]
    ref_mean: dict[str, float] = {}
    for table in ref_tables(refs):
        rr = [r for r in refs if r["table"] == table]
        parts = []
        for key in REFERENCES:
            m, sd, _ = stats(r[key]["native_2way_tv"] for r in rr)
            parts.append(f"{m:.4f} ± {0.0 if math.isnan(sd) else sd:.4f}")
        ref_mean[table] = stats(r["independent_marginals"]["native_2way_tv"] for r in rr)[0]
        lines.append(f"| {table} | {parts[0]} | {parts[1]} |")
    worse = [f"{table} {method} ε={eps:g}: {m:.4f} > {ref_mean[table]:.4f}"
             for (table, method, eps), rs in cells(runs).items()
             if table in ref_mean
             and (m := stats(r["native_2way_tv"] for r in rs)[0]) > ref_mean[table]]
    lines += ["", "Cells whose mean native 2-way TV is worse than exact independent marginals: "
              + ("; ".join(worse) if worse else "none") + ".", ""]
    return "\n".join(lines + run_note(meta))


def run_note(meta: dict[str, Any]) -> list[str]:
    """Markdown lines: the grid, start and end (load, CPUs), versions and the note."""
    grid, end, v = meta["grid"], meta.get("end") or {}, meta["versions"]
    first = grid.get("first_seed", 0)
    return ["## Run", "",
            f"Grid: tables {', '.join(grid['tables'])}; methods {', '.join(grid['methods'])}; "
            f"ε {', '.join(f'{e:g}' for e in grid['epsilons'])}; seeds {first}.."
            f"{first + grid['seeds'] - 1}.", "",
            f"Started {meta['start']['time']} (load {meta['start']['loadavg']}, "
            f"{meta['start']['cpu_count']} CPUs); "
            + (f"ended {end['time']} (load {end['loadavg']}, {end['cpu_count']} CPUs)."
               if end else "still running or interrupted (last run: "
               f"{meta.get('last', {}).get('time', '-')}).")
            + f" numpy {v['numpy']}, pandas {v.get('pandas', '-')}, oracledp commit "
            f"{v['oracledp_commit']}"
            + (" (imported from the working tree, with uncommitted changes under src/)"
               if v.get("src_has_uncommitted_changes") else "")
            + ("" if v.get("src_has_uncommitted_changes") is not None else
               f" (imported from {v['oracledp_imported_from']}, an export of that commit's "
               "src/)")
            + ". Fits run one after another in one process under `nice -n 5` on a shared "
            "machine: wall-clock seconds include other jobs' load; the CPU ratio is the "
            "steadier comparison." + (f" {meta['note']}" if meta.get("note") else ""), ""]


def plot(runs: list[dict[str, Any]], refs: list[dict[str, Any]], path: Path,
         metrics: tuple[tuple[str, str], ...] = (("native_2way_tv",
                                                  "mean 2-way TV (data's own resolution)"),)
         ) -> None:
    """One column per table, one row per ``(key, label)`` of ``metrics``: each method's mean
    over seeds against epsilon with +-1 sd bars, the references (same key) dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grouped = cells(runs)
    tables = list(dict.fromkeys(t for t, _, _ in grouped))
    methods = method_order(runs)
    colour = {m: f"C{i}" for i, m in enumerate(dict.fromkeys([*METHODS, *methods]))}
    fig, axes = plt.subplots(len(metrics), len(tables), squeeze=False,
                             figsize=(4 * len(tables), 3.6 * len(metrics) + 0.4))
    for (key, label), row in zip(metrics, axes, strict=True):
        for ax, table in zip(row, tables, strict=True):
            for method in methods:
                eps = sorted(e for t, m, e in grouped if t == table and m == method)
                st = [stats(r.get(key) for r in grouped[table, method, e]) for e in eps]
                if not eps or all(math.isnan(s[0]) for s in st):
                    continue
                ax.errorbar(eps, [s[0] for s in st],
                            yerr=[0.0 if math.isnan(s[1]) else s[1] for s in st], fmt="o-",
                            color=colour[method], capsize=3,
                            lw=2.2 if method == DEFAULT else 1.2)
            for ref, c in (("independent_marginals", "0.3"), ("resample_of_real_rows", "0.65")):
                m = stats(r[ref].get(key) for r in refs if r["table"] == table)[0]
                if not math.isnan(m):
                    ax.axhline(m, ls="--", color=c, lw=1)
            ax.set_xscale("log")
            ax.set_title(table)
            ax.set_xlabel("epsilon")
            ax.set_ylabel(label, fontsize=8)
    handles = [plt.Line2D([], [], color=colour[m], marker="o", lw=2.2 if m == DEFAULT else 1.2)
               for m in methods]
    handles += [plt.Line2D([], [], color=c, ls="--", lw=1) for c in ("0.3", "0.65")]
    fig.legend(handles, [*methods, *REFERENCES.values()], loc="lower center",
               ncol=len(handles), fontsize=8)
    fig.tight_layout(rect=(0, 0.4 / (3.6 * len(metrics) + 0.4) + 0.02, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- outputs and the driver ---------------------------------------------------------------------


def put(out: Path, name: str, text: str) -> None:
    """``out/name`` := ``text``, through a temporary file renamed into place."""
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".{name}.tmp"
    tmp.write_text(text)
    tmp.replace(out / name)


def write(out: Path, runs: list[dict[str, Any]], refs: list[dict[str, Any]],
          meta: dict[str, Any], summary: list[dict[str, Any]],
          texts: dict[str, str], draw: Callable[[Path], None]) -> None:
    """runs.json, summary.csv, the ``texts`` (name -> markdown) and errors.png (``draw``),
    each through a temporary file renamed into place."""
    put(out, "runs.json", json.dumps({"meta": meta, "runs": runs, "references": refs},
                                     indent=1) + "\n")
    if summary:
        with tempfile.NamedTemporaryFile("w", newline="", dir=out, delete=False,
                                         suffix=".tmp") as fh:
            w = csv.DictWriter(fh, fieldnames=list(summary[0]))
            w.writeheader()
            w.writerows(summary)
        os.chmod(fh.name, 0o644)
        Path(fh.name).replace(out / "summary.csv")
    for name, text in texts.items():
        put(out, name, text)
    if done(runs):
        tmp = out / ".errors.tmp.png"
        draw(tmp)
        tmp.replace(out / "errors.png")


def add_grid_arguments(ap: Any, methods: list[str], out: Path) -> None:
    """The grid's command-line options (both scripts)."""
    ap.add_argument("--tables", nargs="+", default=list(TABLES), choices=TABLES)
    ap.add_argument("--methods", nargs="+", default=methods, choices=METHODS)
    ap.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=0,
                    help="seeds first-seed .. first-seed + seeds - 1 (tuning: 100)")
    ap.add_argument("--set", nargs="+", default=[], metavar="KEY=JSON",
                    help="TableSynthesizer keywords for every fit, e.g. numeric_fraction=0.2 "
                         "bins=10 (values are JSON)")
    ap.add_argument("--out", type=Path, default=out)
    ap.add_argument("--note", default="",
                    help="a sentence about the code under test, kept in runs.json and the "
                         "markdown outputs")
    ap.add_argument("--rewrite", action="store_true",
                    help="run nothing: rewrite the other outputs from OUT/runs.json (e.g. "
                    "after an interrupted grid)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: the first table, epsilon 1, seed 0")


def settings_of(ap: Any, args: Any) -> dict[str, Any]:
    try:
        return {k: json.loads(v) for k, _, v in (x.partition("=") for x in args.set)}
    except json.JSONDecodeError as exc:
        ap.error(f"--set: a value is not JSON ({exc})")
        raise


def rewrite(args: Any, save: Callable[..., None]) -> dict[str, Any]:
    """``--rewrite``: the saved record, its note extended by ``--note``, written again."""
    saved = json.loads((args.out / "runs.json").read_text())
    if args.note:  # appended to the run's own note
        saved["meta"]["note"] = " ".join(x for x in (saved["meta"].get("note"), args.note) if x)
    save(args.out, saved["runs"], saved["references"], saved["meta"])
    return saved


HEAD = (f"{'table':16} {'method':16} {'eps':>5} {'seed':>4} {'fit s':>7} {'cpu s':>7} "
        f"{'2w nat':>7} {'max 1w':>7} {'2w bins':>7} {'indep':>7} {'resamp':>7}")


def run_grid(args: Any, meta: dict[str, Any], runs: list[dict[str, Any]],
             refs: list[dict[str, Any]], save: Callable[..., None], *,
             classifier: bool = False, with_bins_references: bool = False,
             fit: Callable[..., tuple[dict[str, Any], dict[str, Any]]] | None = None) -> None:
    """Every (table, epsilon, seed, method) of the grid not already in ``runs`` (run, appended,
    and ``save(out, runs, refs, meta)`` after each); ``fit`` (default :func:`run_one`) may
    handle methods of its own."""
    from oracledp.datasets import table_csv, table_schema
    from oracledp.tabular import TableSchema

    have = {(r["table"], r["method"], r["eps"], r["seed"]) for r in runs}
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    todo = [(t, e, s, m) for t in args.tables
            for e, s, m in itertools.product(args.epsilons, seeds, args.methods)
            if (t, m, e, s) not in have]
    print(f"{len(todo)} runs to do; start {meta['start']}", flush=True)
    print(HEAD, flush=True)
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for table in dict.fromkeys(t for t, _, _, _ in todo):
            path = table_csv(table, Path(tmp) / f"{table}.csv", split="all")
            schema = TableSchema.from_dict(table_schema(table))
            real = pd.read_csv(path, dtype=str, keep_default_na=False)
            for _, eps, seed, method in (x for x in todo if x[0] == table):
                rec, ref = (fit or run_one)(table, method, eps, seed, path, real, schema,
                                            meta["grid"].get("settings"), classifier)
                runs.append(rec)
                known = next((r for r in refs if r["table"] == table and r["seed"] == seed),
                             None)
                if ref and known is None:
                    if with_bins_references:
                        for key, v in bins_references(real, schema, seed).items():
                            ref[key]["bins_2way_tv"] = v
                    refs.append(ref)
                    known = ref
                meta["last"] = machine()
                if "skipped" in rec:
                    print(f"{table:16} {method:16} {eps:5g} {seed:4d} refused: "
                          f"{rec['skipped'][:80]}", flush=True)
                else:
                    indep, resamp = ((known or {}).get(k, {}).get("native_2way_tv",
                                                                  float("nan"))
                                     for k in REFERENCES)
                    print(f"{table:16} {method:16} {eps:5g} {seed:4d} "
                          f"{rec['fit_seconds']:7.1f} {rec['fit_cpu_seconds']:7.1f} "
                          f"{rec['native_2way_tv']:7.4f} "
                          f"{rec['native_max_numeric_1way_tv']:7.4f} "
                          f"{rec['bins_2way_tv']:7.4f} {indep:7.4f} {resamp:7.4f}", flush=True)
                elapsed = time.perf_counter() - t_start
                print(f"  progress {len(runs)} runs, {elapsed / 60:.1f} min elapsed, load "
                      f"{meta['last']['loadavg']}", flush=True)
                save(args.out, runs, refs, meta)
