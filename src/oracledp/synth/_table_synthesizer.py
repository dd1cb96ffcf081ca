"""Private synthetic data for your own table in one call: :class:`TableSynthesizer`.

``TableSynthesizer(method, epsilon=..., random_state=...).fit(data, schema)`` builds the public
domain of the schema (:class:`~oracledp.synth._table.TableDomain`: levels and grids, nothing
read from the data), reduces the records to the distinct rows with their counts (a CSV in
chunks), measures each gridded numeric column with more grid points than coarse bins as a
private fine histogram (:mod:`oracledp.synth._numeric`), cuts its coarse bins (at the
histogram's quantiles by default), runs one synthesizer of :mod:`oracledp.synth` on the coarse
counts with the rest of the budget and keeps its release; ``sample(n)`` draws records in the
schema's columns and types, numeric values from the fine histograms.  ``save(dir)`` writes the
released model only: the estimated distribution as a graphical model (log-potentials and
junction tree: the one model type every method's release is), the fine histograms, the
schema, the bins, the public
parameters and the guarantee.  No record, count of a record or seed.

Methods (:data:`METHODS`): ``"oracle-query-pgm"`` (default,
:class:`~oracledp.synth.OracleQueryPGM`), ``"mst"`` and ``"aim"``, ``"mwem"`` and
``"independent"`` (pure epsilon-DP baselines).  ``delta=None`` means ``1 / n^2`` for the
methods that need a delta (n, the number of records, is public under the replace-one
neighbouring every method here uses).

Privacy: the guarantee of the release is the composition of the fine histograms and the
synthesizer's measurements (``guarantee_``, per record, replace-one neighbours: zCDP for the
zCDP methods, basic composition for the pure ones; docs/proofs/numeric-histograms.md),
annotated with the schema's declared clipping; every synthetic dataset sampled from the
release, of any size and any number of times, is post-processing and has the same guarantee.
The levels and grids are public (the schema); the coarse bins are public when declared, or
chosen from n and the budget (``bins="auto"``) and cut at the measured quantiles: then they
are part of the release.  The default method then holds such a column on up to
:data:`~oracledp.synth._table_budget.MODEL_BINS` bins cut the same way, the budget's bins
being unions of them: each table with such a column is measured on the model's bins or on
the budget's, as its selection chooses (``pair_resolution="select"``), and the fine histogram
summed onto the model's bins is fitted as one more 1-way table (post-processing of the
released histogram).  ``options={"pair_resolution": "model"}`` holds the budget's bins only.
With the schema's ``records_per_person = k > 1`` the guarantee per
person is its group-privacy form (``guarantee_per_person_``).
"""

from __future__ import annotations

import inspect
import itertools
import json
import math
import numbers
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp._params import store_init_arguments
from oracledp._validation import RandomLike, check_choice, check_epsilon, check_rng
from oracledp.privacy._accountant import accounted_fit
from oracledp.privacy._composition import MIN_ZCDP_EPSILON, zcdp_rho
from oracledp.synth._oracle_query_pgm import DEFAULT_PAIR_RESOLUTION
from oracledp.synth._release import _Release
from oracledp.synth._table import DEFAULT_BINS, BinsLike, TableDomain, _decimals
from oracledp.synth._table_budget import (
    MODEL_BINS,
    _level_scale,
    _level_sigma,
    _Plan,
    _split_budget,
    afford,
    auto_bins,
    auto_fraction,
)

__all__ = ["METHODS", "TableSynthesizer"]

#: The synthesizers by name: (class path, needs delta).
METHODS: dict[str, tuple[str, bool]] = {
    "oracle-query-pgm": ("oracledp.synth._oracle_query_pgm:OracleQueryPGM", True),
    "mst": ("oracledp.synth._synthesizers:MSTSynthesizer", True),
    "aim": ("oracledp.synth._synthesizers:AIMSynthesizer", True),
    "mwem": ("oracledp.synth._synthesizers:MWEMSynthesizer", False),
    "independent": ("oracledp.synth._synthesizers:IndependentMarginalsSynthesizer", False),
}

MODEL_FORMAT = "oracledp.synth_model"
MODEL_VERSION = 3
"""The ``format_version`` that :meth:`TableSynthesizer.save` writes and
:meth:`TableSynthesizer.load` reads (2: ``"release": {"npz_sha256": ...}`` records the
SHA-256 of ``release.npz``; 3: ``"json_sha256"`` records the SHA-256 of the rest of the JSON,
:func:`_json_digest`); a file with another version is refused."""
MODEL_FILE = "synth-model.json"
RELEASE_FILE = "release.npz"
#: The key of ``synth-model.json``'s ``"release"`` that holds the SHA-256 (hex) of the bytes of
#: ``release.npz``; :meth:`TableSynthesizer.load` refuses a file whose bytes hash otherwise.
RELEASE_SHA256 = "npz_sha256"
#: The key of ``synth-model.json`` that holds the SHA-256 of the rest of the file's JSON.
JSON_SHA256 = "json_sha256"


def _json_digest(d: dict[str, Any]) -> str:
    """The SHA-256 (hex) of a model's JSON without its :data:`JSON_SHA256` entry, in one
    canonical form (sorted keys, no spaces, ASCII): a value changed by hand (the guarantee's
    epsilon, the method) no longer matches it.  Not a signature: it catches edits and
    damage, not a forger who recomputes it."""
    import hashlib

    body = {k: v for k, v in d.items() if k != JSON_SHA256}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()

_SYNTHETIC_NOTE = (
    "Every synthetic dataset sampled from this model, of any size and any number of times, "
    "has the same guarantee (sampling is post-processing of the release). The levels were "
    "declared in the schema, not read from the data")
_BINS_DECLARED = "; so were the numeric bins."
_BINS_MEASURED = ("; numeric columns were cut where their private histograms (part of the "
                  "release, inside the guarantee) put the quantiles.")


def _load_schema(schema: Any) -> Any:
    from oracledp.tabular import TableSchema

    if isinstance(schema, TableSchema):
        return schema
    if isinstance(schema, dict):
        return TableSchema.from_dict(schema)
    if isinstance(schema, (str, Path)):
        return TableSchema.load(schema)
    raise TypeError(f"schema must be a TableSchema, a dict or a path, got "
                    f"{type(schema).__name__}")


