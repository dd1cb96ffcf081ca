"""Reproduction of the experiments of "Accuracy First" (Ligett, Neel, Roth, Waggoner, Wu, NeurIPS 2017).

Section 4 and Appendix B: for each target excess risk ``alpha``, run the
noise-reduction method and the DoublingMethod baseline many times and report the
realised ex-post privacy loss, against the "theory approach" (invert the utility
theorem of the underlying private ERM algorithm).

* ``task="logistic"``: l2-regularised logistic regression on KDD-99 (the
  paper's setting: n = 100,000, p = 38), OutputNR (Algorithm 5) vs the
  DoublingMethod with output perturbation; theory curve Theorem 3.3.
* ``task="ridge"``: ridge regression, CovNR (Algorithm 3) vs the DoublingMethod
  with covariance perturbation; theory curve Theorem 3.1 (and, as in the
  paper's Figure 1a, output perturbation's Theorem A.9, corrected).  The paper
  uses a Twitter data set that is not available here: **the ridge task is a
  KDD-99 stand-in for Twitter** (predict ``log(1 + src_bytes)``, scaled by a
  public constant to ``[0, 1]``, from the other 37 attributes; see
  :func:`oracledp.datasets.load_kdd99`).  Every output says so.

Parameters (Appendix B.1): ``lambda = 0.005``, ``gamma = 0.1``, ``T = 1000``
noise-reduction levels geometric from ``1/n`` to ``4E`` (E the theory epsilon
of the task for alpha), the doubling grid ``1/n, 2/n, ...`` up to the first level
``>= 4E`` (:func:`oracledp.erm.default_eps_grid`, which is what
:func:`~oracledp.erm.covnr`, :func:`~oracledp.erm.outputnr` and
:func:`~oracledp.erm.doubling` use with ``eps_list=None``).  The paper sweeps
``alpha = 0.005, 0.010, ..., 0.200`` (40 values) with 40 trials (KDD-99) or 80
(Twitter); the default here is 7 of those 40 values, roughly geometric and
including the two the paper quotes in the text (0.05 and 0.075):
:data:`PAPER_ALPHAS`.  ``alphas`` takes any list (e.g. the full 40).

Constants: the sensitivities the paper *proves* (Claims A.5, A.12), not the
halved ones of the authors' code.  Because both tests' noise scales do not
depend on the query sensitivity (IAT: ``2 Delta / eps_0 = alpha / (8 ln(2T/gamma))``;
doubling: ``alpha / (2 ln(T/gamma))``), halving it would leave every stopping
index unchanged in law and exactly halve the test part of the loss; the summary
reports that counterfactual (``*_eps_half_test_mean``) next to the real numbers.

Every (method, alpha, trial) is one JSON line in ``trials.jsonl``, appended as
soon as it finishes, so an interrupted run resumes where it stopped (trials
already present are skipped).  Seeds are derived from ``(seed, method,
alpha, trial)`` with :class:`numpy.random.SeedSequence` and recorded, so results
do not depend on the number of workers or on the order of the trials.  A trial
in which no level passes the test released nothing (the algorithms refuse to
release the non-private optimum): it is recorded as a ``"no-halt"`` failure
with the loss of the refusal, never dropped, and never counted as a success.

``excess_risk`` and ``success`` (``excess_risk <= alpha``) are a *non-private
diagnostic* (they read the training data exactly); fine for an experiment
report, never to be published with a model.
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

from lab._outputs import (
    new_figure,
    read_jsonl,
    run_and_append,
    save_figure,
    write_summary_json,
)
from oracledp import research_diagnostics
from oracledp.erm import (
    covpert_ridge_epsilon,
    default_eps_grid,
    outpert_logistic_epsilon,
    outpert_ridge_epsilon,
)

__all__ = [
    "ALL_METHODS",
    "PAPER_ALPHAS",
    "QUICK_ALPHAS",
    "TASKS",
    "Config",
    "dataset_label",
    "load_trials",
    "quick_config",
    "run",
    "run_trial",
    "summarize",
    "trial_key",
    "trial_seed",
    "write_figures",
    "write_summary",
]

TASKS = ("logistic", "ridge")
#: (noise reduction, doubling) per task.
TASK_METHODS: dict[str, tuple[str, str]] = {
    "logistic": ("outputnr", "doubling-outpert"),
    "ridge": ("covnr", "doubling-covpert"),
}
ALL_METHODS = ("outputnr", "doubling-outpert", "covnr", "doubling-covpert")
ROLES = ("nr", "doubling")

#: 7 of the paper's 40 alphas (Appendix B.1: 0.005, 0.010, ..., 0.200), roughly geometric,
#: including 0.05 and 0.075 quoted in Section 4.
PAPER_ALPHAS = (0.005, 0.01, 0.02, 0.05, 0.075, 0.1, 0.2)
QUICK_ALPHAS = (0.01, 0.05, 0.2)
QUICK_TRIALS = 5
#: Appendix B.1: T = 1000 noise-reduction levels (the algorithms' default too).
DEFAULT_T = 1000

#: Number of features of each task (KDD-99: 38 numeric attributes; ridge drops src_bytes).
TASK_P = {"logistic": 38, "ridge": 37}

RIDGE_NOTE = (
    "KDD-99 ridge stand-in for Twitter: the paper's Twitter buzz data is not available; the "
    "ridge task predicts log(1 + src_bytes) / log(2^32) (|y| <= 1, public scale) from the "
    "other 37 KDD-99 attributes. Its numbers are not comparable to the paper's Twitter figures."
)
LOGISTIC_NOTE = (
    "KDD-99 (10% file) logistic regression as in the paper: 38 numeric attributes, "
    "log(1+x) on duration/src_bytes/dst_bytes, per-record l1 normalisation, attack = +1."
)
DIAGNOSTIC_NOTE = (
    "excess_risk and success (excess_risk <= alpha) are a non-private diagnostic computed "
    "from the training data; they are not covered by any privacy guarantee."
)


def dataset_label(task: str) -> str:
    return "KDD-99 logistic" if task == "logistic" else "KDD-99 ridge stand-in for Twitter"


@dataclass(frozen=True)
class Config:
    task: str = "logistic"
    trials: int = 40
    alphas: tuple[float, ...] = PAPER_ALPHAS
    lam: float = 0.005
    gamma: float = 0.1
    T: int = DEFAULT_T
    n: int = 100_000
    seed: int = 0
    data_seed: int = 0
    n_jobs: int = 1

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"unknown task {self.task!r}; valid: {', '.join(TASKS)}")
        alphas = tuple(float(a) for a in self.alphas)
        if not alphas:
            raise ValueError("alphas must hold at least one value")
        for a in alphas:
            if not (math.isfinite(a) and a > 0):
                raise ValueError(f"every alpha must be a finite number > 0, got {a!r}")
        if len(set(alphas)) != len(alphas):
            raise ValueError(f"alphas must be distinct, got {alphas}")
        object.__setattr__(self, "alphas", tuple(sorted(alphas)))
        for name, lo in (("trials", 1), ("n", 2), ("n_jobs", 1), ("T", 2), ("seed", 0),
                         ("data_seed", 0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
        if not (math.isfinite(self.lam) and self.lam > 0):
            raise ValueError(f"lam must be > 0, got {self.lam!r}")
        if not (0 < self.gamma < 1):
            raise ValueError(f"gamma must be in (0, 1), got {self.gamma!r}")
        for a in alphas:  # the default grid 1/n .. 4E must not be empty (default_eps_grid)
            if 1.0 / self.n >= 4.0 * self.theory_epsilon(a):
                raise ValueError(
                    f"alpha = {a:g} is too large for n = {self.n}: the grid from 1/n to 4E "
                    f"(Appendix B) is empty"
                )

    @property
    def p(self) -> int:
        return TASK_P[self.task]

    @property
    def methods(self) -> tuple[str, str]:
        return TASK_METHODS[self.task]

    def theory_epsilon(self, alpha: float) -> float:
        """E for alpha: Theorem 3.3 (logistic, output perturbation) or 3.1 (ridge, covariance)."""
        if self.task == "logistic":
            return outpert_logistic_epsilon(alpha, self.n, self.p, self.lam)
        return covpert_ridge_epsilon(alpha, self.n, self.p, self.lam)

    def identity(self) -> dict[str, Any]:
        """The fields that must match for records to be reused (everything but the sweep size)."""
        return {k: getattr(self, k) for k in ("task", "lam", "gamma", "T", "n", "seed",
                                               "data_seed")}


def quick_config(**overrides: Any) -> Config:
    """3 alphas x 5 trials (well under a minute at n = 100,000)."""
    base: dict[str, Any] = {"alphas": QUICK_ALPHAS, "trials": QUICK_TRIALS}
    base.update(overrides)
    return Config(**base)


def trial_seed(seed: int, method: str, alpha: float, trial: int) -> int:
    """The recorded integer seed of one trial.

    ``SeedSequence([seed, method index, round(alpha * 1e6), trial])``: alpha enters
    by value (in millionths), not by its position in the list, so a trial's seed
    and result do not change when the alpha list is extended and a run resumed.
    """
    key = [seed, ALL_METHODS.index(method), round(alpha * 1e6), trial]
    return int(np.random.SeedSequence(key).generate_state(1)[0])


def trial_key(method: str, alpha: float, trial: int) -> str:
    return f"{method}|{alpha:g}|{trial}"


# --------------------------------------------------------------------------------------------
# One trial (possibly in a joblib worker; the prepared problem is cached per process)
# --------------------------------------------------------------------------------------------
_PROBLEMS: dict[tuple[Any, ...], Any] = {}


def _problem(cfg: Config) -> Any:
    """The prepared Logistic/RidgeProblem (data, theta*), built once per process and reused."""
    key = (cfg.task, cfg.n, cfg.data_seed, cfg.lam)
    if key not in _PROBLEMS:
        from oracledp.datasets import load_kdd99
        from oracledp.erm import LogisticProblem, RidgeProblem

        data = load_kdd99(n=cfg.n, random_state=cfg.data_seed, task=cfg.task)
        cls = LogisticProblem if cfg.task == "logistic" else RidgeProblem
        _PROBLEMS[key] = cls.from_data(data.X, data.y, cfg.lam)
    return _PROBLEMS[key]


def _grid(cfg: Config, method: str, alpha: float) -> np.ndarray:
    """Appendix B's grid (what the algorithms use with eps_list=None when T = 1000)."""
    return default_eps_grid(method, alpha, cfg.n, cfg.p, cfg.lam, T=cfg.T)


