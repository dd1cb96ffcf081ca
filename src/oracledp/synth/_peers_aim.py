"""AIM (McKenna, Mullins, Sheldon, Miklau 2022): adaptive, annealed select-measure rounds.

The algorithm, its parameters and its privacy proof are in the docstring of
:mod:`oracledp.synth._peers` (sections "AIM" and "Parameters of AIM and cost"); this module
holds :func:`aim`.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.typing import ArrayLike

from oracledp._diagnostics import check_diagnostics_flag
from oracledp._docstrings import fill_doc
from oracledp._validation import RandomLike, check_positive, check_rng
from oracledp.privacy import Spend, gaussian_multiplier_rho, select_measure_rho
from oracledp.synth._domain import Domain
from oracledp.synth._peers_accounting import _ACCOUNTING, _check_common, _check_iters, _PeerRun
from oracledp.synth._peers_measure import _counts, _exp_mech, _measure
from oracledp.synth._peers_model import PGMResult
from oracledp.synth._workload import (
    MarginalWorkload,
    check_sample_weight,
    kway_marginal_workload,
)

__all__ = ["aim"]

_AIM_ALPHA = 0.9  # AIM: share of each round's budget for measurement
#: Most candidate marginals (the workload closed downward) AIM accepts: each round tests
#: every candidate's junction tree and scores its marginal under the model, so the time of a
#: round grows with their number (all 3-way marginals of 30 columns are 4,525 candidates; of
#: 86 columns, 106,081).
_AIM_MAX_CANDIDATES = 5_000


def aim_candidates(d: int, blocks: list[tuple[int, ...]] | None = None, k: int = 3) -> int:
    """The number of AIM's candidates ``W+`` (public): the distinct non-empty subsets of the
    workload's ``blocks`` (default: all ``min(k, d)``-way marginals of d attributes)."""
    if blocks is None:
        return sum(math.comb(d, j) for j in range(1, min(k, d) + 1))
    return len({sub for blk in blocks for j in range(1, len(blk) + 1)
                for sub in itertools.combinations(blk, j)})


def check_aim_candidates(d: int, candidates: int, k: int | None = None) -> None:
    """Refuse a workload with more than :data:`_AIM_MAX_CANDIDATES` candidates (public:
    the number of attributes and the workload only), before any noise."""
    if candidates > _AIM_MAX_CANDIDATES:
        which = "the workload" if k is None else f"the all {k}-way workload"
        raise ValueError(
            f"AIM scores every marginal of its workload and their subsets in each round: "
            f"{which} over {d} columns has {candidates:,} candidate marginals (at most "
            f"{_AIM_MAX_CANDIDATES:,}), too many to fit in reasonable time: use the method "
            "oracle-query-pgm or mst (they scale to wide tables), or fewer columns. Nothing "
            "was fitted")


