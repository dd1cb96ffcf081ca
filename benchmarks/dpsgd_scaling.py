"""Time per epoch of DP-SGD against n: the batch sampler linear in the batch against n coins.

For each ``n`` (default 10^4, 10^5, 10^6, 2.5 * 10^6) a synthetic problem with ``--d``
standard-normal features and labels from a fixed logistic model is built once; then one epoch of
the DP-SGD optimizer (``ceil(n / B)`` steps at the default expected batch ``B = 256``, so
``q = B / n``; noise multiplier 1, clip 1) is timed twice in the same process, each time from the
same seed:

* ``new``: the library's sampler (``oracledp.privacy._noise.poisson_subsample``: a
  Binomial(n, q) size, then a uniformly random subset of that size; ``O(B)`` per step);
* ``old``: the sampler it replaced, ``rng.random(n) < q`` (``n`` coins per step, so
  ``O(n^2 / B)`` per epoch), put in its place for the measurement.

Both have the same law, so the epochs do the same work apart from drawing the batches.  The old
sampler is timed on at most ``--old-steps`` steps (default 400) and its epoch time extrapolated
as (time per step) * (steps per epoch) when the epoch is longer; the table says so (``old
epoch s`` is then marked ``~``).  The sampling alone (the batches of one epoch, no gradients)
is timed the same way.  Wall-clock times on this machine; the load is printed with the
environment before and after.

Prints a table and writes ``benchmarks/results/dpsgd_scaling.json`` (``--out`` to change the
directory).  The last line reads ``n=<largest n> new_epoch_s=<x> old_epoch_s=<y> ratio=<y/x>``.

Usage: python benchmarks/dpsgd_scaling.py [--n 10000,100000,1000000,2500000] [--d 20]
       [--batch 256] [--old-steps 400] [--seed 0] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from oracledp._provenance import environment, environment_line
from oracledp.baselines import _dpsgd_core
from oracledp.privacy import _noise as noise

NEW_SAMPLER = noise.poisson_subsample


def old_sampler(rng: np.random.Generator, n: int, q: float) -> np.ndarray:
    """The replaced sampler: n coins, the kept indices in increasing order (as X[mask])."""
    return np.flatnonzero(rng.random(n) < q)


@contextmanager
def sampler(draw: Callable[..., np.ndarray]) -> Iterator[None]:
    """Make the optimizer draw its batches with ``draw`` (it looks it up in the noise module)."""
    noise.poisson_subsample = draw
    try:
        yield
    finally:
        noise.poisson_subsample = NEW_SAMPLER


def problem(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([seed, n])
    X = rng.standard_normal((n, d))
    w = np.linspace(-1.0, 1.0, d)
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ w))), 1.0, -1.0)
    return X, y


def time_steps(X: np.ndarray, y: np.ndarray, q: float, steps: int, seed: int) -> float:
    """Seconds for ``steps`` DP-SGD steps (the optimizer of the library, unchanged)."""
    d = X.shape[1]
    t0 = time.perf_counter()
    _dpsgd_core._dpsgd_core(X, y, sigma=1.0, clip=1.0, q=q, steps=steps, lr=0.1, l2=0.0,
                            penalized=np.ones(d, dtype=bool), rng=np.random.default_rng(seed))
    return time.perf_counter() - t0


def time_sampling(draw: Callable[..., np.ndarray], n: int, q: float, steps: int,
                  seed: int) -> float:
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    for _ in range(steps):
        draw(rng, n, q)
    return time.perf_counter() - t0


def measure(n: int, args: argparse.Namespace) -> dict[str, Any]:
    X, y = problem(n, args.d, args.seed)
    q = args.batch / n
    epoch = math.ceil(n / args.batch)
    old_steps = min(epoch, args.old_steps)
    scale = epoch / old_steps
    new_epoch = time_steps(X, y, q, epoch, args.seed)
    with sampler(old_sampler):
        old_epoch = time_steps(X, y, q, old_steps, args.seed) * scale
    new_draw = time_sampling(NEW_SAMPLER, n, q, epoch, args.seed)
    old_draw = time_sampling(old_sampler, n, q, old_steps, args.seed) * scale
    return {"n": n, "d": args.d, "batch": args.batch, "q": q, "steps_per_epoch": epoch,
            "old_steps_timed": old_steps, "old_extrapolated": old_steps < epoch,
            "new_epoch_s": new_epoch, "old_epoch_s": old_epoch,
            "epoch_ratio": old_epoch / new_epoch,
            "new_sampling_s": new_draw, "old_sampling_s": old_draw,
            "sampling_ratio": old_draw / new_draw}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="10000,100000,1000000,2500000")
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--old-steps", type=int, default=400,
                    help="steps of the old sampler timed per n (extrapolated to an epoch)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = ap.parse_args()
    env_start = environment()
    print(environment_line(env_start), flush=True)
    print(f"one epoch = ceil(n / {args.batch}) steps, d = {args.d}; '~' = old epoch "
          f"extrapolated from {args.old_steps} steps", flush=True)
    head = (f"{'n':>10} {'steps':>6} {'new epoch s':>12} {'old epoch s':>12} {'ratio':>8} "
            f"{'new draw s':>11} {'old draw s':>11} {'ratio':>8}")
    print(head, flush=True)
    rows = []
    for n in (int(float(v)) for v in args.n.split(",") if v):
        r = measure(n, args)
        rows.append(r)
        mark = "~" if r["old_extrapolated"] else " "
        print(f"{n:>10,} {r['steps_per_epoch']:>6} {r['new_epoch_s']:>12.3f} "
              f"{mark}{r['old_epoch_s']:>11.3f} {r['epoch_ratio']:>8.1f} "
              f"{r['new_sampling_s']:>11.4f} {mark}{r['old_sampling_s']:>10.3f} "
              f"{r['sampling_ratio']:>8.1f}", flush=True)
    env_end = environment()
    print(environment_line(env_end))
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "dpsgd_scaling.json"
    path.write_text(json.dumps({"environment_start": env_start, "environment_end": env_end,
                                "config": {k: str(v) for k, v in vars(args).items()},
                                "rows": rows}, indent=1))
    last = rows[-1]
    print(f"wrote {path}")
    print(f"n={last['n']} new_epoch_s={last['new_epoch_s']:.3f} "
          f"old_epoch_s={last['old_epoch_s']:.3f} ratio={last['epoch_ratio']:.1f}")


if __name__ == "__main__":
    main()
