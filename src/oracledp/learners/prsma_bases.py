"""PRSMA base algorithms over query classes, and an end-to-end PRSMA demo on UCI Adult.

:class:`ClassRSPMBase` is a base algorithm ``A`` for :func:`~oracledp.learners.prsma.prsma`
(contract in that module's docstring): Laplace RSPM (Neel, Roth, Wu, FOCS 2019,
Section III-A) over the 0/1-loss class of a hypothesis class with a separator set.
One run on a part ``S_i`` of labelled records ``(z_r, y_r)``::

    eta ~ Lap(2m/eps')^m,  m = |U|,  U = separator of the loss class {(u, 0) : u in U_H}
    h = argmin_h  sum_r (h(z_r) XOR y_r)  +  sum_j eta_j h(u_j)       (one oracle call)

Privacy.  Each run is eps'-DP (pure, replace-one) **given an exact oracle** (Theorem 6;
private weights are all +1).  The base returns :data:`~oracledp.learners.prsma.FAIL` as
soon as one oracle answer of the batch is not certified (the certifiable-oracle
contract), never an uncertified answer.  PRSMA then makes the composite
(eps, delta)-DP **whatever the oracle does** (Theorem 8, robust privacy).  Used on its
own (outside PRSMA), a batch of ``size`` runs is ``size * eps'``-DP by composition.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp._validation import RandomLike, check_rng
from oracledp.classes.base import LossClass, QueryClass, WeightedOracle
from oracledp.classes.boolean import MonotoneConjunctions
from oracledp.classes.mip import make_class_oracle
from oracledp.diagnostics import research_diagnostics
from oracledp.learners.prsma import FAIL, prsma, prsma_cost

__all__ = [
    "ADULT_INDICATORS",
    "ClassRSPMBase",
    "adult_binary_features",
    "prsma_adult_conjunctions",
]

_ORACLE_KINDS = ("highs", "brute")


class ClassRSPMBase:
    """PRSMA base: Laplace RSPM over the 0/1-loss class of ``query_class`` (picklable).

    Parameters
    ----------
    query_class:
        A hypothesis class ``H`` (its 0/1-loss class is used), or a
        :class:`~oracledp.classes.LossClass` directly.
    oracle:
        ``"highs"`` (exact MIP, one solve per run), ``"brute"`` (enumeration: the class
        and its separator patterns are tabulated once, the data loss once per part, and
        the ``size`` runs are an argmin over a ``(size, |Q|)`` matrix), or a
        :class:`~oracledp.classes.WeightedOracle` instance built for the loss class
        (one ``solve`` per run).

    Call
    ----
    ``base(part_data, eps_prime, rng, size)`` with ``part_data`` either a tuple
    ``(Z, y)`` of records (encoded by the class) and 0/1 labels, or an array of loss
    points ``loss_class.encode(Z, y)`` (label in the last column; what PRSMA passes
    when it splits such an array).  Returns a ``(size, param_dim)`` int64 array of
    hypothesis parameters, or :data:`FAIL` if any oracle answer was not certified.

    Privacy: each run is eps'-DP given an exact oracle (Theorem 6); with PRSMA the
    composite is (eps, delta)-DP for every oracle behaviour (Theorem 8).  The noise of
    all ``size`` runs is drawn up front as ``rng.laplace(0, 2m/eps', (size, m))``, so
    the ``"brute"`` path and the oracle-instance path give the same outputs from the
    same generator state (up to floating-point near-ties).
    """

    def __init__(self, query_class: QueryClass, oracle: str | WeightedOracle = "highs") -> None:
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
        self.separator: NDArray[np.float64] = loss.separator()
        self.m = int(self.separator.shape[0])
        self._params: NDArray[np.int64] | None = None
        self._patterns: NDArray[np.float64] | None = None
        if self.oracle_kind == "brute":
            self._params = loss.enumerate()
            self._patterns = loss._evaluate(self._params, self.separator).astype(np.float64)

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
        etas = rng.laplace(0.0, scale, size=(size, self.m))
        if self.oracle_kind == "brute":
            assert self._params is not None and self._patterns is not None
            data_loss = self.loss_class._evaluate(self._params, Z).sum(axis=1, dtype=np.float64)
            idx = (data_loss[None, :] + etas @ self._patterns.T).argmin(axis=1)
            return self._params[idx]
        orc = self._oracle_instance()
        pts = np.vstack([Z, self.separator])
        ones = np.ones(Z.shape[0])
        out = np.empty((size, self.loss_class.param_dim), dtype=np.int64)
        for r in range(size):
            res = orc.solve(pts, np.concatenate([ones, etas[r]]))
            if not res.certified or res.params is None:
                return FAIL  # certifiable-oracle contract: never release an uncertified answer
            out[r] = res.params
        return out


# ------------------------------------------------------------------ Adult demo
ADULT_INDICATORS: tuple[tuple[str, str], ...] = (
    ("sex=Male", "sex is Male"),
    ("race=White", "race is White"),
    ("marital-status=Married-civ-spouse", "marital-status is Married-civ-spouse"),
    ("relationship=Husband", "relationship is Husband"),
    ("age>=40", "age >= 40 (stored as age/90, read back as round(90 x) >= 40)"),
    ("hours-per-week>=40", "hours-per-week >= 40 (stored as hours/99, round(99 x) >= 40)"),
)
"""The 6 public binarization rules of the Adult demo (fixed constants, not fitted to data)."""

_ADULT_ATTRIBUTES = ["age", "hours-per-week", "marital-status", "relationship", "race", "sex"]


def adult_binary_features(split: str = "train") -> tuple[NDArray[np.float64],
                                                         NDArray[np.int64], list[str]]:
    """All records of an Adult split binarized by :data:`ADULT_INDICATORS`.

    Returns ``(Z, y, names)``: ``Z`` in {0,1}^{n x 6}, ``y = 1`` iff income ``>50K``,
    and the indicator names.  Uses every record (``balanced=False``), so no
    data-dependent row selection happens.
    """
    from oracledp.datasets.adult import load_adult

    ds = load_adult(split, balanced=False, attributes=_ADULT_ATTRIBUTES)
    col = {name: i for i, name in enumerate(ds.feature_names)}
    X = np.asarray(ds.X)
    Z = np.column_stack([
        X[:, col["sex=Male"]] == 1.0,
        X[:, col["race=White"]] == 1.0,
        X[:, col["marital-status=Married-civ-spouse"]] == 1.0,
        X[:, col["relationship=Husband"]] == 1.0,
        np.rint(X[:, col["age"]] * 90.0) >= 40,
        np.rint(X[:, col["hours-per-week"]] * 99.0) >= 40,
    ]).astype(np.float64)
    y = (np.asarray(ds.y) == 1).astype(np.int64)
    return Z, y, [name for name, _ in ADULT_INDICATORS]


def prsma_adult_conjunctions(epsilon: float = 1.0, delta: float = 0.1, d: int = 6,
                             rng: RandomLike = None, n_jobs: int = 1,
                             oracle: str = "brute") -> dict[str, Any]:
    """PRSMA + Laplace RSPM learning a monotone conjunction on UCI Adult (end-to-end demo).

    Features: the first ``d`` (1..6) indicators of :data:`ADULT_INDICATORS` (public
    rules), label ``income > 50K``, all 32,561 training records.  Class: monotone
    conjunctions over the indicators (2^d members, the empty one = constant 1).  Base:
    :class:`ClassRSPMBase` over the 0/1-loss class with the brute-force oracle by
    default: at (eps, delta) = (1, 0.1) PRSMA makes K R = 466,872 RSPM runs, far too
    many for one HiGHS MIP solve each (``oracle="highs"`` is accepted but slow), while
    enumeration of the 64 conjunctions is exact (so every answer is certified) and
    vectorized over the R runs of a part.

    Returns a dict: ``output`` (parameter row, or FAIL), ``failed``, ``conjunction``
    (list of indicator names, ``[]`` = constant 1, None on FAIL), ``test_accuracy``
    on the full ``adult.test`` split (None on FAIL), ``guarantee`` (robust
    (eps, delta)-DP, Theorem 8, covering ``output`` only), ``parameters`` (K, R, eps',
    ...), ``calls`` (base runs made), ``wall_time_s``, ``oracle``, ``features``,
    ``n_train``, ``n_test``, and ``nonprivate_best`` (the exact training-loss minimizer
    and its test accuracy: a NON-PRIVATE reference computed on the private data, for
    evaluation only; like ``calls`` and the other diagnostics it must not be published:
    the guarantee is marked ``diagnostics_released=True``).
    """
    t0 = time.perf_counter()
    if isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= len(ADULT_INDICATORS):
        raise ValueError(f"d must be an integer in 1..{len(ADULT_INDICATORS)}, got {d!r}")
    if oracle not in _ORACLE_KINDS:
        raise ValueError(f"oracle must be 'brute' or 'highs', got {oracle!r}")
    gen = check_rng(rng)
    Z, y, names = adult_binary_features("train")
    Zt, yt, _ = adult_binary_features("test")
    Z, Zt, names = Z[:, :d], Zt[:, :d], names[:d]
    cls = MonotoneConjunctions(d)
    loss = cls.zero_one_loss()
    data = loss.encode(Z, y)
    base = ClassRSPMBase(cls, oracle=oracle)
    with research_diagnostics():  # a research demo: it reports calls and time on purpose
        res = prsma(data, base, epsilon, delta, rng=gen, n_jobs=n_jobs,
                    max_calls=max(10**6, prsma_cost(data.shape[0], epsilon, delta)),
                    return_diagnostics=True)
    assert res.diagnostics is not None
    test_points = loss.encode(Zt, yt)

    def test_acc(p: NDArray[np.int64]) -> float:
        return float(1.0 - loss.evaluate(p, test_points)[0].mean())

    if res.failed:
        conj, acc = None, None
    else:
        p = np.asarray(res.output, dtype=np.int64)
        conj = [names[j] for j in np.flatnonzero(p)]
        acc = test_acc(p)
    allp = cls.enumerate()
    best = allp[int(np.argmin(loss.evaluate(allp, data).sum(axis=1)))]
    return {
        "output": res.output,
        "failed": res.failed,
        "conjunction": conj,
        "test_accuracy": acc,
        "guarantee": res.guarantee,
        "parameters": res.parameters,
        "calls": res.diagnostics["calls"],
        "wall_time_s": time.perf_counter() - t0,
        "prsma_time_s": res.diagnostics["time_total_s"],
        "oracle": oracle,
        "features": [dict(ADULT_INDICATORS)[n] for n in names],
        "n_train": int(data.shape[0]),
        "n_test": int(test_points.shape[0]),
        "nonprivate_best": {"conjunction": [names[j] for j in np.flatnonzero(best)],
                            "test_accuracy": test_acc(best)},
    }