@fill_doc
def aim(
    codes: ArrayLike,
    domain: Domain,
    epsilon: float,
    delta: float,
    random_state: RandomLike = None,
    workload: MarginalWorkload | None = None,
    *,
    neighbouring: str = "replace-one",
    max_model_size: float = 80.0,
    rounds: int | None = None,
    round_iters: int = 500,
    final_iters: int = 3000,
    return_diagnostics: bool = False,
    sample_weight: ArrayLike | None = None,
    backend: str = "numpy",
) -> PGMResult:
    """(epsilon, delta)-DP AIM (McKenna, Mullins, Sheldon, Miklau 2022), see the module docstring.

    Parameters
    ----------
    codes, domain, epsilon, delta, random_state:
        As in :func:`~oracledp.synth._peers.mst` (any d >= 1 here).
    workload:
        The marginal workload AIM adapts to (every block weight 1); default all
        3-way marginals (all k-way with k = min(3, d)).
    neighbouring:
        ``"replace-one"`` (default; n public; ``Delta_2 = sqrt(2)``, score sensitivity
        ``2 w_r``) or ``"add-remove"`` (the paper's; ``Delta_2 = 1``, sensitivity ``w_r``).
    max_model_size:
        The paper's MAX-SIZE, in MB of junction-tree cells (float64): round t only
        considers candidates keeping the model within ``(rho_used / rho) * max_model_size``.
        The paper uses 80.
    rounds:
        The paper's T (default ``16 d``): sets the initial per-round budget
        ``rho / T``; the number of rounds actually run follows the annealing.
    round_iters, final_iters:
        Mirror-descent iterations of the Private-PGM estimation after each round
        (warm-started) and of the final estimation (post-processing only).
    %(pgm_tail)s

    Returns
    -------
    PGMResult
        ``selected`` holds the clique selected in each round.
    """
    want_diag = check_diagnostics_flag(return_diagnostics)
    arr, eps, dlt, neighbouring = _check_common(codes, domain, epsilon, delta, neighbouring)
    d = len(domain)
    if workload is None:
        workload = kway_marginal_workload(domain, min(3, d))
    if not isinstance(workload, MarginalWorkload):
        raise TypeError(f"workload must be a MarginalWorkload, got {type(workload).__name__}")
    if workload.domain != domain:
        raise ValueError("the workload is over a different domain")
    max_mb = check_positive(max_model_size, "max_model_size")
    T = 16 * d if rounds is None else _check_iters(rounds, "rounds")
    if any(tuple(sorted(set(blk))) != tuple(blk) for blk in workload.blocks):
        raise ValueError("the workload's marginals must be increasing tuples of distinct "
                         "attributes (as kway_marginal_workload builds them)")
    n_round = _check_iters(round_iters, "round_iters")
    n_final = _check_iters(final_iters, "final_iters")
    w = None if sample_weight is None else check_sample_weight(sample_weight, arr.shape[0])
    # Candidates W+: the downward closure of the workload's cliques, with weights
    # w_r = sum_{s in W} |r ∩ s| (AIM paper).
    closure = sorted(
        {sub for blk in workload.blocks for k in range(1, len(blk) + 1)
         for sub in itertools.combinations(blk, k)},
        key=lambda c: (len(c), c),
    )
    check_aim_candidates(d, len(closure))  # before any noise
    cand_w = np.array([sum(len(set(r) & set(s)) for s in workload.blocks) for r in closure],
                      dtype=np.float64)
    one_way = [r for r in closure if len(r) == 1]
    if T <= _AIM_ALPHA * len(one_way):
        raise ValueError(f"rounds must exceed 0.9 x the number of 1-way marginals "
                         f"({len(one_way)}) so that the initialisation leaves budget, got {T}")
    rng = check_rng(random_state)
    run = _PeerRun("AIM", arr, domain, eps, dlt, neighbouring, want_diag, w, backend)
    shape, rho, delta2, delta1, fitter = run.shape, run.rho, run.delta2, run.delta1, run.fitter
    true = {r: _counts(arr, shape, r, w) for r in closure}
    cells = np.array([true[r].size for r in closure], dtype=np.float64)

    # Initialisation: every 1-way marginal with noise multiplier s0 = sqrt(T / (2 alpha rho)).
    s = math.sqrt(T / (2.0 * _AIM_ALPHA * rho))
    e = math.sqrt(8.0 * (1.0 - _AIM_ALPHA) * rho / T)
    measurements = [_measure(arr, shape, r, delta2 * s, rng, w) for r in one_way]
    # noise std delta2 * s for a table of l2 sensitivity delta2: noise multiplier s
    ledger = [Spend("Gaussian mechanism (the 1-way tables)",
                    zcdp=gaussian_multiplier_rho(s, releases=len(one_way)))]
    spent = ledger[-1].rho
    warm, model, model_cliques, total = fitter.fit(measurements, n_round)
    selected: list[tuple[int, ...]] = []
    sigmas: list[float] = []
    final = False
    while not final:
        left = rho - spent
        if left <= 2.0 * select_measure_rho(e, s):
            # Last round: spend what remains (shrunk by 1e-12 against rounding).
            left *= 1.0 - 1e-12
            s = math.sqrt(1.0 / (2.0 * _AIM_ALPHA * left))
            e = math.sqrt(8.0 * (1.0 - _AIM_ALPHA) * left)
            final = True
        round_rho = select_measure_rho(e, s)  # selection at e, then a measurement at s
        spent += round_rho
        sigma = delta2 * s
        # Candidates whose addition keeps the junction tree within the growing size cap
        # (never below the current model's size, so that a cap smaller than the model
        # still admits the candidates that do not enlarge it, e.g. 1-way marginals).
        cap = max(spent / rho * max_mb, fitter.cliques_mb(model_cliques))
        ok = [i for i, r in enumerate(closure) if fitter.cliques_mb([*model_cliques, r]) <= cap]
        est = {closure[i]: total * model.marginal(closure[i]).ravel() for i in ok}
        scores = np.array([
            cand_w[i] * (np.abs(true[closure[i]] - est[closure[i]]).sum()
                         - math.sqrt(2.0 / math.pi) * sigma * cells[i])
            for i in ok
        ])
        # q_r moves by at most Delta_1 w_r (p_{t-1} is fixed): sensitivity Delta_1 max w_r
        sens = delta1 * float(cand_w[ok].max())
        r = closure[ok[_exp_mech(scores, e, sens, rng)]]
        measurements.append(_measure(arr, shape, r, sigma, rng, w))
        ledger.append(Spend("exponential mechanism + Gaussian mechanism", zcdp=round_rho,
                            round=len(selected) + 1, released=r))
        selected.append(r)
        sigmas.append(sigma)
        warm, model, model_cliques, total = fitter.fit(measurements, n_round, warm=warm)
        # Annealing: halve the noise when the new measurement barely moved the model.
        moved = np.abs(total * model.marginal(r).ravel() - est[r]).sum()
        if moved <= math.sqrt(2.0 / math.pi) * sigma * cells[closure.index(r)]:
            s /= 2.0
            e *= 2.0
    _, model, _, total = fitter.fit(measurements, n_final, warm=warm)
    notes = (
        f"rho = {rho:.6g}; T = {T}, alpha = {_AIM_ALPHA}, max_model_size = {max_mb:g} MB; "
        f"{neighbouring}: Delta_2 = {delta2:g}, score sensitivity {delta1:g} x max w_r; "
        f"{len(selected)} rounds, noise std (counts) from {sigmas[0]:.4g} to {sigmas[-1]:.4g}"
    )
    return run.finish(total, spent, ledger, measurements, selected, model,
                      "McKenna, Mullins, Sheldon, Miklau 2022 (AIM); " + _ACCOUNTING, notes,
                      rounds=len(selected))
