"""Regret of Follow the Private Leader (Neel, Roth, Wu, FOCS 2019, Section V, Theorem 11).

Setting: 0/1 loss of monotone conjunctions over d binary attributes
(``Q = MonotoneConjunctions(d).zero_one_loss()``, separator size m = d), on a
synthetic stream fixed in advance: ``x_j ~ Bernoulli(p)`` independently,
``y = AND(x_1..x_k)`` with ``k = ceil(d/2)``, each label flipped with probability
``label_noise``.  For every (d, run) one stream of ``max(horizons)`` examples; for every
eps one FTPL run (Laplace RSPM with fresh noise per round, exact brute-force
oracle) and one non-private Follow the Leader run.  Realized average regret is
read off at each horizon T (FTPL does not depend on the horizon) and compared with
:func:`oracledp.learners.ftpl_regret_bound`, the explicit form of Theorem 11
``(e^eps - 1) + 2 m^2/(eps T)``, a bound on *expected* regret.

Each record (one JSON line of ``runs.jsonl``) holds the seeds, the regret curve at
the horizons and the sequence's privacy (reported: basic composition,
``(T-1) eps``; advanced composition alongside), see :func:`oracledp.learners.ftpl_privacy`.
Seeds derive from ``(seed, d, run[, eps])`` via :class:`numpy.random.SeedSequence`.
Outputs are rewritten on every call (no resume: a full run takes about a minute).
"""

from __future__ import annotations

import csv
import functools
import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lab._common import check_epsilon
from lab._outputs import (
    finish_axes,
    new_figure,
    save_figure,
    std_bars,
    write_summary_json,
)

__all__ = ["Config", "make_stream", "quick_config", "run", "summarize", "write_figures"]


@dataclass(frozen=True)
class Config:
    d_values: tuple[int, ...] = (4, 5, 6)
    epsilons: tuple[float, ...] = (0.1, 0.3, 1.0)
    horizons: tuple[int, ...] = (25, 50, 100, 200, 500, 1000)
    runs: int = 5
    p: float = 0.8
    label_noise: float = 0.1
    delta_prime: float = 1e-6
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilons", tuple(check_epsilon(e) for e in self.epsilons))
        for name, lo in (("d_values", 1), ("horizons", 2)):
            vals = getattr(self, name)
            if not vals or any(isinstance(v, bool) or not isinstance(v, int) or v < lo
                               for v in vals):
                raise ValueError(f"{name} must be a non-empty tuple of integers >= {lo}, "
                                 f"got {vals!r}")
            if len(set(vals)) != len(vals):
                raise ValueError(f"{name} has duplicates: {vals!r}")
            object.__setattr__(self, name, tuple(sorted(vals)))
        if max(self.d_values) > 12:
            raise ValueError("d > 12: the brute-force oracle enumerates 2^d hypotheses")
        if not self.epsilons:
            raise ValueError("epsilons must hold at least one value")
        if isinstance(self.runs, bool) or not isinstance(self.runs, int) or self.runs < 1:
            raise ValueError(f"runs must be an integer >= 1, got {self.runs!r}")
        if not (0.0 < self.p < 1.0):
            raise ValueError(f"p must be in (0, 1), got {self.p!r}")
        if not (0.0 <= self.label_noise < 0.5):
            raise ValueError(f"label_noise must be in [0, 0.5), got {self.label_noise!r}")
        if not (0.0 < self.delta_prime < 1.0):
            raise ValueError(f"delta_prime must be in (0, 1), got {self.delta_prime!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {self.seed!r}")

    @property
    def T(self) -> int:
        return max(self.horizons)


def quick_config(**overrides: Any) -> Config:
    """Smoke size (a few seconds): d = 4, eps in {0.3, 1}, T up to 200, 3 runs."""
    base: dict[str, Any] = {"d_values": (4,), "epsilons": (0.3, 1.0),
                            "horizons": (25, 50, 100, 200), "runs": 3}
    base.update(overrides)
    return Config(**base)


def _seed(*key: int) -> int:
    return int(np.random.SeedSequence(list(key)).generate_state(1)[0])


