"""Exception and warning classes of oracledp.

Every error a caller can trigger with bad input is one of these (or a plain
``ValueError`` / ``TypeError`` for malformed parameters), raised *before* any
noise is drawn, so a rejected call consumes no randomness and releases nothing.
"""

from __future__ import annotations

from typing import Any


class OracleDPError(Exception):
    """Base class of the library's own errors."""


class OracleFailure(OracleDPError, RuntimeError):
    """The optimization oracle did not return a certified exact optimum.

    Mechanisms whose privacy proof assumes an exact oracle (OPDisc, RSPM) raise
    this instead of releasing an output whose guarantee would not hold.  The
    uncertified :class:`~oracledp.oracles.OracleResult` is attached as
    ``result`` for diagnostics; it must not be published.
    """

    def __init__(self, message: str, result: Any | None = None) -> None:
        super().__init__(message)
        self.result = result


class BoundsViolation(OracleDPError, ValueError):
    """Data lie outside the bounds that a privacy proof assumes.

    oracledp never clips silently: rescale or clip the data yourself (with a
    data-independent rule) and call again.
    """


class DataIntegrityError(OracleDPError, OSError):
    """A bundled data file is missing or its SHA-256 differs from the recorded one.

    The file is refused: results computed from altered data would not be the
    documented benchmark.  Reinstall the package to restore the files.
    """


class BudgetError(OracleDPError, ValueError):
    """A privacy budget would be exceeded."""


class TableInputError(OracleDPError, ValueError):
    """A table or CSV that cannot be read against its schema (file-level problems)."""


class UnconfirmedSchemaError(OracleDPError, ValueError):
    """A schema still holds entries read from the data (``"from_data": true``)."""


class ModelFileError(TableInputError):
    """A ``model.json`` that is not a valid model of the current format (tampered, truncated,
    written by another version or by hand).  Nothing of it is used."""


class NoHaltError(OracleDPError, RuntimeError):
    """No privacy level passed the accuracy test, and releasing theta* was not allowed.

    The algorithms would then output the non-private optimum theta*, whose ex-post
    loss is infinite (Theorems 3.2, 3.4, A.2).  They refuse instead.  The refusal
    itself reveals only that no level passed: for CovNR/OutputNR that is the
    outcome ``(T, bottom)`` of InteractiveAboveThreshold with every hypothesis
    generated, ex-post loss ``eps_0 + eps_T`` (Lemma 2.8); for the DoublingMethod
    ``T eps_test + sum_i eps_i``.  That number is ``epsilon_refusal``.
    """

    def __init__(self, message: str, *, method: str, epsilon_refusal: float) -> None:
        super().__init__(message)
        self.method = method
        self.epsilon_refusal = epsilon_refusal


class PrivacyWarning(UserWarning):
    """A privacy guarantee is weaker than the caller may assume."""


class DiagnosticsWarning(PrivacyWarning):
    """The caller opted into non-private diagnostics (``return_diagnostics``/``keep_diagnostics``).

    The released output keeps its guarantee, but the attached
    :class:`~oracledp._diagnostics.NonPrivateDiagnostics` (training loss, objective,
    timings...) are not covered by it and must not be published.
    """


class PredictionPolicyWarning(UserWarning):
    """Rows to predict held values outside the training schema and were encoded by the
    documented prediction policy (numbers clipped to the public bounds, unknown levels
    encoded as all-zero one-hots).

    Predicting on new data is post-processing of the released model: the training
    guarantee is untouched.  The warning counts the affected rows per column (it never
    lists a row or a value); pass ``on_unknown="refuse"`` (``--strict`` on the command
    line) to refuse such rows instead.
    """


class ClippedValuesWarning(UserWarning):
    """Numbers outside a column's declared public bounds were clipped to them, as the schema
    declares for that column (``"out_of_bounds": "clip"``), in a fit or a prediction alike.

    Clipping to public bounds is a fixed public map applied to each record alone, so a
    privacy guarantee of a fit on the clipped rows holds for the original records.  The
    warning names the columns that had such numbers: that is read from the data, a
    non-private diagnostic not covered by any guarantee; it gives no count, row or value.
    """
