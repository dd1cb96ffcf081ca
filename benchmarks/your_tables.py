"""Every model through the command line on public tables that are not Adult or KDD-99.

For each bundled table of :mod:`oracledp.datasets._tables` (a mostly categorical one, a
numeric one, two large mixed ones) the script writes a 70/30 train/test split and the
table's public schema (bounds from its documentation), then runs, as a user would, in a
fresh process each::

    oracledp fit train.csv --schema schema.json --model M --epsilon E --seed S --out DIR
    oracledp evaluate DIR test.csv

for every model at eps in {0.1, 1, 2} and 3 seeds (accuracy-first: its default alpha and
--max-epsilon, 3 seeds), beside the majority rate and a non-private logistic regression on
the same encoding.  With ``--intercept-ablation`` (default on) opdisc, rspm and dpsgd are also
fitted at eps = 1 with ``"intercept": false``.  A fit that exits 2 (oracle not certified
within --time-limit, a cap, no halt) is recorded as refused, with its reason.

Writes runs.csv, runs.json, summary.csv, summary.md and accuracy.png to --out and prints
the summary table.  Times are wall-clock on this machine, printed with the environment.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from oracledp._provenance import environment, environment_line
from oracledp.datasets._tables import TABLES, table_csv, table_schema

MODELS = ("opdisc", "rspm", "gaussian-rspm", "dpsgd", "accuracy-first", "opsamp")
EPS = (0.1, 1.0, 2.0)


def _prepare(name: str, root: Path) -> dict[str, Any]:
    """Train/test CSVs, the public schema with and without the intercept, the baselines."""
    from sklearn.linear_model import LogisticRegression

    from oracledp.tabular import SchemaTransformer, TableSchema, read_csv

    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    train = table_csv(name, d / "train.csv", split="train")
    test = table_csv(name, d / "test.csv", split="test")
    doc = table_schema(name)
    schema = TableSchema.from_dict(doc)
    (d / "schema.json").write_text(schema.to_json())
    (d / "schema-nointercept.json").write_text(
        TableSchema.from_dict({**doc, "intercept": False}).to_json())
    tr = read_csv(train, schema, with_target=True)
    te = read_csv(test, schema, with_target=True)
    ytr, yte = schema.labels_of(tr), schema.labels_of(te)
    enc = SchemaTransformer(schema, on_unknown="refuse").fit(tr)
    labels, counts = np.unique(ytr, return_counts=True)
    majority_label = labels[np.argmax(counts)]
    lr = LogisticRegression(max_iter=2000).fit(enc.transform(tr), ytr)
    return {
        "table": name, "dir": d, "n_train": len(tr), "n_test": len(te),
        "n_features": schema.n_features,
        "majority": float(np.mean(yte == majority_label)),
        "logreg": float(lr.score(enc.transform(te), yte)),
    }


def _cli(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "oracledp._cli", *args], capture_output=True,
                          text=True, timeout=timeout, env=env)


def _reason(stderr: str) -> str:
    if "did not certify" in stderr:
        return "not certified"
    if "is below the smallest ex-post loss" in stderr:
        return "cap below the test's own epsilon"
    if "times below" in stderr and "theory curve" in stderr:
        return "cap leaves only levels hopeless by the theory curve"
    if "did not halt" in stderr:
        return "no halt within the cap"
    if "could not certify the accuracy" in stderr:
        return "OPSamp not certified"
    return stderr.strip().splitlines()[-1][:120] if stderr.strip() else "exit 2"


def _run(job: dict[str, Any], time_limit: float) -> dict[str, Any]:
    d: Path = job["dir"]
    out = d / "models" / (f"{job['model']}-eps{job['eps']}-s{job['seed']}"
                          f"{'' if job['intercept'] else '-noint'}")
    schema = d / ("schema.json" if job["intercept"] else "schema-nointercept.json")
    args = ["fit", str(d / "train.csv"), "--schema", str(schema), "--model", job["model"],
            "--seed", str(job["seed"]), "--out", str(out), "--force"]
    if job["model"] in ("opdisc", "rspm", "gaussian-rspm"):  # the exact oracle's limit (refused by the others)
        args += ["--time-limit", str(time_limit)]
    if job["model"] != "accuracy-first":
        args += ["--epsilon", str(job["eps"])]
    t0 = time.perf_counter()
    res = _cli(args, timeout=time_limit * 4 + 120)
    row = {k: v for k, v in job.items() if k != "dir"}
    row["fit_s"] = round(time.perf_counter() - t0, 2)
    if res.returncode != 0:
        return {**row, "status": "refused", "reason": _reason(res.stderr), "accuracy": None,
                "epsilon_released": None}
    doc = json.loads((out / "model.json").read_text())
    ev = _cli(["evaluate", str(out), str(d / "test.csv")], timeout=300)
    m = re.search(r"accuracy ([0-9.]+)", ev.stdout)
    acc = float(m.group(1)) if m and ev.returncode == 0 else None
    return {**row, "status": "ok", "reason": "", "accuracy": acc,
            "epsilon_released": doc["guarantee"]["epsilon"]}


def _summary(runs: pd.DataFrame, base: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (table, model, eps, icpt), g in runs.groupby(["table", "model", "eps", "intercept"],
                                                    dropna=False):
        ok = g[g.status == "ok"]
        accs = ok.accuracy.dropna()
        rows.append({
            "table": table, "model": model, "eps": eps, "intercept": icpt,
            "fits": len(g), "released": len(ok),
            "acc_mean": round(float(accs.mean()), 4) if len(accs) else None,
            "acc_sd": round(float(accs.std(ddof=1)), 4) if len(accs) > 1 else None,
            "eps_released_max": (round(float(ok.epsilon_released.max()), 3)
                                 if len(ok) else None),
            "refusals": "; ".join(sorted(set(g[g.status != "ok"].reason))),
            "median_fit_s": round(float(g.fit_s.median()), 1),
        })
    out = pd.DataFrame(rows).merge(base[["table", "majority", "logreg"]], on="table")
    return out.sort_values(["table", "intercept", "model", "eps"], ascending=[True, False,
                                                                             True, True])


def _markdown(summary: pd.DataFrame, base: pd.DataFrame) -> str:
    lines = ["| table | n train | features | majority | logistic (non-private) |",
             "|---|---|---|---|---|"]
    for _, b in base.iterrows():
        lines.append(f"| {b.table} | {b.n_train:,} | {b.n_features} | {b.majority:.3f} | "
                     f"{b.logreg:.3f} |")
    lines += ["", "| table | model | eps | intercept | released / fits | test accuracy | "
                  "refusals |", "|---|---|---|---|---|---|---|"]
    for _, r in summary.iterrows():
        acc = ("-" if r.acc_mean is None or pd.isna(r.acc_mean) else
               f"{r.acc_mean:.3f}" + ("" if r.acc_sd is None or pd.isna(r.acc_sd)
                                       else f" ± {r.acc_sd:.3f}"))
        if r.model != "accuracy-first":
            eps = f"{r.eps:g}"
        elif r.eps_released_max is None or pd.isna(r.eps_released_max):
            eps = "ex-post (none released)"
        else:
            eps = f"ex-post ≤ {r.eps_released_max:g}"
        lines.append(f"| {r.table} | {r.model} | {eps} | {'yes' if r.intercept else 'no'} | "
                     f"{r.released}/{r.fits} | {acc} | {r.refusals or ''} |")
    return "\n".join(lines) + "\n"


def _winners(summary: pd.DataFrame) -> str:
    """Per table and eps: the model with the best mean test accuracy among those released in
    every fit (a model that sometimes refuses is listed separately), against the majority."""
    lines = ["| table | eps | best model (every fit released) | accuracy | majority | "
             "beats majority by |", "|---|---|---|---|---|---|"]
    s = summary[summary.intercept & (summary.model != "accuracy-first")]
    for (table, eps), g in s.groupby(["table", "eps"]):
        full = g[(g.released == g.fits) & g.acc_mean.notna()]
        if not len(full):
            lines.append(f"| {table} | {eps:g} | (none) | - | {g.majority.iloc[0]:.3f} | - |")
            continue
        best = full.loc[full.acc_mean.idxmax()]
        lines.append(f"| {table} | {eps:g} | {best.model} | {best.acc_mean:.3f} | "
                     f"{best.majority:.3f} | {best.acc_mean - best.majority:+.3f} |")
    return "\n".join(lines) + "\n"


def _plot(summary: pd.DataFrame, base: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables = list(base.table)
    fig, axes = plt.subplots(1, len(tables), figsize=(4.2 * len(tables), 3.6), squeeze=False)
    for ax, t in zip(axes[0], tables, strict=True):
        s = summary[(summary.table == t) & summary.intercept & (summary.model != "accuracy-first")]
        for model, g in s.groupby("model"):
            ax.errorbar(g.eps, g.acc_mean, yerr=g.acc_sd.fillna(0), marker="o", label=model,
                        capsize=2)
        b = base[base.table == t].iloc[0]
        ax.axhline(b.majority, color="grey", ls="--", lw=1, label="majority")
        ax.axhline(b.logreg, color="black", ls=":", lw=1, label="logistic (non-private)")
        ax.set_xscale("log")
        ax.set_title(t, fontsize=9)
        ax.set_xlabel("epsilon")
    axes[0][0].set_ylabel("test accuracy")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("your-tables-results"))
    ap.add_argument("--tables", default=",".join(TABLES))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--eps", default=",".join(map(str, EPS)))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=30.0,
                    help="Seconds per oracle call of opdisc/rspm (the CLI default is 60).")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--no-intercept-ablation", action="store_true")
    a = ap.parse_args()
    print(environment_line(), flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    tables = [t for t in a.tables.split(",") if t]
    models = [m for m in a.models.split(",") if m]
    eps = [float(e) for e in a.eps.split(",") if e]
    base_rows = [_prepare(t, a.out / "data") for t in tables]
    base = pd.DataFrame(base_rows)
    jobs: list[dict[str, Any]] = []
    for b, model, seed in itertools.product(base_rows, models, range(a.seeds)):
        for e in ([None] if model == "accuracy-first" else eps):
            jobs.append({"table": b["table"], "dir": b["dir"], "model": model, "eps": e,
                         "seed": seed, "intercept": True})
    if not a.no_intercept_ablation:
        for b, model, seed in itertools.product(base_rows, ("opdisc", "rspm", "dpsgd"),
                                                range(a.seeds)):
            if model in models and 1.0 in eps:
                jobs.append({"table": b["table"], "dir": b["dir"], "model": model, "eps": 1.0,
                             "seed": seed, "intercept": False})
    print(f"{len(jobs)} fits on {len(tables)} tables, {a.n_jobs} at a time", flush=True)
    t0 = time.perf_counter()
    runs = Parallel(n_jobs=a.n_jobs, verbose=5)(delayed(_run)(j, a.time_limit) for j in jobs)
    wall = time.perf_counter() - t0
    df = pd.DataFrame(runs)
    df.to_csv(a.out / "runs.csv", index=False)
    summary = _summary(df, base)
    summary.to_csv(a.out / "summary.csv", index=False)
    md = _markdown(summary, base) + "\n" + _winners(summary)
    (a.out / "summary.md").write_text(md)
    (a.out / "runs.json").write_text(json.dumps(
        {"environment": environment(), "time_limit": a.time_limit, "wall_s": round(wall, 1),
         "baselines": base.drop(columns="dir").to_dict("records"), "runs": runs},
        indent=1, default=str))
    _plot(summary, base, a.out / "accuracy.png")
    print(md)
    print(f"wall {wall:.0f}s; wrote {a.out}/runs.csv, runs.json, summary.csv, summary.md, "
          "accuracy.png")


if __name__ == "__main__":
    main()
