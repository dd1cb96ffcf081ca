"""NoiseReduction: gradual release of a vector with the Laplace mechanism.

Algorithm 1 of Ligett, Neel, Roth, Waggoner and Wu, "Accuracy First: Selecting
a Differential Privacy Level for Accuracy-Constrained ERM" (2017), which states
the noise-reduction Markov chain of Koufogiannis, Han and Pappas (2015):

    v_T := v + Lap(Delta / eps_T)
    for t = T-1, ..., 1:
        with probability (eps_t / eps_{t+1})^2:  v_t := v_{t+1}
        else:                                    v_t := v_{t+1} + Lap(Delta / eps_t)

Privacy guarantee (Theorem 2.7 of Ligett et al., from Koufogiannis et al.): if
``v = f(D)`` has l1 sensitivity ``Delta`` (replace-one neighbours), releasing
any prefix ``(v_1, ..., v_t)`` is ``eps_t``-differentially private (pure).
The whole output is ``eps_T``-DP.  The levels are *not* composed: the more
private levels come for free.

Indexing: the library is 0-based.  ``out[t]`` is the release at level
``eps_list[t]``; the prefix ``out[:t + 1]`` is ``eps_list[t]``-DP.

Guarantees hold under idealized numerics (see :mod:`oracledp.privacy._guarantees`).
"""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._validation import (
    RandomLike,
    as_real_float64,
    check_positive,
    check_real_vector,
    check_rng,
)
from oracledp.privacy import _noise as noise
from oracledp.privacy._guarantees import PrivacyGuarantee

NR_SOURCE = (
    "Ligett et al. 2017 (Accuracy First), Algorithm 1 and Theorem 2.7 "
    "(noise reduction of Koufogiannis et al. 2015)"
)

__all__ = [
    "NR_SOURCE",
    "noise_reduction",
    "noise_reduction_guarantee",
    "nr_keep_probabilities",
    "nr_scales",
]


def _check_eps_list(eps_list: object) -> NDArray[np.float64]:
    """A non-empty 1-D list of finite levels 0 < eps_1 < ... < eps_T."""
    if isinstance(eps_list, (str, bytes)) or isinstance(eps_list, numbers.Number):
        raise ValueError(
            f"eps_list must be a 1-D sequence of privacy levels, got {type(eps_list).__name__}"
        )
    eps = check_real_vector(eps_list, "eps_list", nonempty=True)
    if (eps <= 0).any():
        raise ValueError(f"every level in eps_list must be > 0, got {eps.tolist()}")
    if (np.diff(eps) <= 0).any():
        i = int(np.flatnonzero(np.diff(eps) <= 0)[0])
        raise ValueError(
            "eps_list must be strictly increasing (most private first: eps_1 < ... < eps_T); "
            f"eps_list[{i}] = {eps[i]!r} >= eps_list[{i + 1}] = {eps[i + 1]!r}"
        )
    return eps


def _check_finite_values(v: ArrayLike, name: str = "v") -> NDArray[np.float64]:
    if hasattr(v, "toarray") or hasattr(v, "tocsr"):
        raise TypeError(f"{name}: sparse matrices are not supported; pass a dense array")
    arr = as_real_float64(v, name, must_be="a real scalar or array",
                          dtype_must="be a real scalar or array")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def nr_keep_probabilities(eps_list: ArrayLike) -> NDArray[np.float64]:
    """``p[t] = (eps_list[t] / eps_list[t + 1])**2`` for t = 0..T-2 (Algorithm 1, "with probability").

    The probability that level t repeats level t + 1 exactly.
    """
    eps = _check_eps_list(eps_list)
    return (eps[:-1] / eps[1:]) ** 2


def nr_scales(sensitivity: float, eps_list: ArrayLike) -> NDArray[np.float64]:
    """``Delta / eps_list[t]``: the Laplace scale of level t's marginal noise (and of its fresh step)."""
    delta = check_positive(sensitivity, "sensitivity")
    eps = _check_eps_list(eps_list)
    return delta / eps


