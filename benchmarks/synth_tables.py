"""Synthetic data on bundled tables: every method, every epsilon, marginal errors and utility.

For each table (Adult with every column that has a public domain, and the bundled tables of
:mod:`oracledp.datasets._tables`), each method (OracleQueryPGM, MST, AIM, independent
marginals, MWEM where the product domain fits), each epsilon and seed, the script fits on
the train split and reports

* mean and max total-variation error of all 2-way and all 3-way marginals (the model's
  exact marginals against the real train split's; 0.5 * L1 per table, mean/max over tables);
* train-on-synthetic / test-on-real accuracy (logistic regression on one-hot codes,
  trained on ``n_train`` synthetic records, scored on the real test split) against the same
  model trained on the real train split;
* the fit time (wall clock, one process; the machine's load shows in it).

It writes ``runs.json``, ``summary.csv`` and ``errors.png`` to ``--out`` and prints the
summary.  Privacy: every fit is (epsilon, 1e-6)-DP (independent and MWEM: epsilon-DP) for
replace-one neighbours on the train split; the evaluation reads the real data (it is a
benchmark, not a release).

Schema -> codes: categorical columns keep their declared levels (a declared missing level
is one more level); numeric columns are cut into ``--bins`` equal-width bins between the
schema's declared lower and upper bounds (public, never read from the data).  A value
outside its bounds is an error.  (To be replaced by the table layer's API once merged.)

MST and AIM estimate with the numpy junction tree (their default backend); each fit still
runs in a fresh process.  ``--smartnoise-python /path/to/venv/bin/python`` adds
smartnoise-synth's MST and AIM (installed in a separate venv, never in the project's); their
errors come from their sampled records (their models are not exposed).

    PYTHONPATH=src python benchmarks/synth_tables.py --quick        # smoke test, ~minutes
    PYTHONPATH=src python benchmarks/synth_tables.py --out results/  # the full grid (hours)
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import itertools
import json
import math
import multiprocessing as mp
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

DELTA = 1e-6
EPSILONS = (0.1, 0.5, 1.0, 2.0)
TABLES = ("adult", "health_insurance", "doctor_visits", "nhefs", "titanic")
METHODS = ("oracle_query_pgm", "aim", "mst", "independent", "mwem", "smartnoise_mst",
           "smartnoise_aim")
PEERS = ("mst", "aim")  # run each fit in a fresh process
SMARTNOISE = ("smartnoise_mst", "smartnoise_aim")

# smartnoise-synth runs in its own venv (never a dependency of the project): it reads a CSV of
# level strings, fits with every column categorical (preprocessor_eps=0: no budget spent on
# bounds) and writes n sampled records.  Note: smartnoise takes each column's categories from
# the data (levels seen), not from a declared domain.
_SN_WORKER = """
import sys, time, warnings, json
import pandas as pd
warnings.simplefilter("ignore")
from snsynth import Synthesizer
src, dst, method, eps, delta, n = sys.argv[1:7]
df = pd.read_csv(src, dtype=str, keep_default_na=False)
syn = Synthesizer.create(method, epsilon=float(eps), delta=float(delta), verbose=False)
t0 = time.perf_counter()
syn.fit(df, categorical_columns=list(df.columns), preprocessor_eps=0.0)
fit_s = time.perf_counter() - t0
syn.sample(int(n)).to_csv(dst, index=False)
print(json.dumps({"fit_seconds": fit_s}))
"""
_MWEM_CELLS = 2_000_000


# --- schema -> codes (local stand-in for the table layer) -------------------------------------
def _levels(col: dict[str, Any], bins: int) -> list[str]:
    if col["type"] == "categorical":
        lv = [str(v) for v in col["levels"]]
    else:
        lo, hi = float(col["lower"]), float(col["upper"])
        edges = np.linspace(lo, hi, bins + 1)
        lv = [f"[{edges[i]:g},{edges[i + 1]:g}{']' if i == bins - 1 else ')'}"
              for i in range(bins)]
    if col.get("missing") == "level":
        lv.append("<missing>")
    return lv


def encode_frame(df: pd.DataFrame, schema: dict[str, Any], bins: int
                 ) -> tuple[np.ndarray, Any]:
    """Codes of ``df`` (strings) over the domain the schema declares (target last)."""
    from oracledp.synth import Domain

    cols = [c for c in schema["columns"] if c["name"] != schema["target"]["name"]]
    target = {"name": schema["target"]["name"], "type": "categorical",
              "levels": schema["target"]["labels"]}
    cols = [*cols, target]
    codes = np.empty((len(df), len(cols)), dtype=np.int64)
    for j, col in enumerate(cols):
        raw = df[col["name"]].astype(str).str.strip().to_numpy()
        missing = raw == ""
        if missing.any() and col.get("missing") != "level":
            raise ValueError(f"column {col['name']!r} has missing cells but declares no missing "
                             "level")
        nlev = len(col["levels"]) if col["type"] == "categorical" else bins
        if col["type"] == "categorical":
            idx = pd.Index([str(v) for v in col["levels"]]).get_indexer(raw)
            bad = (idx < 0) & ~missing
        else:
            lo, hi = float(col["lower"]), float(col["upper"])
            x = pd.to_numeric(pd.Series(np.where(missing, "nan", raw)), errors="coerce").to_numpy()
            bad = ~missing & ~((x >= lo) & (x <= hi))
            idx = np.clip(np.floor((np.nan_to_num(x, nan=lo) - lo) / (hi - lo) * bins), 0,
                          bins - 1).astype(np.int64)
        if bad.any():  # no value, row or count in the message
            raise ValueError(f"column {col['name']!r}: a value outside its declared domain")
        codes[:, j] = np.where(missing, nlev, idx)
    domain = Domain(tuple(c["name"] for c in cols), tuple(tuple(_levels(c, bins)) for c in cols))
    return codes, domain


def _adult_schema() -> dict[str, Any]:
    from oracledp.datasets._adult import (
        CATEGORIES,
        COLUMNS,
        MISSING_ALLOWED,
        NUMERIC_RANGE,
    )

    cols = []
    for c in COLUMNS:
        if c in NUMERIC_RANGE:
            lo, hi = NUMERIC_RANGE[c]
            cols.append({"name": c, "type": "numeric", "lower": lo, "upper": hi})
        elif c in CATEGORIES and c != "income":
            col = {"name": c, "type": "categorical", "levels": list(CATEGORIES[c])}
            if c in MISSING_ALLOWED:
                col["levels"].append("?")
            cols.append(col)
    return {"columns": cols, "target": {"name": "income", "labels": ["<=50K", ">50K"]}}


def load_table(name: str, bins: int) -> tuple[np.ndarray, np.ndarray, Any]:
    """(train codes, test codes, domain) of a table; the target is the last attribute."""
    if name == "adult":
        from oracledp.datasets._adult import _read_split

        schema = _adult_schema()
        train = _read_split("train")
        test = _read_split("test")
        test["income"] = test["income"].str.rstrip(".")
        tr, domain = encode_frame(train, schema, bins)
        te, _ = encode_frame(test, schema, bins)
        return tr, te, domain
    from oracledp.datasets._tables import table_csv, table_schema

    schema = table_schema(name)
    with tempfile.TemporaryDirectory() as tmp:
        frames = {}
        for split in ("train", "test"):
            path = table_csv(name, Path(tmp) / f"{split}.csv", split=split)
            frames[split] = pd.read_csv(path, dtype=str, keep_default_na=False)
    tr, domain = encode_frame(frames["train"], schema, bins)
    te, _ = encode_frame(frames["test"], schema, bins)
    return tr, te, domain


# --- methods ----------------------------------------------------------------------------------
def make(method: str, eps: float, seed: int) -> Any:
    from oracledp import synth

    if method == "oracle_query_pgm":
        return synth.OracleQueryPGM(eps, DELTA, k=3, random_state=seed)
    if method == "mst":
        return synth.MSTSynthesizer(eps, DELTA, random_state=seed)
    if method == "aim":
        return synth.AIMSynthesizer(eps, DELTA, k=3, random_state=seed)
    if method == "independent":
        return synth.IndependentMarginalsSynthesizer(eps, random_state=seed)
    if method == "mwem":
        return synth.MWEMSynthesizer(eps, k=3, rounds=30, random_state=seed)
    raise ValueError(method)


def _marginal_errors(syn: Any, codes: np.ndarray, domain: Any, k: int) -> dict[str, float]:
    from oracledp.synth import answer, kway_marginal_workload

    wl = kway_marginal_workload(domain, k)
    true, est = answer(wl, codes), syn.answer(wl)
    tv = np.array([0.5 * np.abs(true[a:b] - est[a:b]).sum()
                   for a, b in itertools.pairwise(wl.offsets)])
    return {f"mean_tv_{k}way": float(tv.mean()), f"max_tv_{k}way": float(tv.max())}


def _accuracy(train: np.ndarray, test: np.ndarray, domain: Any) -> float:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import OneHotEncoder

    y_tr, y_te = train[:, -1], test[:, -1]
    if len(np.unique(y_tr)) < 2:
        return float(np.mean(y_te == y_tr[0]))
    enc = OneHotEncoder(categories=[list(range(s)) for s in domain.shape[:-1]],
                        handle_unknown="ignore")
    clf = LogisticRegression(max_iter=500)
    clf.fit(enc.fit_transform(train[:, :-1]), y_tr)
    return float(clf.score(enc.transform(test[:, :-1]), y_te))


def run_one(table: str, method: str, eps: float, seed: int, bins: int) -> dict[str, Any]:
    train, test, domain = load_table(table, bins)
    rec: dict[str, Any] = {"table": table, "method": method, "eps": eps, "seed": seed,
                           "d": len(domain), "domain_cells_log10": math.log10(domain.size),
                           "n_train": len(train)}
    if method == "mwem" and domain.size > _MWEM_CELLS:
        return {**rec, "skipped": f"MWEM keeps the {domain.size:.3g}-cell product domain"}
    syn = make(method, eps, seed)
    t0 = time.perf_counter()
    syn.fit(train, domain)
    rec["fit_seconds"] = time.perf_counter() - t0
    rec["guarantee"] = syn.guarantee_.describe().split(";")[0]
    for k in (2, 3):
        rec.update(_marginal_errors(syn, train, domain, k))
    synth_rows = syn.sample_codes(len(train), random_state=seed + 1000)
    rec["accuracy_synthetic"] = _accuracy(synth_rows, test, domain)
    return rec


def run_smartnoise(table: str, method: str, eps: float, seed: int, bins: int,
                   python: str) -> dict[str, Any]:
    """smartnoise-synth's MST or AIM in its own venv; errors from its sampled records."""
    import subprocess

    from oracledp.synth import answer, kway_marginal_workload

    train, test, domain = load_table(table, bins)
    rec: dict[str, Any] = {"table": table, "method": method, "eps": eps, "seed": seed,
                           "d": len(domain), "domain_cells_log10": math.log10(domain.size),
                           "n_train": len(train), "note": "errors from sampled records"}
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "train.csv", Path(tmp) / "synth.csv"
        domain.decode(train).astype(str).to_csv(src, index=False)
        out = subprocess.run([python, "-c", _SN_WORKER, str(src), str(dst),
                              method.split("_")[1], str(eps), str(DELTA), str(len(train))],
                             capture_output=True, text=True, check=True)
        rec["fit_seconds"] = json.loads(out.stdout.strip().splitlines()[-1])["fit_seconds"]
        df = pd.read_csv(dst, dtype=str, keep_default_na=False)
    codes = np.stack([pd.Index([str(v) for v in lv]).get_indexer(df[a].astype(str))
                      for a, lv in zip(domain.attributes, domain.levels, strict=True)], axis=1)
    for k in (2, 3):
        wl = kway_marginal_workload(domain, k)
        true, est = answer(wl, train), answer(wl, codes)
        tv = np.array([0.5 * np.abs(true[a:b] - est[a:b]).sum()
                       for a, b in itertools.pairwise(wl.offsets)])
        rec[f"mean_tv_{k}way"], rec[f"max_tv_{k}way"] = float(tv.mean()), float(tv.max())
    rec["accuracy_synthetic"] = _accuracy(codes, test, domain)
    return rec


