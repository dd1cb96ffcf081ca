"""How the advice of ``oracledp models --schema S --epsilon E DATA`` did on the bundled tables.

For each bundled table (titanic, biopsy, nhefs, doctor_visits, health_insurance and Adult) and
epsilon in {0.1, 1, 2}, compares the model :func:`oracledp.advise_model` advises from the
table's public facts (d, n, epsilon, |W| of the default parameter space) with the model that
was measured best, and prints the accuracy the advice gave up.  Nothing is fitted (but with
``--measure-adult``): the measurements are the recorded runs, read from

* ``docs/results/your-tables-auto-space/`` (titanic, biopsy, health_insurance, doctor_visits:
  opdisc, rspm, gaussian-rspm over the default W and dpsgd; 3 seeds, 70/30 split), with
  opsamp's rows (which do not depend on W) from ``docs/results/your-tables/``;
* ``docs/results/your-tables/`` for nhefs (opdisc and rspm over the paper's W, the only run
  on nhefs; no gaussian-rspm);
* ``lab/icml2020/results/icml2020-adult/`` for Adult (15 seeds, held-out adult.test: dpsgd and
  opsamp), with n and d from ``docs/results/oracle-adult/run.log``; opdisc, rspm and
  gaussian-rspm over the default W from ``docs/results/advice-check/adult-default-w.json``
  (the one number the records lacked: the lab ran the paper's W and no gaussian-rspm),
  written by ``--measure-adult`` (5 seeds, the lab's data and accuracy, 45 fits, about 2 min).

Where the advice is ``auto`` (the private selection between the advised exact model and
dpsgd, at the total epsilon), its accuracy is read from ``docs/results/model-auto/``
(``benchmarks/model_auto.py``: titanic, biopsy, doctor_visits, health_insurance at epsilon 1
and 2, 3 seeds) and, for Adult, from ``docs/results/advice-check/adult-auto.json``, written
by ``--measure-adult-auto`` (the lab's data as above, epsilon 1 and 2, 5 seeds).  The
advice's |W| is sized from each bundled table's public schema (as ``oracledp models
--schema`` does); Adult's from d alone (the lab's data has no TableSchema; its columns give
the same W).

"Measured best": the highest mean test accuracy among the single models every fit of which
released (Accuracy First, which has no epsilon, is left out; ``auto`` is not a single model
and is only compared).  "Gap": best minus the advised model's mean accuracy; "not measured"
where the record has no run of the advised model.

    python benchmarks/advice_check.py [--out FILE.md]
    python benchmarks/advice_check.py --measure-adult        # re-measure Adult's default-W fits
    python benchmarks/advice_check.py --measure-adult-auto   # measure auto on Adult
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path
from typing import Any

from oracledp._guidance import advise_model

ROOT = Path(__file__).resolve().parents[1]
AUTO = ROOT / "docs" / "results" / "your-tables-auto-space"
PAPER = ROOT / "docs" / "results" / "your-tables"
ADULT = ROOT / "lab" / "icml2020" / "results" / "icml2020-adult"
ADULT_LOG = ROOT / "docs" / "results" / "oracle-adult" / "run.log"
ADULT_DEFAULT_W = ROOT / "docs" / "results" / "advice-check" / "adult-default-w.json"
ADULT_AUTO = ROOT / "docs" / "results" / "advice-check" / "adult-auto.json"
MODEL_AUTO = ROOT / "docs" / "results" / "model-auto" / "summary.csv"
EXACT = ("opdisc", "rspm", "gaussian-rspm")
EPS = (0.1, 1.0, 2.0)
TABLES = ("titanic", "biopsy", "nhefs", "doctor_visits", "health_insurance", "adult")

# (table, eps) -> model -> (mean accuracy or None, released, fits)
Cells = dict[tuple[str, float], dict[str, tuple[float | None, int, int]]]


def _shapes(summary_md: Path) -> dict[str, tuple[int, int]]:
    """table -> (n train, encoded features), from the run's summary.md."""
    shapes = {}
    for line in summary_md.read_text().splitlines():
        m = re.match(r"^\| (\w+) \| ([\d,]+) \| (\d+) \|", line)
        if m:
            shapes[m.group(1)] = (int(m.group(2).replace(",", "")), int(m.group(3)))
    return shapes


