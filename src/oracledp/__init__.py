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
    PrivacyWarning,
)
from oracledp.guarantees import GuaranteeKind, PrivacyGuarantee

__version__ = "0.1.0"

__all__ = [
    "BoundsViolation",
    "BudgetError",
    "DataIntegrityError",
    "DiagnosticsWarning",
    "GuaranteeKind",
    "NonPrivateDiagnostics",
    "OracleFailure",
    "PrivacyGuarantee",
    "PrivacyWarning",
    "__version__",
    "check_rng",
]