def _run_isolated(args: tuple[str, str, float, int, int]) -> dict[str, Any]:
    return run_one(*args)


def baseline(table: str, bins: int) -> float:
    train, test, domain = load_table(table, bins)
    return _accuracy(train, test, domain)


# --- driver -----------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", nargs="+", default=["adult", "health_insurance", "doctor_visits",
                                                     "titanic"], choices=TABLES)
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--bins", type=int, default=8)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/synth_tables"))
    ap.add_argument("--smartnoise-python", default=None,
                    help="python of a separate venv with smartnoise-synth installed (adds "
                    "smartnoise_mst and smartnoise_aim)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the runs already in OUT/runs.json and run only the missing "
                    "(table, method, eps, seed) cells; runs.json is rewritten after every run")
    ap.add_argument("--combine", nargs="+", type=Path, default=None, metavar="DIR",
                    help="run nothing: merge the runs.json of these directories (runs made "
                    "in separate processes) into OUT, with the summary, plot and verdict")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: titanic and health_insurance, eps 1, one seed")
    args = ap.parse_args(argv)
    if args.combine:
        runs, seen = [], set()
        for d in args.combine:  # a cell run twice (overlapping processes) counts once: the first
            for r in json.loads((d / "runs.json").read_text()):
                key = (r["table"], r["method"], r["eps"], r["seed"])
                if key not in seen:
                    seen.add(key)
                    runs.append(r)
        report(runs, args.out)
        return 0
    if args.quick:
        args.tables, args.epsilons, args.seeds = ["titanic", "health_insurance"], [1.0], 1
    methods = [m for m in args.methods if m not in SMARTNOISE or args.smartnoise_python]
    if len(methods) < len(args.methods):
        print("note: smartnoise-synth skipped (no --smartnoise-python)")
    args.out.mkdir(parents=True, exist_ok=True)
    runs: list[dict[str, Any]] = []
    if args.resume and (args.out / "runs.json").exists():
        runs = json.loads((args.out / "runs.json").read_text())
    done = {(r["table"], r["method"], r["eps"], r["seed"]) for r in runs}
    base = {t: baseline(t, args.bins) for t in args.tables}
    ctx = mp.get_context("spawn")
    for table, eps, seed, method in itertools.product(args.tables, args.epsilons,
                                                      range(args.seeds), methods):
        job = (table, method, eps, seed, args.bins)
        if (table, method, eps, seed) in done:
            continue
        if method in SMARTNOISE:
            rec = run_smartnoise(*job, args.smartnoise_python)
        elif method in PEERS:  # a fresh process per fit (jaxlib crashed in long processes)
            with cf.ProcessPoolExecutor(1, mp_context=ctx) as ex:
                rec = ex.submit(_run_isolated, job).result()
        else:
            rec = run_one(*job)
        rec["accuracy_real"] = base[table]
        runs.append(rec)
        print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v)
                          for k, v in rec.items() if k != "guarantee"}), flush=True)
        (args.out / "runs.json").write_text(json.dumps(runs, indent=1))
    report(runs, args.out)
    return 0


