"""OracleQueryPGM's rules on the benchmark tables, with tuning seeds (not the benchmark's 0-2).

Produces the tuning tables of ``docs/synthetic-data.md`` ("Choosing the selection rule",
"Measuring every table", the junction-tree cap): the mean 2-way TV error of

* ``table`` (worst query), ``l1`` (L1 error net of the expected measurement noise), ``query``,
  ``auto`` (the default) and ``all`` (every candidate table once, no selection);
* ``adaptive``: ``auto`` without its switch to ``all`` (the default before that rule);
* ``aim``: AIM on the same encoding (its fits are slow on the wide tables),

on the tables and encoding of ``benchmarks/synth_tables.py`` plus ``adult8`` (the 8-column
Adult of ``lab/synth_adult``, explicit estimator), over seeds 100, 101, ...::

    PYTHONPATH=src python benchmarks/synth_selection.py --tables titanic \\
        --epsilons 0.1 0.5 1 2 --seeds 30 --rules adaptive all aim
    PYTHONPATH=src python benchmarks/synth_selection.py --tables adult --epsilons 2 \\
        --seeds 3 --rules auto --max-model-cells 100000 300000 500000 1000000

Each line is JSON: table, eps, rule, the junction-tree cap (None: the default), seeds, mean,
standard deviation and standard error of the error, T and the mean fit seconds.  Privacy:
every fit is (eps, 1e-6)-DP; the error reads the real data (a benchmark, not a release).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth_tables as st

RULES = ("table", "l1", "query", "auto", "all", "adaptive", "aim")


def _load(table: str) -> tuple[np.ndarray, Any]:
    if table == "adult8":
        from oracledp.synth import load_adult_categorical

        data = load_adult_categorical()
        return np.asarray(data.codes), data.domain
    train, _, domain = st.load_table(table, 8)
    return train, domain


def _fit(rule: str, eps: float, seed: int, cells: int | None, codes: np.ndarray,
         domain: Any) -> Any:
    from oracledp import synth
    from oracledp.synth import _oracle_query_pgm as pgm

    if rule == "aim":
        return synth.AIMSynthesizer(eps, st.DELTA, k=3, random_state=seed).fit(codes, domain)
    real = pgm.measures_all
    if rule == "adaptive":  # the default without its switch to "all"
        pgm.measures_all = lambda *a: False
    try:
        return synth.OracleQueryPGM(eps, st.DELTA, k=3, random_state=seed, max_model_cells=cells,
                                    selection="auto" if rule == "adaptive" else rule
                                    ).fit(codes, domain)
    finally:
        pgm.measures_all = real


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", nargs="+", default=["titanic"], choices=[*st.TABLES, "adult8"])
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
                        errs.append(st._marginal_errors(syn, codes, domain, 2)["mean_tv_2way"])
                    print(json.dumps({
                        "table": table, "eps": eps, "rule": rule, "max_model_cells": cells,
                        "seeds": len(errs), "mean_tv_2way": round(float(np.mean(errs)), 4),
                        "sd": round(float(np.std(errs)), 4),
                        "se": round(float(np.std(errs) / np.sqrt(len(errs))), 4), "T": T,
                        "fit_seconds": round(float(np.mean(secs)), 2)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
