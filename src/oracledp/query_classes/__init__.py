"""Query / hypothesis classes over binary features with separator sets and weighted oracles.

See :mod:`oracledp.query_classes._base` for the conventions (Neel, Roth, Wu, FOCS 2019,
Definitions 2, 5, 7; spec ``docs/specs/oracle-query.md`` sections 1-2).
"""

from oracledp.query_classes._base import (
    ENUMERATE_LIMIT,
    BruteForceClassOracle,
    ClassOracleResult,
    LossClass,
    LossOracle,
    NegatedClass,
    NegatedOracle,
    QueryClass,
    WeightedOracle,
)
from oracledp.query_classes._boolean import (
    ConjunctionsOfLiterals,
    MonotoneConjunctions,
    MonotoneDisjunctions,
    Parities,
)
from oracledp.query_classes._decision_lists import MonotoneDecisionLists
from oracledp.query_classes._halfspaces import IntegerHalfspaces
from oracledp.query_classes._mip import HighsClassOracle, LocalSearchClassOracle, make_class_oracle

__all__ = [
    "ENUMERATE_LIMIT",
    "BruteForceClassOracle",
    "ClassOracleResult",
    "ConjunctionsOfLiterals",
    "HighsClassOracle",
    "IntegerHalfspaces",
    "LocalSearchClassOracle",
    "LossClass",
    "LossOracle",
    "MonotoneConjunctions",
    "MonotoneDecisionLists",
    "MonotoneDisjunctions",
    "NegatedClass",
    "NegatedOracle",
    "Parities",
    "QueryClass",
    "WeightedOracle",
    "make_class_oracle",
]
