"""Private synthetic data on Adult's 8 categorical attributes: OracleQuery, its measured variant, peers.

Data: :func:`oracledp.synth.load_adult_categorical` (complete rows, n = 30,718,
public domain of 1,317,120 cells).  Workload: all k-way marginal cells
(k = 3: 18,597 queries).  Methods, each at every epsilon and run:

* ``oracle_query``: :class:`oracledp.synth.OracleQuerySynthesizer`
  ((epsilon, delta)-DP, zCDP composition, Hedge data player, exponential-mechanism
  query player; T chosen from the accuracy bound, capped at ``max_rounds``);
* ``oracle_query_pgm``: :class:`oracledp.synth.OracleQueryPGM`
  (the same query player selects, Gaussian measurements of the selected tables, a
  Private-PGM style estimate; (epsilon, delta)-DP by zCDP);
* ``mwem``: :func:`oracledp.synth.mwem` (pure epsilon-DP, ``mwem_rounds`` rounds,
  averaged output);
* ``independent``: :func:`oracledp.synth.independent_marginals` (pure epsilon-DP);
* with ``peers=True`` (needs ``pip install 'oracledp[peers]'``): ``mst`` and ``aim``,
  :class:`oracledp.synth.MSTSynthesizer` and :class:`~oracledp.synth.AIMSynthesizer`
  (McKenna et al.'s MST and AIM on ``mbi``, the same
  (epsilon, delta), replace-one neighbours).

Every method is evaluated the same way: max and mean absolute error over the
workload of the released model's exact answers (no sampling error), the fit wall
time, and the time to sample n records from the model together with the errors of
that sample (a check that the sampler draws from the model it released).  Seeds
derive from ``(seed, run, method, eps index)`` through :class:`numpy.random.SeedSequence`,
so adding or removing a method leaves the others' draws unchanged.  Outputs:
``runs.jsonl``, ``runs.csv``, ``summary.json``, ``error_vs_eps.png``, ``config.json``.
"""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial
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
from oracledp import environment

__all__ = ["ALL_METHODS", "METHODS", "PEERS", "Config", "quick_config", "run", "summarize",
           "write_figures"]

