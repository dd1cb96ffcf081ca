"""``--model auto`` against the best single model at the same total epsilon.

On the bundled tables (their public schemas, the fixed 70/30 split of
:func:`oracledp.datasets.table_csv`), for each total epsilon and seed, fits through
:func:`oracledp._registry.make_estimator` (what ``oracledp fit`` calls), with default options:

* every single model (opdisc, rspm, gaussian-rspm, dpsgd) at that epsilon;
* ``auto`` (:class:`~oracledp.estimators.AutoClassifier`) at that TOTAL epsilon: its trials
  share the budget (docs/proofs/model-selection.md).

and measures test accuracy (not private: the held-out 30 %).  A fit whose oracle does not
certify is recorded as refused.  "Best single" is, per table and epsilon, the single model
with the highest mean test accuracy among those that released every seed; "gap" is auto's mean
minus it (the target: gap >= -0.01).

Writes runs.csv, runs.json, summary.csv and summary.md to --out; prints the summary.

    python benchmarks/model_auto.py [--tables ...] [--eps 1 2] [--seeds 0 1 2] [--jobs 2]
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from oracledp._provenance import environment_line

TABLES = ("health_insurance", "doctor_visits", "titanic", "biopsy")
SINGLES = ("opdisc", "rspm", "gaussian-rspm", "dpsgd")


def _data(name: str) -> tuple[Any, ...]:
    import tempfile

    from oracledp.datasets import table_csv, table_schema
    from oracledp.tabular import TableSchema, read_csv

    schema = TableSchema.from_dict(table_schema(name))
    with tempfile.TemporaryDirectory() as tmp:
        tr = read_csv(table_csv(name, Path(tmp) / "train.csv", split="train"), schema,
                      with_target=True)
        te = read_csv(table_csv(name, Path(tmp) / "test.csv", split="test"), schema,
                      with_target=True)
    return schema, schema.encode(tr), schema.labels_of(tr), schema.encode(te), schema.labels_of(te)


def _run(name: str, model: str, eps: float, seed: int) -> dict[str, Any]:
    from oracledp._errors import OracleFailure
    from oracledp._registry import make_estimator

    warnings.simplefilter("ignore")
    schema, Xtr, ytr, Xte, yte = _data(name)
    row: dict[str, Any] = {"table": name, "model": model, "epsilon": eps, "seed": seed,
                           "n_train": len(ytr), "d": schema.n_features}
    t0 = time.perf_counter()
    try:
        est = make_estimator(model, schema, epsilon=eps, random_state=seed)
        est.fit(Xtr, ytr)
    except OracleFailure:
        row.update(released=False, accuracy=None, reason="not certified")
    else:
        row.update(released=True, accuracy=float(np.mean(est.predict(Xte) == yte)),
                   reason="", guarantee=est.guarantee_.describe())
        if model == "auto":
            row["selected"] = est.selected_
            row["trials"] = [f"{t.candidate}:{t.epsilon_fit:.4g}+{t.epsilon_score:.4g}"
                             for t in est.trials_]
    row["seconds"] = round(time.perf_counter() - t0, 2)
    return row


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Per table and epsilon: auto's mean accuracy, the best single model's, the gap."""
    rows = []
    for (table, eps), grp in runs.groupby(["table", "epsilon"], sort=True):
        means = {}
        for model, g in grp.groupby("model"):
            if g["released"].all():
                means[model] = float(g["accuracy"].mean())
        singles = {m: a for m, a in means.items() if m != "auto"}
        best = max(singles, key=singles.get) if singles else None
        auto = grp[grp["model"] == "auto"]
        picks = auto["selected"].dropna().value_counts().to_dict() if "selected" in auto else {}
        rows.append({
            "table": table, "epsilon": eps,
            "auto": means.get("auto"),
            "auto_released": f"{int(auto['released'].sum())}/{len(auto)}",
            "auto_picks": ", ".join(f"{k} {v}" for k, v in sorted(picks.items())),
            "best_single": best, "best_accuracy": singles.get(best) if best else None,
            "gap": (means["auto"] - singles[best]) if best and "auto" in means else None,
            **{m: means.get(m) for m in SINGLES},
        })
    return pd.DataFrame(rows)


def _markdown(summary: pd.DataFrame) -> str:
    def f(v: Any) -> str:
        return "-" if v is None or (isinstance(v, float) and np.isnan(v)) else (
            f"{v:+.3f}" if isinstance(v, float) and v < 0.5 and v > -0.5 else
            f"{v:.3f}" if isinstance(v, float) else str(v))

    head = ("| table | ε | auto | released | auto picked | best single | its accuracy | gap | "
            + " | ".join(SINGLES) + " |")
    lines = [head, "|" + "---|" * (8 + len(SINGLES))]
    for r in summary.to_dict("records"):
        lines.append("| " + " | ".join([
            r["table"], f"{r['epsilon']:g}", f(r["auto"]), r["auto_released"], r["auto_picks"],
            f(r["best_single"]), f(r["best_accuracy"]), f(r["gap"]),
            *[f(r[m]) for m in SINGLES]]) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tables", nargs="+", default=list(TABLES))
    p.add_argument("--eps", nargs="+", type=float, default=[1.0, 2.0])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--models", nargs="+", default=["auto", *SINGLES])
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", type=Path, default=Path("docs/results/model-auto"))
    p.add_argument("--reuse", type=Path, default=None,
                   help="a previous runs.json: its runs of the models not in --models are kept")
    args = p.parse_args(argv)
    jobs = list(itertools.product(args.tables, args.models, args.eps, args.seeds))
    t0 = time.perf_counter()
    rows = Parallel(n_jobs=args.jobs)(delayed(_run)(*j) for j in jobs)
    if args.reuse is not None:
        kept = [r for r in json.loads(args.reuse.read_text())["runs"]
                if r["model"] not in args.models and r["table"] in args.tables
                and r["epsilon"] in args.eps and r["seed"] in args.seeds]
        rows = [*rows, *({**r, "reused_from": str(args.reuse)} for r in kept)]
    runs = pd.DataFrame(rows)
    summary = summarize(runs)
    args.out.mkdir(parents=True, exist_ok=True)
    runs.to_csv(args.out / "runs.csv", index=False)
    (args.out / "runs.json").write_text(json.dumps(
        {"environment": environment_line(), "wall_seconds": round(time.perf_counter() - t0, 1),
         "runs": rows}, indent=1, default=str) + "\n")
    summary.to_csv(args.out / "summary.csv", index=False)
    text = _markdown(summary)
    (args.out / "summary.md").write_text(text + "\n")
    print(environment_line())
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
