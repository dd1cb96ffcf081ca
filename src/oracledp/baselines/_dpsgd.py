"""Private logistic regression by DP-SGD: the baseline of Neel, Roth, Vietri, Wu (ICML 2020).

Algorithm (Bassily, Smith, Thakurta 2014; Abadi et al. 2016)
-------------------------------------------------------------
Start at ``w_0 = 0`` and, for ``t = 1..T``:

1. *Poisson subsampling*: every record joins the batch ``B_t`` independently
   with probability ``q`` (so the batch size is random, ``Binomial(n, q)``).  It is drawn
   as that size followed by a uniformly random subset of that size, the same law in time
   linear in the batch rather than in ``n``
   (:func:`oracledp.privacy._noise.poisson_subsample`).  Fitted from distinct rows with
   record counts (``sample_weight``), the batch is drawn the same way over the ``n``
   records and each record mapped to its row: exactly the run on the repeated table.
2. *Per-example gradients* of the logistic loss
   ``l(w; x, y) = log(1 + exp(-y <w, x>))``, i.e. ``g_i = -y_i x_i sigmoid(-y_i <w, x_i>)``
   (vectorized over the batch).
3. *Per-example clipping* to l2 norm ``C``: ``g_i <- g_i * min(1, C / ||g_i||)``.
   Only gradients are clipped, never data.
4. *Noisy sum*: ``s_t = sum_{i in B_t} g_i + N(0, (sigma C)^2 I)``.
5. *Step*: ``w_t = w_{t-1} - lr * (s_t / (q n) + l2 * w_{t-1})``, dividing by the
   *expected* batch size ``q n`` (a public constant) and, with ``l2 > 0``,
   adding the gradient of ``(l2 / 2) ||w||^2`` (the intercept is not penalised).

The released model is the **average of all T iterates** ``(w_1 + ... + w_T) / T``
(the paper "take[s] average over all the iterates in the run of privateSGD"),
not the last iterate and not a tail average.  With ``fit_intercept=True`` a
constant feature 1 is appended to every record; its weight is the intercept and
its gradient coordinate is clipped together with the others (so the intercept
is private too).  The one-hot blocks of the Adult encoding sum to a constant and
can play the role of an intercept, which is why ``fit_intercept=False`` is also
offered.

Privacy
-------
Every release of this module states a :class:`~oracledp.privacy._guarantees.PrivacyGuarantee`
with ``neighbouring="replace-one"`` (datasets of the same size ``n`` that differ
in one record), the relation of the ICML paper and of OPDisc.

Accounting (:mod:`oracledp.privacy._rdp`; proof in ``docs/proofs/dpsgd-replace-one.md``): Google's
``dp_accounting`` :class:`RdpAccountant` for the ``T``-fold composition of the
Poisson-subsampled Gaussian mechanism (Mironov, Talwar, Zhang 2019) with noise
multiplier ``sigma``, an **add/remove-one** analysis, converted to replace-one by
**group privacy of size 2**: add/remove ``(e0, delta / (1 + e^c))`` with ``e0 <= c``
gives replace-one ``(2 e0, delta)``.  The normaliser ``q n`` uses the public ``n`` of the
replace-one relation, so the intermediate dataset of ``n - 1`` records is run through the
*same* mechanism, which the add/remove analysis covers.
:func:`calibrate_noise_multiplier` picks the smallest sigma whose certified epsilon is
``<= epsilon``.

Public inputs: ``n`` (through ``q``, the normaliser and ``delta = 1/n**2``), the
dimension, and every hyper-parameter.  The hyper-parameters must not be chosen
by looking at the private data: :func:`dpsgd_logistic` uses fixed, documented
defaults; :func:`dpsgd_paper_protocol` reproduces the paper's grid search over
hyper-parameters *on the data*, which is **not** accounted, and its result is
marked ``accounted=False`` with a guarantee that does not hold.

Noise (the Poisson batches and the Gaussian on the clipped-gradient sum) is drawn
through :mod:`oracledp.privacy._noise` from numpy's PCG64 in floating point (idealized
numerics, like every float DP library).

Layout: :mod:`oracledp.privacy._rdp` (accountant, calibration),
``oracledp.baselines._dpsgd_core`` (the optimizer), ``_dpsgd_logistic``
(:func:`dpsgd_logistic`, :class:`DPSGDResult`, defaults), ``_dpsgd_protocol``
(:func:`dpsgd_paper_protocol`); this module holds :class:`DPSGDLogisticRegression` and
re-exports the rest.

References
----------
R. Bassily, A. Smith, A. Thakurta. "Private Empirical Risk Minimization:
Efficient Algorithms and Tight Error Bounds". FOCS 2014.
M. Abadi et al. "Deep Learning with Differential Privacy". CCS 2016.
I. Mironov, K. Talwar, L. Zhang. "Renyi Differential Privacy of the Sampled
Gaussian Mechanism". arXiv:1908.10530, 2019.
S. Neel, A. Roth, G. Vietri, Z. S. Wu. "Oracle Efficient Private Non-Convex
Optimization". ICML 2020, Section 5.
"""


