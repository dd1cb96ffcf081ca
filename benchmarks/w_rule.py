"""OPDisc's public W against n, eps and delta: accuracy, releases and time per ``||k||^2 <= R``.

For each bundled table (a 70/30 split and its public schema, as ``your_tables.py`` writes
them; ``adult``: the balanced train/test split of :func:`oracledp.datasets.load_adult`, fitted
with ``OPDiscClassifier`` in the worker process) and each R of ``--norm2`` the script runs, as a user would, in a fresh process each::

    oracledp fit train.csv --schema schema.json --model opdisc --epsilon E --seed S \
        --space norm2=R --out DIR
    oracledp evaluate DIR test.csv

with the default (deterministic work) limit, at every eps of ``--eps`` and ``--seeds`` seeds,
and once at ``--ceiling-eps`` (default 10^5, with ``--allow-large-epsilon``: the noise is then
negligible, so that run's test accuracy is W's own ceiling on the table, not a private
release).  Beside each run it prints the public quantities the rule reads: n, d, eps, delta,
OPDisc's sigma for that W (``sigma / n`` is the noise against the loss's scale) and the R the
``"auto"`` rule chooses from d, n, eps and delta (:func:`oracledp.estimators._space_spec.auto_norm2`;
without the schema's numeric columns, which can only lower it).

Writes runs.csv, runs.json and summary.md to --out and prints the summary table.  Wall-clock
seconds depend on the machine and its load; the released / refused counts do not (the limit
is work, not time).

    PYTHONPATH=src python benchmarks/w_rule.py [--tables health_insurance,doctor_visits]
        [--norm2 4,9,16] [--eps 1,2] [--seeds 3] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).parent))
from oracledp._provenance import environment, environment_line
from your_tables import _cli, _prepare, _reason


def _adult() -> dict[str, Any]:
    """The balanced Adult split of :func:`oracledp.datasets.load_adult` (its own schema)."""
    from oracledp.datasets import load_adult

    tr = load_adult("train")
    return {"table": "adult", "dir": None, "n_train": tr.n_samples, "n_features": tr.n_features,
            "majority": None, "logreg": None}


def _fit_adult(job: dict[str, Any]) -> dict[str, Any]:
    """``adult``: the estimator in this process (the bundled Adult has no CSV of its own)."""
    import numpy as np

    from oracledp._errors import OracleFailure
    from oracledp.datasets import load_adult
    from oracledp.estimators import OPDiscClassifier

    tr, te = load_adult("train"), load_adult("test")
    row = {k: v for k, v in job.items() if k != "dir"}
    t0 = time.perf_counter()
    try:
        clf = OPDiscClassifier(job["eps"], space=f"norm2={job['norm2']}",
                               schema=tr.feature_schema, random_state=job["seed"])
        clf.fit(np.asarray(tr.X), np.asarray(tr.y))
    except OracleFailure as exc:  # a refusal: the oracle did not certify (anything else raises)
        return {**row, "fit_s": round(time.perf_counter() - t0, 2), "status": "refused",
                "reason": _reason(str(exc)), "accuracy": None}
    return {**row, "fit_s": round(time.perf_counter() - t0, 2), "status": "ok", "reason": "",
            "accuracy": round(float(clf.score(np.asarray(te.X), np.asarray(te.y))), 4)}


def _fit(job: dict[str, Any]) -> dict[str, Any]:
    if job["table"] == "adult":
        return _fit_adult(job)
    d: Path = job["dir"]
    out = d / "w_rule" / f"R{job['norm2']}-eps{job['eps']:g}-s{job['seed']}"
    args = ["fit", str(d / "train.csv"), "--schema", str(d / "schema.json"), "--model", "opdisc",
            "--epsilon", f"{job['eps']:g}", "--seed", str(job["seed"]),
            "--space", f"norm2={job['norm2']}", "--out", str(out), "--force"]
    if job["eps"] > 10:
        args.append("--allow-large-epsilon")
    t0 = time.perf_counter()
    res = _cli(args, timeout=3600)
    row = {k: v for k, v in job.items() if k != "dir"}
    row["fit_s"] = round(time.perf_counter() - t0, 2)
    if res.returncode != 0:
        return {**row, "status": "refused", "reason": _reason(res.stderr), "accuracy": None}
    ev = _cli(["evaluate", str(out), str(d / "test.csv")], timeout=600)
    m = re.search(r"accuracy ([0-9.]+)", ev.stdout)
    return {**row, "status": "ok", "reason": "",
            "accuracy": float(m.group(1)) if m and ev.returncode == 0 else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", default="health_insurance,doctor_visits")
    ap.add_argument("--norm2", default="4,9,16")
    ap.add_argument("--eps", default="1,2")
    ap.add_argument("--ceiling-eps", type=float, default=1e5)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("w-rule-results"))
    args = ap.parse_args()
    print(environment_line(), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    from oracledp.estimators._space_spec import auto_norm2, noise_share

    tables = [t for t in args.tables.split(",") if t]
    norm2s = [int(r) for r in args.norm2.split(",")]
    epss = [float(e) for e in args.eps.split(",")]
    base = {t: _adult() if t == "adult" else _prepare(t, args.out / "data") for t in tables}
    jobs = [{"table": t, "dir": base[t]["dir"], "norm2": r, "eps": e, "seed": s}
            for t in tables for r in norm2s for e in epss for s in range(args.seeds)]
    jobs += [{"table": t, "dir": base[t]["dir"], "norm2": r, "eps": args.ceiling_eps, "seed": 0}
             for t in tables for r in norm2s]
    started = time.time()
    runs = []
    with (args.out / "runs.jsonl").open("w") as log:  # one line per finished fit, as they end
        for run in Parallel(n_jobs=args.n_jobs, return_as="generator_unordered")(
                delayed(_fit)(j) for j in jobs):
            runs.append(run)
            log.write(json.dumps(run) + "\n")
            log.flush()
            print(f"  {run['table']} R={run['norm2']} eps={run['eps']:g} seed={run['seed']}: "
                  f"{run['status']} {run['accuracy'] or run['reason']} ({run['fit_s']} s)",
                  flush=True)
    df = pd.DataFrame(runs)
    for col in ("n_train", "n_features", "logreg", "majority"):
        df[col] = [base[t][col] for t in df.table]
    df["delta"] = 1.0 / df.n_train.astype(float) ** 2
    # OPDisc's sigma over n for W = {||k||^2 <= R}: the rule's own noise_share
    df["sigma_over_n"] = [noise_share(int(r.n_features), int(r.norm2), int(r.n_train),
                                      float(r.eps), float(r.delta)) for r in df.itertuples()]
    df["sigma"] = df.sigma_over_n * df.n_train
    df["auto_R"] = [auto_norm2(int(r.n_features), n=int(r.n_train), epsilon=float(r.eps),
                               delta=float(r.delta)) for r in df.itertuples()]
    df.to_csv(args.out / "runs.csv", index=False)
    (args.out / "runs.json").write_text(json.dumps(
        {"runs": runs, "environment": environment(), "args": {k: str(v) for k, v in
                                                               vars(args).items()},
         "started": started, "ended": time.time()}, indent=2, default=str))
    rows = ["| table | n | d | eps | R | sigma / n | auto's R | released | test accuracy | "
            "median fit s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for (t, e, r), g in df.groupby(["table", "eps", "norm2"]):
        ok = g[g.status == "ok"].accuracy.dropna()
        acc = (f"{ok.mean():.4f}" + (f" ± {ok.std(ddof=1):.4f}" if len(ok) > 1 else "")
               if len(ok) else "-")
        label = "ceiling" if e == args.ceiling_eps else f"{e:g}"
        rows.append(f"| {t} | {g.n_train.iloc[0]:,} | {g.n_features.iloc[0]} | {label} | {r} | "
                    f"{g.sigma_over_n.iloc[0]:.4f} | {g.auto_R.iloc[0]} | "
                    f"{int((g.status == 'ok').sum())}/{len(g)} | "
                    f"{acc} | {g.fit_s.median():.1f} |")
    text = "\n".join(rows) + "\n"
    (args.out / "summary.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
