"""Noise primitives: every privacy-relevant random draw of oracledp goes through this module.

``grep -rn "noise\\." src/oracledp`` (or a search for these function names) lists every place
a mechanism draws the randomness its privacy proof is about.  Each primitive takes an explicit
:class:`numpy.random.Generator` and makes exactly one call on it (two for
:func:`poisson_subsample`: the batch size, then the subset), so a mechanism's stream of
draws is the same as if it called numpy itself (the releases recorded in ``docs/results`` are
reproduced bit for bit, ``tests/test_bit_identity.py``).  Draws that only post-process a release
(sampling records from a released distribution, say) do not come here.

The ``*_rho`` facts are the zCDP accounting of every zCDP mechanism (OracleQueryPGM, MST,
AIM): each computes its ledger entries with them and composes them with
:mod:`oracledp.privacy._ledger`.  Each fact keeps the floating-point expression of the
mechanism that uses it, since a released ``rho`` (and, for AIM, the noise of its last round)
depends on its last bit: ``x**2`` (the power, as MST and OracleQueryPGM compute) and ``x * x``
(the product, as AIM computes) can differ by one ulp.

The DP facts, for a query of sensitivity ``Delta`` under the mechanism's neighbouring relation:

* :func:`laplace`: adding ``Lap(b)`` with ``b = laplace_scale(Delta, eps) = Delta / eps`` to a
  query of l1 sensitivity ``Delta`` is ``eps``-DP (Dwork-Roth, Theorem 3.6).
* :func:`gaussian`: adding ``N(0, sigma^2)`` per coordinate to a query of l2 sensitivity
  ``Delta`` is ``rho``-zCDP with ``rho = gaussian_rho(sigma, sensitivity_sq=Delta^2) =
  Delta^2 / (2 sigma^2)`` (Bun-Steinke 2016, Prop. 1.6); :func:`gaussian_zcdp_sigma` inverts
  it.  :func:`gaussian_multiplier_rho` is the same fact for a noise std of ``s Delta`` (a noise
  multiplier ``s``): ``1 / (2 s^2)``.  Mechanisms with their own Gaussian calibration
  (OPDisc's proven multiplier, DP-SGD's Renyi accountant) pass the sigma they computed and
  state their own guarantee.
* :func:`exponential_mechanism`: selecting ``argmax_i eps s_i / (2 Delta) + G_i`` with i.i.d.
  standard Gumbel ``G_i`` samples ``i`` with probability proportional to
  ``exp(eps s_i / (2 Delta))``: ``eps``-DP when each score has sensitivity ``Delta``
  (McSherry-Talwar 2007; Dwork-Roth Thm 3.10; the Gumbel-max identity), and
  ``eps^2 / 8``-zCDP (:func:`exponential_mechanism_rho`; Cesar-Rogers 2021, Lemma 3.2).
  :func:`select_measure_rho` is the zCDP of a selection followed by a Gaussian measurement
  (one round of AIM).
* :func:`exponential`: i.i.d. exponential perturbations (OPSamp's ``sigma``, Neel et al.
  ICML 2020, Algorithm 2; its guarantee is Theorem 11, stated by the learner).
* :func:`bernoulli`: the coins of NoiseReduction's gradual release (Koufogiannis et al.
  2015, as used by Ligett et al. 2017, Algorithm 1): each coordinate keeps its previous noise
  with the stated probability, which makes every level's noise exactly Laplace.
* :func:`poisson_subsample`: each record kept independently with probability ``q`` (the
  sampling whose amplification DP-SGD's accountant assumes), drawn as a Binomial(n, q) size
  and a uniformly random subset of that size (the same law, in time linear in the batch).
* :func:`permutation` / :func:`uniform_index`: PRSMA's random partition and its uniform
  choice among the passing parts (FOCS 2019, Algorithm 3).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp.privacy._guarantees import PrivacyGuarantee

__all__ = [
    "bernoulli",
    "exponential",
    "exponential_mechanism",
    "exponential_mechanism_guarantee",
    "exponential_mechanism_order",
    "exponential_mechanism_rho",
    "gaussian",
    "gaussian_multiplier_rho",
    "gaussian_rho",
    "gaussian_zcdp_sigma",
    "laplace",
    "laplace_guarantee",
    "laplace_scale",
    "permutation",
    "poisson_subsample",
    "select_measure_rho",
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
def gaussian_rho(sigma: float, *, sensitivity_sq: float = 1.0, releases: int = 1) -> float:
    """``rho = releases Delta^2 / (2 sigma^2)``: the zCDP of ``releases`` Gaussian releases.

    Each adds ``N(0, sigma^2)`` noise to a query whose squared l2 sensitivity is
    ``sensitivity_sq = Delta^2`` (Bun-Steinke 2016, Prop. 1.6; zCDP adds up, Lemma 2.3).  The
    squared sensitivity is passed so that it can be exact: a count table moves by
    ``Delta^2 = 2`` when one record is replaced, and ``2.0 / (2 sigma^2)`` is exactly
    ``1 / sigma^2``, whereas ``math.sqrt(2.0)**2`` is not 2.

    >>> gaussian_rho(1.0)
    0.5
    >>> gaussian_rho(2.0, sensitivity_sq=2.0) == 1.0 / 2.0**2
    True
    """
    s = _positive(sigma, "sigma")
    return releases * _positive(sensitivity_sq, "sensitivity_sq") / (2.0 * s**2)


def gaussian_multiplier_rho(multiplier: float, *, releases: int = 1) -> float:
    """``rho = releases / (2 s^2)``: ``releases`` Gaussian releases at noise multiplier ``s``.

    The Gaussian mechanism with noise std ``s Delta`` for a query of l2 sensitivity ``Delta``
    (Bun-Steinke 2016, Prop. 1.6), computed as ``releases / (2.0 * s * s)`` (AIM's expression).

    >>> gaussian_multiplier_rho(1.0, releases=3)
    1.5
    """
    s = _positive(multiplier, "multiplier")
    return releases / (2.0 * s * s)


def gaussian_zcdp_sigma(rho: float, *, sensitivity_sq: float = 1.0) -> float:
    """``sigma = sqrt(Delta^2 / (2 rho))``: the Gaussian noise of a rho-zCDP release.

    The inverse of :func:`gaussian_rho`.

    >>> gaussian_zcdp_sigma(0.5)
    1.0
    """
    return math.sqrt(_positive(sensitivity_sq, "sensitivity_sq") / (2.0 * _positive(rho, "rho")))


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


def exponential_mechanism_order(rng: np.random.Generator, scores: NDArray[np.float64],
                                epsilon: float, sensitivity: float) -> NDArray[np.intp]:
    """Every index, by decreasing Gumbel-perturbed score ``eps s_i / (2 Delta) + G_i``.

    The draws of :func:`exponential_mechanism`, all kept: the first index of the order that
    lies in a set A fixed before the draw (or decided by public facts about each index, in
    the order's sequence) is distributed as the exponential mechanism over A (Gumbel-max
    restricted to A).  Same draws as :func:`exponential_mechanism` for the same generator.

    >>> exponential_mechanism_order(np.random.default_rng(0), np.array([0.0, 100.0]), 1.0,
    ...                             1.0).tolist()
    [1, 0]
    """
    noisy = epsilon * scores / (2.0 * sensitivity) + rng.gumbel(size=scores.size)
    return np.argsort(-noisy, kind="stable")


def exponential_mechanism_guarantee(epsilon: float, source: str = (
        "exponential mechanism (McSherry-Talwar 2007; Dwork-Roth, Thm 3.10)"),
        **fields: Any) -> PrivacyGuarantee:
    """The pure ``eps``-DP guarantee of one :func:`exponential_mechanism` selection."""
    return PrivacyGuarantee.pure(float(epsilon), source=source, **fields)


def exponential_mechanism_rho(epsilon: float) -> float:
    """``rho = eps^2 / 8``: an ``eps``-DP exponential mechanism is ``rho``-zCDP.

    Cesar-Rogers 2021, Lemma 3.2 (the exponential mechanism has bounded range ``eps``).
    Computed as ``epsilon**2 / 8.0`` (MST's and OracleQueryPGM's expression).

    >>> exponential_mechanism_rho(2.0)
    0.5
    """
    return _positive(epsilon, "epsilon") ** 2 / 8.0


def select_measure_rho(epsilon: float, multiplier: float) -> float:
    """The zCDP of an ``epsilon`` exponential-mechanism selection, then a Gaussian measurement.

    ``eps^2 / 8 + 1 / (2 s^2)`` for noise multiplier ``s`` (:func:`exponential_mechanism_rho`
    plus :func:`gaussian_multiplier_rho`), computed in AIM's product form
    ``epsilon * epsilon / 8.0 + 1.0 / (2.0 * s * s)``.

    >>> select_measure_rho(2.0, 1.0)
    1.0
    """
    e = _positive(epsilon, "epsilon")
    return e * e / 8.0 + gaussian_multiplier_rho(multiplier)


# --- other draws of the papers' mechanisms ----------------------------------------------------
def exponential(rng: np.random.Generator, scale: float, size: Size = None) -> Any:
    """I.i.d. exponential draws with mean ``scale`` (rate ``1/scale``)."""
    return rng.exponential(scale=scale, size=size)


def bernoulli(rng: np.random.Generator, p: float, size: Size = None) -> Any:
    """I.i.d. coins, True with probability ``p`` (NoiseReduction's coupling of noise levels)."""
    return rng.random(size=size) < p


def poisson_subsample(rng: np.random.Generator, n: int, q: float) -> NDArray[np.int64]:
    """A Poisson subsample of ``range(n)``: each index kept independently with probability ``q``.

    Returns the kept indices, sorted increasingly (``X[idx]`` lists the kept rows in the order
    ``X[mask]`` would).  Drawn in two steps whose cost is that of the batch, not of ``n``:

    1. the size ``k = rng.binomial(n, q)``, Binomial(n, q);
    2. a uniformly random ``k``-subset, ``rng.choice(n, k, replace=False, shuffle=False)``,
       then sorted.  numpy (2.x) draws it by Floyd's algorithm (``k`` bounded draws and a hash
       set of about ``1.2 k`` slots) when ``n <= 10000`` or ``k <= n / 20``, and otherwise by
       a partial Fisher-Yates shuffle of ``k`` positions of ``arange(n)``, which costs
       ``O(n) = O(20 k)`` there; so ``O(k log k)`` with the sort, either way.

    Same law as ``n`` independent coins (``rng.random(n) < q``, the sampler until this
    change): for a subset ``S`` of ``range(n)`` with ``|S| = k``,
    ``P(S) = P(size k) * P(S | size k) = C(n, k) q^k (1 - q)^(n - k) * 1 / C(n, k)
    = q^k (1 - q)^(n - k)``, which is the probability that the coins keep exactly ``S``
    (every index of ``S`` kept, every other index dropped).  The two samplers therefore
    release the same distribution of batches, the Poisson subsampling that the Renyi
    accountant of DP-SGD assumes (Mironov, Talwar, Zhang 2019); only the stream of
    generator draws differs, so a seed gives another batch than the coin sampler did.
    ``tests/privacy/test_privacy_core.py`` checks the law exactly on a small ``n``.
    """
    k = int(rng.binomial(n, q))
    idx: NDArray[np.int64] = rng.choice(n, size=k, replace=False, shuffle=False)
    idx.sort()
    return idx


def permutation(rng: np.random.Generator, n: int) -> NDArray[np.int64]:
    """A uniformly random permutation of ``range(n)``."""
    return rng.permutation(n)


def uniform_index(rng: np.random.Generator, n: int) -> int:
    """A uniform index in ``range(n)``."""
    return int(rng.integers(n))