from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._diagnostics import split_diagnostics
from oracledp._docstrings import fill_doc
from oracledp._params import store_init_arguments
from oracledp.baselines._dpsgd_core import _clip_rows as _clip_rows
from oracledp.baselines._dpsgd_core import _dpsgd_core as _dpsgd_core
from oracledp.baselines._dpsgd_core import _per_example_gradients as _per_example_gradients
from oracledp.baselines._dpsgd_core import auto_learning_rate
from oracledp.baselines._dpsgd_logistic import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_CLIP,
    DEFAULT_EPOCHS,
    SOURCE,
    DPSGDResult,
    _batch_and_steps,
    _check_hyper,
    _check_int_positive,
    dpsgd_logistic,
)
from oracledp.baselines._dpsgd_protocol import DEFAULT_PAPER_GRID, dpsgd_paper_protocol
from oracledp.estimators._base import (
    PrivateLogisticClassifier,
    check_privacy_parameters,
    delta_for,
)
from oracledp.privacy._accountant import begin_release
from oracledp.privacy._rdp import calibrate_noise_multiplier, dpsgd_epsilon

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_CLIP",
    "DEFAULT_EPOCHS",
    "DEFAULT_PAPER_GRID",
    "SOURCE",
    "DPSGDLogisticRegression",
    "DPSGDResult",
    "auto_learning_rate",
    "calibrate_noise_multiplier",
    "dpsgd_epsilon",
    "dpsgd_logistic",
    "dpsgd_paper_protocol",
]


# ==============================================================================================
# scikit-learn estimator
# ==============================================================================================


