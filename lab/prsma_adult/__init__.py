"""PRSMA + Laplace RSPM learning a monotone conjunction on UCI Adult: an end-to-end run.

The base algorithm is :class:`~oracledp.learners.ClassRSPMBase` (Laplace RSPM over
the 0/1-loss class of monotone conjunctions); :func:`~oracledp.learners.prsma` makes it
(eps, delta)-DP for any oracle behaviour (Neel, Roth, Wu, FOCS 2019, Theorem 8).  The features
are public rules on Adult's attributes (:data:`ADULT_INDICATORS`).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp import check_rng, research_diagnostics
from oracledp.learners import ClassRSPMBase, prsma, prsma_cost
from oracledp.query_classes import MonotoneConjunctions

__all__ = ["ADULT_INDICATORS", "adult_binary_features", "prsma_adult_conjunctions"]

ADULT_INDICATORS: tuple[tuple[str, str], ...] = (
    ("sex=Male", "sex is Male"),
    ("race=White", "race is White"),
    ("marital-status=Married-civ-spouse", "marital-status is Married-civ-spouse"),
    ("relationship=Husband", "relationship is Husband"),
    ("age>=40", "age >= 40 (stored as age/90, read back as round(90 x) >= 40)"),
    ("hours-per-week>=40", "hours-per-week >= 40 (stored as hours/99, round(99 x) >= 40)"),
)
"""The 6 public binarization rules of the Adult demo (fixed constants, not fitted to data)."""

#: the oracles ClassRSPMBase takes by name
_ORACLE_KINDS = ("highs", "brute")

_ADULT_ATTRIBUTES = ["age", "hours-per-week", "marital-status", "relationship", "race", "sex"]


def adult_binary_features(split: str = "train") -> tuple[NDArray[np.float64],
                                                         NDArray[np.int64], list[str]]:
    """All records of an Adult split binarized by :data:`ADULT_INDICATORS`.

    Returns ``(Z, y, names)``: ``Z`` in {0,1}^{n x 6}, ``y = 1`` iff income ``>50K``,
    and the indicator names.  Uses every record (``balanced=False``), so no
    data-dependent row selection happens.
    """
    from oracledp.datasets import load_adult

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
                             random_state: int | np.random.Generator | None = None,
                             n_jobs: int = 1, oracle: str = "brute") -> dict[str, Any]:
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
    gen = check_rng(random_state)
    Z, y, names = adult_binary_features("train")
    Zt, yt, _ = adult_binary_features("test")
    Z, Zt, names = Z[:, :d], Zt[:, :d], names[:d]
    cls = MonotoneConjunctions(d)
    loss = cls.zero_one_loss()
    data = loss.encode(Z, y)
    base = ClassRSPMBase(cls, oracle=oracle)
    with research_diagnostics():  # a research demo: it reports calls and time on purpose
        res = prsma(data, base, epsilon, delta, random_state=gen, n_jobs=n_jobs,
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
