"""Your own table as a synthesizer's domain: schema -> public domain -> counts -> values.

:class:`TableDomain` turns a :class:`~oracledp.tabular.TableSchema` into the public categorical
:class:`~oracledp.synth.Domain` the synthesizers work on, from the schema alone (nothing is
read from the data):

* a **categorical** column keeps its declared levels, in order; with ``"missing": "level"``
  one more level ``(missing)`` (last);
* a **numeric** column with a grid (``lower``, ``upper``, ``step``: grid points
  ``lower + k step``, k = 0..K) is cut into public bins of consecutive grid points: ``bins``
  equal shares of the K + 1 points (bin of point k: ``floor(k b / (K + 1))``, b = min(bins,
  K + 1), so a grid of at most ``bins`` points keeps one bin per point), or, for a column
  given cut points in ``bins={"col": [c1, c2, ...]}``, the grid points below ``c1``, in
  ``[c1, c2)``, ...; bins holding no grid point are dropped.  The schema can declare a
  column's bins itself (``"synth_bins"``: a count or cut points); an entry of a ``bins``
  mapping overrides it, a ``bins`` count applies only to the columns without one;
* a **numeric** column with thermometer ``bins`` (cut points) in the schema keeps them:
  bins ``[lower, c1), [c1, c2), ..., [cB, upper]``;
* the **target**, if the schema has one, is one more attribute, its two declared labels as
  levels (last); a schema without a target (``"target": null``) has only its columns;
* the intercept and ``row_divisor`` (model-only encoding) play no part.

Mapping back (:meth:`TableDomain.decode`, post-processing of a release): a categorical code
becomes its declared level; a grid bin becomes one of its grid points drawn uniformly
(``lower + k step``, so an integer grid stays integers, rounded to the step's decimals); a
thermometer bin a number drawn uniformly in its interval; ``(missing)`` an empty cell.
Output types follow the declaration: levels all written as plain integers come back as
integers, levels all written as Python writes floats (``1.5``, ``2.0``) as floats, other
levels as the declared strings (``01`` stays ``01``); a grid whose
``lower`` and ``step`` are whole numbers as integers, other numeric columns as floats
(pandas' nullable ``Int64`` where a missing level can occur).

Counting (:meth:`TableDomain.count`): the records are checked against the schema (every
refusal of :func:`~oracledp.tabular.read_aggregated`: one
:class:`~oracledp._errors.TableInputError` for a file-level problem, one
:class:`~oracledp._errors.BoundsViolation` listing every violation by column and rule, never a
value, a row or a count), encoded and reduced to the distinct domain rows with their record
counts, one CSV chunk at a time: memory holds one chunk and the distinct rows (at most the
domain's size), whatever the number of records.  The synthesizers read only these counts.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp._validation import RandomLike, check_rng
from oracledp.synth._domain import Domain
from oracledp.tabular._columns import Column, as_numbers, number_text

__all__ = ["DEFAULT_BINS", "MISSING_LEVEL", "TableDomain"]

#: Default number of public bins of a gridded numeric column.
DEFAULT_BINS = 10

#: The level naming a missing cell, in a column whose schema declares ``"missing": "level"``.
MISSING_LEVEL = "(missing)"

BinsLike = int | Mapping[str, int | Sequence[float]]


def _decimals(*values: float) -> int:
    """Decimal places enough to write every value exactly (at most 12), up to a few units in
    the last place of its float and well below a unit of the last decimal (0.1 + 0.2 has 1;
    100000000.00005 has 5, not the 4 a tolerance relative to its size gave, whose labels then
    collided; 6444157816.44335 has 5).

    >>> _decimals(0.1 + 0.2), _decimals(100000000.00005, 0.0001), _decimals(3.0), _decimals(1e-7)
    (1, 5, 0, 7)
    >>> _decimals(6444157816.44335), _decimals(-5226196859.86349)
    (5, 5)
    """
    out = 0
    for v in values:
        for d in range(13):
            if abs(round(v, d) - v) <= min(64 * np.spacing(abs(v)), 1e-3 * 10.0**-d):
                out = max(out, d)
                break
        else:
            out = 12
    return out


def _typed(levels: tuple[str, ...]) -> tuple[NDArray[Any], str]:
    """The declared levels in their written type, and the type's name: "int" when every
    level is written as a plain integer (``7``, ``-3``), "float" when every level is written
    as Python writes its float (``1.5``, ``2.0``), otherwise "str": the levels exactly as
    declared (``01``, ``+1``, ``1.50`` or a mix of ``1.5`` and ``2`` come back as written)."""
    x = as_numbers(levels)
    if not np.isnan(x).any():
        texts = [str(v).strip() for v in levels]
        if np.all(np.abs(x) < 2**53) and all(
                float(v).is_integer() and t == str(int(v)) for t, v in zip(texts, x, strict=True)):
            return x.astype(np.int64), "int"
        if all(t == repr(float(v)) for t, v in zip(texts, x, strict=True)):
            return x, "float"
    arr = np.empty(len(levels), dtype=object)
    arr[:] = list(levels)
    return arr, "str"


@dataclass(frozen=True, eq=False)
class _Attr:
    """One attribute of the domain: how schema codes map to it and how it maps back."""

    name: str
    kind: str  # "categorical", "grid", "interval", "target"
    labels: tuple[str, ...]  # the Domain's levels (missing level last, if any)
    code_map: NDArray[np.int64]  # schema code -> domain code
    missing: bool
    values: NDArray[Any] | None = None  # categorical/target: typed levels
    vtype: str = "str"
    first: NDArray[np.int64] | None = None  # grid: first and last grid index of each bin
    last: NDArray[np.int64] | None = None
    lower: float = 0.0
    step: float = 1.0
    decimals: int = 0
    edges: NDArray[np.float64] | None = None  # interval: bin edges (B + 2 of them)
    # grid refined at fine resolution: (first grid index of each fine bin, their probabilities)
    within: tuple[NDArray[np.int64], NDArray[np.float64]] | None = None


class TableDomain:
    """The public domain of a :class:`~oracledp.tabular.TableSchema` (module docstring).

    Parameters
    ----------
    schema:
        The table schema; only its declarations are used.
    bins:
        Public bins of the gridded numeric columns: a count for those whose schema entry
        declares no ``synth_bins`` (default :data:`DEFAULT_BINS`), or a mapping
        ``column -> count or cut points`` (overriding ``synth_bins``; the other gridded
        columns get their ``synth_bins`` or the default count).  Thermometer columns keep
        the schema's bins.

    Attributes: ``schema``, ``bins`` (as given), ``domain`` (the :class:`Domain`), ``attrs``.

    >>> from oracledp.tabular import TableSchema
    >>> from oracledp.tabular._columns import Column
    >>> s = TableSchema((Column("age", "numeric", lower=0, upper=99, step=1),
    ...                  Column("sex", "categorical", levels=("f", "m"))), "y", ("no", "yes"))
    >>> TableDomain(s, bins=4).domain.levels[0]
    ('[0, 24]', '[25, 49]', '[50, 74]', '[75, 99]')
    """

    def __init__(self, schema: Any, bins: BinsLike = DEFAULT_BINS,
                 within: Mapping[str, tuple[Any, Any]] | None = None) -> None:
        from oracledp.tabular import TableSchema

        if not isinstance(schema, TableSchema):
            raise TypeError(f"schema must be a TableSchema, got {type(schema).__name__}")
        per_column, default = _check_bins(bins, schema)
        fine = _check_within(within, schema)
        attrs: list[_Attr] = []
        for c in schema.columns:
            if c.kind == "unresolved":
                raise ValueError(f"column {c.name!r}: its type is unresolved; declare it or "
                                 "remove it from the schema")
            own = c.synth_bins  # the schema's declared synthesis bins, if any
            spec = per_column.get(c.name, default if own is None else own)
            attrs.append(_attr_of(c, spec, fine.get(c.name)))
        if schema.has_target:
            values, vtype = _typed(schema.labels)
            attrs.append(_Attr(schema.target, "target", tuple(schema.labels),
                               np.arange(2, dtype=np.int64), False, values, vtype))
        self.schema = schema
        self.bins = bins
        self.within = fine
        self.attrs = tuple(attrs)
        self.domain = Domain(tuple(a.name for a in attrs), tuple(a.labels for a in attrs))

    def __repr__(self) -> str:
        return f"TableDomain({len(self.attrs)} attributes, {self.domain.size:,} cells)"

    @property
    def columns(self) -> list[str]:
        """The output columns: the schema's columns in order, then the target (if any)."""
        return list(self.domain.attributes)

    def bins_spec(self) -> dict[str, Any]:
        """The bins as JSON (the count, or the column -> count/cut points mapping)."""
        if isinstance(self.bins, Mapping):
            return {"default": DEFAULT_BINS,
                    "columns": {k: (v if isinstance(v, int) else [float(x) for x in v])
                                for k, v in self.bins.items()}}
        return {"default": int(self.bins), "columns": {}}

    @staticmethod
    def bins_from_spec(spec: Any) -> BinsLike:
        if not isinstance(spec, dict) or set(spec) != {"default", "columns"}:
            raise ValueError("'bins' must be an object with 'default' and 'columns'")
        if spec["columns"]:
            return dict(spec["columns"])
        return int(spec["default"])

    # --- schema codes -> domain codes --------------------------------------------------------

    def _map(self, codes: NDArray[np.int64], y_idx: NDArray[np.integer] | None
             ) -> NDArray[np.int64]:
        """Domain codes from the schema's codes and label indices (ignored without a target)."""
        out = np.empty((codes.shape[0], len(self.attrs)), dtype=np.int64)
        k = codes.shape[1]  # the schema's columns; the target, if any, is attribute k
        for j, a in enumerate(self.attrs[:k]):
            out[:, j] = a.code_map[codes[:, j]]
        if len(self.attrs) > k:
            assert y_idx is not None
            out[:, k] = y_idx
        return out

    def _scan(self, df: pd.DataFrame, ignore_extra: bool, clipped: set[str],
              found: dict[tuple[int, int], str] | None = None) -> NDArray[np.int64] | None:
        items, codes, y_idx = self.schema._scan(df, with_target=True, codes=True,
                                                ignore_extra=ignore_extra, clipped=clipped)
        if found is not None:
            found.update(items)
            if found:
                return None
        elif items:
            from oracledp.tabular._cells import _table_violation

            raise _table_violation([m for _, m in sorted(items)])
        if codes is None or (self.schema.has_target and y_idx is None):
            return None
        return self._map(codes, y_idx)

    def encode(self, df: pd.DataFrame, *, ignore_extra: bool = True) -> NDArray[np.int64]:
        """Every record of ``df`` (schema columns and target) as a row of domain codes.

        Refused before anything else (one BoundsViolation by column and rule, no value, row or
        count): anything the schema refuses in training.
        """
        from oracledp.tabular._cells import warn_clipped

        _check_frame(df)
        clipped: set[str] = set()
        out = self._scan(df, ignore_extra, clipped)
        assert out is not None
        warn_clipped(clipped)
        return out

    def count(self, data: Any, *, sep: str = ",", ignore_extra: bool = True,
              verbose: Any = False, engine: str = "duckdb", scheduler: str | None = None,
              ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """``(rows, counts)``: the distinct domain rows of ``data`` and how many records have
        each, rows in lexicographic order.

        ``data``: whatever :func:`oracledp.tabular.read_aggregated` reads (a CSV or Parquet
        path, a directory or glob of Parquet files, a pandas or Polars DataFrame, an Arrow
        table), counted in one pass of the data engine (``engine``, ``scheduler`` as there):
        memory grows with the distinct rows.  ``verbose`` reports the reading's progress as
        :func:`oracledp.tabular.read_csv` does.  Every refusal comes after the whole input
        was checked and lists every problem.
        """
        from oracledp.tabular._aggregated import read_aggregated
        from oracledp.tabular._engine import merge_columns

        if isinstance(data, pd.DataFrame):
            _check_frame(data)
        elif not isinstance(data, (str, Path)) and type(data).__module__.split(".")[0] not in (
                "pyarrow", "polars"):
            raise TypeError("data must be a pandas or Polars DataFrame, an Arrow table or the "
                            f"path of a CSV or Parquet file, got {type(data).__name__}")
        table = read_aggregated(data, self.schema, sep=sep, ignore_extra=ignore_extra,
                                verbose=verbose, engine=engine, scheduler=scheduler)
        # each distinct row once per label it carries (label 0's rows first), as domain
        # codes: mapped one column at a time and merged through packed keys, never the
        # whole int64 matrix (memory: a few int64 per row; 100 M records, ~10 M such rows)
        codes, per_label = table.codes, table.counts
        del table
        has = per_label > 0
        index = np.concatenate([np.flatnonzero(has[:, k]) for k in range(has.shape[1])])
        label = np.concatenate([np.full(int(has[:, k].sum()), k, dtype=np.int64)
                                for k in range(has.shape[1])])
        weights = np.concatenate([per_label[has[:, k], k] for k in range(has.shape[1])])
        del has, per_label
        m = len(self.attrs)
        ncol = codes.shape[1]  # the schema's columns; the target, if any, is attribute ncol

        def column(j: int) -> NDArray[np.int64]:
            return label if j == ncol else self.attrs[j].code_map[codes[index, j]]

        return merge_columns(column, m, weights,
                             lambda: self._map(codes[index], label))

    # --- domain codes -> values (post-processing) ---------------------------------------------

    def decode(self, codes: NDArray[np.integer], random_state: RandomLike = None, *,
               sampler: str = "rounded") -> pd.DataFrame:
        """Records in the schema's columns and types from domain codes (module docstring).

        Grid and interval bins draw their value with ``random_state`` (post-processing).  With
        ``sampler="rounded"`` (the default, as in :meth:`TableSynthesizer.sample
        <oracledp.synth.TableSynthesizer.sample>`) a gridded column's fine bins are dealt to the
        records of each coarse bin by systematic sampling (counts within one of their expected
        values, every record alone drawn with the fine histogram's law;
        :mod:`oracledp.synth._sampling`); ``sampler="iid"`` draws each record's value alone.
        """
        from oracledp.synth._sampling import check_sampler

        check_sampler(sampler)
        arr = self.domain.check_codes(codes)
        rng = check_rng(random_state)
        out: dict[str, Any] = {}
        for j, a in enumerate(self.attrs):
            out[a.name] = _decode_column(a, arr[:, j], rng, sampler == "rounded")
        return pd.DataFrame(out, columns=self.columns)


def _check_frame(df: Any) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame with named columns, got "
                        f"{type(df).__name__}")
    if len(df) == 0:
        raise ValueError("the table has no rows; there is nothing to synthesize from")


