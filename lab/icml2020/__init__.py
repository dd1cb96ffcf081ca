"""Reproduction of the Adult experiment of Neel, Roth, Vietri, Wu (ICML 2020, Section 5).

Methods (each run at every epsilon, delta = 1/n^2, n = 15,682):

* ``opdisc``: OPDisc over {-4..4}^23 with ||w||^2 <= 23 (tau = 1), exact structured oracle;
* ``rspm``: Laplace RSPM over {-1, 0, 1}^23 with the 46 separator examples +-e_j;
* ``dpsgd``: DP-SGD logistic regression with fixed, documented hyper-parameters
  (accounted; the paper's per-epsilon grid search is not accounted and is not run here);
* ``opsamp``: OPSamp with a caller-chosen number m of oracle calls.

Every run is one JSON line in ``runs.jsonl`` (written as soon as it finishes, so an
interrupted reproduction resumes where it stopped: runs already present are skipped).
A run whose oracle did not certify its optimum released nothing: it is recorded as
a failure and never counted in the accuracies.  Seeds are derived from
``(seed, method, epsilon, run)`` with :class:`numpy.random.SeedSequence` and recorded.
"""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lab._common import check_epsilon
from lab._outputs import (
    finish_axes,
    new_figure,
    read_jsonl,
    run_and_append,
    save_figure,
    std_bars,
    write_summary_json,
)
from oracledp import OracleFailure, research_diagnostics

__all__ = ["METHODS", "Config", "quick_config", "run_reproduction", "summarize", "write_figures"]

METHODS = ("opdisc", "rspm", "dpsgd", "opsamp")
PAPER_EPSILONS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0)


