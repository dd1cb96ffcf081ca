"""``AutoClassifier``: a private choice among OPDisc, RSPM, Gaussian RSPM and DP-SGD.

The selection (proof: ``docs/proofs/model-selection.md``)
---------------------------------------------------------
The candidates ``c_1, ..., c_K`` (model names, optionally with a parameter space W:
``"opdisc@norm2=9"``) and the split of the budget are public: they are parameters, or a rule
on public facts (d, n, epsilon), never read from the records.  Trial ``k`` is one complete
private mechanism:

1. fit candidate ``c_k`` at ``(eps_fit_k, delta_k)`` (its own mechanism and guarantee);
2. score the released model: the number of training records it classifies correctly, plus
   ``Lap(1 / eps_score_k)`` (sensitivity 1 under replace-one for a fixed model).

Each trial is ``(eps_fit_k + eps_score_k, delta_k)``-DP (adaptive composition of the fit and
the score); the K trials run one after another on the same records, so the whole transcript
(every model and every noisy score) is ``(sum_k eps_k, sum_k delta_k)``-DP by basic adaptive
composition, and releasing only the model with the largest noisy score is post-processing.
The per-trial budgets are chosen so that the sums are at most the stated total ``(epsilon,
delta)``: the guarantee states that total, never more.

Refusals.  Everything that can refuse bad input (parameters, every candidate's parameters, the
data against the public schema, the labels and counts) is checked before the first trial draws
anything.  An exact candidate whose oracle does not certify its optimum makes the WHOLE
selection refuse (:class:`~oracledp.OracleFailure`): nothing is released, and an active
accountant charges the full declared budget.  A refused trial is not skipped, because whether
an oracle certifies depends on the records, and no proof bounds what that event reveals
(``docs/proofs/model-selection.md``, section 4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._errors import OracleFailure
from oracledp._params import store_init_arguments
from oracledp._validation import check_positive
from oracledp.estimators._base import (
    PrivateBinaryClassifier,
    check_privacy_parameters,
    delta_for,
)
from oracledp.oracles._base import check_work_limit
from oracledp.oracles._halfspace import FeatureSchema
from oracledp.oracles._registry import check_solver_name
from oracledp.privacy import _noise as noise
from oracledp.privacy._accountant import begin_release
from oracledp.privacy._guarantees import PrivacyGuarantee

__all__ = ["AUTO_CANDIDATES", "AutoClassifier", "Trial", "plan_trials"]

#: The models a candidate may name.
AUTO_CANDIDATES = ("opdisc", "rspm", "gaussian-rspm", "dpsgd")
_EXACT = ("opdisc", "rspm", "gaussian-rspm")
#: The score's noise scale 1/eps_score aimed at, in records: about 4 % of n.
_SCORE_SCALE_SHARE = 0.04
_SOURCE = ("private selection by basic adaptive composition of K complete trials (fit + "
           "Laplace-noised correct count) and post-processing (docs/proofs/model-selection.md)")


@dataclass(frozen=True)
class Trial:
    """One trial of the selection: its candidate and its public budget.

    ``epsilon_fit`` / ``delta`` go to the candidate's fit (``delta`` 0 for pure rspm);
    ``epsilon_score`` to the Laplace noise of its score; the trial is
    ``(epsilon_fit + epsilon_score, delta)``-DP.
    """

    candidate: str
    model: str
    space: str | None
    epsilon_fit: float
    epsilon_score: float
    delta: float

    @property
    def epsilon(self) -> float:
        return self.epsilon_fit + self.epsilon_score


def parse_candidate(spec: object) -> tuple[str, str | None]:
    """``"model"`` or ``"model@space"`` -> (model, space or None); ValueError otherwise."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"a candidate must be a model name, optionally 'model@space', "
                         f"got {spec!r}")
    model, _, space = spec.strip().partition("@")
    if model not in AUTO_CANDIDATES:
        raise ValueError(f"candidate model must be one of {', '.join(AUTO_CANDIDATES)}, "
                         f"got {model!r}")
    if space and model == "dpsgd":
        raise ValueError("candidate 'dpsgd' takes no parameter space (@...)")
    return model, (space or None)