def make_stream(d: int, T: int, p: float, label_noise: float,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Records X in {0,1}^(T, d) and labels y = AND(x_1..x_k) xor Bernoulli(label_noise)."""
    k = math.ceil(d / 2)
    X = (rng.random((T, d)) < p).astype(np.int64)
    y = X[:, :k].all(axis=1).astype(np.int64) ^ (rng.random(T) < label_noise).astype(np.int64)
    return X, y


def _curve_at(curve: np.ndarray, horizons: tuple[int, ...]) -> list[float]:
    return [float(curve[T - 1]) for T in horizons]


def run(cfg: Config, out_dir: Path,
        progress: Callable[[int, int, str], None] | None = None) -> list[dict[str, Any]]:
    """All (d, run) streams, FTL once and FTPL at every eps on each; writes runs.jsonl/csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "config.json").write_text(json.dumps(asdict(cfg), indent=2))
    total = len(cfg.d_values) * cfg.runs * (1 + len(cfg.epsilons))
    done = 0
    if progress:
        progress(0, total, "starting")
    records: list[dict[str, Any]] = []
    with (out_dir / "runs.jsonl").open("w") as fh:
        for d in cfg.d_values:
            for r in range(cfg.runs):
                jobs: list[tuple[str, float | None]] = [("ftl", None)]
                jobs += [("ftpl", e) for e in cfg.epsilons]
                for method, eps in jobs:
                    rec = run_one(cfg, d, r, method, eps)
                    fh.write(json.dumps(rec) + "\n")
                    fh.flush()
                    records.append(rec)
                    done += 1
                    if progress:
                        label = "FTL" if eps is None else f"FTPL eps={eps:g}"
                        progress(done, total, f"d={d} run {r} {label}")
    _write_csv(records, out_dir / "runs.csv")
    return records


@functools.lru_cache(maxsize=4)
def _run_stream(cfg: Config, d: int, r: int) -> tuple[Any, Any, int, int, np.ndarray]:
    """The class, its oracle, m, the stream's seed and encoded stream of one (d, run): built
    once and shared by FTL and every FTPL epsilon of the run, as one stream is."""
    from oracledp.query_classes import MonotoneConjunctions, make_class_oracle

    cls = MonotoneConjunctions(d).zero_one_loss()
    orc = make_class_oracle(cls, "brute")
    stream_seed = _seed(cfg.seed, d, r, 0)
    X, y = make_stream(d, cfg.T, cfg.p, cfg.label_noise, np.random.default_rng(stream_seed))
    return cls, orc, int(cls.separator().shape[0]), stream_seed, cls.encode(X, y)


def run_one(cfg: Config, d: int, r: int, method: str, eps: float | None) -> dict[str, Any]:
    """One (d, run, method, eps) record: FTL (``eps=None``) or FTPL on the run's stream."""
    from oracledp import research_diagnostics
    from oracledp.learners import follow_the_leader, ftpl, ftpl_privacy, ftpl_regret_bound

    cls, orc, m, stream_seed, Z = _run_stream(cfg, d, r)
    t0 = time.perf_counter()
    rec: dict[str, Any] = {"method": method, "d": d, "m": m, "run": r,
                           "eps": eps, "stream_seed": stream_seed,
                           "T": cfg.T, "horizons": list(cfg.horizons)}
    if method == "ftl":
        res = follow_the_leader(cls, Z, oracle=orc)
        rec.update(seed=None, bound=None, privacy=None)
    else:
        assert eps is not None
        seed = _seed(cfg.seed, d, r, 1, round(eps * 1e6))
        with research_diagnostics():  # the regret is a non-private report
            res = ftpl(cls, Z, eps, oracle=orc, random_state=seed,
                       delta_prime=cfg.delta_prime, return_diagnostics=True)
        rec.update(
            seed=seed,
            bound=[ftpl_regret_bound(eps, T, m) for T in cfg.horizons],
            privacy=[ftpl_privacy(eps, T, cfg.delta_prime).to_dict()
                     for T in cfg.horizons],
        )
    diag = res.diagnostics
    assert diag is not None and diag["regret_curve"] is not None
    rec.update(regret=_curve_at(diag["regret_curve"], cfg.horizons),
               best_cumulative_loss=diag["best_cumulative_loss"],
               learner_cumulative_loss=float(diag["cumulative_losses"][-1]),
               wall_s=time.perf_counter() - t0)
    return rec


