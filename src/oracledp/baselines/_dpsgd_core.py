"""The DP-SGD optimizer: per-example gradients, clipping, the noisy iterations, the step size.

Steps 1-5 of the algorithm of :mod:`oracledp.baselines._dpsgd` (Bassily, Smith, Thakurta
2014; Abadi et al. 2016) for the logistic loss, and the release of the average of the
``T`` iterates.  Internal: no validation and no accounting here (the noise multiplier comes
from :mod:`oracledp.privacy._rdp` through :func:`oracledp.baselines._dpsgd.dpsgd_logistic`).
Both draws of a step, the Poisson batch and the Gaussian noise on the clipped-gradient sum,
go through :mod:`oracledp.privacy._noise`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from oracledp.privacy import _noise as noise

__all__ = ["auto_learning_rate"]


def _per_example_gradients(
    X: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Rows ``-y_i x_i sigmoid(-y_i <w, x_i>)``: gradients of log(1 + exp(-y <w, x>))."""
    s = expit(-y * (X @ w))
    return -(y * s)[:, None] * X


def _clip_rows(G: NDArray[np.float64], clip: float) -> NDArray[np.float64]:
    """Scale every row with norm > clip down to norm clip (others unchanged); clip may be inf."""
    norms = np.linalg.norm(G, axis=1)
    factor = np.divide(clip, norms, out=np.ones_like(norms), where=norms > clip)
    return G * factor[:, None]


def _dpsgd_core(
    X: NDArray[np.float64],
    y: NDArray[np.float64],
    *,
    sigma: float,
    clip: float,
    q: float,
    steps: int,
    lr: float,
    l2: float,
    penalized: NDArray[np.bool_],
    rng: np.random.Generator,
    return_history: bool = False,
    counts: NDArray[np.int64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """DP-SGD iterations; returns (average of w_1..w_T, iterates w_0..w_T or None).

    Internal and unchecked: ``sigma = 0`` or ``clip = inf`` are accepted here (tests isolate
    the knobs that way) and give no privacy.  Per step the Generator is used through
    :mod:`oracledp.privacy._noise`: ``noise.poisson_subsample(rng, n, q)`` for the Poisson
    batch (``rng.binomial(n, q)`` for its size ``k``, then ``rng.choice(n, k, replace=False,
    shuffle=False)`` for its members, sorted), then ``noise.gaussian(rng, noise_std, d)``
    (``rng.normal(0.0, noise_std, d)``, which numpy computes as ``0.0 + noise_std * z`` from
    standard normals ``z``: the floats of ``noise_std * rng.standard_normal(d)``) for the noise.

    A step costs ``O(k d)``, the batch, not ``O(n)``: until the batch was drawn that way
    (``rng.random(n) < q``, n coins per step and ``1/q`` steps per epoch) an epoch cost
    ``O(n^2 / B)`` for an expected batch ``B = q n``.  Both samplers have the same law (proof in
    :func:`oracledp.privacy._noise.poisson_subsample`), the Poisson subsampling the accountant
    assumes, so the guarantee is unchanged; the releases for a given seed are not (another
    stream of draws), see ``tests/test_bit_identity.py``.  The sorted indices list the batch
    rows in the order the mask did, so the gradient sum adds them in the same order.

    ``counts`` (positive integers, one per row; None: one each): row ``i`` stands for
    ``counts[i]`` identical records, and the run is the run on the table of ``n =
    counts.sum()`` records that repeats each row that many times, in order
    (``np.repeat(X, counts, axis=0)``), for the same generator: the SAME draws (the batch
    is ``noise.poisson_subsample(rng, n, q)`` over the ``n`` records, the Poisson
    subsampling of the records, with ``n`` in ``q n``) and the same floats.  Record ``j``
    of the repeated table is row ``searchsorted(cumsum(counts), j, side="right")`` (the
    first row whose running count exceeds ``j``), so the batch's rows, duplicates
    included, are gathered in the order the repeated table lists them and the gradient sum
    adds the same rows in the same order; the repeated table is never built (a step costs
    ``O(k (d + log g))`` for ``g`` rows).  ``tests/baselines/test_dpsgd_counts.py`` checks
    the bit-identity.
    """
    d = X.shape[1]
    ends = None if counts is None else np.cumsum(counts)
    n = X.shape[0] if ends is None else int(ends[-1])
    w = np.zeros(d)
    total = np.zeros(d)
    history = np.empty((steps + 1, d)) if return_history else None
    if history is not None:
        history[0] = w
    noise_std = sigma * clip if sigma > 0 else 0.0
    scale = 1.0 / (q * n)
    pen = penalized.astype(np.float64) * l2
    for t in range(1, steps + 1):
        batch = noise.poisson_subsample(rng, n, q)
        if ends is not None:  # record index -> its row (rows listed in the records' order)
            batch = np.searchsorted(ends, batch, side="right")
        G = _clip_rows(_per_example_gradients(X[batch], y[batch], w), clip)
        # N(0, (sigma C)^2 I) on a sum of rows clipped to norm C (l2 sensitivity C, add/remove)
        noisy_sum = G.sum(axis=0) + noise.gaussian(rng, noise_std, d)
        w = w - lr * (noisy_sum * scale + pen * w)
        total += w
        if history is not None:
            history[t] = w
    return total / steps, history


def auto_learning_rate(clip: float, steps: int, dim: int, sigma: float, batch: float) -> float:
    """The default step size ``R / (G sqrt(T))`` of averaged SGD, from public quantities only.

    ``G = C sqrt(1 + dim sigma^2 / batch^2)`` bounds the root-mean-square norm of the noisy
    averaged gradient (clipped part <= C, noise part ``sigma C sqrt(dim) / (q n)``) and
    ``R = sqrt(dim)`` is a public guess of the norm of the minimiser (the radius OPDisc uses).
    It depends on epsilon only through sigma, never on the data.
    """
    g = clip * math.sqrt(1.0 + dim * sigma**2 / batch**2)
    return math.sqrt(dim) / (g * math.sqrt(steps))
