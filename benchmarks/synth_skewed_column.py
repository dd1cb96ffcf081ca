"""A skewed count column, judged at the data's own resolution (the figure in
docs/synthetic-data.md, "synth evaluate").

Generates a table of n rows (default 3,000): ``days`` is 0 in 91 % of the rows and uniform on
1-365 otherwise (declared 0-365, step 1), ``sex`` is f/m, and the label ``y`` is "yes" whenever
days > 0 (else yes with probability 0.2).  Fits the default TableSynthesizer at the given ε
through the command line, samples n rows, and prints ``oracledp synth evaluate``'s report:
the 2-way TV on the synthesizer's own bins beside the same at the real data's octiles, with
the references (exact independent marginals, a resample of the real rows).

    PYTHONPATH=src python benchmarks/synth_skewed_column.py [--rows 3000] [--epsilon 1]
        [--seed 0] [--out DIR]

Writes DIR/report.json (the evaluation) and DIR/days.png (the real and synthetic histograms
of ``days`` side by side, and those of a fit with ``--bin-edges equal-width``'s old rule: 10
equal-width bins and a uniform draw inside a bin, ``--compare``), and prints the report.
Seconds of CPU.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

SCHEMA = {"target": {"name": "y", "labels": ["no", "yes"]},
          "columns": [{"name": "days", "type": "numeric", "lower": 0, "upper": 365, "step": 1},
                      {"name": "sex", "type": "categorical", "levels": ["f", "m"]}]}


def table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    days = np.where(rng.random(n) < 0.91, 0, rng.integers(1, 366, n))
    sex = rng.choice(["f", "m"], n)
    y = np.where(days > 0, "yes", rng.choice(["no", "yes"], n, p=[0.8, 0.2]))
    return pd.DataFrame({"days": days, "sex": sex, "y": y})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=3000)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--compare", action="store_true",
                    help="also fit with 10 equal-width bins and a uniform draw in a bin "
                         "(TableSynthesizer(bins=10, bin_edges='equal-width') without the "
                         "fine histogram is not offered: numeric_fraction is still spent)")
    args = ap.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="skewed-"))
    out.mkdir(parents=True, exist_ok=True)
    table(args.rows).to_csv(out / "real.csv", index=False)
    (out / "schema.json").write_text(json.dumps(SCHEMA))
    cli = [sys.executable, "-m", "oracledp"]
    subprocess.run([*cli, "synth", "fit", str(out / "real.csv"), "--schema",
                    str(out / "schema.json"), "--epsilon", str(args.epsilon), "--seed",
                    str(args.seed), "--out", str(out / "model"), "--force"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([*cli, "synth", "sample", str(out / "model"), "--rows", str(args.rows),
                    "--seed", str(args.seed + 1), "--out", str(out / "synthetic.csv")],
                   check=True, capture_output=True)
    from oracledp.synth import TableSynthesizer, evaluate_synthetic

    fitted = TableSynthesizer.load(out / "model")
    res = evaluate_synthetic(out / "synthetic.csv", out / "real.csv",
                             fitted.table_domain_.schema, bins=fitted.table_domain_.bins)
    (out / "report.json").write_text(json.dumps(res, indent=2) + "\n")
    r = res["data_resolution"]
    refs = r["references"]
    print(f"rows {args.rows}, epsilon {args.epsilon}, seed {args.seed} ({out})")
    print(f"2-way TV on the synthesizer's bins: {res['marginals'][2]['mean_tv']:.4f}")
    print(f"2-way TV at the data's octiles:     {r['two_way']['mean_tv']:.4f} "
          f"(independent marginals {refs['independent_marginals']['two_way']['mean_tv']:.4f}, "
          f"resample {refs['resample_of_real_rows']['two_way']['mean_tv']:.4f})")
    print(f"1-way TV of days at its octiles:    {r['columns'][0]['tv']:.4f}")
    real = pd.read_csv(out / "real.csv")
    syn = pd.read_csv(out / "synthetic.csv")
    print(f"share of days = 0: real {np.mean(real.days == 0):.3f}, synthetic "
          f"{np.mean(syn.days == 0):.3f}")
    panels = [("synthetic (default)", syn)]
    if args.compare:
        from oracledp.tabular import TableSchema

        old = TableSynthesizer(epsilon=args.epsilon, random_state=args.seed, bins=10,
                               bin_edges="equal-width").fit(real, TableSchema.from_dict(SCHEMA))
        # the rule before issue 38: a uniform draw inside the coarse bin
        old.table_domain_ = type(old.table_domain_)(old.table_domain_.schema,
                                                    old.table_domain_.bins)
        panels.append(("equal-width bins, uniform in a bin (before)",
                       old.sample(args.rows, random_state=args.seed + 1)))
    _plot(real, panels, out / "days.png", args.epsilon)
    print(f"wrote {out / 'days.png'}")
    return 0


def _plot(real: pd.DataFrame, panels: list[tuple[str, pd.DataFrame]], path: Path,
          epsilon: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    edges = np.array([0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 366])
    labels = ["0", "1", "2-3", "4-7", "8-15", "16-31", "32-63", "64-127", "128-255",
              "256-365"]
    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / (1 + len(panels))
    x = np.arange(len(labels))
    for i, (name, df) in enumerate([("real", real), *panels]):
        share = np.histogram(df.days, bins=edges)[0] / len(df)
        ax.bar(x + (i - len(panels) / 2) * width, share, width, label=name)
    ax.set_xticks(x, labels)
    ax.set_xlabel("days (bins of doubling width; the column is declared 0-365, step 1)")
    ax.set_ylabel("share of records")
    ax.set_yscale("log")
    ax.set_title(f"A skewed count column, real and synthetic (epsilon {epsilon:g})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