def _exp(eps: float) -> float | None:
    return math.exp(eps) if eps < 700 else None  # e^eps beyond float range: recorded as null


_CONTROLLER: Any = None


def _one_blas_thread() -> Any:
    """Limit BLAS to one thread for a whole trial (the algorithms limit their inner loops, but a
    multithreaded call outside them, e.g. the final excess risk, leaves OpenBLAS threads spinning)."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


def run_trial(cfg: Config, method: str, alpha: float, trial: int) -> dict[str, Any]:
    """One (method, alpha, trial): a JSON-serializable record."""
    with _one_blas_thread():
        return _run_trial(cfg, method, alpha, trial)


def _run_trial(cfg: Config, method: str, alpha: float, trial: int) -> dict[str, Any]:
    from oracledp.erm import NoHaltError, covnr, doubling, outputnr

    seed = trial_seed(cfg.seed, method, alpha, trial)
    t0 = time.perf_counter()
    problem = _problem(cfg)
    grid = _grid(cfg, method, alpha)
    base: dict[str, Any] = {
        "key": trial_key(method, alpha, trial), "task": cfg.task,
        "dataset": dataset_label(cfg.task), "method": method,
        "role": ROLES[cfg.methods.index(method)], "alpha": alpha, "trial": trial, "seed": seed,
        "levels": int(grid.size), "eps_min": float(grid[0]), "eps_max": float(grid[-1]),
        "theta_star_norm": float(np.linalg.norm(problem.theta_star)),
        "theta_max_norm": float(problem.radius),
    }
    t1 = time.perf_counter()
    # excess_risk is a non-private diagnostic, requested on purpose for the report
    common = {"gamma": cfg.gamma, "eps_list": grid, "random_state": seed,
              "return_diagnostics": True}
    try:
        with research_diagnostics():
            if method == "outputnr":
                res = outputnr(problem, None, alpha, **common)
            elif method == "covnr":
                res = covnr(problem, None, alpha, **common)
            else:
                res = doubling(problem, None, alpha, **common)
    except NoHaltError as exc:
        return {**base, "halted": False, "failure": "no-halt", "stopping_index": None,
                "epsilon": None, "epsilon_test": None, "epsilon_hypothesis": None,
                "exp_epsilon": None, "epsilon_refusal": exc.epsilon_refusal,
                "excess_risk": None, "success": False, "theta_norm": None,
                "run_s": time.perf_counter() - t1, "wall_s": time.perf_counter() - t0}
    assert res.diagnostics is not None
    excess = float(res.diagnostics["excess_risk"])
    return {
        **base, "halted": True, "failure": None, "stopping_index": res.stopping_index,
        "epsilon": res.epsilon, "epsilon_test": res.epsilon_test,
        "epsilon_hypothesis": res.epsilon_hypothesis, "exp_epsilon": _exp(res.epsilon),
        "epsilon_refusal": None, "excess_risk": excess,
        "success": bool(excess <= alpha),
        "theta_norm": float(np.linalg.norm(res.theta)),
        "run_s": time.perf_counter() - t1, "wall_s": time.perf_counter() - t0,
    }


# --------------------------------------------------------------------------------------------
# The whole reproduction
# --------------------------------------------------------------------------------------------
def load_trials(out_dir: Path) -> list[dict[str, Any]]:
    """The records of ``out_dir/trials.jsonl``; a line cut by an interruption is skipped (redone)."""
    return read_jsonl(Path(out_dir) / "trials.jsonl")


def _check_resumable(cfg: Config, out_dir: Path) -> None:
    path = out_dir / "config.json"
    if not path.exists():
        return
    try:
        old = json.loads(path.read_text())
    except json.JSONDecodeError:
        return
    mismatch = {k: (old.get(k), v) for k, v in cfg.identity().items() if old.get(k) != v}
    if mismatch and load_trials(out_dir):
        detail = ", ".join(f"{k}: {a!r} there vs {b!r} now" for k, (a, b) in mismatch.items())
        raise ValueError(
            f"{out_dir} holds trials of a different configuration ({detail}); "
            "use another output directory"
        )


def _wanted(cfg: Config) -> list[tuple[str, float, int]]:
    return [(m, a, t) for a in cfg.alphas for m in cfg.methods for t in range(cfg.trials)]


def run(cfg: Config, out_dir: Path,
        progress: Callable[[int, int, str], None] | None = None) -> list[dict[str, Any]]:
    """Run every missing (method, alpha, trial) of ``cfg``; append each record to trials.jsonl.

    Returns the records of ``cfg`` (resumed and new) sorted by alpha, method, trial,
    and writes ``trials.csv``, ``summary.json`` and ``config.json``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    _check_resumable(cfg, out_dir)
    done = {r["key"]: r for r in load_trials(out_dir)}
    # Rewrite the file with the complete records only (drops a torn last line, so appending
    # below can never glue a new record onto a partial one).
    if done:
        (out_dir / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in done.values()))
    todo = [w for w in _wanted(cfg) if trial_key(*w) not in done]
    if progress:
        progress(0, len(todo), f"{len(done)} trials already in {out_dir}; loading KDD-99")
    (out_dir / "config.json").write_text(json.dumps(asdict(cfg), indent=2))
    run_and_append(out_dir / "trials.jsonl", run_trial, [(cfg, *w) for w in todo], cfg.n_jobs,
                   done, progress,
                   lambda rec: f"{rec['method']} alpha={rec['alpha']:g} trial {rec['trial']}")
    records = [done[trial_key(*w)] for w in _wanted(cfg)]
    _write_csv(records, out_dir / "trials.csv")
    write_summary(cfg, records, out_dir)
    return records


