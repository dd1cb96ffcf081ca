"""Optimization oracles (no solver is imported here)."""

from oracledp.oracles._base import CERTIFY_ABS_TOL, Oracle, OracleResult, OracleStatus
from oracledp.oracles._halfspace import FeatureSchema, HalfspaceProblem
from oracledp.oracles._registry import available_oracles, check_solver_name, make_oracle
from oracledp.oracles._space import IntegerBall

__all__ = [
    "CERTIFY_ABS_TOL",
    "FeatureSchema",
    "HalfspaceProblem",
    "IntegerBall",
    "Oracle",
    "OracleResult",
    "OracleStatus",
    "available_oracles",
    "check_solver_name",
    "make_oracle",
]
