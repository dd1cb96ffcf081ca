"""Private-PGM estimation for MST and AIM through ``mbi``, imported lazily (post-processing).

``mbi`` (the ``peers`` extra, JAX-based) is imported only by :func:`_import_mbi`, which
:func:`~oracledp.synth._peers.mst` and :func:`~oracledp.synth._peers.aim` call; the rest of
oracledp never imports it.  :class:`_Fitter` fits a graphical model to the noisy
measurements by mirror descent over the marginal polytope (McKenna, Sheldon, Miklau,
ICML 2019): post-processing, no privacy cost.  JAX settings: see "JAX" in
:mod:`oracledp.synth._peers`.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from oracledp.synth._domain import Domain
from oracledp.synth._estimation import MarginalMeasurement

if TYPE_CHECKING:
    from oracledp.synth._graphical import GraphicalModel

__all__ = ["require_mbi"]

_INSTALL_HINT = (
    "MST and AIM need the optional dependencies mbi and jax; install them with "
    "pip install 'oracledp[peers]'"
)


def require_mbi() -> None:
    """Raise :class:`ImportError` with the install hint unless the ``peers`` extra is installed.

    Only checks that ``mbi`` and ``jax`` can be found; imports and configures nothing.
    """
    import importlib.util

    for name in ("jax", "mbi"):
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ImportError(_INSTALL_HINT)


def _import_mbi() -> Any:
    """Import mbi with JAX on CPU, float64, no compilation cache, no output."""
    try:
        import jax
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from exc
    try:
        jax.config.update("jax_platforms", "cpu")
    except RuntimeError:  # pragma: no cover - a backend is already initialised
        pass
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_compilation_cache", False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import mbi
            import mbi.estimation
            import mbi.junction_tree
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from exc
    return mbi


_BACKENDS = ("numpy", "mbi")


class _NumpyFitter:
    """Junction-tree estimation (:mod:`oracledp.synth._graphical`, numpy; post-processing).

    Same interface as :class:`_Fitter`.  The model's total is the public n (replace-one) or,
    under add-remove, the inverse-variance weighted mean of the measured tables' noisy sums
    (each sum has variance ``sigma^2 * cells``), at least 1: post-processing either way.
    """

    def __init__(self, domain: Domain, total: float | None, seconds: list[float]):
        self.shape = domain.shape
        self.known_total = total
        self.seconds = seconds

    def total(self, measurements: Sequence[MarginalMeasurement]) -> float:
        """The model's total: the public n, or the weighted mean of the tables' sums."""
        if self.known_total is not None:
            return self.known_total
        prec = np.array([1.0 / (m.sigma**2 * m.values.size) for m in measurements])
        sums = np.array([float(m.values.sum()) for m in measurements])
        return max(1.0, float(prec @ sums / prec.sum()))

    def cliques_mb(self, cliques: Sequence[tuple[int, ...]]) -> float:
        """Size in MB of the junction tree of a model over ``cliques`` (float64 cells)."""
        from oracledp.synth._junction_tree import junction_tree_cells

        return 8.0 * junction_tree_cells(self.shape, cliques) / 2**20

    def fit(self, measurements: Sequence[MarginalMeasurement], iters: int, warm: Any = None
            ) -> tuple[Any, GraphicalModel, list[tuple[int, ...]], float]:
        """``(warm start of the next fit, the model, its cliques, its total)``."""
        from oracledp.synth._graphical import estimate_model

        start = time.perf_counter()
        total = self.total(measurements)
        model = estimate_model(self.shape, measurements, total, iterations=iters, warm=warm)
        self.seconds.append(time.perf_counter() - start)
        return model, model, list(model.tree.cliques), float(total)


class _Fitter:
    """mbi estimation of a model from the measurements so far (post-processing)."""

    def __init__(self, mbi: Any, domain: Domain, total: float | None, seconds: list[float]):
        self.mbi = mbi
        self.shape = domain.shape
        self.names = domain.attributes
        self.mdomain = mbi.Domain(domain.attributes, domain.shape)
        self.known_total = total
        self.seconds = seconds

    def cliques_mb(self, cliques: Sequence[tuple[int, ...]]) -> float:
        """Size in MB of the junction tree of a model over ``cliques`` (float64 cells)."""
        named = [tuple(self.names[a] for a in c) for c in cliques]
        return float(self.mbi.junction_tree.hypothetical_model_size(self.mdomain, named))

    def fit(self, measurements: Sequence[MarginalMeasurement], iters: int, warm: Any = None
            ) -> tuple[Any, GraphicalModel, list[tuple[int, ...]], float]:
        """``(mbi's model, the model as a GraphicalModel, mbi's cliques, its total)``."""
        from oracledp.synth._graphical import GraphicalModel

        start = time.perf_counter()
        lms = [
            self.mbi.LinearMeasurement(
                np.asarray(m.values).ravel(), tuple(self.names[a] for a in m.axes), stddev=m.sigma
            )
            for m in measurements
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = self.mbi.estimation.MirrorDescent().estimate(
                self.mdomain, lms, known_total=self.known_total, iters=iters, warm_start=warm
            )
        factors = []
        for cl in model.potentials.cliques:
            f = model.potentials[cl]
            pos = tuple(self.names.index(a) for a in f.domain.attributes)
            factors.append((pos, np.asarray(f.values, dtype=np.float64)))
        total = float(model.total)
        self.seconds.append(time.perf_counter() - start)
        return (model, GraphicalModel.from_factors(self.shape, factors),
                [c for c, _ in factors], total)
