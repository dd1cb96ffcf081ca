"""The estimation problem of :mod:`oracledp.synth`: its measurement type and its step rule.

The Private-PGM estimation problem (McKenna, Sheldon, Miklau 2019, "Graphical-model
based estimation and inference for differential privacy", ICML, problem (2)):
given noisy marginal tables ``y_r`` of the private data over attribute sets ``C_r``
with Gaussian noise of standard deviation ``sigma_r`` (in counts), find a
distribution ``p`` over the full domain minimizing

    L(p) = 1/2 sum_r w_r || M_r p - y_r / n ||_2^2,     w_r = (n / sigma_r)^2,

where ``M_r p`` is the marginal of ``p`` on ``C_r``.  This is post-processing of the
measurements (it never reads the data), so it costs no privacy.  A table counted on public
coarser codes of its attributes (:attr:`MarginalMeasurement.maps`) enters as
``|| P_r M_r p - y_r / n ||^2`` with ``P_r`` the sum of the cells onto the coarse cells
(:func:`project`; its adjoint :func:`expand` in the gradient); the step rule's bound below
still holds, since a sum of cells never increases an l1 norm.

The one estimator is :func:`oracledp.synth._graphical.estimate_model`: entropic mirror
descent on the simplex (the update ``p <- p exp(-eta grad L(p)) / Z``, started from the
uniform distribution), whose iterates stay in the exponential family
``p(x) ∝ exp(sum_r theta_r(x_{C_r}))`` and are held as a graphical model on a junction
tree.  Step sizes (:func:`mirror_descent_step`): Armijo backtracking on the
relative-smoothness inequality ``L(p') <= L(p) + <grad, p' - p> + KL(p' || p) / eta``,
which holds for every ``eta <= 1 / sum_r w_r`` (the Hessian of ``L`` is bounded by
``sum_r w_r`` in the l1 norm and ``KL >= ||.||_1^2 / 2`` by Pinsker), so backtracking
always terminates.  Repeated measurements of one attribute set are first combined by
inverse-variance weighting (:func:`combine_measurements`: the sufficient statistic of
independent Gaussian measurements).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

T = TypeVar("T")

__all__ = ["MarginalMeasurement", "coarse_shape", "combine_measurements", "expand",
           "loss_terms", "margins_within_noise", "mirror_descent_step", "project",
           "project_index", "shrink_interaction"]

#: :func:`margins_within_noise`: standard deviations of the statistic, under pure noise,
#: by which the interaction's estimated energy must stay below its noise's.
WITHIN_NOISE_SDS = 2.0

#: The step size never exceeds ``1 / smooth`` times this (:func:`mirror_descent_step`).
MAX_STEP_GROWTH = 2.0**30


@dataclass(frozen=True)
class MarginalMeasurement:
    """A noisy marginal table: ``values`` = counts over ``axes`` + N(0, sigma^2) noise per cell.

    The one measurement type of :mod:`oracledp.synth` (OracleQueryPGM, MST, AIM); two
    measurements compare equal when they measured the same attributes with the same noise
    scale (the noisy values are not compared).
    """

    axes: tuple[int, ...]
    values: NDArray[np.float64] = field(repr=False, compare=False)
    sigma: float
    #: The public projection the table was counted on: for each axis, None (the attribute's
    #: own codes) or a tuple mapping each of its codes to a coarser code (a cell of the
    #: measured table is a union of the attribute's codes).  None: no axis is coarsened.
    maps: tuple[tuple[int, ...] | None, ...] | None = None

    def __post_init__(self) -> None:
        if tuple(sorted(set(self.axes))) != tuple(self.axes) or not self.axes:
            raise ValueError("axes must be a non-empty increasing tuple of distinct attributes")
        if not (math.isfinite(self.sigma) and self.sigma > 0):
            raise ValueError(f"sigma must be finite and > 0, got {self.sigma!r}")
        if not np.all(np.isfinite(self.values)):
            raise ValueError("measurement values must be finite")
        if self.maps is not None:
            if len(self.maps) != len(self.axes):
                raise ValueError("maps must have one entry per axis")
            if all(m is None for m in self.maps):
                object.__setattr__(self, "maps", None)

    def shape_on(self, shape: Sequence[int]) -> tuple[int, ...]:
        """The measured table's shape over a domain of ``shape``."""
        return coarse_shape(tuple(shape[a] for a in self.axes), self.maps)

    def fits(self, shape: Sequence[int]) -> bool:
        """Whether it is a table over attributes of a domain of ``shape``: its axes in range,
        each map with one code per code of its attribute, its values of the measured shape."""
        if self.axes[-1] >= len(shape):
            return False
        if self.maps is not None and any(m is not None and len(m) != shape[a]
                                         for a, m in zip(self.axes, self.maps, strict=True)):
            return False
        return self.values.shape == self.shape_on(shape)