METHODS = ("oracle_query", "oracle_query_pgm", "mwem", "independent")
PEERS = ("mst", "aim")
ALL_METHODS = METHODS + PEERS
#: Seed-stream index of each method (stable: a method's draws do not depend on the others).
_METHOD_INDEX = {"oracle_query": 0, "mwem": 1, "independent": 2, "oracle_query_pgm": 3,
                 "mst": 4, "aim": 5}


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
    peers: bool = False  # add MST and AIM (needs the [peers] extra)
    pgm_rounds: int | None = None  # OracleQueryPGM's T (None: its default for the epsilon)

    def __post_init__(self) -> None:
        if not self.epsilons:
            raise ValueError("epsilons must be non-empty")
        object.__setattr__(self, "epsilons", tuple(check_epsilon(e) for e in self.epsilons))
        for name, lo in (("k", 1), ("runs", 1), ("max_rounds", 1), ("mwem_rounds", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
        if self.pgm_rounds is not None and (isinstance(self.pgm_rounds, bool) or not isinstance(
                self.pgm_rounds, int) or self.pgm_rounds < 1):
            raise ValueError(f"pgm_rounds must be an integer >= 1, got {self.pgm_rounds!r}")
        if not 0.0 < self.delta < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {self.delta!r}")
        if self.query_player not in ("noisy-min", "rspm", "prsma"):
            raise ValueError("query_player must be 'noisy-min', 'rspm' or 'prsma', "
                             f"got {self.query_player!r}")
        if self.data_player not in ("hedge", "ftpl"):
            raise ValueError(f"data_player must be 'hedge' or 'ftpl', got {self.data_player!r}")

    @property
    def methods(self) -> tuple[str, ...]:
        return ALL_METHODS if self.peers else METHODS


def quick_config(**overrides: Any) -> Config:
    """1 run at eps = 1 with few rounds (well under a minute)."""
    base: dict[str, Any] = {"epsilons": (1.0,), "runs": 1, "max_rounds": 20, "mwem_rounds": 10,
                            "pgm_rounds": 5}
    base.update(overrides)
    return Config(**base)


def _seed(*key: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(list(key))


def check_peers_available() -> None:
    """Raise ImportError (before any run) when the [peers] extra is not installed."""
    import importlib.util

    if importlib.util.find_spec("mbi") is None:
        raise ImportError("--peers needs the optional peers extra (MST and AIM on Private-PGM's "
                          "mbi): pip install 'oracledp[peers]'")


def _fit(method: str, cfg: Config, eps: float, data: Any, workload: Any,
         rng: np.random.Generator) -> tuple[Callable[[Any], Any], Any, dict[str, Any],
                                            Callable[[int], Any]]:
    """Fit one method: (answers of a workload, guarantee, extra fields, sampler of n codes).

    The records are drawn independently (``sampler="iid"``), as when the results were
    recorded; the library's default sampler became ``"rounded"`` afterwards (CHANGELOG)."""
    from oracledp.synth import independent_marginals, mwem

    if method == "oracle_query":
        from oracledp.synth import OracleQuerySynthesizer

        syn = OracleQuerySynthesizer(
            eps, cfg.delta, k=cfg.k, max_rounds=cfg.max_rounds,
            query_player=cfg.query_player, data_player=cfg.data_player, random_state=rng,
        ).fit(data.codes, data.domain)
        extra = {"rounds": syn.rounds_, "eps0": syn.eps0_, "composition": syn.composition_}
        return syn.answer, syn.guarantee_, extra, partial(syn.sample_codes, sampler="iid")
    if method == "oracle_query_pgm":
        from oracledp.synth import OracleQueryPGM

        # the reproduction keeps the worst-cell table selection, the equal 1-way split and the
        # selecting last round its records were made with (the library's defaults became the
        # L1 score, the split by cells and the last round's cover afterwards; CHANGELOG)
        kw: dict[str, Any] = {"selection": "table", "one_way_split": "equal",
                              "last_round": "select"}
        if cfg.pgm_rounds is not None:
            kw["rounds"] = cfg.pgm_rounds
        pgm = OracleQueryPGM(eps, cfg.delta, k=cfg.k, random_state=rng, **kw).fit(
            data.codes, data.domain)
        extra = {"rounds": pgm.rounds_, "eps0": pgm.eps_selection_, "composition": "zcdp"}
        return pgm.answer, pgm.guarantee_, extra, partial(pgm.sample_codes, sampler="iid")
    if method == "mwem":
        res = mwem(data.codes, data.domain, workload, eps, cfg.mwem_rounds, rng)
        extra = {"rounds": cfg.mwem_rounds, "eps0": res.epsilon_per_step,
                 "composition": "basic"}
        return res.answer, res.guarantee, extra, lambda m: res.sample(m, rng, sampler="iid")
    if method == "independent":
        ind = independent_marginals(data.codes, data.domain, eps, rng)
        return (ind.answer, ind.guarantee,
                {"rounds": None, "eps0": None, "composition": "none"},
                lambda m: ind.sample(m, rng, sampler="iid"))
    if method in PEERS:
        from oracledp.synth import AIMSynthesizer, MSTSynthesizer

        # k sets the workload of the peer's own fit (AIM's: its candidates); the generator
        # is the one of the run, which sample_codes continues, as the functions' draws do
        cls = MSTSynthesizer if method == "mst" else AIMSynthesizer
        peer = cls(eps, cfg.delta, k=cfg.k, backend="mbi", random_state=rng).fit(
            data.codes, data.domain)
        extra = {"rounds": peer.result_.rounds, "eps0": None, "composition": "zcdp"}
        return peer.answer, peer.guarantee_, extra, partial(peer.sample_codes, sampler="iid")
    raise ValueError(f"unknown method {method!r}")


def _measure(method: str, cfg: Config, eps: float, seed: np.random.SeedSequence,
             data: Any = None, workload: Any = None) -> dict[str, Any]:
    """Fit (timed), answer the workload, sample n records (timed); loads Adult if not given."""
    from oracledp.synth import kway_marginal_workload, load_adult_categorical

    if data is None:
        data = load_adult_categorical()
        workload = kway_marginal_workload(data.domain, cfg.k)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    answer_fn, g, extra, sampler = _fit(method, cfg, eps, data, workload, rng)
    seconds = time.perf_counter() - t0
    est = np.asarray(answer_fn(workload), dtype=np.float64)
    t1 = time.perf_counter()
    sample = np.asarray(sampler(data.codes.shape[0]), dtype=np.int64)
    sample_seconds = time.perf_counter() - t1
    return {"est": est, "sample": sample, "guarantee": g, "extra": extra, "seconds": seconds,
            "sample_seconds": sample_seconds}


def _measure_isolated(method: str, cfg: Config, eps: float,
                      seed: np.random.SeedSequence) -> dict[str, Any]:
    """:func:`_measure` in a fresh process (MST and AIM).

    jaxlib crashed (a segmentation fault in libgcc's unwinder) after some 70 mbi fits in
    one process here, while the same fit ran cleanly in a new process; one process per
    peer fit keeps a long run alive.  The times are measured inside the worker, after
    its imports; the draws are the same as in-process (same SeedSequence).
    """
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(_measure, method, cfg, eps, seed).result()


def run_one(cfg: Config, r: int, ie: int, method: str, data: Any = None, workload: Any = None,
            true: Any = None) -> dict[str, Any]:
    """One (run, eps index, method): a JSON-serializable record (loads Adult if not given)."""
    from oracledp.synth import answer, errors, kway_marginal_workload, load_adult_categorical

    if data is None:
        data = load_adult_categorical()
        workload = kway_marginal_workload(data.domain, cfg.k)
    if true is None:
        true = answer(workload, data.codes)
    eps = cfg.epsilons[ie]
    seed = _seed(cfg.seed, r, _METHOD_INDEX[method], ie)
    if method in PEERS:
        m = _measure_isolated(method, cfg, eps, seed)
    else:
        m = _measure(method, cfg, eps, seed, data, workload)
    g, extra = m["guarantee"], m["extra"]
    err = errors(true, m["est"])
    serr = errors(true, answer(workload, m["sample"]))
    rec = {"run": r, "eps": eps, "method": method, "k": cfg.k,
           "max_error": err["max"], "mean_error": err["mean"],
           "seconds": m["seconds"], "sample_seconds": m["sample_seconds"],
           "sample_max_error": serr["max"], "sample_mean_error": serr["mean"],
           "guarantee_eps": g.epsilon, "guarantee_delta": g.delta,
           "neighbouring": g.neighbouring, **extra}
    if method == "oracle_query":
        rec["query_player"] = cfg.query_player
        rec["data_player"] = cfg.data_player
    return rec


def run(cfg: Config, out_dir: Path,
        report: Callable[[int, int, str], None] | None = None) -> list[dict[str, Any]]:
    """Every (run, eps, method); writes config.json, runs.jsonl and runs.csv."""
    from oracledp.synth import answer, kway_marginal_workload, load_adult_categorical

    if cfg.peers:
        check_peers_available()
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "config.json").write_text(json.dumps(
        {**asdict(cfg), "environment_start": environment()}, indent=2))
    data = load_adult_categorical()
    workload = kway_marginal_workload(data.domain, cfg.k)
    true = answer(workload, data.codes)
    methods = cfg.methods
    total = cfg.runs * len(cfg.epsilons) * len(methods)
    done = 0
    records: list[dict[str, Any]] = []
    with (out_dir / "runs.jsonl").open("w") as fh:
        for r in range(cfg.runs):
            for ie, eps in enumerate(cfg.epsilons):
                for method in methods:
                    if report is not None:
                        report(done, total, f"run {r + 1}, eps={eps:g}, {method}")
                    rec = run_one(cfg, r, ie, method, data, workload, true)
                    records.append(rec)
                    fh.write(json.dumps(rec) + "\n")
                    fh.flush()
                    done += 1
    if report is not None:
        report(done, total, "done")
    config = json.loads((out_dir / "config.json").read_text())
    config["environment_end"] = environment()
    (out_dir / "config.json").write_text(json.dumps(config, indent=2))
    cols = list(dict.fromkeys(key for rec in records for key in rec))
    with (out_dir / "runs.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows(records)
    return records


def summarize(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean and std (nan for one run) of the errors and times per (method, eps)."""
    rows: list[dict[str, Any]] = []
    for method in ALL_METHODS:
        for eps in sorted({r["eps"] for r in records}):
            rs = [r for r in records if r["method"] == method and r["eps"] == eps]
            if not rs:
                continue
            row: dict[str, Any] = {"method": method, "eps": eps, "runs": len(rs),
                                   "rounds": rs[0]["rounds"]}
            for key in ("max_error", "mean_error", "seconds", "sample_seconds",
                        "sample_max_error", "sample_mean_error"):
                vals = np.array([r[key] for r in rs], dtype=float)
                row[f"{key}_mean"] = float(vals.mean())
                row[f"{key}_std"] = float(vals.std(ddof=1)) if len(vals) > 1 else math.nan
            rows.append(row)
    return rows


def write_figures(records: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    """error_vs_eps.png (max and mean k-way error per method) and summary.json."""
    rows = summarize(records)
    fig = new_figure(figsize=(10, 4.2))
    for j, key in enumerate(("max_error", "mean_error")):
        ax = fig.add_subplot(1, 2, j + 1)
        for i, method in enumerate(ALL_METHODS):
            rs = [r for r in rows if r["method"] == method]
            if not rs:
                continue
            ax.errorbar([r["eps"] for r in rs], [r[f"{key}_mean"] for r in rs],
                        yerr=std_bars(r[f"{key}_std"] for r in rs), marker="o", capsize=3,
                        color=f"C{i}", label=method)
        finish_axes(ax, "ε", key.replace("_", " "),
                    f"Adult, 8 categorical attributes: {key.split('_')[0]} error",
                    xscale="log", yscale="log", legend_size=8)
    path = save_figure(fig, out_dir / "error_vs_eps.png", 110)
    write_summary_json(rows, out_dir)
    return [path]
