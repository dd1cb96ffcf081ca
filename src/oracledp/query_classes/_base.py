"""Query / hypothesis classes with separator sets, and weighted optimization oracles.

Conventions (spec ``docs/specs/oracle-query.md`` sections 1-2; Neel, Roth, Wu, FOCS 2019,
Sections II-III):

* A class is a finite family of 0/1 functions ``q`` on a *point space* of
  dimension :attr:`QueryClass.point_dim`.  Records ``x`` of the data universe are
  mapped to points by :meth:`QueryClass.encode` (the identity except for
  conjunctions of literals, which use ``z = (x, 1 - x)``).
* Each hypothesis is one row of an integer parameter array; :meth:`evaluate`
  returns a ``(n_params, n_points)`` uint8 matrix, vectorized.
* A separator set ``U = (u_1..u_m)`` (004 Definition 2) makes the pattern map
  ``q -> (q(u_1), .., q(u_m))`` injective on the class *as parameterized*.  The
  points ``u_i`` need not be valid records (spec section 2): they are only ever
  evaluated inside oracle calls.
* A dual separator is a family ``g_1..g_m2`` of functions on records with
  ``x -> (g_j(x))_j`` injective on the record universe.  Here every dual separator
  is a set of members of the class itself (dictators), returned as parameters.
* A **weighted oracle** (004 Definition 5) returns ``argmin_q sum_r w_r q(z_r)`` for
  real weights of any sign.  It *minimizes*.  A certifiable oracle reports
  ``certified=True`` only when it decided that the returned parameters are the
  **exact** argmin of ``sum_r w_r q(z_r)`` over the class (weights are floats, i.e.
  exact dyadic rationals; the sum is taken in exact arithmetic, over the points as
  given, before identical points are merged), see "Exactness" below; heuristic oracles
  (004 Definition 7) have ``certifiable = False``.
* The negated class ``{1 - q}`` has the same separator (spec section 1); its
  oracle is the base oracle with all weights negated.
* The 0/1-loss class of ``H`` has points ``(z, y)`` (label in the last column,
  ``y`` in {0, 1}) and queries ``l_h(z, y) = h(z) XOR y``; ``{(u, 0) : u in U}``
  separates it with the same m (spec section 2(d)).

Exactness (the class-oracle counterpart of :mod:`oracledp.oracles._base`).  The oracles
search with float objectives; a float objective is within :func:`class_band` of the exact
one (merging identical points and one float dot product, each at most ``n`` roundings of
terms below ``sum |w|``, with a margin of 128).  Points whose float objectives are more
than twice the band above the float minimum are certainly not the argmin; when more
than one candidate lies within it, :func:`exact_class_argmin` compares them exactly (the
difference of two objectives is a sum of weights over the points where the two queries
differ, added as rationals).  Tie rule among exactly equal objectives: enumeration
(:class:`BruteForceClassOracle`) keeps the first enumerated row; the MIP oracle the
lexicographically smallest parameter row among the candidates it found.  With integer
weights (counts: no noise, never a private release by itself) every float objective is
exact (``sum |w| < 2^53``), no band is needed, and the MIP returns an exact minimizer of
its choice.  Parameters that agree on every weighted point have equal objectives by
construction and are not ordered by the MIP; RSPM's points always include the separator
with nonzero (noisy) weights, on which distinct parameters differ (injectivity), so a
private release never meets that case.
"""

from __future__ import annotations

import abc
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp.oracles._base import CERTIFY_ABS_TOL, OracleStatus, certify

__all__ = [
    "CERTIFY_ABS_TOL",
    "ENUMERATE_LIMIT",
    "BruteForceClassOracle",
    "ClassOracleResult",
    "LossClass",
    "LossOracle",
    "NegatedClass",
    "NegatedOracle",
    "QueryClass",
    "WeightedOracle",
    "aggregate_points",
    "check_weighted_points",
    "class_band",
    "exact_class_argmin",
    "finish_result",
    "integral_weights",
]