Maps = tuple[tuple[int, ...] | None, ...] | None


def coarse_shape(shape: Sequence[int], maps: Maps) -> tuple[int, ...]:
    """The shape of a table of ``shape`` summed onto the coarser codes of ``maps``."""
    if maps is None:
        return tuple(shape)
    return tuple(s if m is None else max(m) + 1 for s, m in zip(shape, maps, strict=True))


def project_index(shape: Sequence[int], maps: Maps) -> NDArray[np.intp]:
    """For each cell of a table of ``shape`` (row-major), the index (row-major) of the coarse
    cell it is summed into (:func:`project`)."""
    idx = [np.arange(s) if m is None else np.asarray(m, dtype=np.intp)
           for s, m in zip(shape, maps or (None,) * len(shape), strict=True)]
    grids = np.meshgrid(*idx, indexing="ij")
    return np.ravel_multi_index(tuple(g.ravel() for g in grids),
                                coarse_shape(shape, maps)).astype(np.intp)


def project(table: NDArray[np.float64], maps: Maps,
            index: NDArray[np.intp] | None = None) -> NDArray[np.float64]:
    """A table over its attributes' codes summed onto the coarser codes of ``maps``
    (``index``: :func:`project_index` of its shape, when the caller keeps it)."""
    if maps is None:
        return table
    idx = project_index(table.shape, maps) if index is None else index
    out = coarse_shape(table.shape, maps)
    return np.bincount(idx, weights=table.ravel(), minlength=math.prod(out)).reshape(out)


def expand(table: NDArray[np.float64], maps: Maps,
           index: NDArray[np.intp] | None = None) -> NDArray[np.float64]:
    """The adjoint of :func:`project`: each coarse cell's value on every code it holds."""
    if maps is None:
        return table
    fine = tuple(s if m is None else len(m) for s, m in zip(table.shape, maps, strict=True))
    idx = project_index(fine, maps) if index is None else index
    return table.ravel()[idx].reshape(fine)


def _independence_fit(y: NDArray[np.float64]) -> tuple[NDArray[np.float64], int] | None:
    """The independence fit of a noisy 2-way table's own margins, ``outer(row sums, column
    sums) / total``, and the table's dof ``(r - 1)(c - 1)``; None where there is no
    interaction to judge (not 2-way, a side of one level) or the noisy total is not above 0."""
    if y.ndim != 2 or min(y.shape) < 2:
        return None
    total = float(y.sum())
    if not total > 0.0:
        return None
    return (np.outer(y.sum(axis=1), y.sum(axis=0)) / total,
            (y.shape[0] - 1) * (y.shape[1] - 1))


