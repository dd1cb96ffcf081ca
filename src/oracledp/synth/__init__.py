"""Private synthetic data for contingency tables: domains, workloads, baselines.

Foundations for OracleQuery (see ``docs``/specs): public categorical
:class:`Domain`, k-way marginal workloads with fast evaluation, and the
baselines (independent Laplace 1-way marginals, MWEM).
"""

from oracledp.synth.baselines import (
    IndependentMarginalsResult,
    MWEMResult,
    independent_marginals,
    mwem,
)
from oracledp.synth.domain import (
    ADULT_CATEGORICAL_ATTRIBUTES,
    AdultCategorical,
    Domain,
    adult_categorical_domain,
    load_adult_categorical,
)
from oracledp.synth.workload import (
    MarginalWorkload,
    answer,
    answer_distribution,
    errors,
    kway_marginal_workload,
)

__all__ = [
    "ADULT_CATEGORICAL_ATTRIBUTES",
    "AdultCategorical",
    "Domain",
    "IndependentMarginalsResult",
    "MWEMResult",
    "MarginalWorkload",
    "adult_categorical_domain",
    "answer",
    "answer_distribution",
    "errors",
    "independent_marginals",
    "kway_marginal_workload",
    "load_adult_categorical",
    "mwem",
]