ENUMERATE_LIMIT = 1 << 20
"""Largest class size :meth:`QueryClass.enumerate` agrees to list."""


def _check_dim(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


class QueryClass(abc.ABC):
    """A finite class of 0/1 queries with a separator set (004 Definition 2).

    Subclasses are frozen dataclasses, so two instances with the same
    parameters compare equal (oracles check they were built for the class they
    are asked to optimize over).
    """

    name: str = "abstract"
    binary_points: bool = True
    """Whether the point space is {0,1}^point_dim (checked by :meth:`check_points`)."""

    @property
    @abc.abstractmethod
    def d(self) -> int:
        """Number of features of a record."""

    @property
    def point_dim(self) -> int:
        """Dimension of the point space the queries are evaluated on."""
        return self.d

    @property
    @abc.abstractmethod
    def param_dim(self) -> int:
        """Length of one parameter row."""

    @property
    @abc.abstractmethod
    def size(self) -> int:
        """Number of parameter rows (hypotheses) in the class."""

    @abc.abstractmethod
    def _enumerate(self) -> NDArray[np.int64]: ...

    @abc.abstractmethod
    def _evaluate(self, params: NDArray[np.int64], Z: NDArray[np.float64]) -> NDArray[np.uint8]: ...

    @abc.abstractmethod
    def separator(self) -> NDArray[np.float64]:
        """The separator points U, shape (m, point_dim)."""

    @abc.abstractmethod
    def dual_separator(self) -> NDArray[np.int64]:
        """Parameters (of this class) of a dual separator g_1..g_m2 on the record universe."""

    @abc.abstractmethod
    def check_params(self, params: ArrayLike) -> NDArray[np.int64]:
        """Validate parameter rows; returns a 2-D int64 array."""

    # ---------------------------------------------------------------- common API
    def enumerate(self, limit: int = ENUMERATE_LIMIT) -> NDArray[np.int64]:
        """Every hypothesis, one parameter row each (refused above ``limit``)."""
        if self.size > limit:
            raise ValueError(
                f"{self.name} with d={self.d} has {self.size} hypotheses, above the "
                f"enumeration limit {limit}; use a MIP oracle instead"
            )
        return self._enumerate()

    def evaluate(self, params: ArrayLike, Z: ArrayLike) -> NDArray[np.uint8]:
        """``out[p, r] = q_{params[p]}(Z[r])``, shape (n_params, n_points), uint8."""
        P = self.check_params(params)
        Zc = self.check_points(Z)
        return self._evaluate(P, Zc)

    def check_points(self, Z: ArrayLike, name: str = "points") -> NDArray[np.float64]:
        """Points of the point space: 2-D, finite, ``point_dim`` columns (binary if required)."""
        try:
            arr = np.asarray(Z, dtype=np.float64)
        except (TypeError, ValueError):  # numpy's message quotes the value: never shown
            raise TypeError(f"{name} must be a numeric 2-D array (an entry is not a number; "
                            "values are not shown: they are data)") from None
        if arr.ndim != 2 or arr.shape[1] != self.point_dim:
            raise ValueError(
                f"{name} must have shape (n, {self.point_dim}) for {self.name}, got {arr.shape}"
            )
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} contains NaN or infinite values")
        if self.binary_points and not np.isin(arr, (0.0, 1.0)).all():
            raise ValueError(f"{name} must be in {{0,1}}^{self.point_dim} for {self.name}")
        return arr

    def record_universe(self) -> NDArray[np.float64]:
        """All records of the data universe ({0,1}^d), for brute-force checks on tiny d."""
        if self.d > 20:
            raise ValueError(f"record universe of size 2^{self.d} is too large to list")
        return np.array(list(itertools.product((0.0, 1.0), repeat=self.d))).reshape(-1, self.d)

    def encode(self, X: ArrayLike) -> NDArray[np.float64]:
        """Records -> points (identity here; records must be in {0,1}^d)."""
        arr = np.asarray(X, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] != self.d:
            raise ValueError(f"records must have shape (n, {self.d}), got {arr.shape}")
        if not np.isin(arr, (0.0, 1.0)).all():
            raise ValueError(f"records must be in {{0,1}}^{self.d} for {self.name}")
        return arr

    def negated(self) -> NegatedClass:
        """The class {1 - q : q in Q} (same parameters, same separator)."""
        return NegatedClass(self)

    def zero_one_loss(self) -> LossClass:
        """The 0/1-loss class {l_h(z, y) = h(z) XOR y} (spec section 2(d))."""
        return LossClass(self)

    def _binary_params(self, params: ArrayLike, width: int) -> NDArray[np.int64]:
        P = _integer_rows(params, width, self.name)
        if not np.isin(P, (0, 1)).all():
            raise ValueError(f"{self.name} parameters must be 0/1 indicator vectors")
        return P