#: TableSynthesizer refuses a smaller epsilon before anything is read, for the pure methods
#: too (Laplace scales 2 d / epsilon): the zCDP methods' floor, :func:`zcdp_rho`'s.
MIN_EPSILON = MIN_ZCDP_EPSILON


#: guarantee_lines, where the schema's records_per_person is 1: a panel's person is protected
#: only per record unless the schema says how many records one person may have.
_ONE_RECORD_A_PERSON = ("; a person with several records (a panel) is protected per record "
                        "only: declare the schema's records_per_person to protect each person")


class TableSynthesizer:
    """Private synthetic data from a table and its public schema (module docstring).

    Parameters
    ----------
    method:
        One of :data:`METHODS` (default ``"oracle-query-pgm"``).
    epsilon, delta:
        The privacy budget of the release.  ``delta=None``: ``1/n^2`` for methods that need
        one; pure methods (``"mwem"``, ``"independent"``) take no delta.
    bins:
        Public bins of gridded numeric columns (see
        :class:`~oracledp.synth._table.TableDomain`): a count (default 10) or a mapping
        ``column -> count or cut points``.
    random_state:
        Seed or Generator of the noise (and of sampling after ``fit``, unless
        ``sample(random_state=...)``); never saved.
    options:
        Further keyword arguments of the method's class (e.g. ``{"k": 2}``).
    sep, verbose, engine, scheduler:
        How a path (CSV or Parquet) or a table is read: the CSV delimiter, progress on
        stderr, and the data engine (``"duckdb"``, default, or ``"dask"`` with the address of
        a running cluster or None for a local one; the same counts either way: see
        :func:`oracledp.tabular.read_aggregated`).
    ignore_extra:
        Leave out data columns the schema does not mention (default True, as
        :func:`oracledp.tabular.read_aggregated`); False refuses them (``oracledp synth
        fit`` does, unless ``--ignore-extra``).

    After :meth:`fit`: ``guarantee_``, ``guarantee_per_person_``, ``rho_`` (the zCDP budget
    the method spent per record, for the zCDP methods; None for the pure ones),
    ``table_domain_``, ``synthesizer_`` (the fitted synthesizer, in the process that fitted
    it), ``n_``.

    Examples
    --------
    >>> from oracledp.datasets import table_csv, table_schema
    >>> from oracledp.synth import TableSynthesizer
    >>> import tempfile, os
    >>> path = table_csv("titanic", os.path.join(tempfile.mkdtemp(), "t.csv"), split="all")
    >>> syn = TableSynthesizer(epsilon=1.0, random_state=0).fit(path, table_schema("titanic"))
    >>> syn.sample(3, random_state=1).columns.tolist()
    ['class', 'age', 'sex', 'survived']
    >>> syn.guarantee_.epsilon
    1.0
    """

    def __init__(self, method: str = "oracle-query-pgm", *, epsilon: float = 1.0,
                 delta: float | None = None, bins: BinsLike | str = "auto",
                 random_state: RandomLike = None, options: dict[str, Any] | None = None,
                 sep: str = ",", verbose: Any = False, engine: str = "duckdb",
                 scheduler: str | None = None,
                 ignore_extra: bool = True, bin_edges: str = "quantiles",
                 numeric_fraction: float | str = "auto") -> None:
        store_init_arguments(self, locals())

    def __repr__(self) -> str:
        return (f"TableSynthesizer(method={self.method!r}, epsilon={self.epsilon!r}, "
                f"delta={self.delta!r})")

    def _check_params(self) -> tuple[type, bool]:
        import importlib

        from oracledp._validation import check_delta

        method = check_choice(self.method, "method", METHODS)
        if check_epsilon(self.epsilon) < MIN_EPSILON:
            raise ValueError(f"epsilon {float(self.epsilon):g} is too small to compute with: "
                             f"below {MIN_EPSILON:g} the noise leaves floating-point range; "
                             "raise epsilon. Nothing was fitted")
        path, needs_delta = METHODS[method]
        if self.delta is not None:
            if not needs_delta:
                raise ValueError(f"method {method!r} is pure epsilon-DP: it takes no delta")
            check_delta(self.delta)
            if not zcdp_rho(float(self.epsilon), float(self.delta)) > 0.0:
                raise ValueError(f"delta {float(self.delta):g} is too small to compute with: "
                                 "ln(1/delta) leaves floating-point range; use a delta of at "
                                 "least 1e-300. Nothing was fitted")
        if self.options is not None and not isinstance(self.options, dict):
            raise TypeError("options must be a dict of keyword arguments")
        if not isinstance(self.ignore_extra, bool):
            raise TypeError(f"ignore_extra must be True or False, got {self.ignore_extra!r}")
        check_choice(self.bin_edges, "bin_edges", ("quantiles", "equal-width"))
        f = self.numeric_fraction
        if not (f == "auto" if isinstance(f, str) else (
                not isinstance(f, bool | np.bool_) and isinstance(f, numbers.Real)
                and 0.0 < f < 1.0)):
            raise ValueError(f"numeric_fraction must be 'auto' or in (0, 1), got {f!r}")
        for key in ("epsilon", "delta", "random_state"):
            if self.options and key in self.options:
                raise ValueError(f"options: pass {key} to TableSynthesizer itself")
        if (self.options or {}).get("neighbouring", "replace-one") != "replace-one":
            raise ValueError(
                "options: TableSynthesizer releases for replace-one neighbours only: it takes "
                "the number of records as public (for delta = 1/n^2, the bins the budget "
                "affords and the numeric histograms' total), which add-remove neighbours do "
                "not allow")
        module, name = path.split(":")
        return getattr(importlib.import_module(module), name), needs_delta

    def _make(self, cls: type, needs_delta: bool, d: int, epsilon: float, delta: float,
              rng: Any, extra: dict[str, Any] | None = None) -> Any:
        options = {**(self.options or {}), **(extra or {})}
        if "k" in inspect.signature(cls.__init__).parameters and "k" not in options:
            default = inspect.signature(cls.__init__).parameters["k"].default
            if isinstance(default, int) and default > d:
                options["k"] = d
        if needs_delta:
            return cls(epsilon, delta, random_state=rng, **options)
        return cls(epsilon, random_state=rng, **options)

    def _specs(self, schema: Any) -> dict[str, Any]:
        """Each gridded numeric column's coarse bins as asked (public): a count, cut points,
        or "auto" (a count chosen at fit from n and the budget, :func:`auto_bins`, for a grid
        of more than DEFAULT_BINS points; a smaller grid keeps one bin per point and needs no
        histogram: on biopsy's nine 10-point columns, 699 rows, tuning seeds 100-102, the
        histograms cost more than they gave, a native 2-way TV of 0.454 against 0.367 at
        epsilon 0.5 and 0.302 against 0.261 at 1: docs/results/synth-native-tuning/biopsy-*,
        from benchmarks/synth_native.py --tables biopsy --epsilons 0.5 1 --first-seed 100,
        with and without --set bins=2 numeric_fraction=0.2)."""
        from oracledp.synth._table import _check_bins

        per_column, default = _check_bins(self.bins, schema, auto=True)
        out: dict[str, Any] = {}
        for c in schema.columns:
            if c.kind == "numeric" and c.step is not None:
                own = c.synth_bins
                out[c.name] = per_column.get(c.name, default if own is None else own)
        return out

    @accounted_fit
    def fit(self, data: pd.DataFrame | str | Path, schema: Any) -> TableSynthesizer:
        """Check everything, count the records, run the method once; returns ``self``.

        Refused before any randomness (ValueError/TypeError, no record value, row index or
        count in a message): bad parameters, a schema with unconfirmed (``from_data``) or
        unresolved entries, a file that is empty, unreadable or wrongly delimited, and any
        value outside the schema (unknown level, number outside its bounds unless the column
        clips, missing cell without a missing policy).

        Gridded numeric columns with more grid points than coarse bins are first measured at
        fine resolution (:mod:`oracledp.synth._numeric`: ``numeric_fraction`` of the budget
        (``"auto"``: :func:`auto_fraction`),
        split equally among them); with ``bin_edges="quantiles"`` their coarse bins are cut
        at the measured quantiles, and sampling draws each value from the measured fine
        histogram.  The method runs on the coarse domain with the rest of the budget.
        ``numeric_`` then holds the plan (public), the ranges left out (``"emptied"``) and
        each histogram's noise per tree node (``"node_sd"``: a standard deviation in records;
        a range of a column holding fewer records than about twice that cannot be told from
        noise).
        """
        from oracledp.privacy import group_privacy
        from oracledp.privacy._accountant import begin_release

        for name in ("guarantee_", "guarantee_per_person_", "table_domain_", "synthesizer_",
                     "n_", "rho_", "_release", "_rng", "numeric_", "plan_"):
            self.__dict__.pop(name, None)
        cls, needs_delta = self._check_params()
        schema = _load_schema(schema)
        schema.check_confirmed()
        specs = self._specs(schema)
        fine_bins: dict[str, Any] = {}  # every gridded column at fine resolution, to count
        for c in schema.columns:
            if c.name in specs:
                fine_bins[c.name] = fine_bin_starts(c, specs[c.name], self.bin_edges)
        TableDomain(schema, self.bins)  # the public coarse domain must be valid
        fine_dom = TableDomain(schema, {name: _cuts(schema, name, starts)
                                        for name, starts in fine_bins.items()})
        rows, counts = fine_dom.count(data, sep=self.sep, verbose=self.verbose,
                                      ignore_extra=self.ignore_extra, engine=self.engine,
                                      scheduler=self.scheduler)
        n = int(counts.sum())
        delta = (self.delta if self.delta is not None else 1.0 / max(n, 2) ** 2
                 ) if needs_delta else 0.0
        epsilon = float(self.epsilon)
        rho = zcdp_rho(epsilon, delta) if needs_delta else None  # > 0: _check_params
        pure_rho = 0.5 * epsilon * epsilon  # the pure methods' bins rule (inf past ~1e154)
        chosen = auto_bins(n, rho if rho is not None else pure_rho)
        refined: dict[str, Any] = {}  # name -> its coarse bins: a count or cut points
        by_rule = 0  # refined columns whose count is the budget's choice
        # the default method may hold the budget's numeric columns on MODEL_BINS bins and
        # count their tables on the budget's coarser ones too (pair_resolution="select")
        two = (self.method == "oracle-query-pgm" and self.bin_edges == "quantiles"
               and (self.options or {}).get("pair_resolution",
                                             DEFAULT_PAIR_RESOLUTION) == "select")
        pair_bins = max(chosen, MODEL_BINS) if two else chosen
        grouped: dict[str, int] = {}  # name -> the coarser bins its tables may be counted on
        for c in schema.columns:
            spec = specs.get(c.name)
            if spec == "auto":  # a grid of at most DEFAULT_BINS points keeps one bin a point
                spec = chosen if c.K + 1 > DEFAULT_BINS else c.K + 1
                by_rule += c.K + 1 > DEFAULT_BINS
                if c.K + 1 > DEFAULT_BINS and pair_bins > chosen:
                    spec = min(pair_bins, c.K + 1)
                    grouped[c.name] = chosen
            if spec is None or (isinstance(spec, int) and c.K + 1 <= spec):
                continue  # not gridded, or every grid point a bin of its own: no histogram
            refined[c.name] = spec
        k = schema.records_per_person
        if k > 1:  # n is known now: refuse a vacuous per-person statement before any noise
            from oracledp.privacy._group import group_loss

            if not group_loss(float(self.epsilon), delta, k)[1] < 1.0:
                raise ValueError(
                    f"the guarantee per person (records_per_person = {k}) would be vacuous: "
                    f"group privacy turns epsilon {float(self.epsilon):g}, delta {delta:.3g} "
                    "per record into delta >= 1 per person; lower epsilon or delta, or the "
                    "schema's records_per_person. Nothing was fitted")
        fraction = (auto_fraction(n, rho if rho is not None else pure_rho,
                                  columns=len(refined), attributes=len(fine_dom.domain))
                    if self.numeric_fraction == "auto" else float(self.numeric_fraction))
        plan = _split_budget(epsilon, delta, rho, fraction, len(refined))
        shape = _coarse_shape(fine_dom, refined)  # an upper bound of the model's domain
        budget = ({"rho": zcdp_rho(plan.method_epsilon, delta)} if needs_delta
                  else {"epsilon": plan.method_epsilon})  # Gaussian or Laplace noise
        # what the budget affords is judged on the tables at the budget's bins
        self.plan_ = afford(n, _coarse_shape(fine_dom, {**refined, **grouped}), chosen,
                            columns=by_rule, names=[a.name for a in fine_dom.attrs],
                            fallback=self.method == "oracle-query-pgm",
                            pairs=self.method != "independent", **budget)
        extra: dict[str, Any] = {}
        if (self.plan_["one_way_only"] and self.method == "oracle-query-pgm"
                and not (self.options or {}).get("orders")):
            extra = {"orders": (1,)}  # the budget affords no pair table: 1-way measurements
        probe = self._make(cls, needs_delta, len(fine_dom.domain), plan.method_epsilon,
                           delta, None, extra)  # the method's own parameter checks, before noise
        probe.check_domain(tuple(shape), n)  # the method's limits on the domain, before noise
        del probe
        if callable(self.verbose):
            self.verbose("fitting", 0, None)
        elif self.verbose:
            import sys

            print(f"oracledp: fitting {self.method}", file=sys.stderr, flush=True)
        rng = check_rng(self.random_state)  # every check is done: randomness starts here
        begin_release(self, epsilon, delta, rng=rng, rho=rho, covers_inner=True)
        within, coarse_bins, maps, hist, plain, emptied, node_sd = self._measure_numeric(
            schema, fine_dom, rows, counts, refined, fine_bins, plan, rng, grouped)
        within = _fill_empty_bins(TableDomain(schema, coarse_bins), within, plain)
        tdom = TableDomain(schema, coarse_bins, within=within)
        rows, counts = _coarsen(fine_dom, tdom, rows, counts)
        synth = self._make(cls, needs_delta, len(tdom.domain), plan.method_epsilon, delta, rng,
                           extra)
        if maps:  # some columns held on more bins than the budget's (public, released)
            from oracledp.synth._estimation import MarginalMeasurement

            names = [a.name for a in tdom.attrs]
            # the fine histograms (released) summed onto the model's bins: what they say of
            # the columns' 1-way tables, at no further cost (post-processing)
            known = [MarginalMeasurement((names.index(k),), v, sd)
                     for k, (v, sd) in hist.items()]
            synth.fit(rows, tdom.domain, sample_weight=counts,
                      coarse={names.index(k): v for k, v in maps.items()}, released=known)
        else:
            synth.fit(rows, tdom.domain, sample_weight=counts)  # distinct rows, record counts
        del rows, counts
        self._release = _Release.of(synth, tdom.domain)
        self.synthesizer_ = synth
        self.table_domain_ = tdom
        self.n_ = n if synth.guarantee_.neighbouring == "replace-one" else None
        inner_rho = _spent_rho(synth) if needs_delta else None
        self.rho_ = None if inner_rho is None else inner_rho + plan.numeric_rho
        self.numeric_ = plan.describe(list(refined))
        self.numeric_["auto_bins"] = chosen
        if maps:  # held on more bins than the budget's: tables counted on either (public)
            self.numeric_["model_bins"] = pair_bins
        self.numeric_["fraction"] = fraction
        if emptied:  # post-processing: what far_tails left out, as declared values
            self.numeric_["emptied"] = emptied
        if node_sd:  # public: the noise of each histogram's tree nodes, from rho and the grid
            self.numeric_["node_sd"] = node_sd
        self.guarantee_ = schema.annotate_guarantee(plan.guarantee(synth.guarantee_, epsilon,
                                                                   list(refined)))
        self.guarantee_per_person_ = group_privacy(self.guarantee_, schema.records_per_person)
        self._rng = rng
        return self

    def _measure_numeric(self, schema: Any, fine_dom: TableDomain, rows: NDArray[np.int64],
                         counts: NDArray[np.int64], refined: dict[str, Any],
                         fine_bins: dict[str, NDArray[np.int64]], plan: _Plan,
                         rng: np.random.Generator, grouped: dict[str, int] | None = None,
                         ) -> tuple[dict[str, Any], Any, dict[str, tuple[int, ...]],
                                    dict[str, tuple[NDArray[np.float64], float]],
                                    dict[str, NDArray[np.float64]],
                                    dict[str, list[list[float]]], dict[str, float]]:
        """The fine histograms of the refined columns (noise drawn here): the shapes drawn
        within coarse bins, the coarse bins (``bins`` with each refined column's cut points),
        the model's maps and released 1-way tables, the plain estimates less the ranges
        :func:`~oracledp.synth._numeric.far_tails` emptied, and those ranges as ``[first,
        last]`` grid values, and the standard deviation of the noise of one tree node (public:
        from the budget and the grid), per column."""
        from oracledp.synth._numeric import (
            FLAT_KAPPA,
            cover_nodes,
            far_tails,
            quantile_starts,
            tree_histogram,
            tree_levels,
        )

        within: dict[str, Any] = {}
        coarse: dict[str, Any] = {}
        maps: dict[str, tuple[int, ...]] = {}
        released: dict[str, tuple[NDArray[np.float64], float]] = {}
        plain: dict[str, NDArray[np.float64]] = {}
        emptied: dict[str, list[list[float]]] = {}
        node_sd: dict[str, float] = {}
        names = [a.name for a in fine_dom.attrs]
        for c in schema.columns:
            if c.name not in refined:
                continue
            j = names.index(c.name)
            a = fine_dom.attrs[j]
            starts = fine_bins[c.name]
            m = len(starts)
            present = len(a.labels) - a.missing  # the missing level is not a grid bin
            codes = rows[:, j]
            # the tree's leaves are the grid's fine bins; a column's missing cells are
            # counted beside each level (``outside``: the root is n, public).  As one more
            # leaf they had shared the last nodes with the grid's top: the noise of its empty
            # bins there took the missing share and drew values near the upper bound
            # (declared 40-250, data to 167: 1.2 % of the values at 232-250 against 0.3 %
            # without a missing level)
            leaves = m
            true = np.bincount(np.minimum(codes, present), weights=counts,
                               minlength=m + a.missing)
            L = tree_levels(leaves)
            # the shape drawn within coarse bins is flattened where the noise hides it
            # (FLAT_KAPPA, level_test); the bins and the model's measurements use the plain
            # estimate
            widths = np.diff(np.append(starts, c.K + 1)).astype(np.float64)
            # a declared fill value is where the missing cells are: a heap the flattened
            # shape keeps where the noise shows it (public: the schema's value)
            heaps = (() if c.fill is None
                     else (int(np.searchsorted(starts, c.code_of(c.fill), side="right")) - 1,))
            shape_kw = {"flat": FLAT_KAPPA, "keep": m, "widths": widths, "heaps": heaps,
                        "outside": float(true[m]) if a.missing else None}
            if plan.numeric_rho_each is not None:
                out = tree_histogram(true[:m], rng,
                                     sigma=_level_sigma(L, plan.numeric_rho_each), **shape_kw)
            else:
                out = tree_histogram(true[:m], rng,
                                     laplace_scale=_level_scale(L, plan.numeric_eps_each),
                                     **shape_kw)
            est_all, flat_all = out
            sd = (_level_sigma(L, plan.numeric_rho_each) if plan.numeric_rho_each is not None
                  else math.sqrt(2.0) * _level_scale(L, plan.numeric_eps_each))
            node_sd[c.name] = float(sd)
            # a declared range far wider than the data: the noise far beyond the data's bulk
            # is emptied from what is drawn (far_tails); the coarse bins are cut from the
            # plain estimate as they were, less any that would lie wholly in that range
            far = far_tails(est_all[:m], widths, sd, leaves)
            est, shape, cut = est_all[:m], flat_all[:m], est_all[:m].copy()
            for h in (shape, cut) if far.any() else ():
                kept = float(h.sum())
                h[far] = 0.0
                if h.sum() > 0:
                    h *= kept / h.sum()
            plain[c.name] = cut
            if far.any():
                ends = np.append(starts[1:] - 1, c.K)  # each fine bin's last grid index
                runs = np.flatnonzero(np.diff(np.concatenate([[0], far.astype(int), [0]])))
                dec = _decimals(c.lower, c.step)
                emptied[c.name] = [[round(c.lower + int(starts[i]) * c.step, dec),
                                    round(c.lower + int(ends[j - 1]) * c.step, dec)]
                                   for i, j in zip(runs[::2], runs[1::2], strict=True)]
            within[c.name] = (starts, shape / shape.sum() if shape.sum() > 0
                              else (~far) / float((~far).sum()))
            spec = refined[c.name]
            if isinstance(spec, tuple) or self.bin_edges == "equal-width":
                coarse[c.name] = spec
            else:
                q = quantile_starts(est, int(spec))
                if far.any():  # no coarse bin wholly in an emptied range
                    lo = int(np.argmin(far)) if far[0] else 0  # the first bin kept
                    hi = m - int(np.argmin(far[::-1])) if far[-1] else m  # after the last
                    q = q[(q == 0) | ((q > lo) & (q < hi))]
                coarse[c.name] = tuple(round(float(c.lower + starts[i] * c.step),
                                             _decimals(c.lower, c.step)) for i in q[1:]) or 1
                if grouped and c.name in grouped and len(q) > grouped[c.name]:
                    mass = np.add.reduceat(est, q)
                    lo = quantile_starts(mass, grouped[c.name])
                    code = (np.searchsorted(lo, np.arange(len(q)), side="right") - 1).tolist()
                    if a.missing:
                        code.append(max(code) + 1)
                    maps[c.name] = tuple(int(v) for v in code)
                    if plan.numeric_rho_each is not None:  # Gaussian: the model's own bins
                        edges = [*q.tolist(), m] + ([m + 1] if a.missing else [])
                        # nodes a bin's count sums: the fewer of its cover and its
                        # complement's (n less the rest), that one with a missing level plus
                        # the missing count (the mean of L measurements: within one node's
                        # noise); the missing cell itself: one
                        nodes = max(1 if lo_ >= m else
                                    min(len(cover_nodes(lo_, hi_, m)),
                                        len(cover_nodes(0, lo_, m))
                                        + len(cover_nodes(hi_, m, m)) + a.missing)
                                    for lo_, hi_ in itertools.pairwise(edges))
                        counts_ = np.add.reduceat(est_all, np.array(edges[:-1]))
                        released[c.name] = (counts_, _level_sigma(L, plan.numeric_rho_each)
                                            * math.sqrt(max(nodes, 1)))
        for c in schema.columns:  # the other gridded columns: one bin per grid point
            if c.kind == "numeric" and c.step is not None and c.name not in coarse:
                coarse[c.name] = c.K + 1
        return within, coarse, maps, released, plain, emptied, node_sd

    def _check_fitted(self) -> None:
        if not hasattr(self, "_release"):
            raise RuntimeError("call fit(data, schema) first (or TableSynthesizer.load(dir))")

    @property
    def schema_(self) -> Any:
        self._check_fitted()
        return self.table_domain_.schema

    def guarantee_in_plain_words(self) -> str:
        """The guarantee of every synthetic dataset sampled from the release, in plain words
        (per person under the schema's ``records_per_person``)."""
        self._check_fitted()
        measured = bool((getattr(self, "numeric_", None) or {}).get("columns"))
        return (f"{self.guarantee_per_person_.in_plain_words()} {_SYNTHETIC_NOTE}"
                + (_BINS_MEASURED if measured else _BINS_DECLARED))

    def guarantee_lines(self) -> list[str]:
        """The guarantee as short exact lines: what is protected, epsilon and delta, zCDP rho
        (zCDP methods), the neighbouring relation, per person under ``records_per_person``,
        and that the synthetic data keep it while an evaluation against real data does not.
        """
        self._check_fitted()
        g, k = self.guarantee_, self.table_domain_.schema.records_per_person
        kind = "pure" if g.delta == 0 else "approximate"
        rho = getattr(self, "rho_", None)
        zc = "" if rho is None else f"; {rho:.6g}-zCDP"
        who = ("each record" if k == 1 else
               f"each person (up to {k} records: records_per_person)")
        relation = ("the same number of records, one record replaced"
                    if g.neighbouring == "replace-one" else g.neighbouring)
        lines = [f"protects: {who}; neighbouring datasets: {relation}"
                 + (_ONE_RECORD_A_PERSON if k == 1 else f" (per person: up to {k} records)"),
                 f"per record: epsilon {g.epsilon:.4g}, delta {g.delta:.3g} ({kind}){zc}"]
        if k > 1:
            p = self.guarantee_per_person_
            zk = "" if rho is None else (f"; {k * k * rho:.6g}-zCDP (k^2 rho, Bun-Steinke 2016 "
                                         "Prop. 1.9)")
            lines.append(f"per person ({k} records, group privacy): epsilon {p.epsilon:.4g}, "
                         f"delta {p.delta:.3g}{zk}")
        lines.append(f"formally: {g.describe()}")
        lines.append("synthetic data sampled from this model (any size, any number of times) "
                     "have the same guarantee; `oracledp synth evaluate` reads the real table "
                     "and its numbers are NOT private")
        return lines

    def sample_codes(self, n: int | None = None, random_state: RandomLike = None, *,
                     sampler: str = "rounded") -> NDArray[np.int64]:
        """``n`` synthetic records as domain codes (default n: the number of records, when
        public); ``sampler`` as in :meth:`sample`."""
        from oracledp._validation import check_sample_size
        from oracledp.synth._sampling import check_sampler

        self._check_fitted()
        if n is None and self.n_ is None:
            raise ValueError("pass n, the number of synthetic records")
        n = check_sample_size(n, self.n_ or 0)
        check_sampler(sampler)
        rng = self._rng if random_state is None and self._rng is not None else check_rng(
            random_state)
        return self._release.sample_codes(n, rng, sampler)

    def sample(self, n: int | None = None, random_state: RandomLike = None, *,
               sampler: str = "rounded") -> pd.DataFrame:
        """``n`` synthetic records: the schema's columns (target last) in their declared types.

        Post-processing of the release: the guarantee is ``guarantee_`` whatever ``n`` and
        ``sampler``.  ``random_state`` None continues the fit's generator (after :meth:`load`,
        pass one).  ``sampler``: ``"rounded"`` (default) deals the model's counts, and each
        gridded value's fine bin within its coarse bin, rounded at random (every record alone
        has the release's law; the table's counts stay close to the expected ones), ``"iid"``
        draws every record independently (:mod:`oracledp.synth._sampling`).
        """
        blocks = list(self.iter_sample(n, random_state, sampler=sampler))
        return blocks[0] if len(blocks) == 1 else pd.concat(blocks, ignore_index=True)

    def iter_sample(self, n: int | None = None, random_state: RandomLike = None, *,
                    sampler: str = "rounded") -> Iterator[pd.DataFrame]:
        """:meth:`sample`'s records in blocks of at most
        :data:`~oracledp.synth._sampling.SAMPLE_CHUNK` (memory stays bounded): the same
        records as :meth:`sample` with the same arguments, block after block (``synth
        sample`` writes them so).  Each block is drawn and decoded on its own, the rounded
        sampler rounding within it.  The arguments are checked at the call, before any
        block is drawn."""
        from oracledp._validation import check_sample_size
        from oracledp.synth._sampling import SAMPLE_CHUNK, check_sampler

        self._check_fitted()
        check_sampler(sampler)
        if random_state is None and self._rng is None:
            raise ValueError("this model was loaded from disk without a generator: pass "
                             "random_state= to sample")
        if n is None and self.n_ is None:
            raise ValueError("pass n, the number of synthetic records")
        total = check_sample_size(n, self.n_ or 0)
        rng = self._rng if random_state is None else check_rng(random_state)

        def blocks() -> Iterator[pd.DataFrame]:
            for lo in range(0, total, SAMPLE_CHUNK):
                codes = self.sample_codes(min(SAMPLE_CHUNK, total - lo), rng, sampler=sampler)
                yield self.table_domain_.decode(codes, rng, sampler=sampler)

        return blocks()

    # --- the saved model -----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The JSON part of the saved model (the factor tables go to ``release.npz``)."""
        self._check_fitted()
        tdom = self.table_domain_
        d: dict[str, Any] = {
            "format": MODEL_FORMAT, "format_version": MODEL_VERSION,
            "method": self.method,
            "params": {"epsilon": float(self.guarantee_.epsilon),
                       "delta": float(self.guarantee_.delta),
                       "bins": tdom.bins_spec(),
                       "options": dict(self.options or {}),
                       "bin_edges": self.bin_edges,
                       "numeric_fraction": (self.numeric_fraction
                                            if isinstance(self.numeric_fraction, str)
                                            else float(self.numeric_fraction))},
            "schema": tdom.schema.to_dict(),
            "domain": {"attributes": list(tdom.domain.attributes),
                       "levels": [list(map(str, lv)) for lv in tdom.domain.levels]},
            "guarantee": self.guarantee_.to_dict(),
            "guarantee_in_plain_words": self.guarantee_in_plain_words(),
            "n": self.n_,
            "release": {"kind": "graphical-model",
                        "cliques": [list(c) for c, _ in self._release.factors],
                        "within": list(tdom.within)},
        }
        if getattr(self, "numeric_", None):
            d["numeric"] = self.numeric_
        if getattr(self, "plan_", None):
            d["plan"] = self.plan_
        d["release"]["tree"] = [list(c) for c in self._release.tree]
        rho = getattr(self, "rho_", None)
        if rho is not None:
            d["zcdp_rho"] = float(rho)
        if tdom.schema.records_per_person > 1:
            d["guarantee_per_person"] = self.guarantee_per_person_.to_dict()
        return d

    def save(self, directory: str | Path) -> Path:
        """Write ``synth-model.json`` and ``release.npz`` to ``directory``; returns the JSON path.

        Only the release: the estimated distribution (or model factors), the schema, bins,
        public parameters and the guarantee; no record, no seed, no diagnostics.
        ``synth-model.json``, written last, records the SHA-256 of the bytes of
        ``release.npz`` (:data:`RELEASE_SHA256` of its ``"release"``) and of its own other
        entries (:data:`JSON_SHA256`), which :meth:`load` checks.
        """
        import hashlib
        import io

        self._check_fitted()
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        buf = io.BytesIO()
        within = self.table_domain_.within
        np.savez(buf, **{f"factor_{i}": t for i, (_, t) in enumerate(self._release.factors)},
                 **{f"within_starts_{i}": within[c][0] for i, c in enumerate(within)},
                 **{f"within_p_{i}": within[c][1] for i, c in enumerate(within)})
        d = self.to_dict()
        d["release"][RELEASE_SHA256] = hashlib.sha256(buf.getbuffer()).hexdigest()
        d[JSON_SHA256] = _json_digest(d)
        (out / RELEASE_FILE).write_bytes(buf.getbuffer())
        model = out / MODEL_FILE
        model.write_text(json.dumps(d, indent=2) + "\n", encoding="utf-8")
        return model

    @classmethod
    def load(cls, directory: str | Path) -> TableSynthesizer:
        """A saved model (:meth:`save`), ready to :meth:`sample` with a ``random_state``.

        A model of another ``format_version`` is refused, and so is a damaged or edited one
        (:class:`~oracledp._errors.ModelFileError`): among others, a ``synth-model.json``
        whose entries do not hash to the SHA-256 it records (a guarantee edited by hand), a
        ``release.npz`` whose SHA-256 is not the one ``synth-model.json`` records (truncated,
        corrupt or changed after saving; checked before any array is read).
        """
        import hashlib
        import zipfile
        import zlib

        from oracledp import _jsonfile
        from oracledp._errors import ModelFileError
        from oracledp.privacy import PrivacyGuarantee, group_privacy
        from oracledp.tabular import TableSchema

        path = Path(directory)
        try:
            d = _jsonfile.loads(_jsonfile.read_text(path / MODEL_FILE))
        except OSError as exc:
            raise ModelFileError(f"{path}: no saved synthetic-data model ({MODEL_FILE}: "
                                 f"{exc.strerror})") from None
        except ValueError as exc:  # strict JSON: not UTF-8, NaN, deep nesting, huge integers
            raise ModelFileError(f"{path / MODEL_FILE}: not a valid model file ({exc})") from None
        if not isinstance(d, dict) or d.get("format") != MODEL_FORMAT:
            raise ModelFileError(f"{path / MODEL_FILE}: not an oracledp synthetic-data model")
        if type(d.get("format_version")) is not int or d["format_version"] != MODEL_VERSION:
            raise ModelFileError(f"{path / MODEL_FILE}: unsupported format_version "
                                 f"{d.get('format_version')!r} (this oracledp reads version "
                                 f"{MODEL_VERSION}; fit the model again)")
        if d.get(JSON_SHA256) != _json_digest(d):
            raise ModelFileError(f"{path / MODEL_FILE}: the file was changed after it was "
                                 "saved (its SHA-256 is not the one it records); a model's "
                                 "guarantee, parameters and domain cannot be edited: fit the "
                                 "model again")
        try:
            schema = TableSchema.from_dict(d["schema"])
            bins = TableDomain.bins_from_spec(d["params"]["bins"])
            if not isinstance(d["release"], dict):
                raise ValueError("'release' must be a JSON object")
            names = d["release"].get("within", [])
            if not isinstance(names, list) or not all(isinstance(c, str) for c in names):
                raise ValueError("'within' must be a list of column names")
            digest = d["release"].get(RELEASE_SHA256)
            if not isinstance(digest, str):
                raise ValueError(f"{MODEL_FILE} records no SHA-256 of {RELEASE_FILE}")
            # our own handle: np.load leaves its file open when the archive is refused
            with open(path / RELEASE_FILE, "rb") as fh:
                if hashlib.file_digest(fh, "sha256").hexdigest() != digest:
                    raise ValueError(f"{RELEASE_FILE} is truncated or corrupt, or was changed "
                                     f"after saving: its SHA-256 is not the one {MODEL_FILE} "
                                     "records")
                fh.seek(0)
                try:
                    with np.load(fh, allow_pickle=False) as npz:
                        tables = [np.asarray(npz[f"factor_{i}"], dtype=np.float64)
                                  for i in range(len(d["release"]["cliques"]))]
                        within = {c: (np.asarray(npz[f"within_starts_{i}"]),
                                      np.asarray(npz[f"within_p_{i}"], dtype=np.float64))
                                  for i, c in enumerate(names)}
                except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
                    # the recorded bytes but not a readable archive (cannot happen with a
                    # file save wrote): not a zip, bad CRC, cut short, a mangled header
                    raise ValueError(f"{RELEASE_FILE} is truncated or corrupt: "
                                     f"{exc or type(exc).__name__}") from None
            tdom = TableDomain(schema, bins, within=within)
            if [list(map(str, lv)) for lv in tdom.domain.levels] != d["domain"]["levels"]:
                raise ValueError("the saved domain does not match its schema and bins")
            factors = [(tuple(int(a) for a in c), t)
                       for c, t in zip(d["release"]["cliques"], tables, strict=True)]
            if d["release"].get("kind") != "graphical-model":
                raise ValueError(f"unknown release kind {d['release'].get('kind')!r}")
            release = _Release(factors, tdom.domain,
                               tree=[tuple(int(a) for a in c) for c in d["release"]["tree"]])
            guarantee = PrivacyGuarantee(**d["guarantee"])
        except (KeyError, TypeError, ValueError, OSError, FloatingPointError) as exc:
            raise ModelFileError(f"{path}: the saved model is damaged ({exc})") from None
        self = cls(d["method"], epsilon=guarantee.epsilon,
                   delta=guarantee.delta or None, bins=bins,
                   options=d["params"].get("options") or None,
                   bin_edges=d["params"].get("bin_edges", "quantiles"),
                   numeric_fraction=d["params"].get("numeric_fraction", "auto"))
        self.numeric_ = d.get("numeric")
        self.plan_ = d.get("plan")
        self._release = release
        self.table_domain_ = tdom
        self.n_ = d.get("n")
        self.guarantee_ = guarantee
        self.guarantee_per_person_ = group_privacy(guarantee, schema.records_per_person)
        rho = d.get("zcdp_rho")
        self.rho_ = float(rho) if isinstance(rho, (int, float)) else None
        self._rng = None
        return self


