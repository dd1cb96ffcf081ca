"""MST and AIM: graphical-model synthesizers of the Private-PGM family, as baselines.

Estimation (post-processing: given noisy marginal measurements, mirror descent finds a
graphical model that fits them; McKenna, Sheldon, Miklau, ICML 2019) runs on the numpy
junction-tree estimator of :mod:`oracledp.synth._graphical` by default (``backend="numpy"``,
no extra needed), or on Private-PGM's ``mbi`` with ``backend="mbi"`` (the ``peers`` extra,
``pip install 'oracledp[peers]'``, JAX-based; imported lazily, never by the rest of
oracledp).  Measured on MST's measurements of health_insurance (12 columns, 8 bins per
numeric column, eps = 1): 3000 numpy iterations reach loss 119.31 in 16.5 s, mbi's 3000
reach 119.34 (its two fits took 46.9 s with JAX compilation), so numpy is the default.  The
selection, the noise, the budget accounting, the evaluation of the model's marginals and the
sampling are written here, from the papers' algorithm descriptions.  The JAX notes below
apply to ``backend="mbi"`` only.

MST (McKenna, Miklau, Sheldon 2021)
-----------------------------------
"Winning the NIST Contest: A scalable and general approach to differentially
private synthetic data", Journal of Privacy and Confidentiality 11(3), the MST
mechanism (section and equation numbers not checked against the text).  With a
zCDP budget ``rho`` split in three equal parts:

1. measure every 1-way marginal (count table) with Gaussian noise,
   ``sigma_1 = Delta_2 sqrt(3 d / (2 rho))`` (d Gaussian measurements at
   ``rho / (3d)`` each);
2. estimate a model ``p1`` from them (Private-PGM) and select ``d - 1`` pairs of
   attributes by a private Kruskal algorithm: each of the ``d - 1`` steps picks one
   pair joining two different connected components with the exponential mechanism,
   score ``w_ij = || M_ij(D) - M_ij(p1) ||_1`` (counts), probability
   ``∝ exp(eps_sel w_ij / (2 Delta_1))``, ``eps_sel = sqrt(8 (rho/3) / (d - 1))``
   (each step ``eps_sel^2 / 8``-zCDP); the selected pairs form a spanning tree;
3. measure the ``d - 1`` selected 2-way marginals with
   ``sigma_2 = Delta_2 sqrt(3 (d - 1) / (2 rho))``;
4. estimate the final model from all the measurements (Private-PGM).

Not implemented: the paper's domain compression (merging rare levels of an
attribute after step 1); all levels are kept.

AIM (McKenna, Mullins, Sheldon, Miklau 2022)
--------------------------------------------
"AIM: An Adaptive and Iterative Mechanism for Differentially Private Synthetic
Data", PVLDB 15(11), the AIM algorithm (its pseudocode; algorithm number not
checked against the text).  The workload ``W`` (here: the blocks of a
:class:`~oracledp.synth._workload.MarginalWorkload`, all with weight 1) is closed
downward into the candidate set ``W+`` (every non-empty subset of a workload
clique); candidate ``r`` has weight ``w_r = sum_{s in W} |r ∩ s|``.  With
``T = 16 d`` (``rounds``) and ``alpha = 0.9``:

* initialisation: every 1-way marginal is measured with noise multiplier
  ``s_0 = sqrt(T / (2 alpha rho))`` (noise std ``Delta_2 s_0`` counts); the
  per-round exponential-mechanism parameter starts at ``eps_0 = sqrt(8 (1 - alpha) rho / T)``;
* round t, while budget remains: charge ``eps_t^2 / 8 + 1 / (2 s_t^2)``; the
  candidates ``C_t`` are the ``r`` in ``W+`` whose addition keeps the junction tree
  of the model at most ``(rho_used / rho) * max_model_size`` MB (here: or at most its
  current size, when the cap is below it -- an addition for degenerate caps, so that
  ``C_t`` is never empty); select ``r_t``
  with the exponential mechanism, score
  ``q_r = w_r (|| M_r(D) - M_r(p_{t-1}) ||_1 - sqrt(2/pi) sigma_t n_r)``
  (``sigma_t = Delta_2 s_t`` the noise std of this round, ``n_r`` the number of
  cells of ``r``), probability ``∝ exp(eps_t q_r / (2 Delta))``,
  ``Delta = Delta_1 max_{r in C_t} w_r``; measure ``M_{r_t}(D)`` with noise
  ``sigma_t``; re-estimate ``p_t`` (Private-PGM, warm start);
* annealing: if ``|| M_{r_t}(p_t) - M_{r_t}(p_{t-1}) ||_1 <= sqrt(2/pi) sigma_t n_{r_t}``
  then ``s_{t+1} = s_t / 2``, ``eps_{t+1} = 2 eps_t``; if the remaining budget is at
  most twice the cost of the next round, the next round is the last and spends all
  that remains: ``s = sqrt(1 / (2 alpha rho_left))``, ``eps = sqrt(8 (1 - alpha) rho_left)``;
* output: the model estimated from all the measurements.

Neighbouring relation and sensitivities
---------------------------------------
Both papers state their guarantees for add/remove-one neighbours, under which a
marginal count table has L2 sensitivity ``Delta_2 = 1`` and the L1 distance
between the data's marginal and a fixed model's marginal moves by at most
``Delta_1 = 1``.  oracledp's synthesizers use *replace-one* neighbours (n public),
and ``neighbouring="replace-one"`` (the default) uses the replace-one sensitivities:
replacing a record removes one count from one cell and adds one to another cell of
every marginal table, so ``Delta_2 = sqrt(2)`` and ``Delta_1 = 2`` (every score
``w_r ||M_r(D) - M_r(p)||_1`` moves by at most ``2 w_r``; the model p depends only
on earlier releases).  The noise std is ``Delta_2`` times the paper's noise
multiplier, so every Gaussian measurement costs the same ``rho`` as in the paper.
``neighbouring="add-remove"`` runs the papers' setting: n is then private, and the
model's total is mbi's minimum-variance estimate from the noisy 1-way marginals
instead of n.

Privacy accounting (both): a Gaussian measurement with noise std ``sigma`` of a
query of L2 sensitivity ``Delta_2`` is ``Delta_2^2 / (2 sigma^2)``-zCDP (Bun,
Steinke 2016, Prop. 1.6); an ``eps``-DP exponential mechanism is ``eps^2 / 8``-zCDP
(Cesar, Rogers 2021, bounded range; the bound both papers use); zCDP composes
additively (Bun, Steinke 2016, Lemma 2.3).  The total ``rho`` is converted to
``(epsilon, delta)``-DP with Bun-Steinke Prop. 1.3,
``epsilon = rho + 2 sqrt(rho ln(1/delta))``, i.e. ``rho`` is the largest value
with that bound <= epsilon (:func:`oracledp.privacy.zcdp_rho` and
:func:`oracledp.privacy.zcdp_epsilon`, the conversion every zCDP mechanism of oracledp
uses), so that all the synthesizers compared at one (epsilon, delta) get the same
kind of statement.  (The papers' code converts with Canonne-Kamath-Steinke 2020,
which allows a somewhat larger rho at the same (epsilon, delta); ours is
conservative.)  Estimation, evaluation and sampling are post-processing.

Evaluation and sampling (the "smartnoise sampler problem" avoided)
------------------------------------------------------------------
Comparisons must not go through a sampler: smartnoise-synth's MST/AIM wrappers
sampled synthetic records from the graphical model with a faulty sampler, which
inflated their workload errors.  Here :meth:`PGMResult.answer` evaluates the
workload on the *estimated model itself*: the model is a
:class:`~oracledp.synth._graphical.GraphicalModel` (the one model type of
:mod:`oracledp.synth`; with ``backend="mbi"`` built from mbi's potentials) and each of its
marginals is computed exactly by messages on its junction tree (no sampling error).
:meth:`PGMResult.sample` draws i.i.d. records exactly from the model by forward sampling
along its junction tree (each clique's new attributes from their conditional given its
separator), with the caller's numpy Generator; mbi's own ``synthetic_data`` (randomized
rounding with numpy's global random state) is not used.

Many fits in one process
------------------------
In one long process (the ``synth-adult --peers`` benchmark, about 70 mbi fits) jaxlib
crashed with a segmentation fault in libgcc's unwinder, while the same fit ran cleanly
in a new process.  The benchmark therefore runs every MST and AIM fit in a fresh
process (``lab/synth_adult`` in the repository); do the same for long sweeps.

Parameters of AIM and cost
--------------------------
AIM keeps the paper's parameters (``T = 16 d``, ``alpha = 0.9``,
``max_model_size = 80`` MB).  On Adult the full domain (1,317,120 cells, 10.5 MB)
is below the cap, so the cap only limits the early rounds.  The cost of a fit is
dominated by JAX compiling mbi's mirror-descent program once per new model
structure (about 4-5 s per round on one core for Adult), not by the iterations
(1000 iterations take 0.2-0.4 s once compiled); hence ``round_iters = 500`` after
each round (warm-started) and ``final_iters = 3000`` at the end.  Measured on
Adult (8 categorical attributes, n = 30,718, 3-way workload of 18,597 queries,
delta = 1e-6, replace-one, seed 0, one shared core): AIM ran 8 / 18 / 21 rounds in
35 / 79 / 65 s at epsilon = 0.1 / 0.5 / 1; MST fits take 9-13 s.

JAX: :func:`mst` and :func:`aim` switch JAX to the CPU backend (when no backend is
initialised yet), enable float64 (``jax_enable_x64``) and disable JAX's persistent
compilation cache.  These are process-wide JAX settings.  Nothing is printed.

Guarantees hold under idealized numerics (see :mod:`oracledp.privacy._guarantees`).

Layout
------
This module is the public entry point; the code is in :mod:`oracledp.synth._peers_mst`
(:func:`mst`), :mod:`oracledp.synth._peers_aim` (:func:`aim`),
:mod:`oracledp.synth._peers_measure` (the Gaussian measurements and exponential-mechanism
selections), :mod:`oracledp.synth._peers_accounting` (budget, sensitivities, guarantee),
:mod:`oracledp.synth._peers_estimation` (lazy ``mbi`` import, Private-PGM fits) and
:mod:`oracledp.synth._peers_model` (:class:`PGMResult`: exact marginals and sampling).
Its public names are importable from here.
"""

from __future__ import annotations

from oracledp.synth._peers_aim import aim
from oracledp.synth._peers_estimation import require_mbi
from oracledp.synth._peers_model import PGMMeasurement, PGMResult
from oracledp.synth._peers_mst import mst

__all__ = [
    "PGMMeasurement",
    "PGMResult",
    "aim",
    "mst",
    "require_mbi",
]
