"""OracleQueryPGM's rules on the benchmark tables, with tuning seeds (not the benchmark's 0-2).

Produces the tuning tables of ``docs/synthetic-data.md`` ("Choosing the selection rule",
"Measuring every table", the junction-tree cap): the mean 2-way TV error of

* ``table`` (worst query), ``l1`` (L1 error net of the expected measurement noise), ``query``,
  ``auto`` (the default) and ``all`` (every candidate table once, no selection);
* ``adaptive``: ``auto`` without its switch to ``all`` (the default before that rule);
* ``aim``: AIM on the same encoding (its fits are slow on the wide tables),

on Adult (every column with a public domain) and the bundled tables, in the encoding below
(the old ``benchmarks/synth_tables.py``'s, moved here when that script moved to the table
layer), plus ``adult8`` (the 8-column Adult of ``lab/synth_adult``, one-clique model), over
seeds 100, 101, ...::

    PYTHONPATH=src python benchmarks/synth_selection.py --tables titanic \\
        --epsilons 0.1 0.5 1 2 --seeds 30 --rules adaptive all aim
    PYTHONPATH=src python benchmarks/synth_selection.py --tables adult --epsilons 2 \\
        --seeds 3 --rules auto --max-model-cells 100000 300000 500000 1000000

Each line is JSON: table, eps, rule, the junction-tree cap (None: the default), seeds, mean,
standard deviation and standard error of the error, T and the mean fit seconds.  Privacy:
every fit is (eps, 1e-6)-DP; the error reads the real data (a benchmark, not a release).

Schema -> codes: categorical columns keep their declared levels (a declared missing level
is one more level); numeric columns are cut into 8 equal-width bins between the schema's
declared lower and upper bounds (public, never read from the data); the train split.  The
error is the mean total-variation distance of every 2-way marginal of the model (exact
marginals) from the data's.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

RULES = ("table", "l1", "query", "auto", "all", "adaptive", "aim")
DELTA = 1e-6
TABLES = ("adult", "health_insurance", "doctor_visits", "nhefs", "titanic")


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


def _marginal_errors(syn: Any, codes: np.ndarray, domain: Any, k: int) -> dict[str, float]:
    from oracledp.synth import answer, kway_marginal_workload

    wl = kway_marginal_workload(domain, k)
    true, est = answer(wl, codes), syn.answer(wl)
    tv = np.array([0.5 * np.abs(true[a:b] - est[a:b]).sum()
                   for a, b in itertools.pairwise(wl.offsets)])
    return {f"mean_tv_{k}way": float(tv.mean()), f"max_tv_{k}way": float(tv.max())}



def _load(table: str) -> tuple[np.ndarray, Any]:
    if table == "adult8":
        from oracledp.synth import load_adult_categorical

        data = load_adult_categorical()
        return np.asarray(data.codes), data.domain
    train, _, domain = load_table(table, 8)
    return train, domain


def _fit(rule: str, eps: float, seed: int, cells: int | None, codes: np.ndarray,
         domain: Any) -> Any:
    from oracledp import synth
    from oracledp.synth import _oracle_query_pgm as pgm

    if rule == "aim":
        return synth.AIMSynthesizer(eps, DELTA, k=3, random_state=seed).fit(codes, domain)
    real = pgm.measures_all
    if rule == "adaptive":  # the default without its switch to "all"
        pgm.measures_all = lambda *a: False
    try:
        return synth.OracleQueryPGM(eps, DELTA, k=3, random_state=seed, max_model_cells=cells,
                                    selection="auto" if rule == "adaptive" else rule
                                    ).fit(codes, domain)
    finally:
        pgm.measures_all = real


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", nargs="+", default=["titanic"], choices=[*TABLES, "adult8"])
    ap.add_argument("--epsilons", nargs="+", type=float, default=[0.5])
    ap.add_argument("--rules", nargs="+", default=["table", "l1", "auto"], choices=RULES)
    ap.add_argument("--max-model-cells", nargs="+", type=int, default=[None],
                    help="junction-tree caps to compare (default: the library's rule)")
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--first-seed", type=int, default=100)
    args = ap.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    for table in args.tables:
        codes, domain = _load(table)
        for eps in args.epsilons:
            for rule in args.rules:
                for cells in args.max_model_cells:
                    errs, secs, T = [], [], 0
                    for seed in seeds:
                        t0 = time.perf_counter()
                        syn = _fit(rule, eps, seed, cells, codes, domain)
                        secs.append(time.perf_counter() - t0)
                        T = getattr(syn, "rounds_", 0)
                        errs.append(_marginal_errors(syn, codes, domain, 2)["mean_tv_2way"])
                    print(json.dumps({
                        "table": table, "eps": eps, "rule": rule, "max_model_cells": cells,
                        "seeds": len(errs), "mean_tv_2way": round(float(np.mean(errs)), 4),
                        "sd": round(float(np.std(errs)), 4),
                        "se": round(float(np.std(errs) / np.sqrt(len(errs))), 4), "T": T,
                        "fit_seconds": round(float(np.mean(secs)), 2)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