def _summary_cells(path: Path, tables: set[str], models: set[str] | None = None) -> Cells:
    cells: Cells = {}
    with path.open(newline="") as fh:
        for row in csv.DictReader(fh):
            if row["table"] not in tables or row["eps"] == "" or row["intercept"] != "True":
                continue
            if models is not None and row["model"] not in models:
                continue
            acc = float(row["acc_mean"]) if row["acc_mean"] else None
            cells.setdefault((row["table"], float(row["eps"])), {})[row["model"]] = (
                acc, int(row["released"]), int(row["fits"]))
    return cells


def _adult_cells() -> Cells:
    """The lab's dpsgd and opsamp, and the default-W record's exact models."""
    cells: Cells = {}
    for row in json.loads((ADULT / "summary.json").read_text()):
        if float(row["eps"]) in EPS and row["method"] not in EXACT:
            fits = int(row["runs"])
            cells.setdefault(("adult", float(row["eps"])), {})[row["method"]] = (
                float(row["test_mean"]), fits - int(row["failures"]), fits)
    runs = json.loads(ADULT_DEFAULT_W.read_text())["runs"]
    for model in EXACT:
        for eps in EPS:
            accs = [r["test_acc"] for r in runs if r["model"] == model and r["eps"] == eps]
            released = [a for a in accs if a is not None]
            if accs:
                cells.setdefault(("adult", eps), {})[model] = (
                    sum(released) / len(released) if released else None, len(released),
                    len(accs))
    return cells


def _auto_cells() -> Cells:
    """auto at epsilon 1 and 2: the bundled tables' (model_auto) and Adult's record."""
    cells: Cells = {}
    with MODEL_AUTO.open(newline="") as fh:
        for row in csv.DictReader(fh):
            released, fits = (int(v) for v in row["auto_released"].split("/"))
            cells[(row["table"], float(row["epsilon"]))] = {"auto": (
                float(row["auto"]) if row["auto"] else None, released, fits)}
    if ADULT_AUTO.exists():
        runs = json.loads(ADULT_AUTO.read_text())["runs"]
        for eps in sorted({r["eps"] for r in runs}):
            accs = [r["test_acc"] for r in runs if r["eps"] == eps]
            ok = [a for a in accs if a is not None]
            cells[("adult", eps)] = {"auto": (sum(ok) / len(ok) if ok else None, len(ok),
                                              len(accs))}
    return cells


def measure_adult_auto(out: Path, seeds: int = 5) -> None:
    """auto (AutoClassifier, default candidates: the advised exact model and dpsgd) on the
    lab's Adult, as :func:`measure_adult` (data seed 0, held-out adult.test, delta 1/n^2, the
    default oracle limit), at epsilon 1 and 2, where the advice is auto."""
    import time

    import numpy as np

    from oracledp import OracleFailure
    from oracledp._provenance import environment, environment_line
    from oracledp.datasets import load_adult
    from oracledp.estimators import AutoClassifier

    train, test = load_adult("train", random_state=0), load_adult("test", random_state=0)
    env = environment()
    print(environment_line(env))
    runs: list[dict[str, Any]] = []
    for eps in (1.0, 2.0):
        for seed in range(seeds):
            est = AutoClassifier(eps, schema=train.feature_schema, random_state=seed)
            t0 = time.perf_counter()
            try:
                est.fit(train.X, train.y)
            except OracleFailure:
                acc, selected = None, None
            else:  # the lab's accuracy: sign(Xw + b), a score of 0 is -1
                score = test.X @ est.coef_.ravel() + est.intercept_
                acc = float(np.mean(np.where(score > 0, 1, -1) == test.y))
                selected = est.selected_
            secs = time.perf_counter() - t0
            runs.append({"eps": eps, "seed": seed, "test_acc": acc, "selected": selected,
                         "trials": [t.candidate for t in est.trials_]
                         if hasattr(est, "trials_") else None, "fit_s": round(secs, 2)})
            print(f"  auto eps={eps:<4g} seed {seed}: "
                  f"{'refused' if acc is None else f'{acc:.4f} ({selected})'} ({secs:.1f} s)",
                  flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "what": "Adult (lab/icml2020 data, data seed 0: n = 15,682, d = 23, no intercept), "
                "AutoClassifier with its default candidates at the total epsilon, delta "
                "1/n^2, the default oracle limit; test accuracy on the balanced adult.test",
        "environment": env, "runs": runs}, indent=1) + "\n")
    print(f"wrote {out}")


