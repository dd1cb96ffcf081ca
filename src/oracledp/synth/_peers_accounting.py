"""MST's and AIM's privacy accounting: budget, sensitivities, checks, the released guarantee.

The zCDP budget ``rho`` of a target ``(epsilon, delta)`` (Bun-Steinke 2016, Prop. 1.3,
:func:`oracledp.privacy.zcdp_rho`), the sensitivities of a marginal table and of an L1 score
under the chosen neighbouring relation (:func:`_sensitivities`), the checks both mechanisms share,
:func:`_finish`, which turns the run's ledger (:class:`oracledp.privacy.Spend` entries, whose
rhos come from the privacy core's facts) into the released
:class:`~oracledp.synth._peers_model.PGMResult` and its guarantee
(:func:`oracledp.privacy.ledger_guarantee`, zCDP composition), and :class:`_PeerRun`,
which holds what one fit of either mechanism sets up (budget, sensitivities, fitter) until
its :func:`_finish`.  The derivations are in
the docstring of :mod:`oracledp.synth._peers` ("Neighbouring relation and sensitivities",
"Privacy accounting").
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._diagnostics import NonPrivateDiagnostics, release_diagnostics
from oracledp._validation import (
    check_choice,
    check_delta,
    check_epsilon,
    check_positive,
)
from oracledp.privacy import Spend, ledger_guarantee, zcdp_rho
from oracledp.synth._domain import Domain
from oracledp.synth._estimation import MarginalMeasurement
from oracledp.synth._graphical import GraphicalModel
from oracledp.synth._peers_estimation import _BACKENDS, _Fitter, _import_mbi, _NumpyFitter
from oracledp.synth._peers_model import PGMResult

__all__: list[str] = []

_NEIGHBOURS = ("replace-one", "add-remove")


def _sensitivities(neighbouring: str) -> tuple[float, float]:
    """(L2 sensitivity of a marginal count table, sensitivity of an L1 score)."""
    if neighbouring == "replace-one":
        return math.sqrt(2.0), 2.0
    return 1.0, 1.0


def _check_common(
    codes: ArrayLike, domain: Domain, epsilon: float, delta: float, neighbouring: str
) -> tuple[NDArray[np.int64], float, float, str]:
    if not isinstance(domain, Domain):
        raise TypeError(f"domain must be a Domain, got {type(domain).__name__}")
    arr = domain.check_codes(codes)
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    check_choice(neighbouring, "neighbouring", _NEIGHBOURS)
    return arr, eps, dlt, neighbouring


def _check_iters(value: object, name: str) -> int:
    return int(check_positive(value, name, integer=True))


def _finish(
    method: str, domain: Domain, n: int, total: float, spent: float, ledger: list[Spend],
    measurements: list[MarginalMeasurement], selected: list[tuple[int, ...]],
    model: GraphicalModel, eps: float, dlt: float,
    neighbouring: str, source: str, notes: str, want_diag: bool, diag: dict[str, Any],
) -> PGMResult:
    # the ledger spends at most the budget zcdp_rho(eps, dlt) (up to rounding): checked here
    guarantee = ledger_guarantee(ledger, "zcdp", eps, dlt, rtol=1e-9, source=source,
                                 neighbouring=neighbouring, notes=notes)
    diagnostics = None
    if want_diag:
        guarantee = release_diagnostics(guarantee, method)
        diagnostics = NonPrivateDiagnostics(method.lower(), diag)
    public_n = n if neighbouring == "replace-one" else None
    return PGMResult(method, domain, public_n, total, spent, tuple(measurements), tuple(selected),
                     model, guarantee, diagnostics)


class _PeerRun:
    """One MST or AIM fit once its inputs are checked: the clock, the sizes, the zCDP budget
    ``rho``, the sensitivities and the Private-PGM fitter (this imports ``mbi``).
    :meth:`finish` turns what the fit spent into the release (:func:`_finish`)."""

    def __init__(self, method: str, arr: NDArray[np.int64], domain: Domain, eps: float,
                 dlt: float, neighbouring: str, want_diag: bool,
                 weights: NDArray[np.float64] | None = None, backend: str = "numpy") -> None:
        check_choice(backend, "backend", _BACKENDS)
        self.start = time.perf_counter()
        self.method, self.domain, self.eps, self.dlt = method, domain, eps, dlt
        self.neighbouring, self.want_diag = neighbouring, want_diag
        self.n = arr.shape[0] if weights is None else int(weights.sum())
        self.shape = domain.shape
        self.rho = zcdp_rho(eps, dlt)
        self.delta2, self.delta1 = _sensitivities(neighbouring)
        self.est_seconds: list[float] = []
        known = float(self.n) if neighbouring == "replace-one" else None
        self.backend = backend
        self.fitter: _Fitter | _NumpyFitter
        if backend == "mbi":
            self.fitter = _Fitter(_import_mbi(), domain, known, self.est_seconds)
        else:
            self.fitter = _NumpyFitter(domain, known, self.est_seconds)

    def finish(self, total: float, spent: float, ledger: list[Spend],
               measurements: list[MarginalMeasurement], selected: list[tuple[int, ...]],
               model: GraphicalModel, source: str,
               notes: str, **diag: Any) -> PGMResult:
        """The release: the guarantee of the ledger (checked against the budget), the model
        with ``spent`` (the sum of the ledger), and with diagnostics the wall-clock times (and
        ``diag``)."""
        times = {"seconds": time.perf_counter() - self.start,
                 "estimation_seconds": sum(self.est_seconds), **diag}
        return _finish(self.method, self.domain, self.n, total, spent, ledger, measurements,
                       selected, model, self.eps, self.dlt, self.neighbouring, source, notes,
                       self.want_diag, times)


_ACCOUNTING = ("zCDP: Gaussian Delta_2^2/(2 sigma^2) (Bun-Steinke 2016 Prop 1.6), exponential "
               "mechanism eps^2/8 (Cesar-Rogers 2021), additive composition (Bun-Steinke Lemma "
               "2.3), (rho + 2 sqrt(rho ln(1/delta)), delta)-DP (Bun-Steinke Prop 1.3)")