def report(runs: list[dict[str, Any]], out: Path) -> None:
    """Write runs.json, summary.csv, errors.png and verdict.md to ``out``; print the summary."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "runs.json").write_text(json.dumps(runs, indent=1))
    summary = summarize(runs)
    with (out / "summary.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(summary[0]))
        w.writeheader()
        w.writerows(summary)
    print_table(summary)
    plot(summary, out / "errors.png")
    text = verdict(runs)
    (out / "verdict.md").write_text(text)
    print(text)
    table = methods_table(runs)
    (out / "methods.md").write_text(table)
    print(table)


def methods_table(runs: list[dict[str, Any]]) -> str:
    """Markdown: mean 2-way TV error (and mean fit seconds) of every method per (table, eps)."""
    methods = [m for m in METHODS if any(r["method"] == m for r in runs)]
    cells: dict[tuple[str, float, str], list[dict[str, Any]]] = {}
    for r in runs:
        if "skipped" not in r:
            cells.setdefault((r["table"], r["eps"], r["method"]), []).append(r)
    lines = ["| table | ε | " + " | ".join(methods) + " |",
             "|---|---|" + "---|" * len(methods)]
    for table, eps in sorted({(t, e) for t, e, _ in cells}):
        row = []
        for m in methods:
            rs = cells.get((table, eps, m), [])
            row.append("-" if not rs else
                       f"{np.mean([r['mean_tv_2way'] for r in rs]):.4f} "
                       f"({np.mean([r['fit_seconds'] for r in rs]):.3g} s)")
        lines.append(f"| {table} | {eps:g} | " + " | ".join(row) + " |")
    lines.append("")
    lines.append("Mean 2-way TV error over the seeds (mean fit seconds); - : not run or "
                 "skipped (MWEM keeps the product domain: titanic only).")
    return "\n".join(lines) + "\n"


def verdict(runs: list[dict[str, Any]], ours: str = "oracle_query_pgm", peer: str = "aim"
            ) -> str:
    """Markdown: the default against AIM per (table, eps), mean 2-way TV error over seeds.

    The standard error of a difference of two independent means is
    ``sqrt(se_ours^2 + se_peer^2)``; a difference within two of them is flagged "within
    noise" (the seeds' spread, not a significance test at a stated level).
    """
    cells: dict[tuple[str, float], dict[str, list[dict[str, Any]]]] = {}
    for r in runs:
        if "skipped" not in r and r["method"] in (ours, peer):
            cells.setdefault((r["table"], r["eps"]), {}).setdefault(r["method"], []).append(r)
    lines = ["| table | ε | seeds | default (mean ± se) | AIM (mean ± se) | difference | "
             "default s | AIM s | time ratio | verdict |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    wins = 0
    total = 0
    for (table, eps), by in sorted(cells.items()):
        if ours not in by or peer not in by:
            continue
        a = np.array([r["mean_tv_2way"] for r in by[ours]])
        b = np.array([r["mean_tv_2way"] for r in by[peer]])
        se = [float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else float("nan")
              for x in (a, b)]
        diff = float(a.mean() - b.mean())
        sd = math.hypot(*se)
        ta = float(np.mean([r["fit_seconds"] for r in by[ours]]))
        tb = float(np.mean([r["fit_seconds"] for r in by[peer]]))
        total += 1
        wins += diff < 0
        word = "wins" if diff < 0 else "loses"
        if not abs(diff) > 2 * sd:
            word += " (within noise)"
        lines.append(f"| {table} | {eps:g} | {len(a)}/{len(b)} | {a.mean():.4f} ± {se[0]:.4f} | "
                     f"{b.mean():.4f} ± {se[1]:.4f} | {diff:+.4f} | {ta:.1f} | {tb:.1f} | "
                     f"{ta / tb:.2f} | {word} |")
    lines.append("")
    lines.append(f"The default has the lower mean 2-way error in {wins} of {total} cells.")
    return "\n".join(lines) + "\n"


KEYS = ("mean_tv_2way", "max_tv_2way", "mean_tv_3way", "max_tv_3way", "accuracy_synthetic",
        "accuracy_real", "fit_seconds")


def summarize(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    groups: dict[tuple[str, str, float], list[dict[str, Any]]] = {}
    for r in runs:
        if "skipped" not in r:
            groups.setdefault((r["table"], r["method"], r["eps"]), []).append(r)
    for (table, method, eps), rs in groups.items():
        row: dict[str, Any] = {"table": table, "method": method, "eps": eps, "seeds": len(rs)}
        for k in KEYS:
            row[k] = round(float(np.mean([r[k] for r in rs])), 4)
        out.append(row)
    return out


def print_table(summary: list[dict[str, Any]]) -> None:
    head = ["table", "method", "eps", *KEYS]
    print(" | ".join(f"{h:>12}" for h in head))
    for row in summary:
        print(" | ".join(f"{row[h]!s:>12}" for h in head))


def plot(summary: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables = sorted({r["table"] for r in summary})
    methods = [m for m in METHODS if any(r["method"] == m for r in summary)]
    # one colour per method in every panel (a panel's own colour cycle would give a method
    # different colours where another method is missing), the default drawn thicker
    colour = {m: f"C{i}" for i, m in enumerate(methods)}
    fig, axes = plt.subplots(1, len(tables), figsize=(4 * len(tables), 3.6), squeeze=False)
    for ax, table in zip(axes[0], tables, strict=True):
        for method in methods:
            rs = sorted((r for r in summary if r["table"] == table and r["method"] == method),
                        key=lambda r: r["eps"])
            if rs:
                ax.plot([r["eps"] for r in rs], [r["mean_tv_2way"] for r in rs], "o-",
                        color=colour[method], lw=2.5 if method == METHODS[0] else 1.2,
                        label=method)
        ax.set_xscale("log")
        ax.set_title(table)
        ax.set_xlabel("epsilon")
        ax.set_ylabel("mean 2-way TV error")
    handles = [plt.Line2D([], [], color=colour[m], marker="o", lw=2.5 if m == METHODS[0] else 1.2)
               for m in methods]
    fig.legend(handles, methods, loc="lower center", ncol=len(methods), fontsize=8)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