@dataclass(frozen=True)
class Config:
    epsilons: tuple[float, ...] = PAPER_EPSILONS
    runs: int = 15
    methods: tuple[str, ...] = ("opdisc", "rspm", "dpsgd")
    seed: int = 0
    time_limit: float = 300.0
    n_jobs: int = 1
    opsamp_m: int = 20
    data_seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilons", tuple(check_epsilon(e) for e in self.epsilons))
        if not self.epsilons:
            raise ValueError("epsilons must hold at least one value")
        unknown = sorted(set(self.methods) - set(METHODS))
        if unknown or not self.methods:
            raise ValueError(f"unknown methods {unknown}; valid: {', '.join(METHODS)}")
        for name in ("runs", "n_jobs", "opsamp_m"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if not (self.time_limit > 0):
            raise ValueError(f"time_limit must be > 0, got {self.time_limit!r}")


def quick_config(**overrides: Any) -> Config:
    """A smoke-sized reproduction (a few minutes): 3 runs at eps in {0.1, 1}."""
    base: dict[str, Any] = {"epsilons": (0.1, 1.0), "runs": 3}
    base.update(overrides)
    return Config(**base)


def run_seed(seed: int, method: str, eps: float, run: int) -> int:
    """The recorded integer seed of one run."""
    key = [seed, METHODS.index(method), round(eps * 1e6), run]
    return int(np.random.SeedSequence(key).generate_state(1)[0])


def run_key(method: str, eps: float, run: int) -> str:
    return f"{method}|{eps:g}|{run}"


# --------------------------------------------------------------------------------------------
# One run (executed in joblib workers; per-process caches keep solver models warm)
# --------------------------------------------------------------------------------------------
_CACHE: dict[str, Any] = {}


def _data(data_seed: int) -> tuple[Any, Any]:
    key = f"adult-{data_seed}"
    if key not in _CACHE:
        from oracledp.datasets import load_adult

        _CACHE[key] = (load_adult("train", random_state=data_seed),
                       load_adult("test", random_state=data_seed))
    return _CACHE[key]


def _problem(kind: str, data_seed: int, time_limit: float) -> tuple[Any, Any]:
    """(problem, oracle) for OPDisc or RSPM, built once per worker process."""
    key = f"{kind}-{data_seed}-{time_limit}"
    if key not in _CACHE:
        from oracledp.learners import rspm_space
        from oracledp.oracles import HalfspaceProblem, make_oracle

        train, _ = _data(data_seed)
        space = rspm_space(train.X.shape[1]) if kind == "rspm" else None
        problem = HalfspaceProblem.from_data(train.X, train.y, space, schema=train.feature_schema)
        _CACHE[key] = (problem, make_oracle("highs", time_limit=time_limit))
    return _CACHE[key]


def _accuracy(X: np.ndarray, y: np.ndarray, w: np.ndarray, b: float = 0.0) -> float:
    return float(np.mean(np.where(X @ w + b > 0, 1, -1) == y))


def _run_oracle_method(method: str, eps: float, seed: int, cfg: Config) -> dict[str, Any]:
    from oracledp.learners import opdisc, rspm

    train, test = _data(cfg.data_seed)
    problem, oracle = _problem(method, cfg.data_seed, cfg.time_limit)
    delta = 1.0 / problem.n**2
    t0 = time.perf_counter()
    try:
        # research records: certification status and oracle time are non-private diagnostics
        with research_diagnostics():
            if method == "opdisc":
                res = opdisc(problem, eps, delta, oracle=oracle, random_state=seed,
                             return_diagnostics=True)
            else:
                res = rspm(problem, eps, oracle=oracle, random_state=seed,
                           return_diagnostics=True)
    except OracleFailure as exc:
        r = exc.result
        return {"failed": True, "certified": False, "status": str(getattr(r, "status", "error")),
                "oracle_s": getattr(r, "wall_time", time.perf_counter() - t0)}
    assert res.diagnostics is not None
    orc = res.diagnostics["oracle"]
    return {
        "failed": False,
        "certified": orc.certified,
        "status": str(orc.status),
        "oracle_s": orc.wall_time,
        "train_acc": _accuracy(train.X, train.y, res.w),
        "test_acc": _accuracy(test.X, test.y, res.w),
        "guarantee": res.guarantee.to_dict(),
        **({"sigma": float(res.sigma),
            "sigma_ratio_to_paper": float(res.calibration.ratio_to_paper)}
           if method == "opdisc" else {}),
    }


def _run_dpsgd(eps: float, seed: int, cfg: Config) -> dict[str, Any]:
    from oracledp.baselines import dpsgd_logistic

    train, test = _data(cfg.data_seed)
    t0 = time.perf_counter()
    res = dpsgd_logistic(train.X, train.y, eps, 1.0 / len(train.y) ** 2, random_state=seed)
    return {
        "failed": False,
        "certified": True,
        "status": "accounted",
        "oracle_s": time.perf_counter() - t0,
        "train_acc": _accuracy(train.X, train.y, res.coef, res.intercept),
        "test_acc": _accuracy(test.X, test.y, res.coef, res.intercept),
        "guarantee": res.guarantee.to_dict(),
    }


def _run_opsamp(eps: float, seed: int, cfg: Config) -> dict[str, Any]:
    from oracledp.estimators import OPSampClassifier

    train, test = _data(cfg.data_seed)
    t0 = time.perf_counter()
    try:
        clf = OPSampClassifier(epsilon=eps, m=cfg.opsamp_m, random_state=seed).fit(train.X,
                                                                                   train.y)
    except OracleFailure as exc:
        return {"failed": True, "certified": False, "status": f"oracle failure: {exc}"[:200],
                "oracle_s": time.perf_counter() - t0}
    return {
        "failed": False,
        "certified": True,
        "status": "ok",
        "oracle_s": time.perf_counter() - t0,
        "train_acc": float(clf.score(train.X, train.y)),
        "test_acc": float(clf.score(test.X, test.y)),
        "guarantee": clf.guarantee_.to_dict(),
    }


def run_one(method: str, eps: float, run: int, cfg: Config) -> dict[str, Any]:
    """One (method, epsilon, run): a JSON-serializable record."""
    seed = run_seed(cfg.seed, method, eps, run)
    t0 = time.perf_counter()
    if method in ("opdisc", "rspm"):
        out = _run_oracle_method(method, eps, seed, cfg)
    elif method == "dpsgd":
        out = _run_dpsgd(eps, seed, cfg)
    else:
        out = _run_opsamp(eps, seed, cfg)
    return {"key": run_key(method, eps, run), "method": method, "eps": eps, "run": run,
            "seed": seed, "wall_s": time.perf_counter() - t0, **out}


# --------------------------------------------------------------------------------------------
# The whole reproduction
# --------------------------------------------------------------------------------------------
def load_runs(out_dir: Path) -> list[dict[str, Any]]:
    """The records of ``out_dir/runs.jsonl``; a line cut by an interruption is skipped (redone)."""
    return read_jsonl(out_dir / "runs.jsonl")


def run_reproduction(cfg: Config, out_dir: Path,
                     progress: Callable[[int, int, str], None] | None = None,
                     ) -> list[dict[str, Any]]:
    """Run every missing (method, eps, run) of ``cfg``; append each record to runs.jsonl."""
    out_dir.mkdir(parents=True, exist_ok=True)
    done = {r["key"]: r for r in load_runs(out_dir)}
    todo = [(m, e, r) for m in cfg.methods for e in cfg.epsilons for r in range(cfg.runs)
            if run_key(m, e, r) not in done]
    if progress:
        progress(0, len(todo), f"{len(done)} runs already in {out_dir}")
    (out_dir / "config.json").write_text(json.dumps(asdict(cfg), indent=2))
    run_and_append(out_dir / "runs.jsonl", run_one, [(*w, cfg) for w in todo], cfg.n_jobs, done,
                   progress, lambda rec: f"{rec['method']} eps={rec['eps']:g} run {rec['run']}")
    wanted = {run_key(m, e, r) for m in cfg.methods for e in cfg.epsilons for r in range(cfg.runs)}
    runs = [done[k] for k in sorted(wanted, key=lambda k: (k.split("|")[0], float(k.split("|")[1]),
                                                          int(k.split("|")[2])))]
    _write_csv(runs, out_dir / "runs.csv")
    return runs


def _write_csv(runs: list[dict[str, Any]], path: Path) -> None:
    cols = ["method", "eps", "run", "seed", "failed", "certified", "status", "train_acc",
            "test_acc", "oracle_s", "wall_s"]
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=[*cols, "epsilon_claimed", "delta_claimed", "source"])
        w.writeheader()
        for r in runs:
            g = r.get("guarantee") or {}
            w.writerow({**{c: r.get(c) for c in cols}, "epsilon_claimed": g.get("epsilon"),
                        "delta_claimed": g.get("delta"), "source": g.get("source")})