def _spent_rho(synth: Any) -> float | None:
    """The zCDP rho a zCDP method spent: the sum of its ledger (``ledger_``, or its graphical
    model's ``rho``); None when it exposes neither."""

    ledger = getattr(synth, "ledger_", None)
    if ledger:
        return math.fsum(float(s.rho) for s in ledger)
    rho = getattr(getattr(synth, "result_", None), "rho", None)
    return float(rho) if isinstance(rho, (int, float)) else None


def _fill_empty_bins(bare: TableDomain, within: dict[str, Any],
                     plain: dict[str, NDArray[np.float64]]) -> dict[str, Any]:
    """``within`` with each coarse bin that its shape leaves empty given the plain
    estimate's shape there (less the ranges :func:`~oracledp.synth._numeric.far_tails`
    emptied), or, where that is empty too, all its weight on its fine bin nearest the
    estimate's mass (post-processing of the same release).  The flattened shape and the
    plain estimate can disagree on a bin of little mass; the model may still give the bin
    records, and a bin without shape was drawn evenly over its grid points: over a declared
    range wider than the data, values far beyond them (a spend column of real maximum 1,540
    declared up to 100,000 came back with values up to 98,677).  A bin whose estimate lies
    only in an emptied range is not given that estimate back: the records the model gives
    it can be its own noise (drawn from that estimate, 2 of the tests' 8 spend fits put
    0.6-1 % of their values past 5,000).  A declared cut point (``bins``) can make a coarse
    bin wholly in an emptied range: the records the model gives it all come out at its edge
    nearest the data."""
    out = dict(within)
    for a in bare.attrs:
        if a.name not in within or a.first is None or a.last is None:
            continue
        starts, p = within[a.name]
        est = plain[a.name]
        p = np.array(p, dtype=np.float64)
        f0 = np.searchsorted(starts, a.first, side="right") - 1
        f1 = np.searchsorted(starts, a.last, side="right") - 1
        mass = np.flatnonzero(est > 0)
        for lo, hi in zip(f0.tolist(), f1.tolist(), strict=True):
            if p[lo:hi + 1].sum() > 0:
                continue
            if est[lo:hi + 1].sum() > 0:
                p[lo:hi + 1] = est[lo:hi + 1] / float(est.sum())
            elif mass.size:  # no estimate either: its fine bin nearest the estimate's mass
                below, above = mass[mass < lo], mass[mass > hi]
                gap_lo = lo - int(below[-1]) if below.size else math.inf
                gap_hi = int(above[0]) - hi if above.size else math.inf
                p[lo if gap_lo <= gap_hi else hi] = 1.0 / max(float(est.sum()), 1.0)
        out[a.name] = (starts, p / p.sum())
    return out


