"""TableSynthesizer on the bundled tables, judged at the data's own resolution (issue 38, item 3).

For each bundled table of :mod:`oracledp.datasets` (``--tables``; all five by default), each
``TableSynthesizer`` method (``--methods``; default the default ``oracle-query-pgm`` and
``aim``), each epsilon (``--epsilons``) and seeds ``0 .. --seeds - 1``, the script fits
``TableSynthesizer(method, epsilon=e, random_state=seed).fit(path, schema)`` on the whole
table (``split="all"``), samples as many rows as the real table (``random_state=seed +
1000``) and scores them with ``evaluate_synthetic(fake, real, schema, orders=(2,),
random_state=seed, classifier=False)``.  Recorded per run:

* ``fit_seconds`` (wall clock) and ``fit_cpu_seconds`` (process CPU time, which the other
  jobs on a shared machine inflate less);
* ``native_2way_tv``: the mean 2-way TV at the data's own resolution (numeric columns on their
  declared grid cut at the real table's octiles, categorical columns at their levels);
* ``native_max_numeric_1way_tv``: the largest numeric column's 1-way TV there;
* ``bins_2way_tv``: the mean 2-way TV at ``evaluate_synthetic``'s ``bins`` (its default: 10
  equal-width bins between each numeric column's declared bounds; the synthesizer's own
  coarse bins are ``bins='auto'``, chosen from public facts, and may differ);

and per (table, seed) the two references of ``evaluate_synthetic`` at the data's own
resolution: **exact independent marginals** and a **resample of the real rows** (they do not
depend on the method; the resample depends on the seed).

Outputs to ``--out`` (rewritten after every run, so an interrupted grid leaves valid files):
``runs.json`` (the runs, the references, the machine: load average and CPU count at start
and end, date, numpy and oracledp versions), ``summary.csv`` (mean and standard deviation
over seeds per table x method x epsilon, plus the two references as rows), ``verdict.md``
(the default against AIM per table x epsilon: a win only when the default's mean native
2-way TV is lower than AIM's by more than the larger of the two standard errors; the ratio
of mean fit times, target <= 0.5) and ``errors.png`` (one panel per table: the native mean
2-way TV against epsilon, mean over seeds with +-1 standard deviation bars, the references
dashed).  ``--rewrite`` rebuilds the last three from ``runs.json``.

Every fit runs in this process, one after another.  The evaluation reads the real table:
its numbers are NOT differentially private (a benchmark, not a release).

    PYTHONPATH=src nice -n 5 python benchmarks/synth_native.py --quick   # one table/eps/seed
    PYTHONPATH=src nice -n 5 python benchmarks/synth_native.py           # the full grid
"""

from __future__ import annotations

import argparse
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
KEYS = ("native_2way_tv", "native_max_numeric_1way_tv", "bins_2way_tv", "fit_seconds",
        "fit_cpu_seconds")


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


def run_one(table: str, method: str, eps: float, seed: int, path: Path,
            real: pd.DataFrame, schema: Any, settings: dict[str, Any] | None = None
            ) -> tuple[dict[str, Any], dict[str, Any]]:
    """One fit, sample and evaluation: (the run's record, the references of (table, seed)).
    ``settings``: further TableSynthesizer keywords (``--set``)."""
    from oracledp.synth import TableSynthesizer, evaluate_synthetic

    w0, c0 = time.perf_counter(), time.process_time()
    syn = TableSynthesizer(method, epsilon=eps, random_state=seed, **(settings or {})).fit(
        path, schema)
    fit_s, fit_cpu = time.perf_counter() - w0, time.process_time() - c0
    fake = syn.sample(len(real), random_state=seed + 1000)
    ev = evaluate_synthetic(fake, real, schema, orders=(2,), random_state=seed, classifier=False)
    dr = ev["data_resolution"]
    num = {c["column"]: c["tv"] for c in dr["columns"] if c["kind"] == "numeric"}
    rec = {"table": table, "method": method, "eps": eps, "seed": seed, "rows": len(real),
           "fit_seconds": fit_s, "fit_cpu_seconds": fit_cpu,
           "native_2way_tv": dr["two_way"]["mean_tv"],
           "native_max_2way_tv": dr["two_way"]["max_tv"],
           "native_max_numeric_1way_tv": max(num.values()) if num else float("nan"),
           "native_worst_numeric_column": max(num, key=num.get) if num else None,
           "native_numeric_1way_tv": num,
           "bins_2way_tv": ev["marginals"][2]["mean_tv"],
           "native_pairs": f"{dr['two_way']['sets']} of {dr['two_way']['of']}",
           "guarantee": syn.guarantee_.describe().split(";")[0]}
    refs = {"table": table, "seed": seed}
    for key in REFERENCES:
        r = dr["references"][key]
        refs[key] = {"native_2way_tv": r["two_way"]["mean_tv"],
                     "native_max_2way_tv": r["two_way"]["max_tv"],
                     "one_way_max_tv": r["one_way"].get("max_tv", float("nan"))}
    return rec, refs


