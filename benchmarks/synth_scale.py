"""Scale check: OracleQueryPGM on a wide synthetic-code table (junction-tree estimator).

Generates a 20-column table of integer codes (2-30 levels per column, a chain of
dependent columns so the selection has structure to find), fits OracleQueryPGM with the
junction-tree estimator, samples records, and reports the fit time, the sample time, the
model's junction-tree cells and the process's peak RSS.  The product domain is never
materialized (its size is printed for scale).

    PYTHONPATH=src python benchmarks/synth_scale.py [--columns 20] [--rows 100000]
        [--epsilon 1.0] [--rounds R] [--distinct]

``--distinct`` fits on the distinct rows with ``sample_weight`` (their counts), the input
the table layer's chunked CSV counting produces.  Not a unit test (minutes of CPU).
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import time

import numpy as np


def synthetic_codes(columns: int, rows: int, seed: int = 0) -> tuple[np.ndarray, tuple[int, ...]]:
    """A chain-dependent code table: column j copies column j-1 (mod its levels) w.p. 0.6."""
    rng = np.random.default_rng(seed)
    levels = tuple(int(v) for v in rng.integers(2, 31, size=columns))
    codes = np.empty((rows, columns), dtype=np.int64)
    codes[:, 0] = rng.integers(0, levels[0], rows)
    for j in range(1, columns):
        copy = rng.random(rows) < 0.6
        codes[:, j] = np.where(copy, codes[:, j - 1] % levels[j], rng.integers(0, levels[j], rows))
    return codes, levels


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--columns", type=int, default=20)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--sample", type=int, default=100_000)
    ap.add_argument("--distinct", action="store_true")
    args = ap.parse_args(argv)

    from oracledp.synth import Domain, OracleQueryPGM

    codes, levels = synthetic_codes(args.columns, args.rows)
    domain = Domain(tuple(f"c{j}" for j in range(args.columns)),
                    tuple(tuple(range(v)) for v in levels))
    weight = None
    if args.distinct:
        codes, weight = np.unique(codes, axis=0, return_counts=True)
    rss0 = peak_rss_mb()
    syn = OracleQueryPGM(args.epsilon, 1e-6, k=2, rounds=args.rounds, estimator="graphical",
                         random_state=0)
    t0 = time.perf_counter()
    syn.fit(codes, domain, sample_weight=weight)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = syn.sample_codes(args.sample, random_state=1)
    sample_s = time.perf_counter() - t0
    rec = {"columns": args.columns, "rows": args.rows, "distinct_rows": int(codes.shape[0]),
           "levels": levels, "domain_cells_log10": round(math.log10(domain.size), 1),
           "epsilon": args.epsilon, "rounds": syn.rounds_, "model_cells": syn.model_.cells,
           "model_cliques": len(syn.model_.tree.cliques), "fit_seconds": round(fit_s, 1),
           "sample_rows": int(out.shape[0]), "sample_seconds": round(sample_s, 2),
           "peak_rss_mb_before_fit": round(rss0), "peak_rss_mb": round(peak_rss_mb())}
    json.dump(rec, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