def _coarse_shape(fine: TableDomain, refined: dict[str, Any]) -> list[int]:
    """An upper bound of the coarse domain's shape: a refined column has at most its count
    of bins (its cut points + 1), plus its missing level; the others keep their levels."""
    out = []
    for a in fine.attrs:
        spec = refined.get(a.name)
        if spec is None:
            out.append(len(a.labels))
        else:
            out.append((len(spec) + 1 if isinstance(spec, tuple) else int(spec)) + a.missing)
    return out


def fine_bin_starts(c: Any, spec: Any, bin_edges: str) -> NDArray[np.int64]:
    """The first grid index of each fine bin of the gridded column ``c`` (public: the
    declaration only): equal shares of the grid (:func:`~oracledp.synth._numeric.fine_starts`),
    split at a wide grid's round values and points near its lower bound, at a declared fill
    value (a fine bin of its own: the missing cells' heap), at the equal-width coarse bins
    (``bin_edges="equal-width"``, for the count ``spec`` or any "auto" may choose) and at
    public cut points (``spec`` a tuple)."""
    from oracledp.synth import _numeric

    starts = _numeric.fine_starts(c.K, _numeric.fine_bin_count(c.K))
    if _numeric.ROUND_POINTS:  # a wide grid's round values: fine bins of their own
        r = _numeric.round_points(c.K, c.lower, c.step)
        starts = np.union1d(starts, np.union1d(r, r[r < c.K] + 1)).astype(np.int64)
    # and the points near its lower bound, at 1, 10, 100, ... apart
    starts = np.union1d(starts, _numeric.low_points(c.K)).astype(np.int64)
    if c.fill is not None:  # a declared fill value: a fine bin of its own
        f = c.code_of(c.fill)
        starts = np.union1d(starts, [f, f + 1] if f < c.K else [f]).astype(np.int64)
    if bin_edges == "equal-width" and not isinstance(spec, tuple):
        # equal shares of the grid: every fine bin inside one coarse bin, for the count
        # given or any count "auto" may choose
        counts_ = range(2, DEFAULT_BINS + 1) if spec == "auto" else [int(spec)]
        for b in counts_:
            if b < c.K + 1:
                starts = np.union1d(starts, _numeric.fine_starts(c.K, b))
        starts = starts.astype(np.int64)
    if isinstance(spec, tuple):  # public cut points: fine bins split at them too
        grid = c.lower + np.arange(c.K + 1) * c.step
        cut_idx = np.searchsorted(grid + 1e-9 * c.step, np.array(spec), side="left")
        starts = np.union1d(starts, cut_idx[cut_idx <= c.K]).astype(np.int64)
    return starts


