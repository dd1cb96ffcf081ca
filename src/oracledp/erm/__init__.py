"""Accuracy-first private ERM: the most private hypothesis meeting an accuracy target.

Ligett, Neel, Roth, Waggoner, Wu, "Accuracy First: Selecting a Differential
Privacy Level for Accuracy-Constrained ERM" (NeurIPS 2017).  Given a target
excess empirical risk ``alpha``, these algorithms search privacy levels from
most to least private and stop at the first hypothesis that passes a private
accuracy test.  Their guarantee is an *ex-post* privacy loss (Definition 2.3):
it depends on where the search stopped and is reported with each result.

* :func:`covnr`: ridge regression, covariance perturbation + noise reduction
  (Algorithm 3, Theorem 3.2).
* :func:`outputnr`: l2-regularised logistic regression, output perturbation +
  noise reduction (Algorithm 5 with the corrections documented there, Theorem 3.4).
* :func:`doubling`: the DoublingMethod baseline (Algorithm 4, Theorem A.2).
* :class:`RidgeProblem`, :class:`LogisticProblem`: validated data with theta*,
  reusable across trials.
* the "theory approach" the paper compares against, the smallest epsilon whose
  *expected* excess risk is ``alpha`` by a utility theorem: :func:`covpert_ridge_epsilon`
  (Theorem 3.1), :func:`outpert_logistic_epsilon` (Theorem 3.3),
  :func:`outpert_ridge_epsilon` (Theorem A.9, corrected); and :func:`default_eps_grid`,
  the privacy levels the algorithms search with ``eps_list=None`` (Appendix B).
* :mod:`oracledp.erm._sensitivity`: the sensitivities (Claims A.5, A.12,
  Lemmas A.6, A.10) and domain checks.

Every result is an :class:`AccuracyFirstResult` carrying the released ``theta``,
the :class:`~oracledp.mechanisms.ExPostLoss` (test vs hypothesis breakdown) and
a :class:`~oracledp.privacy._guarantees.PrivacyGuarantee` of kind ``EX_POST``.  If no
level passes, the algorithms would release the non-private optimum (infinite
loss): they raise :class:`NoHaltError` unless ``allow_no_halt=True``.
"""

from oracledp.erm._covnr import AccuracyFirstResult, NoHaltError, RidgeProblem, covnr
from oracledp.erm._doubling import doubling
from oracledp.erm._outputnr import LogisticProblem, outputnr
from oracledp.erm._theory import (
    covpert_ridge_epsilon,
    default_eps_grid,
    outpert_logistic_epsilon,
    outpert_ridge_epsilon,
)

__all__ = [
    "AccuracyFirstResult",
    "LogisticProblem",
    "NoHaltError",
    "RidgeProblem",
    "covnr",
    "covpert_ridge_epsilon",
    "default_eps_grid",
    "doubling",
    "outpert_logistic_epsilon",
    "outpert_ridge_epsilon",
    "outputnr",
]
