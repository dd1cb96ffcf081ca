"""MST (McKenna, Miklau, Sheldon 2021): 1-way measurements, a private spanning tree, 2-way measurements.

The algorithm, its parameters and its privacy proof are in the docstring of
:mod:`oracledp.synth._peers` (section "MST"); this module holds :func:`mst`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from oracledp._diagnostics import check_diagnostics_flag
from oracledp._docstrings import fill_doc
from oracledp._validation import RandomLike, check_rng
from oracledp.privacy import Spend, exponential_mechanism_rho, gaussian_rho
from oracledp.synth._domain import Domain
from oracledp.synth._estimation import MarginalMeasurement
from oracledp.synth._numeric import project_simplex
from oracledp.synth._peers_accounting import _ACCOUNTING, _check_common, _check_iters, _PeerRun
from oracledp.synth._peers_measure import _counts, _exp_mech, _measure
from oracledp.synth._peers_model import PGMResult
from oracledp.synth._workload import check_sample_weight

__all__ = ["mst"]


def one_way_counts(measurements: Sequence[MarginalMeasurement], total: float
                   ) -> list[np.ndarray]:
    """The model of 1-way measurements alone (one per attribute, in order), as counts: each
    noisy table projected onto the nonnegative counts summing to ``total`` — the minimizer of
    the estimator's loss, which separates by attribute (post-processing)."""
    return [project_simplex(np.asarray(m.values, dtype=np.float64), total)
            for m in measurements]


@fill_doc
def mst(
    codes: ArrayLike,
    domain: Domain,
    epsilon: float,
    delta: float,
    random_state: RandomLike = None,
    *,
    neighbouring: str = "replace-one",
    iters: int = 3000,
    return_diagnostics: bool = False,
    sample_weight: ArrayLike | None = None,
    backend: str = "numpy",
) -> PGMResult:
    """(epsilon, delta)-DP MST (McKenna, Miklau, Sheldon 2021), see the module docstring.

    Parameters
    ----------
    codes, domain:
        The records (integer codes, shape ``(n, d)``, d >= 2) and their public domain.
    epsilon, delta:
        The target guarantee; the zCDP budget is
        :func:`oracledp.privacy.zcdp_rho` ``(epsilon, delta)``.
    random_state:
        Seed or numpy Generator: all the noise and selections come from it.
    neighbouring:
        ``"replace-one"`` (default; n public; ``Delta_2 = sqrt(2)``, score sensitivity 2)
        or ``"add-remove"`` (the paper's setting; ``Delta_2 = 1``, score sensitivity 1).
    iters:
        Mirror-descent iterations of each Private-PGM estimation (post-processing).
    %(pgm_tail)s

    Returns
    -------
    PGMResult
        ``selected`` holds the ``d - 1`` edges of the spanning tree.
    """
    want_diag = check_diagnostics_flag(return_diagnostics)
    arr, eps, dlt, neighbouring = _check_common(codes, domain, epsilon, delta, neighbouring)
    n_iters = _check_iters(iters, "iters")
    w = None if sample_weight is None else check_sample_weight(sample_weight, arr.shape[0])
    rng = check_rng(random_state)
    d = len(domain)
    if d < 2:
        raise ValueError("MST needs at least 2 attributes (it selects a spanning tree of pairs)")
    run = _PeerRun("MST", arr, domain, eps, dlt, neighbouring, want_diag, w, backend)
    shape, rho, delta2, delta1, fitter = run.shape, run.rho, run.delta2, run.delta1, run.fitter

    # MST step 1: all 1-way marginals, rho/3 in total (d Gaussian measurements).
    sigma1 = delta2 * math.sqrt(3.0 * d / (2.0 * rho))
    measurements = [_measure(arr, shape, (a,), sigma1, rng, w) for a in range(d)]
    ledger = [Spend("Gaussian mechanism (the d 1-way tables)",
                    zcdp=gaussian_rho(sigma1, sensitivity_sq=delta2**2, releases=d))]
    spent = ledger[-1].rho

    # MST step 2: private Kruskal on the L1 errors of the 1-way model's 2-way marginals.
    # The 1-way model: with 1-way tables only, the estimator's loss separates by attribute
    # and its minimizer is each noisy table projected onto the counts summing to the model's
    # total (the limit of the mirror descent, computed directly: on 86 attributes the
    # descent took a third of MST's time).  The mbi backend keeps its own estimate.
    if run.backend == "numpy":
        total1 = fitter.total(measurements)
        ones = one_way_counts(measurements, total1)

        def model_pair(p: tuple[int, ...]) -> np.ndarray:
            return np.multiply.outer(ones[p[0]], ones[p[1]]).ravel() / total1
    else:
        _, model1, _, total1 = fitter.fit(measurements, n_iters)

        def model_pair(p: tuple[int, ...]) -> np.ndarray:
            return total1 * model1.marginal(p).ravel()
    eps_sel = math.sqrt(8.0 * (rho / 3.0) / (d - 1))
    pairs = list(itertools.combinations(range(d), 2))
    weights = np.array([np.abs(_counts(arr, shape, p, w) - model_pair(p)).sum() for p in pairs])
    component = list(range(d))
    tree: list[tuple[int, ...]] = []
    for t in range(1, d):
        cand = [i for i, (u, v) in enumerate(pairs) if component[u] != component[v]]
        # an L1 score against a fixed model moves by at most Delta_1 (module docstring)
        pick = cand[_exp_mech(weights[cand], eps_sel, delta1, rng)]
        u, v = pairs[pick]
        old, new = component[v], component[u]
        component = [new if c == old else c for c in component]
        tree.append(pairs[pick])
        ledger.append(Spend("exponential mechanism (a tree edge)",
                            zcdp=exponential_mechanism_rho(eps_sel), round=t, released=(u, v)))
        spent += ledger[-1].rho

    # MST step 3: the d - 1 selected 2-way marginals, rho/3 in total.
    sigma2 = delta2 * math.sqrt(3.0 * (d - 1) / (2.0 * rho))
    measurements += [_measure(arr, shape, e, sigma2, rng, w) for e in tree]
    ledger.append(Spend("Gaussian mechanism (the d - 1 2-way tables of the tree)",
                        zcdp=gaussian_rho(sigma2, sensitivity_sq=delta2**2, releases=d - 1),
                        round=d))
    spent += ledger[-1].rho

    # MST step 4: final estimation (post-processing).
    _, model, _, total = fitter.fit(measurements, n_iters)
    notes = (
        f"rho = {rho:.6g} split in thirds; {neighbouring}: Delta_2 = {delta2:g}, score "
        f"sensitivity {delta1:g}; sigma_1way = {sigma1:.4g}, eps_select = {eps_sel:.4g} "
        f"x {d - 1}, sigma_2way = {sigma2:.4g} (counts)"
    )
    return run.finish(total, spent, ledger, measurements, tree, model,
                      "McKenna, Miklau, Sheldon 2021 (MST); " + _ACCOUNTING, notes)