_CSV_COLS = ["task", "dataset", "method", "role", "alpha", "trial", "seed", "halted", "failure",
             "stopping_index", "levels", "eps_min", "eps_max", "epsilon", "epsilon_test",
             "epsilon_hypothesis", "exp_epsilon", "epsilon_refusal", "excess_risk", "success",
             "theta_norm", "theta_star_norm", "theta_max_norm", "run_s", "wall_s"]


def _write_csv(records: list[dict[str, Any]], path: Path) -> None:
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=_CSV_COLS, extrasaction="ignore")
        w.writeheader()
        for r in records:
            w.writerow(r)


def _mean(xs: list[float]) -> float | None:
    return float(np.mean(xs)) if xs else None


def _std(xs: list[float]) -> float | None:
    return float(np.std(xs, ddof=1)) if len(xs) > 1 else None


def _method_stats(rs: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rs if r["halted"]]
    eps = [r["epsilon"] for r in ok]
    exps = [r["exp_epsilon"] for r in ok]
    return {
        "trials": len(rs),
        "halted": len(ok),
        "no_halt": len(rs) - len(ok),
        "refusal_eps_mean": _mean([r["epsilon_refusal"] for r in rs if not r["halted"]]),
        "eps_mean": _mean(eps),
        "eps_std": _std(eps),
        "eps_median": float(np.median(eps)) if eps else None,
        "eps_test_mean": _mean([r["epsilon_test"] for r in ok]),
        "eps_hyp_mean": _mean([r["epsilon_hypothesis"] for r in ok]),
        # None when some e^eps overflowed a float (eps > 700)
        "exp_eps_mean": _mean(exps) if exps and all(x is not None for x in exps) else None,
        "eps_half_test_mean": _mean([r["epsilon_test"] / 2 + r["epsilon_hypothesis"] for r in ok]),
        "stop_mean": _mean([r["stopping_index"] for r in ok]),
        "excess_mean": _mean([r["excess_risk"] for r in ok]),
        "excess_max": max((r["excess_risk"] for r in ok), default=None),
        "success_rate": sum(bool(r["success"]) for r in rs) / len(rs) if rs else None,
        "norm_mean": _mean([r["theta_norm"] for r in ok]),
        "run_s_mean": _mean([r["run_s"] for r in rs]),
    }