def margins_within_noise(m: MarginalMeasurement, sds: float = WITHIN_NOISE_SDS
                         ) -> tuple[MarginalMeasurement, ...] | None:
    """A 2-way measurement's two 1-way margins where its interaction is, with confidence,
    below its own noise; else None.  Post-processing: a function of the released noisy
    table and its public sigma only.

    With ``y`` the noisy r x c table, ``e`` the independence fit of ``y``'s own margins
    (``outer(row sums, column sums) / total``) and ``dof = (r - 1)(c - 1)``, the statistic
    is ``R = ||y - e||^2 / sigma^2``: for independent counts with near-even margins about
    chi-square with ``dof`` degrees of freedom (the noise's energy in the interaction,
    ``dof sigma^2``), and ``(R - dof) sigma^2`` estimates the interaction's own energy.
    With skewed margins the noise of ``e`` adds to ``R``, so the rule acts less often: the
    side of doing nothing (on an exactly independent 6 x 30 table with sigma 63 and 12,000
    records: margins in every run with even margins, in about half with one level at 90 %,
    rarely with both margins skewed).  Fitting the table costs about its noise's energy;
    leaving its interaction to the model costs the interaction's energy; so the
    interaction is left out only when, even ``sds`` standard
    deviations of ``R`` (``sqrt(2 dof)``) above its value, the estimated energy is at most
    the noise's: ``R + sds sqrt(2 dof) < 2 dof``.  That needs many cells (never for dof
    1 or 2 at ``sds = 2``; the statistic of a small table is too unsure to act on) and
    holds for a noisy table of a large, nearly independent pair (a 6 x 30 table at
    sigma 63 over 12,000 records: R about 145 against a bound of 256).  Returned then:
    the row sums as a 1-way table of the first attribute with sigma ``sigma sqrt(c)`` and
    the column sums of the second with ``sigma sqrt(r)`` (on the same public codes), which
    keep what the table says about each column (the two share the table's noise; the
    estimate treats them as independent).  A table whose noisy total is not above 0 is
    kept as it is; where the total is small against the noise the statistic is not
    chi-square and the rule may act either way, on a table that is noise in either case.

    >>> rng = np.random.default_rng(0)
    >>> flat = np.outer(np.full(6, 2000.0), np.full(30, 1 / 30))  # independent, 12,000
    >>> m = MarginalMeasurement((0, 1), flat + rng.normal(0, 63, flat.shape), 63.0)
    >>> [(x.axes, round(x.sigma, 1)) for x in margins_within_noise(m)]
    [((0,), 345.1), ((1,), 154.3)]
    >>> planted = flat.copy()  # rows 0-2 favour columns 0-14, rows 3-5 columns 15-29
    >>> planted[:3, :15] += 60; planted[:3, 15:] -= 60; planted[3:, :15] -= 60
    >>> planted[3:, 15:] += 60
    >>> print(margins_within_noise(
    ...     MarginalMeasurement((0, 1), planted + rng.normal(0, 63, flat.shape), 63.0)))
    None
    """
    y = m.values
    fit = _independence_fit(y)
    if fit is None:
        return None
    e, dof = fit
    rows, cols = y.sum(axis=1), y.sum(axis=0)
    stat = float(((y - e) ** 2).sum()) / m.sigma**2
    if stat + sds * math.sqrt(2.0 * dof) >= 2.0 * dof:
        return None
    maps = m.maps or (None, None)
    return (MarginalMeasurement((m.axes[0],), rows, m.sigma * math.sqrt(y.shape[1]), (maps[0],)),
            MarginalMeasurement((m.axes[1],), cols, m.sigma * math.sqrt(y.shape[0]), (maps[1],)))


def shrink_interaction(m: MarginalMeasurement) -> MarginalMeasurement:
    """A 2-way measurement with its interaction shrunk toward the independence fit of its own
    margins: ``e + c (y - e)``, ``e = outer(row sums, column sums) / total``, ``c = max(0, 1 -
    (dof - 2) sigma^2 / ||y - e||^2)``, ``dof = (r - 1)(c - 1)``.  Post-processing: a function
    of the released noisy table and its public sigma only.

    Modelled on Lindley's positive-part James-Stein estimate (James and Stein 1961; Lindley
    1962): toward a linear subspace of codimension dof (an additive fit's residual space,
    noise ``sigma^2`` per dimension) it has a smaller expected squared error than ``y``
    whenever dof > 2.  The independence fit here is multiplicative, not a linear
    projection: with skewed margins its own noise adds to ``||y - e||^2`` (the expectation
    is above ``dof sigma^2``), so the factor shrinks less than Lindley's; and the tables it
    meets are those :func:`margins_within_noise` kept.  No dominance is proven for it; on
    400 random tables (dof 3-16, 20-10,000 records, sigma 3-30, 4,000 draws each;
    ``docs/results/synth-shrink/random_tables.py``) none lost beyond z = 2.2 (at most 1e-4
    of the raw squared error), and the tests check a weak and a strong interaction.  The
    table's margins are kept (the row and column sums are those of ``y``).  A table of dof
    <= 2, or whose noisy total or interaction is not above 0, is returned as it is.  Where
    :func:`margins_within_noise` replaces a table by its margins (an interaction with
    confidence below its noise), this shrinks the others by the share of their interaction
    the noise explains.

    >>> y = np.array([[60.0, 40, 20], [30, 50, 40], [10, 30, 70]])
    >>> s = shrink_interaction(MarginalMeasurement((0, 1), y, 10.0)).values
    >>> bool(np.allclose(s.sum(axis=0), y.sum(axis=0)) and np.allclose(s.sum(axis=1), y.sum(axis=1)))
    True
    """
    fit = _independence_fit(m.values)
    if fit is None:
        return m
    e, dof = fit
    z = m.values - e
    energy = float((z**2).sum())
    if dof <= 2 or not energy > 0.0:
        return m
    c = max(0.0, 1.0 - (dof - 2) * m.sigma**2 / energy)
    return MarginalMeasurement(m.axes, e + c * z, m.sigma, m.maps)