def _check_bins(bins: Any, schema: Any, auto: bool = False) -> tuple[dict[str, Any], Any]:
    """``bins`` checked against the schema: (per-column entries, default count).  ``"auto"``
    (TableSynthesizer's default: chosen at fit from n and the budget) is the default
    count "auto" with ``auto=True``, else :data:`DEFAULT_BINS`."""
    if isinstance(bins, str) and bins == "auto":
        return {}, ("auto" if auto else DEFAULT_BINS)

    def count(v: Any, what: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or int(v) < 1:
            raise ValueError(f"{what} must be an integer >= 1, got {v!r}")
        return int(v)

    if not isinstance(bins, Mapping):
        return {}, count(bins, "bins")
    default: Any = "auto" if auto else DEFAULT_BINS
    cols = {c.name: c for c in schema.columns}
    out: dict[str, Any] = {}
    for name, v in bins.items():
        c = cols.get(name)
        if c is None and name == schema.target:
            raise ValueError(f"bins: {name!r} is the schema's target (its labels are its "
                             "bins); only gridded numeric columns are binned")
        if c is None:
            raise ValueError(f"bins: {name!r} is not a column of the schema")
        if c.kind != "numeric" or c.step is None:
            raise ValueError(f"bins: column {name!r} is not a gridded numeric column (only "
                             "those are binned here; a thermometer column keeps its schema "
                             "bins, a categorical column its levels)")
        if isinstance(v, np.ndarray) and v.ndim == 1:  # cut points as an array
            v = v.tolist()
        if isinstance(v, Sequence) and not isinstance(v, str):
            cuts = [float(x) for x in v]
            if not cuts or any(not math.isfinite(x) for x in cuts):
                raise ValueError(f"bins: column {name!r}: give at least one finite cut point")
            if any(b <= a for a, b in itertools.pairwise(cuts)):
                raise ValueError(f"bins: column {name!r}: cut points must be strictly "
                                 "increasing")
            if not (c.lower < cuts[0] and cuts[-1] <= c.upper):
                raise ValueError(f"bins: column {name!r}: cut points must lie in "
                                 f"({number_text(c.lower)}, {number_text(c.upper)}]")
            out[name] = tuple(cuts)
        else:
            out[name] = count(v, f"bins[{name!r}]")
    return out, default


def _check_within(within: Any, schema: Any
                  ) -> dict[str, tuple[NDArray[np.int64], NDArray[np.float64]]]:
    """``within`` checked against the schema: column -> (fine bins' first grid indices,
    their probabilities)."""
    if within is None:
        return {}
    if not isinstance(within, Mapping):
        raise TypeError("within must be a mapping column -> (starts, probabilities)")
    cols = {c.name: c for c in schema.columns}
    out = {}
    for name, pair in within.items():
        c = cols.get(name)
        if c is None or c.kind != "numeric" or c.step is None:
            raise ValueError(f"within: {name!r} is not a gridded numeric column of the schema")
        starts = np.asarray(pair[0])
        p = np.asarray(pair[1], dtype=np.float64)
        if (starts.ndim != 1 or p.shape != starts.shape or not len(starts)
                or not np.issubdtype(starts.dtype, np.integer)):
            raise ValueError(f"within: column {name!r}: starts and probabilities must be two "
                             "1-d arrays of the same length, starts integers")
        starts = starts.astype(np.int64)
        if starts[0] != 0 or np.any(np.diff(starts) <= 0) or starts[-1] > c.K:
            raise ValueError(f"within: column {name!r}: starts must increase from 0 and stay "
                             "on the grid")
        if not np.all(np.isfinite(p)) or np.any(p < 0):
            raise ValueError(f"within: column {name!r}: probabilities must be finite and >= 0")
        out[name] = (starts, p)
    return out


def _draw_within(a: _Attr, code: NDArray[np.int64], rng: np.random.Generator,
                 rounded: bool = False) -> NDArray[np.int64]:
    """Grid indices of records in coarse bins ``code``: a fine bin drawn with its probability
    (its share of grid points inside the coarse bin; ``rounded``: by systematic sampling over
    the bin's records in a random order), then a grid point uniformly inside (fine bin and
    coarse bin both), by coarse bin in increasing order."""
    assert a.within is not None and a.first is not None and a.last is not None
    starts, p = a.within
    K = int(a.last[-1])
    ends = np.append(starts[1:] - 1, K)
    out = np.empty(len(code), dtype=np.int64)
    for b in np.unique(code):
        rows = np.flatnonzero(code == b)
        lo_b, hi_b = int(a.first[b]), int(a.last[b])
        f0 = int(np.searchsorted(starts, lo_b, side="right")) - 1
        f1 = int(np.searchsorted(starts, hi_b, side="right")) - 1
        lo = np.maximum(starts[f0:f1 + 1], lo_b)
        hi = np.minimum(ends[f0:f1 + 1], hi_b)
        width = (hi - lo + 1).astype(np.float64)
        w = p[f0:f1 + 1] * width / (ends[f0:f1 + 1] - starts[f0:f1 + 1] + 1)
        if not w.sum() > 0:
            w = width
        if rounded:
            pos = (rng.random() + rng.permutation(len(rows))) / len(rows)
            f = np.minimum(np.searchsorted(np.cumsum(w / w.sum()), pos, side="right"),
                           len(w) - 1)
        else:
            f = rng.choice(len(w), size=len(rows), p=w / w.sum())
        k = lo[f] + np.floor(rng.random(len(rows)) * width[f]).astype(np.int64)
        out[rows] = np.minimum(k, hi[f])
    return out


def _missing_label(levels: tuple[str, ...]) -> str:
    return MISSING_LEVEL if MISSING_LEVEL not in levels else f"{MISSING_LEVEL}#"


def _attr_of(c: Column, bins: int | tuple[float, ...],
             within: tuple[NDArray[np.int64], NDArray[np.float64]] | None = None) -> _Attr:
    """The domain attribute of one schema column (module docstring)."""
    if c.kind == "categorical":
        levels = tuple(c.levels or ())
        values, vtype = _typed(levels)
        labels = levels + ((_missing_label(levels),) if c.missing_level else ())
        return _Attr(c.name, "categorical", labels, np.arange(len(labels), dtype=np.int64),
                     c.missing_level, values, vtype)
    assert c.lower is not None and c.upper is not None
    if c.step is None:  # thermometer: the schema's own bins
        cuts = np.array(c.bins or (), dtype=np.float64)
        edges = np.concatenate([[c.lower], cuts, [c.upper]])
        labels = tuple(f"[{number_text(lo)}, {number_text(hi)})"
                       for lo, hi in itertools.pairwise(edges[:-1]))
        labels += (f"[{number_text(edges[-2])}, {number_text(edges[-1])}]",)
        n = len(labels)
        code_map = np.arange(n + c.missing_level, dtype=np.int64)
        labels += (_missing_label(labels),) if c.missing_level else ()
        return _Attr(c.name, "interval", labels, code_map, c.missing_level, vtype="float",
                     edges=edges)
    K = c.K
    k = np.arange(K + 1)
    if isinstance(bins, tuple):
        grid = c.lower + k * c.step
        of = np.searchsorted(np.array(bins), grid + 1e-9 * c.step, side="right")
        _, of = np.unique(of, return_inverse=True)  # drop bins without a grid point
    else:
        b = min(bins, K + 1)
        of = (k * b) // (K + 1)
    of = of.astype(np.int64)
    nb = int(of.max()) + 1
    first = np.searchsorted(of, np.arange(nb), side="left").astype(np.int64)  # of: sorted
    last = np.searchsorted(of, np.arange(nb), side="right").astype(np.int64) - 1
    dec = _decimals(c.lower, c.step)
    integral = dec == 0 and abs(c.lower) < 2**53

    def value(i: int) -> str:
        return number_text(round(c.lower + i * c.step, dec))

    labels = tuple(value(int(f)) if f == g else f"[{value(int(f))}, {value(int(g))}]"
                   for f, g in zip(first, last, strict=True))
    code_map = np.concatenate([of, [nb]]) if c.missing_level else of
    labels += (_missing_label(labels),) if c.missing_level else ()
    return _Attr(c.name, "grid", labels, code_map, c.missing_level,
                 vtype="int" if integral else "float", first=first, last=last,
                 lower=float(c.lower), step=float(c.step), decimals=dec, within=within)


def _decode_column(a: _Attr, code: NDArray[np.int64], rng: np.random.Generator,
                   rounded: bool = False) -> Any:
    n_present = len(a.labels) - a.missing
    miss = code >= n_present
    safe = np.where(miss, 0, code)
    if a.kind in ("categorical", "target"):
        assert a.values is not None
        vals = a.values[safe]
    elif a.kind == "grid":
        assert a.first is not None and a.last is not None
        if a.within is not None:
            k = _draw_within(a, safe, rng, rounded)
        else:
            lo, hi = a.first[safe], a.last[safe]
            k = lo + np.floor(rng.random(len(code)) * (hi - lo + 1)).astype(np.int64)
            k = np.minimum(k, hi)
        x = a.lower + k * a.step
        vals = (np.round(x).astype(np.int64) if a.vtype == "int"
                else np.round(x, a.decimals))
    else:
        assert a.edges is not None
        lo, hi = a.edges[safe], a.edges[safe + 1]
        vals = lo + rng.random(len(code)) * (hi - lo)
        last = safe == len(a.edges) - 2
        vals = np.where(last, vals, np.minimum(vals, np.nextafter(hi, lo)))  # [lo, hi)
    if not miss.any() and not a.missing:
        return vals
    if a.vtype == "int":
        s = pd.array(vals, dtype="Int64")
        s[miss] = pd.NA
        return s
    if a.vtype == "float":
        return np.where(miss, np.nan, vals.astype(np.float64))
    obj = vals.astype(object)
    obj[miss] = None
    return obj
