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
* ``native_mean_1way_tv`` and ``native_mean_other_1way_tv``: the mean 1-way TV there of
  every column, and of the columns that are not numeric;
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
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _synth_grid as g

KEYS = ("native_2way_tv", "native_max_numeric_1way_tv", "native_mean_1way_tv",
        "native_mean_other_1way_tv", "bins_2way_tv", "fit_seconds", "fit_cpu_seconds")


def write(out: Path, runs: list[dict[str, Any]], refs: list[dict[str, Any]],
          meta: dict[str, Any]) -> None:
    """All four outputs, each through a temporary file renamed into place."""
    g.write(out, runs, refs, meta, g.summarize(runs, refs, KEYS),
            {"verdict.md": g.verdict(runs, refs, meta)}, lambda p: g.plot(runs, refs, p))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g.add_grid_arguments(ap, [g.DEFAULT, g.PEER], Path("docs/results/synth-native"))
    args = ap.parse_args(argv)
    if args.rewrite:
        g.rewrite(args, write)
        print((args.out / "verdict.md").read_text(), flush=True)
        return 0
    if args.quick:
        args.tables, args.epsilons, args.seeds = args.tables[:1], [1.0], 1
    settings = g.settings_of(ap, args)
    meta: dict[str, Any] = {
        "start": g.machine(), "versions": g.versions(), "note": args.note,
        "grid": {"tables": args.tables, "methods": args.methods, "epsilons": args.epsilons,
                 "seeds": args.seeds, "first_seed": args.first_seed, "settings": settings},
        "call": {"orders": [2], "classifier": False, "sample_random_state": "seed + 1000",
                 "evaluate_random_state": "seed", "split": "all"},
        "not_private": "the evaluation reads the real table; these numbers are not DP"}
    runs: list[dict[str, Any]] = []
    refs: list[dict[str, Any]] = []
    g.run_grid(args, meta, runs, refs, write)
    meta["end"] = g.machine()
    write(args.out, runs, refs, meta)
    print((args.out / "verdict.md").read_text(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