def summarize(cfg: Config, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per alpha: NR and Doubling statistics (prefixes ``nr_`` / ``doubling_``) and theory.

    Means of the losses, their parts and norms are over the trials that halted;
    ``*_no_halt`` counts the others (their refusal losses are in ``*_refusal_eps_mean``);
    ``*_success_rate`` counts a no-halt trial as a failure.
    """
    rows = []
    nr_method, db_method = cfg.methods
    for a in cfg.alphas:
        row: dict[str, Any] = {"alpha": a, "theory_eps": cfg.theory_epsilon(a)}
        if cfg.task == "ridge":
            row["theory_eps_outpert_A9"] = outpert_ridge_epsilon(a, cfg.n, cfg.p, cfg.lam)
        for prefix, m in (("nr", nr_method), ("doubling", db_method)):
            rs = [r for r in records if r["method"] == m and r["alpha"] == a]
            for k, v in _method_stats(rs).items():
                row[f"{prefix}_{k}"] = v
        nr, db, th = row["nr_eps_mean"], row["doubling_eps_mean"], row["theory_eps"]
        row["doubling_over_nr"] = db / nr if nr and db else None
        row["theory_over_nr"] = th / nr if nr else None
        row["theory_over_doubling"] = th / db if db else None
        rows.append(row)
    return rows


def write_summary(cfg: Config, records: list[dict[str, Any]], out_dir: Path) -> dict[str, Any]:
    rows = summarize(cfg, records)
    theta_star = next((r["theta_star_norm"] for r in records), None)
    theta_max = next((r["theta_max_norm"] for r in records), None)
    summary = {
        "task": cfg.task,
        "dataset": dataset_label(cfg.task),
        "dataset_note": RIDGE_NOTE if cfg.task == "ridge" else LOGISTIC_NOTE,
        "methods": {"nr": cfg.methods[0], "doubling": cfg.methods[1]},
        "theory": ("Theorem 3.3 (output perturbation, logistic)" if cfg.task == "logistic"
                   else "Theorem 3.1 (covariance perturbation, ridge); theory_eps_outpert_A9: "
                        "Theorem A.9 (output perturbation, ridge), corrected"),
        "constants": "the sensitivities proven in the paper (Claims A.5, A.12); the authors' code "
                     "used half of them. *_eps_half_test_mean: the same trials with the test part "
                     "halved, i.e. what halved sensitivities give (the stopping law does not "
                     "depend on the sensitivity).",
        "diagnostic_note": DIAGNOSTIC_NOTE,
        "config": asdict(cfg),
        "n_records": len(records),
        "theta_star_norm": theta_star,
        "theta_max_norm": theta_max,
        "rows": rows,
    }
    write_summary_json(summary, Path(out_dir))
    return summary


# --------------------------------------------------------------------------------------------
# Figures (the paper's Figures 1-4)
# --------------------------------------------------------------------------------------------
def _title(cfg: Config, what: str) -> str:
    data = ("KDD-99 ridge stand-in for Twitter" if cfg.task == "ridge"
            else "KDD-99 logistic regression")
    return f"{what}\n{data} (n={cfg.n:,}, p={cfg.p}, λ={cfg.lam:g}, γ={cfg.gamma:g})"


def _series(rows: list[dict[str, Any]], key: str) -> tuple[list[float], list[float]]:
    xs = [r["alpha"] for r in rows if r.get(key) is not None]
    return xs, [r[key] for r in rows if r.get(key) is not None]


def write_figures(cfg: Config, records: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    """privacy_loss.png, excess_risk.png, privacy_breakdown.png, hypothesis_norms.png."""
    out_dir = Path(out_dir)
    rows = summarize(cfg, records)
    nr_label = {"outputnr": "NoiseReduction (OutputNR)", "covnr": "NoiseReduction (CovNR)"}[
        cfg.methods[0]]
    db_label = ("Doubling (output perturbation)" if cfg.task == "logistic"
                else "Doubling (covariance perturbation)")
    styles = {"nr": {"marker": "o", "color": "tab:blue", "label": nr_label},
              "doubling": {"marker": "s", "color": "tab:orange", "label": db_label}}
    paths = []

    def new() -> tuple[Any, Any]:
        fig = new_figure(figsize=(7, 4.6))
        return fig, fig.add_subplot(111)

    def save(fig: Any, name: str) -> None:
        paths.append(save_figure(fig, out_dir / name, 120))

    # Figure 1: ex-post privacy loss vs alpha (log y), NR vs Doubling vs theory
    fig, ax = new()
    for prefix in ("nr", "doubling"):
        xs, ys = _series(rows, f"{prefix}_eps_mean")
        err = [r[f"{prefix}_eps_std"] or 0.0 for r in rows if r[f"{prefix}_eps_mean"] is not None]
        ax.errorbar(xs, ys, yerr=err, capsize=3, **styles[prefix])
    thl = ("theory: output perturbation, Thm 3.3" if cfg.task == "logistic"
           else "theory: covariance perturbation, Thm 3.1")
    ax.plot(*_series(rows, "theory_eps"), "k--", label=thl)
    if cfg.task == "ridge":
        ax.plot(*_series(rows, "theory_eps_outpert_A9"), "k:",
                label="theory: output perturbation, Thm A.9 (corrected)")
    ax.set_yscale("log")
    ax.set_xlabel("target excess risk α")
    ax.set_ylabel("ex-post privacy loss ε (mean ± std over halted trials)")
    ax.set_title(_title(cfg, "Ex-post privacy loss (Figure 1)"), fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    save(fig, "privacy_loss.png")

    # Figure 2: achieved excess risk vs alpha with the target line
    fig, ax = new()
    for prefix in ("nr", "doubling"):
        ax.plot(*_series(rows, f"{prefix}_excess_mean"), **styles[prefix])
    amax = max(cfg.alphas)
    ax.plot([0, amax], [0, amax], "k--", label="requested α (y = α)")
    ax.plot([0, amax], [0, amax / 2], "k:", lw=0.8, label="α/2 (test threshold)")
    ax.set_xlabel("target excess risk α")
    ax.set_ylabel("achieved excess risk L(θ) − L(θ*), mean")
    ax.set_title(_title(cfg, "Achieved excess risk (Figure 2; non-private diagnostic)"),
                 fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, "excess_risk.png")

    # Figure 3: privacy breakdown, test vs hypothesis, stacked bars per alpha
    fig = new_figure(figsize=(9, 4.8), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    x = np.arange(len(rows))
    for ax, prefix, name in zip(axes, ("nr", "doubling"), (nr_label, db_label), strict=True):
        test = np.array([r[f"{prefix}_eps_test_mean"] or 0.0 for r in rows])
        hyp = np.array([r[f"{prefix}_eps_hyp_mean"] or 0.0 for r in rows])
        ax.bar(x, test, color="tab:red", alpha=0.8, label="test (accuracy check)")
        ax.bar(x, hyp, bottom=test, color="tab:green", alpha=0.8, label="hypothesis generation")
        ax.set_xticks(x, [f"{r['alpha']:g}" for r in rows], rotation=45)
        ax.set_xlabel("target excess risk α")
        ax.set_title(name, fontsize=9)
        ax.grid(alpha=0.3, axis="y")
    axes[0].set_ylabel("mean ex-post ε")
    axes[0].legend(fontsize=8)
    fig.suptitle(_title(cfg, "Privacy breakdown (Figure 3)"), fontsize=10)
    save(fig, "privacy_breakdown.png")

    # Figure 4: hypothesis norms vs alpha
    fig, ax = new()
    for prefix in ("nr", "doubling"):
        ax.plot(*_series(rows, f"{prefix}_norm_mean"), **styles[prefix])
    theta_star = next((r["theta_star_norm"] for r in records), None)
    theta_max = next((r["theta_max_norm"] for r in records), None)
    if theta_max is not None:
        rad = "√(2 ln2 / λ)" if cfg.task == "logistic" else "√(1/λ)"
        ax.axhline(theta_max, color="k", ls="--", label=f"theoretical maximum {rad} = {theta_max:.3g}")
    if theta_star is not None:
        ax.axhline(theta_star, color="gray", ls=":", label=f"‖θ*‖ = {theta_star:.3g} (non-private)")
    ax.set_xlabel("target excess risk α")
    ax.set_ylabel("‖θ‖₂ of the released hypothesis (mean)")
    ax.set_ylim(bottom=0)
    ax.set_title(_title(cfg, "Hypothesis norms (Figure 4)"), fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, "hypothesis_norms.png")
    return paths