def _integer_rows(params: ArrayLike, width: int, what: str) -> NDArray[np.int64]:
    """Parameter rows of a class: one row or a 2-D array of ``width`` integer columns, as int64.

    ``what`` names the parameters in the messages (``"{what} parameters must ..."``).
    """
    P = np.asarray(params)
    if P.ndim == 1:
        P = P[None, :]
    if P.ndim != 2 or P.shape[1] != width:
        raise ValueError(f"{what} parameters must have shape (k, {width}), got {P.shape}")
    if P.dtype.kind not in "biu" and not (P.dtype.kind == "f" and np.all(P == np.rint(P))):
        raise ValueError(f"{what} parameters must be integers")
    return P.astype(np.int64)


@dataclass(frozen=True)
class _FeatureClass(QueryClass):
    """A class over records of ``n_features`` features: ``d = n_features`` (a positive integer)."""

    n_features: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_features", _check_dim(self.n_features, "d"))

    @property
    def d(self) -> int:
        return self.n_features


@dataclass(frozen=True)
class _DerivedClass(QueryClass):
    """A class defined from ``base`` with the same parameters (negation, 0/1 loss)."""

    base: QueryClass

    @property
    def d(self) -> int:
        return self.base.d

    @property
    def param_dim(self) -> int:
        return self.base.param_dim

    @property
    def size(self) -> int:
        return self.base.size

    def _enumerate(self) -> NDArray[np.int64]:
        return self.base._enumerate()

    def check_params(self, params: ArrayLike) -> NDArray[np.int64]:
        return self.base.check_params(params)

    def reduced_oracle(self, base_oracle: WeightedOracle) -> WeightedOracle:
        """The oracle for this class from an oracle for ``base`` (spec sections 1, 2(d))."""
        raise NotImplementedError


@dataclass(frozen=True)
class NegatedClass(_DerivedClass):
    """``{1 - q : q in base}``; a separator of the base separates it too (spec section 1)."""

    def __post_init__(self) -> None:
        if not isinstance(self.base, QueryClass):
            raise TypeError("base must be a QueryClass")

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"not({self.base.name})"

    @property
    def binary_points(self) -> bool:  # type: ignore[override]
        return self.base.binary_points

    @property
    def point_dim(self) -> int:
        return self.base.point_dim

    def _evaluate(self, params: NDArray[np.int64], Z: NDArray[np.float64]) -> NDArray[np.uint8]:
        return (1 - self.base._evaluate(params, Z)).astype(np.uint8)

    def separator(self) -> NDArray[np.float64]:
        return self.base.separator()

    def dual_separator(self) -> NDArray[np.int64]:
        # 1 - g_j separate records iff the g_j do
        return self.base.dual_separator()

    def check_points(self, Z: ArrayLike, name: str = "points") -> NDArray[np.float64]:
        return self.base.check_points(Z, name)

    def encode(self, X: ArrayLike) -> NDArray[np.float64]:
        return self.base.encode(X)

    def record_universe(self) -> NDArray[np.float64]:
        return self.base.record_universe()

    def negated(self) -> QueryClass:  # type: ignore[override]
        return self.base

    def reduced_oracle(self, base_oracle: WeightedOracle) -> WeightedOracle:
        return NegatedOracle(base_oracle)