@fill_doc
class DPSGDLogisticRegression(PrivateLogisticClassifier):
    """Differentially private logistic regression trained by DP-SGD (the ICML 2020 baseline).

    One call of :func:`dpsgd_logistic` with fixed, documented hyper-parameters (never tuned
    on the data); the privacy statement of the fit is ``guarantee_``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy parameter epsilon > 0 of the whole fit.
    delta : float or None, default=None
        Privacy parameter in (0, 1); ``None`` means ``1 / n**2`` (n treated as public).
    clip : float, default=1.0
        Per-example gradient clip norm.
    batch_size : int or None, default=None
        Expected Poisson batch size; ``None`` means ``min(256, n)``.
    lr : float or "auto", default="auto"
        Step size; ``"auto"`` = :func:`auto_learning_rate` (public quantities only).
    epochs : float, default=20
        Number of passes; ``T = ceil(epochs * n / batch_size)``.
    l2 : float, default=0
        l2 penalty on the weights (not the intercept).
    fit_intercept : bool, default=True
        Learn an intercept (weight of a constant feature 1, clipped with the gradient).
    classes : sequence of two labels or None, default=None
        The public label set, mapped in sorted order to -1 and +1.  ``None`` reads it from
        ``y`` (treating the label set as public; y with one class is refused).  With
        ``classes`` the mapping does not depend on y; labels outside it raise BoundsViolation.
    %(est_n_features)s
    keep_diagnostics : bool, default=False
        Keep the run's :class:`~oracledp._diagnostics.NonPrivateDiagnostics` (timings) as
        ``diagnostics_``, for research: issues a :class:`~oracledp._errors.DiagnosticsWarning`
        and sets ``guarantee_.diagnostics_released``.  ``diagnostics_`` is never pickled.
    random_state : None, int, SeedSequence or numpy Generator, default=None
        Source of all randomness.  :func:`sklearn.base.clone` deep-copies a Generator, so
        clones draw identical noise: use int seeds or None in cross-validation.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[0]`` is mapped to -1, ``classes_[1]`` to +1.
    coef_ : ndarray of shape (1, n_features)
    intercept_ : float
    guarantee_ : PrivacyGuarantee
        (epsilon, delta)-DP, replace-one neighbours, ``requires_exact_oracle=False``.
    sigma_, steps_, q_ : float, int, float
        Noise multiplier, number of steps, sampling probability.
    result_ : DPSGDResult
        The released run (its ``diagnostics`` is always None).
    diagnostics_ : NonPrivateDiagnostics
        Only with ``keep_diagnostics=True``; NOT private, dropped when pickled.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X was a DataFrame with string column names.

    Privacy
    -------
    (epsilon, delta)-DP with respect to replacing one training record, via the RDP accountant
    of ``dp_accounting`` for Poisson-subsampled Gaussian steps (add/remove) and group privacy
    of size 2 (see :mod:`oracledp.baselines._dpsgd`).  As in scikit-learn, ``classes_`` (unless
    given), the number of features and, with ``delta=None``, n are read from the data and
    treated as public.  ``decision_function`` (``<x, w> + b``), ``predict_proba`` (its
    sigmoid, the logistic model's probability of ``classes_[1]``) and ``predict`` are
    post-processing of the released ``coef_`` and ``intercept_``: they cost no privacy.

    Examples
    --------
    A fixed, documented schedule (two epochs of full-batch steps on this tiny table):

    >>> from oracledp.baselines import DPSGDLogisticRegression
    >>> X = [[0.9, 0.1], [0.8, 0.3], [0.7, 0.2], [0.1, 0.9], [0.2, 0.6], [0.3, 0.8]]
    >>> y = ["spam", "spam", "spam", "ham", "ham", "ham"]
    >>> clf = DPSGDLogisticRegression(epsilon=2.0, delta=1e-3, epochs=2, random_state=0)
    >>> print(clf.fit(X, y).guarantee_.describe())  # doctest: +NORMALIZE_WHITESPACE
    (2, 0.001)-DP, replace-one neighbours; Abadi et al. 2016 DP-SGD;
    RDP accountant (dp_accounting)
    >>> clf.classes_.tolist(), clf.steps_  # classes_[0] is mapped to -1
    (['ham', 'spam'], 2)
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float | None = None,
        *,
        clip: float = DEFAULT_CLIP,
        batch_size: int | None = None,
        lr: float | str = "auto",
        epochs: float = DEFAULT_EPOCHS,
        l2: float = 0.0,
        fit_intercept: bool = True,
        classes: Any = None,
        n_features: int | None = None,
        keep_diagnostics: bool = False,
        random_state: Any = None,
    ) -> None:
        store_init_arguments(self, locals())

    def _check_params(self) -> dict[str, Any]:
        check_privacy_parameters(self.epsilon, self.delta)
        _check_hyper(self.clip, self.lr, self.epochs, self.l2, self.fit_intercept)
        if self.batch_size is not None:
            _check_int_positive(self.batch_size, "batch_size")
        return {}

    def _check_calibration(self, n: int) -> None:
        """The accountant's refusal of this epsilon and delta on ``n`` records (a ValueError
        when they are below what it can certify), made before any noise: it reads only the
        public parameters and n, as the fit's own calibration does."""
        _, q, steps = _batch_and_steps(self.batch_size, float(self.epochs), n)
        calibrate_noise_multiplier(float(self.epsilon), delta_for(self.delta, n), q, steps)

    def fit(self, X: ArrayLike, y: ArrayLike,
            sample_weight: ArrayLike | None = None) -> DPSGDLogisticRegression:
        """Fit by one DP-SGD run; all validation happens before any noise is drawn.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite features.
        y : array-like of shape (n_samples,)
            Labels of exactly two classes (any type).
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Record counts: row ``i`` (with label ``y[i]``) stands for ``sample_weight[i]``
            identical training records, e.g. the distinct rows of a large table with their
            multiplicities (:meth:`oracledp.tabular.AggregatedTable.weighted_rows`).  The fit
            is then exactly, bit for bit, the fit on the table that repeats each row that many
            times (``np.repeat(X, sample_weight, axis=0)``, in that order) for the same
            ``random_state``: the same Poisson batches over the ``n`` records, with ``n`` the
            total count (it sets the sampling rate, the number of steps and, with
            ``delta=None``, ``delta = 1/n**2``); the repeated table is never built.  Each count
            must be a whole number >= 0 (a float array of whole numbers is accepted; a row with
            count 0 is absent); anything else is refused with one ValueError before any noise
            is drawn.  ``None`` counts every row once.

        Returns
        -------
        self

        Privacy
        -------
        About records, as for :meth:`OPDiscClassifier.fit
        <oracledp.estimators.OPDiscClassifier.fit>`: the counts must be the records' true
        multiplicities; an importance weight w makes its record a group of w (group privacy).
        """
        params = self._start_fit()
        if sample_weight is None:
            X_arr, classes, y_pm = self._training_data(X, y)
            counts = None
            n = X_arr.shape[0]
        else:
            X_arr, classes, y_pm, counts = self._counted_training_data(X, y, sample_weight)
            n = int(counts.sum())

        begin_release(self, float(self.epsilon), delta_for(self.delta, n), rng=params["rng"])
        result = dpsgd_logistic(
            X_arr,
            y_pm,
            self.epsilon,
            self.delta,
            clip=self.clip,
            batch_size=self.batch_size,
            lr=self.lr,
            epochs=self.epochs,
            l2=self.l2,
            fit_intercept=bool(self.fit_intercept),
            random_state=params["rng"],
            return_diagnostics=params["keep"],
            sample_weight=counts,
        )
        result, diagnostics = split_diagnostics(result)
        self._set_fitted(
            diagnostics,
            classes_=classes,
            coef_=result.coef.reshape(1, -1),
            intercept_=float(result.intercept),
            guarantee_=result.guarantee,
            sigma_=float(result.sigma),
            steps_=int(result.steps),
            q_=float(result.q),
            result_=result,
        )
        return self

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Scores ``<x, w> + b``, shape ``(n_samples,)``; > 0 means ``classes_[1]``
        (post-processing: no privacy cost)."""
        return super().decision_function(X) + self.intercept_
