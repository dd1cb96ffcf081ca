"""Noise primitives: every privacy-relevant random draw of oracledp goes through this module.

``grep -rn "noise\\." src/oracledp`` (or a search for these function names) lists every place
a mechanism draws the randomness its privacy proof is about.  Each primitive takes an explicit
:class:`numpy.random.Generator` and makes exactly one call on it, so a mechanism's stream of
draws is the same as if it called numpy itself (the releases recorded in ``docs/results`` are
reproduced bit for bit, ``tests/test_bit_identity.py``).  Draws that only post-process a release
(sampling records from a released distribution, say) do not come here.

The DP facts, for a query of sensitivity ``Delta`` under the mechanism's neighbouring relation:

* :func:`laplace`: adding ``Lap(b)`` with ``b = laplace_scale(Delta, eps) = Delta / eps`` to a
  query of l1 sensitivity ``Delta`` is ``eps``-DP (Dwork-Roth, Theorem 3.6).
* :func:`gaussian`: adding ``N(0, sigma^2)`` per coordinate to a query of l2 sensitivity
  ``Delta`` is ``rho``-zCDP with ``rho = gaussian_rho(Delta, sigma) = Delta^2 / (2 sigma^2)``
  (Bun-Steinke 2016, Prop. 1.6); :func:`gaussian_zcdp_sigma` inverts it.  Mechanisms with
  their own Gaussian calibration (OPDisc's proven multiplier, DP-SGD's Renyi accountant) pass
  the sigma they computed and state their own guarantee.
* :func:`exponential_mechanism`: selecting ``argmax_i eps s_i / (2 Delta) + G_i`` with i.i.d.
  standard Gumbel ``G_i`` samples ``i`` with probability proportional to
  ``exp(eps s_i / (2 Delta))``: ``eps``-DP when each score has sensitivity ``Delta``
  (McSherry-Talwar 2007; Dwork-Roth Thm 3.10; the Gumbel-max identity).
* :func:`exponential`: i.i.d. exponential perturbations (OPSamp's ``sigma``, Neel et al.
  ICML 2020, Algorithm 2; its guarantee is Theorem 11, stated by the learner).
* :func:`bernoulli`: the coins of NoiseReduction's gradual release (Koufogiannis et al.
  2015, as used by Ligett et al. 2017, Algorithm 1): each coordinate keeps its previous noise
  with the stated probability, which makes every level's noise exactly Laplace.
* :func:`poisson_subsample`: each record kept independently with probability ``q`` (the
  sampling whose amplification DP-SGD's accountant assumes).
* :func:`permutation` / :func:`uniform_index`: PRSMA's random partition and its uniform
  choice among the passing parts (FOCS 2019, Algorithm 3).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp.privacy._guarantees import PrivacyGuarantee

__all__ = [
    "bernoulli",
    "exponential",
    "exponential_mechanism",
    "exponential_mechanism_guarantee",
    "gaussian",
    "gaussian_rho",
    "gaussian_zcdp_sigma",
    "laplace",
    "laplace_guarantee",
    "laplace_scale",
    "permutation",
    "poisson_subsample",
    "uniform_index",
]

Size = int | tuple[int, ...] | None


def _positive(value: float, name: str) -> float:
    v = float(value)
    if not v > 0.0 or v == float("inf"):  # also rejects NaN
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


# --- Laplace ---------------------------------------------------------------------------------
def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """``b = Delta / eps``: the Laplace scale making an l1-sensitivity-Delta query eps-DP.

    >>> laplace_scale(2.0, 0.5)
    4.0
    """
    return _positive(sensitivity, "sensitivity") / _positive(epsilon, "epsilon")


def laplace_guarantee(epsilon: float, source: str = "Laplace mechanism (Dwork-Roth, Thm 3.6)",
                      **fields: Any) -> PrivacyGuarantee:
    """The pure ``eps``-DP guarantee of one Laplace release at :func:`laplace_scale`.

    >>> laplace_guarantee(0.5).describe().split(",")[0]
    '0.5-DP (pure)'
    """
    return PrivacyGuarantee.pure(float(epsilon), source=source, **fields)


def laplace(rng: np.random.Generator, scale: float, size: Size = None) -> Any:
    """``Lap(scale)`` noise: one float (``size=None``) or an array of i.i.d. draws.

    >>> round(float(laplace(np.random.default_rng(0), 1.0)), 6)
    0.3201
    """
    return rng.laplace(0.0, scale, size=size)


# --- Gaussian --------------------------------------------------------------------------------
def gaussian_rho(sensitivity: float, sigma: float) -> float:
    """``rho = Delta^2 / (2 sigma^2)``: the zCDP of the Gaussian mechanism (Bun-Steinke, Prop. 1.6).

    >>> gaussian_rho(1.0, 1.0)
    0.5
    """
    return _positive(sensitivity, "sensitivity") ** 2 / (2.0 * _positive(sigma, "sigma") ** 2)


def gaussian_zcdp_sigma(sensitivity: float, rho: float) -> float:
    """``sigma = Delta / sqrt(2 rho)``: the Gaussian noise of a rho-zCDP release.

    >>> gaussian_zcdp_sigma(1.0, 0.5)
    1.0
    """
    return _positive(sensitivity, "sensitivity") / float(np.sqrt(2.0 * _positive(rho, "rho")))


def gaussian(rng: np.random.Generator, sigma: float, size: Size = None) -> Any:
    """``N(0, sigma^2)`` noise, one float or an array of i.i.d. draws.

    >>> round(float(gaussian(np.random.default_rng(0), 2.0)), 6)
    0.25146
    """
    return rng.normal(0.0, sigma, size=size)


# --- exponential mechanism ----------------------------------------------------------------
def exponential_mechanism(rng: np.random.Generator, scores: NDArray[np.float64],
                          epsilon: float, sensitivity: float) -> int:
    """Index ``i`` with probability proportional to ``exp(eps * s_i / (2 Delta))``.

    Gumbel-max: ``argmax_i eps s_i / (2 Delta) + G_i``, one Gumbel draw per score.  The
    caller states ``sensitivity``, the most one record changes any score (the scores' units).

    >>> exponential_mechanism(np.random.default_rng(0), np.array([0.0, 100.0]), 1.0, 1.0)
    1
    """
    return int(np.argmax(epsilon * scores / (2.0 * sensitivity) + rng.gumbel(size=scores.size)))


def exponential_mechanism_guarantee(epsilon: float, source: str = (
        "exponential mechanism (McSherry-Talwar 2007; Dwork-Roth, Thm 3.10)"),
        **fields: Any) -> PrivacyGuarantee:
    """The pure ``eps``-DP guarantee of one :func:`exponential_mechanism` selection."""
    return PrivacyGuarantee.pure(float(epsilon), source=source, **fields)


# --- other draws of the papers' mechanisms ----------------------------------------------------
def exponential(rng: np.random.Generator, scale: float, size: Size = None) -> Any:
    """I.i.d. exponential draws with mean ``scale`` (rate ``1/scale``)."""
    return rng.exponential(scale=scale, size=size)


def bernoulli(rng: np.random.Generator, p: float, size: Size = None) -> Any:
    """I.i.d. coins, True with probability ``p`` (NoiseReduction's coupling of noise levels)."""
    return rng.random(size=size) < p


def poisson_subsample(rng: np.random.Generator, n: int, q: float) -> NDArray[np.bool_]:
    """A mask keeping each of ``n`` records independently with probability ``q``."""
    return rng.random(n) < q


def permutation(rng: np.random.Generator, n: int) -> NDArray[np.int64]:
    """A uniformly random permutation of ``range(n)``."""
    return rng.permutation(n)


def uniform_index(rng: np.random.Generator, n: int) -> int:
    """A uniform index in ``range(n)``."""
    return int(rng.integers(n))