def noise_reduction(
    v: ArrayLike,
    sensitivity: float,
    eps_list: ArrayLike,
    random_state: RandomLike = None,
) -> NDArray[np.float64]:
    """Releases of ``v`` at the increasing privacy levels ``eps_list`` (Algorithm 1, NoiseReduction).

    Parameters
    ----------
    v:
        The private value ``f(D)``: a finite real scalar or array of any shape.
    sensitivity:
        ``Delta > 0``, the l1 sensitivity of ``f`` over replace-one neighbours
        (over the whole array ``v``, not per entry).
    eps_list:
        Strictly increasing finite levels ``eps_1 < ... < eps_T`` (most private first).
    random_state:
        Seed or numpy Generator (the only source of randomness).  The old spelling

    Returns
    -------
    out : ndarray of shape ``(T, *np.shape(v))``
        ``out[t]`` is the release at level ``eps_list[t]``.  Its marginal law is
        exactly ``v + Lap(Delta / eps_list[t])`` entrywise (i.i.d. across entries).

    Privacy
    -------
    Releasing the prefix ``out[:t + 1]`` is ``eps_list[t]``-DP (pure), Ligett et
    al. 2017, Theorem 2.7: the chain is generated from the least private level
    downward, so the prefix is a post-processing of ``out[t]`` alone, a Laplace
    mechanism at ``eps_list[t]``.  Releasing a level *without* the levels below
    it costs the same.  Releasing ``out[t + 1]`` or later raises the loss to that
    level's epsilon.  See :func:`noise_reduction_guarantee`.

    All inputs are validated before any noise is drawn.

    Examples
    --------
    >>> from oracledp.mechanisms import noise_reduction, noise_reduction_guarantee
    >>> out = noise_reduction([3.0, 1.0], 1.0, [0.5, 1.0, 2.0], random_state=0)
    >>> out.shape  # one release per level, most private first
    (3, 2)
    >>> g = noise_reduction_guarantee([0.5, 1.0, 2.0], 1)  # of releasing out[:2]
    >>> str(g.kind), g.epsilon, g.delta
    ('pure', 1.0, 0.0)
    """
    arr = _check_finite_values(v, "v")
    delta = check_positive(sensitivity, "sensitivity")
    eps = _check_eps_list(eps_list)
    gen = check_rng(random_state)

    T = eps.size
    shape = arr.shape
    scales = delta / eps  # Lap(Delta / eps_t), Algorithm 1
    keep_prob = (eps[:-1] / eps[1:]) ** 2  # (eps_t / eps_{t+1})^2, Algorithm 1

    out = np.empty((T, *shape), dtype=np.float64)
    # Algorithm 1, line 1: v_T := v + Lap(Delta / eps_T).
    # Sensitivity: v has l1 sensitivity Delta, so Lap(Delta / eps_T) is eps_T-DP (Theorem 2.7).
    out[T - 1] = arr + noise.laplace(gen, scales[T - 1], size=shape)
    # Algorithm 1, loop t = T-1, ..., 1 (0-based: t = T-2, ..., 0).  Every entry flips
    # its own coin (as in the authors' code).  Marginal law, by characteristic functions
    # phi_b(w) = 1 / (1 + b^2 w^2) of Lap(b): with b = Delta/eps_t > b' = Delta/eps_{t+1}
    # and p = (b'/b)^2 = (eps_t/eps_{t+1})^2, the step "0 w.p. p, else Lap(b)" has
    # p + (1 - p) phi_b = (1 + b'^2 w^2) / (1 + b^2 w^2), so phi_b' * (p + (1 - p) phi_b) =
    # phi_b: v_t - v ~ Lap(Delta / eps_t) exactly (Koufogiannis et al. 2015).
    for t in range(T - 2, -1, -1):
        # The keep coin couples the levels of the Markov chain (noise.bernoulli).
        keep = noise.bernoulli(gen, keep_prob[t], size=shape)
        step = noise.laplace(gen, scales[t], size=shape)
        out[t] = np.where(keep, out[t + 1], out[t + 1] + step)
    return out


def noise_reduction_guarantee(eps_list: ArrayLike, t: int) -> PrivacyGuarantee:
    """The guarantee of releasing the prefix ``out[:t + 1]`` of :func:`noise_reduction`.

    Pure ``eps_list[t]``-DP for replace-one neighbours, provided ``v`` has l1
    sensitivity at most the ``sensitivity`` passed to :func:`noise_reduction`
    (Ligett et al. 2017, Theorem 2.7).  ``t`` is 0-based.
    """
    eps = _check_eps_list(eps_list)
    if isinstance(t, bool) or not isinstance(t, numbers.Integral):
        raise TypeError(f"t must be an integer level index, got {type(t).__name__}")
    ti = int(t)
    if not 0 <= ti < eps.size:
        raise ValueError(f"t must be in 0..{eps.size - 1} (0-based level index), got {ti}")
    return PrivacyGuarantee.pure(
        float(eps[ti]),
        source=NR_SOURCE,
        notes=(
            f"prefix out[0..{ti}] of NoiseReduction; holds if the released value has l1 "
            "sensitivity <= the sensitivity passed to noise_reduction"
        ),
    )