@dataclass(frozen=True)
class LossClass(_DerivedClass):
    """0/1-loss queries ``l_h(z, y) = h(z) XOR y`` of a hypothesis class (spec section 2(d)).

    Points are ``(z, y)`` with the label ``y in {0, 1}`` in the last column.  The
    separator is ``{(u, 0) : u in U}`` (same m): ``l_h(u, 0) = h(u)``.
    """

    def __post_init__(self) -> None:
        if not isinstance(self.base, QueryClass) or isinstance(self.base, LossClass):
            raise TypeError("base must be a hypothesis QueryClass (not already a LossClass)")

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"loss({self.base.name})"

    @property
    def point_dim(self) -> int:
        return self.base.point_dim + 1

    def check_points(self, Z: ArrayLike, name: str = "points") -> NDArray[np.float64]:
        arr = np.asarray(Z, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] != self.point_dim:
            raise ValueError(
                f"{name} must have shape (n, {self.point_dim}) for {self.name} "
                f"(point, then label in {{0,1}}), got {arr.shape}"
            )
        if not np.isin(arr[:, -1], (0.0, 1.0)).all():
            raise ValueError(f"{name}: labels (last column) must be 0 or 1")
        self.base.check_points(arr[:, :-1], name)
        return arr

    def _evaluate(self, params: NDArray[np.int64], Z: NDArray[np.float64]) -> NDArray[np.uint8]:
        h = self.base._evaluate(params, Z[:, :-1])
        return (h ^ Z[:, -1].astype(np.uint8)[None, :]).astype(np.uint8)

    def separator(self) -> NDArray[np.float64]:
        U = self.base.separator()
        return np.hstack([U, np.zeros((U.shape[0], 1))])

    def dual_separator(self) -> NDArray[np.int64]:
        raise NotImplementedError(
            "a dual separator of a 0/1-loss class is not defined here (spec section 2 gives "
            "dual separators for hypothesis classes only)"
        )

    def encode(self, X: ArrayLike, y: ArrayLike | None = None) -> NDArray[np.float64]:  # type: ignore[override]
        """Labelled records -> loss points ``(encode(x), y)``; labels must be 0/1 (not mapped)."""
        if y is None:
            raise ValueError("a 0/1-loss class encodes labelled records: pass y (0/1 labels)")
        Z = self.base.encode(X)
        yy = np.asarray(y)
        if yy.ndim != 1 or yy.shape[0] != Z.shape[0]:
            raise ValueError(f"y must be 1-D with {Z.shape[0]} labels, got shape {yy.shape}")
        if yy.dtype.kind not in "biuf" or not np.isin(yy, (0, 1)).all():
            raise ValueError("y must contain only 0 and 1 (labels are not mapped silently)")
        return np.hstack([Z, yy.astype(np.float64)[:, None]])

    def negated(self) -> NegatedClass:
        return NegatedClass(self)

    def zero_one_loss(self) -> LossClass:
        raise TypeError("already a 0/1-loss class")

    def reduced_oracle(self, base_oracle: WeightedOracle) -> WeightedOracle:
        return LossOracle(base_oracle)


# ------------------------------------------------------------------- oracles
@dataclass(frozen=True)
class ClassOracleResult:
    """A weighted-oracle answer: ``params`` minimizes ``sum_r w_r q(z_r)`` if ``certified``.

    ``objective`` is recomputed exactly with :meth:`QueryClass.evaluate` at the
    returned parameters (not the solver's value); ``bound`` is a lower bound on the
    minimum (float, for information; ``-inf`` if none); ``certified`` means an optimal
    status and an exact decision that ``params`` is the argmin (module docstring).
    """

    params: NDArray[np.int64] | None
    objective: float
    bound: float
    certified: bool
    status: OracleStatus
    wall_time: float
    solver: str
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def gap(self) -> float:
        return float(self.objective - self.bound)


