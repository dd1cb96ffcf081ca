"""Every synthesizer on the bundled tables at two resolutions, beside two references (issue 38).

For each bundled table of :mod:`oracledp.datasets` (``--tables``), each ``TableSynthesizer``
method (``--methods``; default the default ``oracle-query-pgm``, ``mst``, ``independent`` and
``mwem``, which refuses every table but titanic: its full domain is past its cell cap), each
epsilon and seeds ``0 .. --seeds - 1``, the grid of ``benchmarks/_synth_grid.py`` (shared with
``synth_native.py``) fits ``TableSynthesizer(method, epsilon=e, random_state=seed).fit(path,
schema)`` on the whole table (delta ``1/n^2`` where the method takes one), samples as many rows
as the real table and scores them with ``evaluate_synthetic(fake, real, schema, orders=(2,),
random_state=seed)``.  Recorded per run:

* ``native_2way_tv``: mean 2-way TV at the data's own resolution (numeric columns cut at the
  real table's octiles); ``bins_2way_tv``: the same at ``evaluate_synthetic``'s ``bins`` (10
  equal-width bins between each numeric column's declared bounds);
* ``native_max_numeric_1way_tv`` (the worst numeric column's 1-way TV at its octiles) and
  ``native_mean_w1_over_range`` / ``native_max_w1_over_range`` (Wasserstein-1 over the declared
  range, mean and max over numeric columns);
* ``tstr_accuracy``: logistic regression trained on the synthetic rows, scored on the real
  ones (``--no-tstr`` skips it); ``fit_seconds`` and ``fit_cpu_seconds``;

and per (table, seed) the two references at both resolutions: **exact independent marginals**
and a **resample of the real rows** (``_synth_grid.bins_references`` for the bins figures),
with the real table's own cross-validated accuracy and majority-label rate.

``--merge RUNS.json --merge-methods aim`` copies the runs of those methods for the grid's
tables, epsilons and seeds from another record (e.g. ``docs/results/synth-native/runs.json``:
AIM's fits take minutes each), each marked with its ``source``; they carry the fields that
record has (no W1 or TSTR from ``synth_native.py``).  ``--resume`` keeps OUT/runs.json and runs
only the missing cells.

``--smartnoise-python /venv/bin/python`` adds ``smartnoise_mst`` and ``smartnoise_aim``:
smartnoise-synth, installed in a separate venv (never a dependency of the project), fits
every column as categorical on the table's codes at ``evaluate_synthetic``'s bins (the level
strings; it reads the categories from the data) with delta ``1/n^2``; its sampled codes are
decoded by the table layer (values drawn within their bins) and scored as ours are.  It is not
seedable and uses add/remove neighbours.

Outputs to ``--out``, rewritten after every run (an interrupted grid leaves valid files):
``runs.json`` (runs, references, the machine: load average at start and end, date, versions),
``summary.csv`` (mean and sd over seeds per table x method x epsilon, then the references as
rows), ``methods.md`` (every method at both resolutions, printed at the end), ``verdict.md``
(the default against AIM, as ``synth_native.py`` writes it) and ``errors.png`` (a column per
table; top row the native 2-way TV, bottom row the bins 2-way TV, against epsilon, mean +-1 sd
over seeds, the references dashed).  ``--rewrite`` rebuilds them from ``runs.json``.

The evaluation reads the real table: its numbers are NOT differentially private.

    PYTHONPATH=src nice -n 5 python benchmarks/synth_tables.py --quick
    PYTHONPATH=src nice -n 5 python benchmarks/synth_tables.py --epsilons 0.1 1 \\
        --merge docs/results/synth-native/runs.json --merge-methods aim
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _synth_grid as g

SMARTNOISE = ("smartnoise_mst", "smartnoise_aim")
METHODS = ("oracle-query-pgm", "mst", "independent", "mwem")
KEYS = ("native_2way_tv", "bins_2way_tv", "native_max_numeric_1way_tv",
        "native_mean_w1_over_range", "native_max_w1_over_range", "tstr_accuracy",
        "fit_seconds", "fit_cpu_seconds")
REF_KEYS = ("native_2way_tv", "bins_2way_tv")

# smartnoise-synth in its own venv: reads a CSV of level strings, fits with every column
# categorical (preprocessor_eps=0: no budget spent on bounds), writes n sampled records.
_SN_WORKER = """
import sys, time, warnings, json
import pandas as pd
warnings.simplefilter("ignore")
from snsynth import Synthesizer
src, dst, method, eps, delta, n = sys.argv[1:7]
df = pd.read_csv(src, dtype=str, keep_default_na=False)
syn = Synthesizer.create(method, epsilon=float(eps), delta=float(delta), verbose=False)
t0, c0 = time.perf_counter(), time.process_time()
syn.fit(df, categorical_columns=list(df.columns), preprocessor_eps=0.0)
fit_s, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
syn.sample(int(n)).to_csv(dst, index=False)
print(json.dumps({"fit_seconds": fit_s, "fit_cpu_seconds": fit_cpu}))
"""


def smartnoise_fit(python: str) -> Any:
    """A ``fit`` for :func:`_synth_grid.run_grid`: smartnoise's MST/AIM through ``python``,
    the other methods through :func:`_synth_grid.run_one`."""

    def fit(table: str, method: str, eps: float, seed: int, path: Path, real: pd.DataFrame,
            schema: Any, settings: Any, classifier: bool) -> tuple[dict[str, Any],
                                                                   dict[str, Any]]:
        if method not in SMARTNOISE:
            return g.run_one(table, method, eps, seed, path, real, schema, settings, classifier)
        from oracledp.synth._table import DEFAULT_BINS, TableDomain

        tdom = TableDomain(schema, DEFAULT_BINS)
        dom = tdom.domain
        codes = tdom.encode(real)
        with tempfile.TemporaryDirectory() as tmp:
            src, dst = Path(tmp) / "real.csv", Path(tmp) / "synth.csv"
            pd.DataFrame({a: np.asarray(lv, dtype=object)[codes[:, j]] for j, (a, lv) in
                          enumerate(zip(dom.attributes, dom.levels, strict=True))}
                         ).to_csv(src, index=False)
            out = subprocess.run([python, "-c", _SN_WORKER, str(src), str(dst),
                                  method.split("_")[1], str(eps), str(1 / len(real) ** 2),
                                  str(len(real))], capture_output=True, text=True, check=True)
            times = json.loads(out.stdout.strip().splitlines()[-1])
            df = pd.read_csv(dst, dtype=str, keep_default_na=False)
        fake_codes = np.stack([pd.Index(list(lv)).get_indexer(df[a].astype(str))
                               for a, lv in zip(dom.attributes, dom.levels, strict=True)], axis=1)
        # decoded as in the record's smartnoise runs (docs/results/synth-rounded): each value alone
        fake = tdom.decode(fake_codes, random_state=seed + 1000, sampler="iid")
        rec, refs = g.score(fake, real, schema, seed, classifier)
        return ({"table": table, "method": method, "eps": eps, "seed": seed, "rows": len(real),
                 **times, **rec, "guarantee": "smartnoise-synth, add/remove neighbours",
                 "note": "not seedable; categories read from the data"},
                {"table": table, "seed": seed, **refs})

    return fit


# --- outputs --------------------------------------------------------------------------------


def _cell(rs: list[dict[str, Any]], key: str, digits: int = 4) -> str:
    m, sd, _ = g.stats(r.get(key) for r in rs)
    if math.isnan(m):
        return "-"
    return f"{m:.{digits}f}" + ("" if math.isnan(sd) else f" ± {sd:.{digits}f}")


def methods_table(runs: list[dict[str, Any]], refs: list[dict[str, Any]]) -> str:
    """Markdown: every method at both resolutions per table x epsilon, then the references,
    then the other figures."""
    cells = g.cells(runs)
    methods = g.method_order(runs)
    refused = {(r["table"], r["method"]) for r in runs if "skipped" in r}
    lines = ["# Every method at two resolutions", "",
             "Mean 2-way TV, mean ± sd over seeds: the data's own resolution (octiles of the "
             "real numeric columns) / `evaluate_synthetic`'s bins (10 equal-width bins between "
             "the declared bounds); then the mean fit seconds.  refused: the method refuses "
             "the table (nothing fitted); -: not run.", "",
             "| table | ε | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
    for table, eps in dict.fromkeys((t, e) for t, _, e in cells):
        row = []
        for m in methods:
            rs = cells.get((table, m, eps))
            row.append("refused" if not rs and (table, m) in refused else "-" if not rs else
                       f"{_cell(rs, 'native_2way_tv')} / {_cell(rs, 'bins_2way_tv')} "
                       f"({g.stats(r['fit_seconds'] for r in rs)[0]:.3g} s)")
        lines.append(f"| {table} | {eps:g} | " + " | ".join(row) + " |")
    lines += ["", "**References** (mean ± sd over seeds; the exact independent marginals do "
              "not depend on the seed), and the real table's own logistic-regression accuracy "
              "(5-fold cross-validated) and majority-label rate:", "",
              "| table | independent marginals, native | independent marginals, bins | "
              "resample, native | resample, bins | train real (CV) | majority label |",
              "|---|---|---|---|---|---|---|"]
    for table in g.ref_tables(refs):
        rr = [r for r in refs if r["table"] == table]
        parts = [_cell([r[key] for r in rr], k) for key in g.REFERENCES for k in REF_KEYS]
        cl = [r.get("classification", {}) for r in rr]
        parts += [_cell(cl, "train_real_cv", 3), _cell(cl, "majority_label_rate", 3)]
        lines.append(f"| {table} | " + " | ".join(parts) + " |")
    lines += ["", "**Other figures** (mean ± sd over seeds): the worst numeric column's 1-way "
              "TV at its octiles, Wasserstein-1 over the declared range (mean over numeric "
              "columns), train-synthetic-test-real accuracy; -: not recorded (runs merged "
              "from `synth_native.py` have no W1 or accuracy).", "",
              "| table | ε | method | max numeric 1-way TV | mean W1 / range | TSTR accuracy "
              "| fit s | CPU s |", "|---|---|---|---|---|---|---|---|"]
    for (table, method, eps), rs in cells.items():
        lines.append(f"| {table} | {eps:g} | {method} | "
                     f"{_cell(rs, 'native_max_numeric_1way_tv')} | "
                     f"{_cell(rs, 'native_mean_w1_over_range')} | "
                     f"{_cell(rs, 'tstr_accuracy', 3)} | {_cell(rs, 'fit_seconds', 1)} | "
                     f"{_cell(rs, 'fit_cpu_seconds', 1)} |")
    sources = sorted({r["source"] for r in runs if r.get("source")})
    if sources:
        lines += ["", "Runs merged from other records: " + "; ".join(sources) + "."]
    return "\n".join(lines) + "\n"


def write(out: Path, runs: list[dict[str, Any]], refs: list[dict[str, Any]],
          meta: dict[str, Any]) -> None:
    g.write(out, runs, refs, meta, g.summarize(runs, refs, KEYS, REF_KEYS),
            {"methods.md": methods_table(runs, refs) + "\n" + "\n".join(g.run_note(meta)),
             "verdict.md": g.verdict(runs, refs, meta)},
            lambda p: g.plot(runs, refs, p, (
                ("native_2way_tv", "mean 2-way TV, data's own resolution"),
                ("bins_2way_tv", "mean 2-way TV, 10 equal-width bins"))))


def merged(path: Path, methods: list[str], args: Any) -> list[dict[str, Any]]:
    """The runs of ``methods`` in the grid's tables, epsilons and seeds from another
    record, each with its ``source`` (the file and the commit it names)."""
    saved = json.loads(path.read_text())
    commit = saved.get("meta", {}).get("versions", {}).get("oracledp_commit", "?")
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    return [{**r, "source": f"{path} (commit {str(commit)[:7]}; its note says which cells "
             "ran at which commit)"} for r in saved["runs"]
            if r["method"] in methods and r["table"] in args.tables
            and r["eps"] in args.epsilons and r["seed"] in seeds]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g.add_grid_arguments(ap, list(METHODS), Path("docs/results/synth-tables"))
    ap.set_defaults(epsilons=[0.1, 1.0])
    ap.add_argument("--no-tstr", action="store_true", help="skip the TSTR accuracy")
    ap.add_argument("--resume", action="store_true",
                    help="keep the runs in OUT/runs.json and run only the missing cells")
    ap.add_argument("--merge", type=Path, default=None, metavar="RUNS_JSON",
                    help="copy the runs of --merge-methods from this record")
    ap.add_argument("--merge-methods", nargs="+", default=["aim"],
                    choices=[*g.METHODS, *SMARTNOISE])
    ap.add_argument("--smartnoise-python", default=None,
                    help="python of a separate venv with smartnoise-synth installed (adds "
                    "smartnoise_mst and smartnoise_aim)")
    ap.add_argument("--smartnoise-methods", nargs="+", default=list(SMARTNOISE),
                    choices=SMARTNOISE, help="which of smartnoise's methods to add (its AIM "
                    "takes minutes per fit on the larger tables)")
    args = ap.parse_args(argv)
    if args.rewrite:
        g.rewrite(args, write)
        print((args.out / "methods.md").read_text(), flush=True)
        return 0
    if args.quick:
        args.tables, args.epsilons, args.seeds = ["titanic"], [1.0], 1
    if args.smartnoise_python:
        args.methods = [*args.methods, *args.smartnoise_methods]
    settings = g.settings_of(ap, args)
    runs: list[dict[str, Any]] = []
    refs: list[dict[str, Any]] = []
    meta: dict[str, Any] = {}
    if args.resume and (args.out / "runs.json").exists():
        saved = json.loads((args.out / "runs.json").read_text())
        runs, refs, meta = saved["runs"], saved["references"], saved["meta"]
        meta.setdefault("resumed", []).append({"start": g.machine(), "versions": g.versions()})
        meta.pop("end", None)
        if args.note:
            meta["note"] = " ".join(x for x in (meta.get("note"), args.note) if x)
    else:
        meta = {"start": g.machine(), "versions": g.versions(), "note": args.note,
                "call": {"orders": [2], "classifier": not args.no_tstr,
                         "sample_random_state": "seed + 1000", "evaluate_random_state": "seed",
                         "split": "all", "bins_references": "_synth_grid.bins_references"},
                "not_private": "the evaluation reads the real table; these numbers are not DP"}
    grid = meta.get("grid", {})
    union = {k: list(dict.fromkeys([*grid.get(k, []), *getattr(args, k)]))
             for k in ("tables", "methods", "epsilons")}
    meta["grid"] = {**union, "seeds": args.seeds, "first_seed": args.first_seed,
                    "settings": settings}
    if args.merge:
        have = {(r["table"], r["method"], r["eps"], r["seed"]) for r in runs}
        new = [r for r in merged(args.merge, args.merge_methods, args)
               if (r["table"], r["method"], r["eps"], r["seed"]) not in have]
        runs.extend(new)
        meta["grid"]["methods"] = list(dict.fromkeys([*meta["grid"]["methods"],
                                                      *args.merge_methods]))
        print(f"merged {len(new)} runs of {', '.join(args.merge_methods)} from {args.merge}")
    g.run_grid(args, meta, runs, refs, write, classifier=not args.no_tstr,
               with_bins_references=True,
               fit=smartnoise_fit(args.smartnoise_python) if args.smartnoise_python else None)
    meta["end"] = g.machine()
    write(args.out, runs, refs, meta)
    print((args.out / "methods.md").read_text(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