def default_candidates(schema: Any, epsilon: float, n: int | None = None) -> tuple[str, ...]:
    """The default candidates for a table with public ``schema`` (a FeatureSchema, a
    TableSchema, or d alone), n records, total ``epsilon``: public facts only.

    The exact model that ``oracledp models`` advises for this table
    (:func:`oracledp.advise_model`'s ``exact_model``: the one likely to certify within the
    default oracle limit over the W the estimator will use, None if none is), and dpsgd,
    which needs no exact oracle.  Two trials, so each runs at half the budget; the records
    decide between them.
    """
    from oracledp._guidance import advise_model

    exact = advise_model(schema, epsilon, n).exact_model
    return ("dpsgd",) if exact is None else (exact, "dpsgd")


def score_epsilon(epsilon_trial: float, n: int, share: float | None) -> float:
    """The score's epsilon within a trial of ``epsilon_trial`` on ``n`` records (public).

    ``share`` given: ``share * epsilon_trial``.  None: the rule ``25 / n`` (noise scale about
    4 % of n: enough to tell apart models whose accuracies differ by a few points), kept
    between a tenth and a quarter of the trial's epsilon.
    """
    if share is not None:
        return share * epsilon_trial
    aim = 1.0 / (_SCORE_SCALE_SHARE * n)
    return min(max(aim, epsilon_trial / 10.0), epsilon_trial / 4.0)


def _at_most(parts: list[float], total: float) -> list[float]:
    """``parts`` scaled down by a few ulps until their float sum is at most ``total``."""
    while math.fsum(parts) > total:
        parts = [math.nextafter(p, 0.0) for p in parts]
    return parts


def plan_trials(candidates: tuple[str, ...], epsilon: float, delta: float, n: int,
                score_share: float | None = None) -> tuple[Trial, ...]:
    """The public plan: one trial per candidate, epsilon split equally, delta equally among
    the candidates that have one (rspm is pure), each trial's epsilon split into fit and
    score by :func:`score_epsilon`.  The sums are at most ``(epsilon, delta)``.

    >>> [(t.model, round(t.epsilon, 4), t.delta) for t in
    ...  plan_trials(("rspm", "dpsgd"), 1.0, 1e-6, 1000, 0.2)]
    [('rspm', 0.5, 0.0), ('dpsgd', 0.5, 1e-06)]
    """
    parsed = [parse_candidate(c) for c in candidates]
    k = len(parsed)
    approx = sum(1 for m, _ in parsed if m != "rspm")
    eps_t = _at_most([epsilon / k] * k, epsilon)
    del_t = _at_most([delta / approx] * approx, delta) if approx else []
    trials, j = [], 0
    for (model, space), spec, e in zip(parsed, candidates, eps_t, strict=True):
        e_score = score_epsilon(e, n, score_share)
        e_fit = e - e_score
        if e_fit + e_score > e:  # float rounding: never more than the trial's share
            e_fit = math.nextafter(e_fit, 0.0)
        d_t = 0.0
        if model != "rspm":
            d_t, j = del_t[j], j + 1
        trials.append(Trial(spec.strip(), model, space, e_fit, e_score, d_t))
    return tuple(trials)


def _stopped(candidate: str) -> str:
    """Why a selection stopped when ``candidate``'s exact trial did not certify."""
    return (f"candidate {candidate!r} did not certify an exact optimum, so the whole "
            "selection stops and releases nothing (a refused trial cannot be skipped: whether "
            "an oracle certifies depends on the records).")


