"""``oracledp fit --model auto``: what the command line needs beyond the other models.

The selection itself is :class:`~oracledp.estimators.AutoClassifier` (built by
:func:`oracledp._registry.make_estimator`, exactly as in Python); the command line passes it
``--epsilon`` / ``--delta`` (the TOTAL budget), ``--solver``, ``--time-limit`` and
``--work-limit`` (the exact candidates' oracle), books one ``--budget`` entry with the full
cost, and saves the selected model.  Saving needs a model type ``"auto"`` in the model file
(:data:`oracledp.tabular._model_file.MODEL_TYPES`); until the file format has it, ``--model
auto`` is refused before anything is read (:func:`saving_refusal`).
"""

from __future__ import annotations

__all__ = ["AUTO", "oracle_failure_message", "saving_refusal"]

AUTO = "auto"


def saving_supported() -> bool:
    """Whether ``model.json`` can hold the selection's model (a model type ``"auto"``)."""
    from oracledp.tabular._model_file import MODEL_TYPES

    return AUTO in MODEL_TYPES


def saving_refusal() -> str | None:
    """The refusal of ``fit --model auto`` when its model cannot be saved; None when it can."""
    if saving_supported():
        return None
    return ("--model auto cannot be saved by `oracledp fit` yet: model.json has no 'auto' "
            "model type (the selection's guarantee covers every trial, so its model cannot be "
            "saved as the selected model's own type). Use it from Python: "
            "oracledp.estimators.AutoClassifier, or make_estimator('auto', schema, epsilon=..., "
            "delta=...). Nothing was read or fitted, and no budget was charged")


def oracle_failure_message(exc: BaseException, solver: str, limit: float | str | None) -> str:
    """The refusal when an exact trial did not certify: the whole selection stopped.

    ``limit``: the oracle's limit per call, in seconds or already in words."""
    now = (f" (now {limit:g}s per oracle call)" if isinstance(limit, (int, float)) else
           f" (now {limit} per oracle call)" if limit else "")
    return (f"the auto selection stopped: {exc} Nothing was released or written; under "
            f"--budget the selection's whole declared budget stays charged. What to try: a "
            f"larger --work-limit or --time-limit{now}, another --solver than {solver}, or a "
            "single model (see `oracledp models`).")
