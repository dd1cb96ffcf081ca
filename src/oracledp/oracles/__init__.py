"""Optimization oracles (no solver is imported here)."""

from oracledp.oracles.base import CERTIFY_ABS_TOL, Oracle, OracleResult, OracleStatus
from oracledp.oracles.halfspace import FeatureSchema, HalfspaceProblem
from oracledp.oracles.registry import available_oracles, check_solver_name, make_oracle
from oracledp.oracles.space import IntegerBall

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