def _cuts(schema: Any, name: str, starts: NDArray[np.int64]) -> tuple[float, ...]:
    """The cut points (grid values) of bins of column ``name`` starting at grid indices
    ``starts`` (the first is 0), as :class:`TableDomain` takes them."""
    c = next(c for c in schema.columns if c.name == name)
    # the grid values as every reader computes them; only the last point can land past
    # upper in floating point (0 + 7 x 0.1 is 0.7000000000000001): clamped, not rounded
    return tuple(min(float(c.lower + i * c.step), float(c.upper)) for i in starts[1:])


def _coarsen(fine: TableDomain, coarse: TableDomain, rows: NDArray[np.int64],
             counts: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The distinct rows of ``fine``'s domain mapped to ``coarse``'s (each fine bin lies in
    one coarse bin), merged, with their record counts."""
    from oracledp.tabular._engine import merge_columns

    maps: list[NDArray[np.int64] | None] = []
    for f, c in zip(fine.attrs, coarse.attrs, strict=True):
        if f.kind == "grid":
            assert f.first is not None
            present = len(f.labels) - f.missing
            to = c.code_map[f.first]
            if f.missing:
                to = np.append(to, c.code_map[-1])
            assert len(to) == present + f.missing
            maps.append(to)
        else:
            maps.append(None)

    def column(j: int) -> NDArray[np.int64]:  # one coarse column at a time, no matrix copy
        to = maps[j]
        return rows[:, j] if to is None else to[rows[:, j]]

    def whole() -> NDArray[np.int64]:
        return np.stack([column(j) for j in range(rows.shape[1])], axis=1).astype(np.int64)

    return merge_columns(column, rows.shape[1], counts, whole)
