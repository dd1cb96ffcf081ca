"""PRSMA base algorithms over query classes.

An end-to-end PRSMA run on UCI Adult is in the repository's ``lab/prsma_adult``.

:class:`ClassRSPMBase` is a base algorithm ``A`` for :func:`~oracledp.learners._prsma.prsma`
(contract in that module's docstring): Laplace RSPM (Neel, Roth, Wu, FOCS 2019,
Section III-A) over the 0/1-loss class of a hypothesis class with a separator set.
One run on a part ``S_i`` of labelled records ``(z_r, y_r)``::

    eta ~ Lap(2m/eps')^m,  m = |U|,  U = separator of the loss class {(u, 0) : u in U_H}
    h = argmin_h  sum_r (h(z_r) XOR y_r)  +  sum_j eta_j h(u_j)       (one oracle call)

Privacy.  Each run is eps'-DP (pure, replace-one) **given an exact oracle** (Theorem 6;
private weights are all +1).  The base does not trust the oracle: it returns
:data:`~oracledp.learners._prsma.FAIL` as soon as one oracle call of the batch raises,
exceeds ``time_limit``, returns a malformed or out-of-class answer, says it failed, or
returns an answer the base cannot verify itself (by enumeration of the class, or by a
certificate it recomputes; see :class:`ClassRSPMBase`).  Every run it does not FAIL is
the exact oracle's run on the same noise.  PRSMA then makes the composite
(eps, delta)-DP for the oracle behaviours listed in :mod:`oracledp.learners._prsma`
(Theorem 8, robust privacy).  Used on its own (outside PRSMA), a batch of ``size`` runs
is ``size * eps'``-DP by composition (given an exact oracle).
"""

from __future__ import annotations

import math
import numbers
import time
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp.learners._prsma import FAIL
from oracledp.oracles._base import OracleStatus
from oracledp.privacy import _noise as noise
from oracledp.query_classes._base import (
    CERTIFY_ABS_TOL,
    ClassOracleResult,
    LossClass,
    QueryClass,
    WeightedOracle,
)
from oracledp.query_classes._mip import make_class_oracle

__all__ = [
    "VERIFY_LIMIT",
    "ClassRSPMBase",
]

_ORACLE_KINDS = ("highs", "brute")

VERIFY_LIMIT = 1 << 16
"""Default largest class size that :class:`ClassRSPMBase` verifies by enumeration."""

_CHUNK = 1 << 22  # entries per temporary (hypotheses x runs or hypotheses x records) block