# --- summaries --------------------------------------------------------------------------------
def _stats(values: list[float]) -> tuple[float, float, float]:
    """Mean, standard deviation (ddof=1; nan for one value) and standard error."""
    a = np.asarray(values, dtype=float)
    sd = float(a.std(ddof=1)) if len(a) > 1 else float("nan")
    return float(a.mean()), sd, sd / math.sqrt(len(a))


def summarize(runs: list[dict[str, Any]], refs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    groups: dict[tuple[str, str, float], list[dict[str, Any]]] = {}
    for r in runs:
        groups.setdefault((r["table"], r["method"], r["eps"]), []).append(r)
    order = {m: i for i, m in enumerate(METHODS)}
    for (table, method, eps), rs in sorted(groups.items(), key=lambda kv: (
            TABLES.index(kv[0][0]), order[kv[0][1]], kv[0][2])):
        row: dict[str, Any] = {"table": table, "method": method, "eps": eps, "seeds": len(rs)}
        for k in KEYS:
            m, sd, _ = _stats([r[k] for r in rs])
            row[f"{k}_mean"], row[f"{k}_sd"] = round(m, 5), round(sd, 5)
        rows.append(row)
    for table in TABLES:
        rr = [r for r in refs if r["table"] == table]
        if not rr:
            continue
        for key, label in REFERENCES.items():
            row = {"table": table, "method": label, "eps": "", "seeds": len(rr)}
            for k in KEYS:
                row[f"{k}_mean"], row[f"{k}_sd"] = "", ""
            m, sd, _ = _stats([r[key]["native_2way_tv"] for r in rr])
            row["native_2way_tv_mean"], row["native_2way_tv_sd"] = round(m, 5), round(sd, 5)
            rows.append(row)
    return rows


def verdict(runs: list[dict[str, Any]], refs: list[dict[str, Any]], meta: dict[str, Any]
            ) -> str:
    cells: dict[tuple[str, float], dict[str, list[dict[str, Any]]]] = {}
    for r in runs:
        cells.setdefault((r["table"], r["eps"]), {}).setdefault(r["method"], []).append(r)
    grid = meta["grid"]
    per_table = len(grid["methods"]) * len(grid["epsilons"]) * grid["seeds"]
    expected = len(grid["tables"]) * per_table
    done_tables = [t for t in grid["tables"] if sum(r["table"] == t for r in runs) == per_table]
    status = ("complete" if len(runs) == expected else
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
    for (table, eps), by in sorted(cells.items(), key=lambda kv: (TABLES.index(kv[0][0]),
                                                                  kv[0][1])):
        if DEFAULT not in by or PEER not in by:
            continue
        ma, _, sea = _stats([r["native_2way_tv"] for r in by[DEFAULT]])
        mb, _, seb = _stats([r["native_2way_tv"] for r in by[PEER]])
        margin = max(sea, seb)
        win = bool(mb - ma > margin)  # nan margin (one seed): never a win
        ta = float(np.mean([r["fit_seconds"] for r in by[DEFAULT]]))
        tb = float(np.mean([r["fit_seconds"] for r in by[PEER]]))
        ca = float(np.mean([r["fit_cpu_seconds"] for r in by[DEFAULT]]))
        cb = float(np.mean([r["fit_cpu_seconds"] for r in by[PEER]]))
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
    # references and cells worse than exact independent marginals
    lines += ["## References (per table, mean ± sd over seeds)", "",
              "| table | exact independent marginals | resample of real rows |", "|---|---|---|"]
    ref_mean: dict[str, float] = {}
    for table in TABLES:
        rr = [r for r in refs if r["table"] == table]
        if rr:
            parts = []
            for key in REFERENCES:
                m, sd, _ = _stats([r[key]["native_2way_tv"] for r in rr])
                parts.append(f"{m:.4f} ± {0.0 if math.isnan(sd) else sd:.4f}")
            ref_mean[table] = _stats([r["independent_marginals"]["native_2way_tv"]
                                      for r in rr])[0]
            lines.append(f"| {table} | {parts[0]} | {parts[1]} |")
    worse = []
    groups: dict[tuple[str, str, float], list[float]] = {}
    for r in runs:
        groups.setdefault((r["table"], r["method"], r["eps"]), []).append(r["native_2way_tv"])
    for (table, method, eps), v in sorted(groups.items()):
        if table in ref_mean and float(np.mean(v)) > ref_mean[table]:
            worse.append(f"{table} {method} ε={eps:g}: {np.mean(v):.4f} > "
                         f"{ref_mean[table]:.4f}")
    lines += ["", "Cells whose mean native 2-way TV is worse than exact independent marginals: "
              + ("; ".join(worse) if worse else "none") + ".", ""]
    end = meta.get("end") or {}
    lines += ["## Run", "",
              f"Grid: tables {', '.join(grid['tables'])}; methods {', '.join(grid['methods'])}; "
              f"ε {', '.join(f'{e:g}' for e in grid['epsilons'])}; seeds 0..{grid['seeds'] - 1}.",
              "",
              f"Started {meta['start']['time']} (load {meta['start']['loadavg']}, "
              f"{meta['start']['cpu_count']} CPUs); "
              + (f"ended {end['time']} (load {end['loadavg']}, {end['cpu_count']} CPUs)."
                 if end else "still running or interrupted (last run: "
                 f"{meta.get('last', {}).get('time', '-')})."),
              f"numpy {meta['versions']['numpy']}, oracledp commit "
              f"{meta['versions']['oracledp_commit']}"
              + (" (imported from the working tree, with uncommitted changes under src/)"
                 if meta["versions"].get("src_has_uncommitted_changes") else "")
              + ("" if meta["versions"].get("src_has_uncommitted_changes") is not None else
                 f" (imported from {meta['versions']['oracledp_imported_from']}, "
                 "an export of that commit's src/)")
              + ". Fits run one after another in one process under `nice -n 5` on a shared "
              "machine: wall-clock seconds include other jobs' load; the CPU ratio is the "
              "steadier comparison." + (f" {meta['note']}" if meta.get("note") else ""), ""]
    return "\n".join(lines)


def plot(runs: list[dict[str, Any]], refs: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables = [t for t in TABLES if any(r["table"] == t for r in runs)]
    methods = [m for m in METHODS if any(r["method"] == m for r in runs)]
    colour = {m: f"C{i}" for i, m in enumerate(METHODS)}
    fig, axes = plt.subplots(1, len(tables), figsize=(4 * len(tables), 3.8), squeeze=False)
    for ax, table in zip(axes[0], tables, strict=True):
        for method in methods:
            by: dict[float, list[float]] = {}
            for r in runs:
                if r["table"] == table and r["method"] == method:
                    by.setdefault(r["eps"], []).append(r["native_2way_tv"])
            if not by:
                continue
            eps = sorted(by)
            st = [_stats(by[e]) for e in eps]
            ax.errorbar(eps, [s[0] for s in st],
                        yerr=[0.0 if math.isnan(s[1]) else s[1] for s in st], fmt="o-",
                        color=colour[method], capsize=3, lw=2.2 if method == DEFAULT else 1.2,
                        label=method)
        for key, ls, c in (("independent_marginals", "--", "0.3"),
                           ("resample_of_real_rows", "--", "0.65")):
            rr = [r[key]["native_2way_tv"] for r in refs if r["table"] == table]
            if rr:
                ax.axhline(float(np.mean(rr)), ls=ls, color=c, lw=1, label=REFERENCES[key])
        ax.set_xscale("log")
        ax.set_title(table)
        ax.set_xlabel("epsilon")
        ax.set_ylabel("mean 2-way TV (data's own resolution)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(out: Path, runs: list[dict[str, Any]], refs: list[dict[str, Any]],
          meta: dict[str, Any]) -> None:
    """All four outputs, each through a temporary file renamed into place."""
    out.mkdir(parents=True, exist_ok=True)

    def put(name: str, text: str) -> None:
        tmp = out / f".{name}.tmp"
        tmp.write_text(text)
        tmp.replace(out / name)

    put("runs.json", json.dumps({"meta": meta, "runs": runs, "references": refs}, indent=1)
        + "\n")
    summary = summarize(runs, refs)
    if summary:
        with tempfile.NamedTemporaryFile("w", newline="", dir=out, delete=False,
                                         suffix=".tmp") as fh:
            w = csv.DictWriter(fh, fieldnames=list(summary[0]))
            w.writeheader()
            w.writerows(summary)
        os.chmod(fh.name, 0o644)
        Path(fh.name).replace(out / "summary.csv")
    put("verdict.md", verdict(runs, refs, meta))
    if runs:
        tmp = out / ".errors.tmp.png"
        plot(runs, refs, tmp)
        tmp.replace(out / "errors.png")


# --- driver -----------------------------------------------------------------------------------
HEAD = (f"{'table':16} {'method':16} {'eps':>5} {'seed':>4} {'fit s':>7} {'cpu s':>7} "
        f"{'2w nat':>7} {'max 1w':>7} {'2w bins':>7} {'indep':>7} {'resamp':>7}")


def main(argv: list[str] | None = None) -> int:
    from oracledp.datasets import table_csv, table_schema
    from oracledp.tabular import TableSchema

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", nargs="+", default=list(TABLES), choices=TABLES)
    ap.add_argument("--methods", nargs="+", default=[DEFAULT, PEER], choices=METHODS)
    ap.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=0,
                    help="seeds first-seed .. first-seed + seeds - 1 (tuning: 100)")
    ap.add_argument("--set", nargs="+", default=[], metavar="KEY=JSON",
                    help="TableSynthesizer keywords for every fit, e.g. numeric_fraction=0.2 "
                         "bins=10 (values are JSON)")
    ap.add_argument("--out", type=Path, default=Path("docs/results/synth-native"))
    ap.add_argument("--note", default="",
                    help="a sentence about the code under test, kept in runs.json and verdict.md")
    ap.add_argument("--rewrite", action="store_true",
                    help="run nothing: rewrite summary.csv, verdict.md and errors.png from "
                    "OUT/runs.json (e.g. after an interrupted grid)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: the first table, epsilon 1, seed 0")
    args = ap.parse_args(argv)
    if args.rewrite:
        saved = json.loads((args.out / "runs.json").read_text())
        if args.note:  # appended to the run's own note
            saved["meta"]["note"] = " ".join(x for x in (saved["meta"].get("note"), args.note)
                                             if x)
        write(args.out, saved["runs"], saved["references"], saved["meta"])
        print((args.out / "verdict.md").read_text(), flush=True)
        return 0
    if args.quick:
        args.tables, args.epsilons, args.seeds = args.tables[:1], [1.0], 1
    try:
        settings = {k: json.loads(v) for k, _, v in (x.partition("=") for x in args.set)}
    except json.JSONDecodeError as exc:
        ap.error(f"--set: a value is not JSON ({exc})")
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    meta: dict[str, Any] = {
        "start": machine(), "versions": versions(), "note": args.note,
        "grid": {"tables": args.tables, "methods": args.methods, "epsilons": args.epsilons,
                 "seeds": args.seeds, "first_seed": args.first_seed, "settings": settings},
        "call": {"orders": [2], "classifier": False, "sample_random_state": "seed + 1000",
                 "evaluate_random_state": "seed", "split": "all"},
        "not_private": "the evaluation reads the real table; these numbers are not DP"}
    runs: list[dict[str, Any]] = []
    refs: list[dict[str, Any]] = []
    total = len(args.tables) * len(args.methods) * len(args.epsilons) * args.seeds
    print(f"{total} runs; start {meta['start']}", flush=True)
    print(HEAD, flush=True)
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for table in args.tables:
            path = table_csv(table, Path(tmp) / f"{table}.csv", split="all")
            schema = TableSchema.from_dict(table_schema(table))
            real = pd.read_csv(path, dtype=str, keep_default_na=False)
            for eps, seed, method in itertools.product(args.epsilons, seeds, args.methods):
                rec, ref = run_one(table, method, eps, seed, path, real, schema, settings)
                runs.append(rec)
                if not any(r["table"] == table and r["seed"] == seed for r in refs):
                    refs.append(ref)
                meta["last"] = machine()
                print(f"{table:16} {method:16} {eps:5g} {seed:4d} {rec['fit_seconds']:7.1f} "
                      f"{rec['fit_cpu_seconds']:7.1f} {rec['native_2way_tv']:7.4f} "
                      f"{rec['native_max_numeric_1way_tv']:7.4f} {rec['bins_2way_tv']:7.4f} "
                      f"{ref['independent_marginals']['native_2way_tv']:7.4f} "
                      f"{ref['resample_of_real_rows']['native_2way_tv']:7.4f}", flush=True)
                elapsed = time.perf_counter() - t_start
                print(f"  progress {len(runs)}/{total}, {elapsed / 60:.1f} min elapsed, load "
                      f"{meta['last']['loadavg']}", flush=True)
                write(args.out, runs, refs, meta)
    meta["end"] = machine()
    write(args.out, runs, refs, meta)
    print((args.out / "verdict.md").read_text(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
