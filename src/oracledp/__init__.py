"""oracledp: differentially private learning with optimization oracles.

Public API only; no solver is imported at import time.
"""

from oracledp._validation import check_rng
from oracledp.diagnostics import NonPrivateDiagnostics
from oracledp.errors import (
    BoundsViolation,
    BudgetError,
    DataIntegrityError,
    DiagnosticsWarning,
    OracleFailure,
    PredictionPolicyWarning,
    PrivacyWarning,
)
from oracledp.guarantees import GuaranteeKind, PrivacyGuarantee

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # TableSchema / SchemaTransformer import pandas and scikit-learn: load them on first use
    if name in ("TableSchema", "SchemaTransformer"):
        from oracledp import tabular

        return getattr(tabular, name)
    raise AttributeError(f"module 'oracledp' has no attribute {name!r}")


__all__ = [
    "BoundsViolation",
    "BudgetError",
    "DataIntegrityError",
    "DiagnosticsWarning",
    "GuaranteeKind",
    "NonPrivateDiagnostics",
    "OracleFailure",
    "PredictionPolicyWarning",
    "PrivacyGuarantee",
    "PrivacyWarning",
    "SchemaTransformer",
    "TableSchema",
    "__version__",
    "check_rng",
]
