"""The 0/1-loss halfspace problem solved by the OPDisc oracle.

Objective (Definition 2.2 of Neel et al., ICML 2020, multiplied by n, which
does not change the argmin)::

    F(w; eta) = sum_i 1[y_i != sgn(<x_i, w>)]  -  <eta, pi(w)>,   w in W_tau.

Conventions (exact, documented, tested):

* **sgn(0) = 0.**  The loss is read literally: a point with ``<x_i, w> = 0``
  lies on the hyperplane and is an error for either label (sgn(0) = 0 never
  equals a label in {-1, +1}).  ``w = 0`` therefore misclassifies every point.
  Prediction (``predict``) sends a score of exactly 0 to the negative class,
  as scikit-learn's linear classifiers do, so test accuracy is never lower
  than what the objective counts.
* **No tolerance.**  Features are read as exact rationals: every value must
  equal ``p/q`` with ``q <= max_denominator`` (checked: the float of p/q must
  be the value itself), so ``Q * <x, k>`` is an integer for the common
  denominator ``Q`` and every sign is decided in integer arithmetic.  A
  correct positive needs ``Q <x, k> >= 1``, a correct negative
  ``Q <x, k> <= -1``: the margin is exactly ``1/Q`` in feature units, which is
  the smallest non-zero score the data can produce, so it changes no argmin.
  Adult's numeric columns (integer / column max) give Q = 7,920.
* **Aggregation.**  Identical feature rows are merged into one group with
  counts of positive and negative labels; the objective is unchanged.
* **Public schema.**  With a :class:`FeatureSchema` (which columns are 0/1,
  and for the others a public grid ``1/q_j`` and bound ``|x_j| <= b_j``) the
  common denominator ``Q = lcm(q_j)``, the binary columns (which decide the
  oracle's formulation) and the exact-arithmetic limit all follow from the
  schema, never from the data; the data are only *checked* against it, and a
  violation is refused naming the column and the rule, never a value.  Without
  a schema, :meth:`HalfspaceProblem.from_data` reads the denominators and the
  0/1 columns from the data: a convenience for tests and research that makes
  refusals and the choice of formulation data-dependent.  The estimators always
  build a public schema.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, reduce

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._errors import BoundsViolation
from oracledp._validation import check_finite_matrix, check_signed_labels
from oracledp.oracles._row_blocks import RowBlocks
from oracledp.oracles._space import IntegerBall

_MAX_EXACT = 2**52  # integer magnitudes up to here are exact in float64 solvers
_BLOCK_ROWS = 1 << 16  # rows of N widened to int64 at a time


def rationalize_columns(
    X: NDArray[np.float64], max_denominator: int = 10**6
) -> tuple[NDArray[np.int64], int]:
    """Write X = N / Q exactly, with N integer and Q the least common denominator.

    Raises ValueError naming the column when a value is not a rational with a
    denominator <= max_denominator (round such features to a grid first).
    """
    denominators: list[int] = []
    col_fracs: list[tuple[NDArray[np.float64], list[Fraction]]] = []
    for j in range(X.shape[1]):
        uniq = np.unique(X[:, j])
        fracs = [Fraction(float(v)).limit_denominator(max_denominator) for v in uniq]
        for v, f in zip(uniq, fracs, strict=True):
            if float(f) != float(v):
                raise ValueError(
                    f"feature column {j} holds a value that is not p/q with q <= {max_denominator}; "
                    "the exact 0/1 oracle needs rational features: round them to a grid "
                    "(for example np.round(X, 4)) or raise max_denominator"
                )
        col_fracs.append((uniq, fracs))
        denominators.extend(f.denominator for f in fracs)
    Q = reduce(math.lcm, set(denominators), 1)
    N = np.empty(X.shape, dtype=np.int64)
    for j, (uniq, fracs) in enumerate(col_fracs):
        nums = np.array([f.numerator * (Q // f.denominator) for f in fracs], dtype=object)
        if np.abs(nums).max(initial=0) > _MAX_EXACT:
            raise ValueError(
                f"the common denominator of the features makes column {j} too large for exact "
                "arithmetic; round the features to a coarser grid"
            )
        idx = np.searchsorted(uniq, X[:, j])
        N[:, j] = nums.astype(np.int64)[idx]
    return N, Q


def gcd_reduced_rows(
    N: NDArray[np.int64], n_pos: NDArray[np.int64], n_neg: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Exact reduction of the distinct rows, for the oracles' bounds and models.

    All-zero rows are dropped (their score is 0 for every k: always misclassified, so
    the caller counts them separately).  Every other row is divided by the gcd of its
    entries (``S_g`` and ``S_g / gcd`` have the same sign for every k) and rows that
    become equal (positive multiples always agree in sign) are merged, adding counts.
    """
    keep = (N != 0).any(axis=1)
    N, n_pos, n_neg = N[keep], n_pos[keep], n_neg[keep]
    if len(N):
        N = N // np.gcd.reduce(np.abs(N), axis=1)[:, None]
        N, inverse = np.unique(N, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        n_pos = np.bincount(inverse, weights=n_pos, minlength=len(N)).astype(np.int64)
        n_neg = np.bincount(inverse, weights=n_neg, minlength=len(N)).astype(np.int64)
    return N, n_pos, n_neg


@dataclass(frozen=True)
class FeatureSchema:
    """Public description of the feature columns of a 0/1-loss halfspace problem.

    Column ``j`` is either binary (every value exactly 0 or 1) or numeric: a
    multiple of ``1/denominators[j]`` with ``|x_j| <= bounds[j]``.  Both are
    declared by the caller (or a bundled dataset), never read from the data, so
    the common denominator ``Q``, the 0/1 columns (which choose the oracle's
    formulation) and the exact-arithmetic limit are public.  :meth:`encode`
    checks data against the schema and refuses a violation with a message that
    names the column and the rule, never a value, a row or a count.
    """

    binary: tuple[bool, ...]
    denominators: tuple[int, ...]
    bounds: tuple[float, ...]
    names: tuple[str, ...] | None = None
    #: False when the bounds are only the exact-arithmetic limit, not a real declaration
    #: (e.g. the estimators' ``feature_grid`` without a schema); decisions that need a
    #: meaningful bound then cannot be made from the schema.
    bounds_declared: bool = True

    def __post_init__(self) -> None:
        d = len(self.binary)
        object.__setattr__(self, "binary", tuple(bool(b) for b in self.binary))
        if d == 0:
            raise ValueError("a feature schema needs at least one column")
        if len(self.denominators) != d or len(self.bounds) != d:
            raise ValueError("binary, denominators and bounds must have one entry per column")
        if self.names is not None and len(self.names) != d:
            raise ValueError("names must have one entry per column")
        dens = []
        for j, q in enumerate(self.denominators):
            if isinstance(q, bool) or int(q) != q or not 1 <= int(q) <= 10**12:
                raise ValueError(f"{self.column_name(j)}: the grid denominator must be an integer "
                                 f"in [1, 1e12], got {q!r}")
            dens.append(1 if self.binary[j] else int(q))
        object.__setattr__(self, "denominators", tuple(dens))
        bnds = []
        for j, b in enumerate(self.bounds):
            b = 1.0 if self.binary[j] else float(b)
            if not (math.isfinite(b) and b > 0):
                raise ValueError(f"{self.column_name(j)}: the bound must be a finite number > 0, "
                                 f"got {b!r}")
            bnds.append(b)
        object.__setattr__(self, "bounds", tuple(bnds))

    @classmethod
    def grid(cls, d: int, step: Fraction | float, bound: float,
             binary: ArrayLike | None = None, names: ArrayLike | None = None,
             bounds_declared: bool = True) -> FeatureSchema:
        """Every non-binary column on the grid ``step`` (= 1/q) within ``|x| <= bound``.

        ``binary``: indices (or a boolean mask) of the 0/1 columns, default none.
        """
        frac = Fraction(step).limit_denominator(10**12)
        if frac <= 0 or frac.numerator != 1:
            raise ValueError(f"the grid step must be 1/q for an integer q >= 1, got {step!r}")
        mask = np.zeros(d, dtype=bool)
        if binary is not None:
            b = np.asarray(binary)
            if b.dtype == bool:
                if b.shape != (d,):
                    raise ValueError(f"binary mask must have shape ({d},), got {b.shape}")
                mask = b.copy()
            else:
                idx = b.astype(np.int64).ravel()
                if len(idx) and (idx.min() < 0 or idx.max() >= d):
                    raise ValueError(f"binary column indices must lie in [0, {d})")
                mask[idx] = True
        return cls(binary=tuple(mask.tolist()), denominators=(frac.denominator,) * d,
                   bounds=(float(bound),) * d,
                   names=None if names is None else tuple(map(str, names)),
                   bounds_declared=bounds_declared)

    @property
    def d(self) -> int:
        return len(self.binary)

    @property
    def Q(self) -> int:
        """The common denominator lcm(q_j): public, as every q_j is."""
        return reduce(math.lcm, self.denominators, 1)

    @property
    def binary_mask(self) -> NDArray[np.bool_]:
        return np.array(self.binary, dtype=bool)

    def column_name(self, j: int) -> str:
        return f"feature column {j}" + (f" ({self.names[j]!r})" if self.names else "")

    def check_exact(self, k_max: int) -> None:
        """Refuse (from the schema alone) when scores could leave exact integer arithmetic."""
        Q = self.Q
        worst = sum(math.floor(b * Q) for b in self.bounds) * k_max
        if worst > _MAX_EXACT:
            raise ValueError(
                "the schema's grids and bounds allow integer scores beyond 2**52, where float "
                "solvers are no longer exact; declare coarser grids or smaller bounds"
            )

    def encode(self, X: NDArray[np.float64]) -> NDArray[np.int64]:
        """``N = Q X`` exactly, after checking every column against the schema.

        Raises BoundsViolation naming each violating column and its rule.
        """
        if X.ndim != 2 or X.shape[1] != self.d:
            raise ValueError(f"X has {X.shape[-1] if X.ndim else 0} columns but the schema "
                             f"declares {self.d}")
        Q = self.Q
        q = np.array(self.denominators, dtype=np.float64)
        bounds = np.array(self.bounds)
        binary = self.binary_mask
        M = np.rint(X * q)  # exact integers (|M| <= bound q <= 2**52 once in bounds)
        not_binary = binary & ~((X == 0) | (X == 1)).all(axis=0)
        out_of_bounds = ~binary & (np.abs(X) > bounds).any(axis=0)
        # on grid iff the float of M/q is X itself: X is then read as the rational M/q
        off_grid = ~binary & ~out_of_bounds & (M / q != X).any(axis=0)
        problems = [f"{self.column_name(j)} must be 0 or 1 (declared binary)"
                    for j in np.flatnonzero(not_binary)]
        problems += [f"{self.column_name(j)} must satisfy |x| <= {self.bounds[j]:g} (declared "
                     "public bound)" for j in np.flatnonzero(out_of_bounds)]
        problems += [f"{self.column_name(j)} must be a multiple of 1/{self.denominators[j]} "
                     "(declared public grid)" for j in np.flatnonzero(off_grid)]
        if problems:
            raise BoundsViolation(
                "the data do not fit the declared feature schema: " + "; ".join(problems)
                + ". Nothing is clipped or rounded silently: fix the data or the schema "
                "(for example round to the grid with the estimator's feature_grid)."
            )
        return M.astype(np.int64) * (Q // np.array(self.denominators, dtype=np.int64))


@dataclass(frozen=True, eq=False)
class Perturbation:
    """A separable perturbation of the 0/1 loss over W (integer coordinates k):

        P(k) = sum_j value_cost[j, k_j + k_max]  +  norm_cost[||k||^2].

    * OPDisc's normalized linear term -<eta, pi(tau k)> (Definition 2.2) is one:
      value_cost[j, a] = -eta_j a / sqrt(K2) and norm_cost[r] = -eta_{d+1} sqrt(1 - r/K2),
      K2 = max ||k||^2 over W (:meth:`from_eta`).
    * RSPM's separator terms are another: a weight on a separator example whose loss
      depends on one coordinate w_j only is a cost on the value of k_j.

    Exact value (what the oracles minimize exactly, see :mod:`oracledp.oracles._base`):
    when ``eta`` is set (by :meth:`from_eta`) the tables are float approximations of
    OPDisc's irrational term and the exact objective is computed from ``eta``; otherwise
    the table entries are exact (floats are dyadic rationals), plus
    ``value_cost_residual`` when given: the exact cost of ``k_j = a`` is then
    ``value_cost[j, a] + value_cost_residual[j, a]`` (a sum of two floats that is not a
    float, e.g. from :func:`two_sum`; the float evaluation ignores the residual, which is
    below one rounding error of the entry).
    """

    value_cost: NDArray[np.float64]  # (d, 2 k_max + 1)
    norm_cost: NDArray[np.float64]  # (k_norm2_max + 1,)
    eta: NDArray[np.float64] | None = None  # OPDisc's noise vector the tables approximate
    value_cost_residual: NDArray[np.float64] | None = None  # exact remainder of value_cost

    @classmethod
    def from_eta(cls, space: IntegerBall, eta: ArrayLike) -> Perturbation:
        eta = np.asarray(eta, dtype=np.float64)
        if eta.shape != (space.d + 1,):
            raise ValueError(f"eta must have shape ({space.d + 1},), got {eta.shape}")
        if not np.isfinite(eta).all():
            raise ValueError("eta must be finite (no NaN or infinity)")
        K2 = space.max_k_norm2
        vals = np.arange(-space.k_max, space.k_max + 1)
        value_cost = -(eta[: space.d, None] * vals[None, :]) / math.sqrt(K2)
        r = np.arange(space.k_norm2_max + 1)
        norm_cost = -eta[space.d] * np.sqrt(np.clip(1.0 - r / K2, 0.0, None))
        return cls(value_cost=value_cost, norm_cost=norm_cost, eta=eta.copy())

    def check(self, space: IntegerBall) -> Perturbation:
        """Validate shapes and finiteness against a space; returns self."""
        shape_v = (space.d, 2 * space.k_max + 1)
        shape_n = (space.k_norm2_max + 1,)
        if self.value_cost.shape != shape_v or self.norm_cost.shape != shape_n:
            raise ValueError(
                f"perturbation tables must have shapes {shape_v} and {shape_n}, got "
                f"{self.value_cost.shape} and {self.norm_cost.shape}"
            )
        if not (np.isfinite(self.value_cost).all() and np.isfinite(self.norm_cost).all()):
            raise ValueError("perturbation tables must be finite")
        res = self.value_cost_residual
        if res is not None and (res.shape != shape_v or not np.isfinite(res).all()):
            raise ValueError(f"value_cost_residual must be finite with shape {shape_v}")
        if self.eta is not None and np.shape(self.eta) != (space.d + 1,):
            raise ValueError(f"eta must have shape ({space.d + 1},), got {np.shape(self.eta)}")
        return self

    def evaluate_k(self, K: NDArray[np.integer], k_max: int) -> NDArray[np.float64]:
        K = np.atleast_2d(np.asarray(K, dtype=np.int64))
        cols = np.arange(K.shape[1])[None, :]
        return self.value_cost[cols, K + k_max].sum(axis=1) + self.norm_cost[(K**2).sum(axis=1)]


def two_sum(a: ArrayLike, b: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(s, e)`` with ``s = fl(a + b)`` and ``s + e = a + b`` exactly (Knuth's TwoSum).

    For tables whose exact entries are sums of two floats (RSPM's cost of ``k_j = 0``,
    ``eta_j + eta_{d+j}``): pass ``s`` as ``value_cost`` and ``e`` as
    ``value_cost_residual`` of a :class:`Perturbation`.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def as_perturbation(space: IntegerBall, eta_or_terms: ArrayLike | Perturbation) -> Perturbation:
    """An OPDisc noise vector eta (length d+1) or a Perturbation, as a checked Perturbation."""
    if isinstance(eta_or_terms, Perturbation):
        return eta_or_terms.check(space)
    return Perturbation.from_eta(space, eta_or_terms)


@dataclass(frozen=True, eq=False)
class HalfspaceProblem:
    """Aggregated 0/1-loss halfspace data over an integer parameter space.

    Build with :meth:`from_data`.  Attributes:

    * ``N`` (g, d) signed integers: distinct feature rows times ``Q`` (exact integers, in
      lexicographic order; in the narrowest integer type the schema's public bounds prove wide
      enough, int64 without a schema: every computation on them is in int64),
    * ``Q``: the common denominator,
    * ``n_pos``, ``n_neg`` (g,) int64: how many +1 and -1 labels each row has,
    * ``space``: the parameter space W.
    """

    N: NDArray[np.signedinteger]
    Q: int
    n_pos: NDArray[np.int64]
    n_neg: NDArray[np.int64]
    space: IntegerBall
    schema: FeatureSchema | None = None

    @classmethod
    def from_data(
        cls,
        X: ArrayLike,
        y: ArrayLike,
        space: IntegerBall | None = None,
        *,
        schema: FeatureSchema | None = None,
        max_denominator: int = 10**6,
    ) -> HalfspaceProblem:
        """Aggregate (X, y) into an exact problem over ``space``.

        With a :class:`FeatureSchema` every refusal reads only the schema and the
        public parameters (the data are checked against it); without one the
        denominators and the 0/1 columns are read from the data (see the module
        docstring).
        """
        Xa = check_finite_matrix(X)
        ya = check_signed_labels(y, Xa.shape[0])
        # each record is one row with count 1 under its label; from_counts merges equal rows
        return cls.from_counts(Xa, (ya == 1).astype(np.int64), (ya == -1).astype(np.int64),
                               space, schema=schema, max_denominator=max_denominator)

    @classmethod
    def from_counts(
        cls,
        X: ArrayLike,
        n_pos: ArrayLike,
        n_neg: ArrayLike,
        space: IntegerBall | None = None,
        *,
        schema: FeatureSchema | None = None,
        max_denominator: int = 10**6,
    ) -> HalfspaceProblem:
        """The problem of already-aggregated rows: row ``i`` of ``X`` stands for ``n_pos[i]``
        records labelled +1 and ``n_neg[i]`` labelled -1.

        Exactly :meth:`from_data` on the table that repeats each row that many times (same
        ``N`` in the same order, same counts, same refusals), without ever building that
        table: memory grows with the number of rows of ``X``, not with the number of
        records.  Rows of ``X`` need not be distinct (equal encoded rows are merged, counts
        added in integer arithmetic); rows with no record are ignored.  ``X`` may be a
        :class:`~oracledp.oracles._row_blocks.RowBlocks` (with a ``schema``): it is then read
        block by block, and the float matrix is never built.
        """
        lazy = isinstance(X, RowBlocks)
        if lazy and schema is None:
            raise ValueError("rows given block by block need a FeatureSchema (schema=...)")
        Xa = X if lazy else check_finite_matrix(X)
        counts = []
        for name, c in (("n_pos", n_pos), ("n_neg", n_neg)):
            arr = np.asarray(c)
            if arr.shape != (Xa.shape[0],) or not np.issubdtype(arr.dtype, np.integer):
                raise ValueError(f"{name} must be a 1-D integer array with one entry per row "
                                 f"of X ({Xa.shape[0]})")
            if (arr < 0).any():
                raise ValueError(f"{name} must be >= 0 (counts of records)")
            counts.append(arr.astype(np.int64))
        pos, neg = counts
        keep = (pos + neg) > 0
        if not keep.any():
            raise ValueError("the counts are all zero: there is no record")
        if not keep.all():
            Xa, pos, neg = (Xa.take(keep) if lazy else Xa[keep]), pos[keep], neg[keep]
        if space is None:
            space = IntegerBall(Xa.shape[1])
        if space.d != Xa.shape[1]:
            raise ValueError(f"space has d = {space.d} but X has {Xa.shape[1]} features")
        if schema is not None:
            schema.check_exact(space.k_max)
            N, Q = cls._encode_blocks(schema, Xa), schema.Q
        else:
            N, Q = rationalize_columns(Xa, max_denominator)
            if np.abs(N).sum(axis=1).max() * space.k_max > _MAX_EXACT:
                raise ValueError("feature magnitudes too large for exact integer scores; "
                                 "rescale X")
        del X, Xa  # a caller that passed a temporary frees it here
        rows, inverse = cls._unique_rows(N)
        del N
        g_pos = np.zeros(rows.shape[0], dtype=np.int64)
        g_neg = np.zeros(rows.shape[0], dtype=np.int64)
        np.add.at(g_pos, inverse, pos)
        np.add.at(g_neg, inverse, neg)
        return cls(N=rows, Q=Q, n_pos=g_pos, n_neg=g_neg, space=space, schema=schema)

    @staticmethod
    def _narrow_dtype(schema: FeatureSchema) -> type[np.signedinteger]:
        """The narrowest signed integer type that holds every entry of ``schema.encode(X)``
        for any X the schema accepts (public: from the schema alone, never from the data).

        Column ``j`` passes the checks of :meth:`FeatureSchema.encode` only if
        ``|x| <= b_j`` (1 for a 0/1 column), so ``|rint(x q_j)| <= ceil(b_j q_j) + 1`` (the
        float product and ``rint`` are monotone; the + 1 covers their rounding) and the
        entry ``rint(x q_j) * (Q // q_j)`` is at most ``(ceil(b_j q_j) + 1) * (Q // q_j)``
        in magnitude, computed here in exact integers; ``Q`` must fit too (the oracles divide
        entries by it).  int64 when no narrower type holds it.
        """
        Q = schema.Q
        bound = max(Q, *((math.ceil(b * q) + 1) * (Q // q)
                         for b, q in zip(schema.bounds, schema.denominators, strict=True)))
        for dt in (np.int8, np.int16, np.int32):
            if bound <= np.iinfo(dt).max:
                return dt
        return np.int64

    @staticmethod
    def _encode_blocks(schema: FeatureSchema, X: NDArray[np.float64],
                       block: int = 1 << 16) -> NDArray[np.signedinteger]:
        """``schema.encode(X)`` block by block (its temporaries stay small), stored in the
        narrowest integer type that provably holds it (:meth:`_narrow_dtype`; the values are
        those of ``schema.encode(X)``, exactly); a refusal comes from ``schema.encode(X)`` on
        the whole X, so it names every violating column."""
        dt = HalfspaceProblem._narrow_dtype(schema)
        lim = np.iinfo(dt).max
        N = np.empty(X.shape, dtype=dt)
        try:
            for a in range(0, X.shape[0], block):
                enc = schema.encode(X[a:a + block])
                if dt is not np.int64 and enc.size and np.abs(enc).max() > lim:
                    # unreachable by the bound above; never a silent wrap-around all the same
                    N = N.astype(np.int64)
                    dt, lim = np.int64, np.iinfo(np.int64).max
                N[a:a + block] = enc
        except BoundsViolation:
            del N
            schema.encode(np.asarray(X))  # every violating column (X may be RowBlocks)
            raise
        return N

    @staticmethod
    def _unique_rows(N: NDArray[np.signedinteger]
                     ) -> tuple[NDArray[np.signedinteger], NDArray[np.intp]]:
        """``np.unique(N, axis=0, return_inverse=True)`` (rows in lexicographic order, in
        N's own integer type) in less memory and time: each column is replaced by the rank of
        its value (same order) and the ranks are packed into one int64 key when they fit (else
        numpy's own).  ``N`` may be of any signed integer type (the order of rows is that of
        their values, whatever the type).  When most rows are distinct (an aggregated table's
        rows all are), the distinct rows are gathered into ``N``'s own memory, one column at
        a time (N is then overwritten: the caller passes it over), instead of into a copy."""
        key = np.zeros(N.shape[0], dtype=np.int64)
        span = 1
        for j in range(N.shape[1]):
            col = N[:, j]
            vals = np.unique(col)
            if span * len(vals) >= 2**62:
                rows, inverse = np.unique(N, axis=0, return_inverse=True)
                return rows, inverse.ravel()
            key *= len(vals)
            key += np.searchsorted(vals, col)
            span *= len(vals)
        del col
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        del key
        if 2 * len(first) <= N.shape[0] or not N.flags.c_contiguous:
            return N[first], inverse.ravel()
        for j in range(N.shape[1]):  # each column read whole before it is written
            N[:len(first), j] = N[first, j]
        return N[:len(first)], inverse.ravel()

    @property
    def d(self) -> int:
        return self.N.shape[1]

    @property
    def n(self) -> int:
        return int(self.n_pos.sum() + self.n_neg.sum())

    @property
    def lipschitz(self) -> float:
        """G = 1/tau: a loss in [0, 1] on a tau-separated space (Section 3 of the ICML paper)."""
        return 1.0 / self.space.tau

    @property
    def n_groups(self) -> int:
        return self.N.shape[0]

    @cached_property
    def binary_columns(self) -> NDArray[np.bool_]:
        """The 0/1 columns: declared by the schema, else those whose values are all 0 or 1."""
        if self.schema is not None:
            return self.schema.binary_mask
        return ((self.N == 0) | (self.N == self.Q)).all(axis=0)

    # --- exact evaluation ----------------------------------------------------------------------
    def scores_k(self, K: NDArray[np.integer]) -> NDArray[np.int64]:
        """Q * <x_g, k> for every group g and every row k of K: shape (g, len(K)), in int64
        (N is widened a block of rows at a time, never whole)."""
        K = np.atleast_2d(np.asarray(K, dtype=np.int64))
        if self.N.dtype == np.int64:
            return self.N @ K.T
        out = np.empty((self.N.shape[0], K.shape[0]), dtype=np.int64)
        for a in range(0, self.N.shape[0], _BLOCK_ROWS):
            out[a:a + _BLOCK_ROWS] = self.N[a:a + _BLOCK_ROWS].astype(np.int64) @ K.T
        return out

    def loss_k(self, K: NDArray[np.integer]) -> NDArray[np.int64]:
        """Exact 0/1 loss (error count, sgn(0) = 0 convention) of each row of K."""
        K = np.atleast_2d(np.asarray(K, dtype=np.int64))
        total = np.zeros(K.shape[0], dtype=np.int64)
        for a in range(0, self.N.shape[0], _BLOCK_ROWS):  # exact integer sums, in blocks
            S = self.N[a:a + _BLOCK_ROWS].astype(np.int64) @ K.T
            err = ((S <= 0) * self.n_pos[a:a + _BLOCK_ROWS, None]
                   + (S >= 0) * self.n_neg[a:a + _BLOCK_ROWS, None])
            total += err.sum(axis=0)
        return total

    def objective_k(self, K: NDArray[np.integer],
                    eta: NDArray[np.floating] | Perturbation) -> NDArray[np.float64]:
        """F(tau k) = loss + perturbation for each row of K.

        ``eta`` (length d+1) means OPDisc's term -<eta, pi(tau k)>, computed directly
        from pi; a :class:`Perturbation` is evaluated from its tables.
        """
        if isinstance(eta, Perturbation):
            return self.loss_k(K) + eta.evaluate_k(K, self.space.k_max)
        eta = np.asarray(eta, dtype=np.float64)
        return self.loss_k(K) - self.space.pi_k(np.atleast_2d(K)) @ eta