def measure_adult(out: Path, seeds: int = 5) -> None:
    """opdisc, rspm and gaussian-rspm over the default W on the lab's Adult (data seed 0:
    balanced adult.data, held-out adult.test), delta 1/n^2, 60 s oracle limit."""
    import time

    import numpy as np

    from oracledp import OracleFailure
    from oracledp._provenance import environment, environment_line
    from oracledp.datasets import load_adult
    from oracledp.estimators import GaussianRSPMClassifier, OPDiscClassifier, RSPMClassifier

    train, test = load_adult("train", random_state=0), load_adult("test", random_state=0)
    env = environment()
    print(environment_line(env))
    classes = {"opdisc": OPDiscClassifier, "rspm": RSPMClassifier,
               "gaussian-rspm": GaussianRSPMClassifier}
    runs: list[dict[str, Any]] = []
    spaces: dict[str, str] = {}
    for model in EXACT:
        for eps in EPS:
            for seed in range(seeds):
                est = classes[model](epsilon=eps, schema=train.feature_schema,
                                     random_state=seed)
                t0 = time.perf_counter()
                try:
                    est.fit(train.X, train.y)
                except OracleFailure:
                    acc = None
                else:  # the lab's accuracy: sign(Xw + b), a score of 0 is -1
                    score = test.X @ est.coef_.ravel() + est.intercept_
                    acc = float(np.mean(np.where(score > 0, 1, -1) == test.y))
                    spaces.setdefault(model, est.space_description_)
                secs = time.perf_counter() - t0
                runs.append({"model": model, "eps": eps, "seed": seed, "test_acc": acc,
                             "fit_s": round(secs, 2)})
                print(f"  {model:<13} eps={eps:<4g} seed {seed}: "
                      f"{'refused' if acc is None else f'{acc:.4f}'} ({secs:.1f} s)", flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "what": "Adult (lab/icml2020 data, data seed 0: n = 15,682, d = 23, no intercept), "
                "exact models over the default W (space='auto'), delta 1/n^2, 60 s limit; "
                "test accuracy on the balanced adult.test",
        "space": spaces,
        "environment": env, "runs": runs}, indent=1) + "\n")
    print(f"wrote {out}")


def _adult_shape() -> tuple[int, int]:
    m = re.search(r"Adult: n=(\d+), d=(\d+)", ADULT_LOG.read_text())
    if m is None:
        sys.exit(f"{ADULT_LOG}: no 'Adult: n=..., d=...' line")
    return int(m.group(1)), int(m.group(2))


def measurements() -> tuple[dict[str, tuple[int, int]], Cells, dict[str, str]]:
    """Shapes (n, d), the cells, and where each table's numbers come from."""
    auto_tables = {"titanic", "biopsy", "doctor_visits", "health_insurance"}
    shapes = {**_shapes(PAPER / "summary.md"), **_shapes(AUTO / "summary.md")}
    shapes["adult"] = _adult_shape()
    cells = _summary_cells(AUTO / "summary.csv", auto_tables)
    for key, models in _summary_cells(PAPER / "summary.csv", auto_tables, {"opsamp"}).items():
        cells.setdefault(key, {}).update(models)
    cells.update(_summary_cells(PAPER / "summary.csv", {"nhefs"}))
    cells.update(_adult_cells())
    for key, models in _auto_cells().items():
        cells.setdefault(key, {}).update(models)
    source = {t: "default W, 3 seeds" for t in auto_tables}
    source["nhefs"] = "paper's W, 3 seeds"
    source["adult"] = "default W, 5 seeds; dpsgd 15"
    return {t: shapes[t] for t in TABLES}, cells, source