def _write_csv(records: list[dict[str, Any]], path: Path) -> None:
    cols = ["method", "d", "m", "eps", "run", "T", "regret", "bound", "eps_basic",
            "eps_advanced", "delta_advanced", "seed", "stream_seed"]
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in records:
            for i, T in enumerate(r["horizons"]):
                priv = r["privacy"][i] if r["privacy"] else None
                adv = priv["advanced"] if priv else None
                w.writerow({"method": r["method"], "d": r["d"], "m": r["m"], "eps": r["eps"],
                            "run": r["run"], "T": T, "regret": r["regret"][i],
                            "bound": r["bound"][i] if r["bound"] else None,
                            "eps_basic": priv["reported"]["epsilon"] if priv else None,
                            "eps_advanced": adv["epsilon"] if adv else None,
                            "delta_advanced": adv["delta"] if adv else None,
                            "seed": r["seed"], "stream_seed": r["stream_seed"]})


def summarize(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean / std of realized average regret per (d, method, eps, T), with the bound."""
    rows = []
    keys = sorted({(r["d"], r["method"], r["eps"]) for r in records},
                  key=lambda k: (k[0], k[1] != "ftl", k[2] or 0.0))
    for d, method, eps in keys:
        rs = [r for r in records if r["d"] == d and r["method"] == method and r["eps"] == eps]
        for i, T in enumerate(rs[0]["horizons"]):
            reg = np.array([r["regret"][i] for r in rs])
            priv = rs[0]["privacy"][i] if rs[0]["privacy"] else None
            rows.append({
                "d": d, "m": rs[0]["m"], "method": method, "eps": eps, "T": T, "runs": len(rs),
                "regret_mean": float(reg.mean()),
                "regret_std": float(reg.std(ddof=1)) if len(reg) > 1 else math.nan,
                "bound": rs[0]["bound"][i] if rs[0]["bound"] else None,
                "eps_basic": priv["reported"]["epsilon"] if priv else None,
                "eps_advanced": (priv["advanced"]["epsilon"]
                                 if priv and priv["advanced"] else None),
            })
    return rows


def write_figures(records: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    """regret_vs_T.png: mean realized regret (std bars) and the Theorem 11 bound, per d."""
    rows = summarize(records)
    ds = sorted({r["d"] for r in rows})
    fig = new_figure(figsize=(5 * len(ds), 4.2))
    for j, d in enumerate(ds):
        ax = fig.add_subplot(1, len(ds), j + 1)
        series = sorted({(r["method"], r["eps"]) for r in rows if r["d"] == d},
                        key=lambda k: (k[0] != "ftl", k[1] or 0.0))
        for i, (method, eps) in enumerate(series):
            rs = [r for r in rows if r["d"] == d and r["method"] == method and r["eps"] == eps]
            Ts = [r["T"] for r in rs]
            color = f"C{i}"
            label = "FTL (non-private)" if method == "ftl" else f"FTPL ε={eps:g}"
            ax.errorbar(Ts, [r["regret_mean"] for r in rs],
                        yerr=std_bars(r["regret_std"] for r in rs), marker="o", capsize=3,
                        color=color, label=label)
            if method == "ftpl":
                ax.plot(Ts, [min(r["bound"], 1.0) for r in rs], ls="--", color=color, alpha=0.7,
                        label=f"Thm 11 bound ε={eps:g} (capped at 1)")
        finish_axes(ax, "T (rounds)", "average regret", f"monotone conjunctions, d = m = {d}",
                    xscale="log", legend_size=7)
    path = save_figure(fig, out_dir / "regret_vs_T.png", 110)
    write_summary_json(rows, out_dir)
    return [path]
