"""Private synthetic data on Adult's 8 categorical attributes: OracleQuery vs MWEM vs marginals.

Data: :func:`oracledp.synth.load_adult_categorical` (complete rows, n = 30,718,
public domain of 1,317,120 cells).  Workload: all k-way marginal cells
(k = 3: 18,597 queries).  Methods, each at every epsilon and run:

* ``oracle_query``: :class:`oracledp.synth.oracle_query.OracleQuerySynthesizer`
  ((epsilon, delta)-DP, zCDP composition, Hedge data player, exponential-mechanism
  query player; T chosen from the accuracy bound, capped at ``max_rounds``);
* ``mwem``: :func:`oracledp.synth.mwem` (pure epsilon-DP, ``mwem_rounds`` rounds,
  averaged output);
* ``independent``: :func:`oracledp.synth.independent_marginals` (pure epsilon-DP).

Reported per (method, epsilon, run): max and mean absolute error over the
workload (exact answers of the released distribution, no sampling error) and the
fit wall time.  Seeds derive from ``(seed, run, method, eps index)`` through
:class:`numpy.random.SeedSequence`.  Outputs: ``runs.jsonl``, ``runs.csv``,
``summary.json``, ``error_vs_eps.png``, ``config.json``.
"""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from oracledp._validation import check_epsilon

__all__ = ["METHODS", "Config", "quick_config", "run", "summarize", "write_figures"]

METHODS = ("oracle_query", "mwem", "independent")