def _schema(table: str, d: int) -> Any:
    """The table's public schema (what `oracledp models --schema` reads), or d for Adult."""
    if table == "adult":
        return d
    from oracledp.datasets import table_schema
    from oracledp.tabular import TableSchema

    schema = TableSchema.from_dict(table_schema(table))
    if schema.n_features != d:
        sys.exit(f"{table}: the schema has {schema.n_features} encoded features, the record {d}")
    return schema


def check() -> list[dict[str, Any]]:
    shapes, cells, source = measurements()
    rows = []
    for table in TABLES:
        n, d = shapes[table]
        for eps in EPS:
            models = cells[(table, eps)]
            released = {m: acc for m, (acc, rel, fits) in models.items()
                        if acc is not None and rel == fits}
            singles = {m: a for m, a in released.items() if m != "auto"}
            best = max(singles, key=lambda m: singles[m])
            advice = advise_model(_schema(table, d), eps, n=n)
            if advice.model in released:
                acc: float | None = released[advice.model]
                advised = f"{acc:.3f}"
            elif advice.model in models:
                acc, (_, rel, fits) = None, models[advice.model]
                advised = f"released {rel}/{fits}"
            else:
                acc, advised = None, "not measured"
            gap = None if acc is None else released[best] - acc
            rows.append({"table": table, "n": n, "d": d, "eps": eps, "advice": advice.model,
                         "advised_accuracy": advised, "best": best,
                         "best_accuracy": released[best], "gap": gap,
                         "certify_opdisc": advice.certifies("opdisc"),
                         "source": source[table]})
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| table (n, d) | ε | advice | its accuracy | measured best | accuracy | gap | "
             "opdisc certifies | record |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        gap = "-" if r["gap"] is None else f"{round(r['gap'], 3) + 0.0:.3f}"
        lines.append(f"| {r['table']} ({r['n']:,}, {r['d']}) | {r['eps']:g} | {r['advice']} | "
                     f"{r['advised_accuracy']} | {r['best']} | {r['best_accuracy']:.3f} | {gap} | "
                     f"{r['certify_opdisc']} | {r['source']} |")
    gaps = [r["gap"] for r in rows if r["gap"] is not None]
    hits = sum(g <= 1e-9 for g in gaps)  # the advice was the best single model, or above it
    lines.append("")
    lines.append(f"advice = measured best in {hits} of {len(rows)} cells (or above it: auto); "
                 f"gap over the "
                 f"{len(gaps)} measured cells: mean {sum(gaps) / len(gaps):.4f}, largest "
                 f"{max(gaps):.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="Also write the table (Markdown) here.")
    ap.add_argument("--measure-adult", action="store_true",
                    help=f"First fit Adult's exact models over the default W into "
                         f"{ADULT_DEFAULT_W.relative_to(ROOT)}.")
    ap.add_argument("--measure-adult-auto", action="store_true",
                    help=f"First fit auto on Adult at epsilon 1 and 2 into "
                         f"{ADULT_AUTO.relative_to(ROOT)}.")
    ap.add_argument("--seeds", type=int, default=5,
                    help="Seeds per cell of --measure-adult and --measure-adult-auto.")
    args = ap.parse_args(argv)
    if args.measure_adult:
        measure_adult(ADULT_DEFAULT_W, args.seeds)
    if args.measure_adult_auto:
        measure_adult_auto(ADULT_AUTO, args.seeds)
    text = markdown(check())
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