@runtime_checkable
class WeightedOracle(Protocol):
    """Minimizes ``sum_r w_r q(z_r)`` over ``query_class`` (004 Definition 5)."""

    name: str
    certifiable: bool
    query_class: QueryClass

    def solve(self, points: ArrayLike, weights: ArrayLike) -> ClassOracleResult: ...


def check_weighted_points(
    cls: QueryClass, points: ArrayLike, weights: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Validate (points, weights): matching length, finite real weights."""
    Z = cls.check_points(points)
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != Z.shape[0]:
        raise ValueError(f"weights must be 1-D with {Z.shape[0]} entries, got shape {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("weights must be finite (no NaN or infinity)")
    return Z, w


def aggregate_points(
    Z: NDArray[np.float64], w: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Merge identical points (summing weights) and drop zero total weights."""
    if Z.shape[0] == 0:
        return Z, w
    U, inv = np.unique(Z, axis=0, return_inverse=True)
    ws = np.bincount(inv.ravel(), weights=w, minlength=U.shape[0])
    keep = ws != 0.0
    return U[keep], ws[keep]


_U = 2.0**-53  # unit roundoff of float64


def integral_weights(w: NDArray[np.float64]) -> bool:
    """Whether every weight is an integer and every partial sum is exact in float64."""
    return bool(np.all(w == np.rint(w))) and float(np.abs(w).sum()) < 2.0**52


def class_band(n_terms: int, w: NDArray[np.float64]) -> float:
    """A bound (margin 128) on the error of a float objective ``sum_r w_r q_r`` computed
    after merging identical points: at most ``n_terms`` roundings, each below ``sum |w|``.
    Zero for integer weights (every float value is exact)."""
    if integral_weights(w):
        return 0.0
    return 128.0 * (n_terms + 2) * _U * float(np.abs(w).sum())


def exact_class_argmin(cls: QueryClass, Z: NDArray[np.float64], w: NDArray[np.float64],
                       P: NDArray[np.int64]) -> int:
    """Index into ``P`` of the exact minimizer of ``sum_r w_r q_P(z_r)``; exact ties go to
    the earliest row.  Each comparison adds, as rationals, the weights of the points on
    which the two queries differ (floats are exact dyadic rationals)."""
    if Z.shape[0] == 0 or len(P) <= 1:
        return 0
    Q = cls._evaluate(P, Z).astype(np.int8)
    best = 0
    for i in range(1, len(P)):
        diff = Q[i] - Q[best]
        nz = np.flatnonzero(diff)
        total = sum((Fraction(float(w[r])) * int(diff[r]) for r in nz), Fraction(0))
        if total < 0:
            best = i
    return best


def finish_result(
    cls: QueryClass,
    Z: NDArray[np.float64],
    w: NDArray[np.float64],
    params: NDArray[np.integer] | None,
    bound: float,
    status: OracleStatus,
    wall_time: float,
    solver: str,
    *,
    exact: bool | None = None,
    **info: Any,
) -> ClassOracleResult:
    """Recompute the objective of ``params`` from the points and decide certification.

    ``exact``: the oracle decided exactly that ``params`` is the argmin (module
    docstring); :func:`~oracledp.oracles._base.certify` decides from it, the status and
    the reported bound.
    """
    if params is None:
        return ClassOracleResult(None, float("inf"), float(bound), False, status, wall_time,
                                 solver, dict(info))
    P = cls.check_params(np.asarray(np.rint(params), dtype=np.int64))
    obj = float(cls._evaluate(P, Z)[0].astype(np.float64) @ w) if Z.shape[0] else 0.0
    certified, status = certify(status, obj, bound, exact)
    return ClassOracleResult(P[0], obj, float(bound), certified, status, wall_time, solver,
                             dict(info))


class BruteForceClassOracle:
    """Exact weighted oracle by enumeration of the class (tiny d); ties -> first row."""

    name = "brute"
    certifiable = True

    def __init__(self, query_class: QueryClass, *, limit: int = ENUMERATE_LIMIT) -> None:
        if not isinstance(query_class, QueryClass):
            raise TypeError("query_class must be a QueryClass")
        self.query_class = query_class
        self._params = query_class.enumerate(limit)

    def solve(self, points: ArrayLike, weights: ArrayLike) -> ClassOracleResult:
        t0 = time.perf_counter()
        cls = self.query_class
        Z0, w0 = check_weighted_points(cls, points, weights)
        Z, w = aggregate_points(Z0, w0)
        vals = (cls._evaluate(self._params, Z).astype(np.float64) @ w
                if Z.shape[0] else np.zeros(len(self._params)))
        tol = class_band(len(w0) + len(w), w0)
        near = np.flatnonzero(vals <= vals.min() + 2.0 * tol)  # enumeration order
        # integer weights (tol = 0): the float values are exact, ties are exact ties
        i = int(near[0] if tol == 0.0 else near[exact_class_argmin(cls, Z0, w0,
                                                                    self._params[near])])
        return finish_result(cls, Z, w, self._params[i], float(vals[i]), OracleStatus.OPTIMAL,
                             time.perf_counter() - t0, self.name, exact=True,
                             near_ties=len(near))


class _ReducedOracle:
    """Oracle for a class derived from ``base``'s class: ``objective = constant + base's``.

    A subclass maps the weighted points to the base's problem (:meth:`_base_problem`,
    exact: the points as given, weights times +-1, so the base decides exactly) and gives
    the constant the derived objective adds (:meth:`_constant`, on the aggregated points).
    """

    _prefix: ClassVar[str]
    _derived: ClassVar[Callable[[QueryClass], QueryClass]]

    def __init__(self, base: WeightedOracle) -> None:
        self.base = base
        self.name = f"{self._prefix}({base.name})"
        self.certifiable = bool(base.certifiable)
        self.query_class = self._derived(base.query_class)

    def _base_problem(self, Z0: NDArray[np.float64], w0: NDArray[np.float64]
                      ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        raise NotImplementedError

    def _constant(self, Z: NDArray[np.float64], w: NDArray[np.float64]) -> float:
        raise NotImplementedError

    def solve(self, points: ArrayLike, weights: ArrayLike) -> ClassOracleResult:
        t0 = time.perf_counter()
        cls = self.query_class
        Z0, w0 = check_weighted_points(cls, points, weights)
        r = self.base.solve(*self._base_problem(Z0, w0))
        Z, w = aggregate_points(Z0, w0)
        return finish_result(cls, Z, w, r.params, self._constant(Z, w) + r.bound, r.status,
                             time.perf_counter() - t0, self.name, exact=r.certified,
                             base=r.solver)


class NegatedOracle(_ReducedOracle):
    """Oracle for ``{1 - q}`` from one for ``Q``: ``sum w (1-q) = sum w + sum (-w) q`` (spec section 1)."""

    _prefix = "negated"
    _derived = NegatedClass

    def _base_problem(self, Z0: NDArray[np.float64], w0: NDArray[np.float64]
                      ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return Z0, -w0

    def _constant(self, Z: NDArray[np.float64], w: NDArray[np.float64]) -> float:
        return float(w.sum())


class LossOracle(_ReducedOracle):
    """Oracle for the 0/1-loss class from one for ``H``.

    ``sum_r w_r (h(z_r) XOR y_r) = sum_{y_r=1} w_r + sum_r w_r (1 - 2 y_r) h(z_r)``.
    """

    _prefix = "loss"
    _derived = LossClass

    def _base_problem(self, Z0: NDArray[np.float64], w0: NDArray[np.float64]
                      ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return Z0[:, :-1], w0 * (1.0 - 2.0 * Z0[:, -1])

    def _constant(self, Z: NDArray[np.float64], w: NDArray[np.float64]) -> float:
        return float(w[Z[:, -1] == 1.0].sum())
