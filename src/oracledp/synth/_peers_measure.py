"""MST's and AIM's accesses to the data: marginal counts, Gaussian measurements, selections.

:func:`_measure` releases a marginal count table with Gaussian noise (Bun-Steinke 2016,
Prop. 1.6: ``Delta_2^2 / (2 sigma^2)``-zCDP) and :func:`_exp_mech` selects by the
exponential mechanism (McSherry-Talwar 2007; ``eps^2 / 8``-zCDP by Cesar-Rogers 2021);
both draw through :mod:`oracledp.privacy._noise`.  The sensitivities are in
:mod:`oracledp.synth._peers_accounting`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from oracledp.privacy import _noise as noise
from oracledp.synth._estimation import MarginalMeasurement

__all__: list[str] = []


def _counts(arr: NDArray[np.int64], shape: tuple[int, ...], clique: tuple[int, ...],
            weights: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """The marginal count table of ``clique`` (attribute positions), C order, flattened.

    ``weights``: record counts of the rows (distinct rows); the table of the expanded records.
    """
    sub = tuple(shape[a] for a in clique)
    joint = np.ravel_multi_index(tuple(arr[:, a] for a in clique), sub)
    if weights is not None:
        return np.bincount(joint, weights=weights, minlength=math.prod(sub))
    return np.bincount(joint, minlength=math.prod(sub)).astype(np.float64)


def _measure(arr: NDArray[np.int64], shape: tuple[int, ...], clique: tuple[int, ...],
             sigma: float, rng: np.random.Generator,
             weights: NDArray[np.float64] | None = None) -> MarginalMeasurement:
    """Gaussian mechanism on a marginal count table (Bun-Steinke 2016, Prop. 1.6)."""
    counts = _counts(arr, shape, clique, weights)
    noisy = counts + noise.gaussian(rng, sigma, size=counts.size)
    return MarginalMeasurement(clique, noisy.reshape(tuple(shape[a] for a in clique)), sigma)


def _exp_mech(scores: NDArray[np.float64], eps: float, sensitivity: float,
              rng: np.random.Generator) -> int:
    """Exponential mechanism, P(i) ∝ exp(eps * score_i / (2 sensitivity)), by Gumbel-max."""
    return noise.exponential_mechanism(rng, scores, eps, sensitivity)