@dataclass(frozen=True)
class Config:
    epsilons: tuple[float, ...] = (0.1, 0.5, 1.0)
    k: int = 3
    runs: int = 3
    delta: float = 1e-6
    max_rounds: int = 300
    mwem_rounds: int = 30
    seed: int = 0
    query_player: str = "noisy-min"  # OracleQuery's query player: "noisy-min", "rspm" or "prsma"
    data_player: str = "hedge"  # OracleQuery's data player: "hedge" or "ftpl"

    def __post_init__(self) -> None:
        if not self.epsilons:
            raise ValueError("epsilons must be non-empty")
        object.__setattr__(self, "epsilons", tuple(check_epsilon(e) for e in self.epsilons))
        for name, lo in (("k", 1), ("runs", 1), ("max_rounds", 1), ("mwem_rounds", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
        if not 0.0 < self.delta < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {self.delta!r}")
        if self.query_player not in ("noisy-min", "rspm", "prsma"):
            raise ValueError("query_player must be 'noisy-min', 'rspm' or 'prsma', "
                             f"got {self.query_player!r}")
        if self.data_player not in ("hedge", "ftpl"):
            raise ValueError(f"data_player must be 'hedge' or 'ftpl', got {self.data_player!r}")


def quick_config(**overrides: Any) -> Config:
    """1 run at eps = 1 with few rounds (well under a minute)."""
    base: dict[str, Any] = {"epsilons": (1.0,), "runs": 1, "max_rounds": 20, "mwem_rounds": 10}
    base.update(overrides)
    return Config(**base)


def _seed(*key: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(list(key))


def run(cfg: Config, out_dir: Path,
        report: Callable[[int, int, str], None] | None = None) -> list[dict[str, Any]]:
    """Every (run, eps, method); writes config.json, runs.jsonl and runs.csv."""
    from oracledp.synth import (
        answer,
        errors,
        independent_marginals,
        kway_marginal_workload,
        load_adult_categorical,
        mwem,
    )
    from oracledp.synth.oracle_query import OracleQuerySynthesizer

    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "config.json").write_text(json.dumps(asdict(cfg), indent=2))
    data = load_adult_categorical()
    workload = kway_marginal_workload(data.domain, cfg.k)
    true = answer(workload, data.codes)
    total = cfg.runs * len(cfg.epsilons) * len(METHODS)
    done = 0
    records: list[dict[str, Any]] = []
    with (out_dir / "runs.jsonl").open("w") as fh:
        for r in range(cfg.runs):
            for ie, eps in enumerate(cfg.epsilons):
                for im, method in enumerate(METHODS):
                    if report is not None:
                        report(done, total, f"run {r + 1}, eps={eps:g}, {method}")
                    rng = np.random.default_rng(_seed(cfg.seed, r, im, ie))
                    t0 = time.perf_counter()
                    extra: dict[str, Any] = {}
                    if method == "oracle_query":
                        syn = OracleQuerySynthesizer(
                            eps, cfg.delta, k=cfg.k, max_rounds=cfg.max_rounds,
                            query_player=cfg.query_player, data_player=cfg.data_player,
                            random_state=rng,
                        ).fit(data.codes, data.domain)
                        est = syn.answer(workload)
                        g = syn.guarantee_
                        extra = {"rounds": syn.rounds_, "eps0": syn.eps0_,
                                 "composition": syn.composition_,
                                 "query_player": cfg.query_player,
                                 "data_player": cfg.data_player}
                    elif method == "mwem":
                        res = mwem(data.codes, data.domain, workload, eps, cfg.mwem_rounds, rng)
                        est = res.answer(workload)
                        g = res.guarantee
                        extra = {"rounds": cfg.mwem_rounds, "eps0": res.epsilon_per_step,
                                 "composition": "basic"}
                    else:
                        ind = independent_marginals(data.codes, data.domain, eps, rng)
                        est = ind.answer(workload)
                        g = ind.guarantee
                        extra = {"rounds": None, "eps0": None, "composition": "none"}
                    seconds = time.perf_counter() - t0
                    err = errors(true, est)
                    rec = {"run": r, "eps": eps, "method": method, "k": cfg.k,
                           "max_error": err["max"], "mean_error": err["mean"],
                           "seconds": seconds, "guarantee_eps": g.epsilon,
                           "guarantee_delta": g.delta, **extra}
                    records.append(rec)
                    fh.write(json.dumps(rec) + "\n")
                    done += 1
    if report is not None:
        report(done, total, "done")
    cols = list(records[0])
    with (out_dir / "runs.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows(records)
    return records


def summarize(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean and std (nan for one run) of the errors and times per (method, eps)."""
    rows: list[dict[str, Any]] = []
    for method in METHODS:
        for eps in sorted({r["eps"] for r in records}):
            rs = [r for r in records if r["method"] == method and r["eps"] == eps]
            if not rs:
                continue
            row: dict[str, Any] = {"method": method, "eps": eps, "runs": len(rs),
                                   "rounds": rs[0]["rounds"]}
            for key in ("max_error", "mean_error", "seconds"):
                vals = np.array([r[key] for r in rs], dtype=float)
                row[f"{key}_mean"] = float(vals.mean())
                row[f"{key}_std"] = float(vals.std(ddof=1)) if len(vals) > 1 else math.nan
            rows.append(row)
    return rows


def write_figures(records: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    """error_vs_eps.png (max and mean k-way error per method) and summary.json."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = summarize(records)
    fig = Figure(figsize=(10, 4.2))
    FigureCanvasAgg(fig)
    for j, key in enumerate(("max_error", "mean_error")):
        ax = fig.add_subplot(1, 2, j + 1)
        for i, method in enumerate(METHODS):
            rs = [r for r in rows if r["method"] == method]
            ax.errorbar([r["eps"] for r in rs], [r[f"{key}_mean"] for r in rs],
                        yerr=[0.0 if math.isnan(r[f"{key}_std"]) else r[f"{key}_std"]
                              for r in rs], marker="o", capsize=3, color=f"C{i}", label=method)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("ε")
        ax.set_ylabel(key.replace("_", " "))
        ax.set_title(f"Adult, 8 categorical attributes: {key.split('_')[0]} error")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    path = out_dir / "error_vs_eps.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    (out_dir / "summary.json").write_text(json.dumps(rows, indent=2))
    return [path]