def summarize(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean, std and count of accuracies per (method, eps); failures counted separately."""
    rows = []
    keys = sorted({(r["method"], r["eps"]) for r in runs}, key=lambda k: (METHODS.index(k[0]), k[1]))
    for method, eps in keys:
        rs = [r for r in runs if r["method"] == method and r["eps"] == eps]
        ok = [r for r in rs if not r["failed"]]
        tr = np.array([r["train_acc"] for r in ok])
        te = np.array([r["test_acc"] for r in ok])
        ts = np.array([r["oracle_s"] for r in rs])
        rows.append({
            "method": method, "eps": eps, "runs": len(rs), "failures": len(rs) - len(ok),
            "train_mean": float(tr.mean()) if len(tr) else math.nan,
            "train_std": float(tr.std(ddof=1)) if len(tr) > 1 else math.nan,
            "test_mean": float(te.mean()) if len(te) else math.nan,
            "test_std": float(te.std(ddof=1)) if len(te) > 1 else math.nan,
            "time_median_s": float(np.median(ts)) if len(ts) else math.nan,
            "time_max_s": float(ts.max()) if len(ts) else math.nan,
        })
    return rows


def write_figures(runs: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    """The paper's two figures: accuracy vs epsilon (std error bars) and run-time histograms."""
    rows = summarize(runs)
    methods = [m for m in METHODS if any(r["method"] == m for r in rows)]
    fig = new_figure(figsize=(7, 4.5))
    ax = fig.add_subplot(111)
    for m in methods:
        rs = [r for r in rows if r["method"] == m and not math.isnan(r["train_mean"])]
        ax.errorbar([r["eps"] for r in rs], [r["train_mean"] for r in rs],
                    yerr=std_bars(r["train_std"] for r in rs),
                    marker="o", capsize=3, label=m)
    finish_axes(ax, "epsilon (delta = 1/n^2)", "training accuracy (mean ± std)",
                "Adult (n=15,682, d=23): accuracy vs epsilon", xscale="log")
    p1 = save_figure(fig, out_dir / "accuracy_vs_epsilon.png", 120)

    fig2 = new_figure(figsize=(7, 4.5))
    ax2 = fig2.add_subplot(111)
    times = [np.array([r["oracle_s"] for r in runs if r["method"] == m]) for m in methods]
    hi = max((t.max() for t in times if len(t)), default=1.0)
    bins = np.logspace(np.log10(max(1e-3, min(t.min() for t in times if len(t)))),
                       np.log10(hi * 1.01), 30)
    for m, t in zip(methods, times, strict=True):
        ax2.hist(t, bins=bins, alpha=0.55, label=m)
    ax2.set_xscale("log")
    ax2.set_xlabel("run time per fit (s)")
    ax2.set_ylabel("runs")
    ax2.set_title("Distribution of run time")
    ax2.legend()
    p2 = save_figure(fig2, out_dir / "runtime_histogram.png", 120)
    write_summary_json(rows, out_dir)
    return [p1, p2]
