"""The demo: OPDisc on Adult, private runs at a few epsilons against the non-private optimum.

Setting (Neel, Roth, Vietri, Wu, ICML 2020, Section 5): the balanced Adult
training split (n = 15,682, d = 23, :func:`~oracledp.datasets.load_adult`),
the space ``W = {k integer : |k_j| <= floor(sqrt(d)), ||k||_2 <= sqrt(d)}``
(tau = 1), delta = 1/n^2, accuracy measured on the balanced test split.

For every epsilon and run the demo fits an
:class:`~oracledp.estimators.OPDiscClassifier` with its own seed, derived from
``(seed, epsilon index, run)`` by :class:`numpy.random.SeedSequence` and
recorded, so any run can be replayed alone.  A run whose oracle does not
certify the exact optimum releases nothing (OPDisc's guarantee needs the exact
minimizer): it is recorded as a failure and left out of the accuracy figures.

The non-private reference is the exact minimizer of the 0/1 loss over the same
space, i.e. the oracle called with a zero noise vector (eta = 0).  It is *not*
private and is labelled so.  So is the chance level: the share of the majority label
among the test labels, what always predicting that label scores (an evaluation number,
computed exactly like the accuracies).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp._diagnostics import research_diagnostics
from oracledp._errors import OracleFailure
from oracledp._provenance import environment
from oracledp._validation import check_epsilon, check_positive
from oracledp.learners._opdisc_calibration import calibrate
from oracledp.oracles._halfspace import FeatureSchema, HalfspaceProblem
from oracledp.oracles._registry import check_solver_name
from oracledp.oracles._space import IntegerBall

__all__ = ["CHANCE_LABEL", "NON_PRIVATE_LABEL", "Config", "ProgressCallback", "run_demo",
           "run_seed", "write_outputs"]

NON_PRIVATE_LABEL = "non-private (eta=0)"
CHANCE_LABEL = "chance (majority label, test)"

ProgressCallback = Callable[[int, int, str], None]
"""``progress(done, total, description)``: called before each step and once at the end."""


@dataclass(frozen=True)
class Config:
    """Demo settings; the defaults are the paper's setting.

    ``n_train`` / ``n_test`` subsample the splits (a seeded draw without
    replacement, for quick smoke tests only; the paper uses the full splits).
    ``solver`` is the command line's ``--solver`` (recorded in demo.json under that name):
    the oracle backend name, passed to the estimator as ``oracle=``.
    """

    epsilons: tuple[float, ...] = (0.1, 1.0)
    runs: int = 3
    seed: int = 0
    solver: str = "highs"
    time_limit: float = 300.0  # 5x the slowest call measured: far from the limit
    n_train: int | None = None
    n_test: int | None = None
    data_seed: int = 0

    def __post_init__(self) -> None:
        eps = tuple(check_epsilon(e) for e in self.epsilons)
        if not eps:
            raise ValueError("epsilons must hold at least one value")
        object.__setattr__(self, "epsilons", eps)
        for name in ("runs", "seed", "data_seed"):
            v = getattr(self, name)
            low = 1 if name == "runs" else 0
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
        check_solver_name(self.solver)
        check_positive(self.time_limit, "time_limit")
        for name in ("n_train", "n_test"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))
                                  or v < 2):
                raise ValueError(f"{name} must be None or an integer >= 2, got {v!r}")


def run_seed(seed: int, eps_index: int, run: int) -> int:
    """The int seed of one run, derived from the demo seed (independent streams)."""
    return int(np.random.SeedSequence([seed, eps_index, run]).generate_state(1)[0])


def _subsample(X: NDArray, y: NDArray, n: int | None, seed: int, salt: int
               ) -> tuple[NDArray, NDArray]:
    if n is None or n >= len(y):
        return X, y
    idx = np.sort(np.random.default_rng([seed, salt]).choice(len(y), size=n, replace=False))
    return X[idx], y[idx]


def _accuracy(X: NDArray[np.float64], y: NDArray, w: NDArray[np.float64]) -> float:
    """Accuracy of sign(<x, w>) with a score of 0 sent to -1 (as OPDiscClassifier.predict)."""
    pred = np.where(X @ w > 0, 1, -1)
    return float(np.mean(pred == y))


def _stats(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "std": None}
    arr = np.asarray(values, dtype=np.float64)
    return {"mean": float(arr.mean()), "std": float(arr.std(ddof=1)) if len(arr) > 1 else None}


def _non_private(X_tr: NDArray, y_tr: NDArray, X_te: NDArray, y_te: NDArray,
                 config: Config, schema: FeatureSchema) -> dict[str, Any]:
    from oracledp.estimators._opdisc import build_oracle

    problem = HalfspaceProblem.from_data(X_tr, y_tr, IntegerBall(X_tr.shape[1]), schema=schema)
    oracle = build_oracle(config.solver, config.time_limit)
    t0 = time.perf_counter()
    res = oracle.solve(problem, np.zeros(problem.d + 1))
    elapsed = time.perf_counter() - t0
    out: dict[str, Any] = {
        "label": NON_PRIVATE_LABEL,
        "private": False,
        "certified": bool(res.certified),
        "status": str(res.status),
        "oracle_time_s": float(res.wall_time),
        "total_time_s": elapsed,
        "loss": res.loss,
        "w": None if res.solution is None else res.solution.tolist(),
        "train_acc": None,
        "test_acc": None,
    }
    if res.solution is not None:
        out["train_acc"] = _accuracy(X_tr, y_tr, res.solution)
        out["test_acc"] = _accuracy(X_te, y_te, res.solution)
    return out


def _private_run(X_tr: NDArray, y_tr: NDArray, X_te: NDArray, y_te: NDArray, eps: float,
                 eps_index: int, run: int, config: Config,
                 schema: FeatureSchema) -> dict[str, Any]:
    from oracledp.estimators import OPDiscClassifier

    seed = run_seed(config.seed, eps_index, run)
    # A research report: it records the oracle's status, time and training loss, which are
    # non-private diagnostics (kept on purpose; the guarantee is flagged accordingly).
    clf = OPDiscClassifier(epsilon=eps, space="paper", oracle=config.solver,
                           time_limit=config.time_limit, schema=schema, keep_diagnostics=True,
                           random_state=seed)
    rec: dict[str, Any] = {"epsilon": eps, "run": run, "seed": seed}
    t0 = time.perf_counter()
    try:
        with research_diagnostics():
            clf.fit(X_tr, y_tr)
    except OracleFailure as exc:
        # Only the status and the time are kept: the uncertified point, its objective and
        # bound (in the exception message) depend on the data and must not be published.
        res = exc.result
        status = str(res.status) if res is not None else "error"
        rec.update({
            "ok": False,
            "certified": False,
            "status": status,
            "oracle_time_s": float(res.wall_time) if res is not None else None,
            "total_time_s": time.perf_counter() - t0,
            "train_acc": None,
            "test_acc": None,
            "guarantee": None,
            "error": f"oracle did not certify the exact optimum (status {status}); "
                     "nothing released",
        })
        return rec
    r = clf.result_
    oracle = clf.diagnostics_["oracle"]
    rec.update({
        "ok": True,
        "certified": bool(r.certified),
        "status": str(oracle.status),
        "oracle_time_s": float(oracle.wall_time),
        "total_time_s": time.perf_counter() - t0,
        "train_acc": float(clf.score(X_tr, y_tr)),
        "test_acc": float(clf.score(X_te, y_te)),
        "loss": oracle.loss,
        "sigma": float(r.sigma),
        "sigma_ratio_to_paper": float(r.calibration.ratio_to_paper),
        "calibration": r.calibration.describe(),
        "w": clf.coef_[0].tolist(),
        "guarantee": clf.guarantee_.to_dict(),
        "guarantee_text": clf.guarantee_.describe(),
        "oracle": clf.diagnostics_["oracle_status"],
    })
    return rec


def _summary(runs: list[dict[str, Any]], config: Config) -> list[dict[str, Any]]:
    rows = []
    for eps in config.epsilons:
        mine = [r for r in runs if r["epsilon"] == eps]
        good = [r for r in mine if r["ok"] and r["certified"]]
        times = [r["oracle_time_s"] for r in mine if r["oracle_time_s"] is not None]
        rows.append({
            "epsilon": eps,
            "runs": len(mine),
            "certified": len(good),
            "failed": len(mine) - len(good),
            "train_acc": _stats([r["train_acc"] for r in good]),
            "test_acc": _stats([r["test_acc"] for r in good]),
            "oracle_time_s": {
                "median": float(np.median(times)) if times else None,
                "max": float(np.max(times)) if times else None,
            },
        })
    return rows


def run_demo(config: Config | None = None, progress: ProgressCallback | None = None
             ) -> dict[str, Any]:
    """Run the demo and return a JSON-ready record of everything.

    Keys: ``config``, ``data`` (sizes, delta), ``non_private`` (the eta = 0
    optimum), ``runs`` (one record per private fit: seed, accuracies, oracle
    time, certified flag, status, guarantee), ``summary`` (per epsilon: certified
    k of n, mean and std of the accuracies of certified runs, oracle time median
    and max) and ``elapsed_s``.
    """
    from oracledp.datasets import load_adult

    config = Config() if config is None else config
    t_start = time.perf_counter()
    total = 1 + len(config.epsilons) * config.runs
    done = 0

    def step(desc: str) -> None:
        if progress is not None:
            progress(done, total, desc)

    step("loading Adult")
    train = load_adult("train", balanced=True, random_state=config.data_seed)
    test = load_adult("test", balanced=True, random_state=config.data_seed)
    X_tr, y_tr = _subsample(train.X, train.y, config.n_train, config.seed, 1)
    X_te, y_te = _subsample(test.X, test.y, config.n_test, config.seed, 2)
    n, d = X_tr.shape

    step(NON_PRIVATE_LABEL)
    non_private = _non_private(X_tr, y_tr, X_te, y_te, config, train.feature_schema)
    done += 1

    runs: list[dict[str, Any]] = []
    for i, eps in enumerate(config.epsilons):
        for run in range(config.runs):
            step(f"eps={eps:g} run {run + 1}/{config.runs}")
            runs.append(_private_run(X_tr, y_tr, X_te, y_te, eps, i, run, config,
                                     train.feature_schema))
            done += 1
    step("done")

    return {
        "config": asdict(config),
        "environment": environment(),
        "data": {
            "train": train.name,
            "test": test.name,
            "n_train": int(n),
            "n_test": len(y_te),
            "d": int(d),
            "delta": 1.0 / n**2,
            "space": {"tau": 1.0, "bound": math.floor(math.sqrt(d)), "radius": math.sqrt(d)},
        },
        # public: sigma per eps (proven calibration) and its ratio to Theorem 1's sigma
        "calibration": [
            {"epsilon": eps, "sigma": cal.sigma, "ratio_to_paper": cal.ratio_to_paper,
             "delta_bound": cal.delta_bound, "bound": cal.bound}
            for eps in config.epsilons
            for cal in [calibrate(eps, 1.0 / n**2, IntegerBall(d), 1.0)]
        ],
        "non_private": non_private,
        # not private either: what always predicting the test set's majority label scores
        "chance": {"label": CHANCE_LABEL, "private": False,
                   "test_acc": float(max(np.mean(y_te == 1), np.mean(y_te != 1)))},
        "runs": runs,
        "summary": _summary(runs, config),
        "elapsed_s": time.perf_counter() - t_start,
    }


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def _y_range(values: list[float]) -> tuple[float, float]:
    """The accuracy axis: every plotted value (bars included) with a margin of 0.02, the
    ends rounded outwards to a multiple of 0.05, within [0, 1]."""
    lo, hi = min(values) - 0.02, max(values) + 0.02
    return max(0.0, math.floor(lo * 20) / 20), min(1.0, math.ceil(hi * 20) / 20)


def _figure(result: dict[str, Any]) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.2))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    rows = [r for r in result["summary"] if r["certified"] > 0]
    eps = [r["epsilon"] for r in rows]
    shown: list[float] = []
    for key, label, marker, shift in (("test_acc", "test", "o", 1.0),
                                      ("train_acc", "train", "s", 1.04)):
        means = [r[key]["mean"] for r in rows]
        stds = [r[key]["std"] or 0.0 for r in rows]
        # train points nudged right on the log axis so the two error bars stay visible
        ax.errorbar([e * shift for e in eps], means, yerr=stds, marker=marker, capsize=4,
                    label=f"OPDisc {label} (mean ± std)")
        shown += [m - s for m, s in zip(means, stds, strict=True)]
        shown += [m + s for m, s in zip(means, stds, strict=True)]
    np_ = result["non_private"]
    if np_["test_acc"] is not None:
        ax.axhline(np_["test_acc"], color="k", linestyle="--",
                   label=f"{NON_PRIVATE_LABEL} test")
        ax.axhline(np_["train_acc"], color="grey", linestyle=":",
                   label=f"{NON_PRIVATE_LABEL} train")
        shown += [np_["test_acc"], np_["train_acc"]]
    chance = result.get("chance")
    if chance is not None:
        ax.axhline(chance["test_acc"], color="tab:red", linestyle="-.", linewidth=1.0,
                   label=f"{chance['label']}: {chance['test_acc']:.3f}")
        shown.append(chance["test_acc"])
    if shown:
        ax.set_ylim(*_y_range(shown))
    all_eps = [r["epsilon"] for r in result["summary"]]
    ax.set_xlim(min(all_eps) / 1.5, max(all_eps) * 1.5)  # also when no run was certified
    ax.set_xscale("log")
    ax.set_xticks(all_eps, [f"{e:g}" for e in all_eps])
    ax.minorticks_off()
    failed = sum(r["failed"] for r in result["summary"])
    if failed:
        ax.text(0.01, 0.01, f"{failed} uncertified run(s) excluded (nothing released)",
                transform=ax.transAxes, fontsize="small", color="red")
    ax.set_xlabel("epsilon")
    ax.set_ylabel("accuracy")
    data = result["data"]
    ax.set_title(f"OPDisc on Adult (n={data['n_train']:,}, d={data['d']}, delta=1/n²)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def _plot(result: dict[str, Any], path: Path) -> None:
    _figure(result).savefig(path, dpi=120)


def write_outputs(result: dict[str, Any], out_dir: str | Path) -> dict[str, Path]:
    """Write ``demo.json`` (everything) and ``demo.png`` (accuracy vs epsilon) into out_dir."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "demo.json"
    json_path.write_text(json.dumps(result, indent=2, default=_json_default) + "\n")
    png_path = out / "demo.png"
    _plot(result, png_path)
    return {"json": json_path, "png": png_path}
