"""``oracledp fit --model auto``: what the command line needs beyond the other models.

The selection itself is :class:`~oracledp.estimators.AutoClassifier` (built by
:func:`oracledp._registry.make_estimator`, exactly as in Python); the command line passes it
``--epsilon`` / ``--delta`` (the TOTAL budget), ``--solver``, ``--time-limit`` and
``--work-limit`` (the exact candidates' oracle), books one ``--budget`` entry with the full
cost, and saves model type ``"auto"`` (:mod:`oracledp.tabular._model_file`): the selection's
guarantee and its record (every trial's candidate, budget and noisy score, the selected
candidate, the selected model's parameters and own one-trial guarantee), with the selected
model's coefficients, which ``predict`` and ``evaluate`` use.  :func:`summary_rows` are the
lines ``fit`` adds to its summary.
"""

from __future__ import annotations

__all__ = ["AUTO", "oracle_failure_message", "summary_rows"]

AUTO = "auto"


def summary_rows(est: object) -> list[tuple[str, str]]:
    """The rows ``fit --model auto`` adds to its summary: the selected candidate and the public
    plan (each trial's fit and score epsilon and delta; their sums are the guarantee's)."""
    trials = getattr(est, "trials_", ())
    plan = "; ".join(f"{t.candidate}: {t.epsilon_fit:.4g} + {t.epsilon_score:.4g}"
                     + (f", delta {t.delta:.3g}" if t.delta else " (pure)") for t in trials)
    return [("selected model", f"{getattr(est, 'selected_', '?')} (the largest noisy score of "
                               f"{len(trials)} trials)"),
            ("trials (fit + score epsilon)", plan)]


def oracle_failure_message(exc: BaseException, solver: str, limit: float | str | None) -> str:
    """The refusal when an exact trial did not certify: the whole selection stopped.

    ``limit``: the oracle's limit per call, in seconds or already in words."""
    now = (f" (now {limit:g}s per oracle call)" if isinstance(limit, (int, float)) else
           f" (now {limit} per oracle call)" if limit else "")
    from oracledp.estimators._auto import _stopped

    candidate = getattr(exc, "candidate", None)
    why = _stopped(candidate) if isinstance(candidate, str) else str(exc)
    return (f"the auto selection stopped: {why} Nothing was released or written; under "
            f"--budget the selection's whole declared budget stays charged. What to try: a "
            f"larger --work-limit or --time-limit{now}, another --solver than {solver}, or a "
            "single model (see `oracledp models`).")
