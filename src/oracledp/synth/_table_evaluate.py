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

* **errors at the data's own resolution** (``"data_resolution"``), which no choice of the
  synthesizer's bins can hide.  Both tables are read through the schema exactly as a fit
  reads them (declared levels, number-like levels compared by value so that a cell ``01``
  is the level ``1``, missing cells as declared: a bin of their own with
  ``"missing": "level"``, the fill value with ``{"fill": ...}``; numbers clipped where the
  column declares it), so a real table compared with itself scores 0.  Every numeric column
  (a gridded one with its values put on its declared grid, the finest resolution any fit
  sees) is cut at the *real* table's quantiles (octiles by default; tied cut points merge,
  so a column that is 0 in 91 % of the rows keeps a bin of its own for 0; no bin above a
  cut at the declared upper bound, which no value can exceed) and every categorical column
  at its declared levels.  A column's ``bins`` counts these bins, plus one for missing
  cells only where the schema declares ``"missing": "level"``.  Reported: each column's
  1-way TV at those bins, each numeric column's Wasserstein-1 distance divided by its
  declared range (0: same distribution, 1: all mass moved across the whole range), its mean,
  range and values at :data:`EVALUATE_QUANTILES` beside the real ones (a tail cut or
  smeared shows there), and for a gridded one the share of the real values' most common
  value among the synthetic values (a count's zero, a heap; the smallest such value on a
  tie), and the mean and max 2-way TV at the same bins; beside two
  plain references computed from the real table: **exact independent marginals** (the 2-way
  TV between the real pairs and the products of their real 1-way marginals) and a
  **resample of the real rows** (as many rows as the synthetic table, drawn with
  replacement).  Pair by pair it counts the pairs where the synthetic table is closer than
  independent marginals, and among the **dependent pairs** (those whose real counts reject
  independence: Pearson's chi-square test at level 0.001, where its approximation holds)
  those where it is closer.  A synthesizer closer on none of the dependent pairs has learned
  nothing about them; a mean above the independent marginals' may still hide dependent pairs
  reproduced well, behind many pairs of independent columns (where independent marginals
  are exact).  One near the resample is as good as sampling noise allows.

The real table is read directly: these numbers are **not** differentially private and must
not be published as part of a private release.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp._validation import RandomLike, check_rng
from oracledp.synth._table import DEFAULT_BINS, BinsLike, TableDomain

__all__ = ["DATA_QUANTILES", "EVALUATE_QUANTILES", "NON_PRIVATE_NOTE", "evaluate_synthetic"]

#: Numeric columns are cut at the real table's quantiles k / DATA_QUANTILES (octiles).
DATA_QUANTILES = 8

#: The quantiles of each numeric column's values reported beside the real ones (a tail cut
#: or smeared shows at 1 % and 99 % where the octiles' bins cannot see it).
EVALUATE_QUANTILES = (0.01, 0.05, 0.5, 0.95, 0.99)

NON_PRIVATE_NOTE = ("NOT private: this evaluation reads the real table directly; its numbers "
                    "are not differentially private and must not be published with the "
                    "synthetic data.")


def _read(data: Any, schema: Any, sep: str, what: str) -> pd.DataFrame:
    from oracledp._errors import OracleDPError
    from oracledp.tabular import read_csv

    if isinstance(data, pd.DataFrame):
        from oracledp.tabular._cells import text_names

        if len(data) == 0:
            raise ValueError(f"the {what} table has no rows")
        data = text_names(data)  # names as text, as fit reads them (review 19)
        schema.check(data, with_target=True)
        return data
    if isinstance(data, (str, Path)):
        try:
            return read_csv(data, schema, sep=sep, with_target=True)
        except (OracleDPError, ValueError) as exc:  # say which of the two files it was
            name = str(data)  # as given, as the other commands' errors name a file
            msg = str(exc)
            if what == "synthetic":  # its delimiter has its own parameter
                msg = msg.replace("try sep=", "try synthetic_sep=")
            if not (type(exc) is ValueError or isinstance(exc, OracleDPError)):
                raise  # an exception type of another signature
            if (name in msg or Path(data).name in msg) and msg == str(exc):
                raise  # named already
            raise type(exc)(msg if name in msg or Path(data).name in msg
                            else f"the {what} table {name}: {msg}") from None
    raise TypeError(f"the {what} table must be a DataFrame or a CSV path, got "
                    f"{type(data).__name__}")


def _marginal(codes: NDArray[np.int64], counts: NDArray[np.int64], axes: tuple[int, ...],
              shape: tuple[int, ...]) -> NDArray[np.float64]:
    sub = tuple(shape[a] for a in axes)
    idx = np.ravel_multi_index(tuple(codes[:, a] for a in axes), sub)
    m = np.bincount(idx, weights=counts, minlength=math.prod(sub))
    return m / m.sum()


def _schema_codes(schema: Any, df: pd.DataFrame
                  ) -> tuple[NDArray[np.int64], NDArray[np.int64] | None]:
    """The cells of ``df`` read as a fit reads them (:meth:`TableSchema._scan`, also what
    :class:`TableDomain` counts): per schema column the level index of a categorical cell
    (declared levels, number-like ones by value), the grid index of a gridded number or the
    bin of a thermometer one, a missing cell as declared (``n_values`` with
    ``"missing": "level"``, the fill value's code with ``{"fill": ...}``); and the index of
    every label (None for a schema without a target)."""
    found, codes, y_idx = schema._scan(df, with_target=True, codes=True, clipped=set())
    if found or codes is None or (schema.has_target and y_idx is None):  # _read checked
        from oracledp.tabular._cells import _table_violation  # the table: not reached

        raise _table_violation([m for _, m in sorted(found)] or ["the table was not read"])
    return codes, None if y_idx is None else y_idx.astype(np.int64)


def _numbers(schema: Any, c: Any, s: pd.Series, code: NDArray[np.int64]
             ) -> NDArray[np.float64]:
    """The numbers a fit reads in the numeric column ``c`` (cells ``s``, schema codes
    ``code``), NaN for a missing cell of a column with ``"missing": "level"``: a gridded
    column's values on its grid (``lower + code step``: clipped, filled and rounded as
    every fit encodes them), a thermometer column's numbers as written (the fill value for a
    missing cell, clipped to the bounds where the column declares it)."""
    from oracledp.tabular._cells import _Cells

    present = code < c.n_values
    if c.step is not None:
        return np.where(present, c.lower + code * c.step, np.nan)
    cells = _Cells(s)
    _, miss, ok = schema._value_cells(c, cells)
    num = cells.per_row(pd.to_numeric(cells.raw, errors="coerce").to_numpy(
        dtype=float, na_value=np.nan))
    x = np.where(ok, num, np.nan)
    if c.missing == "fill":
        x = np.where(miss, float(c.fill), x)
    if c.lower is not None and c.upper is not None:
        x = np.clip(x, c.lower, c.upper)  # only a column declared "clip" has numbers outside
    return np.where(present, x, np.nan)


class _Codes(NamedTuple):
    """One column of both tables at the real data's resolution (:func:`_column_codes`)."""

    name: str
    kind: str  # "categorical", "numeric" or "target"
    real: NDArray[np.int64]  # each real row's bin
    synthetic: NDArray[np.int64]  # each synthetic row's bin
    size: int  # the bins
    w1: float | None = None  # numeric: Wasserstein-1 over the declared range
    means: tuple[float, float] | None = None  # numeric: (real, synthetic) means
    # numeric: (real min, real max, synthetic min, synthetic max, synthetic share outside
    # the real min..max)
    ranges: tuple[float, float, float, float, float] | None = None
    # numeric: the real and the synthetic values at EVALUATE_QUANTILES, and the real table's
    # most common value with its share among the real and among the synthetic values
    quantiles: tuple[list[float], list[float]] | None = None
    heap: tuple[float, float, float] | None = None


def _column_codes(schema: Any, real: pd.DataFrame, syn: pd.DataFrame, quantiles: int
                  ) -> list[_Codes]:
    """Each column (features, then the target) as bin codes of the real and the synthetic
    rows at the data's resolution (:class:`_Codes`: the codes, the bins, and for a numeric
    column its normalized W1, means, ranges and quantiles, and for a gridded one the real
    values' most common value and its shares).

    Both tables are read through the schema as a fit reads them (:func:`_schema_codes`), so
    a table compared with itself scores 0.  ``bins`` counts the bins a value allowed by the
    schema can fall in: a categorical column's declared levels, a numeric column's bins cut
    at the real quantiles (tied cuts merged, no bin above a cut at the declared upper bound),
    plus one for missing cells only where the schema declares ``"missing": "level"``; the
    target's two labels."""
    from scipy.stats import wasserstein_distance

    r_codes, r_y = _schema_codes(schema, real)
    s_codes, s_y = _schema_codes(schema, syn)
    out = []
    for i, c in enumerate(schema.columns):
        rc, yc = r_codes[:, i], s_codes[:, i]
        if c.kind != "numeric":  # categorical: the declared levels, then (missing)
            out.append(_Codes(c.name, "categorical", rc, yc, c.n_values + c.missing_level))
            continue
        rv = _numbers(schema, c, real[c.name], rc)
        yv = _numbers(schema, c, syn[c.name], yc)
        ok_r, ok_y = ~np.isnan(rv), ~np.isnan(yv)
        cuts = (np.unique(np.quantile(rv[ok_r], np.arange(1, quantiles) / quantiles,
                                      method="inverted_cdf"))
                if ok_r.any() else np.empty(0))
        if c.upper is not None:  # nothing lies above the upper bound: no bin there
            cuts = cuts[cuts < c.upper]
        k = len(cuts) + 1  # (-inf, c_1], (c_1, c_2], ..., (c_last, inf); missing: k
        rb = np.where(ok_r, np.searchsorted(cuts, np.where(ok_r, rv, 0.0)), k)
        yb = np.where(ok_y, np.searchsorted(cuts, np.where(ok_y, yv, 0.0)), k)
        w1 = None
        span = (c.upper - c.lower) if c.lower is not None and c.upper is not None else 0.0
        if ok_r.any() and ok_y.any() and span > 0:
            w1 = float(wasserstein_distance(rv[ok_r], yv[ok_y]) / span)
        means = ranges = qs = heap = None
        if ok_r.any() and ok_y.any():
            means = (float(rv[ok_r].mean()), float(yv[ok_y].mean()))
            lo, hi = float(rv[ok_r].min()), float(rv[ok_r].max())
            ys = yv[ok_y]
            ranges = (lo, hi, float(ys.min()), float(ys.max()),
                      float(((ys < lo) | (ys > hi)).mean()))
            qs = (np.quantile(rv[ok_r], EVALUATE_QUANTILES, method="inverted_cdf").tolist(),
                  np.quantile(ys, EVALUATE_QUANTILES, method="inverted_cdf").tolist())
            if c.step is not None:  # an interval column's values are drawn, never repeated
                values, counts = np.unique(rv[ok_r], return_counts=True)
                top = float(values[int(np.argmax(counts))])  # the smallest on a tie
                heap = (top, float(counts.max() / ok_r.sum()), float(np.mean(ys == top)))
        out.append(_Codes(c.name, "numeric", rb.astype(np.int64), yb.astype(np.int64),
                          k + c.missing_level, w1, means, ranges, qs, heap))
    if r_y is not None and s_y is not None:
        out.append(_Codes(schema.target, "target", r_y, s_y, len(schema.labels)))
    return out


def _tv(a: NDArray[np.int64], b: NDArray[np.int64], size: int) -> float:
    pa = np.bincount(a, minlength=size) / len(a)
    pb = np.bincount(b, minlength=size) / len(b)
    return float(0.5 * np.abs(pa - pb).sum())


#: _dependent: the level of the chi-square test of independence that calls a pair of the
#: real table dependent (a pair of independent columns is called so with this probability).
DEPENDENCE_LEVEL = 1e-3


def _dependent(counts: NDArray[np.int64]) -> bool:
    """Whether the real table's counts of a pair reject independence: Pearson's
    chi-square test (no continuity correction) at :data:`DEPENDENCE_LEVEL`, on the rows and
    columns that hold a record (fewer than two of either: not dependent), only where the
    test's approximation holds (Cochran's rule: every expected count at least 1, at most a
    fifth of them below 5); a sparser table is not called dependent (30 records of three
    columns had made a p-value of 0.0007 from expected counts of 0.07)."""
    from scipy.stats import chi2_contingency

    t = counts[counts.sum(axis=1) > 0][:, counts.sum(axis=0) > 0]
    if min(t.shape) < 2:
        return False
    _, p, _, expected = chi2_contingency(t, correction=False)
    if expected.min() < 1.0 or np.mean(expected < 5.0) > 0.2:
        return False
    return bool(p < DEPENDENCE_LEVEL)


def _data_resolution(schema: Any, real: pd.DataFrame, syn: pd.DataFrame, quantiles: int,
                     max_sets: int, rng: np.random.Generator) -> dict[str, Any]:
    cols = _column_codes(schema, real, syn, quantiles)
    d = len(cols)
    pairs = list(itertools.combinations(range(d), 2))
    total = len(pairs)
    if total > max_sets:
        pick = rng.choice(total, size=max_sets, replace=False)
        pairs = [pairs[i] for i in sorted(pick.tolist())]
    boot = rng.integers(0, len(real), size=len(syn))  # a resample of the real rows

    def joint(i: int, j: int, which: int, rows: Any = None) -> NDArray[np.int64]:
        a, b = ((cols[i].real, cols[j].real) if which == 0
                else (cols[i].synthetic, cols[j].synthetic))
        if rows is not None:
            a, b = a[rows], b[rows]
        return a * cols[j].size + b

    columns, one_way, one_boot = [], [], []
    for c in cols:
        tv = _tv(c.real, c.synthetic, c.size)
        one_way.append(tv)
        one_boot.append(_tv(c.real, c.real[boot], c.size))
        columns.append({"column": c.name, "kind": c.kind, "bins": c.size, "tv": tv,
                        **({"w1_over_range": c.w1} if c.kind == "numeric" else {}),
                        **({"mean_real": c.means[0], "mean_synthetic": c.means[1]}
                           if c.means is not None else {}),
                        **({"range_real": c.ranges[:2], "range_synthetic": c.ranges[2:4],
                            "outside_real_range": c.ranges[4]}
                           if c.ranges is not None else {}),
                        **({"quantiles": list(EVALUATE_QUANTILES),
                            "quantiles_real": c.quantiles[0],
                            "quantiles_synthetic": c.quantiles[1]}
                           if c.quantiles is not None else {}),
                        **({"most_common_real": c.heap[0], "most_common_share_real": c.heap[1],
                            "most_common_share_synthetic": c.heap[2]}
                           if c.heap is not None else {})})
    two, two_ind, two_boot, dep = [], [], [], []
    for i, j in pairs:
        size = cols[i].size * cols[j].size
        real_ij = joint(i, j, 0)
        two.append(_tv(real_ij, joint(i, j, 1), size))
        two_boot.append(_tv(real_ij, joint(i, j, 0, boot), size))
        counts_ij = np.bincount(real_ij, minlength=size)
        dep.append(_dependent(counts_ij.reshape(cols[i].size, cols[j].size)))
        p_real = counts_ij / len(real_ij)
        p_ind = np.outer(np.bincount(cols[i].real, minlength=cols[i].size),
                         np.bincount(cols[j].real, minlength=cols[j].size)).ravel() / len(
                             real_ij) ** 2
        two_ind.append(float(0.5 * np.abs(p_real - p_ind).sum()))
    worst = int(np.argmax(one_way))
    # pair by pair: where the table is closer than independent marginals, and which pairs
    # depend on each other beyond sampling noise (_dependent): a mean over many pairs of
    # independent columns, where independent marginals are exact, can hide what a table
    # reproduces of the dependent ones
    closer = [t < i for t, i in zip(two, two_ind, strict=True)]

    def summary(v: list[float]) -> dict[str, float]:
        return {"mean_tv": float(np.mean(v)), "max_tv": float(np.max(v))} if v else {}

    return {
        "quantiles": quantiles, "columns": columns,
        "one_way": {**summary(one_way), "worst_column": cols[worst][0]},
        "two_way": {**summary(two), "sets": len(pairs), "of": total,
                    "sampled": total > len(pairs),
                    "closer_than_independent": int(sum(closer)),
                    "dependent_pairs": int(sum(dep)),
                    "dependent_closer_than_independent": int(sum(
                        c and e for c, e in zip(closer, dep, strict=True)))},
        "references": {
            "independent_marginals": {"one_way": {"mean_tv": 0.0, "max_tv": 0.0},
                                      "two_way": summary(two_ind)},
            "resample_of_real_rows": {"one_way": summary(one_boot),
                                      "two_way": summary(two_boot)},
        },
    }


#: _logistic_scores: at most this many cells (rows x encoded features) of each table are
#: encoded for the classifier (a random subset of the rows beyond it): about 400 MB of float64.
CLASSIFIER_CELLS = 50_000_000


def _logistic_scores(schema: Any, syn: pd.DataFrame, real: pd.DataFrame,
                     random_state: int) -> dict[str, float | None]:
    """Train-on-synthetic / test-on-real and train-on-real cross-validated accuracy of a
    logistic regression on the schema's encoding.  Memory is bounded: a table with more than
    :data:`CLASSIFIER_CELLS` encoded cells is replaced by a random subset of its rows (seeded
    by ``random_state``; ``"classifier_rows"`` says how many rows of each were used), never
    fewer than 1,000 (so past 50,000 encoded features the bound is 1,000 rows, not the
    cells)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    most = max(1000, CLASSIFIER_CELLS // max(1, schema.n_features))
    pick = np.random.default_rng(random_state)
    if len(syn) > most:
        syn = syn.iloc[np.sort(pick.choice(len(syn), size=most, replace=False))]
    if len(real) > most:
        real = real.iloc[np.sort(pick.choice(len(real), size=most, replace=False))]
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
    out["classifier_rows"] = {"synthetic": len(syn), "real": len(real)}
    return out


def evaluate_synthetic(synthetic: pd.DataFrame | str | Path, real: pd.DataFrame | str | Path,
                       schema: Any, *, bins: BinsLike = DEFAULT_BINS,
                       orders: tuple[int, ...] = (1, 2, 3), max_sets: int = 200,
                       random_state: RandomLike = 0, sep: str = ",",
                       synthetic_sep: str | None = None,
                       classifier: bool = True,
                       quantiles: int = DATA_QUANTILES) -> dict[str, Any]:
    """Marginal errors and classification accuracy of a synthetic table against the real one.

    NOT private (module docstring).  Returns a dict: ``"non_private"`` (the note),
    ``"marginals"``: ``{j: {"mean_tv", "max_tv", "sets", "of", "sampled"}}``,
    ``"data_resolution"``: the errors at the real data's own resolution (``quantiles``: the
    numeric columns' cut points are the real table's quantiles ``k / quantiles``) with the
    two references (module docstring): ``{"quantiles", "columns": [{"column", "kind",
    "bins", "tv", "w1_over_range", "mean_real", "mean_synthetic" (numeric: the means of the
    values present), "range_real", "range_synthetic" (numeric: min and max of the values
    present: the real ones are record values, like every figure here not private),
    "outside_real_range" (numeric: the share of the synthetic values present outside the
    real min..max; W1 over a generous declared range can hide it), "quantiles",
    "quantiles_real", "quantiles_synthetic" (numeric: the values present at
    :data:`EVALUATE_QUANTILES`), "most_common_real", "most_common_share_real",
    "most_common_share_synthetic" (gridded numeric: the real values' most common one, a heap
    or a count's zero, the smallest on a tie, and its share among the real and the synthetic
    values present)}], "one_way": {"mean_tv", "max_tv", "worst_column"}, "two_way":
    {"mean_tv", "max_tv", "sets", "of", "sampled", "closer_than_independent",
    "dependent_pairs", "dependent_closer_than_independent"},
    "references": {"independent_marginals", "resample_of_real_rows"}}``,
    ``"classification"``: ``{"train_synthetic_test_real", "train_real_cv",
    "majority_label_rate", "classifier_rows"}`` (absent with ``classifier=False`` and for a
    schema without a target; the rows
    used, a random subset of a table whose encoding would exceed
    :data:`CLASSIFIER_CELLS` cells), ``"rows"``:
    ``{"synthetic", "real"}``, ``"ignored_columns"``: ``{"synthetic", "real"}``, each table's
    columns the schema does not name (read, not compared).  ``sep`` is the delimiter of CSV
    files, ``synthetic_sep`` (if given) the synthetic file's (``oracledp synth sample``
    writes commas).
    """
    from oracledp.synth._table_synthesizer import _load_schema

    schema = _load_schema(schema)
    if isinstance(max_sets, bool) or not isinstance(max_sets, int) or max_sets < 1:
        raise ValueError(f"max_sets must be an integer >= 1, got {max_sets!r}")
    if isinstance(quantiles, bool) or not isinstance(quantiles, int) or not 2 <= quantiles <= 100:
        raise ValueError(f"quantiles must be an integer in [2, 100], got {quantiles!r}")
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
    known = {c.name for c in schema.columns} | ({schema.target} - {None})
    out: dict[str, Any] = {"non_private": NON_PRIVATE_NOTE, "marginals": marg,
                           "data_resolution": {},
                           "rows": {"synthetic": len(syn), "real": len(real)},
                           "ignored_columns": {  # not in the schema: not compared
                               "synthetic": [str(c) for c in syn.columns if c not in known],
                               "real": [str(c) for c in real.columns if c not in known]}}
    if classifier and schema.has_target:
        seed = int(rng.integers(2**31 - 1))
        out["classification"] = _logistic_scores(schema, syn, real, seed)
    # last, so that the figures above draw what they drew before it existed
    out["data_resolution"] = _data_resolution(schema, real, syn, quantiles, max_sets, rng)
    return out