def _real(x: object) -> float | None:
    """``x`` as a float if it is a real scalar (not bool, not an array), else None."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        return None
    return float(x)


class ClassRSPMBase:
    """PRSMA base: Laplace RSPM over the 0/1-loss class of ``query_class`` (picklable).

    Parameters
    ----------
    query_class:
        A hypothesis class ``H`` (its 0/1-loss class is used), or a
        :class:`~oracledp.query_classes.LossClass` directly.
    oracle:
        ``"highs"`` (exact MIP, one solve per run), ``"brute"`` (enumeration: the class
        and its separator patterns are tabulated once, the data loss once per part, and
        the ``size`` runs are an argmin over a ``(size, |Q|)`` matrix), or a
        :class:`~oracledp.query_classes.WeightedOracle` instance built for the loss class
        (one ``solve`` per run).
    verify_limit:
        Classes with at most this many hypotheses (default :data:`VERIFY_LIMIT`) are
        tabulated once, and every oracle answer is checked against the base's own
        enumeration (see "Oracle answers" below).
    trust_oracle_bound:
        Larger classes only: also accept an answer whose objective (recomputed by the
        base) is within ``CERTIFY_ABS_TOL`` of the lower bound the oracle reports.  The
        base cannot check that bound, so the guarantee then assumes it is a true lower
        bound.  Default False.
    time_limit:
        Seconds per oracle call (None: no limit).  An answer that took longer is FAIL.
        The call itself is not interrupted (measured after it returns).

    Oracle answers (``"highs"`` and oracle instances)
    -------------------------------------------------
    One run is FAIL (and the batch returns :data:`FAIL`) unless ``solve`` returns, within
    ``time_limit``, a :class:`~oracledp.query_classes.ClassOracleResult` with
    ``certified=True``, status OPTIMAL, a finite real ``objective`` equal (up to
    ``CERTIFY_ABS_TOL`` relative) to the objective the base recomputes itself from the
    part and the noise, a ``bound`` that is not NaN and not above that objective, and
    ``params`` a 1-D array of ``param_dim`` integers that ``check_params`` accepts, and
    unless the base can verify the answer itself:

    * class size <= ``verify_limit``: the answer must be exactly the base's own
      enumeration argmin (the hypothesis the ``"brute"`` path outputs for the same noise);
    * larger classes: the answer must be optimal over *all* labelings of the distinct
      points (for every distinct ``z``, ``h(z) = 1`` iff its summed weight with label 0
      is at most the one with label 1; sums within rounding of each other are compared
      exactly, and an exact tie is FAIL), which proves optimality in the class without
      trusting the oracle; or, with ``trust_oracle_bound=True``, within
      ``CERTIFY_ABS_TOL`` of the oracle's reported bound.

    Any exception from ``solve`` or from reading its answer (every ``Exception``
    subclass, including ``MemoryError`` and ``RecursionError``) makes the run FAIL; it
    never escapes.  ``KeyboardInterrupt`` and ``SystemExit`` are not caught.  The
    released row is the base's own validated copy, never the oracle's array.

    Call
    ----
    ``base(part_data, eps_prime, rng, size)`` with ``part_data`` either a tuple
    ``(Z, y)`` of records (encoded by the class) and 0/1 labels, or an array of loss
    points ``loss_class.encode(Z, y)`` (label in the last column; what PRSMA passes
    when it splits such an array).  Returns a ``(size, param_dim)`` int64 array of
    hypothesis parameters, or :data:`FAIL` if any oracle answer was not accepted.

    Privacy: each run is eps'-DP given an exact oracle (Theorem 6); every run the base
    does not return FAIL for is exactly the run of RSPM with an exact oracle on the same
    noise (verified as above), so with PRSMA the composite is (eps, delta)-DP for the
    oracle behaviours listed in :mod:`oracledp.learners._prsma` (Theorem 8).  The noise
    of all ``size`` runs is drawn up front as ``rng.laplace(0, 2m/eps', (size, m))``, so
    the ``"brute"`` path and the oracle-instance path give the same outputs from the
    same generator state (up to floating-point near-ties).
    """

    def __init__(self, query_class: QueryClass, oracle: str | WeightedOracle = "highs", *,
                 verify_limit: int = VERIFY_LIMIT, trust_oracle_bound: bool = False,
                 time_limit: float | None = None) -> None:
        if not isinstance(query_class, QueryClass):
            raise TypeError(f"query_class must be a QueryClass, got {type(query_class).__name__}")
        loss = query_class if isinstance(query_class, LossClass) else query_class.zero_one_loss()
        self.loss_class: LossClass = loss
        if isinstance(oracle, str):
            if oracle not in _ORACLE_KINDS:
                raise ValueError(f"oracle must be 'highs', 'brute' or an oracle, got {oracle!r}")
            self.oracle_kind = oracle
            self._oracle: WeightedOracle | None = None
        else:
            if not isinstance(oracle, WeightedOracle):
                raise TypeError("oracle must be a name or a WeightedOracle (solve(points, weights))")
            if oracle.query_class != loss:
                raise ValueError(
                    f"oracle {oracle.name!r} was built for {oracle.query_class.name}, "
                    f"not for {loss.name}"
                )
            self.oracle_kind = "instance"
            self._oracle = oracle
        if (isinstance(verify_limit, bool) or not isinstance(verify_limit, numbers.Integral)
                or verify_limit < 0):
            raise ValueError(f"verify_limit must be a non-negative integer, got {verify_limit!r}")
        if not isinstance(trust_oracle_bound, bool):
            raise TypeError("trust_oracle_bound must be True or False")
        if time_limit is not None:
            t = _real(time_limit)
            if t is None or not (math.isfinite(t) and t > 0):
                raise ValueError(f"time_limit must be None or a positive number, got {time_limit!r}")
            time_limit = t
        self.verify_limit = int(verify_limit)
        self.trust_oracle_bound = trust_oracle_bound
        self.time_limit: float | None = time_limit
        self.separator: NDArray[np.float64] = loss.separator()
        self.m = int(self.separator.shape[0])
        self._params: NDArray[np.int64] | None = None
        self._patterns: NDArray[np.float64] | None = None
        self._index: dict[bytes, int] | None = None
        if self.oracle_kind == "brute" or loss.size <= self.verify_limit:
            self._params = np.ascontiguousarray(loss.enumerate(), dtype=np.int64)
            self._patterns = loss._evaluate(self._params, self.separator).astype(np.float64)
            if self.oracle_kind != "brute":
                self._index = {row.tobytes(): i for i, row in enumerate(self._params)}

    @property
    def verification(self) -> str:
        """How oracle answers are checked: ``"none"`` (``"brute"``: no oracle),
        ``"enumeration"``, ``"pointwise"`` or ``"pointwise+oracle-bound"``."""
        if self.oracle_kind == "brute":
            return "none"
        if self._index is not None:
            return "enumeration"
        return "pointwise+oracle-bound" if self.trust_oracle_bound else "pointwise"

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self.oracle_kind == "highs":
            state["_oracle"] = None  # rebuilt lazily in the worker
        return state

    def __repr__(self) -> str:
        return f"ClassRSPMBase({self.loss_class.name}, oracle={self.oracle_kind!r})"

    def _oracle_instance(self) -> WeightedOracle:
        if self._oracle is None:
            self._oracle = make_class_oracle(self.loss_class, self.oracle_kind)
        return self._oracle

    def points(self, part_data: Any) -> NDArray[np.float64]:
        """Loss points of a part: ``(Z, y)`` is encoded, an array is checked."""
        if isinstance(part_data, tuple):
            if len(part_data) != 2:
                raise ValueError("part_data as a tuple must be (Z, y)")
            return self.loss_class.encode(*part_data)
        return self.loss_class.check_points(part_data, "part_data")

    def check_data(self, data: Any) -> None:
        """Validate PRSMA's whole data set before any randomness (raises on a wrong format).

        :func:`~oracledp.learners._prsma.prsma` calls this hook, so that a wrong input
        format raises at once instead of making every part FAIL.
        """
        self.points(data)

    def _data_loss(self, Z: NDArray[np.float64]) -> NDArray[np.float64]:
        """Data loss of every tabulated hypothesis on the part (exact integer sums)."""
        assert self._params is not None
        step = max(1, _CHUNK // max(1, Z.shape[0]))
        return np.concatenate([
            self.loss_class._evaluate(self._params[s:s + step], Z).sum(axis=1, dtype=np.float64)
            for s in range(0, self._params.shape[0], step)
        ])

    def _argmin(self, data_loss: NDArray[np.float64],
                etas: NDArray[np.float64]) -> NDArray[np.intp]:
        """Index of the exact perturbed minimizer of each run (blocks of runs).

        Float values first; where more than one hypothesis lies within twice the float
        band of a run's minimum (at most ``m + 2`` roundings of terms below the largest
        magnitude, margin 128), they are compared exactly as rationals (integer data loss
        plus the separator noise they pick up); exact ties go to the first row, as
        ``argmin`` does.
        """
        patterns = self._patterns
        assert patterns is not None
        step = max(1, _CHUNK // max(1, data_loss.shape[0]))
        out = []
        for s in range(0, etas.shape[0], step):
            E = etas[s:s + step]
            vals = data_loss[None, :] + E @ patterns.T
            idx = vals.argmin(axis=1)
            tol = 128.0 * (patterns.shape[1] + 2) * 2.0**-53 * (
                float(np.abs(data_loss).max()) + np.abs(E).sum(axis=1))
            near = vals <= vals[np.arange(len(E)), idx][:, None] + 2.0 * tol[:, None]
            for r in np.flatnonzero(near.sum(axis=1) > 1):
                cands = np.flatnonzero(near[r])
                eta_q = [Fraction(float(e)) for e in E[r]]

                def exact(i: int, r: int = r, eta_q: list[Fraction] = eta_q) -> Fraction:
                    return Fraction(float(data_loss[i])) + sum(
                        (eta_q[j] for j in np.flatnonzero(patterns[i])), Fraction(0))

                values = [exact(int(i)) for i in cands]
                idx[r] = cands[values.index(min(values))]
            out.append(idx)
        return np.concatenate(out)

    def __call__(self, part_data: Any, eps_prime: float, rng: np.random.Generator,
                 size: int) -> Any:
        Z = self.points(part_data)
        if Z.shape[0] == 0:
            raise ValueError("part_data is empty")
        size = int(size)
        if size < 1:
            raise ValueError(f"size must be a positive integer, got {size}")
        scale = 2.0 * self.m / float(eps_prime)  # Theorem 6; eps_prime checked by PRSMA
        if not (np.isfinite(scale) and scale > 0):
            raise ValueError(f"eps_prime must be a positive finite number, got {eps_prime!r}")
        etas = noise.laplace(rng, scale, size=(size, self.m))
        if self.oracle_kind == "brute":
            assert self._params is not None
            return self._params[self._argmin(self._data_loss(Z), etas)]
        orc = self._oracle_instance()
        pts = np.vstack([Z, self.separator])
        pts.flags.writeable = False  # reused by every run: an oracle may not change it
        ones = np.ones(Z.shape[0])
        if self._index is not None:
            data_loss = self._data_loss(Z)
            best = self._argmin(data_loss, etas)
            check = self._enumeration_check(data_loss, best)
        else:
            check = self._pointwise_check(Z)
        out = np.empty((size, self.loss_class.param_dim), dtype=np.int64)
        for r in range(size):
            row = self._accepted_answer(orc, pts, ones, etas[r], r, check)
            if row is None:
                return FAIL  # never release an answer the base could not verify
            out[r] = row
        return out

    def _accepted_answer(self, orc: WeightedOracle, pts: NDArray[np.float64],
                         ones: NDArray[np.float64], eta: NDArray[np.float64], r: int,
                         check: Any) -> NDArray[np.int64] | None:
        """Run ``r``'s oracle call; the verified hypothesis row, or None (= FAIL).

        Every ``Exception`` raised by the oracle or while reading its answer is FAIL.
        """
        w = np.concatenate([ones, eta])
        w.flags.writeable = False
        try:
            t0 = time.perf_counter()
            res = orc.solve(pts, w)
            elapsed = time.perf_counter() - t0
            if self.time_limit is not None and not elapsed <= self.time_limit:
                return None
            if not isinstance(res, ClassOracleResult):
                return None
            # read every field once (a subclass could change them between reads)
            certified, status = res.certified, res.status
            params, objective, bound = res.params, res.objective, res.bound
            if not (isinstance(certified, (bool, np.bool_)) and bool(certified)):
                return None  # the oracle says FAIL
            if status is not OracleStatus.OPTIMAL:
                return None
            reported, claimed_bound = _real(objective), _real(bound)
            if reported is None or not math.isfinite(reported):
                return None
            if claimed_bound is None or math.isnan(claimed_bound):
                return None
            row = self._hypothesis_row(params)
            if row is None:
                return None
            verified = check(row, eta, r, claimed_bound)
            if verified is None:
                return None
            row, own = verified
            tol = CERTIFY_ABS_TOL * max(1.0, abs(own))
            if not (abs(reported - own) <= tol and claimed_bound <= own + tol):
                return None  # the oracle's own account of its answer is wrong
            return row
        except Exception:  # any oracle failure is FAIL, never an escape
            return None

    def _hypothesis_row(self, params: Any) -> NDArray[np.int64] | None:
        """An int64 copy of an oracle's parameter row, or None if it is not a row of
        ``param_dim`` integers (class membership: the index or ``check_params``, by the check).
        """
        if params is None:
            return None
        arr = np.array(params, copy=True)
        if arr.dtype.kind not in "biuf" or arr.shape != (self.loss_class.param_dim,):
            return None
        if arr.dtype.kind == "f" and not (np.isfinite(arr).all() and (arr == np.rint(arr)).all()):
            return None
        if arr.size and (arr.min() < -(2**31) or arr.max() > 2**31):
            return None
        return arr.astype(np.int64)

    def _enumeration_check(self, data_loss: NDArray[np.float64],
                           best: NDArray[np.intp]) -> Any:
        """Accept only the base's own enumeration argmin (the exact oracle's answer)."""
        assert self._index is not None and self._params is not None
        index, params, patterns = self._index, self._params, self._patterns
        assert patterns is not None

        def check(row: NDArray[np.int64], eta: NDArray[np.float64], r: int,
                  claimed_bound: float) -> tuple[NDArray[np.int64], float] | None:
            i = index.get(row.tobytes())
            if i is None or i != best[r]:
                return None
            return params[i].copy(), float(data_loss[i] + patterns[i] @ eta)

        return check

    def _pointwise_check(self, Z: NDArray[np.float64]) -> Any:
        """Accept a provable optimum: optimal over all labelings of the distinct points
        (or, with ``trust_oracle_bound``, within tolerance of the oracle's bound)."""
        n = Z.shape[0]
        keys = np.vstack([Z[:, :-1], self.separator[:, :-1]])
        uniq, inv = np.unique(keys, axis=0, return_inverse=True)
        inv = inv.ravel()
        k = uniq.shape[0]
        y = Z[:, -1]
        w0 = np.bincount(inv[:n], weights=(y == 0.0).astype(np.float64), minlength=k)
        w1 = np.bincount(inv[:n], weights=(y == 1.0).astype(np.float64), minlength=k)
        sep = inv[n:]  # separator loss points (u_j, 0): weight eta_j on label 0
        hyp, trust = self.loss_class.base, self.trust_oracle_bound

        def check(row: NDArray[np.int64], eta: NDArray[np.float64], r: int,
                  claimed_bound: float) -> tuple[NDArray[np.int64], float] | None:
            row = self.loss_class.check_params(row[None, :])[0].copy()  # in the class
            a0 = w0 + np.bincount(sep, weights=eta, minlength=k)
            h = hyp._evaluate(row[None, :], uniq)[0] == 1  # l_h(z, 0) = h(z), l_h(z, 1) = 1 - h(z)
            own = float(np.where(h, a0, w1).sum())
            if not math.isfinite(own):
                return None
            ok = np.where(h, a0 <= w1, w1 <= a0)
            # a0 is a float sum: where it is within a few roundings of w1, decide exactly
            # (counts plus the separator's noise as rationals); an exact tie is refused
            close = np.flatnonzero(np.abs(a0 - w1) <= 1e-12 * (1.0 + np.abs(w1) + np.abs(a0)))
            for z in close:
                exact_a0 = Fraction(float(w0[z])) + sum(
                    (Fraction(float(e)) for e in eta[sep == z]), Fraction(0))
                diff = exact_a0 - Fraction(float(w1[z]))
                if diff == 0:
                    return None  # two labelings tie exactly: the argmin is not unique
                ok[z] = bool(h[z]) == (diff < 0)
            if bool(ok.all()):
                return row, own  # no labeling of the points does better: optimal in the class
            if trust and math.isfinite(claimed_bound) and own <= claimed_bound + CERTIFY_ABS_TOL:
                return row, own
            return None

        return check