def combine_measurements(
    measurements: Iterable[MarginalMeasurement],
) -> list[MarginalMeasurement]:
    """One measurement per attribute set: the inverse-variance weighted mean of its repeats."""
    groups: dict[tuple[Any, ...], list[MarginalMeasurement]] = {}
    for m in measurements:
        groups.setdefault((m.axes, m.maps), []).append(m)
    out = []
    for (axes, maps), ms in groups.items():
        prec = np.array([1.0 / m.sigma**2 for m in ms])
        vals = sum(w * m.values for w, m in zip(prec, ms, strict=True)) / prec.sum()
        out.append(MarginalMeasurement(axes, np.asarray(vals, dtype=np.float64),
                                       float(1.0 / math.sqrt(prec.sum())), maps))
    return out


def loss_terms(shape: Sequence[int], measurements: Iterable[MarginalMeasurement], n: int
               ) -> list[MarginalMeasurement]:
    """The terms of ``L(p)`` (module docstring): one measurement per attribute set and
    projection, ``C_r`` its ``axes``, ``y_r`` its values, ``w_r = (n / sigma_r)^2``.

    Repeats are combined (:func:`combine_measurements`); ValueError when ``n < 1``, when there
    is no measurement or when one does not match the domain's ``shape``.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    ms = combine_measurements(measurements)
    if not ms:
        raise ValueError("at least one measurement is needed")
    for m in ms:
        if not m.fits(shape):
            raise ValueError(f"measurement over axes {m.axes} does not match the domain")
    return ms


def mirror_descent_step(eta: float, smooth: float,
                        attempt: Callable[[float], tuple[T, bool] | None]
                        ) -> tuple[float, T | None]:
    """The step rule of every mirror-descent estimator here: ``(eta, accepted candidate)``.

    ``eta`` is the previous step size and ``smooth = sum_r w_r``; ``attempt(eta)`` returns
    the candidate of step ``eta`` and whether it satisfies the relative-smoothness
    inequality, or None when the candidate is not finite (an overflow or underflow).  The
    step first doubles, capped at ``MAX_STEP_GROWTH / smooth`` (finite: tiny weights, as
    with a handful of records, would otherwise accept every step and double the size to
    infinity), then halves until a finite candidate satisfies the inequality or the step is
    ``1 / smooth``, where the inequality holds in exact arithmetic and any finite candidate
    is taken.  It always terminates (at most ``log2(MAX_STEP_GROWTH) + 2`` attempts); the
    candidate is None when even the smallest step is not finite: the caller keeps its
    current iterate and stops.
    """
    eta_min = 1.0 / smooth if smooth > 0.0 else math.inf
    if not (math.isfinite(eta_min) and eta_min > 0.0):
        raise ValueError(f"the estimation's smoothness must be finite and > 0, got {smooth!r}")
    eta_max = min(eta_min * MAX_STEP_GROWTH, 1e300)
    eta = eta * 2.0 if math.isfinite(eta) else eta_max
    eta = min(max(eta, eta_min), eta_max)
    while True:
        got = attempt(eta)
        if got is not None and (got[1] or eta <= eta_min):
            return eta, got[0]
        if eta <= eta_min:
            return eta_min, None
        eta = max(eta / 2.0, eta_min)