class AutoClassifier(PrivateBinaryClassifier):
    """A private selection among the exact learners and DP-SGD, at one total ``(epsilon, delta)``.

    Runs one complete private trial per candidate (fit at its share of the budget, then a
    Laplace-noised count of the training records its model classifies correctly) and releases
    the model with the largest noisy count.  The whole selection is ``(epsilon, delta)``-DP for
    replace-one neighbours (basic adaptive composition and post-processing:
    ``docs/proofs/model-selection.md``), assuming exact oracles where an exact candidate ran;
    ``guarantee_`` states it, with every trial's budget.

    Parameters
    ----------
    epsilon, delta : float, float or None
        The TOTAL budget of the selection; ``delta=None`` means ``1 / n**2``.
    candidates : "auto" or sequence of str
        ``"model"`` or ``"model@space"`` (model in opdisc, rspm, gaussian-rspm, dpsgd; space as
        the model's ``space=``, e.g. ``"opdisc@norm2=9"``).  ``"auto"``: the exact model that
        ``oracledp models`` advises for this d, n and epsilon (public facts; left out when
        none is likely to certify) and dpsgd.  Each candidate is one trial.
    score_share : float in (0, 1) or None
        The share of each trial's epsilon spent on its score; None: a public rule on n
        (noise scale about 4 % of n, between a tenth and a quarter of the trial).
    oracle, time_limit, work_limit :
        The exact candidates' oracle (as for :class:`~oracledp.estimators.OPDiscClassifier`).
    schema : FeatureSchema
        The public feature schema (the exact learners need it).
    fit_intercept : bool
        DP-SGD's own intercept (False when the schema has the intercept feature).
    classes, n_features, keep_diagnostics, random_state :
        As for the other classifiers; ``keep_diagnostics=True`` is refused.

    Attributes
    ----------
    coef_, intercept_, classes_, guarantee_ (the selection's), selected_ (the winning
    candidate), best_estimator_ (its fitted estimator; its own ``guarantee_`` is one trial's,
    the release's is :attr:`guarantee_`), trials_ (the public plan), noisy_scores_ (every
    trial's noisy count: covered by the guarantee).

    Examples
    --------
    >>> import numpy as np
    >>> from oracledp.estimators import AutoClassifier
    >>> from oracledp.oracles import FeatureSchema
    >>> X = np.array([[1, 0, 1], [1, 1, 1], [0, 1, 1], [0, 0, 1]] * 10, dtype=float)
    >>> y = np.array([1, 1, 0, 0] * 10)
    >>> clf = AutoClassifier(2.0, 1e-4, candidates=("rspm", "dpsgd"), oracle="brute",
    ...                      schema=FeatureSchema.grid(3, 1, 1, binary=[0, 1, 2]),
    ...                      random_state=0).fit(X, y)
    >>> clf.guarantee_.describe().split(";")[0]
    '(2, 0.0001)-DP, replace-one neighbours'
    >>> [(t.model, t.epsilon, t.delta) for t in clf.trials_]
    [('rspm', 1.0, 0.0), ('dpsgd', 1.0, 0.0001)]
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float | None = None,
        *,
        candidates: Any = "auto",
        score_share: float | None = None,
        oracle: str = "highs",
        time_limit: float | None = None,
        work_limit: int | None = None,
        schema: FeatureSchema | None = None,
        fit_intercept: bool = True,
        classes: Any = None,
        n_features: int | None = None,
        keep_diagnostics: bool = False,
        random_state: Any = None,
    ) -> None:
        store_init_arguments(self, locals())

    # --- step 1: parameters (no data, nothing drawn) ------------------------------------------
    def _check_params(self) -> dict[str, Any]:
        epsilon = check_privacy_parameters(self.epsilon, self.delta)
        if isinstance(self.candidates, str):
            if self.candidates != "auto":
                raise ValueError("candidates must be 'auto' or a sequence of 'model' / "
                                 f"'model@space' names, got {self.candidates!r}")
            candidates = None
        else:
            try:
                candidates = tuple(self.candidates)
            except TypeError:
                raise ValueError("candidates must be 'auto' or a sequence of 'model' / "
                                 "'model@space' names") from None
            if not candidates:
                raise ValueError("candidates must name at least one model")
            for c in candidates:
                parse_candidate(c)
            if len({c.strip() for c in candidates}) != len(candidates):
                raise ValueError("candidates must not repeat a candidate")
        share = self.score_share
        if share is not None:
            share = check_positive(share, "score_share")
            if not share < 1:
                raise ValueError(f"score_share must be in (0, 1), got {self.score_share!r}")
        if self.time_limit is not None:
            check_positive(self.time_limit, "time_limit")
        check_work_limit(self.work_limit)
        check_solver_name(self.oracle, "oracle")
        if not isinstance(self.schema, FeatureSchema):
            raise TypeError("AutoClassifier needs schema= (a FeatureSchema: the public "
                            "description of the features, which the exact candidates need)")
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise TypeError("fit_intercept must be a bool")
        if self.keep_diagnostics:
            raise ValueError("AutoClassifier does not keep diagnostics (keep_diagnostics=True "
                             "is refused: they are not private)")
        return {"epsilon": epsilon, "candidates": candidates, "share": share}

    def _declared_n_features(self) -> int | None:
        if isinstance(self.schema, FeatureSchema):
            return self.schema.d
        return super()._declared_n_features()

    # --- the candidates -----------------------------------------------------------------------
    def _make(self, trial: Trial, rng: np.random.Generator) -> Any:
        """The unfitted estimator of one trial (its noise comes from ``rng``, the selection's)."""
        from oracledp.baselines import DPSGDLogisticRegression
        from oracledp.estimators import (
            GaussianRSPMClassifier,
            OPDiscClassifier,
            RSPMClassifier,
        )

        classes = None if self.classes is None else list(self.classes)
        if trial.model == "dpsgd":
            return DPSGDLogisticRegression(trial.epsilon_fit, trial.delta, classes=classes,
                                           fit_intercept=bool(self.fit_intercept),
                                           n_features=self.schema.d, random_state=rng)
        common: dict[str, Any] = {
            "oracle": self.oracle, "time_limit": self.time_limit, "work_limit": self.work_limit,
            "schema": self.schema, "classes": classes, "random_state": rng,
            **({"space": trial.space} if trial.space is not None else {})}
        if trial.model == "rspm":
            return RSPMClassifier(trial.epsilon_fit, **common)
        cls = OPDiscClassifier if trial.model == "opdisc" else GaussianRSPMClassifier
        return cls(trial.epsilon_fit, trial.delta, **common)

    def _check_candidate(self, est: Any, X: NDArray[np.float64], n: int) -> None:
        """Every refusal a candidate's fit could make before its noise, made now: its
        parameters and, for an exact model, the data against the schema over its W (the W
        its fit on ``n`` records will declare)."""
        est._start_fit()
        if hasattr(est, "_make_space"):
            params = est._check_params()
            space, _ = est._make_space(X.shape[1], params, n=n, delta=delta_for(est.delta, n))
            self.schema.check_exact(space.k_max)
            self.schema.encode(X)  # BoundsViolation: the data do not fit the public schema

    # --- fit -----------------------------------------------------------------------------------
    def fit(self, X: ArrayLike, y: ArrayLike,
            sample_weight: ArrayLike | None = None) -> AutoClassifier:
        """Run every trial and release the model with the largest noisy score.

        ``sample_weight``: record counts, as for the candidates (each record counts once).
        Raises before any noise for bad parameters or data; raises
        :class:`~oracledp.OracleFailure` (nothing released, the full budget charged to an
        active accountant) if an exact candidate's oracle does not certify.
        """
        params = self._start_fit()
        X_arr, classes, y_pm, counts = self._counted_training_data(X, y, sample_weight)
        n, d = int(counts.sum()), X_arr.shape[1]
        delta = delta_for(self.delta, n)
        epsilon = params["epsilon"]
        # the advice names the exact candidate (from d, the schema's 0/1 columns, n and the
        # total epsilon); each trial's fit then sizes its own W at its own epsilon and delta
        candidates = params["candidates"] or default_candidates(self.schema, epsilon, n)
        trials = plan_trials(candidates, epsilon, delta, n, params["share"])
        pure = all(t.delta == 0 for t in trials)
        rng = params["rng"]
        estimators = [self._make(t, rng) for t in trials]
        for trial, est in zip(trials, estimators, strict=True):
            # every data-independent refusal, before anything is drawn
            self._check_candidate(est, X_arr, n)
            if hasattr(est, "_check_calibration"):  # dpsgd: its accountant's floor
                try:
                    est._check_calibration(n)
                except ValueError:
                    raise ValueError(
                        f"the selection gives candidate {trial.candidate!r} epsilon "
                        f"{trial.epsilon_fit:.3g} (delta {trial.delta:.3g}) of the total "
                        f"epsilon {epsilon:g} for its fit, below what its DP-SGD accountant "
                        "can certify in floating point. Nothing was drawn. Use a larger "
                        "epsilon, or a single model.") from None
        y_fit = classes[(y_pm == 1).astype(np.intp)]
        weights = None if sample_weight is None else counts

        # The selection's budget covers every trial's fit (they are not charged again).
        begin_release(self, epsilon, 0.0 if pure else delta, rng=rng, covers_inner=True)
        scores, guarantees = [], []
        for trial, est in zip(trials, estimators, strict=True):
            try:
                est.fit(X_arr, y_fit, sample_weight=weights)
            except OracleFailure as exc:
                failure = OracleFailure(
                    f"AutoClassifier: {_stopped(trial.candidate)} Leave that candidate out, "
                    "or give the oracle a larger time_limit or work_limit.",
                    getattr(exc, "result", None))
                failure.candidate = trial.candidate  # (the CLI advises in its own options)
                raise failure from None
            correct = float(np.sum(counts[est.predict(X_arr) == y_fit]))
            scores.append(correct + float(noise.laplace(rng, 1.0 / trial.epsilon_score)))
            guarantees.append(est.guarantee_)
        best = int(np.argmax(scores))
        winner = estimators[best]
        self._set_fitted(
            None,
            classes_=classes,
            coef_=np.asarray(winner.coef_, dtype=np.float64).reshape(1, d),
            intercept_=float(winner.intercept_),
            guarantee_=self._guarantee(trials, guarantees, epsilon, delta, pure),
            selected_=trials[best].candidate,
            best_estimator_=winner,
            trials_=trials,
            noisy_scores_=np.asarray(scores),
        )
        return self

    def _guarantee(self, trials: tuple[Trial, ...], guarantees: list[PrivacyGuarantee],
                   epsilon: float, delta: float, pure: bool) -> PrivacyGuarantee:
        """The selection's statement: the stated total, checked against the trials' own."""
        spent_eps = math.fsum(g.epsilon for g in guarantees) + math.fsum(
            t.epsilon_score for t in trials)
        spent_delta = math.fsum(g.delta for g in guarantees)
        if spent_eps > epsilon or spent_delta > delta:  # pragma: no cover - plan_trials' sums
            raise AssertionError("the trials' guarantees exceed the selection's budget")
        exact = any(g.requires_exact_oracle for g in guarantees)
        plan = "; ".join(
            f"{t.candidate}: fit epsilon {t.epsilon_fit:.6g}"
            + (f", delta {t.delta:.3g}" if t.delta else " (pure)")
            + f", score epsilon {t.epsilon_score:.6g}" for t in trials)
        calibration = (f"{len(trials)} trials, one per candidate (fixed number, not random): "
                       f"{plan}; the model with the largest noisy correct count is released")
        notes = "; ".join(g.notes for g in guarantees if g.notes)
        fields: dict[str, Any] = {"source": _SOURCE, "requires_exact_oracle": exact,
                                  "calibration": calibration, "notes": notes}
        if not all(g.holds for g in guarantees):  # pragma: no cover - uncertified is refused
            fields["holds"] = False
        if pure:
            return PrivacyGuarantee.pure(epsilon, **fields)
        return PrivacyGuarantee.approximate(epsilon, delta, **fields)

    # --- prediction: the selected model's ----------------------------------------------------
    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """The selected model's scores (post-processing: no privacy cost)."""
        self._new_data(X)
        return self.best_estimator_.decision_function(X)
