"""Comparing a synthetic table with the real one: :func:`evaluate_synthetic` (NOT private).

Both tables are checked against the schema and mapped to its public domain
(:class:`~oracledp.synth._table.TableDomain`, the same ``bins`` for both).  Reported:

* **marginal errors**: for each order j in ``orders`` (default 1, 2, 3), the total
  variation distance ``TV = 1/2 sum_cells |p_syn - p_real|`` between the two tables' j-way
  marginal distributions, its mean and max over every set of j attributes, or over a random
  subset of ``max_sets`` of them (drawn with ``random_state``; the result says which) when
  there are more;
* **classification**: scikit-learn ``LogisticRegression`` on the schema's encoding
  (:meth:`TableSchema.encode`) of the features, trained on the synthetic table and tested on
  the real one ("train synthetic, test real"), beside the same model's 5-fold
  cross-validated accuracy on the real table ("train real", out of sample) and the real
  table's majority-label rate.

The real table is read directly: these numbers are **not** differentially private and must
not be published as part of a private release.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp._validation import RandomLike, check_rng
from oracledp.synth._table import DEFAULT_BINS, BinsLike, TableDomain

__all__ = ["NON_PRIVATE_NOTE", "evaluate_synthetic"]

NON_PRIVATE_NOTE = ("NOT private: this evaluation reads the real table directly; its numbers "
                    "are not differentially private and must not be published with the "
                    "synthetic data.")


def _read(data: Any, schema: Any, sep: str, what: str) -> pd.DataFrame:
    from oracledp.tabular import read_csv

    if isinstance(data, pd.DataFrame):
        if len(data) == 0:
            raise ValueError(f"the {what} table has no rows")
        schema.check(data, with_target=True)
        return data
    if isinstance(data, (str, Path)):
        return read_csv(data, schema, sep=sep, with_target=True)
    raise TypeError(f"the {what} table must be a DataFrame or a CSV path, got "
                    f"{type(data).__name__}")


def _marginal(codes: NDArray[np.int64], counts: NDArray[np.int64], axes: tuple[int, ...],
              shape: tuple[int, ...]) -> NDArray[np.float64]:
    sub = tuple(shape[a] for a in axes)
    idx = np.ravel_multi_index(tuple(codes[:, a] for a in axes), sub)
    m = np.bincount(idx, weights=counts, minlength=math.prod(sub))
    return m / m.sum()


def _logistic_scores(schema: Any, syn: pd.DataFrame, real: pd.DataFrame,
                     random_state: int) -> dict[str, float | None]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    features = [c.name for c in schema.columns]
    X_real = schema.encode(real[features])
    y_real = schema.labels_of(real)
    X_syn = schema.encode(syn[features])
    y_syn = schema.labels_of(syn)
    out: dict[str, float | None] = {}
    if len(set(y_syn)) < 2:  # one label only: the model predicts it
        out["train_synthetic_test_real"] = float(np.mean(y_real == y_syn[0]))
    else:
        clf = LogisticRegression(max_iter=2000).fit(X_syn, y_syn)
        out["train_synthetic_test_real"] = float(clf.score(X_real, y_real))
    _, per_label = np.unique(y_real, return_counts=True)
    folds = int(min(5, per_label.min())) if len(per_label) == 2 else 0
    if folds >= 2:
        cv = StratifiedKFold(folds, shuffle=True, random_state=random_state)
        out["train_real_cv"] = float(np.mean(cross_val_score(
            LogisticRegression(max_iter=2000), X_real, y_real, cv=cv)))
    else:
        out["train_real_cv"] = None
    out["majority_label_rate"] = float(per_label.max() / per_label.sum())
    return out


def evaluate_synthetic(synthetic: pd.DataFrame | str | Path, real: pd.DataFrame | str | Path,
                       schema: Any, *, bins: BinsLike = DEFAULT_BINS,
                       orders: tuple[int, ...] = (1, 2, 3), max_sets: int = 200,
                       random_state: RandomLike = 0, sep: str = ",",
                       synthetic_sep: str | None = None,
                       classifier: bool = True) -> dict[str, Any]:
    """Marginal errors and classification accuracy of a synthetic table against the real one.

    NOT private (module docstring).  Returns a dict: ``"non_private"`` (the note),
    ``"marginals"``: ``{j: {"mean_tv", "max_tv", "sets", "of", "sampled"}}``,
    ``"classification"``: ``{"train_synthetic_test_real", "train_real_cv",
    "majority_label_rate"}`` (absent with ``classifier=False``), ``"rows"``:
    ``{"synthetic", "real"}``.  ``sep`` is the delimiter of CSV files, ``synthetic_sep`` (if
    given) the synthetic file's (``oracledp synth sample`` writes commas).
    """
    from oracledp.synth._table_synthesizer import _load_schema

    schema = _load_schema(schema)
    if isinstance(max_sets, bool) or not isinstance(max_sets, int) or max_sets < 1:
        raise ValueError(f"max_sets must be an integer >= 1, got {max_sets!r}")
    tdom = TableDomain(schema, bins)
    d = len(tdom.domain)
    if not orders or any(isinstance(j, bool) or not isinstance(j, int) or not 1 <= j
                         for j in orders):
        raise ValueError(f"orders must be integers >= 1, got {orders!r}")
    syn = _read(synthetic, schema, sep if synthetic_sep is None else synthetic_sep,
                "synthetic")
    real = _read(real, schema, sep, "real")
    rng = check_rng(random_state)
    s_rows, s_counts = tdom.count(syn)
    r_rows, r_counts = tdom.count(real)
    shape = tdom.domain.shape
    marg: dict[int, dict[str, Any]] = {}
    for j in sorted(set(orders)):
        if j > d:
            continue
        total = math.comb(d, j)
        if total <= max_sets:
            sets = list(itertools.combinations(range(d), j))
        else:  # a uniform random subset of the j-sets, without listing them all
            seen: set[tuple[int, ...]] = set()
            while len(seen) < max_sets:
                seen.add(tuple(sorted(rng.choice(d, size=j, replace=False).tolist())))
            sets = sorted(seen)
        tv = np.array([0.5 * np.abs(_marginal(s_rows, s_counts, s, shape)
                                    - _marginal(r_rows, r_counts, s, shape)).sum()
                       for s in sets])
        marg[j] = {"mean_tv": float(tv.mean()), "max_tv": float(tv.max()), "sets": len(sets),
                   "of": total, "sampled": total > max_sets}
    out: dict[str, Any] = {"non_private": NON_PRIVATE_NOTE, "marginals": marg,
                           "rows": {"synthetic": len(syn), "real": len(real)}}
    if classifier:
        seed = int(rng.integers(2**31 - 1))
        out["classification"] = _logistic_scores(schema, syn, real, seed)
    return out
